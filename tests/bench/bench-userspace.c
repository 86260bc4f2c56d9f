/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The userspace drivers' benchmark (issue 25): the sandboxed userspace drivers, the
 * default for untrusted media, against the kernel's drivers on the same filesystem, in one
 * run. Per medium (the image in memory, the filesystem on a zram disk), type and driver:
 * OpenMount latency and CPU per mount, the first byte of a file, a sequential read and
 * write, random 4 KiB reads, a small-files job (create, stat, read, delete), an archive
 * unpack and the driver's memory; then read-write OpenMount of ext4 at 64 MiB, 64 GiB and
 * 512 GiB. Every job runs in a forked unprivileged caller on a fresh mount
 * (bench-workload.c); bench-userspace-report.c prints the tables and the targets.
 *
 * Runs in the integration harness (private bus, real polkitd and daemon); leaves nothing
 * behind. Exit status 0, 1 when a job failed, 2 on a setup or usage error, 77 when not
 * root.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/fs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-image.h"
#include "bench-proc.h"
#include "bench-userspace.h"
#include "conf.h"
#include "drivertable.h"
#include "harness.h"
#include "macro.h"

#define EXIT_FAILED 1
#define EXIT_SETUP 2
#define EXIT_SKIP 77

#define MIB ((uint64_t) 1 << 20)
#define BIG_FILE "big.bin"
/* Each on a fresh mount: this VM hands memory that was freed back to its host (virtio
 * balloon free page reporting), and touching it again costs a fault in the host, so the
 * first job after a pause allocates page cache at a fraction of the speed of the next. */
#define MAX_REPS 3
#define STRV(...) ((const char *const[]) { __VA_ARGS__, NULL })

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') == 0 &&\n"
        "            subject.user == 'umtest1')\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

typedef struct Options {
        uint64_t file_mib;
        unsigned files, iterations, random_reads, budget_s;
        unsigned reps; /* of the write, read and random jobs: the median is reported */
        bool media[_MEDIUM_MAX];
        bool sizes;
        bool quick;
        char **types; /* NULL: all */
} Options;

/* The types, in the order of the tables. */
typedef struct TypeCase {
        const char *fstype;
        const char *const *mkfs; /* NULL: made by the harness with the big file in it; else
                                  * the command that makes it empty, the image appended */
        bool writable;
        uint64_t max_data;       /* bytes the jobs may write in all, 0: no limit */
        bool keep_written;       /* the written files are kept, not deleted */
} TypeCase;

static const TypeCase types[] = {
        { "ext4", NULL, true },
        /* fusefat 0.1a breaks a FAT32 filesystem once data lies past its first 2 GiB
         * (a directory made there cannot hold a file: ENOENT): the jobs stay below, and
         * keep what they wrote, as it also breaks after a large file was deleted. */
        { "vfat", STRV("mkfs.vfat", "-F", "32", "-n", "BENCHVFAT"), true,
          (uint64_t) 1800 << 20, true },
        { "exfat", STRV("mkfs.exfat", "-L", "benchexfat"), true },
        { "ntfs3", STRV("mkntfs", "-Q", "-q", "-F", "-L", "benchntfs"), true },
        { "squashfs", NULL, false },
        { "erofs", NULL, false },
};

typedef struct Run {
        Options opt;
        UsReport rep;
        char *cgroup;
        char *target;  /* where the callers attach their mounts (each in its own namespace) */
        char *staging; /* the big file, before it goes into the images */
        char *tarball;
} Run;

/* ---- helpers --------------------------------------------------------------------------- */

static int fail(Run *run, int r, const char *what) {
        if (!run->rep.error[0])
                snprintf(run->rep.error, sizeof(run->rep.error), "%s: %s", what, strerror(-r));
        return r;
}

static bool kernel_has(const char *fstype) {
        g_autofree char *text = NULL;
        g_autofree char *needle = g_strdup_printf("\t%s\n", fstype);

        return g_file_get_contents("/proc/filesystems", &text, NULL, NULL) &&
               strstr(text, needle);
}

