/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting a sandboxed userspace filesystem driver on a FUSE mount the daemon made (see
 * fusedriver.h for the stages). The sandbox is sandbox.c's, with what a driver needs
 * beyond a checker: it outlives the worker that starts it (no parent death signal, its own
 * session, SIGPIPE ignored so that the worker closing its output pipe does not kill it),
 * has no timeout once it answered FUSE_INIT, may write files of any size through the
 * source fd (RLIMIT_FSIZE applies to every write position, so the checker's 1 MiB limit
 * would fail writes at large offsets with EFBIG), may not call the mount system calls,
 * and keeps exactly the FUSE connection (fd 4), the source (fd 5) and stdio. Its /dev
 * holds null, zero, full, random, urandom and a symlink /dev/fd -> /proc/self/fd, so that
 * a driver that stat()s its source path before opening it sees the source; the open()
 * itself is answered by the preload shim (fuse-shim.c).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/param.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "fusedriver.h"
#include "kernel-compat.h"
#include "procfs.h"
#include "sandbox.h"
#include "time-util.h"

#define FUSEDRIVER_SHIM_PATH USERMOUNT_LIBEXECDIR "/usermount-fuse-shim.so"
#define FUSEDRIVER_OUTPUT_MAX 4096
/* Where the driver finds its fds (sandbox_fds() puts the kept fds at 4, 5, ...). */
#define FUSEDRIVER_CONN_FD 4
#define FUSEDRIVER_SOURCE_FD 5
#define FUSEDRIVER_SOURCE "/dev/fd/5"
/* The shim comes as fd 6 and is preloaded through /proc: its path need not be visible in
 * the sandbox (a build tree below /tmp is not: the sandbox has a /tmp of its own). The
 * shim closes fd 6 as it loads, so the driver keeps only its two fds. */
#define FUSEDRIVER_SHIM_FD 6
#define FUSEDRIVER_SHIM_PRELOAD "LD_PRELOAD=/proc/self/fd/6"
/* libfuse 2 and fuse-lite lstat() their mount point and want an empty directory, fuse-lite
 * one the user owns; they mount nothing there (the shim answers mount()). An empty
 * directory of the driver's uid in the sandbox's private /tmp. */
#define FUSEDRIVER_MOUNTPOINT "/tmp/mnt"
/* The last step of the sandbox: where the kernel refuses a uid another task runs as. */
#define FUSEDRIVER_EXEC_STEP "running the driver"

/* ---- the superblock ----------------------------------------------------------------- */

/* fsopen("fuse") .. fsmount(): a detached mount of a fresh superblock on conn_fd. No
 * allow_other: only the caller's uid may use the mount; the kernel checks permissions
 * (default_permissions), so a driver cannot grant more than the modes say. */
static int fuse_superblock(const FuseDriverSpec *spec, int conn_fd, int *ret_mount_fd) {
        _cleanup_close_ int fsfd = -EBADF;
        char fd_s[16], uid_s[16], gid_s[16];
        const struct {
                const char *key, *value;
        } opts[] = {
                { "fd", fd_s },
                { "rootmode", "40000" },
                { "user_id", uid_s },
                { "group_id", gid_s },
                { "default_permissions", NULL },
                { "subtype", spec->driver->name },
                { "source", spec->source_name ?: "usermount" },
        };
        uint64_t attr;
        int mfd;

        snprintf(fd_s, sizeof(fd_s), "%d", conn_fd);
        snprintf(uid_s, sizeof(uid_s), "%u", (unsigned) spec->caller_uid);
        snprintf(gid_s, sizeof(gid_s), "%u", (unsigned) spec->caller_gid);
        fsfd = fsopen("fuse", FSOPEN_CLOEXEC);
        if (fsfd < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(opts); i++) {
                int r = opts[i].value ? fsconfig(fsfd, FSCONFIG_SET_STRING, opts[i].key,
                                                 opts[i].value, 0)
                                      : fsconfig(fsfd, FSCONFIG_SET_FLAG, opts[i].key, NULL, 0);
                if (r < 0)
                        return -errno;
        }
        if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return -errno;
        /* nodev and nosuid whatever the caller asked: a driver is not trusted with either. */
        attr = spec->attr_set | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID |
               (spec->read_only ? MOUNT_ATTR_RDONLY : 0);
        mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned) attr);
        if (mfd < 0)
                return -errno;
        *ret_mount_fd = mfd;
        return 0;
}

