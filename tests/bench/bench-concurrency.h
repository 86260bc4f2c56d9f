/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * n concurrent clients, each with its own connection and image, started at once, each
 * doing b->opt.requests OpenMounts; meanwhile the daemon's RSS and worker count are
 * sampled every 2 ms for their peaks (b->report).
 */
#pragma once

#include "bench.h"

/* The run's figures in *ret. 0, or -errno after the failure was recorded in b->report. */
int concurrency_measure(Bench *b, unsigned n, ConcurrencyRun *ret);
