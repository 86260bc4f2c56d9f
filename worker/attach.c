/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Attaching a locked mount in the caller's mount namespace, and detaching it again. The
 * stages of attach_mount(), each a function below:
 *   check       the target string: absolute, canonical, not a system directory (pure)
 *   enter       /proc opened first; setns(pidfd, CLONE_NEWNS); the caller's root directory
 *               (/proc/<pid>/root) is where every path of the caller starts
 *   resolve     lookup_beneath(LOOKUP_NO_SYMLINKS) from that root, one component at a
 *               time (lookup.h: systemd's seccomp filters refuse openat2()); the fd is
 *               checked (directory, filesystem, owner, empty)
 *   or create   <media_root>/<user>/<name>: mkdirat() per name, EEXIST -> next suffix
 *   attach      move_mount(mount_fd -> target fd, F_EMPTY_PATH | T_EMPTY_PATH): the mount
 *               lands on exactly the directory that was checked, whatever the path says now
 * attach_detach() resolves the mount point the same way, checks that the mount there is
 * the registered one (unique mount id), and unmounts it.
 *
 * Decisions worth knowing:
 * - Paths are the caller's: they start at the caller's root directory, which is the root
 *   of its mount namespace unless it is chrooted. A chrooted caller therefore cannot place
 *   a mount outside its chroot (the sandbox that chrooted it stays a sandbox), and a
 *   mount point is reported as the caller sees it. Nothing is resolved by absolute path
 *   after setns(): /proc is reached through an fd opened before.
 * - The default place is only made for callers whose view of the file system only processes
 *   as privileged as the daemon can have shaped: a mount namespace owned by the daemon's
 *   user namespace, and no chroot. In a container or a chroot, a bind mount or the chroot
 *   itself could make <media_root> any root-owned directory of the host, and the daemon
 *   would create (and set permissions on) directories there; such callers pass a target.
 *   A namespace owned by the daemon's user namespace can still have been shaped for the
 *   caller by a setuid program ("bwrap --bind /etc /run/media"), so every directory on the
 *   way to <media_root>/<user> is also checked to be the very directory (st_dev, st_ino)
 *   the daemon finds at that path in its own view, before anything is made or changed in
 *   it. Mount ids are not compared: under its unit the daemon runs in a copy of the host's
 *   namespace, whose mounts have ids of their own; and which mount leads to a directory
 *   does not change which directory the daemon writes to.
 * - <media_root>/<user> is 0750 root:root with a POSIX ACL entry user:<uid>:r-x, written
 *   as the kernel's system.posix_acl_access xattr (no libacl needed). On a filesystem
 *   without ACLs its group becomes the user's primary group instead, which can be shared
 *   with other users on systems without per-user groups; the ACL is preferred for that.
 *   <media_root> and <media_root>/<user> stay when a mount goes; the per-mount directory
 *   is removed.
 * - A plain unmount cannot go through an fd: any reference the worker holds to the mount
 *   (an O_PATH fd, a working directory) makes umount2() see it busy. So attach_detach()
 *   pins the parent directory (working directory, resolved without symlinks), checks the
 *   mount id of the single name below it, and calls umount2(name, UMOUNT_NOFOLLOW) right
 *   after, then checks that the registered mount is the one that went. With force the
 *   lazy detach goes through /proc/self/fd/N of the verified fd, which pins the exact
 *   place. See detach_plain() for the window that remains.
 */
#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/xattr.h>

#include <grp.h>
#include <sys/fsuid.h>

#include "attach.h"
#include "nsenter.h"
#include "kernel-compat.h"
#include "fs-util.h"
#include "lookup.h"
#include "mountinfo.h"
#include "mountns.h"
#include "pathcheck.h"
#include "procfs.h"
#include "pseudofs.h"
#include "utf8.h"
#include "mountbuild.h"

#define NAME_MAX_BYTES MOUNTNAME_MAX
#define NAME_MAX_SUFFIX 100        /* "<name>-2" ... "<name>-100" */
#define MESSAGE_PATH_MAX 160       /* escaped path shown in an error sentence */

/*
 * Directories that are never a target, even when empty and owned by the caller (inside a
 * rootless container the caller owns all of them): hiding one of them breaks the system
 * or session that lives in that namespace. "/lib*" and "/usr/lib*" are matched by prefix.
 */
static const char *const system_directories[] = {
        "/",          "/bin",      "/boot",     "/dev",      "/etc",      "/home",
        "/media",     "/mnt",      "/opt",      "/proc",     "/root",     "/run",
        "/run/media", "/run/user", "/sbin",     "/srv",      "/sys",      "/tmp",
        "/usr",       "/usr/bin",  "/usr/local", "/usr/sbin", "/usr/share", "/var",
        "/var/lib",   "/var/tmp",
};


/* Where the worker stands once it is in the caller's mount namespace. */
typedef struct CallerView {
        int proc_self_fd;   /* /proc/<worker> of the daemon's procfs, opened before setns() */
        int daemon_root_fd; /* the daemon's own root directory, opened before setns() */
        int root_fd;        /* the caller's root directory, in its (now our) mount namespace */
        int status_fd;      /* /proc/<caller>/status, for the caller's groups */
} CallerView;

#define CALLER_VIEW_NULL                                                                \
        ((CallerView) { .proc_self_fd = -EBADF, .daemon_root_fd = -EBADF, .root_fd = -EBADF, \
                        .status_fd = -EBADF })

static void caller_view_done(CallerView *v) {
        v->proc_self_fd = safe_close(v->proc_self_fd);
        v->daemon_root_fd = safe_close(v->daemon_root_fd);
        v->root_fd = safe_close(v->root_fd);
        v->status_fd = safe_close(v->status_fd);
}

/* ---- pure checks ------------------------------------------------------------------- */

/* Absolute, no empty, "." or ".." component, no trailing '/', no control characters. */
static bool path_is_canonical(const char *path) {
        return path_check_canonical(path, PATH_MAX) == PATH_OK &&
               !path_has_control_characters(path);
}

static bool path_is_system_directory(const char *path) {
        for (size_t i = 0; i < ELEMENTSOF(system_directories); i++)
                if (streq(path, system_directories[i]))
                        return true;
        /* /lib, /lib64, /libx32, /usr/lib, /usr/libexec ... */
        return (strncmp(path, "/lib", 4) == 0 && !strchr(path + 1, '/')) ||
               (strncmp(path, "/usr/lib", 8) == 0 && !strchr(path + 5, '/'));
}

static const char *escape_path(const char *path, char buf[static MESSAGE_PATH_MAX]) {
        return um_escape(path, buf, MESSAGE_PATH_MAX);
}

int attach_check_target(const char *target, UmError *error) {
        char esc[MESSAGE_PATH_MAX];

        if (isempty(target) || !path_is_canonical(target))
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EINVAL,
                                    "the target \"%s\" is not usable: give an absolute path "
                                    "without \".\" or \"..\" components, \"//\" or a trailing "
                                    "\"/\"",
                                    escape_path(strempty(target), esc));
        if (path_is_system_directory(target))
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EPERM,
                                    "the target \"%s\" is a system directory; mount on an empty "
                                    "directory of your own instead",
                                    escape_path(target, esc));
        return 0;
}