/* ---- the driver's command line and environment --------------------------------------- */

typedef struct DriverExec {
        char *argv[16];
        char *envp[10];
        char options[256];
        char fuse_options[256]; /* "USERMOUNT_FUSE_OPTIONS=..." */
} DriverExec;

static int driver_exec_build(const FuseDriverSpec *spec, DriverExec *x) {
        const FuseDriver *d = spec->driver;
        const char *mountpoint = d->generation == FUSE_GENERATION_LIBFUSE3
                                         ? "/dev/fd/4"
                                         : FUSEDRIVER_MOUNTPOINT;
        size_t n = 0, o = 0;
        int w;

        w = snprintf(x->options, sizeof(x->options), "%s",
                     spec->read_only ? "ro" : d->rw_option);
        o = (size_t) MAX(w, 0);
        /* Types with owners: libfuse's own uid=/gid= options of its high-level API, which
         * every driver here uses, show every file as the caller's. */
        if (d->ownerless || spec->files_as_caller)
                o += (size_t) snprintf(x->options + o, sizeof(x->options) - o, ",uid=%u,gid=%u",
                                       (unsigned) spec->caller_uid, (unsigned) spec->caller_gid);
        if (spec->files_as_caller && d->as_caller_options)
                o += (size_t) snprintf(x->options + o, sizeof(x->options) - o, ",%s",
                                       d->as_caller_options);
        if (spec->offset > 0)
                o += (size_t) snprintf(x->options + o, sizeof(x->options) - o,
                                       ",offset=%" PRIu64, spec->offset);
        if (d->extra_options)
                o += (size_t) snprintf(x->options + o, sizeof(x->options) - o, ",%s",
                                       d->extra_options);
        if (o >= sizeof(x->options))
                return -E2BIG;

        for (const char *const *a = d->argv; *a; a++) {
                if (n + 1 >= ELEMENTSOF(x->argv))
                        return -E2BIG;
                if (streq(*a, "{source}"))
                        x->argv[n++] = (char *) FUSEDRIVER_SOURCE;
                else if (streq(*a, "{mountpoint}"))
                        x->argv[n++] = (char *) mountpoint;
                else if (streq(*a, "{options}"))
                        x->argv[n++] = x->options;
                else
                        x->argv[n++] = (char *) *a;
        }
        x->argv[n] = NULL;

        n = 0;
        /* An empty shim_path: no shim (tests of the sandbox with programs of their own). */
        if (!spec->shim_path || spec->shim_path[0]) {
                x->envp[n++] = (char *) FUSEDRIVER_SHIM_PRELOAD;
                x->envp[n++] = (char *) "USERMOUNT_FUSE_SHIM_FD=6";
        }
        x->envp[n++] = (char *) "USERMOUNT_FUSE_FD=4";
        x->envp[n++] = (char *) "USERMOUNT_FUSE_SOURCE=" FUSEDRIVER_SOURCE;
        x->envp[n++] = (char *) "USERMOUNT_FUSE_SOURCE_FD=5";
        if (d->fuse_options) {
                w = snprintf(x->fuse_options, sizeof(x->fuse_options),
                             "USERMOUNT_FUSE_OPTIONS=%s", d->fuse_options);
                if (w < 0 || (size_t) w >= sizeof(x->fuse_options))
                        return -E2BIG;
                x->envp[n++] = x->fuse_options;
        }
        x->envp[n++] = (char *) "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
        x->envp[n++] = (char *) "LANG=C";
        x->envp[n] = NULL;
        return 0;
}

