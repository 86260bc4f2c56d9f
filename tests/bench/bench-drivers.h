/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's drivers against the userspace ones (issue 14), with params["driver"] =
 * "kernel" and "userspace" on the same image: OpenMount latency as the other rows measure
 * it, the cycle through the close of the mount (and, for a userspace driver, until the
 * driver exited with it), the CPU per mount of the daemon, its workers and the driver, and
 * the sequential read of a 64 MiB file through the mount attached in the caller's mount
 * namespace (a fresh mount each time, so the mounted filesystem's page cache is cold). ext4
 * and squashfs are measured both ways; vfat, exfat and ntfs3, which this kernel has no
 * driver for, through their userspace driver alone (images made empty by their mkfs).
 */
#pragma once

#include "bench.h"

/* Makes the images, measures, fills b->report.drivers. A driver or mkfs that is not
 * installed skips its rows (with the reason). 0, or -errno after bench_step_failed(). */
int drivers_measure(Bench *b);