/* ---- small fd helpers ---------------------------------------------------------------- */

/*
 * A directory below dirfd, reached without following any symlink (a trailing one fails
 * with ELOOP too) and without leaving dirfd; an absolute path counts from dirfd. See
 * lookup.h: openat2() is not used, systemd's seccomp filters refuse it.
 */
static int open_beneath(int dirfd, const char *path, int flags, LookupFlags extra) {
        return lookup_beneath(dirfd, path, flags | O_DIRECTORY, LOOKUP_NO_SYMLINKS | extra);
}

/* The fs type name of mount mnt_id in the current namespace, or -ENOSYS on old kernels. */
static int mount_fstype(uint64_t mnt_id, char *buf, size_t n) {
        _cleanup_free_ char *fstype = NULL;
        int r;

        r = mountinfo_fstype(mnt_id, &fstype);
        if (r == -EINVAL || r == -EOPNOTSUPP || r == -ENOSYS || r == -ENODATA)
                return -ENOSYS;
        if (r < 0)
                return r;
        snprintf(buf, n, "%s", fstype);
        return 0;
}

/* Mount id (as mountbuild_mount_id() gives it) and whether fd is the root of its mount;
 * owner_uid/owner_gid: who a userspace driver's FUSE mount lets in ((uid_t) -1: none;
 * mountbuild_mount_id_as()). The mask-less statx below is answered by FUSE for anyone. */
static int fd_mount_as(int fd, uid_t owner_uid, gid_t owner_gid, uint64_t *ret_id,
                       bool *ret_is_root) {
        struct statx stx = {};
        uint64_t id;
        int r;

        r = mountbuild_mount_id_as(fd, owner_uid, owner_gid, &id);
        if (r < 0)
                return r;
        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, &stx) < 0)
                return -errno;
        if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
                return -EOPNOTSUPP;
        *ret_id = id;
        *ret_is_root = stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
        return 0;
}

static int fd_mount(int fd, uint64_t *ret_id, bool *ret_is_root) {
        return fd_mount_as(fd, (uid_t) -1, (gid_t) -1, ret_id, ret_is_root);
}

/* ---- entering the caller's namespace ------------------------------------------------- */

static int caller_gone(UmError *error, const char *what) {
        return um_error_set(error, UM_ERROR_KIND_FAILED, ESRCH, "%s", what);
}

