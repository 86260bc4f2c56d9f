/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Building a locked, detached mount (docs/architecture.md, "Building a locked mount"). The
 * stages, each a function below:
 *   create              fsopen(), fsconfig() per option, FSCONFIG_CMD_CREATE_EXCL, fsmount():
 *                       a detached mount, which no namespace sees
 *   idmap               MOUNT_ATTR_IDMAP with the worker's own user namespace (idmap-userns.h)
 *   private namespace   a copy of the stage namespace (setns(), then unshare(CLONE_NEWNS)):
 *                       a tmpfs and nothing else, so that neither copy below costs more
 *                       with more mounts on the host; without one, a private copy of the
 *                       worker's own namespace
 *   stage               move_mount() over stage_dir, in the private namespace only
 *   lock                unshare(CLONE_NEWUSER|CLONE_NEWNS): lock_mnt_tree() locks the copy
 *   clone               open_tree(OPEN_TREE_CLONE) of the locked copy, reached through the
 *                       working directory, which the kernel carries into the new namespace
 * A filesystem's own complaints (the fs context log) end up in the UmError message.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "idmap-userns.h"
#include "fsrefs.h"
#include "kernel-compat.h"
#include "asuser.h"
#include "mountbuild.h"
#include "nsenter.h"


/*
 * Attributes fsmount() accepts. Anything else in a MountOptions (MOUNT_ATTR_IDMAP, which
 * needs a user namespace fd, or an unknown bit) is a bug upstream and refused.
 */
#define FSMOUNT_ATTR_MASK                                                                    \
        (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |       \
         MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW)

typedef struct FsLog {
        char text[320]; /* "; "-separated, escaped, prefixed with ": " when not empty */
} FsLog;

/*
 * Drains the fs context's message log: each read() returns one "e ext4: ..." (error),
 * "w ..." (warning) or "i ..." (info) line, ENODATA when it is empty. Errors and warnings
 * are kept, escaped, because they come from parsing a possibly hostile image.
 */
static void fs_log_read(int fsfd, FsLog *log) {
        size_t o = 0;

        log->text[0] = 0;
        for (int i = 0; i < 16; i++) {
                char line[1024], escaped[256];
                ssize_t n;

                n = read(fsfd, line, sizeof(line) - 1);
                if (n < 0 && errno == EMSGSIZE)
                        continue; /* that message was longer than line, and is gone */
                if (n <= 0)
                        break;
                line[n] = 0;
                line[strcspn(line, "\n")] = 0;
                if (strlen(line) < 2 || line[1] != ' ' || (line[0] != 'e' && line[0] != 'w'))
                        continue;
                um_escape(line + 2, escaped, sizeof(escaped));
                if (o + 3 >= sizeof(log->text))
                        break;
                o += snprintf(log->text + o, sizeof(log->text) - o, "%s%s", o ? "; " : ": ",
                              escaped);
                if (o >= sizeof(log->text))
                        break;
        }
}

static int make_namespace_private(int stage_ns_fd, UmError *error) {
        int r;

        if (stage_ns_fd >= 0) {
                r = ns_enter(stage_ns_fd, CLONE_NEWNS, "the stage mount namespace", error);
                if (r < 0)
                        return r;
        }
        if (unshare(CLONE_NEWNS) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not create a private mount namespace");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not make the private mount namespace private");
        return 0;
}

static int fs_open(const char *fstype, UmError *error) {
        char escaped[64];
        int fsfd;

        fsfd = fsopen(fstype, FSOPEN_CLOEXEC);
        if (fsfd >= 0)
                return fsfd;
        um_escape(fstype, escaped, sizeof(escaped));
        if (errno == ENODEV)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENODEV,
                                    "the kernel does not support the %s filesystem", escaped);
        return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                            "could not start mounting a %s filesystem: %s", escaped,
                            strerror(errno));
}

static int fs_set(int fsfd, const char *fstype, const char *key, const char *value,
                  UmError *error) {
        char escaped_key[64], escaped_type[64];
        FsLog log;
        int r;

        if (value)
                r = fsconfig(fsfd, FSCONFIG_SET_STRING, key, value, 0);
        else
                r = fsconfig(fsfd, FSCONFIG_SET_FLAG, key, NULL, 0);
        if (r >= 0)
                return 0;
        r = errno;
        fs_log_read(fsfd, &log);
        um_escape(fstype, escaped_type, sizeof(escaped_type));
        um_escape(key, escaped_key, sizeof(escaped_key));
        if (streq(key, "source"))
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "the %s filesystem did not accept its source device (%s)%s",
                                    escaped_type, strerror(r), log.text);
        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, r,
                            "the %s filesystem refused the option \"%s\" (%s)%s", escaped_type,
                            escaped_key, strerror(r), log.text);
}

