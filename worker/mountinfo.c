/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the worker asks statmount(2) of a mount in the mount namespace it is in (after
 * entering the caller's): the filesystem type and the old 32-bit id (mountinfo.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "kernel-compat.h"
#include "macro.h"
#include "mountinfo.h"
#include "mountns.h"

int mountinfo_fstype(uint64_t mount_id, char **ret_fstype) {
        _cleanup_free_ struct um_statmount *sm = NULL;
        _cleanup_free_ char *mount_point = NULL;
        size_t size;
        int r;

        /* Namespace id 0: the caller's current mount namespace. */
        r = mountns_statmount(0, mount_id, UM_STATMOUNT_FS_TYPE, &sm, &size);
        if (r < 0)
                return r;
        r = mountns_statmount_parse(sm, size, &mount_point, ret_fstype);
        if (r >= 0 && !*ret_fstype)
                return -ENODATA;
        return r;
}

int mountinfo_old_id(uint64_t mount_id, uint32_t *ret_old_id) {
        _cleanup_free_ struct um_statmount *sm = NULL;
        size_t size;
        int r;

        /* Namespace id 0: the caller's current mount namespace. */
        r = mountns_statmount(0, mount_id, UM_STATMOUNT_MNT_BASIC, &sm, &size);
        if (r < 0)
                return r;
        if (!(sm->mask & UM_STATMOUNT_MNT_BASIC))
                return -ENODATA;
        *ret_old_id = sm->mnt_id_old;
        return 0;
}
