/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Partition tables of disk images (GPT and MBR), read with libblkid's partition prober, and
 * what each partition holds, read with libblkid's superblock probers on the partition's
 * byte range. Compiled into usermount-worker (the daemon's probe, before a partition of an
 * image is chosen and authorized) and into the usermount client (usermount probe, and
 * --partition=label:NAME resolved locally): both read the same table the same way.
 *
 * Everything read is bounded: at most PARTTABLE_MAX partitions (a table with more is
 * refused as a whole, -E2BIG), every string in a fixed field (longer values are cut at a
 * UTF-8 character boundary, never overrun), and libblkid is asked nothing that loops on
 * what a table says. The strings are raw bytes from the disk: escape them before showing.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most partitions read from one table; GPT's usual table has 128 entries. */
#define PARTTABLE_MAX 128U

typedef struct PartEntry {
        uint32_t number;        /* as in the table, 1-based (MBR logical partitions from 5) */
        uint64_t start;         /* in bytes from the start of the disk */
        uint64_t size;          /* in bytes */
        char type[40];          /* GPT: the type GUID, lowercase; MBR: the type byte, "0x83" */
        char type_name[32];     /* its Discoverable Partitions Specification name, or "" */
        char name[128];         /* GPT: the partition name (label), UTF-8; MBR: "" */
        char uuid[40];          /* GPT: the partition UUID; MBR: "DISKID-NN"; or "" */
        char fstype[32];        /* what the partition holds, as probed: "" if nothing */
        char usage[16];         /* libblkid's usage of it: "filesystem", "other", "crypto"... */
        char label[256];        /* the filesystem's label and UUID, "" if none */
        char fsuuid[64];
        bool extended;          /* an MBR extended partition: a container of logical ones */
        bool beyond_end;        /* reaches past the end of the disk (a damaged or hostile table) */
        bool ambiguous;         /* more than one signature in it: never mounted */
} PartEntry;

typedef struct PartTable {
        char type[16];          /* "gpt", "dos" (MBR), ...; "" when the disk has no table */
        uint64_t disk_size;     /* bytes */
        size_t n_entries;
        PartEntry entries[PARTTABLE_MAX];
} PartTable;

/*
 * Reads the partition table of fd (a disk image or block device open for reading) into
 * *ret, which the caller allocates (it is large: heap, not stack). libblkid moves fd's
 * file offset: pass a private file description. 0 with ret->type "" when there is no
 * table; -E2BIG with more than PARTTABLE_MAX partitions; -ENOMEM; -EIO (or another
 * -errno) when the disk cannot be read.
 */
int parttable_read(int fd, PartTable *ret);

/* The entry with that number, or NULL. */
const PartEntry *parttable_find(const PartTable *t, uint32_t number);

/*
 * The Discoverable Partitions Specification name of a partition type ("root-x86-64",
 * "usr-arm64", "esp", "xbootldr", "swap", "home", "srv", "var", "tmp", "user-home",
 * "linux-generic", ...): type is a GPT type GUID in any case, or NULL/"" and NULL for a
 * type without one (every MBR type).
 */
const char *parttable_type_name(const char *type);
