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

/* C0 controls, DEL and C1 controls: the C1 range holds the 8-bit CSI that terminals still
 * honour. A subset of utf8_char_unsafe(), for text that may carry format characters. */
static inline bool utf8_char_control(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

/*
 * Code points that no text from a device or a caller (a label, a path, a name) may carry
 * as it is into a terminal, a log, a notification or a directory name. Every escaper and
 * sanitiser of such text asks this one predicate: um_escape(), log_escape(), the client's
 * output_escape() and the mount point names of mountname_sanitize().
 *
 * The set is all of Unicode's controls (Cc), format characters (Cf), line and paragraph
 * separators (Zl, Zp) and the noncharacters, for these reasons:
 *   - C0 controls, DEL and C1 controls start new lines and terminal escape sequences (ESC,
 *     and U+009B CSI on terminals that take C1 controls as 8-bit escapes).
 *   - U+2028 and U+2029 break lines where a line must stay one line (a log entry, a table
 *     row, a notification's summary).
 *   - Format characters are invisible by definition and exist to change how the text
 *     around them is shown. The bidi marks, embeddings, overrides and isolates (U+061C,
 *     U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) reorder it, so that a label
 *     U+202E "gpj.exe" shows as "exe.jpg"; zero-width characters, the soft hyphen, the word
 *     joiner, the BOM and the invisible operators hide, so that two different names look
 *     the same; the tag characters (U+E0000..U+E007F) carry whole invisible ASCII strings.
 *     All of them are taken, not a hand-picked few, so that there is no judgement to redo
 *     when Unicode adds one; tests/unit/test-log.c checks the table against GLib's.
 *   - Noncharacters (U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF) are not for interchange, and
 *     U+FFFE reads as a byte-swapped BOM.
 * The price is paid by text that uses format characters as intended: the zero-width
 * joiner and non-joiner of Persian or Indic words and of emoji sequences (a family emoji
 * shows as its members) and the tags of subdivision flags come out escaped. Such text
 * still reads, and nothing in it is hidden.
 *
 * Everything else is kept: letters of every script, marks (combining accents, the emoji
 * variation selector), spaces, symbols and emoji, private use and unassigned code points;
 * an accented letter, a CJK name or an emoji stays as it is. Letters that look like other
 * letters are not this predicate's business: no escaping can tell a Cyrillic "a" (U+0430)
 * from a Latin one without garbling every Cyrillic label.
 */
typedef struct Utf8Range {
        uint32_t first, last;
} Utf8Range;

static inline bool utf8_char_unsafe(uint32_t cp) {
        /* Sorted; Unicode 15's Cc, Cf, Zl and Zp, whole blocks where a block is all Cf. */
        static const Utf8Range unsafe[] = {
                { 0x0000, 0x001f },   /* C0 controls */
                { 0x007f, 0x009f },   /* DEL, C1 controls */
                { 0x00ad, 0x00ad },   /* soft hyphen */
                { 0x0600, 0x0605 },   /* Arabic number signs */
                { 0x061c, 0x061c },   /* Arabic letter mark (bidi) */
                { 0x06dd, 0x06dd },   /* Arabic end of ayah */
                { 0x070f, 0x070f },   /* Syriac abbreviation mark */
                { 0x0890, 0x0891 },   /* Arabic pound and piastre marks above */
                { 0x08e2, 0x08e2 },   /* Arabic disputed end of ayah */
                { 0x180e, 0x180e },   /* Mongolian vowel separator */
                { 0x200b, 0x200f },   /* zero-width space, non-joiner, joiner; LRM, RLM */
                { 0x2028, 0x202e },   /* line, paragraph separators; bidi embeddings, overrides */
                { 0x2060, 0x206f },   /* word joiner, invisible operators, bidi isolates, ... */
                { 0xfeff, 0xfeff },   /* BOM, zero-width no-break space */
                { 0xfff9, 0xfffb },   /* interlinear annotations */
                { 0x110bd, 0x110bd }, /* Kaithi number sign */
                { 0x110cd, 0x110cd }, /* Kaithi number sign above */
                { 0x13430, 0x1343f }, /* Egyptian hieroglyph format controls */
                { 0x1bca0, 0x1bca3 }, /* shorthand format controls */
                { 0x1d173, 0x1d17a }, /* musical symbol format controls */
                { 0xe0000, 0xe007f }, /* tags */
        };

        if (cp >= 0x20 && cp < 0x7f)
                return false; /* printable ASCII, most of what is asked */
        if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
                return true; /* noncharacters */
        for (size_t i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]) && cp >= unsafe[i].first; i++)
                if (cp <= unsafe[i].last)
                        return true;
        return false;
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
