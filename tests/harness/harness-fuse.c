/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A FUSE filesystem serving one image whose reads can be held at a gate, served by a
 * process of its own (harness-fuse.h). */
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness-fuse.h"
#include "harness-private.h"
#include "harness.h"
#include "macro.h"

#define FUSECTL_DIR "/sys/fs/fuse/connections"
#define FUSECTL_MAGIC 0x65735543
#define IMAGE_NAME "image"
/* Enough threads that every reader the tests hold at the gate has one, with some left
 * for the getattr/open/statfs requests that must still be answered meanwhile. */
#define MAX_THREADS 64
/* The kernel's PF_KTHREAD, in /proc/PID/stat's flags field. */
#define PF_KTHREAD 0x00200000u

/* How long harness_fuse_free() waits for the server to end after the abort. */
#define SERVER_EXIT_MS 10000

/* The gates and counters, in memory shared by the test process and the server process
 * (MAP_SHARED), under a process-shared mutex. */
typedef struct FuseShared {
        pthread_mutex_t lock; /* protects what follows */
        pthread_cond_t changed; /* CLOCK_MONOTONIC */
        HarnessFuseGate gate;
        bool stopping;     /* free() releases every waiting read for good */
        unsigned n_waiting;
        unsigned n_served;
        pid_t flush_tgid;  /* flushes from this process wait; 0: anybody's, -1: nobody's */
        bool flush_children; /* and from its children */
        unsigned n_flush_waiting;
} FuseShared;

struct HarnessFuse {
        char *mountpoint;
        char *image_path;
        char *abort_path;  /* /sys/fs/fuse/connections/N/abort */
        dev_t dev;         /* the FUSE filesystem's device number */
        pid_t server;      /* the server process, 0 once reaped */
        bool aborted;
        FuseShared *shared;

        /* The server process's own: */
        char *data;        /* the image's contents */
        size_t size;
};

/* The instances alive, so that a test returning without freeing one cannot leave a
 * server thread behind at exit. Only touched by the test's main thread. */
static GList *alive;
static pid_t alive_pid;

/* At exit, before harness_teardown() (registered after it, so called before it), and only
 * in the process that made them (a forked caller has copies it must not touch). */
static void fuse_free_alive(void) {
        if (getpid() != alive_pid)
                return;
        while (alive)
                harness_fuse_free(alive->data);
}

/* Whether pid is a kernel thread (a loop device's worker): pid 0, or PF_KTHREAD set. */
static bool pid_is_kernel_thread(pid_t pid) {
        g_autofree char *path = NULL, *stat = NULL;
        unsigned long flags = 0;
        const char *p;

        if (pid <= 0)
                return true;
        path = g_strdup_printf("/proc/%d/stat", (int) pid);
        if (!g_file_get_contents(path, &stat, NULL, NULL))
                return false;
        p = strrchr(stat, ')');
        /* ") state ppid pgrp session tty_nr tpgid flags" */
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
                return false;
        return (flags & PF_KTHREAD) != 0;
}

static HarnessFuse *current_fuse(void) {
        return fuse_get_context()->private_data;
}

static void *fuse_cb_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
        /* Every read must reach us: no page cache, no cached attributes that could hide a
         * hung server from the daemon's fstat(). */
        cfg->direct_io = 1;
        cfg->kernel_cache = 0;
        cfg->attr_timeout = 0;
        cfg->entry_timeout = 0;
        return current_fuse();
}

static void metadata_gate_wait(HarnessFuse *f) {
        pthread_mutex_lock(&f->shared->lock);
        if (f->shared->gate == HARNESS_FUSE_GATE_METADATA && !f->shared->stopping) {
                f->shared->n_waiting++;
                pthread_cond_broadcast(&f->shared->changed);
                while (f->shared->gate == HARNESS_FUSE_GATE_METADATA && !f->shared->stopping)
                        pthread_cond_wait(&f->shared->changed, &f->shared->lock);
                f->shared->n_waiting--;
                pthread_cond_broadcast(&f->shared->changed);
        }
        pthread_mutex_unlock(&f->shared->lock);
}

static int fuse_cb_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
        HarnessFuse *f = current_fuse();

        if (streq(path, "/" IMAGE_NAME))
                metadata_gate_wait(f);

        memset(st, 0, sizeof(*st));
        if (streq(path, "/")) {
                st->st_mode = S_IFDIR | 0755;
                st->st_nlink = 2;
                return 0;
        }
        if (streq(path, "/" IMAGE_NAME)) {
                st->st_mode = S_IFREG | 0666;
                st->st_nlink = 1;
                st->st_size = (off_t) f->size;
                st->st_blocks = (blkcnt_t) ((f->size + 511) / 512);
                return 0;
        }
        return -ENOENT;
}