/* The pid of the process behind pidfd, in the daemon's pid namespace; -ESRCH if it is gone. */
static int pidfd_get_pid(int proc_self_fd, int pidfd, pid_t *ret) {
        char path[64], buf[1024], *p;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;
        long pid;

        snprintf(path, sizeof(path), "fdinfo/%d", pidfd);
        fd = openat(proc_self_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        p = strstr(buf, "\nPid:");
        if (!p)
                return -EBADF; /* not a pidfd */
        pid = strtol(p + 5, NULL, 10);
        if (pid <= 0)
                return -ESRCH; /* -1: exited; 0: in a pid namespace we cannot see */
        *ret = (pid_t) pid;
        return 0;
}

/*
 * Opens /proc, /proc/self and /proc/<caller> while still in the daemon's namespace, then
 * joins the caller's mount namespace and opens its root directory. The caller's pid is
 * read from the pidfd; setns() succeeding afterwards proves the caller was alive the
 * whole time, so /proc/<pid> was its directory and not a reused pid's.
 */
static int caller_enter(int pidfd, const char *gone, CallerView *ret, UmError *error) {
        _cleanup_close_ int proc_fd = -EBADF, self_fd = -EBADF, pid_fd = -EBADF, root_fd = -EBADF;
        _cleanup_close_ int daemon_root_fd = -EBADF;
        char pid_name[32];
        struct statfs sfs;
        pid_t pid = 0;
        int r;

        proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0 || fstatfs(proc_fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
                return um_error_set(error, UM_ERROR_KIND_FAILED, proc_fd < 0 ? errno : ENOENT,
                                    "/proc is not available to the daemon's worker");
        self_fd = openat(proc_fd, "self", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (self_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "/proc/self is not available to the daemon's worker");
        r = pidfd_get_pid(self_fd, pidfd, &pid);
        if (r == -ESRCH)
                return caller_gone(error, gone);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "could not identify the calling process: %s", strerror(-r));
        snprintf(pid_name, sizeof(pid_name), "%d", (int) pid);
        pid_fd = openat(proc_fd, pid_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (pid_fd < 0)
                return caller_gone(error, gone);
        /* The system's view of the file system, to compare the caller's with (media root). */
        daemon_root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (daemon_root_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not open the daemon's root directory");

        r = ns_enter(pidfd, CLONE_NEWNS, "the caller's mount namespace", error);
        if (r == -ESRCH) {
                *error = (UmError) {};
                return caller_gone(error, gone);
        }
        if (r < 0)
                return r;
        root_fd = openat(pid_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0) {
                if (errno == ENOENT || errno == ESRCH)
                        return caller_gone(error, gone);
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not open the caller's root directory: %s",
                                    strerror(errno));
        }
        /* Our working directory was the namespace's root; make it the caller's. */
        if (fchdir(root_fd) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not enter the caller's root directory");
        ret->status_fd = openat(pid_fd, "status", O_RDONLY | O_CLOEXEC);
        ret->proc_self_fd = TAKE_FD(self_fd);
        ret->daemon_root_fd = TAKE_FD(daemon_root_fd);
        ret->root_fd = TAKE_FD(root_fd);
        return 0;
}

static int current_mntns_id(const CallerView *v, uint64_t *ret, UmError *error) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t id = 0;

        fd = openat(v->proc_self_fd, "ns/mnt", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || ioctl(fd, NS_GET_MNTNS_ID, &id) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not get the id of the caller's mount namespace: %s",
                                    strerror(errno));
        *ret = id;
        return 0;
}

/*
 * Lazily detaches the mount whose root fd refers to, through /proc/self/fd/N: the lookup
 * jumps to exactly that place (and to whatever is mounted on top of it, which only a
 * process privileged in this namespace can have put there).
 */
static int detach_through_fd(const CallerView *v, int fd) {
        char path[32];
        int r = 0;

        snprintf(path, sizeof(path), "fd/%d", fd);
        if (fchdir(v->proc_self_fd) < 0)
                return -errno;
        if (umount2(path, MNT_DETACH) < 0)
                r = -errno;
        if (fchdir(v->root_fd) < 0 && r == 0)
                r = -errno;
        return r;
}

/* ---- checking a target --------------------------------------------------------------- */

/*
 * Nothing is mounted for a user on a kernel pseudo filesystem: their directories can be
 * owned by the user (/proc/<pid>, cgroup delegation) or are simply no place for media.
 */
static const char *refused_filesystem(const struct statfs *sfs, const char *fstype) {
        return pseudofs_name((uint64_t) sfs->f_type) ?: pseudofs_name_by_type(fstype);
}

static int check_target_filesystem(int fd, const char *esc, UmError *error) {
        char fstype[64] = "";
        const char *refused;
        struct statfs sfs;
        uint64_t mnt_id;
        bool is_root;
        int r;

        r = fstatfs(fd, &sfs) < 0 ? -errno : fd_mount(fd, &mnt_id, &is_root);
        if (r >= 0)
                r = mount_fstype(mnt_id, fstype, sizeof(fstype));
        if (r < 0 && r != -ENOSYS)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "could not examine the filesystem of the target \"%s\": %s",
                                    esc, strerror(-r));
        refused = refused_filesystem(&sfs, fstype);
        if (refused)
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EPERM,
                                    "the target \"%s\" is on a %s filesystem, where nothing may "
                                    "be mounted; pick an empty directory on a normal filesystem",
                                    esc, refused);
        return 0;
}

/* The fd must be an empty directory owned by uid, on a filesystem that takes mounts. */
static int check_target_fd(int fd, uid_t uid, const char *esc, UmError *error) {
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not examine the target \"%s\"", esc);
        if (!S_ISDIR(st.st_mode))
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, ENOTDIR,
                                    "the target \"%s\" is not a directory", esc);
        r = check_target_filesystem(fd, esc, error);
        if (r < 0)
                return r;
        if (st.st_uid != uid)
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EPERM,
                                    "the target \"%s\" is not owned by you (its owner is uid %u); "
                                    "mount on an empty directory you own",
                                    esc, (unsigned) st.st_uid);
        r = dir_fd_is_empty(fd);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "could not read the target \"%s\": %s", esc, strerror(-r));
        if (r == 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, ENOTEMPTY,
                                    "the target \"%s\" is not empty; mount on an empty directory",
                                    esc);
        return 0;
}

/* A media directory that cannot be used is the administrator's to fix, not the caller's. */
static int media_resolve_error(int r, const char *esc, UmError *error) {
        if (r == -ELOOP || r == -EXDEV || r == -ENOTDIR)
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, -r,
                                    "the media directory \"%s\" is a symbolic link, is reached "
                                    "through one, or is not a directory; an administrator has to "
                                    "fix it (or pass a target)",
                                    esc);
        return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                            "could not set up the media directory \"%s\": %s", esc, strerror(-r));
}

static int target_resolve_error(int r, const char *esc, UmError *error) {
        switch (r) {
        case -ENOENT:
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, ENOENT,
                                    "the target \"%s\" does not exist; create an empty "
                                    "directory there first",
                                    esc);
        case -ELOOP:
        case -EXDEV:
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, ELOOP,
                                    "the target \"%s\" is a symbolic link or is reached "
                                    "through one; give the real path of an empty directory",
                                    esc);
        case -ENOTDIR:
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, ENOTDIR,
                                    "the target \"%s\" is not a directory, or is reached through "
                                    "something that is not one",
                                    esc);
        case -EACCES:
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EACCES,
                                    "the target \"%s\" cannot be reached", esc);
        default:
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "could not look up the target \"%s\": %s", esc, strerror(-r));
        }
}

/*
 * The mounted filesystem's root replaces the target as others see it, typically as a
 * root-owned directory. In a directory others can write to (/tmp, /dev/shm, a shared
 * group directory) that would let a user plant a root-owned entry at a name others trust
 * (.X11-unix, .ICE-unix): refuse targets whose parent is writable by group or others. The
 * parent is checked on the fd the target is then looked up from.
 */
static int check_target_parent(int parent_fd, const char *esc, UmError *error) {
        struct stat st;

        if (fstat(parent_fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not examine the directory of the target \"%s\"", esc);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EPERM,
                                    "the target \"%s\" is in a directory that others can write "
                                    "to; mount below a directory only you can write",
                                    esc);
        return 0;
}

