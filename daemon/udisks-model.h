/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the UDisks2 front (udisks-front.h) says about a block device and its drive, read
 * from udev's database and sysfs through sd-device: one UDisksBlock per block device a
 * user may see, one UDisksDrive per whole disk that has a product identity. Values as
 * udisks 2.9.4 computes them where clients depend on them (object names, hints, Drive
 * ids); docs/udisks2.md says where usermount differs. Reads sysfs and the udev database
 * only: never opens a device.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-device.h>

#include "macro.h"

#define UDISKS_PATH "/org/freedesktop/UDisks2"
#define UDISKS_BLOCK_PREFIX UDISKS_PATH "/block_devices"
#define UDISKS_DRIVE_PREFIX UDISKS_PATH "/drives"

typedef struct UDisksDrive {
        char *name;             /* the object's name below drives/ */
        char *path;             /* its object path */
        char *disk;             /* kernel name of the whole disk it was made for */
        char *vendor, *model, *revision, *serial, *wwn, *id, *connection_bus, *seat;
        char *sort_key, *media, *sibling_id;
        bool removable, media_removable, media_available, ejectable, can_power_off;
        uint64_t size;
        uint64_t time_detected, time_media_detected; /* µs since the epoch */
} UDisksDrive;

typedef struct UDisksBlock {
        char *name;             /* kernel name: sdb1, zram0, loop3 */
        char *path;             /* object path */
        char *device;           /* device node, /dev/sdb1 */
        char **symlinks;        /* NULL-terminated */
        dev_t devnum;
        char *id;               /* by-id name ("by-id-usb-...") or "" */
        uint64_t size;
        bool read_only;
        char *disk;             /* kernel name of the whole disk (itself for a disk) */
        char *drive_path;       /* "/" when none */
        char *id_usage, *id_type, *id_version, *id_label, *id_uuid;
        bool hint_partitionable, hint_system, hint_ignore, hint_auto;
        char *hint_name, *hint_icon_name, *hint_symbolic_icon_name;
        bool has_filesystem;    /* udev found a filesystem (ID_FS_USAGE=filesystem) */
        bool is_partition;
        uint32_t part_number;
        char *part_type, *part_name, *part_uuid;
        uint64_t part_offset, part_size, part_flags;
        char *part_table;       /* object path of the disk's block */
        bool is_table;          /* a disk whose partitions the kernel knows */
        char *table_type;       /* "dos", "gpt" or "" */
        bool is_loop;
        char *backing_file;
        bool autoclear;
        uid_t setup_by_uid;     /* 0 unless the front's LoopSetup made it */
} UDisksBlock;

/* The object name udisks gives a kernel name or drive identity: [A-Za-z0-9_] kept, every
 * other byte as "_%02x" (bytes >= 0x80 as udisks writes them, "_ffffffXX"). */
char *udisks_escape_name(const char *s);

/* Whether d (a block device) is one the front shows: not a RAM disk, an unbound loop
 * device or an empty zram device. */
bool udisks_device_wanted(sd_device *d);

/* The block of d (a wanted block device); sysfs_fd: "/sys" for removable_check(). */
int udisks_block_new(sd_device *d, int sysfs_fd, UDisksBlock **ret);
UDisksBlock *udisks_block_free(UDisksBlock *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(UDisksBlock *, udisks_block_free);

/* The drive of d, a whole disk with a product identity from udev (ID_SERIAL, ID_MODEL or
 * ID_PATH); -ENOENT for a disk that has none (zram), one stacked on others or on a file
 * (loop, device-mapper, md) or a partition.
 * detected_usec: when the front first saw it (µs since the epoch). */
int udisks_drive_new(sd_device *d, int sysfs_fd, uint64_t detected_usec, UDisksDrive **ret);
UDisksDrive *udisks_drive_free(UDisksDrive *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(UDisksDrive *, udisks_drive_free);
