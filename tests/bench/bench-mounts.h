/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OpenMount latency as the host's mount table grows: the bench runs in a private mount
 * namespace that the daemon shares (checked), so extra mounts made there are mounts the
 * daemon and every worker it forks see and copy. For each count of b->opt.mounts the
 * extra mounts are one tmpfs and bind mounts of its directories onto themselves; they all
 * go, with one lazy unmount of the tmpfs, before it returns. At each count the daemon's
 * build worker reproduced in process (raw_build_worker(): fork, loop device, the locked-
 * mount recipe with its two unshares that copy the mount table) is timed too, to tell
 * the namespace copies from the rest of the daemon.
 */
#pragma once

#include "bench.h"

/* Fills b->report.mounts (or mounts_skipped, when the daemon is in another namespace). 0,
 * or -errno after bench_step_failed(). */
int mounts_measure(Bench *b);
