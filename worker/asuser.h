/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One step as another user, in a thread of its own, while the process stays root. A FUSE
 * mount the daemon makes for a caller has user_id= and group_id= of the caller and no
 * allow_other: the kernel lets no one else in, root included (fuse_allow_current_process()
 * compares every uid and gid). The worker that builds it must still enter it, stat it and
 * wait for its driver: it does so in a thread that takes the caller's uid and gid with
 * the raw system calls, which change only the calling thread's credentials (the C
 * library's wrappers would change every thread's). The thread shares the process's fd
 * table and working directory: an fchdir() there moves the whole worker.
 */
#pragma once

#include <sys/types.h>

/* Runs fn(userdata) in a new thread as uid and gid (all of real, effective, saved and
 * filesystem ids; no supplementary groups), waits for it and returns what fn returned,
 * or -errno if the thread or the credentials could not be had. */
int asuser_run(uid_t uid, gid_t gid, int (*fn)(void *userdata), void *userdata);
