/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Logging of the daemon's edges (docs/style.md rule 5: core code returns errors, the edge that
 * decides what the user sees logs once). Messages go to stderr with "<N>" priority
 * prefixes, or, when stderr is the journal or --log-target=journal asks for it, to the
 * journal as structured entries: MESSAGE, PRIORITY, CODE_FILE/LINE/FUNC and, for events
 * of a request, USERMOUNT_UID/DEVICE/ACTION/FSTYPE/MOUNT_POINT, so that an administrator
 * can ask journalctl for one user's or one device's history. Arguments from devices or
 * callers must be escaped with um_escape(); as a second line of defence every message and
 * every USERMOUNT_* value goes through log_escape() on its way out, so that no control or
 * direction-changing character from a caller (a target path, a label) ever reaches the
 * journal, a terminal or journald's stream parser as it is.
 */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "macro.h"

typedef enum LogLevel {
        LOG_LEVEL_ERROR = 3,
        LOG_LEVEL_WARNING = 4,
        LOG_LEVEL_INFO = 6,
        LOG_LEVEL_DEBUG = 7,
} LogLevel;

typedef enum LogTarget {
        LOG_TARGET_AUTO,    /* the journal if stderr is connected to it, else stderr */
        LOG_TARGET_STDERR,
        LOG_TARGET_JOURNAL, /* falls back to stderr for a message the journal refuses */
} LogTarget;

void log_set_max_level(LogLevel level);
void log_set_target(LogTarget target);

/* "auto", "stderr", "journal" -> LogTarget; -EINVAL for anything else. */
int log_target_from_string(const char *s);

/*
 * Copies s into buf (size n > 0, always NUL-terminated, cut at a character boundary when
 * it does not fit) with each byte of what a log must not carry as it is written as
 * "\xNN": every code point utf8_char_unsafe() names (controls, newline and tab included;
 * line separators; bidi marks, overrides and isolates and the other invisible format
 * characters that make a line display as something it is not; noncharacters), and every
 * byte that is not valid UTF-8. Backslashes are kept, so that text um_escape() already escaped is
 * not escaped twice (and escaping again changes nothing). Returns buf. Pure.
 */
char *log_escape(const char *s, char *buf, size_t n);

/* Whether fd is the journal's stream as $JOURNAL_STREAM ("DEV:INO") describes it. */
bool log_fd_is_journal_stream(int fd, const char *journal_stream);

/* What one request event is about; NULL strings and LOG_UID_NONE are left out. */
#define LOG_UID_NONE ((uid_t) -1)
typedef struct LogRequest {
        uid_t uid;
        const char *device;
        const char *action;      /* "mount", "unmount", "refuse", "vanished", "idle-exit"... */
        const char *fstype;
        const char *mount_point;
} LogRequest;

/* Where in the code a message comes from. */
typedef struct LogSite {
        const char *file;
        int line;
        const char *func;
} LogSite;

#define LOG_FIELDS_MAX 12 /* every field log_fields_build() knows */

/* The journal fields of one entry: iov[0..n) point into strings owned by the struct. */
typedef struct LogFields {
        struct iovec iov[LOG_FIELDS_MAX];
        char *strings[LOG_FIELDS_MAX];
        size_t n;
} LogFields;

/*
 * Builds the journal fields of one entry (pure: no I/O, no global state): MESSAGE=message,
 * PRIORITY=level, SYSLOG_IDENTIFIER=usermountd, CODE_FILE/CODE_LINE/CODE_FUNC from site
 * (each only if known), ERRNO= for a nonzero error, and the USERMOUNT_* fields of req
 * (may be NULL). The message and the USERMOUNT_* values are escaped with log_escape()
 * (the journal would keep binary data, but journalctl shows it to an administrator's
 * terminal); the others are the daemon's own and copied as they are. On success *ret
 * holds them (free with log_fields_done()); -ENOMEM leaves it empty.
 */
int log_fields_build(LogLevel level, int error, const LogSite *site, const LogRequest *req,
                     const char *message, LogFields *ret);
void log_fields_done(LogFields *f);

/* Logs with errno set to -error for %m; returns error (negative) for "return log_...". */
int log_internal(LogLevel level, int error, const LogSite *site, const LogRequest *req,
                 const char *fmt, ...) _printf_(5, 6);

#define LOG_SITE (&(const LogSite) { __FILE__, __LINE__, __func__ })

#define log_full_errno(level, error, ...) \
        log_internal((level), (error), LOG_SITE, NULL, __VA_ARGS__)

#define log_error_errno(error, ...) log_full_errno(LOG_LEVEL_ERROR, (error), __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_LEVEL_WARNING, (error), __VA_ARGS__)
#define log_error(...) (void) log_full_errno(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_warning(...) (void) log_full_errno(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_info(...) (void) log_full_errno(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...) (void) log_full_errno(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)

/* An event of a request: uid (LOG_UID_NONE if nobody's), device (may be NULL), action. */
#define log_request(level, uid, device, action, ...)                                      \
        (void) log_internal((level), 0, LOG_SITE,                                           \
                            &(const LogRequest) { (uid), (device), (action), NULL, NULL }, \
                            __VA_ARGS__)

/* The same, with the filesystem type and the mount point where they are known. */
#define log_request_mount(level, uid, device, action, fstype, mount_point, ...)       \
        (void) log_internal((level), 0, LOG_SITE,                                       \
                            &(const LogRequest) { (uid), (device), (action), (fstype), \
                                                  (mount_point) },                     \
                            __VA_ARGS__)
