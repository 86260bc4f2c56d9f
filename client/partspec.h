/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount mount --partition=SPEC: which partition of a partitioned image to mount, as a
 * number or by what the image's table and filesystems say (label:NAME, uuid:UUID,
 * type:NAME), resolved to the number usermountd takes (params "partition") by reading
 * the table here, with the user's own access to the image (parttable.h).
 */
#pragma once

#include <stdint.h>

#include "parttable.h"

typedef enum PartSpecKind {
        PART_SPEC_NUMBER,
        PART_SPEC_LABEL, /* the GPT partition name or the filesystem label */
        PART_SPEC_UUID,  /* the partition UUID or the filesystem UUID, in any case */
        PART_SPEC_TYPE,  /* the Discoverable Partitions name ("root-x86-64"), the GPT type
                          * GUID in any case, or the MBR type ("0x83" or "83") */
} PartSpecKind;

typedef struct PartSpec {
        PartSpecKind kind;
        uint32_t number;   /* PART_SPEC_NUMBER: 1..2^32-1 */
        const char *value; /* the others: points into the string parsed, never empty */
} PartSpec;

/* Parses s: "N", "label:NAME", "uuid:UUID" or "type:NAME". 0, or -EINVAL. */
int partspec_parse(const char *s, PartSpec *ret);

/*
 * The number of the one partition of t that spec names (a number is taken as it is). 0,
 * -ENOENT when no partition matches, -ENOTUNIQ when several do (then *ret_number is the
 * first of them and *ret_other the second, to name them).
 */
int partspec_resolve(const PartSpec *spec, const PartTable *t, uint32_t *ret_number,
                     uint32_t *ret_other);