/* The target's parent directory (checked), the target in it (checked), and its name. */
typedef struct Target {
        int parent_fd;
        int fd;
        char name[NAME_MAX + 1];
} Target;

static void target_done(Target *t) {
        t->parent_fd = safe_close(t->parent_fd);
        t->fd = safe_close(t->fd);
}

static const char *path_split(const char *path, char *buf, size_t n);

static int open_target(const CallerView *v, const char *target, uid_t uid, Target *ret,
                       UmError *error) {
        _cleanup_(target_done) Target t = { .parent_fd = -EBADF, .fd = -EBADF };
        char esc[MESSAGE_PATH_MAX], parent[PATH_MAX];
        const char *name;
        int r;

        escape_path(target, esc);
        name = path_split(target, parent, sizeof(parent));
        if (strlen(name) >= sizeof(t.name))
                return target_resolve_error(-ENAMETOOLONG, esc, error);
        snprintf(t.name, sizeof(t.name), "%s", name);
        t.parent_fd = open_beneath(v->root_fd, parent, O_PATH, 0);
        if (t.parent_fd < 0)
                return target_resolve_error(t.parent_fd, esc, error);
        t.fd = open_beneath(t.parent_fd, t.name, O_PATH, 0);
        if (t.fd < 0)
                return target_resolve_error(t.fd, esc, error);
        r = check_target_fd(t.fd, uid, esc, error);
        if (r < 0)
                return r;
        r = check_target_parent(t.parent_fd, esc, error);
        if (r < 0)
                return r;
        *ret = t;
        t = (Target) { .parent_fd = -EBADF, .fd = -EBADF };
        return 0;
}

/* ---- the default place: <media_root>/<user>/<name> ----------------------------------- */

/*
 * Opens dirfd/name (one component, no symlink), creating it with mode first if it is
 * missing. A directory made here is opened with LOOKUP_NO_XDEV, so that something
 * mounted over it in between is never taken for it. *ret_made tells whether this call
 * created it.
 */
static int open_or_make_dir(int dirfd, const char *name, mode_t mode, bool *ret_made, int *ret_fd) {
        int fd;

        for (int i = 0; i < 4; i++) {
                fd = open_beneath(dirfd, name, O_RDONLY, 0);
                if (fd >= 0) {
                        *ret_made = false;
                        *ret_fd = fd;
                        return 0;
                }
                if (fd != -ENOENT)
                        return fd;
                if (mkdirat(dirfd, name, mode) < 0) {
                        if (errno != EEXIST)
                                return -errno;
                        continue; /* made by someone else meanwhile: open it as it is */
                }
                fd = open_beneath(dirfd, name, O_RDONLY, LOOKUP_NO_XDEV);
                if (fd < 0)
                        return fd == -EXDEV ? -EBUSY : fd;
                *ret_made = true;
                *ret_fd = fd;
                return 0;
        }
        return -ENOENT;
}

/*
 * Whether the caller's view of the file system was shaped by processes as privileged as
 * the daemon: its mount namespace belongs to the daemon's user namespace and it is not
 * chrooted. Only then does the daemon create directories for it: elsewhere a bind mount
 * or a chroot the caller set up could make <media_root> any root-owned directory of the
 * host, and the daemon would create directories there with its own privileges.
 */
static int caller_layout_trusted(const CallerView *v) {
        _cleanup_close_ int mntns_fd = -EBADF, owner_fd = -EBADF, userns_fd = -EBADF;
        _cleanup_close_ int ns_root_fd = -EBADF;
        uint64_t root_id, ns_root_id;
        bool is_root;

        mntns_fd = openat(v->proc_self_fd, "ns/mnt", O_RDONLY | O_CLOEXEC);
        userns_fd = openat(v->proc_self_fd, "ns/user", O_RDONLY | O_CLOEXEC);
        if (mntns_fd < 0 || userns_fd < 0)
                return -errno;
        owner_fd = ioctl(mntns_fd, NS_GET_USERNS);
        if (owner_fd < 0)
                return errno == EPERM ? 0 : -errno; /* owned by an ancestor of ours */
        if (fd_same_inode(owner_fd, userns_fd) <= 0)
                return 0;
        /* After setns() our root is the namespace's root; "/" needs no lookup. */
        ns_root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (ns_root_fd < 0 || fd_mount(ns_root_fd, &ns_root_id, &is_root) < 0 ||
            fd_mount(v->root_fd, &root_id, &is_root) < 0)
                return -EIO;
        return root_id == ns_root_id && fd_same_inode(ns_root_fd, v->root_fd) > 0;
}

/* What the directory behind fd is to root: -errno if it cannot be examined. */
typedef enum RootDir {
        ROOT_DIR_ONLY,     /* a directory owned by root that no one else may write */
        ROOT_DIR_SHARED,   /* a directory owned by root that group or others may write */
        ROOT_DIR_NOT,      /* not a directory, or another user's */
} RootDir;

static int root_dir_check(int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
                return ROOT_DIR_NOT;
        return st.st_mode & (S_IWGRP | S_IWOTH) ? ROOT_DIR_SHARED : ROOT_DIR_ONLY;
}

/* A directory owned by root, whoever may write it. */
static bool is_roots_dir(int fd) {
        int r = root_dir_check(fd);

        return r == ROOT_DIR_ONLY || r == ROOT_DIR_SHARED;
}

static int media_dir_not_roots(const char *esc, UmError *error) {
        return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EPERM,
                            "the media directory \"%s\" is not a directory owned by root; an "
                            "administrator has to fix or remove it", esc);
}

/* A directory only root can have made or changed: root-owned, not writable by others. */
static int check_root_dir(int fd, const char *esc, UmError *error) {
        int r = root_dir_check(fd);

        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "could not examine the media directory \"%s\"", esc);
        if (r == ROOT_DIR_NOT)
                return media_dir_not_roots(esc, error);
        if (r == ROOT_DIR_SHARED)
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EPERM,
                                    "the media directory \"%s\" is writable by other users; an "
                                    "administrator has to make it 0755",
                                    esc);
        return 0;
}

