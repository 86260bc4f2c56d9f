/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What else a filesystem would make the kernel find: devices its superblock names, and
 * the system's own names for filesystems that it could be mistaken for.
 *
 * A superblock can reach beyond the source. btrfs assembles a filesystem from every
 * device the kernel has registered with the same FSID (num_devices > 1 makes it open the
 * others, read-write), ext3/ext4 open the external journal device whose number the
 * superblock holds, and xfs needs its log and realtime devices named. A user could thus
 * make the kernel read and write a root-only device. fsrefs_check_superblock() reads the
 * superblock itself (not trusting what the probe made of it) and refuses all of these.
 *
 * And a user's image on a loop device carries the LABEL and UUID the user chose: root's
 * "mount LABEL=x", an fstab or crypttab line by UUID, or btrfs's FSID lookup would find
 * it in place of the disk it imitates. fsrefs_check_names() refuses a filesystem whose
 * UUID or label /etc/fstab or /etc/crypttab name, or that another block device the system
 * knows (/dev/disk/by-uuid, /dev/disk/by-label, mounted btrfs filesystems) already has.
 *
 * Both read files and devices: call them in a worker.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "um-error.h"

/* fd: the source, open for reading; fstype: as probed. 0, or -EINVAL with
 * UM_ERROR_KIND_INVALID_SOURCE and the reason; -errno if the superblock cannot be read. */
int fsrefs_check_superblock(int fd, const char *fstype, UmError *error);

/* The same for a filesystem in the byte range [offset, offset + size) of fd (a partition
 * of an image; size 0: to the end), never reading outside it; and one that says it is
 * larger than its partition is refused too (-EFBIG, UM_ERROR_KIND_INVALID_SOURCE). */
int fsrefs_check_superblock_in(int fd, uint64_t offset, uint64_t size, const char *fstype,
                               UmError *error);

/* The probed uuid and label (either may be empty); self: the source's own device number
 * (0 for an image), which may hold them. 0, or -EEXIST with UM_ERROR_KIND_INVALID_SOURCE
 * and a message that names the collision. */
int fsrefs_check_names(const char *fstype, const char *uuid, const char *label, dev_t self,
                       UmError *error);

/* The same against other files, for tests: fstab and crypttab paths (NULL: skipped) and
 * the directory holding by-uuid and by-label (NULL: skipped). */
int fsrefs_check_names_in(const char *fstab, const char *crypttab, const char *disk_dir,
                          const char *fstype, const char *uuid, const char *label, dev_t self,
                          UmError *error);

/* After authorization, for a read-only mount of a block device (not of an image, whose loop
 * device is read-only): refuses an ext2/3/4 filesystem with orphaned inodes, which the
 * driver cleans up, writing, even on a read-only mount. */
int fsrefs_check_read_only_device(int fd, const char *fstype, UmError *error);

/* On the new, still detached mount (mountbuild.c): btrfs mounted from exactly one device (what the kernel
 * assembled, whatever the superblock said when it was checked). */
int fsrefs_check_mounted(int mount_fd, const char *fstype, UmError *error);