/* A source-like tree under one top directory, "project" (text files of 0.5 to 8 KiB,
 * every tenth 48 KiB, 20 per directory) packed by GNU tar with fixed names, times and
 * owners: the same archive in every run. */
static int make_tarball(Run *run, unsigned files) {
        g_autofree char *tree = g_build_filename(harness_tmpdir(), "project", NULL);
        uint64_t x = 99;
        char line[80];
        int r;

        run->tarball = g_build_filename(harness_tmpdir(), "bench-tree.tar", NULL);
        if (mkdir(tree, 0755) < 0)
                return -errno;
        for (unsigned i = 0; i < files; i++) {
                g_autofree char *dir = g_strdup_printf("%s/src%03u", tree, i / 20);
                g_autofree char *path = g_strdup_printf("%s/unit%04u.c", dir, i);
                g_autoptr(GString) text = g_string_new(NULL);
                size_t len = i % 10 == 9 ? 48 * 1024 : 512 + bench_xorshift(&x) % (8192 - 512);

                if (i % 20 == 0 && mkdir(dir, 0755) < 0)
                        return -errno;
                while (text->len < len) {
                        snprintf(line, sizeof(line), "static int f%llu(void) { return %llu; }\n",
                                 (unsigned long long) (bench_xorshift(&x) % 100000),
                                 (unsigned long long) (bench_xorshift(&x) % 1000));
                        g_string_append(text, line);
                }
                g_string_truncate(text, len);
                if (!g_file_set_contents(path, text->str, (gssize) text->len, NULL))
                        return -EIO;
                run->rep.tar_bytes += len;
        }
        run->rep.tar_files = files;
        r = bench_run_quiet(STRV("tar", "--sort=name", "--mtime=@0", "--owner=0", "--group=0",
                             "-C", harness_tmpdir(), "-cf", run->tarball, "project"),
                        "tar -c");
        (void) bench_run_quiet(STRV("rm", "-rf", tree), "rm");
        if (r >= 0 && chmod(run->tarball, 0644) < 0)
                r = -errno;
        return r;
}

/* An image of c's type: with the big file where the harness makes it, else empty. */
static int make_image(Run *run, const TypeCase *c, char **ret_path) {
        const HarnessEntry entries[] = {
                { HARNESS_ENTRY_COPY, BIG_FILE, run->staging },
                {},
        };
        /* At least 600 MiB: mkfs.ext4 gives a smaller filesystem 1 KiB blocks, which the
         * kernel cannot mount from a zram disk (4 KiB sectors). Sparse either way. */
        uint64_t size = MAX(3 * run->opt.file_mib * MIB + 256 * MIB, 600 * MIB);

        g_autofree char *name = g_strdup_printf("bench-%s", c->fstype);

        /* lowntfs-3g takes 128 KiB writes (big_writes) only on volumes of 4 GiB or more,
         * as most sticks are. */
        if (streq(c->fstype, "ntfs3"))
                size = MAX(size, (uint64_t) 5 << 30);
        if (!c->mkfs) {
                const HarnessImageSpec spec = {
                        .label = streq(c->fstype, "squashfs") ? NULL : "bench",
                        .size = c->writable ? size : 0,
                        .root_uid = HARNESS_UID_USER1,
                        .root_gid = HARNESS_GID_USER1,
                        .entries = entries,
                };

                return harness_make_image(c->fstype, &spec, ret_path);
        }
        return bench_make_empty_image(name, c->mkfs, size, ret_path);
}