/*
 * Whether caller_fd (name below a directory of the caller's view that was checked to be
 * the system's) is the directory name below daemon_parent_fd in the daemon's own view:
 * 1 and *ret_daemon_fd if it is, 0 if it is not (something is mounted over it, or over a
 * directory above it, in the caller's namespace only), or -errno.
 */
static int media_dir_is_systems(int daemon_parent_fd, const char *name, int caller_fd,
                                int *ret_daemon_fd) {
        _cleanup_close_ int fd = -EBADF;

        fd = open_beneath(daemon_parent_fd, name, O_PATH, 0);
        if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP || fd == -EXDEV)
                return 0;
        if (fd < 0)
                return fd;
        if (fd_same_inode(fd, caller_fd) <= 0)
                return 0;
        *ret_daemon_fd = TAKE_FD(fd);
        return 1;
}

static int media_not_systems(int r, const char *esc, UmError *error) {
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "could not compare the media directory \"%s\" with the "
                                    "system's: %s",
                                    esc, strerror(-r));
        return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EPERM,
                            "the media directory \"%s\" in your mount namespace is not the "
                            "system's (another directory is mounted over it or over one above "
                            "it); pass an empty directory you own as the target",
                            esc);
}

/*
 * Opens (and makes, 0755 root) every component of media_root below the caller's root,
 * each checked to be the same directory (st_dev, st_ino) as in the daemon's own view
 * before anything is made in it or below it. A bind mount in the caller's namespace (a
 * setuid sandbox's "--bind /etc /run/media") thus never makes the daemon create or change
 * anything in the directory bound there. *ret_daemon_fd is media_root in the daemon's
 * view, for the next level.
 */
static int open_media_root(const CallerView *v, const char *media_root, int *ret_fd,
                           int *ret_daemon_fd, UmError *error) {
        _cleanup_close_ int fd = -EBADF, daemon_fd = -EBADF;
        char esc[MESSAGE_PATH_MAX], copy[PATH_MAX], *save = NULL;
        int r;

        escape_path(media_root, esc);
        if (!path_is_canonical(media_root) || streq(media_root, "/"))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL,
                                    "the configured media directory \"%s\" is not a usable "
                                    "absolute path",
                                    esc);
        fd = fcntl(v->root_fd, F_DUPFD_CLOEXEC, 3);
        daemon_fd = fcntl(v->daemon_root_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0 || daemon_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not duplicate an fd");
        if (fd_same_inode(fd, daemon_fd) <= 0)
                return media_not_systems(0, esc, error);
        snprintf(copy, sizeof(copy), "%s", media_root);
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int next, daemon_next = -EBADF;
                bool made;

                /* fd is the system's directory: making c in it is what the daemon does. */
                r = open_or_make_dir(fd, c, 0755, &made, &next);
                if (r < 0)
                        return media_resolve_error(r, esc, error);
                safe_close(fd);
                fd = next;
                r = media_dir_is_systems(daemon_fd, c, fd, &daemon_next);
                if (r <= 0)
                        return media_not_systems(r, esc, error);
                safe_close(daemon_fd);
                daemon_fd = daemon_next;
                if (made && fchmod(fd, 0755) < 0)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                            "could not set up the media directory \"%s\"", esc);
        }
        r = check_root_dir(fd, esc, error);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        *ret_daemon_fd = TAKE_FD(daemon_fd);
        return 0;
}

/*
 * The access ACL "u::rwx, u:<uid>:r-x, g::---, m::r-x, o::---" in the kernel's xattr
 * format (linux/posix_acl_xattr.h): little-endian, entries sorted by tag.
 */
static int dir_set_user_acl(int fd, uid_t uid) {
        static const struct {
                uint16_t tag, perm;
        } entries[] = {
                { ACL_USER_OBJ, ACL_READ | ACL_WRITE | ACL_EXECUTE },
                { ACL_USER, ACL_READ | ACL_EXECUTE },
                { ACL_GROUP_OBJ, 0 },
                { ACL_MASK, ACL_READ | ACL_EXECUTE },
                { ACL_OTHER, 0 },
        };
        uint8_t buf[sizeof(struct posix_acl_xattr_header) +
                    ELEMENTSOF(entries) * sizeof(struct posix_acl_xattr_entry)];
        struct posix_acl_xattr_header h = { .a_version = htole32(POSIX_ACL_XATTR_VERSION) };

        memcpy(buf, &h, sizeof(h));
        for (size_t i = 0; i < ELEMENTSOF(entries); i++) {
                struct posix_acl_xattr_entry e = {
                        .e_tag = htole16(entries[i].tag),
                        .e_perm = htole16(entries[i].perm),
                        .e_id = htole32(entries[i].tag == ACL_USER ? (uint32_t) uid
                                                                  : (uint32_t) ACL_UNDEFINED_ID),
                };

                memcpy(buf + sizeof(h) + i * sizeof(e), &e, sizeof(e));
        }
        if (fsetxattr(fd, "system.posix_acl_access", buf, sizeof(buf), 0) < 0)
                return -errno;
        return 0;
}

/* 0750 root, readable and searchable by uid: through an ACL, else through its group gid. */
static int dir_grant_user(int fd, uid_t uid, gid_t gid) {
        int r;

        if (fchown(fd, 0, 0) < 0 || fchmod(fd, 0750) < 0)
                return -errno;
        r = dir_set_user_acl(fd, uid);
        if (r != -EOPNOTSUPP)
                return r;
        if (fchown(fd, 0, gid) < 0 || fchmod(fd, 0750) < 0)
                return -errno;
        return 0;
}

/*
 * Opens (and makes) <media_root>/<user> below media_fd, checked to be the system's
 * directory (as below daemon_media_fd, the daemon's view of media_root) before its owner,
 * mode and ACL are set: a directory mounted there in the caller's namespace is never
 * changed.
 */