static int fs_create_error(int err, const char *fstype, const FsLog *log, UmError *error) {
        char type[64];

        um_escape(fstype, type, sizeof(type));
        switch (err) {
        case EBUSY:
                return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, err,
                                    "the device is already mounted or in use%s", log->text);
        case EACCES:
        case EROFS:
                return um_error_set(error, UM_ERROR_KIND_FAILED, err,
                                    "the device is read-only; mount it read-only%s", log->text);
        case EUCLEAN:
                return um_error_set(error, UM_ERROR_KIND_FAILED, err,
                                    "the %s filesystem is corrupted%s", type, log->text);
        case ENOTBLK:
                return um_error_set(error, UM_ERROR_KIND_FAILED, err,
                                    "the source is not a block device%s", log->text);
        case EINVAL:
        case ENOENT:
        case ENODEV:
        case ENXIO:
                if (!log->text[0])
                        return um_error_set(error, UM_ERROR_KIND_FAILED, err,
                                            "the device does not hold a valid %s filesystem, "
                                            "or the filesystem refused the options", type);
                break;
        default:
                break;
        }
        return um_error_set(error, UM_ERROR_KIND_FAILED, err,
                            "the %s filesystem could not be mounted (%s)%s", type, strerror(err),
                            log->text);
}

/* A file source refused as "not a block device": see MountSpec.file_unsupported. */
static int fs_file_error(const MountSpec *spec, const FsLog *log, UmError *error) {
        char type[64];

        um_escape(spec->fstype, type, sizeof(type));
        *spec->file_unsupported = log->text[0] != 0;
        if (*spec->file_unsupported)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOTBLK,
                                    "this kernel does not mount %s images from files%s", type,
                                    log->text);
        return um_error_set(error, UM_ERROR_KIND_FAILED, ENOTBLK,
                            "the %s filesystem cannot be read from this file directly (its "
                            "filesystem, such as tmpfs or overlayfs, does not allow it)", type);
}

/* The source, then each option in order, then "ro" for read-only mounts. */
static int fs_configure(int fsfd, const MountSpec *spec, UmError *error) {
        const MountOptions *o = spec->options;
        int r;

        r = fs_set(fsfd, spec->fstype, "source", spec->source, error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < o->n_items; i++) {
                r = fs_set(fsfd, spec->fstype, o->items[i].key, o->items[i].value, error);
                if (r < 0)
                        return r;
        }
        if (o->read_only)
                return fs_set(fsfd, spec->fstype, "ro", NULL, error);
        return 0;
}

/* fsopen() .. fsmount(): a detached mount of a fresh superblock, never a shared one. */
static int fs_create(const MountSpec *spec, int *ret_mount_fd, UmError *error) {
        const MountOptions *o = spec->options;
        _cleanup_close_ int fsfd = -EBADF;
        unsigned attr;
        FsLog log;
        int r, mfd;

        if (o->attr_set & ~(uint64_t) FSMOUNT_ATTR_MASK)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "unsupported mount attributes 0x%" PRIx64,
                                    o->attr_set & ~(uint64_t) FSMOUNT_ATTR_MASK);
        fsfd = fs_open(spec->fstype, error);
        if (fsfd < 0)
                return fsfd;
        r = fs_configure(fsfd, spec, error);
        if (r < 0)
                return r;
        if (fsconfig(fsfd, FSCONFIG_CMD_CREATE_EXCL, NULL, NULL, 0) < 0) {
                r = errno;
                fs_log_read(fsfd, &log);
                if (r == ENOTBLK && spec->file_unsupported)
                        return fs_file_error(spec, &log, error);
                return fs_create_error(r, spec->fstype, &log, error);
        }

        /* nodev and nosuid are not negotiable, whatever the options say. */
        attr = (unsigned) o->attr_set | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID;
        if (o->read_only)
                attr |= MOUNT_ATTR_RDONLY;
        mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attr);
        if (mfd < 0) {
                r = errno;
                fs_log_read(fsfd, &log);
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "could not create a mount of the filesystem (%s)%s",
                                    strerror(r), log.text);
        }
        *ret_mount_fd = mfd;
        return 0;
}

/*
 * Id-maps the detached mount. For idmap "user" the maps are made here, from the owner of
 * the new filesystem's root directory; for "namespace" they were read and checked before
 * authorization. Either way the user namespace is one the worker makes itself.
 */
