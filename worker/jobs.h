/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The worker side of the jobs (jobs.c): the table usermount-worker hands its runner.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "jobproto.h"
#include "runner.h"

const WorkerJobType *jobs_worker_table(size_t *ret_n);

/* What every job pays the first time it runs in a fresh process, paid before the worker
 * says it is ready: libblkid's probers on an empty memfd, libmount's fstab parser and the
 * crypttab reader on tables of their own (never the system's files), the loop control
 * device. */
void jobs_warm_up(void);
