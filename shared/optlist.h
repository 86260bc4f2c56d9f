/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An option string ("ro,noatime,commit=5") split into key/value items as libmount's
 * parser, after the checks of its raw bytes that need no knowledge of any option: length,
 * UTF-8, control characters, quotes and backslashes, empty items. Used for a caller's
 * options on every request and for the configuration's DefaultOptions= and
 * ForcedOptions=, which are split once, when the file is loaded (conf.c). What each item
 * may be is policy.c's business.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "um-error.h"

/* Upper bound of an option string, in bytes (docs/security.md, class 10). */
#define OPTION_STRING_MAX 4096

/* One key[=value] item; both point into OptionList.buf. */
typedef struct OptionItem {
        char *key;
        char *value; /* NULL for a flag */
} OptionItem;

typedef struct OptionList {
        char *buf; /* a copy of the option string, cut into NUL-terminated keys and values */
        OptionItem *items;
        size_t n_items;
} OptionList;

/*
 * Checks the bytes of options and splits it into *ret (owned: option_list_done()). ""
 * gives an empty list. -EINVAL with UM_ERROR_KIND_INVALID_ARGUMENT and a sentence in
 * error when the string is not acceptable, -ENOMEM; *ret is untouched on failure.
 */
int option_list_split(const char *options, OptionList *ret, UmError *error);

/* Frees what option_list_split() allocated and empties l; accepts an empty list. */
void option_list_done(OptionList *l);

/* Whether l has an item with this key. */
bool option_list_has(const OptionList *l, const char *key);
