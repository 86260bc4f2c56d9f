/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount-fuse-shim.so: preloaded (LD_PRELOAD) into a userspace filesystem driver that
 * fusedriver.c starts in its sandbox, so that an unmodified driver serves a FUSE mount
 * the daemon made, on an image it cannot open itself.
 *
 * The driver runs as an unprivileged uid with no capabilities: it cannot open the caller's
 * image by a path (a reopen through /proc/self/fd/N checks the inode's permissions), it
 * has no /dev/fuse (its /dev holds no device node of interest) and it may not mount
 * (seccomp refuses the mount calls). The daemon hands it two fds instead: the FUSE
 * connection of the mount it made, and the source. This library answers, in the driver's
 * own process:
 *
 *  - open()/open64()/openat()/openat64()/__open_2()/__open64_2() of the agreed source path
 *    (USERMOUNT_FUSE_SOURCE, "/dev/fd/N") return a dup of fd N. O_RDWR or O_WRONLY on a
 *    read-only fd gives EROFS, so a driver that can fall back to read-only does, and
 *    others fail with a clear message. Imported by (nm -D): fuse2fs and libext2fs
 *    (open64, open, __open_2, __open64_2), mount.exfat-fuse (open), fusefat (open64),
 *    ntfs-3g and libntfs-3g (open, __open_2), squashfuse (open).
 *  - open*() of "/dev/fuse" returns a dup of the connection fd (USERMOUNT_FUSE_FD): what
 *    libfuse 2 (open64, from fuse_mount_sys()) and ntfs-3g's integrated fuse-lite (open)
 *    do before they mount.
 *  - mount() of a fuse type returns 0: libfuse 2 and fuse-lite then believe they mounted
 *    the connection they opened. umount()/umount2() return 0: the daemon owns the mount,
 *    and a driver that exits must not try to take it down (seccomp would refuse it
 *    anyway, with a confusing message).
 *  - realpath() of the source path returns it unchanged: the sandbox's /dev/fd is a symlink
 *    to /proc/self/fd (so that stat() of the path describes the source), and resolving
 *    it would give the image's host path, which the driver then cannot open. ntfs-3g
 *    canonicalizes its device (libntfs-3g: realpath, __realpath_chk).
 *  - getpwuid() of the driver's own uid returns "usermount-fuse" when the uid has no
 *    account (a uid taken from a range): mount.exfat-fuse and ntfs-3g look up their user
 *    name for the mount options fusermount would write into mtab, and exfat refuses to
 *    start without one.
 *  - mknod("/dev/fuse") returns 0: ntfs-3g creates the node when it is missing, and would
 *    log an error for a node it does not need.
 *  - fuse_main_real() (what fuse_main() calls in libfuse 2 and 3) gets the options of
 *    USERMOUNT_FUSE_OPTIONS appended as a last "-o": the driver table's cache settings
 *    (drivertable.c, CACHING), which then win over the driver's own defaults (libfuse
 *    keeps an option's last value), however much of libfuse's options the driver's own
 *    command line lets through (mount.exfat-fuse: none; fuse2fs appends attr_timeout=0
 *    after what it is given). fuse2fs, mount.exfat-fuse, fusefat (FUSE_2.6) and
 *    squashfuse (FUSE_3.0) import it; lowntfs-3g's fuse-lite does not, and takes its
 *    options on its command line.
 *  - fuse_daemonize() does not fork: mount.exfat-fuse has no foreground option (it runs
 *    in the foreground only with -d, which logs every request), and a driver that forks
 *    and exits leaves the sandbox's PID namespace without its init, which kills the
 *    forked driver too. libfuse 2 calls it through its PLT, so the preload wins.
 *
 * Why not _FUSE_COMMFD: that is libfuse's protocol with fusermount (the connection fd
 * sent over a socket named in the environment), and libfuse reads it only in
 * fuse_mount_fusermount(), after its own mount() failed with EPERM, and it would then
 * exec the setuid fusermount, which must not run in the sandbox. ntfs-3g's fuse-lite
 * only calls fusermount when its mount fails, which on Linux with a setuid ntfs-3g never
 * happens, and without a setuid helper it has nowhere to get an fd from. Answering
 * open("/dev/fuse") and mount() serves libfuse 2 and fuse-lite alike. libfuse 3
 * (squashfuse) needs none of this: a mount point "/dev/fd/N" makes it use fd N as the
 * connection without mounting; the shim still serves its open of the source.
 *
 * Without USERMOUNT_FUSE_FD in the environment every call goes to the C library
 * unchanged. This library is not a security boundary: the sandbox is. It only translates.
 */
/* The functions below are defined under their own names: no redirection of open() to
 * open64() (_FILE_OFFSET_BITS) and no fortified inline wrappers. */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHIM_EXPORT __attribute__((visibility("default")))

