/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The worker side of the jobs (jobs.c): the table usermount-worker hands its runner.
 */
#pragma once

#include <stddef.h>

#include "worker-runner.h"

const WorkerJobType *jobs_worker_table(size_t *ret_n);