static int fuse_cb_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                           struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
        if (!streq(path, "/"))
                return -ENOTDIR;
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        fill(buf, IMAGE_NAME, NULL, 0, 0);
        return 0;
}

static int fuse_cb_open(const char *path, struct fuse_file_info *fi) {
        if (!streq(path, "/" IMAGE_NAME))
                return -ENOENT;
        fi->direct_io = 1;
        fi->keep_cache = 0;
        return 0;
}

static bool gate_holds(const HarnessFuse *f, bool kernel) {
        if (f->shared->stopping)
                return false;
        return f->shared->gate == HARNESS_FUSE_GATE_ALL || (f->shared->gate == HARNESS_FUSE_GATE_DEVICE && kernel);
}

static int fuse_cb_read(const char *path, char *buf, size_t size, off_t off,
                        struct fuse_file_info *fi) {
        HarnessFuse *f = current_fuse();
        bool kernel = pid_is_kernel_thread(fuse_get_context()->pid);
        size_t n = 0;

        pthread_mutex_lock(&f->shared->lock);
        if (gate_holds(f, kernel)) {
                f->shared->n_waiting++;
                pthread_cond_broadcast(&f->shared->changed);
                while (gate_holds(f, kernel))
                        pthread_cond_wait(&f->shared->changed, &f->shared->lock);
                f->shared->n_waiting--;
        }
        if (off >= 0 && (size_t) off < f->size) {
                n = MIN(size, f->size - (size_t) off);
                memcpy(buf, f->data + off, n);
        }
        f->shared->n_served++;
        pthread_cond_broadcast(&f->shared->changed);
        pthread_mutex_unlock(&f->shared->lock);
        return (int) n;
}

static int fuse_cb_write(const char *path, const char *buf, size_t size, off_t off,
                         struct fuse_file_info *fi) {
        HarnessFuse *f = current_fuse();
        size_t n = 0;

        /* The image keeps its size: a filesystem never writes past its end. */
        pthread_mutex_lock(&f->shared->lock);
        if (off >= 0 && (size_t) off < f->size) {
                n = MIN(size, f->size - (size_t) off);
                memcpy(f->data + off, buf, n);
        }
        pthread_mutex_unlock(&f->shared->lock);
        return n > 0 || size == 0 ? (int) n : -ENOSPC;
}

static int fuse_cb_statfs(const char *path, struct statvfs *sv) {
        metadata_gate_wait(current_fuse());
        memset(sv, 0, sizeof(*sv));
        sv->f_bsize = sv->f_frsize = 4096;
        sv->f_namemax = 255;
        return 0;
}

/* A field ("Tgid:", "PPid:") of /proc/<tid>/status; 0 when it cannot be read. */
static pid_t status_pid(pid_t tid, const char *field) {
        g_autofree char *path = g_strdup_printf("/proc/%d/status", (int) tid);
        g_autofree char *status = NULL;
        g_autofree char *key = g_strdup_printf("\n%s", field);
        const char *p;

        if (!g_file_get_contents(path, &status, NULL, NULL))
                return 0;
        p = strstr(status, key);
        return p ? (pid_t) strtol(p + strlen(key), NULL, 10) : 0;
}

/* Whether a flush from thread tid waits: tid is of the process flush_tgid or (with
 * flush_children) of one of its children (a daemon's workers), or everybody's wait. */
static bool flush_held(const HarnessFuse *f, pid_t tid) {
        pid_t tgid;

        if (f->shared->stopping || f->shared->flush_tgid < 0)
                return false;
        if (f->shared->flush_tgid == 0)
                return true;
        tgid = status_pid(tid, "Tgid:");
        return tgid == f->shared->flush_tgid ||
               (f->shared->flush_children && tgid > 0 && status_pid(tgid, "PPid:") == f->shared->flush_tgid);
}

/* Every close() of the file sends a flush; a held one is what a FUSE server that never
 * answers the daemon looks like (the closer waits, uninterruptibly). */
