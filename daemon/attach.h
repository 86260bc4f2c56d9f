/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Attaching a locked mount in the caller's own mount namespace, and detaching it again
 * (Mount, MountFd, Unmount). These functions run in a worker (jobs.c): they setns() into
 * the caller's mount namespace through a pidfd, resolve paths one component at a time
 * without following any symlink (lookup_beneath()), check ownership on the resulting fd,
 * and work only on fds from then on (move_mount(..., MOVE_MOUNT_T_EMPTY_PATH)).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "um-error.h"

typedef struct AttachRequest {
        int pidfd;              /* the caller; its mount namespace (and root) is used */
        uid_t uid;              /* the caller's uid (the target must be owned by it) */
        gid_t gid;
        const char *target;     /* absolute path in the caller's namespace, or NULL/"" */
        const char *media_root; /* default parent, e.g. "/run/media" */
        const char *user_name;  /* <media_root>/<user_name>/<name> */
        const char *label;      /* raw probed label, may be "" or hold anything */
        const char *uuid;       /* raw probed uuid, may be "" */
} AttachRequest;

typedef struct AttachResult {
        char mount_point[4096]; /* where it was attached, in the caller's namespace */
        bool created_dir;       /* the directory was made by us (remove it on unmount) */
        uint64_t mount_id;      /* unique id of the attached mount */
        uint64_t mntns_id;      /* the namespace it was attached in */
} AttachResult;

/*
 * Attaches mount_fd for req. With a target: it must be an existing, empty directory owned
 * by req->uid, reached without symlinks, not on procfs/sysfs/devtmpfs/other pseudo
 * filesystems, and not "/", "/etc", "/usr" and the like -> else -EINVAL/-EPERM with
 * UM_ERROR_KIND_INVALID_TARGET. Without: <media_root> (0755 root) and
 * <media_root>/<user_name> (0750 root, group-readable and -searchable by the user through
 * an ACL or its primary group) are created as needed, and <name> (from the label, else
 * the uuid, else "disk", sanitised by attach_sanitize_name(), with "-2", "-3"... on
 * collision) is created atomically with mkdirat() (EEXIST -> next suffix), owned by the
 * user. Nothing is left behind on failure (a directory made here is removed again;
 * <media_root> and <media_root>/<user> stay, as for udisks). Paths start at the caller's
 * root directory (a chrooted caller names paths inside its chroot). The default place is
 * refused (UM_ERROR_KIND_INVALID_TARGET) for callers in a mount namespace of another user
 * namespace or in a chroot, and when <media_root> or <media_root>/<user> in the caller's
 * namespace is not the directory the daemon finds there in its own (something is bound
 * over it): the daemon creates no directories in a tree they shaped.
 * The caller gone -> -ESRCH, UM_ERROR_KIND_FAILED. On success *ret is filled (mount_id is
 * the id of mount_fd, checked again after attaching); on failure it is untouched.
 */
int attach_mount(int mount_fd, const AttachRequest *req, AttachResult *ret, UmError *error);

/*
 * In the mount namespace of pidfd: checks that mount_point is the mount mount_id (so a
 * path reused by another mount is never touched), unmounts it (MNT_DETACH when force,
 * else a plain umount that fails with EBUSY -> UM_ERROR_KIND_DEVICE_BUSY), and removes
 * the directory when remove_dir. -ENOENT with UM_ERROR_KIND_NOT_MOUNTED when the mount is
 * no longer there. remove_dir is best effort and only removes an empty directory whose
 * parent is root's and writable by nobody else (one attach_mount() made under
 * <media_root>/<user>); a directory the user chose is never removed.
 */
int attach_detach(int pidfd, const char *mount_point, uint64_t mount_id, bool force,
                  bool remove_dir, UmError *error);

/*
 * The checks on a target that need no file system, for the bus edge to run before asking
 * polkit: absolute, canonical (no "." or ".." component, no "//", no trailing "/", no
 * control characters, shorter than PATH_MAX) and not a system directory ("/", "/etc",
 * "/usr", "/lib*", "/home", ...). 0, or -EINVAL/-EPERM with UM_ERROR_KIND_INVALID_TARGET.
 * attach_mount() runs it again. Pure.
 */
int attach_check_target(const char *target, UmError *error);

/*
 * A safe directory name from a device label: valid UTF-8 only, no '/', nothing that
 * utf8_char_unsafe() names (controls, bidi and other invisible format characters), no
 * leading '.', not "." or "..", at most 64 bytes, with runs of
 * unsafe characters turned into '_'. Returns false (and leaves buf "") when nothing
 * usable remains. Pure.
 */
bool attach_sanitize_name(const char *label, char *buf, size_t n);

/* The longest name attach_sanitize_name() makes, in bytes. */
#define ATTACH_NAME_MAX 64

/* The parts of the default mount point: the directory of the user (the user name if it is
 * one safely, else the uid) and the mount's (label, else uuid, else "disk", made safe). */
void attach_media_user_name(const AttachRequest *req, char *buf, size_t n);
void attach_media_base_name(const AttachRequest *req, char *buf, size_t n);

/* Where attach_mount() puts a mount without a target, unless that name is taken (then a
 * "-2", "-3"... suffix follows): <media_root>/<user>/<name>. For polkit's "target" detail.
 * Pure. */
void attach_default_mount_point(const AttachRequest *req, char *buf, size_t n);
