/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A short-lived child that makes or joins a namespace and holds it while its parent
 * works on it through /proc/PID (reads or writes its id maps, opens its namespace files): the
 * way to reach a new namespace without the parent entering it. Used for the user
 * namespaces of id-mapping (worker/idmap-userns.c) and the stage mount namespace (stagens.c).
 */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct NsHolder {
        pid_t pid;
        int fd; /* the parent's end of the socket; its closing releases the child */
} NsHolder;

#define NS_HOLDER_NULL ((NsHolder) { .pid = 0, .fd = -EBADF })

/*
 * Forks a child that keeps only keep_fd (-EBADF: none), cannot be traced or dumped, dies
 * with its parent, runs setup(userdata) and reports its result. Returns 0 with the child
 * holding what setup made until nsholder_stop(), or setup's -errno (the child reaped).
 */
int nsholder_start(int (*setup)(void *userdata), void *userdata, int keep_fd, NsHolder *ret);

/* Releases and reaps the child; accepts a holder that was never started. */
void nsholder_stop(NsHolder *h);
