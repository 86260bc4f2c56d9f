/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The benchmark's output on stdout: the latency table, the pieces of a request, the runs
 * with extra mounts and with concurrent clients, the daemon's memory, fds and worker pool,
 * and the design's targets, each "met" or "MISSED" with the figures it was judged on.
 */
#pragma once

#include "bench.h"

/* Prints what b->report holds; rows that were not measured (a failed run) are left out. */
void report_print(const Bench *b);
