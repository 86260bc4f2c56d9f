/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The worker side of the jobs (jobs.c): the table usermount-worker hands its runner.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "jobproto.h"
#include "runner.h"

/* Where the build stages its mount inside the stage namespace (stagens_make()). */
#define STAGE_DIR "/" JOB_STAGE_DIR

const WorkerJobType *jobs_worker_table(size_t *ret_n);

/* What every job pays the first time it runs in a fresh process, paid before the worker
 * says it is ready: libblkid's probers on an empty memfd, libmount's fstab parser and the
 * crypttab reader on tables of their own (never the system's files), the loop control
 * device. */
void jobs_warm_up(void);

/* The /dev node of a block device, found through sysfs and checked to be that very device;
 * else /proc/self/fd/<fd> (jobs.c). */
void block_device_node(dev_t rdev, int fd, char *buf, size_t n);

/* The re-check of the probe right before the mount (jobs.c): the prober of the type polkit
 * was asked about, on fd, must find that type with the same uuid and label. */
int job_recheck_probe(const BuildJob *job, int fd, SourceProbe *ret, UmError *error);

/* The START_DRIVER job (jobs-userspace.c): the driver started on a FUSE mount of the
 * worker's making, kept in this worker for BUILD; *ret_fd a copy of its FUSE connection. */
int job_start_driver(const BuildJob *job, const MountOptions *options, int source_fd,
                     DriverStartReply *reply, UmError *error, int *ret_fd);

/* The BUILD job for a userspace driver (jobs-userspace.c), after START_DRIVER in the same
 * worker: the mount the driver serves, checked and locked. */
int job_build_userspace(const BuildJob *job, const MountOptions *options, int source_fd,
                        int stage_ns_fd, BuildReply *reply, UmError *error, int *ret_fd);
