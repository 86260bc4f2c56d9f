/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsing of the values configuration files give (usermount.conf, automount.conf). */
#pragma once

#include <errno.h>
#include <strings.h>

#include "macro.h"

/* "yes", "true", "on", "1" (any case): 1; "no", "false", "off", "0": 0; else -EINVAL. */
static inline int parse_boolean(const char *s) {
        static const char *const yes[] = { "yes", "true", "on", "1" };
        static const char *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; s && i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        }
        return -EINVAL;
}
