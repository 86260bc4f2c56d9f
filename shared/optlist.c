/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Option strings split into items (see optlist.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "optlist.h"
#include "utf8.h"

void option_list_done(OptionList *l) {
        free(l->buf);
        free(l->items);
        *l = (OptionList){};
}

bool option_list_has(const OptionList *l, const char *key) {
        for (size_t i = 0; i < l->n_items; i++)
                if (streq(l->items[i].key, key))
                        return true;
        return false;
}

static int oom(UmError *error) {
        return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "out of memory");
}

static int check_characters(const char *options, size_t len, UmError *error) {
        for (size_t i = 0; i < len;) {
                uint32_t cp;
                size_t n = utf8_decode((const unsigned char *) options + i, &cp);

                if (n == 0)
                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                            "the option string is not valid UTF-8 (at byte %zu)",
                                            i);
                if (utf8_char_control(cp))
                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                            "the option string contains a control character "
                                            "(U+%04X at byte %zu)", (unsigned) cp, i);
                if (cp == '\'' || cp == '"' || cp == '\\')
                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                            "the option string contains %c at byte %zu: options "
                                            "are never quoted or escaped, so quotes and "
                                            "backslashes are not accepted", (char) cp, i);
                i += n;
        }
        return 0;
}

/* Checks of the raw bytes, before anything splits the string (docs/security.md 8, 10). */
static int check_bytes(const char *options, UmError *error) {
        size_t len = strnlen(options, OPTION_STRING_MAX + 1);
        int r;

        if (len > OPTION_STRING_MAX)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the option string is too long: at most %d bytes are "
                                    "accepted", OPTION_STRING_MAX);
        r = check_characters(options, len, error);
        if (r < 0)
                return r;
        if (len > 0 && (options[0] == ',' || options[len - 1] == ',' || strstr(options, ",,")))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the option string has an empty item (a leading, trailing "
                                    "or doubled ',')");
        return 0;
}

/*
 * Splits a checked option string (no empty item, no quote or backslash: check_bytes())
 * at each ',' into "key" or "key=value" items, the way libmount's mnt_optstr_next_option()
 * does for such strings: the first '=' after the key's first character starts the value
 * ("a=" has the empty value, "=b" is a key). Done here, so that the daemon's main process
 * needs no libmount (only its workers do).
 */
static int split(const char *options, OptionList *ret, UmError *error) {
        _cleanup_(option_list_done) OptionList l = {};
        /* No empty items: n items take at least 2n - 1 bytes. */
        size_t max_items = strlen(options) / 2 + 1;

        l.buf = strdup(options);
        l.items = calloc(max_items, sizeof(OptionItem));
        if (!l.buf || !l.items)
                return oom(error);
        for (char *p = l.buf; *p;) {
                char *end = p + strcspn(p, ","), *eq;
                bool last = *end == 0;

                if (l.n_items >= max_items)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL,
                                            "internal error: more options than expected");
                *end = 0;
                eq = p[0] ? strchr(p + 1, '=') : NULL;
                if (eq)
                        *eq = 0;
                l.items[l.n_items++] = (OptionItem) { .key = p, .value = eq ? eq + 1 : NULL };
                if (last)
                        break;
                p = end + 1;
        }

        *ret = l;
        l = (OptionList){};
        return 0;
}

int option_list_split(const char *options, OptionList *ret, UmError *error) {
        int r;

        r = check_bytes(options, error);
        if (r < 0)
                return r;
        return split(options, ret, error);
}
