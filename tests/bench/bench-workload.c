/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a user does with a mount, timed in the caller (see bench-workload.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-client.h"
#include "bench-image.h"
#include "bench-proc.h"
#include "bench-stats.h"
#include "bench-workload.h"
#include "harness.h"
#include "macro.h"

#define STEP (1024 * 1024)
#define SMALL 4096
#define FILES_PER_DIR 100

static const char *const kind_names[_WORK_MAX] = {
        [WORK_MOUNT] = "mount",   [WORK_READ] = "read",   [WORK_RANDOM] = "random read",
        [WORK_WRITE] = "write",   [WORK_META] = "small files", [WORK_UNPACK] = "unpack",
};

const char *work_kind_name(WorkKind kind) {
        return kind < _WORK_MAX ? kind_names[kind] : "?";
}

static int work_fail(WorkJob *job, int r, const char *what) {
        job->result->failed = true;
        snprintf(job->result->error, sizeof(job->result->error), "%s %s, %s: %s: %s",
                 job->fstype, job->driver, work_kind_name(job->kind), what, strerror(-r));
        return r;
}

/* ---- the mount ---------------------------------------------------------------------------- */

/* OpenMount, the mount attached on target; then "mounted" is reported, so that the bench
 * finds the driver (the caller, in a user namespace of its own, sees no driver's uid). */
static int mount_attach(WorkJob *job, sd_bus *bus, int source_fd, sd_bus_message **ret_reply) {
        uint64_t ns;
        int fd, r;

        r = bench_open_mount(bus, source_fd, job->fstype, job->read_only ? "ro" : "rw",
                             job->driver, ret_reply, &fd, &ns,
                             job->result->error, sizeof(job->result->error));
        if (r < 0) {
                job->result->failed = true;
                return r;
        }
        if (move_mount(fd, "", AT_FDCWD, job->target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return work_fail(job, -errno, "attaching the mount (move_mount)");
        harness_report("mounted");
        return 0;
}

/* "measured" reported and the bench's release awaited (it reads the driver's memory
 * meanwhile); then the mount detached and its fd closed. */
static void mount_release(WorkJob *job, sd_bus_message **reply) {
        harness_report("measured");
        (void) harness_await_release();
        (void) umount2(job->target, MNT_DETACH);
        *reply = sd_bus_message_unref(*reply);
}

static char *in_mount(WorkJob *job, const char *relative) {
        return g_build_filename(job->target, relative, NULL);
}

static int sync_mount(WorkJob *job) {
        _cleanup_close_ int fd = open(job->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 || syncfs(fd) < 0)
                return work_fail(job, -errno, "syncfs");
        return 0;
}

/* ---- the jobs ----------------------------------------------------------------------------- */

static int job_mount_cycles(WorkJob *job, sd_bus *bus, int source_fd) {
        WorkResult *res = job->result;
        unsigned n = MIN(job->count, (unsigned) WORK_MAX_SAMPLES);

        for (unsigned i = 0; i < job->warmup + n; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                _cleanup_close_ int pidfd = -EBADF;
                uint64_t ns;
                int fd, r;

                r = bench_open_mount(bus, source_fd, job->fstype, job->read_only ? "ro" : "rw",
                                     job->driver, &reply, &fd, &ns, res->error,
                                     sizeof(res->error));
                if (r >= 0 && streq(job->driver, "userspace"))
                        r = bench_find_driver(job->cgroup, &pidfd, NULL, res->error,
                                              sizeof(res->error));
                if (r < 0) {
                        res->failed = true;
                        return r;
                }
                reply = sd_bus_message_unref(reply);
                if (pidfd >= 0) {
                        r = bench_await_exit(pidfd, res->error, sizeof(res->error));
                        if (r < 0) {
                                res->failed = true;
                                return r;
                        }
                }
                if (i >= job->warmup)
                        res->samples_ns[res->n_samples++] = ns;
        }
        return 0;
}

/* The first 4 KiB (timed from the OpenMount call), then the rest in 1 MiB steps. */
static int job_read(WorkJob *job, uint64_t t_call) {
        _cleanup_free_ char *path = in_mount(job, job->read_path);
        _cleanup_free_ char *buf = malloc(STEP);
        _cleanup_close_ int fd = -EBADF;
        uint64_t total = 0, t0 = stats_now_ns();
        ssize_t n;

        if (!buf)
                return work_fail(job, -ENOMEM, "buffer");
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return work_fail(job, -errno, "opening the file");
        n = read(fd, buf, SMALL);
        job->result->first_byte_ns = stats_now_ns() - t_call;
        while (n > 0) {
                total += (uint64_t) n;
                n = read(fd, buf, STEP);
        }
        if (n < 0)
                return work_fail(job, -errno, "reading");
        job->result->ns = stats_now_ns() - t0;
        if (total != job->size)
                return work_fail(job, -EIO, "the file is shorter than written");
        return 0;
}

static int job_random(WorkJob *job) {
        _cleanup_free_ char *path = in_mount(job, job->read_path);
        _cleanup_close_ int fd = -EBADF;
        uint64_t x = 0x2545f4914f6cdd1dull, blocks = job->size / SMALL, t0;
        char buf[SMALL];

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return work_fail(job, -errno, "opening the file");
        (void) posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
        t0 = stats_now_ns();
        for (unsigned i = 0; i < job->count; i++) {
                off_t off = (off_t) ((bench_xorshift(&x) % blocks) * SMALL);

                if (i % 64 == 0 && job->budget_ns && stats_now_ns() - t0 > job->budget_ns)
                        break;
                if (pread(fd, buf, SMALL, off) != SMALL)
                        return work_fail(job, -EIO, "pread");
                job->result->n_done = i + 1;
        }
        job->result->ns = stats_now_ns() - t0;
        return 0;
}

static int job_write(WorkJob *job) {
        _cleanup_free_ char *path = in_mount(job, "written.bin");
        _cleanup_free_ uint64_t *buf = malloc(STEP);
        _cleanup_close_ int fd = -EBADF;
        uint64_t x = 0x9e3779b97f4a7c15ull, t0;

        if (!buf)
                return work_fail(job, -ENOMEM, "buffer");
        for (size_t i = 0; i < STEP / sizeof(uint64_t); i++)
                buf[i] = bench_xorshift(&x);
        t0 = stats_now_ns();
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return work_fail(job, -errno, "creating the file");
        for (uint64_t done = 0; done < job->size; done += STEP) {
                if (job->budget_ns && stats_now_ns() - t0 > job->budget_ns)
                        break;
                ssize_t n;

                buf[0] = done; /* no two steps alike */
                n = write(fd, buf, STEP);
                if (n < 0)
                        return work_fail(job, -errno, "writing");
                if (n != STEP) {
                        snprintf(job->result->error, sizeof(job->result->error),
                                 "%s %s, write: %zd of %d bytes written at %" PRIu64 " MiB",
                                 job->fstype, job->driver, n, STEP, done >> 20);
                        job->result->failed = true;
                        return -ENOSPC;
                }
                job->result->bytes = done + STEP;
        }
        if (fsync(fd) < 0)
                return work_fail(job, -errno, "fsync");
        fd = safe_close(fd);
        job->result->ns = stats_now_ns() - t0;
        if (job->keep_as) {
                _cleanup_free_ char *to = in_mount(job, job->keep_as);

                if (rename(path, to) < 0)
                        return work_fail(job, -errno, "renaming the file");
        } else if (unlink(path) < 0)
                return work_fail(job, -errno, "removing the file");
        return sync_mount(job);
}

/* ---- small files -------------------------------------------------------------------------- */

/* File i's path and size: count/100 directories of 100 files, 512 B to 8 KiB each. */
static void meta_file(unsigned i, char *path, size_t size, uint64_t *x, size_t *ret_len) {
        snprintf(path, size, "d%03u/file-%04u.txt", i / FILES_PER_DIR, i);
        *ret_len = 512 + (size_t) (bench_xorshift(x) % (8192 - 512));
}

/* Stops at a directory's end once the budget is spent: job->count is then what was made. */
static int meta_create(WorkJob *job, int root, const char *data) {
        uint64_t x = 42, t0 = stats_now_ns();
        char path[64];
        size_t len;

        for (unsigned i = 0; i < job->count; i++) {
                _cleanup_close_ int fd = -EBADF;

                if (i % FILES_PER_DIR == 0 && i > 0 && job->budget_ns &&
                    stats_now_ns() - t0 > job->budget_ns) {
                        job->count = i;
                        break;
                }
                if (i % FILES_PER_DIR == 0) {
                        snprintf(path, sizeof(path), "d%03u", i / FILES_PER_DIR);
                        if (mkdirat(root, path, 0755) < 0)
                                return work_fail(job, -errno, "mkdir");
                }
                meta_file(i, path, sizeof(path), &x, &len);
                fd = openat(root, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (fd < 0)
                        return work_fail(job, -errno, "creating a file");
                errno = ENOSPC; /* a short write sets none */
                if (write(fd, data, len) != (ssize_t) len)
                        return work_fail(job, -errno, "writing a file");
        }
        return syncfs(root) < 0 ? work_fail(job, -errno, "syncfs") : 0;
}

static int meta_stat(WorkJob *job, int root) {
        uint64_t x = 42;
        char path[64];
        size_t len;

        for (unsigned i = 0; i < job->count; i++) {
                struct stat st;

                meta_file(i, path, sizeof(path), &x, &len);
                if (fstatat(root, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return work_fail(job, -errno, "stat");
                if ((size_t) st.st_size != len)
                        return work_fail(job, -EIO, "a file's size");
        }
        return 0;
}

static int meta_read(WorkJob *job, int root, char *buf) {
        uint64_t x = 42;
        char path[64];
        size_t len;

        for (unsigned i = 0; i < job->count; i++) {
                _cleanup_close_ int fd = -EBADF;

                meta_file(i, path, sizeof(path), &x, &len);
                fd = openat(root, path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return work_fail(job, -errno, "opening a file");
                if (read(fd, buf, 8192) != (ssize_t) len)
                        return work_fail(job, -EIO, "reading a file");
        }
        return 0;
}

static int meta_delete(WorkJob *job, int root) {
        uint64_t x = 42;
        char path[64];
        size_t len;

        for (unsigned i = 0; i < job->count; i++) {
                meta_file(i, path, sizeof(path), &x, &len);
                if (unlinkat(root, path, 0) < 0)
                        return work_fail(job, -errno, "unlink");
                if (i % FILES_PER_DIR == FILES_PER_DIR - 1 || i + 1 == job->count) {
                        snprintf(path, sizeof(path), "d%03u", i / FILES_PER_DIR);
                        if (unlinkat(root, path, AT_REMOVEDIR) < 0)
                                return work_fail(job, -errno, "rmdir");
                }
        }
        return syncfs(root) < 0 ? work_fail(job, -errno, "syncfs") : 0;
}

static int job_meta(WorkJob *job) {
        _cleanup_close_ int root = -EBADF;
        char data[8192];
        uint64_t x = 7, t[_META_MAX + 1];
        int r;

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (char) ('a' + bench_xorshift(&x) % 26);
        root = open(job->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return work_fail(job, -errno, "opening the mount's root");
        t[0] = stats_now_ns();
        r = meta_create(job, root, data);
        t[1] = stats_now_ns();
        if (r >= 0)
                r = meta_stat(job, root);
        t[2] = stats_now_ns();
        if (r >= 0)
                r = meta_read(job, root, data);
        t[3] = stats_now_ns();
        if (r >= 0)
                r = meta_delete(job, root);
        t[4] = stats_now_ns();
        if (r < 0)
                return r;
        for (int i = 0; i < _META_MAX; i++)
                job->result->phase_ns[i] = t[i + 1] - t[i];
        job->result->n_done = job->count;
        job->result->ns = t[_META_MAX] - t[0];
        return 0;
}

/* GNU tar as the user would run it (owners and modes of the archive not kept: a FAT stick
 * has none), then syncfs; the tree is removed afterwards, untimed. */
static int job_unpack(WorkJob *job) {
        _cleanup_free_ char *dir = in_mount(job, "unpacked");
        uint64_t t0 = stats_now_ns();
        int status;
        pid_t pid;

        if (mkdir(dir, 0755) < 0)
                return work_fail(job, -errno, "mkdir");
        pid = fork();
        if (pid < 0)
                return work_fail(job, -errno, "fork");
        if (pid == 0) {
                execl("/usr/bin/tar", "tar", "-x", "-m", "--no-same-owner",
                      "--no-same-permissions", "-f", job->tarball, "-C", dir, (char *) NULL);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return work_fail(job, -errno, "waitpid");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return work_fail(job, -EIO, "tar -x");
        if (sync_mount(job) < 0)
                return -EIO;
        job->result->ns = stats_now_ns() - t0;
        pid = fork();
        if (pid == 0) {
                execl("/bin/rm", "rm", "-rf", dir, (char *) NULL);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
                return work_fail(job, -EIO, "rm -rf of the unpacked tree");
        return sync_mount(job);
}

/* ---- the caller --------------------------------------------------------------------------- */

static int work_run(WorkJob *job) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_close_ int source_fd = -EBADF;
        uint64_t t_call;
        int r;

        r = harness_sd_bus_connect(&bus);
        if (r < 0)
                return work_fail(job, r, "connecting to the bus");
        source_fd = open(job->source, (job->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
        if (source_fd < 0)
                return work_fail(job, -errno, job->source);
        if (job->kind == WORK_MOUNT)
                return job_mount_cycles(job, bus, source_fd);

        t_call = stats_now_ns();
        r = mount_attach(job, bus, source_fd, &reply);
        if (r >= 0) {
                switch (job->kind) {
                case WORK_READ:
                        r = job_read(job, t_call);
                        break;
                case WORK_RANDOM:
                        r = job_random(job);
                        break;
                case WORK_WRITE:
                        r = job_write(job);
                        break;
                case WORK_META:
                        r = job_meta(job);
                        break;
                case WORK_UNPACK:
                        r = job_unpack(job);
                        break;
                default:
                        r = work_fail(job, -EINVAL, "unknown job");
                }
        }
        if (reply)
                mount_release(job, &reply);
        return r;
}

int work_main(void *userdata) {
        WorkJob *job = userdata;
        int r;

        r = work_run(job);
        __atomic_store_n(&job->result->done, 1, __ATOMIC_RELEASE);
        return r < 0 ? 1 : 0;
}