/*
 * own_root: a mount that will appear in a mount namespace others share (the host's) must
 * not show the caller a directory owned by someone else, or the caller could rename its
 * mount point, from a namespace of its own, into a directory such as /var/tmp, where a
 * root-owned directory holding what the caller put on the filesystem would appear. Where
 * the root directory is not the caller's, the default becomes "user"; an explicit "none"
 * is refused, and so is a filesystem that cannot be id-mapped.
 */
static int check_own_root(int mount_fd, const MountSpec *spec, UmError *error) {
        MountIdmap *m = spec->idmap;
        struct stat st;

        if (!m || !m->own_root || m->mode != IDMAP_NONE)
                return 0;
        if (fstat(mount_fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not learn who owns the filesystem's root directory");
        if (st.st_uid == m->caller_uid && st.st_gid == m->caller_gid)
                return 0;
        if (m->mode_given)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EPERM,
                                    "the filesystem's root directory belongs to uid %u (gid %u), and with "
                                    "idmap 'none' it would appear as theirs in a mount namespace "
                                    "others use; mount it with idmap 'user' (the default here), "
                                    "or with OpenMount into a mount namespace of your own",
                                    (unsigned) st.st_uid, (unsigned) st.st_gid);
        m->mode = IDMAP_USER;
        return 1;
}

static int apply_idmap(int mount_fd, const MountSpec *spec, UmError *error) {
        MountIdmap *m = spec->idmap;
        _cleanup_close_ int userns_fd = -EBADF;
        struct stat st;
        bool automatic;
        int r;

        r = check_own_root(mount_fd, spec, error);
        if (r < 0)
                return r;
        automatic = r > 0;
        if (!m || m->mode == IDMAP_NONE)
                return 0;
        if (m->mode == IDMAP_USER) {
                if (fstat(mount_fd, &st) < 0)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                            "could not learn who owns the filesystem's root "
                                            "directory");
                idmap_single(st.st_uid, m->caller_uid, &m->uid_map);
                idmap_single(st.st_gid, m->caller_gid, &m->gid_map);
        }
        r = idmap_make_userns(&m->uid_map, &m->gid_map, &userns_fd, error);
        if (r < 0)
                return r;
        r = idmap_apply(mount_fd, userns_fd, spec->fstype, m->mode, error);
        if (r < 0 && automatic && error->kind == UM_ERROR_KIND_INVALID_ARGUMENT) {
                *error = (UmError) {};
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EPERM,
                                    "the filesystem's root directory belongs to uid %u, and the "
                                    "%s filesystem cannot be id-mapped to show it as yours in a "
                                    "mount namespace others use; mount it with OpenMount into a "
                                    "mount namespace of your own", (unsigned) st.st_uid,
                                    spec->fstype);
        }
        return r;
}

/*
 * Attaches the mount over stage_dir inside the private namespace and makes it the working
 * directory: the following unshare() moves the working directory to the locked copy of
 * this mount, which is then reachable by the empty path without any permission check on
 * directories whose owner the new user namespace cannot map.
 */
static int fchdir_fn(void *userdata) {
        return fchdir(*(int *) userdata) < 0 ? -errno : 0;
}

/* as_uid (uid_t) -1: as the worker; else as that user, whom alone the filesystem lets in
 * (a FUSE mount without allow_other, asuser.h). */
