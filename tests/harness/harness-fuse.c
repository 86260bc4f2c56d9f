/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A FUSE filesystem serving one image whose reads can be held at a gate (harness-fuse.h). */
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
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

struct HarnessFuse {
        char *mountpoint;
        char *image_path;
        char *abort_path;  /* /sys/fs/fuse/connections/N/abort */
        dev_t dev;         /* the FUSE filesystem's device number */
        char *data;        /* the image's contents */
        size_t size;

        struct fuse *fuse;
        GThread *thread;
        bool mounted;
        bool aborted;

        GMutex lock;       /* protects what follows */
        GCond changed;
        HarnessFuseGate gate;
        bool stopping;     /* free() releases every waiting read for good */
        unsigned n_waiting;
        unsigned n_served;
        pid_t flush_tgid;  /* flushes from this process wait; 0: anybody's, -1: nobody's */
        bool flush_children; /* and from its children */
        unsigned n_flush_waiting;
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
        g_mutex_lock(&f->lock);
        if (f->gate == HARNESS_FUSE_GATE_METADATA && !f->stopping) {
                f->n_waiting++;
                g_cond_broadcast(&f->changed);
                while (f->gate == HARNESS_FUSE_GATE_METADATA && !f->stopping)
                        g_cond_wait(&f->changed, &f->lock);
                f->n_waiting--;
                g_cond_broadcast(&f->changed);
        }
        g_mutex_unlock(&f->lock);
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
        if (f->stopping)
                return false;
        return f->gate == HARNESS_FUSE_GATE_ALL || (f->gate == HARNESS_FUSE_GATE_DEVICE && kernel);
}

static int fuse_cb_read(const char *path, char *buf, size_t size, off_t off,
                        struct fuse_file_info *fi) {
        HarnessFuse *f = current_fuse();
        bool kernel = pid_is_kernel_thread(fuse_get_context()->pid);
        size_t n = 0;

        g_mutex_lock(&f->lock);
        if (gate_holds(f, kernel)) {
                f->n_waiting++;
                g_cond_broadcast(&f->changed);
                while (gate_holds(f, kernel))
                        g_cond_wait(&f->changed, &f->lock);
                f->n_waiting--;
        }
        if (off >= 0 && (size_t) off < f->size) {
                n = MIN(size, f->size - (size_t) off);
                memcpy(buf, f->data + off, n);
        }
        f->n_served++;
        g_cond_broadcast(&f->changed);
        g_mutex_unlock(&f->lock);
        return (int) n;
}

static int fuse_cb_write(const char *path, const char *buf, size_t size, off_t off,
                         struct fuse_file_info *fi) {
        HarnessFuse *f = current_fuse();
        size_t n = 0;

        /* The image keeps its size: a filesystem never writes past its end. */
        g_mutex_lock(&f->lock);
        if (off >= 0 && (size_t) off < f->size) {
                n = MIN(size, f->size - (size_t) off);
                memcpy(f->data + off, buf, n);
        }
        g_mutex_unlock(&f->lock);
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

        if (f->stopping || f->flush_tgid < 0)
                return false;
        if (f->flush_tgid == 0)
                return true;
        tgid = status_pid(tid, "Tgid:");
        return tgid == f->flush_tgid ||
               (f->flush_children && tgid > 0 && status_pid(tgid, "PPid:") == f->flush_tgid);
}

/* Every close() of the file sends a flush; a held one is what a FUSE server that never
 * answers the daemon looks like (the closer waits, uninterruptibly). */
