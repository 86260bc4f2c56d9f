/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The time of a clock in microseconds, as deadlines, durations and sd_notify want it.
 */
#pragma once

#include <stdint.h>
#include <time.h>

static inline uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        (void) clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000) + (uint64_t) ts.tv_nsec / 1000U;
}
