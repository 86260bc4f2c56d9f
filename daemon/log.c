/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Leveled logging: to stderr with syslog-style "<N>" prefixes (which journald turns into
 * priorities when it reads a stream), or straight to the journal with structured fields,
 * which is what an administrator filters on ("journalctl USERMOUNT_UID=1000").
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
/* The entry names the place that logged (CODE_FILE, CODE_LINE, CODE_FUNC of the LogSite);
 * without this, sd_journal_sendv() would add log.c's own place beside it. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "log.h"
#include "utf8.h"

static LogLevel max_level = LOG_LEVEL_INFO;
static LogTarget target = LOG_TARGET_AUTO;
static bool target_resolved;

void log_set_max_level(LogLevel level) {
        max_level = level;
}

void log_set_target(LogTarget t) {
        target = t;
        target_resolved = false;
}

int log_target_from_string(const char *s) {
        if (streq(s, "auto"))
                return LOG_TARGET_AUTO;
        if (streq(s, "stderr"))
                return LOG_TARGET_STDERR;
        if (streq(s, "journal"))
                return LOG_TARGET_JOURNAL;
        return -EINVAL;
}

static int parse_u64(const char *s, const char **ret_end, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0)
                return -errno;
        *ret_end = end;
        *ret = v;
        return 0;
}

bool log_fd_is_journal_stream(int fd, const char *journal_stream) {
        const char *p;
        uint64_t dev, ino;
        struct stat st;

        /* systemd sets JOURNAL_STREAM for a service whose stdout/stderr is the journal;
         * a child that inherited the variable but not the fd must not trust it, hence the
         * comparison with the fd itself. */
        if (parse_u64(journal_stream, &p, &dev) < 0 || *p != ':' ||
            parse_u64(p + 1, &p, &ino) < 0 || *p != 0)
                return false;
        if (fstat(fd, &st) < 0)
                return false;
        return (uint64_t) st.st_dev == dev && (uint64_t) st.st_ino == ino;
}

static LogTarget log_resolve_target(void) {
        if (!target_resolved && target == LOG_TARGET_AUTO)
                target = log_fd_is_journal_stream(STDERR_FILENO, getenv("JOURNAL_STREAM")) ?
                                 LOG_TARGET_JOURNAL : LOG_TARGET_STDERR;
        target_resolved = true;
        return target;
}

char *log_escape(const char *s, char *buf, size_t n) {
        const unsigned char *p = (const unsigned char *) strempty(s);
        size_t o = 0;

        if (n == 0)
                return buf;
        while (*p) {
                uint32_t cp = 0;
                size_t len = utf8_decode(p, &cp);
                bool unsafe = len == 0 || utf8_char_unsafe(cp);
                size_t need = unsafe ? 4 * (len ?: 1) : len;

                if (o + need >= n)
                        break;
                if (unsafe)
                        for (size_t i = 0; i < (len ?: 1); i++, o += 4)
                                snprintf(buf + o, n - o, "\\x%02x", p[i]);
                else {
                        memcpy(buf + o, p, len);
                        o += len;
                }
                p += len ?: 1;
        }
        buf[o] = 0;
        return buf;
}

/* log_escape() into a new string big enough for all of s; NULL for NULL or -ENOMEM. */
static char *log_escape_dup(const char *s) {
        size_t n;
        char *buf;

        if (!s)
                return NULL;
        n = strlen(s) * 4 + 1;
        buf = malloc(n);
        return buf ? log_escape(s, buf, n) : NULL;
}

void log_fields_done(LogFields *f) {
        for (size_t i = 0; i < f->n; i++)
                free(f->strings[i]);
        *f = (LogFields) {};
}