/* ---- the sandbox (child side) ------------------------------------------------------- */

/*
 * The limits of a driver: files of any size (see the top), 64 fds (a driver uses a
 * handful: stdio, the two fds, /dev/null, /proc files), and the spec's memory, tasks and
 * CPU time (FUSEDRIVER_*_DEFAULT when it names none). The driver is one process (seccomp
 * refuses it a second, sandbox.c) with a uid of its own, so RLIMIT_AS bounds all its
 * memory, RLIMIT_NPROC all its threads (libfuse's multi-threaded loop starts at most 10
 * workers) and RLIMIT_CPU (when DriverCPUSec= sets one) all its CPU time; past that
 * limit the kernel ends it (SIGXCPU, then SIGKILL), and its mount with it. Measured peaks (VmPeak) are
 * 150-700 MiB, nearly all of it reserved thread stacks (8 MiB each) and per-thread malloc
 * arenas, not memory in use. Its exec proves its uid unused (nproc_exclusive, sandbox.h).
 */
static SandboxLimits driver_limits(const FuseDriverSpec *spec, bool shim) {
        return (SandboxLimits) {
                .fsize = RLIM_INFINITY,
                .nofile = 64,
                .nproc = spec->tasks_max ?: FUSEDRIVER_TASKS_DEFAULT,
                .as = spec->memory_max ?: FUSEDRIVER_MEMORY_DEFAULT,
                .cpu = spec->cpu_sec ?: RLIM_INFINITY,
                /* The shim raises the soft limit again; without it (tests' own programs)
                 * the uid's claim is all that keeps it the driver's. */
                .nproc_exclusive = shim,
        };
}

/* In the sandbox's init (the clone3() child, or a stub's): what does not depend on the
 * request, for a driver that runs as *(const uid_t *) userdata. No allocations. */
static int driver_setup(const void *userdata, const char **ret_step) {
        const SandboxMounts mounts = {
                .dev_fd_link = true,
                .own_dir = FUSEDRIVER_MOUNTPOINT,
                .own_uid = *(const uid_t *) userdata,
        };
        sigset_t none;

        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        /* The worker's signal dispositions are not the driver's; SIGPIPE is ignored so
         * that it survives the worker closing the output pipe after the start. */
        for (int sig = 1; sig < NSIG; sig++)
                (void) signal(sig, sig == SIGPIPE ? SIG_IGN : SIG_DFL);
        /* Its own session: a terminal's signals to the worker's group are not its. */
        *ret_step = "session";
        if (setsid() < 0)
                return -errno;
        return sandbox_mounts(&mounts, ret_step);
}

int fusedriver_stub_start(uid_t driver_uid, SandboxStub *ret) {
        return sandbox_stub_start(driver_setup, &driver_uid, ret);
}

/* The rest of the driver's sandbox (sandbox_exec()), its fds at 4 (the connection), 5 (the
 * source), then the shim (6, FUSEDRIVER_SHIM_FD), the image's claim and the uid's lock,
 * each if there is one, in keep[] (5 entries). */
static SandboxExec driver_exec_of(const FuseDriverSpec *spec, const DriverExec *x, int conn_fd,
                                  int source_fd, int shim_fd, int out_fd, int err_fd,
                                  int *keep) {
        const int kept[] = { conn_fd, source_fd, shim_fd, spec->claim_fd, spec->uid_lock_fd };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(kept); i++)
                if (kept[i] >= 0)
                        keep[n++] = kept[i];
        return (SandboxExec) {
                .out_fd = out_fd,
                .err_fd = err_fd,
                .keep = keep,
                .n_keep = n,
                .limits = driver_limits(spec, shim_fd >= 0),
                .uid = spec->driver_uid,
                .gid = (gid_t) spec->driver_uid,
                .driver = true,
                .path = spec->driver->path,
                .argv = x->argv,
                .envp = x->envp,
                .exec_step = FUSEDRIVER_EXEC_STEP,
        };
}