static int open_user_dir(int media_fd, int daemon_media_fd, const char *user,
                         const char *media_root, uid_t uid, gid_t gid, int *ret_fd,
                         UmError *error) {
        _cleanup_close_ int fd = -EBADF, daemon_fd = -EBADF;
        char path[PATH_MAX], esc[MESSAGE_PATH_MAX];
        bool made;
        int r;

        snprintf(path, sizeof(path), "%s/%s", media_root, user);
        escape_path(path, esc);
        r = open_or_make_dir(media_fd, user, 0700, &made, &fd);
        if (r < 0)
                return media_resolve_error(r, esc, error);
        r = media_dir_is_systems(daemon_media_fd, user, fd, &daemon_fd);
        if (r <= 0)
                return media_not_systems(r, esc, error);
        r = root_dir_check(fd);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "could not examine the media directory \"%s\"", esc);
        if (r == ROOT_DIR_NOT)
                return media_dir_not_roots(esc, error);
        r = dir_grant_user(fd, uid, gid);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "could not set the permissions of \"%s\": %s", esc,
                                    strerror(-r));
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/*
 * Makes user_fd/<base>, or <base>-2 ... <base>-100 when taken: mkdirat() is atomic, so two
 * concurrent attaches never get the same directory. The new directory is checked to be the
 * one made here (root-owned, not a mount: user_fd is root's, so nobody else can have put
 * anything there) and given to the user.
 */
static int make_mount_dir(int user_fd, const char *base, uid_t uid, gid_t gid, char *ret_name,
                          size_t n, int *ret_fd, UmError *error) {
        char name[NAME_MAX_BYTES + 16], esc[MESSAGE_PATH_MAX];

        for (unsigned i = 1; i <= NAME_MAX_SUFFIX; i++) {
                _cleanup_close_ int fd = -EBADF;

                if (i == 1)
                        snprintf(name, sizeof(name), "%s", base);
                else
                        snprintf(name, sizeof(name), "%s-%u", base, i);
                if (mkdirat(user_fd, name, 0700) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                            "could not create the mount point \"%s\": %s",
                                            um_escape(name, esc, sizeof(esc)), strerror(errno));
                }
                fd = open_beneath(user_fd, name, O_RDONLY, LOOKUP_NO_XDEV);
                if (fd < 0 || !is_roots_dir(fd))
                        return um_error_set(error, UM_ERROR_KIND_FAILED, fd < 0 ? -fd : EEXIST,
                                            "the new mount point \"%s\" changed under the daemon",
                                            um_escape(name, esc, sizeof(esc)));
                if (fchown(fd, uid, gid) < 0) {
                        int e = errno;

                        (void) unlinkat(user_fd, name, AT_REMOVEDIR);
                        return um_error_set(error, UM_ERROR_KIND_FAILED, e,
                                            "could not give the mount point \"%s\" to its user",
                                            um_escape(name, esc, sizeof(esc)));
                }
                snprintf(ret_name, n, "%s", name);
                *ret_fd = TAKE_FD(fd);
                return 0;
        }
        return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EEXIST,
                            "there are already %u mount points named \"%s\"; unmount some of them",
                            NAME_MAX_SUFFIX, um_escape(base, esc, sizeof(esc)));
}

/* ---- attaching ----------------------------------------------------------------------- */

/*
 * move_mount() onto the checked directory, then confirms that the attached mount is still
 * the one whose id was taken before; anything else is detached again.
 */
static int attach_move(const CallerView *v, int mount_fd, int target_fd, uint64_t mount_id,
                       const AttachRequest *req, const char *where, UmError *error) {
        char esc[MESSAGE_PATH_MAX];
        uint64_t id = 0;
        int r;

        escape_path(where, esc);
        if (move_mount(mount_fd, "", target_fd, "",
                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
                int e = errno;

                return um_error_set(error, UM_ERROR_KIND_FAILED, e,
                                    "could not attach the mount at \"%s\": %s", esc, strerror(e));
        }
        r = mountbuild_mount_id_as(mount_fd, req->uid, req->gid, &id);
        if (r >= 0 && id == mount_id)
                return 0;
        (void) detach_through_fd(v, mount_fd);
        return um_error_set(error, UM_ERROR_KIND_FAILED, r < 0 ? r : EIO,
                            "the mount attached at \"%s\" could not be confirmed; it was detached "
                            "again",
                            esc);
}

/*
 * Looks up files as the caller would: fsuid uid, and the fs gid and supplementary groups
 * of the calling process (from its /proc status). Capabilities that override file
 * permissions drop with the fsuid, so a target the caller cannot reach is not reached.
 */
static int become_caller_for_files(const CallerView *v, uid_t uid, UmError *error) {
        ProcStatus st;
        gid_t gfs;
        int r;

        r = v->status_fd >= 0 ? proc_status_read_fd(v->status_fd, &st) : -EBADF;
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r == -EBADMSG ? EIO : -r,
                                    "could not read the caller's groups");
        gfs = st.gids[3];
        if (setgroups(st.n_groups, st.groups) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not take on the caller's groups");
        (void) setfsgid(gfs);
        (void) setfsuid(uid);
        if ((uid_t) setfsuid((uid_t) -1) != uid || (gid_t) setfsgid((gid_t) -1) != gfs)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EPERM,
                                    "could not take on the caller's identity");
        return 0;
}

/* Back to root's file access (fsuid 0 raises the file capabilities again). */
static void become_root_for_files(void) {
        (void) setfsuid(0);
        (void) setfsgid(0);
        (void) setgroups(0, NULL);
}

/*
 * Whether the new mount is where the target was checked: at its name in the checked
 * parent. The caller could have moved the target directory elsewhere (into a directory
 * others write to, say) between the checks and the move. Once mounted on, it cannot be
 * moved to another directory (the kernel refuses, and serializes such a rename with the
 * mount); a rename within the same directory that raced the mount can still give it
 * another name there, which changes nothing: that directory is the checked one.
 */
