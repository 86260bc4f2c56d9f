/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --container=PID: finding a container's namespaces and root from the host, and attaching
 * or detaching a mount at a path inside it from a child that joins them (container.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "container.h"
#include "fs-util.h"
#include "macro.h"
#include "output.h"
#include "kernel-compat.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

void container_done(Container *c) {
        c->pidfd = safe_close(c->pidfd);
        c->userns_fd = safe_close(c->userns_fd);
        c->mntns_fd = safe_close(c->mntns_fd);
        c->root_fd = safe_close(c->root_fd);
}

int container_parse_pid(const char *s, pid_t *ret) {
        unsigned long v = 0;
        char *end = NULL;

        if (!isempty(s) && *s >= '0' && *s <= '9') {
                errno = 0;
                v = strtoul(s, &end, 10);
        }
        if (v == 0 || errno != 0 || *end != 0 || v > INT_MAX) {
                _cleanup_free_ char *e = output_escape(s);

                log_error("--container needs the PID of a process in the container, not '%s'.",
                          strempty(e));
                return -EINVAL;
        }
        *ret = (pid_t) v;
        return 0;
}

int container_check_target(const char *target) {
        _cleanup_free_ char *e = output_escape(target);

        if (isempty(target) || target[0] != '/') {
                log_error("With --container, TARGET must be an absolute path inside the "
                          "container, such as /mnt, not '%s'.", strempty(e));
                return -EINVAL;
        }
        if (!output_utf8_is_valid(target)) {
                log_error("TARGET %s is not valid UTF-8.", strempty(e));
                return -EINVAL;
        }
        return 0;
}

/* The namespace of type (CLONE_NEWUSER or CLONE_NEWNS) of the process behind pidfd. */
static int open_namespace(const Container *c, int type) {
        char path[64];
        int fd;

        fd = ioctl(c->pidfd, type == CLONE_NEWUSER ? PIDFD_GET_USER_NAMESPACE :
                                                      PIDFD_GET_MNT_NAMESPACE, 0);
        if (fd >= 0)
                return fd;
        if (errno != ENOTTY && errno != EINVAL && errno != EOPNOTSUPP)
                return -errno;
        /* Before Linux 6.11: by /proc; the pidfd is checked to be alive afterwards. */
        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int) c->pid,
                 type == CLONE_NEWUSER ? "user" : "mnt");
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return fd < 0 ? -errno : fd;
}

static ExitStatus log_not_yours(pid_t pid) {
        log_error("Process %d is not yours: give the PID of a process in a container you "
                  "started, e.g. podman inspect -f '{{.State.Pid}}' NAME.", (int) pid);
        return EXIT_STATUS_REFUSED;
}

/* Checks that the namespaces in c are a container's of the caller's. */
static ExitStatus check_namespaces(const Container *c) {
        _cleanup_close_ int owner = -EBADF;
        uid_t owner_uid;
        int r;

        r = fd_path_same_inode(c->userns_fd, "/proc/self/ns/user");
        if (r < 0) {
                log_error_errno(r, "Cannot compare the user namespaces of process %d and "
                                "usermount: %m", (int) c->pid);
                return EXIT_STATUS_FAILURE;
        }
        if (r > 0) {
                log_error("Process %d is not in a container: it shares usermount's user "
                          "namespace. Give the PID of a process inside the container.",
                          (int) c->pid);
                return EXIT_STATUS_REFUSED;
        }
        if (ioctl(c->userns_fd, NS_GET_OWNER_UID, &owner_uid) < 0) {
                log_error_errno(-errno, "Cannot tell who owns the user namespace of process "
                                "%d: %m", (int) c->pid);
                return EXIT_STATUS_FAILURE;
        }
        if (owner_uid != getuid()) {
                log_error("The container of process %d is not yours: its user namespace "
                          "belongs to uid %u.", (int) c->pid, (unsigned) owner_uid);
                return EXIT_STATUS_REFUSED;
        }

        owner = ioctl(c->mntns_fd, NS_GET_USERNS);
        r = owner < 0 ? -errno : fd_same_inode(owner, c->userns_fd);
        if (r < 0 && r != -EPERM) {
                log_error_errno(r, "Cannot tell who owns the mount namespace of process %d: %m",
                                (int) c->pid);
                return EXIT_STATUS_FAILURE;
        }
        if (r <= 0) {
                log_error("The mount namespace of process %d is not owned by its user "
                          "namespace, so no process in the container may attach mounts "
                          "there; give the PID of the container's own process.", (int) c->pid);
                return EXIT_STATUS_REFUSED;
        }
        return EXIT_STATUS_OK;
}

