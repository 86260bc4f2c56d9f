/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Entering a namespace from a worker: the one place every setns() of usermount-worker
 * goes through (the main process never enters one, docs/style.md).
 *
 * setns() into a mount or user namespace refuses (EINVAL) a process whose fs_struct
 * another thread shares, and a thread of a worker (asuser.c, a driver's start in
 * fusedriver.c) still holds it for a moment after pthread_join() returns: the kernel
 * wakes the joiner before the exiting thread lets go of it. So the worker first takes a
 * copy of its own (unshare(CLONE_FS)), whichever namespace it enters; a setns() that
 * still fails says so with its errno.
 */
#pragma once

#include "um-error.h"

/*
 * Enters the namespace behind fd (an nsfs fd or a pidfd) of type nstype (CLONE_NEWNS,
 * CLONE_NEWUSER, ...). what names it for the message ("the stage mount namespace"). 0, or
 * -errno with error set: "could not enter <what>: <strerror>". -ESRCH (a pidfd of a process
 * that has exited) is returned with error set likewise, for the caller to phrase.
 */
int ns_enter(int fd, int nstype, const char *what, UmError *error);