/* The image's bytes onto a zram disk of its size (holes skipped: the disk reads zeros). */
static int image_to_zram(const char *image, char **ret_node) {
        _cleanup_close_ int in = -EBADF, out = -EBADF;
        g_autofree char *node = NULL, *size = NULL;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        off_t data = 0, hole;
        int r;

        in = open(image, O_RDONLY | O_CLOEXEC);
        if (in < 0 || fstat(in, &st) < 0)
                return -errno;
        size = g_strdup_printf("%" PRIu64, (uint64_t) st.st_size);
        r = harness_zram_new(size, &node);
        if (r < 0)
                return r;
        out = open(node, O_WRONLY | O_CLOEXEC);
        buf = malloc(MIB);
        if (out < 0 || !buf) {
                r = out < 0 ? -errno : -ENOMEM;
                (void) harness_zram_free(node);
                return r;
        }
        while ((data = lseek(in, data, SEEK_DATA)) >= 0) {
                hole = lseek(in, data, SEEK_HOLE);
                for (off_t o = data; o < hole;) {
                        ssize_t n = pread(in, buf, (size_t) MIN((off_t) MIB, hole - o), o);

                        if (n <= 0 || pwrite(out, buf, (size_t) n, o) != n) {
                                (void) harness_zram_free(node);
                                return -EIO;
                        }
                        o += n;
                }
                data = hole;
        }
        if (fsync(out) < 0) {
                r = -errno;
                (void) harness_zram_free(node);
                return r;
        }
        *ret_node = g_steal_pointer(&node);
        return 0;
}

/* A block device's page cache dropped, so that the next mount reads the medium. */
static void drop_caches(const char *source) {
        _cleanup_close_ int fd = open(source, O_RDONLY | O_CLOEXEC);
        struct stat st;

        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISBLK(st.st_mode))
                (void) ioctl(fd, BLKFLSBUF, 0);
}

/* ---- one job ----------------------------------------------------------------------------- */

static int job_failed(Run *run, WorkJob *job, const char *what) {
        if (!run->rep.error[0])
                snprintf(run->rep.error, sizeof(run->rep.error), "%s",
                         job->result->error[0] ? job->result->error : what);
        (void) munmap(job->result, sizeof(WorkResult));
        job->result = NULL;
        return -EIO;
}

/* The next line of caller must be expect. */
static bool caller_says(HarnessCaller *caller, const char *expect) {
        g_autofree char *line = NULL;

        return harness_caller_read_line(caller, HARNESS_CALLER_TIMEOUT_MS * 5, &line) >= 0 &&
               streq(line, expect);
}

/* A job on a mount: its userspace driver found once the caller has it mounted, its peak
 * memory read once the job is done, its exit awaited after the caller's. */
static int run_mounted_job(Run *run, WorkJob *job, double *driver_hwm_mib) {
        g_autoptr(HarnessCaller) caller = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        ProcUidScan scan = {};
        uint64_t hwm = 0;
        int r, status;

        r = harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, HARNESS_NEW_USERNS,
                                 work_main, job, &caller);
        if (r < 0)
                return job_failed(run, job, "spawning a caller");
        if (!caller_says(caller, "mounted"))
                return job_failed(run, job, "the caller did not mount");
        if (job->driver && streq(job->driver, "userspace")) {
                r = proc_scan_uids(run->cgroup, CONF_DEFAULT_DRIVER_UID_FIRST,
                                   CONF_DEFAULT_DRIVER_UID_COUNT, &scan);
                if (r < 0 || scan.alive != 1)
                        return job_failed(run, job, "not exactly one driver runs for the mount");
                pidfd = pidfd_open(scan.alive_pid, 0);
                if (pidfd < 0)
                        return job_failed(run, job, "pidfd_open of the driver");
        }
        if (!caller_says(caller, "measured"))
                return job_failed(run, job, "the job failed");
        if (pidfd >= 0 && proc_status_kib(scan.alive_pid, "VmHWM", &hwm) >= 0)
                *driver_hwm_mib = MAX(*driver_hwm_mib, (double) hwm / 1024.0);
        (void) harness_caller_release(caller);
        status = harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, NULL);
        if (status != 0 || job->result->failed)
                return job_failed(run, job, "the caller failed");
        if (pidfd >= 0) {
                struct pollfd p = { .fd = pidfd, .events = POLLIN };

                if (poll(&p, 1, HARNESS_TIMEOUT_MS) <= 0)
                        return job_failed(run, job, "the driver still runs after its mount went");
        }
        return 0;
}

