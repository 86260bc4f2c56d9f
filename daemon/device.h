/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Block devices named by path (Mount): opening them safely, and the checks that decide
 * whether one may be mounted at all (not mounted anywhere, not swap, not held by
 * device-mapper/md/another user, not a whole disk with partitions, not a loop device the
 * caller picked).
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "um-error.h"

/*
 * Opens the block device at path for the daemon: path must be absolute, without "..",
 * "//" or control characters, and either a node directly in /dev (e.g. /dev/sdb1) or a
 * /dev/disk/by-* symlink whose target resolves inside /dev to a block device. Loop devices
 * (major 7) are refused: images go through MountFd. Opened O_RDONLY|O_CLOEXEC|O_NONBLOCK
 * (or O_RDWR when !read_only) through openat2 so that nothing outside /dev is reached.
 * -EINVAL/-ENOENT/-ENOTBLK with UM_ERROR_KIND_INVALID_SOURCE or INVALID_ARGUMENT.
 */
int device_open(const char *path, bool read_only, int *ret_fd, char **ret_node, UmError *error);

/*
 * Refuses a whole disk that has partitions (naming them: "/dev/sdb has partitions sdb1,
 * sdb2; mount one of them") -> UM_ERROR_KIND_INVALID_SOURCE.
 */
int device_check_not_partitioned(dev_t devnum, UmError *error);

/*
 * Whether the device is in use: mounted anywhere in any mount namespace (the kernel
 * holds it exclusively: an O_EXCL open fails with EBUSY), used as swap (/proc/swaps),
 * held by another device (sysfs holders/: dm, md, LVM). -EBUSY with
 * UM_ERROR_KIND_DEVICE_BUSY and a message saying which.
 */
int device_check_not_busy(dev_t devnum, UmError *error);