ExitStatus container_open(pid_t pid, Container *ret) {
        _cleanup_(container_done) Container c = CONTAINER_NULL;
        char path[64];
        ExitStatus status;

        c.pid = pid;
        c.pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (c.pidfd < 0) {
                if (errno == ESRCH) {
                        log_error("There is no process %d; is the container running?", (int) pid);
                        return EXIT_STATUS_REFUSED;
                }
                log_error_errno(-errno, "Cannot open process %d: %m", (int) pid);
                return EXIT_STATUS_FAILURE;
        }

        c.userns_fd = open_namespace(&c, CLONE_NEWUSER);
        if (c.userns_fd == -EPERM || c.userns_fd == -EACCES)
                return log_not_yours(pid);
        if (c.userns_fd == -ESRCH || c.userns_fd == -ENOENT) {
                log_error("Process %d has exited; is the container running?", (int) pid);
                return EXIT_STATUS_REFUSED;
        }
        if (c.userns_fd < 0) {
                log_error_errno(c.userns_fd, "Cannot open the user namespace of process %d: %m",
                                (int) pid);
                return EXIT_STATUS_FAILURE;
        }
        c.mntns_fd = open_namespace(&c, CLONE_NEWNS);
        if (c.mntns_fd == -EPERM || c.mntns_fd == -EACCES)
                return log_not_yours(pid);
        if (c.mntns_fd < 0) {
                log_error_errno(c.mntns_fd, "Cannot open the mount namespace of process %d: %m",
                                (int) pid);
                return EXIT_STATUS_FAILURE;
        }

        status = check_namespaces(&c);
        if (status != EXIT_STATUS_OK)
                return status;

        /* The root is where TARGET is looked up; /proc/PID/root needs ptrace access. */
        snprintf(path, sizeof(path), "/proc/%d/root", (int) pid);
        c.root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (c.root_fd < 0 && (errno == EACCES || errno == EPERM))
                return log_not_yours(pid);
        if (c.root_fd < 0) {
                log_error_errno(-errno, "Cannot open the root directory of process %d: %m",
                                (int) pid);
                return EXIT_STATUS_FAILURE;
        }

        /* All of it was the process the pidfd names only if that one still runs: its PID
         * cannot have been reused while it does. */
        if (syscall(SYS_pidfd_send_signal, c.pidfd, 0, NULL, 0) < 0) {
                log_error("Process %d has exited; is the container running?", (int) pid);
                return EXIT_STATUS_REFUSED;
        }

        *ret = c;
        c = CONTAINER_NULL;
        return EXIT_STATUS_OK;
}

/* What the child did, and where it stopped, sent to the parent through a pipe. */
typedef enum ChildStage {
        CHILD_DONE,
        CHILD_SETNS,
        CHILD_OPEN,    /* opening TARGET in the container */
        CHILD_NOT_DIR,
        CHILD_NOT_EMPTY,
        CHILD_NOT_MOUNT,
        CHILD_NOT_OURS,
        CHILD_ATTACH,
        CHILD_UNMOUNT,
} ChildStage;

typedef struct ChildResult {
        int stage; /* ChildStage */
        int error; /* -errno */
} ChildResult;

typedef ChildResult (*ChildFunc)(const Container *c, const char *target, void *userdata);

/* Joins the user namespace first: that gives the capabilities which joining its mount
 * namespace requires (setns() into a user namespace needs a single-threaded process: the
 * child is one). */
static int child_join(const Container *c) {
        if (setns(c->userns_fd, CLONE_NEWUSER) < 0)
                return -errno;
        if (setns(c->mntns_fd, CLONE_NEWNS) < 0)
                return -errno;
        return 0;
}

/* TARGET below the container's root, no symbolic link followed, no magic link, no escape
 * by "..": RESOLVE_IN_ROOT treats the root fd as "/". */
