/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How the usermount client talks to the person at the terminal: error lines on stderr,
 * prefixed "usermount: ", and escaping of every string that did not come from our own
 * source code (labels and paths from the daemon or a device, the caller's own paths).
 */
#pragma once

#include <stdbool.h>

#include "macro.h"

/* Prints "usermount: <message>\n" on stderr. Never pass untrusted data as the format. */
void log_error(const char *fmt, ...) _printf_(1, 2);

/* Like log_error(), with errno set to -error (or error) for %m. */
void log_error_errno(int error, const char *fmt, ...) _printf_(2, 3);

/*
 * true if s is valid UTF-8 (what D-Bus requires of every string); rejects overlong forms,
 * surrogates and code points above U+10FFFF.
 */
bool output_utf8_is_valid(const char *s);

/*
 * Returns a newly allocated copy of s (NULL: "") that is safe to print on a terminal:
 * every character utf8_char_unsafe() names (C0 and C1 controls and DEL, which start
 * escape sequences; line separators; bidi overrides, isolates and marks and the other
 * invisible format characters, which make text display as something it is not) and
 * every byte that is not valid UTF-8 is written as \xNN, one per byte. Backslashes are
 * kept: the daemon already escapes its strings this way (um_escape()), and escaping them
 * again would garble its output. Returns NULL only when out of memory; the caller frees
 * the result.
 */
char *output_escape(const char *s);

/*
 * The number of terminal columns s takes (s valid UTF-8 without control characters, as
 * output_escape() returns it): wide characters count 2, combining marks 0, measured with
 * the C.UTF-8 locale's tables whatever locale the user has, and 1 per character when
 * that locale is missing.
 */
size_t output_width(const char *s);
