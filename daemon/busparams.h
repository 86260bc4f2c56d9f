/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One reader for the a{sv} params of every method (org.freedesktop.UserMount1(5)), driven by a
 * table per method: each known key with its D-Bus type and the function that stores its value into
 * the method's struct. The reader enforces what every params dict must be: known keys
 * only, each at most once, of its type, at most max_entries of them; the table says how a
 * key it does not know (or a repeated one) is refused.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "um-error.h"

typedef struct BusParam BusParam;
typedef struct BusParamTable BusParamTable;

/* The value of one key as read from its variant: .b for 'b', .u for 'u', .fd for 'h'
 * (owned by the message), .s for 's' (owned by the message). */
typedef union BusParamValue {
        int b;
        uint32_t u;
        int fd;
        const char *s;
} BusParamValue;

/*
 * Stores v into target (the struct the table is for), at p->offset or wherever the key
 * goes. 0, -errno, or -EINVAL with error set (InvalidArgument) for a value it refuses.
 * What it stores is owned by target even on failure.
 */
typedef int (*BusParamSet)(const BusParam *p, const BusParamValue *v, void *target,
                           UmError *error);

struct BusParam {
        const char *key;
        char type;      /* D-Bus basic type of the value: 'b', 'u', 's' or 'h' */
        size_t offset;  /* of the field the generic setters below write */
        BusParamSet set;
};

struct BusParamTable {
        const BusParam *params;
        size_t n_params;
        unsigned max_entries; /* a dict with more: InvalidArgument, -E2BIG */
        /* Refuses key: not in the table (twice false), or given a second time. Sets error
         * (InvalidArgument) and returns -EINVAL. */
        int (*refuse)(const BusParamTable *t, const char *key, bool twice, UmError *error);
};

/*
 * Reads the a{sv} at m's read position into target as t says: 0, or -EINVAL/-E2BIG with error
 * set (InvalidArgument) for what the caller got wrong, else sd-bus's (or a setter's)
 * -errno with error untouched. Whatever was stored before a failure is target's.
 */
int bus_params_read(sd_bus_message *m, const BusParamTable *t, void *target, UmError *error);

/* bool at p->offset. */
int bus_param_set_bool(const BusParam *p, const BusParamValue *v, void *target, UmError *error);
/* char * at p->offset: a copy of the string, owned by target. */
int bus_param_set_string(const BusParam *p, const BusParamValue *v, void *target,
                         UmError *error);

/* The usual refusal: "Unknown parameter 'x' (known: a, b, c)." naming the table's keys in
 * order, or "Parameter 'a' was given twice." */
int bus_params_refuse(const BusParamTable *t, const char *key, bool twice, UmError *error);