static int check_target_placement(const Target *t, uint64_t mount_id,
                                  const AttachRequest *req) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t id = 0;
        bool is_root = false;
        int r;

        fd = open_beneath(t->parent_fd, t->name, O_PATH, 0);
        if (fd < 0)
                return fd;
        r = fd_mount_as(fd, req->uid, req->gid, &id, &is_root);
        if (r < 0)
                return r;
        return id == mount_id && is_root ? 0 : -ESTALE;
}

static int attach_at_target(const CallerView *v, int mount_fd, uint64_t mount_id,
                            const AttachRequest *req, AttachResult *res, UmError *error) {
        _cleanup_(target_done) Target t = { .parent_fd = -EBADF, .fd = -EBADF };
        char esc[MESSAGE_PATH_MAX];
        int r;

        r = become_caller_for_files(v, req->uid, error);
        if (r >= 0)
                r = open_target(v, req->target, req->uid, &t, error);
        become_root_for_files();
        if (r < 0)
                return r;
        r = attach_move(v, mount_fd, t.fd, mount_id, req, req->target, error);
        if (r < 0)
                return r;
        if (check_target_placement(&t, mount_id, req) < 0) {
                (void) detach_through_fd(v, mount_fd);
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, ESTALE,
                                    "the target \"%s\" was moved while it was being mounted on; "
                                    "the mount was detached again",
                                    escape_path(req->target, esc));
        }
        snprintf(res->mount_point, sizeof(res->mount_point), "%s", req->target);
        res->created_dir = false;
        return 0;
}

static int attach_at_media(const CallerView *v, int mount_fd, uint64_t mount_id,
                           const AttachRequest *req, AttachResult *res, UmError *error) {
        _cleanup_close_ int media_fd = -EBADF, daemon_media_fd = -EBADF, user_fd = -EBADF;
        _cleanup_close_ int dir_fd = -EBADF;
        char user[NAME_MAX_BYTES + 1], base[NAME_MAX_BYTES + 1], name[NAME_MAX_BYTES + 16];
        char esc[MESSAGE_PATH_MAX];
        int r;

        mountname_user_dir(req, user, sizeof(user));
        mountname_base(req, base, sizeof(base));
        if (strlen(strempty(req->media_root)) + strlen(user) + sizeof(name) + 2 >
            sizeof(res->mount_point))
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENAMETOOLONG,
                                    "the configured media directory \"%s\" is too long",
                                    escape_path(strempty(req->media_root), esc));
        r = caller_layout_trusted(v);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "could not examine the caller's mount namespace: %s",
                                    strerror(-r));
        if (r == 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_TARGET, EPERM,
                                    "inside a user namespace or a chroot the daemon does not "
                                    "create mount points; pass an empty directory you own as "
                                    "the target");
        r = open_media_root(v, strempty(req->media_root), &media_fd, &daemon_media_fd, error);
        if (r < 0)
                return r;
        r = open_user_dir(media_fd, daemon_media_fd, user, req->media_root, req->uid, req->gid,
                          &user_fd, error);
        if (r < 0)
                return r;
        r = make_mount_dir(user_fd, base, req->uid, req->gid, name, sizeof(name), &dir_fd, error);
        if (r < 0)
                return r;
        snprintf(res->mount_point, sizeof(res->mount_point), "%s/%s/%s", req->media_root, user,
                 name);
        r = attach_move(v, mount_fd, dir_fd, mount_id, req, res->mount_point, error);
        if (r < 0) {
                /* user_fd is root's and 0750: the name still is the directory made above. */
                (void) unlinkat(user_fd, name, AT_REMOVEDIR);
                return r;
        }
        res->created_dir = true;
        return 0;
}

int attach_mount(int mount_fd, const AttachRequest *req, AttachResult *ret, UmError *error) {
        _cleanup_(caller_view_done) CallerView v = CALLER_VIEW_NULL;
        AttachResult res = {};
        bool with_target;
        int r;

        if (mount_fd < 0 || !req || req->pidfd < 0 || !ret)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "incomplete attach request");
        with_target = !isempty(req->target);
        if (with_target) {
                r = attach_check_target(req->target, error);
                if (r < 0)
                        return r;
        }
        r = mountbuild_mount_id_as(mount_fd, req->uid, req->gid, &res.mount_id);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "could not get the id of the new mount: %s", strerror(-r));
        r = caller_enter(req->pidfd, "the caller exited before the mount could be attached", &v,
                         error);
        if (r < 0)
                return r;
        r = current_mntns_id(&v, &res.mntns_id, error);
        if (r < 0)
                return r;
        if (with_target)
                r = attach_at_target(&v, mount_fd, res.mount_id, req, &res, error);
        else
                r = attach_at_media(&v, mount_fd, res.mount_id, req, &res, error);
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}

/* ---- detaching ----------------------------------------------------------------------- */

static int not_mounted(UmError *error, const char *esc) {
        return um_error_set(error, UM_ERROR_KIND_NOT_MOUNTED, ENOENT,
                            "\"%s\" is not the mount that was registered there (it was unmounted, "
                            "moved or replaced); nothing was unmounted",
                            esc);
}

/*
 * Whether fd is the root of the mount with unique id mount_id, for a mount whose
 * filesystem answers nothing but a statx that asks for nothing (a userspace driver's FUSE
 * mount lets only its owner in): that gives the old mount id and whether fd is a mount's
 * root, and statmount() gives the old id of mount_id. On success *fdp moves to *ret_fd.
 */
