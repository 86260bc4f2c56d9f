/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stage namespace (stagens.h): made once, by a short-lived holder child (nsholder.h).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "nsholder.h"
#include "stagens.h"

/* In the holder child of stagens_make(): 0 or -errno. */
static int stage_setup(void *userdata) {
        const char *dir = userdata;

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("usermount-stage", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "mode=0700,size=64k,nr_inodes=16") < 0 ||
            chdir(dir) < 0 || mkdir(JOB_STAGE_DIR, 0700) < 0 ||
            syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
            chdir("/") < 0)
                return -errno;
        return 0;
}

int stagens_make(const char *dir, int *ret_fd) {
        NsHolder h = NS_HOLDER_NULL;
        char path[64];
        int r, fd;

        r = nsholder_start(stage_setup, (void *) dir, -EBADF, &h);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int) h.pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        r = fd < 0 ? -errno : 0;
        nsholder_stop(&h);
        if (r < 0)
                return r;
        *ret_fd = fd;
        return 0;
}