static int child_open_target(const Container *c, const char *target, int flags) {
        struct open_how how = {
                .flags = (uint64_t) flags | O_CLOEXEC | O_DIRECTORY,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        fd = (int) syscall(SYS_openat2, c->root_fd, target, &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

/* TARGET, opened for reading if it is an empty directory, into *ret_fd. */
static ChildResult child_open_empty_dir(const Container *c, const char *target, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = child_open_target(c, target, O_RDONLY);
        if (fd < 0)
                return (ChildResult) { fd == -ENOTDIR ? CHILD_NOT_DIR : CHILD_OPEN, fd };
        r = dir_fd_is_empty(fd);
        if (r <= 0)
                return (ChildResult) { r == 0 ? CHILD_NOT_EMPTY : CHILD_OPEN, r ?: -ENOTEMPTY };
        *ret_fd = TAKE_FD(fd);
        return (ChildResult) { CHILD_DONE, 0 };
}

static ChildResult child_check(const Container *c, const char *target, void *userdata) {
        _cleanup_close_ int fd = -EBADF;

        return child_open_empty_dir(c, target, &fd);
}

static ChildResult child_attach(const Container *c, const char *target, void *userdata) {
        _cleanup_close_ int fd = -EBADF;
        int mount_fd = *(const int *) userdata;
        ChildResult r;

        r = child_open_empty_dir(c, target, &fd);
        if (r.stage != CHILD_DONE)
                return r;
        if (move_mount(mount_fd, "", fd, "",
                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return (ChildResult) { CHILD_ATTACH, -errno };
        return (ChildResult) { CHILD_DONE, 0 };
}

bool container_mountinfo_is_usermount(const char *line, uint64_t mount_id) {
        unsigned long long id;
        const char *sep;
        char fstype[64], source[64], root[3];

        /* The whole filesystem ("/" its root), as usermountd mounts it: a bind mount of a
         * directory of a disk (a podman volume, -v ~/data:/data) is not one of its mounts. */
        if (sscanf(line, "%llu %*u %*u:%*u %2s ", &id, root) != 2 || id != mount_id ||
            !streq(root, "/"))
                return false;
        sep = strstr(line, " - ");
        if (!sep || sscanf(sep, " - %63s %63s", fstype, source) != 2)
                return false;
        /* usermountd's kernel mounts are of its loop devices (images) or of block devices
         * polkit let the user have; its userspace drivers' are FUSE mounts it names
         * "usermount". */
        if (strncmp(source, "/dev/", 5) == 0 && !streq(fstype, "devtmpfs") &&
            strncmp(fstype, "fuse", 4) != 0)
                return true;
        return strncmp(fstype, "fuse", 4) == 0 && streq(source, "usermount");
}

/* Whether the mount mount_id is listed in mountinfo (an fd of /proc/PID/mountinfo) as one
 * of usermountd's. */
static int mount_is_usermount(int mountinfo_fd, uint64_t mount_id) {
        _cleanup_(fclosep) FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        int fd;

        fd = fcntl(mountinfo_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        f = fdopen(fd, "re");
        if (!f) {
                safe_close(fd);
                return -errno;
        }
        while (getline(&line, &size, f) > 0)
                if (container_mountinfo_is_usermount(line, mount_id))
                        return 1;
        return ferror(f) ? -EIO : 0;
}

typedef struct UnmountData {
        bool force;
        int mountinfo_fd;
} UnmountData;

/*
 * TARGET must be the root of a mount, with nosuid and nodev, as every usermount mount is,
 * of a loop or block device or usermountd's FUSE driver (the container's own /dev/shm is
 * nosuid and nodev too). It is then unmounted by its path, in a chroot to the container's
 * root: umount2() takes a path, and an fd of ours on the mount would make it busy.
 */
static ChildResult child_unmount(const Container *c, const char *target, void *userdata) {
        const UnmountData *u = userdata;
        _cleanup_close_ int fd = -EBADF;
        struct statvfs sv;
        struct statx stx;
        int r;

        fd = child_open_target(c, target, O_PATH);
        if (fd < 0)
                return (ChildResult) { fd == -ENOTDIR ? CHILD_NOT_DIR : CHILD_OPEN, fd };
        if (statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID, &stx) < 0)
                return (ChildResult) { CHILD_OPEN, -errno };
        if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
            !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
                return (ChildResult) { CHILD_NOT_MOUNT, -ENOTCONN };
        if (fstatvfs(fd, &sv) < 0)
                return (ChildResult) { CHILD_OPEN, -errno };
        if ((sv.f_flag & (ST_NOSUID | ST_NODEV)) != (ST_NOSUID | ST_NODEV))
                return (ChildResult) { CHILD_NOT_OURS, -EPERM };
        r = mount_is_usermount(u->mountinfo_fd, stx.stx_mnt_id);
        if (r <= 0)
                return (ChildResult) { r == 0 ? CHILD_NOT_OURS : CHILD_OPEN, r ?: -EPERM };
        fd = safe_close(fd);

        if (fchdir(c->root_fd) < 0 || chroot(".") < 0)
                return (ChildResult) { CHILD_SETNS, -errno };
        if (umount2(target, UMOUNT_NOFOLLOW | (u->force ? MNT_DETACH : 0)) < 0)
                return (ChildResult) { CHILD_UNMOUNT, -errno };
        return (ChildResult) { CHILD_DONE, 0 };
}

static int cmp_int(const void *a, const void *b) {
        return *(const int *) a - *(const int *) b;
}

/* Closes the fds first..last; one by one, up to the fd limit, where close_range() is
 * missing (before Linux 5.9) or refused by a seccomp filter: never left open. */
static void close_fds(unsigned first, unsigned last) {
        long max;

        if (close_range(first, last, 0) == 0)
                return;
        max = sysconf(_SC_OPEN_MAX);
        if (max < 0 || max > INT_MAX)
                max = INT_MAX;
        for (unsigned long fd = first; fd <= last && fd < (unsigned long) max; fd++)
                (void) close((int) fd);
}

/* Closes every fd from 3 up but those in keep (n of them, all >= 3). */
static void close_all_but(int *keep, size_t n) {
        unsigned first = 3;

        qsort(keep, n, sizeof(int), cmp_int);
        for (size_t i = 0; i < n; i++) {
                if ((unsigned) keep[i] > first)
                        close_fds(first, (unsigned) keep[i] - 1);
                first = (unsigned) keep[i] + 1;
        }
        close_fds(first, ~0U);
}

/*
 * Once the child is in the container's user namespace, the container's root holds
 * capabilities over its credentials: the child must not be something to ptrace (not
 * dumpable: its memory stays the host's) nor hold anything of the host's but what it
 * needs (the connection to the system bus above all), since the container is not trusted
 * with more than the mount it is given.
 */
static int child_harden(const Container *c, int extra_fd, int pipe_fd) {
        int keep[] = { c->userns_fd, c->mntns_fd, c->root_fd, pipe_fd, extra_fd };

        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return -errno;
        close_all_but(keep, ELEMENTSOF(keep) - (extra_fd < 0));
        return 0;
}

/* Runs func in a child in the container's namespaces; its result, or CHILD_SETNS.
 * extra_fd (or -1) is an fd func needs beside the container's. */
static ChildResult container_run(const Container *c, const char *target, ChildFunc func,
                                 void *userdata, int extra_fd) {
        ChildResult result = { CHILD_SETNS, -EIO };
        int pipefd[2], status;
        pid_t child;
        ssize_t n;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return (ChildResult) { CHILD_SETNS, -errno };
        fflush(NULL);
        child = fork();
        if (child < 0) {
                result.error = -errno;
                safe_close(pipefd[0]);
                safe_close(pipefd[1]);
                return result;
        }
        if (child == 0) {
                int r;

                safe_close(pipefd[0]);
                r = child_harden(c, extra_fd, pipefd[1]);
                if (r >= 0)
                        r = child_join(c);
                result = r < 0 ? (ChildResult) { CHILD_SETNS, r } : func(c, target, userdata);
                n = write(pipefd[1], &result, sizeof(result));
                _exit(n == sizeof(result) ? 0 : 1);
        }
        safe_close(pipefd[1]);
        do
                n = read(pipefd[0], &result, sizeof(result));
        while (n < 0 && errno == EINTR);
        safe_close(pipefd[0]);
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
                ;
        if (n != sizeof(result))
                return (ChildResult) { CHILD_SETNS, -EIO };
        return result;
}

static ExitStatus log_child_error(const Container *c, const char *target, ChildResult r) {
        _cleanup_free_ char *e = output_escape(target);
        int pid = (int) c->pid;

        switch (r.stage) {
        case CHILD_SETNS:
                log_error_errno(r.error, "Cannot enter the namespaces of process %d: %m", pid);
                return EXIT_STATUS_FAILURE;
        case CHILD_NOT_DIR:
                log_error("Target %s in the container of process %d is not a directory.",
                          strempty(e), pid);
                return EXIT_STATUS_TARGET;
        case CHILD_NOT_EMPTY:
                log_error("Target %s in the container of process %d is not empty; give an "
                          "empty directory.", strempty(e), pid);
                return EXIT_STATUS_TARGET;
        case CHILD_NOT_MOUNT:
                log_error("Nothing is mounted at %s in the container of process %d.",
                          strempty(e), pid);
                return EXIT_STATUS_NOT_MOUNTED;
        case CHILD_NOT_OURS:
                log_error("The mount at %s in the container of process %d is not one of "
                          "usermount's; use umount there.",
                          strempty(e), pid);
                return EXIT_STATUS_NOT_MOUNTED;
        case CHILD_OPEN:
                if (r.error == -ENOENT) {
                        log_error("Target %s does not exist in the container of process %d; "
                                  "create the directory there first.", strempty(e), pid);
                        return EXIT_STATUS_TARGET;
                }
                if (r.error == -ELOOP || r.error == -EXDEV) {
                        log_error("Target %s in the container of process %d is a symbolic "
                                  "link or has one in its path; give the real path.",
                                  strempty(e), pid);
                        return EXIT_STATUS_TARGET;
                }
                log_error_errno(r.error, "Cannot open target %s in the container of process "
                                "%d: %m", strempty(e), pid);
                return EXIT_STATUS_TARGET;
        case CHILD_ATTACH:
                log_error_errno(r.error, "Cannot attach the mount at %s in the container of "
                                "process %d: %m", strempty(e), pid);
                return EXIT_STATUS_TARGET;
        case CHILD_UNMOUNT:
                if (r.error == -EBUSY) {
                        log_error("The mount at %s in the container of process %d is busy; "
                                  "close what uses it, or use --force.", strempty(e), pid);
                        return EXIT_STATUS_BUSY;
                }
                log_error_errno(r.error, "Cannot unmount %s in the container of process %d: "
                                "%m", strempty(e), pid);
                return EXIT_STATUS_FAILURE;
        default:
                return EXIT_STATUS_FAILURE;
        }
}

ExitStatus container_check_target_dir(const Container *c, const char *target) {
        ChildResult r = container_run(c, target, child_check, NULL, -1);

        return r.stage == CHILD_DONE ? EXIT_STATUS_OK : log_child_error(c, target, r);
}

ExitStatus container_attach(const Container *c, int mount_fd, const char *target) {
        ChildResult r = container_run(c, target, child_attach, &mount_fd, mount_fd);

        return r.stage == CHILD_DONE ? EXIT_STATUS_OK : log_child_error(c, target, r);
}

ExitStatus container_unmount(const Container *c, const char *target, bool force) {
        _cleanup_close_ int mountinfo_fd = -EBADF;
        _cleanup_free_ char *e = NULL;
        char path[64];
        ChildResult r;

        /* The container's mounts as the host's /proc shows them: its own /proc may not show
         * the child, which is not in the container's PID namespace. */
        snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int) c->pid);
        mountinfo_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (mountinfo_fd < 0) {
                log_error_errno(-errno, "Cannot read the mounts of process %d: %m", (int) c->pid);
                return EXIT_STATUS_FAILURE;
        }
        r = container_run(c, target, child_unmount,
                          &(UnmountData) { .force = force, .mountinfo_fd = mountinfo_fd },
                          mountinfo_fd);

        if (r.stage != CHILD_DONE)
                return log_child_error(c, target, r);
        e = output_escape(target);
        printf("Unmounted %s in the container of process %d.\n", strempty(e), (int) c->pid);
        return EXIT_STATUS_OK;
}