static int fuse_cb_flush(const char *path, struct fuse_file_info *fi) {
        HarnessFuse *f = current_fuse();
        pid_t tid = fuse_get_context()->pid;

        pthread_mutex_lock(&f->shared->lock);
        if (flush_held(f, tid)) {
                f->shared->n_flush_waiting++;
                pthread_cond_broadcast(&f->shared->changed);
                while (flush_held(f, tid))
                        pthread_cond_wait(&f->shared->changed, &f->shared->lock);
                f->shared->n_flush_waiting--;
                pthread_cond_broadcast(&f->shared->changed);
        }
        pthread_mutex_unlock(&f->shared->lock);
        return 0;
}

static const struct fuse_operations fuse_ops = {
        .init = fuse_cb_init,
        .getattr = fuse_cb_getattr,
        .readdir = fuse_cb_readdir,
        .open = fuse_cb_open,
        .read = fuse_cb_read,
        .write = fuse_cb_write,
        .statfs = fuse_cb_statfs,
        .flush = fuse_cb_flush,
};

/* fusectl is where connections can be aborted; mounted in the private namespace only. */
static int fusectl_ensure(void) {
        struct statfs sfs;

        if (statfs(FUSECTL_DIR, &sfs) == 0 && (uint64_t) sfs.f_type == FUSECTL_MAGIC)
                return 0;
        if (mount("fusectl", FUSECTL_DIR, "fusectl", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
                int r = -errno;

                harness_log("Cannot mount fusectl on %s: %s", FUSECTL_DIR, strerror(-r));
                return r;
        }
        return 0;
}

/* The connection's directory is named after the kernel's dev_t of the superblock. */
static int connection_abort_path(const char *mountpoint, dev_t *ret_dev, char **ret) {
        struct stat st;
        unsigned kdev;

        if (stat(mountpoint, &st) < 0)
                return -errno;
        kdev = (major(st.st_dev) << 20) | minor(st.st_dev);
        *ret = g_strdup_printf(FUSECTL_DIR "/%u/abort", kdev);
        *ret_dev = st.st_dev;
        return 0;
}

/* ---- the server process ------------------------------------------------------------------ */

/* Mounts and serves until the connection is aborted; reports to ready_fd ("1" once
 * mounted) and never returns. A process of its own, forked while the test process has no
 * other thread: a caller the test process forks later must not inherit a lock (the
 * allocator's, GLib's) that a server thread held at that moment. */
static _noreturn_ void server_main(HarnessFuse *f, pid_t parent, int ready_fd) {
        char *argv[] = { (char *) "harness-fuse", (char *) "-o",
                         (char *) "allow_other,default_permissions,fsname=harness-fuse,"
                                  "subtype=harness",
                         NULL };
        struct fuse_args args = FUSE_ARGS_INIT(3, argv);
        struct fuse_loop_config *config;
        struct fuse *fuse;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(EXIT_FAILURE);
        /* Hold nothing of the test process's (its loop devices, images, bus connection). */
        if (dup3(ready_fd, 3, O_CLOEXEC) < 0 || close_range(4, ~0U, 0) < 0)
                _exit(EXIT_FAILURE);
        ready_fd = 3;

        fuse = fuse_new(&args, &fuse_ops, sizeof(fuse_ops), f);
        fuse_opt_free_args(&args);
        if (!fuse) {
                harness_log("fuse_new() failed");
                _exit(EXIT_FAILURE);
        }
        if (fuse_mount(fuse, f->mountpoint) < 0) {
                harness_log("Cannot mount FUSE on %s", f->mountpoint);
                _exit(EXIT_FAILURE);
        }
        /* The test process serves nothing: it may stat() the mount (which waits for the
         * INIT answer) once told, and the loop below answers. */
        if (write(ready_fd, "1", 1) != 1)
                _exit(EXIT_FAILURE);
        close(ready_fd);

        config = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(config, MAX_THREADS);
        fuse_loop_cfg_set_idle_threads(config, 4);
        (void) fuse_loop_mt(fuse, config);
        /* Ends when the test process aborts the connection (harness_fuse_free()), which
         * also makes libfuse skip the unmount: the test process unmounts. */
        _exit(EXIT_SUCCESS);
}

static FuseShared *shared_new(void) {
        pthread_mutexattr_t ma;
        pthread_condattr_t ca;
        FuseShared *sh;

        sh = mmap(NULL, sizeof(FuseShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                  -1, 0);
        if (sh == MAP_FAILED)
                return NULL;
        pthread_mutexattr_init(&ma);
        pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
        pthread_mutex_init(&sh->lock, &ma);
        pthread_mutexattr_destroy(&ma);
        pthread_condattr_init(&ca);
        pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&sh->changed, &ca);
        pthread_condattr_destroy(&ca);
        sh->flush_tgid = -1;
        return sh;
}

/* Waits until the server process has ended, at most timeout_ms (then kills it). */
static void server_reap(HarnessFuse *f, int timeout_ms) {
        int pidfd, status;

        if (f->server <= 0)
                return;
        pidfd = (int) syscall(SYS_pidfd_open, f->server, 0);
        if (pidfd >= 0) {
                struct pollfd p = { .fd = pidfd, .events = POLLIN };

                if (poll(&p, 1, timeout_ms) == 0) {
                        harness_log("The FUSE server %d did not end within %d ms; killing it",
                                    (int) f->server, timeout_ms);
                        (void) kill(f->server, SIGKILL);
                }
                close(pidfd);
        } else
                (void) kill(f->server, SIGKILL);
        while (waitpid(f->server, &status, 0) < 0 && errno == EINTR)
                ;
        f->server = 0;
}

static int fuse_start(HarnessFuse *f) {
        int ready[2], r;
        char c = 0;
        pid_t parent = getpid();

        if (pipe2(ready, O_CLOEXEC) < 0)
                return -errno;
        fflush(stdout);
        fflush(stderr);
        f->server = fork();
        if (f->server < 0) {
                r = -errno;
                f->server = 0;
                close(ready[0]);
                close(ready[1]);
                return r;
        }
        if (f->server == 0)
                server_main(f, parent, ready[1]);
        close(ready[1]);
        /* The server's copy of the image is its own; the test process needs none. */
        g_clear_pointer(&f->data, g_free);
        while ((r = (int) read(ready[0], &c, 1)) < 0 && errno == EINTR)
                ;
        close(ready[0]);
        if (r != 1 || c != '1') {
                server_reap(f, SERVER_EXIT_MS);
                harness_log("The FUSE server did not mount %s", f->mountpoint);
                return -EIO;
        }
        r = connection_abort_path(f->mountpoint, &f->dev, &f->abort_path);
        if (r < 0)
                harness_log("Cannot find the FUSE connection of %s: %s", f->mountpoint,
                            strerror(-r));
        return r;
}

int harness_fuse_new(const char *image, HarnessFuse **ret) {
        static unsigned counter;
        g_autoptr(GError) error = NULL;
        HarnessFuse *f;
        int r;

        r = fusectl_ensure();
        if (r < 0)
                return r;
        if (alive_pid != getpid()) {
                alive_pid = getpid();
                atexit(fuse_free_alive);
        }

        f = g_new0(HarnessFuse, 1);
        f->shared = shared_new();
        if (!f->shared) {
                r = -errno;
                harness_log("Cannot map the FUSE server's shared state: %s", strerror(-r));
                harness_fuse_free(f);
                return r;
        }
        if (!g_file_get_contents(image, &f->data, &f->size, &error)) {
                harness_log("Cannot read %s: %s", image, error->message);
                harness_fuse_free(f);
                return -EIO;
        }
        f->mountpoint = g_strdup_printf("%s/fuse/%d-%u", harness_tmpdir(), (int) getpid(), counter++);
        f->image_path = g_build_filename(f->mountpoint, IMAGE_NAME, NULL);
        if (g_mkdir_with_parents(f->mountpoint, 0755) < 0) {
                r = -errno;
                harness_log("Cannot create %s: %s", f->mountpoint, strerror(-r));
                harness_fuse_free(f);
                return r;
        }
        r = fuse_start(f);
        if (r < 0) {
                harness_fuse_free(f);
                return r;
        }
        alive = g_list_prepend(alive, f);
        *ret = f;
        return 0;
}

const char *harness_fuse_image_path(HarnessFuse *f) {
        return f->image_path;
}

void harness_fuse_set_gate(HarnessFuse *f, HarnessFuseGate gate) {
        pthread_mutex_lock(&f->shared->lock);
        f->shared->gate = gate;
        pthread_cond_broadcast(&f->shared->changed);
        pthread_mutex_unlock(&f->shared->lock);
}

void harness_fuse_hold_flush(HarnessFuse *f, pid_t tgid, bool children) {
        pthread_mutex_lock(&f->shared->lock);
        f->shared->flush_tgid = tgid;
        f->shared->flush_children = children;
        pthread_cond_broadcast(&f->shared->changed);
        pthread_mutex_unlock(&f->shared->lock);
}

/* Waits until *count >= n, at most timeout_ms: 0 or -ETIMEDOUT (logged, naming what). */
static int wait_count(HarnessFuse *f, const unsigned *count, unsigned n, int timeout_ms,
                      const char *what) {
        struct timespec deadline;
        int r = 0;

        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&f->shared->lock);
        while (*count < n)
                if (pthread_cond_timedwait(&f->shared->changed, &f->shared->lock, &deadline) ==
                    ETIMEDOUT) {
                        r = *count >= n ? 0 : -ETIMEDOUT;
                        break;
                }
        if (r < 0)
                harness_log("%u of %u %s wait at the FUSE gate after %d ms", *count, n, what,
                            timeout_ms);
        pthread_mutex_unlock(&f->shared->lock);
        return r;
}

