/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The options of one mount (mountopts.h): freed, and written out for info and logs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "mountopts.h"

void mount_options_done(MountOptions *o) {
        if (!o)
                return;
        for (size_t i = 0; i < o->n_items; i++) {
                free(o->items[i].key);
                free(o->items[i].value);
        }
        free(o->items);
        *o = (MountOptions){};
}

char *mount_options_to_string(const MountOptions *o) {
        size_t size = 1, n = 0;
        char *s;

        for (size_t i = 0; o && i < o->n_items; i++)
                size += strlen(o->items[i].key) + 2 +
                        (o->items[i].value ? strlen(o->items[i].value) : 0);
        s = malloc(size);
        if (!s)
                return NULL;
        s[0] = 0;
        for (size_t i = 0; o && i < o->n_items; i++) {
                const MountOption *m = &o->items[i];

                n += snprintf(s + n, size - n, "%s%s%s%s", i > 0 ? "," : "", m->key,
                              m->value ? "=" : "", strempty(m->value));
        }
        return s;
}