static int run_job(Run *run, WorkJob *job, double *driver_hwm_mib) {
        int status;

        job->result = mmap(NULL, sizeof(WorkResult), PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (job->result == MAP_FAILED) {
                job->result = NULL;
                return fail(run, -errno, "mmap");
        }
        job->cgroup = run->cgroup;
        job->target = run->target;
        drop_caches(job->source);
        if (job->kind != WORK_MOUNT)
                return run_mounted_job(run, job, driver_hwm_mib);
        status = harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, work_main, job, NULL);
        if (status != 0 || job->result->failed)
                return job_failed(run, job, "a caller failed");
        return 0;
}

static void done_job(WorkJob *job) {
        if (job->result)
                (void) munmap(job->result, sizeof(WorkResult));
        job->result = NULL;
}

static int measure_mounts(Run *run, const char *source, bool read_only, UsRow *row,
                          Summary *ret) {
        WorkJob job = {
                .kind = WORK_MOUNT, .source = source, .read_only = read_only,
                .fstype = row->fstype, .driver = row->userspace ? "userspace" : "kernel",
                .count = run->opt.iterations, .warmup = run->opt.quick ? 1 : 3,
        };
        uint64_t before = 0, after = 0;
        bool cpu = harness_cgroup_cpu_usec(&before) >= 0;
        int r;

        r = run_job(run, &job, NULL);
        if (r < 0)
                return r;
        cpu = cpu && harness_cgroup_cpu_usec(&after) >= 0;
        stats_summarize(job.result->samples_ns, job.result->n_samples, ret);
        row->cpu_ms = cpu ? (double) (after - before) / 1000.0 /
                                            (job.count + job.warmup)
                                  : -1;
        done_job(&job);
        return 0;
}

/* ---- one row: a driver on a type on a medium --------------------------------------------- */

/* The size of the sequential file on c: the file size asked for, less where the type's
 * driver cannot take that much data (the writes of every rep within max_data). */
static uint64_t file_size(const Run *run, const TypeCase *c) {
        uint64_t size = run->opt.file_mib * MIB;

        if (c->max_data)
                size = MIN(size, c->max_data / run->opt.reps / MIB * MIB);
        return size;
}

/* The median of n figures (sorted in place); n odd, or the upper middle. */
static double median(double *v, unsigned n) {
        for (unsigned i = 1; i < n; i++)
                for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
                        double t = v[j];

                        v[j] = v[j - 1];
                        v[j - 1] = t;
                }
        return v[n / 2];
}

/* *big_size: the size of BIG_FILE on the filesystem, 0 while it has none (the write job
 * then leaves its file there as BIG_FILE). */