static int fd_is_mount_old(int fd, uint64_t mount_id, int *fdp, int *ret_fd) {
        struct statx stx = {};
        uint32_t old;
        int r;

        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, &stx) < 0)
                return -errno;
        if (!(stx.stx_mask & STATX_MNT_ID) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
                return -EOPNOTSUPP;
        r = mountinfo_old_id(mount_id, &old);
        if (r < 0)
                return r == -ENOENT ? -ENOENT : r;
        if (stx.stx_mnt_id != old || !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
                return -ENOENT;
        if (ret_fd && fdp)
                *ret_fd = TAKE_FD(*fdp);
        return 0;
}

/* Whether parent_fd/name is the root of mount mount_id (looked up without symlinks). */
static int check_is_mount(int parent_fd, const char *name, uint64_t mount_id, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t id;
        bool is_root;
        int r;

        fd = open_beneath(parent_fd, name, O_PATH, 0);
        if (fd < 0)
                return fd;
        r = fd_mount(fd, &id, &is_root);
        if (r == -EACCES)
                /* A userspace driver's mount lets only its owner look (fd_is_mount_old()). */
                return fd_is_mount_old(fd, mount_id, ret_fd ? &fd : NULL, ret_fd);
        if (r < 0)
                return r;
        if (id != mount_id || !is_root)
                return -ENOENT;
        if (ret_fd)
                *ret_fd = TAKE_FD(fd);
        return 0;
}

/* 1 if the mount with unique id mount_id is still in this namespace, 0 if not, -ENOSYS. */
static int mount_still_here(uint64_t mount_id) {
        char fstype[64];
        int r = mount_fstype(mount_id, fstype, sizeof(fstype));

        if (r == -ENOENT)
                return 0;
        return r < 0 ? r : 1;
}

/*
 * A plain (non-lazy) unmount. The working directory pins the parent; the name below it is
 * checked and unmounted right away, with no reference of ours on the mount (which would
 * make it busy). What remains is a window of two syscalls in which someone who may rename
 * entries of the parent directory from another mount namespace (where that entry is no
 * mount point) could put another mount point under the name; the check afterwards reports
 * it. Under <media_root>/<user>, which only root may change, there is no such window.
 */
static int detach_plain(const CallerView *v, int parent_fd, const char *name, uint64_t mount_id,
                        const char *esc, UmError *error) {
        int r, e = 0;

        r = check_is_mount(parent_fd, name, mount_id, NULL);
        if (r == -ENOENT || r == -ELOOP || r == -ENOTDIR || r == -EXDEV)
                return not_mounted(error, esc);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r, "could not examine \"%s\": %s",
                                    esc, strerror(-r));
        if (fchdir(parent_fd) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not enter the directory of \"%s\"", esc);
        if (umount2(name, UMOUNT_NOFOLLOW) < 0)
                e = errno;
        (void) fchdir(v->root_fd);
        if (e == EBUSY)
                return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY,
                                    "\"%s\" is busy (files are open or a process is working inside "
                                    "it); close them or use --force",
                                    esc);
        if (e == EINVAL)
                return not_mounted(error, esc);
        if (e != 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, e, "could not unmount \"%s\": %s",
                                    esc, strerror(e));
        if (mount_still_here(mount_id) > 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EAGAIN,
                                    "\"%s\" was replaced while it was being unmounted: another "
                                    "mount was unmounted there and the registered one is still "
                                    "mounted",
                                    esc);
        return 0;
}

static int detach_forced(const CallerView *v, int parent_fd, const char *name, uint64_t mount_id,
                         const char *esc, UmError *error) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = check_is_mount(parent_fd, name, mount_id, &fd);
        if (r == -ENOENT || r == -ELOOP || r == -ENOTDIR || r == -EXDEV)
                return not_mounted(error, esc);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r, "could not examine \"%s\": %s",
                                    esc, strerror(-r));
        r = detach_through_fd(v, fd);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r, "could not detach \"%s\": %s",
                                    esc, strerror(-r));
        return 0;
}

/*
 * Removes parent_fd/name if it is an empty directory (rmdir semantics) in a directory that
 * only root can change, i.e. one the daemon made under <media_root>/<user>. Best effort:
 * the mount is gone either way.
 */
static void remove_mount_dir(int parent_fd, const char *name) {
        _cleanup_close_ int fd = -EBADF;

        if (root_dir_check(parent_fd) != ROOT_DIR_ONLY)
                return;
        fd = open_beneath(parent_fd, name, O_PATH, LOOKUP_NO_XDEV);
        if (fd < 0)
                return; /* gone, a symlink, or still a mount point */
        (void) unlinkat(parent_fd, name, AT_REMOVEDIR);
}

/* Splits a canonical path into its parent (in buf) and last component. */
static const char *path_split(const char *path, char *buf, size_t n) {
        const char *slash = strrchr(path, '/');

        snprintf(buf, n, "%.*s", (int) (slash - path), path);
        if (!buf[0])
                snprintf(buf, n, "/");
        return slash + 1;
}

int attach_detach(int pidfd, const char *mount_point, uint64_t mount_id, bool force,
                  bool remove_dir, UmError *error) {
        _cleanup_(caller_view_done) CallerView v = CALLER_VIEW_NULL;
        _cleanup_close_ int parent_fd = -EBADF;
        char esc[MESSAGE_PATH_MAX], parent[PATH_MAX];
        const char *name;
        int r;

        if (pidfd < 0 || isempty(mount_point) || !path_is_canonical(mount_point) ||
            streq(mount_point, "/") || mount_id == 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "\"%s\" is not a mount point that can be unmounted",
                                    escape_path(strempty(mount_point), esc));
        escape_path(mount_point, esc);
        r = caller_enter(pidfd, "the process whose mount namespace holds the mount has exited; "
                                "nothing was unmounted",
                         &v, error);
        if (r < 0)
                return r;
        name = path_split(mount_point, parent, sizeof(parent));
        parent_fd = open_beneath(v.root_fd, parent, O_PATH, 0);
        if (parent_fd < 0)
                return not_mounted(error, esc);
        if (force)
                r = detach_forced(&v, parent_fd, name, mount_id, esc, error);
        else
                r = detach_plain(&v, parent_fd, name, mount_id, esc, error);
        if (r < 0)
                return r;
        if (remove_dir)
                remove_mount_dir(parent_fd, name);
        return 0;
}
