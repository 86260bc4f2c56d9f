/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The built-in allow-list of filesystem types (fstypes.h). */
#include <stddef.h>

#include "fstypes.h"
#include "macro.h"

/* The allow-list, in the order fstype_names() reports it. */
static const char *const names[] = {
        "ext2", "ext3", "ext4", "xfs", "btrfs", "squashfs", "erofs",
        "vfat", "exfat", "ntfs3", "iso9660", "udf", NULL,
};

/* The types whose drivers never write: a mount of them is read-only, and says so
 * (attributes, polkit's "read-only" detail). */
static const char *const read_only_media[] = { "squashfs", "erofs", "iso9660", NULL };

bool fstype_allowed(const char *fstype) {
        return fstype && strv_contains(names, fstype);
}

bool fstype_read_only(const char *fstype) {
        return fstype && strv_contains(read_only_media, fstype);
}

const char *const *fstype_names(void) {
        return names;
}
