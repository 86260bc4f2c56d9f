/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Building a locked, detached mount with the new mount API: steps 2 to 7 of the recipe
 * of docs/architecture.md, "Building a locked mount", numbered as there (step 1, making
 * the source ready, is the job's):
 *   2. fsopen(), one fsconfig() per option, FSCONFIG_CMD_CREATE_EXCL, fsmount() with the
 *      attributes (NODEV|NOSUID[|NOEXEC][|RDONLY]): a detached mount;
 *   3. for an id-mapped mount, MOUNT_ATTR_IDMAP with a user namespace the worker makes
 *      itself (idmap-userns.h), while the mount is detached and was never attached;
 *   4. a private mount namespace: a copy of the stage namespace (stagens_make(): a
 *      tmpfs and nothing else) or else of the worker's own, "/" made private;
 *   5. move_mount() onto the staging directory, and make the mount the working directory;
 *   6. unshare(CLONE_NEWUSER|CLONE_NEWNS): the copied tree has its flags locked, and the
 *      kernel moves the working directory onto the copy of the staged mount;
 *   7. open_tree("", OPEN_TREE_CLONE|AT_EMPTY_PATH) of the working directory: the clone
 *      keeps the locks. The worker then checks that clearing nosuid on it fails.
 * It changes the calling process's namespaces (and working directory) for good, so it
 * only ever runs in a worker (usermount-worker, jobs.c) that exits afterwards.
 *
 * Staging leaves nothing behind: the mount is moved over stage_dir itself, inside the
 * worker's private mount namespace, so no directory is created anywhere and the host
 * never sees the mount; the staged mount goes away with the worker's namespaces. Reaching
 * it through the working directory (rather than by path, after step 6) matters: the new
 * user namespace maps no ids, so path lookup through root-only directories would fail.
 */
#pragma once

#include "idmap.h"
#include "mountopts.h"
#include "um-error.h"

typedef struct MountSpec {
        const char *fstype;           /* probed type, e.g. "ext4" */
        const char *source;           /* fsconfig "source", e.g. "/dev/loop3" or "/proc/self/fd/5" */
        const MountOptions *options;  /* from policy_build_options() */
        MountIdmap *idmap;            /* NULL or IDMAP_NONE: ids as on disk */
        /*
         * Non-NULL when source names a regular file, which erofs mounts itself (no loop
         * device; erofsfile.h). When the kernel refuses the file as not a block device
         * (-ENOTBLK), *file_unsupported says why: true when the driver logged that it could
         * not look the path up as a block device, as erofs without
         * CONFIG_EROFS_FS_BACKED_BY_FILE does (with it, that lookup fails quietly); false
         * when the driver could have, but not from this file (on tmpfs or overlayfs, whose
         * files cannot be read through the page cache as erofs needs).
         */
        bool *file_unsupported;
} MountSpec;

/*
 * Runs the recipe above. stage_dir is an existing directory only root can reach (e.g.
 * /run/usermount); it is mounted over in the worker's namespace only and never modified.
 * On success returns 0 and *ret_mount_fd is the locked, detached mount (O_CLOEXEC, owned
 * by the caller). On failure returns -errno with error set to a sentence that includes
 * what the filesystem reported (the fs context's log), e.g. EBUSY ->
 * UM_ERROR_KIND_DEVICE_BUSY.
 */
int mountbuild_locked(const MountSpec *spec, const char *stage_dir, int *ret_mount_fd, UmError *error);

/* The same, in a copy of the stage namespace stage_ns_fd (-EBADF: of the worker's own);
 * stage_dir is then a path in that namespace (JOB_STAGE_DIR). After it the worker
 * sees only that namespace: paths of the host no longer resolve. */
int mountbuild_locked_in(const MountSpec *spec, int stage_ns_fd, const char *stage_dir,
                         int *ret_mount_fd, UmError *error);

/* Steps 2 to 5 alone, for a detached mount made elsewhere (a userspace driver's FUSE
 * mount, fusedriver.h): mount_fd stays the caller's. The same namespaces change. Step 3
 * enters the mount as as_uid/as_gid ((uid_t) -1: as the worker), for a filesystem that
 * lets no one else in (asuser.h). */
int mountbuild_lock_in(int mount_fd, int stage_ns_fd, const char *stage_dir, uid_t as_uid,
                       gid_t as_gid, int *ret_mount_fd, UmError *error);

/* The kernel's unique mount id of a mount fd (statx STATX_MNT_ID_UNIQUE, else STATX_MNT_ID). */
int mountbuild_mount_id(int mount_fd, uint64_t *ret_id);
/* The same; where the filesystem refuses us (-EACCES: a userspace driver's FUSE mount lets
 * only its owner in), asked again as uid/gid, the owner (asuser.h; not after the worker
 * left the initial user namespace). uid (uid_t) -1: no second try. */
int mountbuild_mount_id_as(int mount_fd, uid_t uid, gid_t gid, uint64_t *ret_id);
