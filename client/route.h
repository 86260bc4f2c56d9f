/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which usermountd method a command line maps to, decided from facts gathered beforehand
 * (namespaces, file types, the registered mounts), so that the decisions are pure and
 * tested on their own.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "mount-info.h"

typedef enum MountRoute {
        MOUNT_ROUTE_OPEN_MOUNT, /* OpenMount + move_mount() by usermount itself */
        MOUNT_ROUTE_DEVICE,     /* Mount(device path): usermountd opens and attaches */
        MOUNT_ROUTE_FD,         /* MountFd(fd we opened): usermountd attaches */
        MOUNT_ROUTE_BAD_SOURCE, /* neither a block device nor a regular file */
} MountRoute;

/*
 * The route of 'usermount mount': can_attach is namespace_can_attach_mounts(), in_userns
 * userns_detect(), source_mode the st_mode of the source (symlinks
 * followed). usermount attaches the mount itself only where it certainly can and the
 * namespace is its own (a user namespace it administers: a container, 'unshare'); root in
 * the initial namespaces, and everyone else, get a mount usermountd attaches and tracks.
 */
MountRoute mount_route(int can_attach, int in_userns, mode_t source_mode);

typedef enum UnmountRoute {
        UNMOUNT_ROUTE_MOUNT_POINT, /* the argument is passed on as the mount point */
        UNMOUNT_ROUTE_SOURCE,      /* a device or image: find its mount points first */
} UnmountRoute;

/*
 * The route of 'usermount unmount ARG': stat_error is 0 or the -errno of stat(ARG), and
 * mode its st_mode when 0. A block device or a regular file names a source; a directory,
 * anything else and anything stat() fails on (a mount of a vanished device may give EIO,
 * ENOTCONN or EACCES) is left to usermountd to find as a mount point.
 */
UnmountRoute unmount_route(int stat_error, mode_t mode);

/*
 * Whether info (a ListMounts entry) is a mount of the source the user named: its device or
 * backing file is path (made absolute) or canonical (path with symlinks resolved, may be
 * NULL), or, if st is given (path's stat, symlinks followed), is the same block device
 * (st_rdev) or the same file (st_dev, st_ino) as stat() now finds at the listed path.
 */
bool route_source_matches(const MountInfo *info, const char *path, const char *canonical,
                          const struct stat *st);