/* Appends "NAME=value" to f; a NULL value adds nothing. */
static int log_fields_add(LogFields *f, const char *name, const char *value) {
        char *s;

        if (!value)
                return 0;
        if (f->n >= LOG_FIELDS_MAX)
                return -ENOBUFS;
        if (asprintf(&s, "%s=%s", name, value) < 0)
                return -ENOMEM;
        f->strings[f->n] = s;
        f->iov[f->n] = (struct iovec) { .iov_base = s, .iov_len = strlen(s) };
        f->n++;
        return 0;
}

/* The same with value escaped (log_escape()). */
static int log_fields_add_escaped(LogFields *f, const char *name, const char *value) {
        _cleanup_free_ char *escaped = NULL;

        if (!value)
                return 0;
        escaped = log_escape_dup(value);
        if (!escaped)
                return -ENOMEM;
        return log_fields_add(f, name, escaped);
}

int log_fields_build(LogLevel level, int error, const LogSite *site, const LogRequest *req,
                     const char *message, LogFields *ret) {
        char priority[16], line[16], err[16], uid[16];
        LogFields f = {};
        int r;

        snprintf(priority, sizeof(priority), "%d", (int) level);
        snprintf(err, sizeof(err), "%d", error < 0 ? -error : error);
        r = log_fields_add_escaped(&f, "MESSAGE", message);
        if (r >= 0)
                r = log_fields_add(&f, "PRIORITY", priority);
        if (r >= 0)
                r = log_fields_add(&f, "SYSLOG_IDENTIFIER", "usermountd");
        if (r >= 0 && error != 0)
                r = log_fields_add(&f, "ERRNO", err);
        if (r >= 0 && site) {
                snprintf(line, sizeof(line), "%d", site->line);
                r = log_fields_add(&f, "CODE_FILE", site->file);
                if (r >= 0 && site->line > 0)
                        r = log_fields_add(&f, "CODE_LINE", line);
                if (r >= 0)
                        r = log_fields_add(&f, "CODE_FUNC", site->func);
        }
        if (r >= 0 && req) {
                snprintf(uid, sizeof(uid), "%u", (unsigned) req->uid);
                if (req->uid != LOG_UID_NONE)
                        r = log_fields_add(&f, "USERMOUNT_UID", uid);
                if (r >= 0)
                        r = log_fields_add_escaped(&f, "USERMOUNT_DEVICE", req->device);
                if (r >= 0)
                        r = log_fields_add_escaped(&f, "USERMOUNT_ACTION", req->action);
                if (r >= 0)
                        r = log_fields_add_escaped(&f, "USERMOUNT_FSTYPE", req->fstype);
                if (r >= 0)
                        r = log_fields_add_escaped(&f, "USERMOUNT_MOUNT_POINT", req->mount_point);
        }
        if (r < 0) {
                log_fields_done(&f);
                return r;
        }
        *ret = f;
        return 0;
}

static int log_to_journal(LogLevel level, int error, const LogSite *site, const LogRequest *req,
                          const char *message) {
        LogFields f;
        int r;

        r = log_fields_build(level, error, site, req, message, &f);
        if (r < 0)
                return r;
        r = sd_journal_sendv(f.iov, (int) f.n);
        log_fields_done(&f);
        return r;
}

int log_internal(LogLevel level, int error, const LogSite *site, const LogRequest *req,
                 const char *fmt, ...) {
        char buf[2048], escaped[sizeof(buf) * 4];
        va_list ap;

        if (level > max_level)
                return error < 0 ? error : -error;

        /* %m refers to the error passed in, not whatever errno is now. */
        errno = error < 0 ? -error : error;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        /* One line, shown as it is: on stderr a newline would start a new entry (with a
         * priority of the caller's choosing) in journald's stream parser. */
        log_escape(buf, escaped, sizeof(escaped));

        /* A message the journal does not take (not running, full) still goes somewhere. */
        if (log_resolve_target() != LOG_TARGET_JOURNAL ||
            log_to_journal(level, error, site, req, escaped) < 0)
                fprintf(stderr, "<%d>%s\n", (int) level, escaped);
        return error < 0 ? error : -error;
}