/* A counter, read under the lock. */
static unsigned read_count(HarnessFuse *f, const unsigned *count) {
        unsigned n;

        pthread_mutex_lock(&f->shared->lock);
        n = *count;
        pthread_mutex_unlock(&f->shared->lock);
        return n;
}

int harness_fuse_wait_flush_waiting(HarnessFuse *f, unsigned n, int timeout_ms) {
        return wait_count(f, &f->shared->n_flush_waiting, n, timeout_ms, "flushes");
}

unsigned harness_fuse_n_flush_waiting(HarnessFuse *f) {
        return read_count(f, &f->shared->n_flush_waiting);
}

unsigned harness_fuse_n_waiting(HarnessFuse *f) {
        return read_count(f, &f->shared->n_waiting);
}

unsigned harness_fuse_n_served(HarnessFuse *f) {
        return read_count(f, &f->shared->n_served);
}

int harness_fuse_wait_waiting(HarnessFuse *f, unsigned n, int timeout_ms) {
        return wait_count(f, &f->shared->n_waiting, n, timeout_ms, "reads");
}

int harness_fuse_count_loop_devices(HarnessFuse *f) {
        g_autoptr(GDir) dir = g_dir_open("/sys/block", 0, NULL);
        const char *name;
        int n = 0;

        if (!dir)
                return -errno;
        while ((name = g_dir_read_name(dir))) {
                g_autofree char *device = NULL;
                struct loop_info64 info = {};
                _cleanup_close_ int fd = -EBADF;

                if (!g_str_has_prefix(name, "loop"))
                        continue;
                device = g_strdup_printf("/dev/%s", name);
                fd = open(device, O_RDONLY | O_CLOEXEC);
                /* Unbound devices answer ENXIO. */
                if (fd < 0 || ioctl(fd, LOOP_GET_STATUS64, &info) < 0)
                        continue;
                if ((dev_t) info.lo_device == f->dev)
                        n++;
        }
        return n;
}

