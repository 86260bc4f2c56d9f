/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "info" dict that usermountd returns for a mount (org.freedesktop.UserMount1(5), "info
 * keys"), as the client shows it: the fields of libusermount's usermount_info, and the one-line
 * texts the client prints about a mount.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "usermount.h"

typedef struct MountInfo {
        /* Strings point into the message they were read from and live as long as it. */
        const char *mount_point;
        const char *device;
        const char *backing_file;
        const char *fstype;
        const char *label;
        const char *uuid;
        const char *options;
        const char *driver;        /* "kernel" or "userspace"; NULL from an older daemon */
        const char *idmap;
        const char *idmap_uid_map; /* "first:lower:count,...": on-disk ids first.. appear as lower.. */
        const char *idmap_gid_map;
        char **attributes; /* owned, NULL-terminated */
        uint64_t mount_id;
        uint32_t partition; /* the partition of the image mounted, 0 for the whole source */
        /* ListMounts entries only. */
        uint32_t owner_uid; /* MOUNT_INFO_UID_INVALID when absent */
        uint64_t created_usec; /* CLOCK_REALTIME; 0 when absent */
} MountInfo;

#define MOUNT_INFO_UID_INVALID UINT32_MAX

/* Frees what info owns and zeroes it; accepts a zeroed MountInfo. */
void mount_info_done(MountInfo *info);

/*
 * Fills *ret (zeroed first, owner_uid invalid) from libusermount's info: strings point into
 * src and live as long as it; the attributes are copied. Returns 0 or -ENOMEM; call
 * mount_info_done() either way.
 */
int mount_info_from_usermount(const usermount_info *src, MountInfo *ret);

/* ListMounts: libusermount's infos, and the MountInfo of each (pointing into them). */
typedef struct MountList {
        usermount_info **src;
        MountInfo *infos;
        size_t n;
} MountList;

/*
 * Calls ListMounts on c into *ret (zeroed first). Returns 0, or -errno as libusermount
 * returns it (c keeps the error); call mount_list_done() either way.
 */
int mount_list_fetch(usermount_client *c, MountList *ret);
void mount_list_done(MountList *l);

/*
 * What a person calls the source of the mount: the image file for a loop device made for
 * an image, else the device; NULL if the daemon said neither.
 */
const char *mount_info_source(const MountInfo *info);

/* true if attr (e.g. "ro") is one of info's attributes. */
bool mount_info_has_attribute(const MountInfo *info, const char *attr);

/*
 * Formats "Mounted DEVICE (FSTYPE, label 'L', image FILE, options 'O') at TARGET, read-only,
 * nodev,nosuid,noexec locked" into a new string; source stands in for a missing device.
 * Every string is escaped for the terminal. Returns 0 or -ENOMEM; the caller frees *ret.
 */
int mount_info_format_summary(const MountInfo *info, const char *source, const char *target,
                              char **ret);

/*
 * Formats one line of 'usermount monitor': "+ MOUNT-POINT SOURCE FSTYPE" for an added
 * mount, "- ..." for a removed one; mount_point (the signal's argument) wins over the info
 * key, a missing field is "-", every field is escaped. Returns 0 or -ENOMEM; the caller
 * frees *ret.
 */
int mount_info_format_event(const MountInfo *info, bool added, const char *mount_point,
                            char **ret);
