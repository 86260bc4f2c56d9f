/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Entering a namespace from a worker (see nsenter.h).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "nsenter.h"

int ns_enter(int fd, int nstype, const char *what, UmError *error) {
        if (unshare(CLONE_FS) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not enter %s: the worker's file system context "
                                    "could not be unshared: %s", what, strerror(errno));
        if (setns(fd, nstype) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not enter %s: %s", what, strerror(errno));
        return 0;
}
