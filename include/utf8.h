/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict UTF-8 decoding, shared by the daemon, the client and the tests: no overlong
 * forms, no surrogates, nothing beyond U+10FFFF. Everything that judges bytes from
 * callers or devices uses this one definition of "valid".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Characters that make text display as something it is not, or start a new line or an
 * escape sequence: C0 and C1 controls, DEL, bidi controls and invisible characters (the
 * Arabic letter mark, zero-width and directional marks, line and paragraph separators,
 * embeddings and overrides, word joiners and isolates, the BOM, interlinear annotations).
 * What the daemon logs or sends back is escaped where this says so (um_escape(),
 * log_escape()).
 */
static inline bool utf8_char_unsafe(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x61c ||
               (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
               (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb);
}

/* Length of the valid UTF-8 sequence at s (1-4) and its code point, or 0 if invalid. */
static inline size_t utf8_decode(const unsigned char *s, uint32_t *ret_cp) {
        size_t len;
        uint32_t cp, min;

        if (s[0] < 0x80) {
                *ret_cp = s[0];
                return 1;
        }
        if ((s[0] & 0xe0) == 0xc0)
                len = 2, min = 0x80, cp = s[0] & 0x1f;
        else if ((s[0] & 0xf0) == 0xe0)
                len = 3, min = 0x800, cp = s[0] & 0x0f;
        else if ((s[0] & 0xf8) == 0xf0)
                len = 4, min = 0x10000, cp = s[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_cp = cp;
        return len;
}

/* true if the NUL-terminated s is valid UTF-8 throughout. */
static inline bool utf8_is_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        uint32_t cp;

        while (*p) {
                size_t len = utf8_decode(p, &cp);

                if (len == 0)
                        return false;
                p += len;
        }
        return true;
}