/* ---- waiting for FUSE_INIT ----------------------------------------------------------- */

/*
 * The thread that stats the mount's root: the kernel holds the request until the driver
 * answered FUSE_INIT, or the connection is gone. Without allow_other only the caller's
 * uid and gid may use the mount (the kernel refuses root at once with EACCES), so the
 * thread takes the caller's ids first, with the raw system calls: they change the calling
 * thread's credentials only (the C library's wrappers change every thread's). The thread
 * ends right after, and its credentials with it.
 */
typedef struct InitWait {
        int mount_fd;
        int done_fd; /* eventfd, written when the statx returned */
        uid_t uid;
        gid_t gid;
        int error;   /* 0 or the errno of the setresgid/setresuid/statx */
} InitWait;

static void *init_wait_thread(void *p) {
        InitWait *w = p;
        struct statx stx;
        uint64_t one = 1;

        if (syscall(SYS_setresgid, w->gid, w->gid, w->gid) < 0 ||
            syscall(SYS_setresuid, w->uid, w->uid, w->uid) < 0 ||
            statx(w->mount_fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_TYPE, &stx) < 0)
                w->error = errno;
        (void) !write(w->done_fd, &one, sizeof(one));
        return NULL;
}

typedef struct DriverStart {
        bool answered, exited, timed_out;
        int init_error;
        siginfo_t status;
        SandboxFailure failure;
        char output[FUSEDRIVER_OUTPUT_MAX + 1];
        size_t output_len;
} DriverStart;

static bool read_output(int fd, DriverStart *s) {
        return sandbox_read_output(fd, s->output, FUSEDRIVER_OUTPUT_MAX, &s->output_len);
}

/* Until the driver answered FUSE_INIT, exited, or the deadline passed. */
static void start_wait(int pidfd, int out_fd, int done_fd, uint64_t timeout_usec,
                       DriverStart *s) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        bool open = true;

        while (!s->answered && !s->exited) {
                struct pollfd p[3] = {
                        { .fd = open ? out_fd : -1, .events = POLLIN },
                        { .fd = pidfd, .events = POLLIN },
                        { .fd = done_fd, .events = POLLIN },
                };
                /* The deadline passed, or it cannot wait: stopped rather than hang. */
                if (poll_until(p, ELEMENTSOF(p), deadline) <= 0) {
                        s->timed_out = true;
                        return;
                }
                if (p[0].revents)
                        open = read_output(out_fd, s);
                if (p[1].revents)
                        s->exited = true;
                if (p[2].revents)
                        s->answered = true;
        }
}

/* Kills the driver (and with it its PID namespace) and reaps it. */
static void driver_stop(int pidfd, DriverStart *s) {
        (void) sandbox_reap(pidfd, true, &s->status);
}

/* The first meaningful lines of the output, joined with "; ", escaped, into buf. */
static void output_summary(const FuseDriver *d, const DriverStart *s, char *buf, size_t n) {
        sandbox_output_summary(s->output, d->quiet_prefixes, buf, n);
}

static int start_verdict(const FuseDriverSpec *spec, const DriverStart *s, UmError *error) {
        const char *path = spec->driver->path;
        char summary[320], how[48];

        /* The kernel's check of the uid (nproc_exclusive): the caller claims another. */
        if (s->failure.error == EAGAIN && streq(s->failure.step, FUSEDRIVER_EXEC_STEP))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EUSERS,
                                    "Could not start the filesystem driver %s: uid %u, its "
                                    "own, is in use by another process.",
                                    path, (unsigned) spec->driver_uid);
        if (s->failure.error != 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, s->failure.error,
                                    "Could not start the filesystem driver %s (%s): %s.", path,
                                    s->failure.step, strerror(s->failure.error));
        if (s->timed_out)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ETIMEDOUT,
                                    "The filesystem driver %s did not answer within %" PRIu64
                                    " ms and was stopped.",
                                    path, spec->timeout_usec / 1000);
        output_summary(spec->driver, s, summary, sizeof(summary));
        if (!s->exited)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EIO,
                                    "The filesystem driver %s failed to serve the mount (%s): "
                                    "%s",
                                    path, strerror(s->init_error), summary);
        if (s->status.si_code == CLD_EXITED)
                snprintf(how, sizeof(how), "exit status %d", s->status.si_status);
        else
                snprintf(how, sizeof(how), "killed by signal %d", s->status.si_status);
        return um_error_set(error, UM_ERROR_KIND_FAILED, EIO,
                            "The filesystem driver %s exited while starting (%s): %s", path,
                            how, summary);
}

