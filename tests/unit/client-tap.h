/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TAP for the client's unit test programs: check() for each case, and
 * "return tap_finish();" at the end of main().
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

static unsigned n_tests, n_failed;

static inline void check(bool ok, const char *what) {
        n_tests++;
        if (!ok)
                n_failed++;
        printf("%sok %u - %s\n", ok ? "" : "not ", n_tests, what);
}

/* Prints the plan; the exit status of main(): 1 if any check failed. */
static inline int tap_finish(void) {
        printf("1..%u\n", n_tests);
        return n_failed > 0;
}
