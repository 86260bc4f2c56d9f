/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * statmount(2) of a mount in the calling process's current mount namespace: the worker's
 * questions after it entered the caller's (attach.c). The namespace-wide ones, which the
 * daemon asks too, are mountns.h's.
 */
#pragma once

#include <stdint.h>

/*
 * The filesystem type name (e.g. "devtmpfs") of mount mount_id in the calling process's
 * mount namespace; owned, free(). -ENODATA if the kernel gave none.
 */
int mountinfo_fstype(uint64_t mount_id, char **ret_fstype);

/* The old (32-bit) id of the mount with unique id mount_id in the caller's current mount
 * namespace (statmount(2)). -ENOENT: no such mount there. */
int mountinfo_old_id(uint64_t mount_id, uint32_t *ret_old_id);