static int measure_row(Run *run, const TypeCase *c, const char *source, uint64_t *big_size,
                       UsRow *row) {
        const char *driver = row->userspace ? "userspace" : "kernel";
        const uint64_t size = file_size(run, c);
        double write[MAX_REPS], read[MAX_REPS], first[MAX_REPS], random[MAX_REPS];
        int r;

        row->file_bytes = size;
        r = measure_mounts(run, source, !c->writable, row, &row->mount);
        if (r < 0)
                return r;
        for (unsigned i = 0; c->writable && i < run->opt.reps; i++) {
                g_autofree char *keep = g_strdup_printf("written-%s-%u.bin", driver, i);
                WorkJob job = { .kind = WORK_WRITE, .source = source, .fstype = c->fstype,
                                .driver = driver, .size = size,
                                .keep_as = !*big_size ? BIG_FILE : c->keep_written ? keep : NULL,
                                .budget_ns = run->opt.budget_s * 1000000000ull };

                r = run_job(run, &job, &row->driver_hwm_mib);
                if (r < 0)
                        return r;
                row->written = job.result->bytes;
                write[i] = (double) row->written / MIB / ((double) job.result->ns / 1e9);
                if (!*big_size)
                        *big_size = row->written;
                done_job(&job);
        }
        for (unsigned i = 0; i < run->opt.reps; i++) {
                WorkJob job = { .kind = WORK_READ, .source = source, .read_only = true,
                                .fstype = c->fstype, .driver = driver,
                                .read_path = BIG_FILE, .size = *big_size };

                r = run_job(run, &job, &row->driver_hwm_mib);
                if (r < 0)
                        return r;
                first[i] = stats_ms(job.result->first_byte_ns);
                read[i] = (double) *big_size / MIB / ((double) job.result->ns / 1e9);
                done_job(&job);
        }
        for (unsigned i = 0; i < run->opt.reps; i++) {
                WorkJob job = { .kind = WORK_RANDOM, .source = source, .read_only = true,
                                .fstype = c->fstype, .driver = driver, .read_path = BIG_FILE,
                                .size = *big_size, .count = run->opt.random_reads,
                                .budget_ns = run->opt.budget_s * 1000000000ull };

                r = run_job(run, &job, &row->driver_hwm_mib);
                if (r < 0)
                        return r;
                random[i] = job.result->n_done / ((double) job.result->ns / 1e9);
                done_job(&job);
        }
        row->write_mibs = c->writable ? median(write, run->opt.reps) : -1;
        row->read_mibs = median(read, run->opt.reps);
        row->first_byte_ms = median(first, run->opt.reps);
        row->random_iops = median(random, run->opt.reps);
        if (!c->writable)
                return 0;
        {
                WorkJob job = { .kind = WORK_META, .source = source, .fstype = c->fstype,
                                .driver = driver, .count = run->opt.files,
                                .budget_ns = run->opt.budget_s * 1000000000ull };
                double scale;

                r = run_job(run, &job, &row->driver_hwm_mib);
                if (r < 0)
                        return r;
                row->meta_files = job.result->n_done;
                scale = (double) run->opt.files / MAX(row->meta_files, 1u);
                row->meta_s = (double) job.result->ns / 1e9 * scale;
                for (int i = 0; i < _META_MAX; i++)
                        row->meta_phase_s[i] = (double) job.result->phase_ns[i] / 1e9 * scale;
                done_job(&job);
        }
        {
                WorkJob job = { .kind = WORK_UNPACK, .source = source, .fstype = c->fstype,
                                .driver = driver, .tarball = run->tarball };

                r = run_job(run, &job, &row->driver_hwm_mib);
                if (r < 0)
                        return r;
                row->unpack_s = (double) job.result->ns / 1e9;
                done_job(&job);
        }
        return 0;
}

/* Two rows (kernel, userspace) per type and medium. */
G_STATIC_ASSERT(US_MAX_ROWS >= _MEDIUM_MAX * G_N_ELEMENTS(types) * 2);

static UsRow *new_row(Run *run, Medium m, const TypeCase *c, bool userspace) {
        UsRow *row = &run->rep.rows[run->rep.n_rows++];
        const FuseDriver *d = fusedriver_find(c->fstype);

        *row = (UsRow) {
                .medium = m, .fstype = c->fstype, .userspace = userspace,
                .driver = userspace ? (d ? d->name : "-") : "kernel",
                .cpu_ms = -1, .first_byte_ms = -1, .read_mibs = -1, .write_mibs = -1,
                .random_iops = -1, .meta_s = -1, .unpack_s = -1,
        };
        if (userspace && !d)
                row->skipped = "no userspace driver for the type in Debian 12";
        else if (userspace && !fusedriver_fuse_present())
                row->skipped = "no /dev/fuse";
        else if (!userspace && !kernel_has(c->fstype))
                row->skipped = "not in this kernel";
        return row;
}

