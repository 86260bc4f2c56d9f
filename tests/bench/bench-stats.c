/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Latency samples and their summary (see bench-stats.h). */
#include <stdlib.h>
#include <time.h>

#include "bench-stats.h"

uint64_t stats_now_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with at least p percent of the samples at or below
 * it, so p99 of 200 samples is the 198th, never an interpolated value nobody measured. */
static uint64_t percentile(const uint64_t *sorted, size_t n, unsigned p) {
        size_t rank = (n * p + 99) / 100;

        return sorted[rank > 0 ? rank - 1 : 0];
}

void stats_summarize(uint64_t *samples_ns, size_t n, Summary *ret) {
        uint64_t sum = 0;

        *ret = (Summary) { .n = n };
        if (n == 0)
                return;
        qsort(samples_ns, n, sizeof(*samples_ns), cmp_u64);
        for (size_t i = 0; i < n; i++)
                sum += samples_ns[i];
        ret->p50_ns = percentile(samples_ns, n, 50);
        ret->p90_ns = percentile(samples_ns, n, 90);
        ret->p99_ns = percentile(samples_ns, n, 99);
        ret->max_ns = samples_ns[n - 1];
        ret->mean_ns = sum / n;
}
