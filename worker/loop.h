/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loop devices for image files: always a fresh device from /dev/loop-control, configured
 * in one LOOP_CONFIGURE call with autoclear, never one a caller named.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "loopmark.h"
#include "um-error.h"

/*
 * Attaches backing_fd (a regular file) to a free loop device with LO_FLAGS_AUTOCLEAR, plus
 * LO_FLAGS_READ_ONLY when read_only, retrying if another process races for the same
 * device. On success returns 0, *ret_fd is an O_CLOEXEC fd of the loop device (opened
 * read-only when read_only) and *ret_path its /dev/loopN name (owned by the caller,
 * free()). Closing the last fd of an unmounted loop device detaches it (autoclear).
 */
int loop_attach(int backing_fd, bool read_only, int *ret_fd, char **ret_path, UmError *error);

/* The same, marked for udev (loopmark.h) under mark_dir. */
int loop_attach_marked(int backing_fd, bool read_only, const char *mark_dir, int *ret_fd,
                       char **ret_path, UmError *error);

/* The same for the byte range [offset, offset + size) of the file (a partition of an
 * image), set in the same LOOP_CONFIGURE call (lo_offset, lo_sizelimit): the device ends
 * where the partition ends, and the filesystem on it never reads the next partition. size
 * 0: to the end of the file. */
int loop_attach_range(int backing_fd, bool read_only, uint64_t offset, uint64_t size,
                      const char *mark_dir, int *ret_fd, char **ret_path, UmError *error);

/*
 * Whether the file behind backing_fd already backs a loop device that is in use (held
 * exclusively, as by a mounted filesystem), compared by device and inode through
 * LOOP_GET_STATUS64, so renames and other paths do not hide it: 1 and
 * *ret_path (owned, may be NULL) naming the loop device, 0 if not, -errno. Two loop
 * devices on one image mean two filesystem instances writing the same blocks.
 */
int loop_find_backing(int backing_fd, char **ret_path);

/* The same, for the loop devices whose byte range of the file overlaps [offset, offset +
 * size) (size 0: to the end): two partitions of one image can be mounted at once, one
 * partition twice cannot. With read_only, read-only loop devices do not count: read-only
 * mounts of one filesystem may be many (claim.h). */
int loop_find_backing_range(int backing_fd, uint64_t offset, uint64_t size, bool read_only,
                            char **ret_path);
