/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loop devices for image files: always a fresh device from /dev/loop-control, configured
 * in one LOOP_CONFIGURE call with autoclear, never one a caller named.
 */
#pragma once

#include <stdbool.h>

#include "um-error.h"

/*
 * Attaches backing_fd (a regular file) to a free loop device with LO_FLAGS_AUTOCLEAR, plus
 * LO_FLAGS_READ_ONLY when read_only, retrying if another process races for the same
 * device. On success returns 0, *ret_fd is an O_CLOEXEC fd of the loop device (opened
 * read-only when read_only) and *ret_path its /dev/loopN name (owned by the caller,
 * free()). Closing the last fd of an unmounted loop device detaches it (autoclear).
 */
int loop_attach(int backing_fd, bool read_only, int *ret_fd, char **ret_path, UmError *error);

/*
 * Whether the file behind backing_fd already backs a loop device that is in use (held
 * exclusively, as by a mounted filesystem), compared by device and inode through
 * LOOP_GET_STATUS64, so renames and other paths do not hide it: 1 and
 * *ret_path (owned, may be NULL) naming the loop device, 0 if not, -errno. Two loop
 * devices on one image mean two filesystem instances writing the same blocks.
 */
int loop_find_backing(int backing_fd, char **ret_path);
