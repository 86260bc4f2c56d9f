/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Minimal leveled logging to stderr with syslog-style "<N>" prefixes, which journald
 * turns into priorities when the daemon runs under systemd.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static LogLevel max_level = LOG_LEVEL_INFO;

void log_set_max_level(LogLevel level) {
        max_level = level;
}

int log_full_errno(LogLevel level, int error, const char *fmt, ...) {
        char buf[2048];
        va_list ap;

        if (level > max_level)
                return error < 0 ? error : -error;

        /* %m refers to the error passed in, not whatever errno is now. */
        errno = error < 0 ? -error : error;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);

        fprintf(stderr, "<%d>%s\n", (int) level, buf);
        return error < 0 ? error : -error;
}