static int fuse_cb_flush(const char *path, struct fuse_file_info *fi) {
        HarnessFuse *f = current_fuse();
        pid_t tid = fuse_get_context()->pid;

        g_mutex_lock(&f->lock);
        if (flush_held(f, tid)) {
                f->n_flush_waiting++;
                g_cond_broadcast(&f->changed);
                while (flush_held(f, tid))
                        g_cond_wait(&f->changed, &f->lock);
                f->n_flush_waiting--;
                g_cond_broadcast(&f->changed);
        }
        g_mutex_unlock(&f->lock);
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

static gpointer server_thread(gpointer userdata) {
        HarnessFuse *f = userdata;
        struct fuse_loop_config *config = fuse_loop_cfg_create();

        fuse_loop_cfg_set_max_threads(config, MAX_THREADS);
        fuse_loop_cfg_set_idle_threads(config, 4);
        (void) fuse_loop_mt(f->fuse, config);
        fuse_loop_cfg_destroy(config);
        return NULL;
}

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

static int fuse_start(HarnessFuse *f) {
        g_autofree char *opts = NULL;
        char *argv[] = { (char *) "harness-fuse", (char *) "-o", NULL, NULL };
        struct fuse_args args = FUSE_ARGS_INIT(3, argv);
        int r;

        opts = g_strdup("allow_other,default_permissions,fsname=harness-fuse,subtype=harness");
        argv[2] = opts;
        f->fuse = fuse_new(&args, &fuse_ops, sizeof(fuse_ops), f);
        fuse_opt_free_args(&args);
        if (!f->fuse) {
                harness_log("fuse_new() failed");
                return -EIO;
        }
        if (fuse_mount(f->fuse, f->mountpoint) < 0) {
                harness_log("Cannot mount FUSE on %s", f->mountpoint);
                return -EIO;
        }
        f->mounted = true;
        /* Serve before looking at the mount: even stat() waits for the INIT answer. */
        f->thread = g_thread_new("harness-fuse", server_thread, f);
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
        g_mutex_init(&f->lock);
        g_cond_init(&f->changed);
        f->flush_tgid = -1;
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
        g_mutex_lock(&f->lock);
        f->gate = gate;
        g_cond_broadcast(&f->changed);
        g_mutex_unlock(&f->lock);
}

void harness_fuse_hold_flush(HarnessFuse *f, pid_t tgid, bool children) {
        g_mutex_lock(&f->lock);
        f->flush_tgid = tgid;
        f->flush_children = children;
        g_cond_broadcast(&f->changed);
        g_mutex_unlock(&f->lock);
}

int harness_fuse_wait_flush_waiting(HarnessFuse *f, unsigned n, int timeout_ms) {
        gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * G_TIME_SPAN_MILLISECOND;
        int r = 0;

        g_mutex_lock(&f->lock);
        while (f->n_flush_waiting < n)
                if (!g_cond_wait_until(&f->changed, &f->lock, deadline)) {
                        r = f->n_flush_waiting >= n ? 0 : -ETIMEDOUT;
                        break;
                }
        if (r < 0)
                harness_log("%u of %u flushes wait at the FUSE gate after %d ms",
                            f->n_flush_waiting, n, timeout_ms);
        g_mutex_unlock(&f->lock);
        return r;
}

unsigned harness_fuse_n_flush_waiting(HarnessFuse *f) {
        unsigned n;

        g_mutex_lock(&f->lock);
        n = f->n_flush_waiting;
        g_mutex_unlock(&f->lock);
        return n;
}

unsigned harness_fuse_n_waiting(HarnessFuse *f) {
        unsigned n;

        g_mutex_lock(&f->lock);
        n = f->n_waiting;
        g_mutex_unlock(&f->lock);
        return n;
}

unsigned harness_fuse_n_served(HarnessFuse *f) {
        unsigned n;

        g_mutex_lock(&f->lock);
        n = f->n_served;
        g_mutex_unlock(&f->lock);
        return n;
}

int harness_fuse_wait_waiting(HarnessFuse *f, unsigned n, int timeout_ms) {
        gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * G_TIME_SPAN_MILLISECOND;
        int r = 0;

        g_mutex_lock(&f->lock);
        while (f->n_waiting < n)
                if (!g_cond_wait_until(&f->changed, &f->lock, deadline)) {
                        r = f->n_waiting >= n ? 0 : -ETIMEDOUT;
                        break;
                }
        if (r < 0)
                harness_log("%u of %u reads wait at the FUSE gate after %d ms", f->n_waiting, n,
                            timeout_ms);
        g_mutex_unlock(&f->lock);
        return r;
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
        g_mutex_lock(&f->lock);
        f->stopping = true;
        g_cond_broadcast(&f->changed);
        g_mutex_unlock(&f->lock);
        if (f->fuse)
                fuse_exit(f->fuse);
        (void) harness_fuse_abort(f);
        if (f->thread)
                g_thread_join(f->thread);
        if (f->mounted) {
                /* libfuse skips the unmount when the device reports an error, which an
                 * aborted connection does: unmount it ourselves (lazily, a loop device may
                 * still hold the file). */
                fuse_unmount(f->fuse);
                if (umount2(f->mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL)
                        harness_log("Cannot unmount %s: %s", f->mountpoint, strerror(errno));
        }
        if (f->fuse)
                fuse_destroy(f->fuse);
        if (f->mountpoint)
                (void) rmdir(f->mountpoint);

        g_mutex_clear(&f->lock);
        g_cond_clear(&f->changed);
        g_free(f->mountpoint);
        g_free(f->image_path);
        g_free(f->abort_path);
        g_free(f->data);
        g_free(f);
        return NULL;
}

