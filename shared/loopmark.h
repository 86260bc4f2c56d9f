/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The marks for udev of the loop devices usermount binds: their names and where they live
 * (the worker makes them, loop.h), and their sweep (the daemon's, at start and on each
 * reconcile).
 */
#pragma once

#include <stddef.h>

/*
 * Marks for udev. A user's image on a loop device must not look like a disk of the
 * system's: with /dev/disk/by-uuid and by-label links, root's "mount LABEL=", an fstab
 * line that systemd mounts when its link appears, or btrfs's device registration would
 * find it, and the kernel would hand root the user's superblock (setuid files included).
 * The worker's loop_attach_marked() (loop.h) creates <mark_dir>/loops/loopN before the
 * device is bound, so the change uevent of the binding already finds it, and renames it to
 * loopN-SEQ (the disk sequence number of this binding) once bound: the shipped udev rule
 * (59-usermount-loop.rules) skips the persistent-storage rules for a device with either
 * mark, and a later binding of loopN (someone else's, with another SEQ) matches neither.
 * A mark outlives its mount harmlessly; loop_sweep_marks() removes marks whose device is
 * unbound or bound anew, and pending ones older than LOOP_MARK_PENDING_SEC.
 */
#define LOOP_MARK_DIR "loops"
#define LOOP_MARK_PENDING_SEC 60

/* <dir>/LOOP_MARK_DIR/<name> into buf; -ENAMETOOLONG. */
int loop_mark_path(const char *dir, const char *name, char *buf, size_t size);

/* Removes the marks of dir whose device is unbound or bound anew, and pending ones older
 * than LOOP_MARK_PENDING_SEC. */
void loop_sweep_marks(const char *dir);
