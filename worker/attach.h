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

#include "jobproto.h"
#include "mountname.h"
#include "um-error.h"


/*
 * Attaches mount_fd for req. With a target: it must be an existing, empty directory owned
 * by req->uid, reached without symlinks, not on procfs/sysfs/devtmpfs/other pseudo
 * filesystems, and not "/", "/etc", "/usr" and the like -> else -EINVAL/-EPERM with
 * UM_ERROR_KIND_INVALID_TARGET. Without: <media_root> (0755 root) and
 * <media_root>/<user_name> (0750 root, group-readable and -searchable by the user through
 * an ACL or its primary group) are created as needed, and <name> (from the label, else
 * the uuid, else "disk", sanitised by mountname_sanitize(), with "-2", "-3"... on
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
