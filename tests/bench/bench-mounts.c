/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* OpenMount latency with extra mounts in the daemon's namespace (see bench-mounts.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-mounts.h"
#include "bench-proc.h"
#include "bench-raw.h"
#include "macro.h"

/* The extra mounts so far: the tmpfs on dir, and n - 1 bind mounts below it. */
typedef struct ExtraMounts {
        char *dir;
        unsigned n;
} ExtraMounts;

/* Adds mounts until there are n: first the tmpfs, then directory i bound onto itself. */
static int extra_grow(ExtraMounts *m, unsigned n) {
        if (m->n == 0 && n > 0) {
                if (mkdir(m->dir, 0700) < 0)
                        return -errno;
                if (mount("bench-mounts", m->dir, "tmpfs", MS_NODEV | MS_NOSUID | MS_NOEXEC,
                          "mode=0700,size=1m") < 0) {
                        int r = -errno;

                        (void) rmdir(m->dir);
                        return r;
                }
                m->n = 1;
        }
        for (; m->n < n; m->n++) {
                char path[PATH_MAX];

                snprintf(path, sizeof(path), "%s/%u", m->dir, m->n);
                if (mkdir(path, 0700) < 0)
                        return -errno;
                if (mount(path, path, NULL, MS_BIND, NULL) < 0)
                        return -errno;
        }
        return 0;
}

/* One lazy unmount of the tmpfs takes every bind mount below it along. */
static void extra_remove(ExtraMounts *m) {
        if (m->n > 0 && umount2(m->dir, MNT_DETACH) >= 0)
                (void) rmdir(m->dir);
        m->n = 0;
}

/* OpenMount through the daemon, and the build worker in process, at the current count. */
static int measure_at(Bench *b, int image_fd, MountsRun *run) {
        int r;

        run->seen = proc_count_mounts(b->daemon_pid);
        snprintf(run->name, sizeof(run->name), "OpenMount, %u extra mounts", run->extra);
        r = bench_run_one_client(b, CLIENT_OPEN_MOUNT, run->name, &run->row, NULL);
        if (r < 0)
                return r;
        return bench_measure(b, "raw: build worker", bench_step_raw_worker, &image_fd,
                             &run->raw_worker);
}

int mounts_measure(Bench *b) {
        Report *rep = &b->report;
        g_autofree char *dir = g_build_filename(harness_tmpdir(), "bench-mounts", NULL);
        ExtraMounts m = { .dir = dir };
        _cleanup_close_ int fd = -EBADF;
        int r = 0;

        r = proc_same_mount_ns(b->daemon_pid);
        if (r <= 0) {
                rep->mounts_skipped = r < 0 ? "its mount namespace could not be read"
                                            : "the daemon is in another mount namespace";
                return 0;
        }
        fd = open(b->images[0], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return bench_step_failed(b, b->images[0], -errno);
        for (size_t i = 0; i < b->opt.n_mounts; i++) {
                MountsRun *run = &rep->mounts[i];

                *run = (MountsRun) { .extra = b->opt.mounts[i] };
                r = extra_grow(&m, run->extra);
                if (r < 0) {
                        r = bench_step_failed(b, "making the extra mounts", r);
                        break;
                }
                r = measure_at(b, fd, run);
                if (r < 0)
                        break;
                rep->n_mounts = i + 1;
        }
        extra_remove(&m);
        return r;
}
