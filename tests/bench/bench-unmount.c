/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unmount through the daemon and its raw baseline (see bench-unmount.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-raw.h"
#include "bench-unmount.h"
#include "macro.h"

typedef struct UmountStep {
        int image_fd;
        const char *dir;
} UmountStep;

static int step_raw_umount(Bench *b, void *userdata, uint64_t *ret_ns) {
        const UmountStep *s = userdata;
        const char *what = NULL;
        int r;

        r = raw_mount_image_on(b->opt.fstype, s->image_fd, s->dir, &what);
        if (r < 0)
                return bench_step_failed(b, what, r);
        r = raw_umount(s->dir, ret_ns);
        if (r < 0)
                return bench_step_failed(b, "umount2", r);
        return 0;
}

int unmount_measure_raw(Bench *b) {
        g_autofree char *dir = g_build_filename(harness_tmpdir(), "bench-umount", NULL);
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = open(b->images[0], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return bench_step_failed(b, b->images[0], -errno);
        if (mkdir(dir, 0700) < 0)
                return bench_step_failed(b, dir, -errno);
        r = bench_measure(b, "raw: umount2 (fresh loop + fsmount, moved)", step_raw_umount,
                          &(UmountStep) { .image_fd = fd, .dir = dir }, &b->report.raw_umount);
        if (r < 0)
                (void) umount2(dir, MNT_DETACH); /* a failed iteration may have left it */
        (void) rmdir(dir);
        return r;
}

int unmount_measure_daemon(Bench *b) {
        return bench_run_one_client(b, CLIENT_MOUNT_UNMOUNT, "Unmount (after MountFd), caller",
                                    &b->report.unmount, NULL);
}