static int measure_type(Run *run, Medium m, const TypeCase *c) {
        g_autofree char *image = NULL, *node = NULL;
        const char *source;
        uint64_t big_size = c->mkfs ? 0 : run->opt.file_mib * MIB;
        int r;

        r = make_image(run, c, &image);
        if (r == -ENOENT) {
                /* Its mkfs is not installed: the rows say so, and the run goes on. */
                for (int userspace = 0; userspace <= 1; userspace++)
                        new_row(run, m, c, userspace)->skipped = "its mkfs is not installed";
                return 0;
        }
        if (r < 0)
                return fail(run, r, "making an image");
        if (m == MEDIUM_BLOCKDEV) {
                r = image_to_zram(image, &node);
                (void) unlink(image);
                if (r < 0)
                        return fail(run, r, "a zram disk");
        }
        source = node ?: image;
        if (chown(source, HARNESS_UID_USER1, HARNESS_GID_USER1) < 0 || chmod(source, 0600) < 0) {
                r = fail(run, -errno, source);
                goto out;
        }
        /* Where the kernel has no driver, the userspace one writes the big file first. */
        for (int userspace = 0; userspace <= 1; userspace++) {
                UsRow *row = new_row(run, m, c, userspace);

                if (row->skipped)
                        continue;
                r = measure_row(run, c, source, &big_size, row);
                if (r < 0)
                        goto out;
        }
out:
        if (node)
                (void) harness_zram_free(node);
        else
                (void) unlink(image);
        return r;
}

/* ---- mount time by size ------------------------------------------------------------------ */

static int measure_sizes(Run *run) {
        static const struct {
                const char *name;
                uint64_t bytes;
        } sizes[US_SIZES] = {
                { "64 MiB", 64 * MIB }, { "64 GiB", 64ull << 30 }, { "512 GiB", 512ull << 30 },
        };
        int r = 0;

        for (unsigned i = 0; i < US_SIZES && r >= 0; i++) {
                g_autofree char *name = g_strdup_printf("bench-size-%u", i);
                g_autofree char *path = NULL;
                SizeRow *s = &run->rep.sizes[run->rep.n_sizes++];
                UsRow row = { .fstype = "ext4" };

                *s = (SizeRow) { .name = sizes[i].name };
                /* Inode tables marked zeroed (punched holes, not written), so that no lazy
                 * init thread writes gigabytes of zeros into memory behind the figures. */
                r = bench_make_empty_image(name,
                                           STRV("mkfs.ext4", "-q", "-F", "-E",
                                                "lazy_itable_init=0,lazy_journal_init=1"),
                                           sizes[i].bytes, &path);
                if (r < 0)
                        break;
                if (chown(path, HARNESS_UID_USER1, HARNESS_GID_USER1) < 0)
                        r = -errno;
                if (r >= 0)
                        r = measure_mounts(run, path, false, &row, &s->kernel);
                row.userspace = true;
                if (r >= 0 && fusedriver_find("ext4") && fusedriver_fuse_present())
                        r = measure_mounts(run, path, false, &row, &s->fuse);
                (void) unlink(path);
        }
        return r < 0 ? fail(run, r, "mount time by size") : 0;
}

/* ---- setup -------------------------------------------------------------------------------- */

static int write_config(char **ret_path) {
        g_autofree char *path = g_build_filename(harness_tmpdir(), "bench-userspace.conf", NULL);
        static const char text[] = "[General]\nDriver=kernel\n[Limits]\nMaxRequests=64\n"
                                   "MaxRequestsPerUser=64\nMaxLoopDevices=64\n"
                                   "MaxLoopDevicesPerUser=64\nMaxDrivers=64\n"
                                   "MaxDriversPerUser=64\n";

        if (!g_file_set_contents(path, text, -1, NULL) || chmod(path, 0644) < 0)
                return -EIO;
        *ret_path = g_steal_pointer(&path);
        return 0;
}

