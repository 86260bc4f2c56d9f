/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The two jobs that build a mount a userspace driver serves (jobs-userspace.c), in
 * usermount-worker: START_DRIVER, then BUILD in the same worker.
 */
#pragma once

#include "jobproto.h"
#include "um-error.h"

/* The START_DRIVER job: the driver started on a FUSE mount of the worker's making, kept in
 * this worker for BUILD; *ret_fd a copy of its FUSE connection. */
int job_start_driver(const BuildJob *job, const MountOptions *options, int source_fd,
                     DriverStartReply *reply, UmError *error, int *ret_fd);

/* The BUILD job for a userspace driver, after START_DRIVER in the same worker: the mount
 * the driver serves, checked and locked. */
int job_build_userspace(const BuildJob *job, const MountOptions *options, int source_fd,
                        int stage_ns_fd, BuildReply *reply, UmError *error, int *ret_fd);
