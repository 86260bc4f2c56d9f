/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Error lines and terminal-safe escaping for the usermount client (see output.h).
 */
#include <locale.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <wchar.h>

#include "output.h"
#include "utf8.h"

#define PROGRAM_NAME "usermount"

static void log_va(int error, const char *fmt, va_list ap) _printf_(2, 0);

static void log_va(int error, const char *fmt, va_list ap) {
        /* %m in fmt reads errno; keep the caller's error there while formatting. */
        errno = error < 0 ? -error : error;
        fputs(PROGRAM_NAME ": ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
}

void log_error(const char *fmt, ...) {
        int saved = errno;
        va_list ap;

        va_start(ap, fmt);
        log_va(saved, fmt, ap);
        va_end(ap);
        errno = saved;
}

void log_error_errno(int error, const char *fmt, ...) {
        int saved = errno;
        va_list ap;

        va_start(ap, fmt);
        log_va(error, fmt, ap);
        va_end(ap);
        errno = saved;
}

bool output_utf8_is_valid(const char *s) {
        return utf8_is_valid(strempty(s));
}

char *output_escape(const char *s) {
        const unsigned char *p = (const unsigned char *) strempty(s);
        char *buf, *o;

        /* Worst case: every byte becomes \xNN. */
        buf = malloc(strlen((const char *) p) * 4 + 1);
        if (!buf)
                return NULL;

        o = buf;
        while (*p) {
                uint32_t cp;
                size_t len = utf8_decode(p, &cp);

                if (len > 0 && !utf8_char_unsafe(cp)) {
                        memcpy(o, p, len);
                        o += len;
                        p += len;
                        continue;
                }
                /* Escape the whole sequence of an unsafe character (a C1 control, a bidi
                 * override), or the one invalid byte. */
                if (len == 0)
                        len = 1;
                for (size_t i = 0; i < len; i++)
                        o += sprintf(o, "\\x%02x", p[i]);
                p += len;
        }
        *o = 0;
        return buf;
}

size_t output_width(const char *s) {
        const unsigned char *p = (const unsigned char *) strempty(s);
        locale_t utf8, saved = (locale_t) 0;
        size_t width = 0;

        /* The terminal's locale is not ours to set; borrow C.UTF-8 for this thread. */
        utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t) 0);
        if (utf8)
                saved = uselocale(utf8);

        while (*p) {
                uint32_t cp;
                size_t len = utf8_decode(p, &cp);
                int w = 1;

                if (len == 0)
                        len = 1; /* not expected after output_escape(); count the byte */
                else if (utf8 && cp >= 0x80)
                        w = wcwidth((wchar_t) cp);
                width += w < 0 ? 1 : (size_t) w;
                p += len;
        }

        if (utf8) {
                uselocale(saved);
                freelocale(utf8);
        }
        return width;
}