static int setup(Run *run, pid_t *ret_daemon) {
        g_autofree char *conf = NULL, *conf_arg = NULL;
        int r;

        r = harness_set_rules(rules);
        if (r < 0)
                return r;
        r = write_config(&conf);
        if (r < 0)
                return r;
        run->target = g_build_filename(harness_tmpdir(), "bench-us-mnt", NULL);
        if (mkdir(run->target, 0755) < 0 ||
            chown(run->target, HARNESS_UID_USER1, HARNESS_GID_USER1) < 0)
                return -errno;
        run->staging = g_build_filename(harness_tmpdir(), "bench-" BIG_FILE, NULL);
        r = bench_write_random_file(run->staging, run->opt.file_mib * MIB);
        if (r < 0)
                return r;
        r = make_tarball(run, run->opt.quick ? 200 : 3000);
        if (r < 0)
                return r;
        if (!harness_daemon_path())
                return -ENOENT;
        conf_arg = g_strconcat("--config=", conf, NULL);
        const char *const args[] = { conf_arg, NULL };
        r = harness_start_daemon(harness_daemon_path(), args, ret_daemon);
        if (r < 0)
                return r;
        /* The daemon in a cgroup of its own, with its workers (those it made at start too)
         * and their drivers: CPU per mount, and where the drivers are looked for. */
        if (harness_cgroup_new("bench-userspace") >= 0 && harness_cgroup_move(*ret_daemon) >= 0) {
                g_autoptr(GArray) workers = harness_children(*ret_daemon, NULL, NULL);

                for (guint i = 0; workers && i < workers->len; i++)
                        (void) harness_cgroup_move(g_array_index(workers, pid_t, i));
                run->cgroup = harness_cgroup_unified_dir();
        }
        return 0;
}

/* ---- options ------------------------------------------------------------------------------ */

static void help(void) {
        printf("bench-userspace [OPTIONS]\n\n"
               "Measures the sandboxed userspace drivers against the kernel's on the same\n"
               "filesystem, with the image in memory and on a zram disk: OpenMount latency\n"
               "and CPU, first byte, sequential read and write, random 4 KiB reads, a\n"
               "small-files job, an archive unpack, the driver's memory, and read-write\n"
               "mount time of ext4 at 64 MiB, 64 GiB and 512 GiB; prints the targets of\n"
               "issue 25 as met or MISSED. Needs root.\n\n"
               "  -h --help         show this help\n"
               "     --size=MIB     the sequential file (default 1024)\n"
               "     --files=N      files of the small-files job (default 10000)\n"
               "     --iterations=N OpenMount cycles per row (default 30)\n"
               "     --media=LIST   memory,blockdev (default both)\n"
               "     --types=LIST   of ext4,vfat,exfat,ntfs3,squashfs,erofs (default all)\n"
               "     --no-sizes     leave out the mount time by size\n"
               "     --quick        a smoke run: --size=32 --files=300 --iterations=3\n\n"
               "Exit status: 0, 1 when a job failed, 2 on a setup or usage error, 77 when\n"
               "not run as root.\n");
}

static int parse_uint(const char *s, unsigned max, unsigned *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || *s == '-' || v < 1 || v > max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int parse_argv(int argc, char *argv[], Options *o) {
        enum { ARG_SIZE = 0x100, ARG_FILES, ARG_ITERATIONS, ARG_MEDIA, ARG_NO_SIZES,
               ARG_QUICK, ARG_TYPES };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "size", required_argument, NULL, ARG_SIZE },
                { "files", required_argument, NULL, ARG_FILES },
                { "iterations", required_argument, NULL, ARG_ITERATIONS },
                { "media", required_argument, NULL, ARG_MEDIA },
                { "no-sizes", no_argument, NULL, ARG_NO_SIZES },
                { "quick", no_argument, NULL, ARG_QUICK },
                { "types", required_argument, NULL, ARG_TYPES },
                {},
        };
        unsigned size = 0, files = 0, iterations = 0;
        int c;

        *o = (Options) { .media = { true, true }, .sizes = true, .random_reads = 16384,
                         .budget_s = 30, .reps = MAX_REPS };
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 1;
                case ARG_SIZE:
                        if (parse_uint(optarg, 8192, &size) < 0)
                                goto bad;
                        break;
                case ARG_FILES:
                        if (parse_uint(optarg, 1000000, &files) < 0)
                                goto bad;
                        break;
                case ARG_ITERATIONS:
                        if (parse_uint(optarg, WORK_MAX_SAMPLES, &iterations) < 0)
                                goto bad;
                        break;
                case ARG_MEDIA: {
                        g_auto(GStrv) items = g_strsplit(optarg, ",", -1);

                        o->media[MEDIUM_MEMORY] = o->media[MEDIUM_BLOCKDEV] = false;
                        for (size_t i = 0; items[i]; i++) {
                                if (streq(items[i], "memory"))
                                        o->media[MEDIUM_MEMORY] = true;
                                else if (streq(items[i], "blockdev"))
                                        o->media[MEDIUM_BLOCKDEV] = true;
                                else
                                        goto bad;
                        }
                        break;
                }
                case ARG_NO_SIZES:
                        o->sizes = false;
                        break;
                case ARG_QUICK:
                        o->quick = true;
                        break;
                case ARG_TYPES:
                        g_strfreev(o->types);
                        o->types = g_strsplit(optarg, ",", -1);
                        for (size_t i = 0; o->types[i]; i++) {
                                bool known = false;

                                for (size_t k = 0; k < ELEMENTSOF(types); k++)
                                        known = known || streq(types[k].fstype, o->types[i]);
                                if (!known)
                                        goto bad;
                        }
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bench-userspace: unexpected argument '%s' (see --help).\n",
                        argv[optind]);
                return -EINVAL;
        }
        o->file_mib = size ?: (o->quick ? 32 : 1024);
        o->files = files ?: (o->quick ? 300 : 10000);
        o->iterations = iterations ?: (o->quick ? 3 : 30);
        if (o->quick) {
                o->random_reads = 1024;
                o->budget_s = 5;
                o->reps = 1;
        }
        return 0;
