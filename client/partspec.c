/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --partition=SPEC of usermount mount (partspec.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "macro.h"
#include "partspec.h"

int partspec_parse(const char *s, PartSpec *ret) {
        static const struct {
                const char *prefix;
                PartSpecKind kind;
        } prefixes[] = {
                { "label:", PART_SPEC_LABEL },
                { "uuid:", PART_SPEC_UUID },
                { "type:", PART_SPEC_TYPE },
        };
        unsigned long long n;
        char *end;

        if (isempty(s))
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++) {
                size_t l = strlen(prefixes[i].prefix);

                if (strncmp(s, prefixes[i].prefix, l) != 0)
                        continue;
                if (s[l] == 0)
                        return -EINVAL;
                *ret = (PartSpec) { .kind = prefixes[i].kind, .value = s + l };
                return 0;
        }
        /* Digits only: no sign, no space, no 0x; from 1 to 2^32-1. */
        if (s[0] < '1' || s[0] > '9')
                return -EINVAL;
        errno = 0;
        n = strtoull(s, &end, 10);
        if (errno != 0 || *end != 0 || n > UINT32_MAX)
                return -EINVAL;
        *ret = (PartSpec) { .kind = PART_SPEC_NUMBER, .number = (uint32_t) n };
        return 0;
}

/* "0x83" matches "0x83", "0x83" in other case, and "83". */
static bool type_matches(const PartEntry *e, const char *v) {
        if (strcasecmp(e->type, v) == 0 || (!isempty(e->type_name) && streq(e->type_name, v)))
                return true;
        return strncmp(e->type, "0x", 2) == 0 && strcasecmp(e->type + 2, v) == 0;
}

static bool matches(const PartSpec *spec, const PartEntry *e) {
        switch (spec->kind) {
        case PART_SPEC_LABEL:
                return streq(e->name, spec->value) || streq(e->label, spec->value);
        case PART_SPEC_UUID:
                return strcasecmp(e->uuid, spec->value) == 0 ||
                       strcasecmp(e->fsuuid, spec->value) == 0;
        case PART_SPEC_TYPE:
                return type_matches(e, spec->value);
        case PART_SPEC_NUMBER:
                return e->number == spec->number;
        }
        return false;
}

int partspec_resolve(const PartSpec *spec, const PartTable *t, uint32_t *ret_number,
                     uint32_t *ret_other) {
        uint32_t found = 0;

        if (spec->kind == PART_SPEC_NUMBER) {
                *ret_number = spec->number;
                return 0;
        }
        for (size_t i = 0; i < t->n_entries; i++) {
                if (!matches(spec, &t->entries[i]))
                        continue;
                if (found > 0) {
                        *ret_number = found;
                        *ret_other = t->entries[i].number;
                        return -ENOTUNIQ;
                }
                found = t->entries[i].number;
        }
        if (found == 0)
                return -ENOENT;
        *ret_number = found;
        return 0;
}
