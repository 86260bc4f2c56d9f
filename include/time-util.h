/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The time of a clock in microseconds, as deadlines, durations and sd_notify want it, and
 * waiting for fds until a deadline.
 */
#pragma once

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        (void) clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000) + (uint64_t) ts.tv_nsec / 1000U;
}

/*
 * poll() until something in p is ready or CLOCK_MONOTONIC reaches deadline (usec): the
 * number of ready entries (> 0), 0 once the deadline passed, or -errno if poll() fails
 * (EINTR is waited through).
 */
static inline int poll_until(struct pollfd *p, nfds_t n, uint64_t deadline) {
        for (;;) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                uint64_t ms;
                int r;

                if (now >= deadline)
                        return 0;
                ms = (deadline - now + 999) / 1000;
                r = poll(p, n, ms > INT32_MAX ? INT32_MAX : (int) ms);
                if (r > 0)
                        return r;
                if (r < 0 && errno != EINTR)
                        return -errno;
        }
}