bad:
        fprintf(stderr, "bench-userspace: invalid value '%s' for --%s (see --help).\n", optarg,
                options[c - ARG_SIZE + 1].name);
        return -EINVAL;
}

/* ---- main --------------------------------------------------------------------------------- */

static int measure(Run *run) {
        int r;

        for (Medium m = 0; m < _MEDIUM_MAX; m++) {
                if (!run->opt.media[m])
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                        if (run->opt.types &&
                            !g_strv_contains((const char *const *) run->opt.types,
                                             types[i].fstype))
                                continue;
                        r = measure_type(run, m, &types[i]);
                        if (r < 0)
                                return r;
                }
        }
        return run->opt.sizes ? measure_sizes(run) : 0;
}

static void run_done(Run *run) {
        if (run->staging)
                (void) unlink(run->staging);
        if (run->tarball)
                (void) unlink(run->tarball);
        if (run->target)
                (void) rmdir(run->target);
        g_free(run->staging);
        g_free(run->tarball);
        g_free(run->target);
        g_free(run->cgroup);
        g_strfreev(run->opt.types);
}

int main(int argc, char *argv[]) {
        static const HarnessOptions harness_options = { .without_udevd = true };
        _cleanup_(run_done) Run run = {};
        pid_t daemon = 0;
        int r;

        r = parse_argv(argc, argv, &run.opt);
        if (r != 0)
                return r > 0 ? EXIT_SUCCESS : EXIT_SETUP;
        r = harness_init(&harness_options);
        if (r == -EPERM) {
                fprintf(stderr, "bench-userspace: mounts real filesystems and needs root.\n");
                return EXIT_SKIP;
        }
        if (r < 0) {
                fprintf(stderr, "bench-userspace: the harness failed: %s\n", strerror(-r));
                return EXIT_SETUP;
        }
        r = setup(&run, &daemon);
        if (r < 0) {
                fprintf(stderr, "bench-userspace: setup failed: %s\n", strerror(-r));
                return EXIT_SETUP;
        }
        run.rep.file_size = run.opt.file_mib * MIB;
        run.rep.files = run.opt.files;
        run.rep.random_reads = run.opt.random_reads;
        run.rep.iterations = run.opt.iterations;
        run.rep.budget_s = run.opt.budget_s;
        run.rep.reps = run.opt.reps;
        r = measure(&run);
        (void) harness_stop_daemon(daemon, NULL);
        us_report_print(&run.rep);
        if (r < 0) {
                printf("\nFAILED: %s\n", run.rep.error[0] ? run.rep.error : strerror(-r));
                return EXIT_FAILED;
        }
        return EXIT_SUCCESS;
}