/* ---- fusedriver_mount() -------------------------------------------------------------- */

static int spec_check(const FuseDriverSpec *spec, UmError *error) {
        const FuseDriver *d = spec ? spec->driver : NULL;
        char esc[64];

        if (!d || !d->path || d->path[0] != '/' || !spec->fstype ||
            !strv_contains(d->fstypes, spec->fstype))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "No installed filesystem driver serves %s.",
                                    um_escape(spec ? spec->fstype : NULL, esc, sizeof(esc)));
        if (spec->driver_uid == 0 || spec->driver_uid == (uid_t) -1 ||
            spec->driver_uid == spec->caller_uid || spec->timeout_usec == 0 ||
            spec->source_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "The filesystem driver needs a source, a uid of its own "
                                    "(not 0, not the caller's) and a timeout.");
        if (spec->offset > 0 && !d->has_offset)
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EOPNOTSUPP,
                                    "The filesystem driver %s cannot mount at an offset.",
                                    d->path);
        if (!spec->read_only && !d->writable)
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EROFS,
                                    "The filesystem driver %s can only mount read-only.",
                                    d->path);
        return 0;
}

/* The source the driver gets: spec's fd, or a read-only reopen of it for a read-only
 * mount, so that not even a compromised driver can write. *ret_fd is -EBADF when spec's
 * fd is used as is. */
static int source_prepare(const FuseDriverSpec *spec, int *ret_fd, UmError *error) {
        char path[64];
        int flags = fcntl(spec->source_fd, F_GETFL), fd;

        if (flags < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "The source is not an open file.");
        if (!spec->read_only && (flags & O_ACCMODE) != O_RDWR)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EROFS,
                                    "The source was opened read-only; mount it read-only.");
        *ret_fd = -EBADF;
        if (!spec->read_only || (flags & O_ACCMODE) == O_RDONLY)
                return 0;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", spec->source_fd);
        fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not reopen the source read-only: %s.",
                                    strerror(errno));
        *ret_fd = fd;
        return 0;
}

