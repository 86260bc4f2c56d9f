/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unmount latency: a client mounts the image with MountFd (untimed) and times Unmount of
 * the mount point it got, against the raw unmount of the same kind of mount made in
 * process (fresh loop device, fsmount, move_mount onto a directory; umount2 timed).
 */
#pragma once

#include "bench.h"

/* b->report.raw_umount, as root without the bus. 0, or -errno after bench_step_failed(). */
int unmount_measure_raw(Bench *b);

/* b->report.unmount, through the daemon. 0, or -errno after bench_step_failed(). */
int unmount_measure_daemon(Bench *b);
