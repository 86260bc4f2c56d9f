/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One filesystem type's section of the administrator's configuration ("[ext4]"): what the
 * option policy (policy.h) narrows the built-in rules with. Read by conf.c, which owns it.
 */
#pragma once

#include <stdbool.h>

#include "driverpolicy.h"
#include "optlist.h"

/* One filesystem type's section ("[ext4]"). Strings are owned by the Config. */
typedef struct ConfFsType {
        const char *name;        /* a type policy.c knows, e.g. "ext4" */
        const char *path;        /* the Conf's path, for messages that name the file; NULL for
                                  * built-in defaults */
        bool allowed;            /* listed in AllowedFilesystems= (default: all known types) */
        char **allowed_options;  /* AllowedOptions=: NULL means every option policy.c knows for
                                  * the type; else a NULL-terminated list of keys */
        char *default_options;   /* DefaultOptions=: "k=v,flag", used for keys the caller does
                                  * not give; NULL when none */
        char *forced_options;    /* ForcedOptions=: added to the built-in forced options and
                                  * never overridable by the caller; NULL when none */
        /* default_options and forced_options split into items once, when the file is loaded
         * (conf_fstype_split()): what requests use. */
        OptionList defaults;
        OptionList forced;
        DriverPolicy driver;     /* Driver=: all kinds UNSET when the section has none */
} ConfFsType;
