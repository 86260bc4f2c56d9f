/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The two jobs that build a mount a userspace driver serves (jobs-userspace.c), in
 * usermount-worker: START_DRIVER, then BUILD in the same worker; PREPARE_DRIVER before
 * them does part of START_DRIVER ahead.
 */
#pragma once

#include "jobproto.h"
#include "um-error.h"

/* The PREPARE_DRIVER job: taken, to be done by job_prepare_driver_after_reply(). -EBADMSG
 * when the worker prepared a start already. */
int job_prepare_driver(const PrepareDriverJob *job);

/* After PREPARE_DRIVER's reply: a uid claimed and a stub for it, for START_DRIVER; nothing
 * when either fails (START_DRIVER does it then, and says why). */
void job_prepare_driver_after_reply(void);

/* The START_DRIVER job: the driver started on a FUSE mount of the worker's making, kept in
 * this worker for BUILD; *ret_fd a copy of its FUSE connection. */
int job_start_driver(const BuildJob *job, const MountOptions *options, int source_fd,
                     DriverStartReply *reply, UmError *error, int *ret_fd);

/* The BUILD job for a userspace driver, after START_DRIVER in the same worker: the mount
 * the driver serves, checked and locked. */
int job_build_userspace(const BuildJob *job, const MountOptions *options, int source_fd,
                        int stage_ns_fd, BuildReply *reply, UmError *error, int *ret_fd);
