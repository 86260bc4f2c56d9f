/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One step as another user, in a thread of its own (see asuser.h).
 */
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asuser.h"

typedef struct AsUser {
        uid_t uid;
        gid_t gid;
        int (*fn)(void *userdata);
        void *userdata;
        int r;
} AsUser;

static void *asuser_thread(void *p) {
        AsUser *a = p;

        /* Raw: per thread. Groups first, then gid, then uid (after which we could not). */
        if (syscall(SYS_setgroups, 0, NULL) < 0 ||
            syscall(SYS_setresgid, a->gid, a->gid, a->gid) < 0 ||
            syscall(SYS_setresuid, a->uid, a->uid, a->uid) < 0) {
                a->r = -errno;
                return NULL;
        }
        a->r = a->fn(a->userdata);
        return NULL;
}

int asuser_run(uid_t uid, gid_t gid, int (*fn)(void *userdata), void *userdata) {
        AsUser a = { .uid = uid, .gid = gid, .fn = fn, .userdata = userdata };
        pthread_t thread;
        int r;

        r = pthread_create(&thread, NULL, asuser_thread, &a);
        if (r != 0)
                return -r;
        r = pthread_join(thread, NULL);
        if (r != 0)
                return -r;
        return a.r;
}
