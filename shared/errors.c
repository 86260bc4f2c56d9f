/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * UmError helpers and the one mapping from error classes to D-Bus error names.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "um-error.h"
#include "usermount-names.h"
#include "utf8.h"

int um_error_set(UmError *e, UmErrorKind kind, int err, const char *fmt, ...) {
        if (err < 0)
                err = -err;
        if (err == 0)
                err = EIO;

        if (e) {
                va_list ap;

                e->kind = kind;
                e->error = err;
                va_start(ap, fmt);
                vsnprintf(e->message, sizeof(e->message), fmt, ap);
                va_end(ap);
        }
        return -err;
}

static const char *const kind_names[_UM_ERROR_KIND_MAX] = {
        [UM_ERROR_KIND_NONE] = UM_ERROR_FAILED,
        [UM_ERROR_KIND_FAILED] = UM_ERROR_FAILED,
        [UM_ERROR_KIND_INVALID_ARGUMENT] = UM_ERROR_INVALID_ARGUMENT,
        [UM_ERROR_KIND_INVALID_SOURCE] = UM_ERROR_INVALID_SOURCE,
        [UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED] = UM_ERROR_FILESYSTEM_NOT_ALLOWED,
        [UM_ERROR_KIND_OPTION_NOT_ALLOWED] = UM_ERROR_OPTION_NOT_ALLOWED,
        [UM_ERROR_KIND_DEVICE_BUSY] = UM_ERROR_DEVICE_BUSY,
        [UM_ERROR_KIND_INVALID_TARGET] = UM_ERROR_INVALID_TARGET,
        [UM_ERROR_KIND_NOT_MOUNTED] = UM_ERROR_NOT_MOUNTED,
        [UM_ERROR_KIND_NOT_AUTHORIZED] = UM_ERROR_NOT_AUTHORIZED,
        [UM_ERROR_KIND_NOT_AUTHORIZED_CAN_OBTAIN] = UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN,
        [UM_ERROR_KIND_LIMIT_EXCEEDED] = UM_ERROR_LIMIT_EXCEEDED,
};

const char *um_error_kind_to_name(UmErrorKind kind) {
        if ((unsigned) kind >= _UM_ERROR_KIND_MAX)
                return UM_ERROR_FAILED;
        return kind_names[kind];
}

char *um_escape(const char *s, char *buf, size_t n) {
        const unsigned char *p = (const unsigned char *) strempty(s);
        size_t o = 0;

        if (n == 0)
                return buf;

        while (*p && o + 1 < n) {
                uint32_t cp;
                size_t len = utf8_decode(p, &cp);
                /* Controls (C1 ones such as U+009B CSI start escape sequences on some
                 * terminals) and bidi and invisible characters, byte by byte. */
                bool plain = len > 0 && !utf8_char_unsafe(cp) && *p != '\\';

                if (plain) {
                        if (o + len >= n)
                                break;
                        memcpy(buf + o, p, len);
                        o += len;
                        p += len;
                } else {
                        if (o + 4 >= n)
                                break;
                        snprintf(buf + o, n - o, "\\x%02x", *p);
                        o += 4;
                        p++;
                }
        }
        buf[o] = 0;
        return buf;
}
