/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Latency samples and their summary (percentiles by nearest rank), and the clock the
 * benchmark measures with.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct Summary {
        size_t n;
        uint64_t p50_ns, p90_ns, p99_ns, max_ns, mean_ns;
} Summary;

/* CLOCK_MONOTONIC in nanoseconds: the same clock in every process of the machine, so
 * timestamps taken by forked clients compare with the bench's own. */
uint64_t stats_now_ns(void);

/* Summarizes n samples (sorts them in place). n == 0 gives an all-zero summary. */
void stats_summarize(uint64_t *samples_ns, size_t n, Summary *ret);

/* Nanoseconds as milliseconds, for printing. */
static inline double stats_ms(uint64_t ns) {
        return (double) ns / 1e6;
}
