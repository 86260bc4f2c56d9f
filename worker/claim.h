/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One writer per filesystem: the claims on image files that make a second read-write
 * mount of one filesystem DeviceBusy, whichever driver serves either.
 *
 * The kernel claims a block device itself: a mounted filesystem holds its device
 * exclusively, and so does a userspace driver, whose source is opened O_EXCL
 * (jobs-userspace.c). An image file has no such claim, so usermount makes one: a byte
 * range of the image (all of it, or a partition's) is claimed with an open file
 * description lock (F_OFD_SETLK) on a lock file of its own for the image's inode, in the
 * runtime directory (root's; nothing a user can lock), shared for a read-only mount and
 * exclusive for a read-write one. A claim is checked against the other claims and against
 * every loop device that holds a part of the range (loop_find_backing_range(): a mounted
 * loop device, root's own "mount -o loop" included), in that order, so that two claimers
 * never both find the other absent. It lasts as long as its fd: a userspace driver
 * inherits it and holds it for its life; a worker that attaches a loop device holds it
 * until the loop device is bound, which is the claim from then on.
 *
 * What read-only beside read-write means: nothing. A read-only mount of a filesystem that
 * another mount writes sees metadata change under it (to a driver, a hostile image), so a
 * read-only claim excludes a read-write one and the other way round; read-only mounts of
 * one image may be many. A block device (and a loop device of a partition) is mounted
 * once, read-only or not: the kernel's exclusive claim knows no shared one.
 *
 * A claim found held is tried again for a second (the driver of a mount just unmounted
 * lets go when it has exited) before the request is DeviceBusy.
 *
 * Lock files are FIFOs: an exclusive lock needs an fd open for writing, and the driver
 * that inherits it is not trusted with a file it could grow until /run is full. Writing
 * to a FIFO fills its pipe buffer at most (64 KiB, or pipe-max-size, 1 MiB, for a process
 * without CAP_SYS_RESOURCE) and then fails with EAGAIN (the fd is non-blocking). A
 * regular lock file of an older version is honoured while somebody holds it, and replaced
 * by a FIFO once nobody does.
 *
 * Lock files outlive their claims; each claim removes the unheld lock files it finds (a
 * few at a time), with the care that uidclaim.h takes.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "um-error.h"

/* Below the runtime directory. */
#define CLAIM_DIR "claims"

/*
 * Claims [offset, offset + size) (size 0: to the end) of the image file image_fd is open
 * on, shared (read_only) or exclusive, with lock files in dir/CLAIM_DIR. On success
 * *ret_fd holds the claim (close-on-exec; the caller clears that to hand it on). -EBUSY
 * with UM_ERROR_KIND_DEVICE_BUSY and a sentence that says what holds it; other -errno with
 * error set.
 */
int claim_image(int image_fd, uint64_t offset, uint64_t size, bool read_only,
                const char *dir, int *ret_fd, UmError *error);

/* The same check without taking anything (before polkit is asked): 0 when the claim
 * could be had now, -EBUSY with error set when not. */
int claim_image_check(int image_fd, uint64_t offset, uint64_t size, bool read_only,
                      const char *dir, UmError *error);