static int env_fd(const char *name) {
        const char *v = getenv(name);
        char *end;
        long n;

        if (!v || !*v)
                return -1;
        errno = 0;
        n = strtol(v, &end, 10);
        if (errno != 0 || *end || n < 0 || n > 65535)
                return -1;
        return (int) n;
}

static bool shim_active(void) {
        return env_fd("USERMOUNT_FUSE_FD") >= 0;
}

/* First thing, before the driver runs: the driver was started with this library as an fd
 * (fusedriver.c preloads it through /proc/self/fd), which is not needed once loaded; and
 * its threads' limit (RLIMIT_NPROC) has a soft value of 0 that made its exec prove its uid
 * unused (sandbox.h, nproc_exclusive), raised here to the hard one, which it may not pass. */
__attribute__((constructor)) static void shim_start(void) {
        int fd = env_fd("USERMOUNT_FUSE_SHIM_FD");
        struct rlimit rl;

        if (!shim_active())
                return;
        if (fd > 2)
                (void) close(fd);
        if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NPROC, &rl);
        }
}

/* A dup of the fd path stands for, >= 0; -1 with errno; -2 if path is not one of ours. */
static int shim_open(const char *path, int flags) {
        int fd, acc;

        if (!path || !shim_active())
                return -2;
        if (strcmp(path, "/dev/fuse") == 0)
                fd = env_fd("USERMOUNT_FUSE_FD");
        else {
                const char *src = getenv("USERMOUNT_FUSE_SOURCE");

                if (!src || strcmp(path, src) != 0)
                        return -2;
                fd = env_fd("USERMOUNT_FUSE_SOURCE_FD");
                if (fd < 0) {
                        errno = ENOENT;
                        return -1;
                }
                acc = fcntl(fd, F_GETFL);
                if (acc < 0)
                        return -1;
                if ((flags & O_ACCMODE) != O_RDONLY && (acc & O_ACCMODE) == O_RDONLY) {
                        errno = EROFS;
                        return -1;
                }
        }
        return fcntl(fd, (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

static mode_t shim_mode(int flags, va_list ap) {
        return (flags & (O_CREAT | __O_TMPFILE)) ? (mode_t) va_arg(ap, int) : 0;
}

#define SHIM_OPEN(name)                                                                    \
        SHIM_EXPORT int name(const char *path, int flags, ...) {                          \
                static open_fn next;                                                       \
                va_list ap;                                                                \
                mode_t mode;                                                               \
                int r = shim_open(path, flags);                                            \
                                                                                           \
                if (r != -2)                                                               \
                        return r;                                                          \
                va_start(ap, flags);                                                       \
                mode = shim_mode(flags, ap);                                               \
                va_end(ap);                                                                \
                if (!next)                                                                 \
                        next = (open_fn) dlsym(RTLD_NEXT, #name);                          \
                return next(path, flags, mode);                                            \
        }

#define SHIM_OPENAT(name)                                                                  \
        SHIM_EXPORT int name(int dir, const char *path, int flags, ...) {                 \
                static openat_fn next;                                                     \
                va_list ap;                                                                \
                mode_t mode;                                                               \
                int r = path[0] == '/' ? shim_open(path, flags) : -2;                      \
                                                                                           \
                if (r != -2)                                                               \
                        return r;                                                          \
                va_start(ap, flags);                                                       \
                mode = shim_mode(flags, ap);                                               \
                va_end(ap);                                                                \
                if (!next)                                                                 \
                        next = (openat_fn) dlsym(RTLD_NEXT, #name);                        \
                return next(dir, path, flags, mode);                                       \
        }

/* The fortified variants (_FORTIFY_SOURCE) take no mode: O_CREAT goes to open(). */
#define SHIM_OPEN_2(name, plain)                                                           \
        SHIM_EXPORT int name(const char *path, int flags) {                               \
                int r = shim_open(path, flags);                                            \
                                                                                           \
                if (r != -2)                                                               \
                        return r;                                                          \
                return plain(path, flags);                                                 \
        }

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);

SHIM_OPEN(open)
SHIM_OPEN(open64)
SHIM_OPENAT(openat)
SHIM_OPENAT(openat64)
SHIM_OPEN_2(__open_2, open)
SHIM_OPEN_2(__open64_2, open64)

static bool is_fuse_type(const char *type) {
        return type && (strncmp(type, "fuse", 4) == 0) &&
               (type[4] == 0 || type[4] == '.' || strncmp(type + 4, "blk", 3) == 0);
}

SHIM_EXPORT int mount(const char *source, const char *target, const char *type,
                      unsigned long flags, const void *data) {
        typedef int (*mount_fn)(const char *, const char *, const char *, unsigned long,
                                const void *);
        static mount_fn next;

        if (shim_active() && is_fuse_type(type))
                return 0;
        if (!next)
                next = (mount_fn) dlsym(RTLD_NEXT, "mount");
        return next(source, target, type, flags, data);
}

SHIM_EXPORT int umount2(const char *target, int flags) {
        typedef int (*umount2_fn)(const char *, int);
        static umount2_fn next;

        if (shim_active())
                return 0;
        if (!next)
                next = (umount2_fn) dlsym(RTLD_NEXT, "umount2");
        return next(target, flags);
}

SHIM_EXPORT int umount(const char *target) {
        return umount2(target, 0);
}

SHIM_EXPORT int mknod(const char *path, mode_t mode, dev_t dev) {
        typedef int (*mknod_fn)(const char *, mode_t, dev_t);
        static mknod_fn next;

        if (shim_active() && strcmp(path, "/dev/fuse") == 0)
                return 0;
        if (!next)
                next = (mknod_fn) dlsym(RTLD_NEXT, "mknod");
        return next(path, mode, dev);
}

/* libfuse 2's fuse_daemonize(foreground): what it does in the foreground, always. */
SHIM_EXPORT int fuse_daemonize(int foreground);
SHIM_EXPORT int fuse_daemonize(int foreground) {
        typedef int (*daemonize_fn)(int);
        static daemonize_fn next;

        if (!shim_active()) {
                if (!next)
                        next = (daemonize_fn) dlsym(RTLD_NEXT, "fuse_daemonize");
                return next ? next(foreground) : 0;
        }
        if (chdir("/") < 0)
                return -1;
        return 0;
}

/* libfuse's int fuse_main_real(int argc, char *argv[], const struct fuse_operations *op,
 * size_t op_size, void *user_data), the same in libfuse 2.6+ and 3. */
typedef int (*fuse_main_fn)(int, char **, const void *, size_t, void *);
SHIM_EXPORT int fuse_main_real(int argc, char *argv[], const void *op, size_t op_size,
                               void *user_data);
SHIM_EXPORT int fuse_main_real(int argc, char *argv[], const void *op, size_t op_size,
                               void *user_data) {
        /* The library's default version (FUSE_2.6, FUSE_3.0): the one the driver's
         * reference was bound to had there been no shim. */
        fuse_main_fn next = (fuse_main_fn) dlsym(RTLD_NEXT, "fuse_main_real");
        const char *extra = shim_active() ? getenv("USERMOUNT_FUSE_OPTIONS") : NULL;
        char **args;

        if (!next) {
                errno = ENOSYS;
                return 1;
        }
        if (!extra || !*extra || argc < 0)
                return next(argc, argv, op, op_size, user_data);
        args = calloc((size_t) argc + 3, sizeof(char *));
        if (!args)
                return 1;
        for (int i = 0; i < argc; i++)
                args[i] = argv[i];
        args[argc] = (char *) "-o";
        args[argc + 1] = (char *) extra;
        /* Not freed: libfuse may keep pointers into argv for as long as it runs. */
        return next(argc + 2, args, op, op_size, user_data);
}

static bool is_source(const char *path) {
        const char *src = getenv("USERMOUNT_FUSE_SOURCE");

        return shim_active() && path && src && strcmp(path, src) == 0;
}

SHIM_EXPORT char *realpath(const char *restrict path, char *restrict resolved) {
        typedef char *(*realpath_fn)(const char *, char *);
        static realpath_fn next;

        if (is_source(path)) {
                if (!resolved)
                        return strdup(path);
                return strcpy(resolved, path); /* PATH_MAX: the source path is short */
        }
        if (!next)
                next = (realpath_fn) dlsym(RTLD_NEXT, "realpath");
        return next(path, resolved);
}

char *__realpath_chk(const char *path, char *resolved, size_t resolved_len);
SHIM_EXPORT char *__realpath_chk(const char *path, char *resolved, size_t resolved_len) {
        typedef char *(*realpath_chk_fn)(const char *, char *, size_t);
        static realpath_chk_fn next;

        if (is_source(path)) {
                if (resolved_len <= strlen(path)) {
                        errno = ENAMETOOLONG;
                        return NULL;
                }
                return strcpy(resolved, path);
        }
        if (!next)
                next = (realpath_chk_fn) dlsym(RTLD_NEXT, "__realpath_chk");
        return next(path, resolved, resolved_len);
}

SHIM_EXPORT struct passwd *getpwuid(uid_t uid) {
        typedef struct passwd *(*getpwuid_fn)(uid_t);
        static getpwuid_fn next;
        static struct passwd pw;
        struct passwd *r;

        if (!next)
                next = (getpwuid_fn) dlsym(RTLD_NEXT, "getpwuid");
        r = next(uid);
        if (r || !shim_active() || uid != getuid())
                return r;
        pw = (struct passwd) {
                .pw_name = (char *) "usermount-fuse",
                .pw_passwd = (char *) "!",
                .pw_uid = uid,
                .pw_gid = getgid(),
                .pw_gecos = (char *) "",
                .pw_dir = (char *) "/",
                .pw_shell = (char *) "/usr/sbin/nologin",
        };
        return &pw;
}