static int stage(int mount_fd, const char *stage_dir, uid_t as_uid, gid_t as_gid,
                 UmError *error) {
        int r;

        if (move_mount(mount_fd, "", AT_FDCWD, stage_dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not stage the mount in the worker's namespace");
        r = as_uid == (uid_t) -1 ? fchdir_fn(&mount_fd) :
                asuser_run(as_uid, as_gid, fchdir_fn, &mount_fd);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "could not enter the staged mount");
        return 0;
}

/*
 * Clears nosuid on the clone, which must fail with EPERM: a kernel that let it through did
 * not lock the flags, and the mount must not leave the worker. Any other outcome fails
 * closed too. Costs one syscall.
 */
static int verify_locked(int tree_fd, UmError *error) {
        struct mount_attr attr = { .attr_clr = MOUNT_ATTR_NOSUID };

        if (mount_setattr(tree_fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0 && errno == EPERM)
                return 0;
        return um_error_set(error, UM_ERROR_KIND_FAILED, EPERM,
                            "the kernel did not lock the mount's flags; refusing to hand it out");
}

/*
 * unshare(CLONE_NEWUSER) refuses (EINVAL) a process whose fs_struct another task shares,
 * and the thread of an asuser_run() that came just before still shares it for a moment
 * after pthread_join() returned: the kernel wakes the joiner when it clears the thread's
 * tid, before the exiting thread lets go of the fs_struct. Nothing signals the end on the
 * kernels we support (a thread pidfd would, from Linux 6.9), so the call is repeated for
 * as long as that lasts; a process that is really multithreaded still gets EINVAL.
 */
#define UNSHARE_TRIES 10000

static int unshare_userns(void) {
        for (unsigned i = 0;; i++) {
                if (unshare(CLONE_NEWUSER | CLONE_NEWNS) >= 0)
                        return 0;
                if (errno != EINVAL || i >= UNSHARE_TRIES)
                        return -errno;
                (void) sched_yield();
        }
}

static int lock_and_clone(int *ret_tree_fd, UmError *error) {
        _cleanup_close_ int tree_fd = -EBADF;
        int r;

        r = unshare_userns();
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "could not enter a user namespace to lock the mount's flags "
                                    "(are user namespaces disabled?)");
        tree_fd = open_tree(AT_FDCWD, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (tree_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not clone the locked mount");
        r = verify_locked(tree_fd, error);
        if (r < 0)
                return r;
        *ret_tree_fd = TAKE_FD(tree_fd);
        return 0;
}

int mountbuild_locked_in(const MountSpec *spec, int stage_ns_fd, const char *stage_dir,
                         int *ret_mount_fd, UmError *error) {
        _cleanup_close_ int mount_fd = -EBADF;
        int r;

        if (!spec || isempty(spec->fstype) || isempty(spec->source) || !spec->options ||
            isempty(stage_dir))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "incomplete mount specification");

        r = fs_create(spec, &mount_fd, error);
        if (r < 0)
                return r;
        /* What the kernel assembled, whatever the superblock said when it was checked. */
        r = fsrefs_check_mounted(mount_fd, spec->fstype, error);
        if (r < 0)
                return r;
        r = apply_idmap(mount_fd, spec, error);
        if (r < 0)
                return r;
        /* Last, after everything that looks up a path (the source, /sys, /proc). */
        return mountbuild_lock_in(mount_fd, stage_ns_fd, stage_dir, (uid_t) -1, (gid_t) -1,
                                  ret_mount_fd, error);
}

int mountbuild_lock_in(int mount_fd, int stage_ns_fd, const char *stage_dir, uid_t as_uid,
                       gid_t as_gid, int *ret_mount_fd, UmError *error) {
        int r, tree_fd = -EBADF;

        if (mount_fd < 0 || isempty(stage_dir))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "no mount to lock");
        r = make_namespace_private(stage_ns_fd, error);
        if (r < 0)
                return r;
        r = stage(mount_fd, stage_dir, as_uid, as_gid, error);
        if (r < 0)
                return r;
        r = lock_and_clone(&tree_fd, error);
        if (r < 0)
                return r;
        *ret_mount_fd = tree_fd;
        return 0;
}

int mountbuild_locked(const MountSpec *spec, const char *stage_dir, int *ret_mount_fd,
                      UmError *error) {
        return mountbuild_locked_in(spec, -EBADF, stage_dir, ret_mount_fd, error);
}

typedef struct MountIdAs {
        int fd;
        uint64_t id;
} MountIdAs;

static int mount_id_fn(void *userdata) {
        MountIdAs *m = userdata;

        return mountbuild_mount_id(m->fd, &m->id);
}

int mountbuild_mount_id_as(int mount_fd, uid_t uid, gid_t gid, uint64_t *ret_id) {
        MountIdAs m = { .fd = mount_fd };
        int r;

        r = mountbuild_mount_id(mount_fd, ret_id);
        if (r != -EACCES || uid == (uid_t) -1)
                return r;
        /* A FUSE mount of a userspace driver: only its owner may look (asuser.h). */
        r = asuser_run(uid, gid, mount_id_fn, &m);
        if (r < 0)
                return r;
        *ret_id = m.id;
        return 0;
}

int mountbuild_mount_id(int mount_fd, uint64_t *ret_id) {
        struct statx stx = {};

        /* The id is the mount's, not the filesystem's: asked without a sync, a FUSE mount
         * answers from what the kernel has, never waiting on its (perhaps stalled) driver. */
        if (statx(mount_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID_UNIQUE,
                  &stx) < 0)
                return -errno;
        if (stx.stx_mask & STATX_MNT_ID_UNIQUE) {
                *ret_id = stx.stx_mnt_id;
                return 0;
        }
        if (statx(mount_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
                return -errno;
        if (!(stx.stx_mask & STATX_MNT_ID))
                return -EOPNOTSUPP;
        *ret_id = stx.stx_mnt_id;
        return 0;
}
