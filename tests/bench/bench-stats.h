/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Latency samples and their summary (percentiles by nearest rank), the clock the
 * benchmark measures with, and its deterministic random data.
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

/* The next xorshift64 number of the sequence *x (never 0 if *x was not). */
static inline uint64_t stats_xorshift(uint64_t *x) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

/* size bytes (a multiple of 64 KiB) of xorshift64 output at path, the same in every run:
 * incompressible, so that squashfs and zram store it as it is and every driver reads as
 * many bytes. -errno. */
int stats_write_random_file(const char *path, uint64_t size);
