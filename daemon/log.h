/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Logging of the daemon's edges (STYLE.md rule 5: core code returns errors, the edge that
 * decides what the user sees logs once). Messages go to stderr, which is the journal
 * under systemd. Arguments from devices or callers must be escaped with um_escape().
 */
#pragma once

#include <errno.h>

#include "macro.h"

typedef enum LogLevel {
        LOG_LEVEL_ERROR = 3,
        LOG_LEVEL_WARNING = 4,
        LOG_LEVEL_INFO = 6,
        LOG_LEVEL_DEBUG = 7,
} LogLevel;

void log_set_max_level(LogLevel level);

/* Logs with errno set to -error for %m; returns error (negative) for "return log_...". */
int log_full_errno(LogLevel level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_error_errno(error, ...) log_full_errno(LOG_LEVEL_ERROR, (error), __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_LEVEL_WARNING, (error), __VA_ARGS__)
#define log_error(...) (void) log_full_errno(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_warning(...) (void) log_full_errno(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_info(...) (void) log_full_errno(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...) (void) log_full_errno(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
