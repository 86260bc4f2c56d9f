/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Block devices named by path (Mount): opening them safely, and the checks that decide
 * whether one may be mounted at all (not mounted anywhere, not swap, not held by
 * device-mapper/md/another user, not a whole disk with partitions, not a loop device the
 * caller picked).
 *
 * device_open() and device_check_not_busy() end in a driver's open() of a block device
 * (never of anything else), which a failing drive can stall: call them where blocking is
 * acceptable (a worker), not in the main loop. device_check_path() and
 * device_check_not_partitioned() only look at the string and at sysfs.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "um-error.h"

/*
 * Checks the device path string alone (no syscall): non-empty, shorter than 1024 bytes,
 * absolute, no control characters (C0, DEL, C1), no "//", no trailing "/", no "." or ".."
 * component, none longer than NAME_MAX, and of one of two shapes: /dev/NAME or
 * /dev/disk/by-KIND/NAME. -EINVAL with UM_ERROR_KIND_INVALID_ARGUMENT otherwise. Pure: the
 * bus edge may call it before anything else; device_open() calls it too.
 */
int device_check_path(const char *path, UmError *error);

/*
 * Where devnum (or else the source path node) is mounted according to mountinfo, a stream
 * in the format of /proc/PID/mountinfo (parsed with libmount): true and the mount point,
 * escaped, in buf; false when it is not listed or the text cannot be parsed. Reads only
 * the stream (tests/fuzz feeds it arbitrary text).
 */
bool device_mountinfo_find(FILE *mountinfo, dev_t devnum, const char *node, char *buf,
                           size_t size);

/*
 * Opens the block device at path for the daemon: path must pass device_check_path() and
 * be either a node directly in /dev (e.g. /dev/sdb1; symlinks such as /dev/cdrom are
 * refused) or a /dev/disk/by-* symlink whose target resolves inside /dev to a block device
 * (relative targets, as udev writes them). Loop devices (major 7) and their partitions are
 * refused: images go through MountFd; so are device-mapper and md devices. Nothing but a
 * block device that passed these checks is ever opened for I/O: it is opened
 * O_RDONLY|O_CLOEXEC|O_NONBLOCK (or O_RDWR when !read_only), never O_EXCL, and nothing is
 * written. On success *ret_fd is the fd (owned by the caller) and *ret_node the device's
 * kernel name, "/dev/" + DEVNAME from sysfs, checked to be the same device (malloc'd,
 * owned by the caller): what a by-* link pointed to, or the path itself.
 * Errors: -EINVAL (bad path: INVALID_ARGUMENT; symlink leaving /dev, loop/dm/md device:
 * INVALID_SOURCE), -ENOENT, -ENOTBLK, -ENODEV, -EROFS (read-write open of a write-protected
 * device), -ENOMEDIUM/-ENXIO with INVALID_SOURCE; anything else with FAILED.
 */
int device_open(const char *path, bool read_only, int *ret_fd, char **ret_node, UmError *error);

/* The same, but a whole loop device is opened if it is the binding with disk sequence
 * number loop_diskseq (a loop device the UDisks2 front set up for the caller, LoopSetup);
 * any other is refused as device_open() refuses it (0: every loop device). */
int device_open_loop(const char *path, bool read_only, uint64_t loop_diskseq, int *ret_fd,
                     char **ret_node, UmError *error);

/*
 * Refuses a whole disk that has partitions (naming them: "/dev/sdb has partitions sdb1,
 * sdb2; mount one of them") -> -EINVAL, UM_ERROR_KIND_INVALID_SOURCE. A partition, or a
 * disk the kernel made no partitions of, passes (a partition table the kernel did not
 * split is caught by source_probe()). Reads sysfs only.
 */
int device_check_not_partitioned(dev_t devnum, UmError *error);

/*
 * Whether the device is in use: mounted anywhere in any mount namespace (the kernel
 * holds it exclusively: an O_EXCL open fails with EBUSY), used as swap (/proc/swaps),
 * held by another device (sysfs holders/: dm, md, LVM) or by another exclusive opener.
 * -EBUSY with UM_ERROR_KIND_DEVICE_BUSY and a message saying which ("/dev/sdb1 is mounted
 * at /mnt", "is in use as swap", "is held by dm-0 (device-mapper)", "/dev/sdb is in use:
 * its partition /dev/sdb1 is ...", or "is mounted or in use (perhaps in another mount
 * namespace)"). The exclusive open goes through /dev/<DEVNAME> (checked to be devnum) and
 * is closed at once: the device is never kept claimed. A free device is 0. Other errors:
 * -ENODEV/-ENOENT/-ENXIO (no such device or node, INVALID_SOURCE), else FAILED.
 */
int device_check_not_busy(dev_t devnum, UmError *error);

/*
 * Refuses what device_open() refuses by kind for a device the caller passed as an fd:
 * loop devices and their partitions (the image behind one goes through MountFd itself),
 * device-mapper and md devices.
 */
int device_check_kind(dev_t devnum, UmError *error);

/*
 * The part of device_check_not_busy() that opens nothing: refuses a device that the swap
 * list, sysfs holders or this namespace's mount table show in use (or whose disk or
 * partition they do). For the time before authorization, when the device must not be
 * claimed; device_check_not_busy() decides after it.
 */
int device_check_not_listed_busy(dev_t devnum, UmError *error);

/* Whether the block device behind fd is read-only to the kernel (write-protected). */
bool device_is_read_only(int fd);
