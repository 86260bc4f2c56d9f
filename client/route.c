/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The routing decisions of usermount's commands (see route.h).
 */
#include "fs-util.h"
#include "macro.h"
#include "route.h"

MountRoute mount_route(int can_attach, int in_userns, mode_t source_mode) {
        if (!S_ISBLK(source_mode) && !S_ISREG(source_mode))
                return MOUNT_ROUTE_BAD_SOURCE;
        /* Undecided (< 0) goes to usermountd, which can attach in any namespace. */
        if (can_attach == 1 && in_userns == 1)
                return MOUNT_ROUTE_OPEN_MOUNT;
        return S_ISBLK(source_mode) ? MOUNT_ROUTE_DEVICE : MOUNT_ROUTE_FD;
}

UnmountRoute unmount_route(int stat_error, mode_t mode) {
        if (stat_error == 0 && (S_ISBLK(mode) || S_ISREG(mode)))
                return UNMOUNT_ROUTE_SOURCE;
        return UNMOUNT_ROUTE_MOUNT_POINT;
}

static bool path_is(const char *listed, const char *path, const char *canonical) {
        return !isempty(listed) && (streq_ptr(listed, path) || streq_ptr(listed, canonical));
}

/* The same file as st: a block device by its device number, an image by its inode. */
static bool same_file(const char *listed, const struct stat *st) {
        struct stat listed_st;

        if (isempty(listed) || stat(listed, &listed_st) < 0)
                return false;
        if (S_ISBLK(st->st_mode))
                return S_ISBLK(listed_st.st_mode) && listed_st.st_rdev == st->st_rdev;
        return S_ISREG(listed_st.st_mode) && stat_same_inode(&listed_st, st);
}

bool route_source_matches(const MountInfo *info, const char *path, const char *canonical,
                          const struct stat *st) {
        /* A block device is only ever the device; an image only ever the backing file. */
        if (st && S_ISBLK(st->st_mode))
                return path_is(info->device, path, canonical) || same_file(info->device, st);
        if (st)
                return path_is(info->backing_file, path, canonical) ||
                       same_file(info->backing_file, st);
        return path_is(info->device, path, canonical) ||
               path_is(info->backing_file, path, canonical);
}
