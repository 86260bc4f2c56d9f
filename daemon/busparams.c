/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The table-driven reader of a method's a{sv} params (busparams.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "busparams.h"
#include "macro.h"

/* Reads the variant of one entry, which must hold type; wrong types are the caller's. */
static int read_value(sd_bus_message *m, const BusParam *p, BusParamValue *ret,
                      UmError *error) {
        const char sig[2] = { p->type, 0 };
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (type != 'v' || !streq(contents, sig))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter '%s' must have D-Bus type '%s'.", p->key, sig);
        r = sd_bus_message_enter_container(m, 'v', sig);
        if (r < 0)
                return r;
        r = sd_bus_message_read_basic(m, p->type, ret);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* One entry (its key already read); seen has a bit per table row. */
static int read_entry(sd_bus_message *m, const BusParamTable *t, const char *key,
                      uint64_t *seen, void *target, UmError *error) {
        BusParamValue v = {};
        size_t i;
        int r;

        for (i = 0; i < t->n_params; i++)
                if (streq(key, t->params[i].key))
                        break;
        if (i == t->n_params)
                return t->refuse(t, key, false, error);
        if (*seen & (UINT64_C(1) << i))
                return t->refuse(t, key, true, error);
        *seen |= UINT64_C(1) << i;

        r = read_value(m, &t->params[i], &v, error);
        if (r < 0)
                return r;
        return t->params[i].set(&t->params[i], &v, target, error);
}

int bus_params_read(sd_bus_message *m, const BusParamTable *t, void *target, UmError *error) {
        uint64_t seen = 0;
        unsigned n = 0;
        int r;

        if (t->n_params > 64)
                return -EINVAL; /* a table larger than the seen bits: a bug of ours */
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key;

                if (++n > t->max_entries)
                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, E2BIG,
                                            "Too many parameters.");
                r = sd_bus_message_read_basic(m, 's', &key);
                if (r < 0)
                        return r;
                r = read_entry(m, t, key, &seen, target, error);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 0;
}

int bus_param_set_bool(const BusParam *p, const BusParamValue *v, void *target, UmError *error) {
        *(bool *) ((char *) target + p->offset) = v->b;
        return 0;
}

int bus_param_set_string(const BusParam *p, const BusParamValue *v, void *target,
                         UmError *error) {
        char **field = (char **) ((char *) target + p->offset);

        free(*field);
        *field = strdup(v->s);
        return *field ? 0 : -ENOMEM;
}

int bus_params_refuse(const BusParamTable *t, const char *key, bool twice, UmError *error) {
        char esc[128], known[256] = "";
        size_t n = 0;

        if (twice)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter '%s' was given twice.", key);
        for (size_t i = 0; i < t->n_params && n < sizeof(known); i++)
                n += snprintf(known + n, sizeof(known) - n, "%s%s", i > 0 ? ", " : "",
                              t->params[i].key);
        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                            "Unknown parameter '%s' (known: %s).",
                            um_escape(key, esc, sizeof(esc)), known);
}
