/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Building a locked, detached mount with the new mount API (the recipe of
 * ARCHITECTURE.md, "Building a locked mount"):
 *   1. unshare(CLONE_NEWNS), make "/" private;
 *   2. fsopen(), one fsconfig() per option, FSCONFIG_CMD_CREATE_EXCL, fsmount() with the
 *      attributes (NODEV|NOSUID[|NOEXEC][|RDONLY]);
 *   3. move_mount() onto a private staging directory;
 *   4. unshare(CLONE_NEWUSER|CLONE_NEWNS): the copied tree has its flags locked;
 *   5. open_tree(stage, OPEN_TREE_CLONE): the clone keeps the locks.
 * It changes the calling process's namespaces for good, so it only ever runs in a forked
 * worker that exits afterwards.
 */
#pragma once

#include "policy.h"
#include "um-error.h"

typedef struct MountSpec {
        const char *fstype;           /* probed type, e.g. "ext4" */
        const char *source;           /* fsconfig "source", e.g. "/dev/loop3" or "/proc/self/fd/5" */
        const MountOptions *options;  /* from policy_build_options() */
} MountSpec;

/*
 * Runs the recipe above. stage_dir is a directory only root can reach (e.g. under
 * /run/usermount); a private subdirectory is created and removed inside it. On success
 * returns 0 and *ret_mount_fd is the locked, detached mount (O_CLOEXEC). On failure returns
 * -errno with error set to a sentence that includes what the filesystem reported (the fs
 * context's log), e.g. EBUSY -> UM_ERROR_KIND_DEVICE_BUSY.
 */
int mountbuild_locked(const MountSpec *spec, const char *stage_dir, int *ret_mount_fd, UmError *error);

/* The kernel's unique mount id of a mount fd (statx STATX_MNT_ID_UNIQUE, else STATX_MNT_ID). */
int mountbuild_mount_id(int mount_fd, uint64_t *ret_id);