int fusedriver_mount(const FuseDriverSpec *spec, int *ret_mount_fd, pid_t *ret_pid,
                     int *ret_pidfd, uint64_t *ret_start_time, int *ret_conn_fd,
                     UmError *error) {
        _cleanup_close_ int ro_source = -EBADF, conn_fd = -EBADF, mount_fd = -EBADF;
        _cleanup_close_ int out_r = -EBADF, out_w = -EBADF, err_r = -EBADF, err_w = -EBADF;
        _cleanup_close_ int pidfd = -EBADF, done_fd = -EBADF, shim_fd = -EBADF;
        _cleanup_free_ DriverExec *x = NULL;
        _cleanup_free_ DriverStart *s = NULL;
        InitWait w = {};
        SandboxExec exec;
        int keep[5];
        pthread_t thread;
        uint64_t start_time = 0;
        bool joined = false;
        int p[2], r;
        pid_t pid;

        r = spec_check(spec, error);
        if (r < 0)
                return r;
        r = source_prepare(spec, &ro_source, error);
        if (r < 0)
                return r;
        x = calloc(1, sizeof(*x));
        s = calloc(1, sizeof(*s));
        if (!x || !s)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "Out of memory.");
        r = driver_exec_build(spec, x);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "The command line of the filesystem driver is too long.");

        if (!spec->shim_path || spec->shim_path[0])
                shim_fd = open(spec->shim_path ?: FUSEDRIVER_SHIM_PATH, O_RDONLY | O_CLOEXEC);
        if (shim_fd < 0 && (!spec->shim_path || spec->shim_path[0]))
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not open the drivers' preload library %s: %s.",
                                    spec->shim_path ?: FUSEDRIVER_SHIM_PATH, strerror(errno));
        conn_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (conn_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not open /dev/fuse: %s.", strerror(errno));
        r = fuse_superblock(spec, conn_fd, &mount_fd);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not make the FUSE mount: %s.", strerror(-r));

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        out_r = p[0];
        out_w = p[1];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        err_r = p[0];
        err_w = p[1];
        done_fd = eventfd(0, EFD_CLOEXEC);
        if (done_fd < 0)
                return -errno;

        exec = driver_exec_of(spec, x, conn_fd, ro_source >= 0 ? ro_source : spec->source_fd,
                              shim_fd, out_w, err_w, keep);
        /* A stub made ahead for this uid runs it, unless it is gone (it is stopped then,
         * and the sandbox made here instead). */
        if (spec->stub && sandbox_stub_alive(spec->stub) &&
            sandbox_stub_exec(spec->stub, &exec) >= 0) {
                pid = spec->stub->pid;
                pidfd = TAKE_FD(spec->stub->pidfd);
                *spec->stub = SANDBOX_STUB_NULL;
        } else {
                if (spec->stub)
                        sandbox_stub_stop(spec->stub);
                pid = sandbox_clone(&pidfd);
                if (pid < 0)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                            "Could not start the sandbox of the filesystem "
                                            "driver: %s.", strerror(errno));
                if (pid == 0) {
                        const char *step = "setup";
                        int k = driver_setup(&spec->driver_uid, &step);

                        if (k < 0)
                                sandbox_fail(err_w, k, step);
                        sandbox_exec(&exec);
                }
        }
        out_w = safe_close(out_w);
        err_w = safe_close(err_w);

        w = (InitWait) {
                .mount_fd = mount_fd,
                .done_fd = done_fd,
                .uid = spec->caller_uid,
                .gid = spec->caller_gid,
        };
        r = pthread_create(&thread, NULL, init_wait_thread, &w);
        if (r != 0) {
                driver_stop(pidfd, s);
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "Could not wait for the filesystem driver: %s.", strerror(r));
        }
        start_wait(pidfd, out_r, done_fd, spec->timeout_usec, s);
        if (s->answered) {
                (void) pthread_join(thread, NULL);
                joined = true;
                s->init_error = w.error;
        }
        if (s->answered && s->init_error == 0 && proc_start_time(pid, &start_time) >= 0) {
                if (ret_conn_fd) {
                        *ret_conn_fd = fcntl(conn_fd, F_DUPFD_CLOEXEC, 3);
                        if (*ret_conn_fd < 0) {
                                r = -errno;
                                driver_stop(pidfd, s);
                                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                                    "Could not keep the FUSE connection: %s.",
                                                    strerror(-r));
                        }
                }
                *ret_mount_fd = TAKE_FD(mount_fd);
                *ret_pid = pid;
                *ret_pidfd = TAKE_FD(pidfd);
                *ret_start_time = start_time;
                return 0;
        }

        /* Failed: the driver goes, then the connection (our copy is the last one), which
         * ends the statx if it still waits. */
        driver_stop(pidfd, s);
        conn_fd = safe_close(conn_fd);
        if (!joined)
                (void) pthread_join(thread, NULL);
        s->init_error = w.error;
        while (read_output(out_r, s))
                ;
        sandbox_read_failure(err_r, &s->failure);
        return start_verdict(spec, s, error);
}