int harness_fuse_abort(HarnessFuse *f) {
        int fd, r = 0;

        if (f->aborted || !f->abort_path)
                return 0;
        fd = open(f->abort_path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "1", 1) != 1) {
                r = -errno;
                harness_log("Cannot abort the FUSE connection (%s): %s", f->abort_path,
                            strerror(-r));
        } else
                f->aborted = true;
        safe_close(fd);
        return r;
}

HarnessFuse *harness_fuse_free(HarnessFuse *f) {
        if (!f)
                return NULL;
        alive = g_list_remove(alive, f);

        /* Release our own handlers first, then fail every request still in the kernel: the
         * server loop ends when its /dev/fuse read says the connection is gone. */
        if (f->shared) {
                pthread_mutex_lock(&f->shared->lock);
                f->shared->stopping = true;
                pthread_cond_broadcast(&f->shared->changed);
                pthread_mutex_unlock(&f->shared->lock);
        }
        if (f->server > 0) {
                (void) harness_fuse_abort(f);
                server_reap(f, SERVER_EXIT_MS);
                /* libfuse skips the unmount when the device reports an error, which an
                 * aborted connection does: unmount it here (lazily, a loop device may
                 * still hold the file). */
                if (umount2(f->mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL)
                        harness_log("Cannot unmount %s: %s", f->mountpoint, strerror(errno));
        }
        if (f->mountpoint)
                (void) rmdir(f->mountpoint);

        if (f->shared) {
                pthread_mutex_destroy(&f->shared->lock);
                pthread_cond_destroy(&f->shared->changed);
                munmap(f->shared, sizeof(FuseShared));
        }
        g_free(f->mountpoint);
        g_free(f->image_path);
        g_free(f->abort_path);
        g_free(f->data);
        g_free(f);
        return NULL;
}
