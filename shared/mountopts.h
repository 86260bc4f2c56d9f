/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The options of one mount as the kernel gets them: the filesystem parameters for
 * fsconfig() and the mount attributes for fsmount(). The daemon builds them (policy.h),
 * the worker passes them to the kernel (mountbuild.h); they cross the wire packed
 * (jobproto.h).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One fsconfig() call: FSCONFIG_SET_FLAG when value is NULL, else FSCONFIG_SET_STRING. */
typedef struct MountOption {
        char *key;
        char *value;
} MountOption;

/* What the worker passes to the kernel for one mount. Owned; free with mount_options_done(). */
typedef struct MountOptions {
        MountOption *items; /* filesystem parameters, in order; forced ones last */
        size_t n_items;
        uint64_t attr_set;  /* MOUNT_ATTR_* for fsmount(): always NODEV|NOSUID, NOEXEC unless exec,
                             * RDONLY when read_only, plus atime attributes the caller asked for */
        bool read_only;     /* also passed to the superblock as the "ro" flag */
} MountOptions;

/* Frees what policy_build_options() or job_options_unpack() allocated; accepts a zeroed
 * struct. */
void mount_options_done(MountOptions *o);

/* "key=value,flag,..." of the filesystem parameters, for info["options"] and logs. Owned. */
char *mount_options_to_string(const MountOptions *o);
