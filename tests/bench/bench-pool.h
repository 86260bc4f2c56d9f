/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's worker pool counts. At exit the daemon logs, to its stderr (which is the
 * bench's, build-bench/bench.log under tools/bench), one line containing
 *
 *         worker pool: <S> spawned, <H> hits, <M> misses
 *
 * (any prefix, such as "<6>", before it). The bench reads its stderr back once the daemon
 * has stopped and takes the last such line after the daemon started.
 */
#pragma once

#include <sys/types.h>

#include "bench.h"

/* Where the daemon's output will begin: our stderr's offset now, or -1 when stderr is
 * not a regular file (a pipe, a terminal), which the bench cannot read back. */
off_t pool_log_start(void);

/* Reads the counts written since log_start into *ret: found 1 with the counts, 0 when
 * there is no such line, -errno when stderr cannot be read back. */
void pool_read(off_t log_start, PoolReport *ret);
