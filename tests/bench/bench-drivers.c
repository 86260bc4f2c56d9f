/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel against userspace drivers (see bench-drivers.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-drivers.h"
#include "bench-image.h"
#include "bench-proc.h"
#include "conf.h"
#include "fusedriver.h"
#include "macro.h"

#define READ_FILE "big.bin"
#define READ_SIZE ((uint64_t) 64 << 20)
/* The ext4 image holds the file, with room for its metadata and journal (sparse). */
#define EXT4_IMAGE_SIZE ((uint64_t) 128 << 20)
/* vfat, exfat and ntfs3 images, made empty (sparse). */
#define EMPTY_IMAGE_SIZE ((uint64_t) 64 << 20)

#define STRV(...) ((const char *const[]) { __VA_ARGS__, NULL })

typedef struct DriverCase {
        const char *fstype;
        const char *const *mkfs; /* NULL: built by the harness with the file to read; else
                                  * the command that makes it empty, the image appended */
        bool kernel;             /* compared with the kernel's driver on the same image */
} DriverCase;

static const DriverCase cases[] = {
        { "ext4", NULL, true },
        { "squashfs", NULL, true },
        { "vfat", STRV("mkfs.vfat", "-n", "BENCHVFAT"), false },
        { "exfat", STRV("mkfs.exfat", "-L", "benchexfat"), false },
        { "ntfs3", STRV("mkntfs", "-q", "-F", "-f", "-L", "benchntfs"), false },
};

/* Timed reads of the file per run: a fresh mount each, the first one not timed. */
static unsigned read_repetitions(const Options *o) {
        return MAX(3u, o->iterations / 20);
}

/* ---- Images ------------------------------------------------------------------------ */

/* An empty image of c's type, made by its mkfs; -ENOENT when that is not installed. */
static int make_empty_image(const DriverCase *c, char **ret_path) {
        g_autofree char *name = g_strdup_printf("bench-%s", c->fstype);

        return bench_make_empty_image(name, c->mkfs, EMPTY_IMAGE_SIZE, ret_path);
}

/* The images, in the order of cases; NULL where the mkfs is not installed. */
static int make_images(Bench *b, char **images) {
        g_autofree char *staging = g_build_filename(harness_tmpdir(), "bench-" READ_FILE, NULL);
        const HarnessEntry entries[] = {
                { HARNESS_ENTRY_FILE, "hello.txt", "hello bench\n" },
                { HARNESS_ENTRY_COPY, READ_FILE, staging },
                {},
        };
        int r;

        r = bench_write_random_file(staging, READ_SIZE);
        if (r < 0)
                return bench_step_failed(b, "writing the file to read", r);
        for (size_t i = 0; i < ELEMENTSOF(cases) && r >= 0; i++) {
                const DriverCase *c = &cases[i];
                const HarnessImageSpec spec = {
                        .label = streq(c->fstype, "ext4") ? "benchdrv" : NULL,
                        .size = streq(c->fstype, "ext4") ? EXT4_IMAGE_SIZE : 0,
                        .entries = entries,
                };

                if (c->mkfs) {
                        r = make_empty_image(c, &images[i]);
                        if (r == -ENOENT)
                                r = 0;
                } else
                        r = harness_make_image(c->fstype, &spec, &images[i]);
                if (r < 0)
                        (void) bench_step_failed(b, "making an image for the driver comparison",
                                                 r);
        }
        (void) unlink(staging);
        return r;
}

/* ---- Measuring ------------------------------------------------------------------------- */

/* Until no userspace driver runs: the last mount's driver exits a moment after the close. */
static int await_drivers_gone(Bench *b) {
        for (;;) {
                _cleanup_close_ int pidfd = -EBADF;
                ProcUidScan scan;
                int r;

                r = proc_scan_uids(b->cgroup, CONF_DEFAULT_DRIVER_UID_FIRST,
                                   CONF_DEFAULT_DRIVER_UID_COUNT, &scan);
                if (r < 0)
                        return bench_step_failed(b, "looking for drivers in /proc", r);
                if (scan.alive == 0)
                        return 0;
                pidfd = pidfd_open(scan.alive_pid, 0);
                if (pidfd < 0)
                        continue; /* gone already */
                struct pollfd p = { .fd = pidfd, .events = POLLIN };
                r = poll(&p, 1, HARNESS_TIMEOUT_MS);
                if (r == 0)
                        return bench_step_failed(b, "a driver still runs after its mount went",
                                                 -ETIMEDOUT);
                if (r < 0 && errno != EINTR)
                        return bench_step_failed(b, "waiting for a driver to exit", -errno);
        }
}

static int measure_latency(Bench *b, const char *image, DriverRun *run) {
        ClientJob job = {
                .mode = CLIENT_OPEN_MOUNT,
                .image = image,
                .fstype = run->fstype,
                .driver = run->userspace ? "userspace" : "kernel",
                .cgroup = b->cgroup,
                .warmup = bench_warmup(&b->opt),
                .count = b->opt.iterations,
        };
        int r;

        r = await_drivers_gone(b);
        if (r >= 0)
                r = bench_run_client(b, &job, 0, "OpenMount", &run->open, &run->cycle,
                                     &run->cpu);
        if (r >= 0)
                run->cycle.name = "OpenMount + close";
        return r;
}

/* A fresh mount per repetition, each in a fresh caller with a mount namespace of its own. */
static int measure_read(Bench *b, const char *image, const char *target, DriverRun *run) {
        unsigned n = read_repetitions(&b->opt);
        g_autofree uint64_t *ns = g_new0(uint64_t, n);
        int r;

        for (unsigned i = 0; i < n + 1; i++) {
                ClientJob job = {
                        .mode = CLIENT_OPEN_READ,
                        .image = image,
                        .fstype = run->fstype,
                        .driver = run->userspace ? "userspace" : "kernel",
                        .target = target,
                        .read_path = READ_FILE,
                        .read_size = READ_SIZE,
                        .count = 1,
                };
                Row one = {};

                r = await_drivers_gone(b);
                if (r < 0)
                        return r;
                r = bench_run_client(b, &job, HARNESS_NEW_USERNS, "read", &one, NULL, NULL);
                if (r < 0)
                        return r;
                if (i > 0)
                        ns[i - 1] = one.s.p50_ns;
        }
        run->read.name = "read";
        stats_summarize(ns, n, &run->read.s);
        return await_drivers_gone(b);
}

/* Why run cannot be measured here, or NULL. */
static const char *why_skipped(const DriverRun *run, const char *image) {
        if (!image)
                return "its mkfs is not installed";
        if (!run->userspace)
                return NULL;
        if (!fusedriver_fuse_present())
                return "no /dev/fuse";
        return run->driver ? NULL : "no userspace driver installed";
}

static int measure_run(Bench *b, const char *image, const char *target, bool with_file,
                       DriverRun *run) {
        int r;

        run->skipped = why_skipped(run, image);
        if (run->skipped)
                return 0;
        r = measure_latency(b, image, run);
        if (r >= 0 && with_file)
                r = measure_read(b, image, target, run);
        return r;
}

static int measure_all(Bench *b, char **images, const char *target) {
        DriversReport *rep = &b->report.drivers;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const DriverCase *c = &cases[i];
                const FuseDriver *d = fusedriver_find(c->fstype);

                for (int userspace = c->kernel ? 0 : 1; userspace <= 1; userspace++) {
                        DriverRun *run = &rep->runs[rep->n_runs++];
                        int r;

                        *run = (DriverRun) {
                                .fstype = c->fstype,
                                .userspace = userspace,
                                .driver = userspace ? (d ? d->name : NULL) : "kernel",
                        };
                        r = measure_run(b, images[i], target, !c->mkfs, run);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int drivers_measure(Bench *b) {
        g_autofree char *target = g_build_filename(harness_tmpdir(), "bench-drivers-mnt", NULL);
        char *images[ELEMENTSOF(cases) + 1] = {};
        int r;

        b->report.drivers.read_size = READ_SIZE;
        b->report.drivers.read_repetitions = read_repetitions(&b->opt);
        if (mkdir(target, 0755) < 0 || chown(target, HARNESS_UID_USER1, HARNESS_GID_USER1) < 0)
                return bench_step_failed(b, target, -errno);
        r = make_images(b, images);
        if (r >= 0)
                r = measure_all(b, images, target);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                if (images[i])
                        (void) unlink(images[i]);
                g_free(images[i]);
        }
        (void) rmdir(target);
        return r;
}
