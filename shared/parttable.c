/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The partition table of a disk image and what its partitions hold (parttable.h).
 */
#include <blkid/blkid.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-gpt.h>
#include <systemd/sd-id128.h>

#include "macro.h"
#include "parttable.h"

/*
 * The Discoverable Partitions Specification's names of the GPT types it defines, with the
 * GUIDs from systemd's own sd-gpt.h: six per architecture (root and usr, each plain, its
 * dm-verity hashes and their signature), then the architecture-independent ones.
 */
#define DPS_ARCH(id, name)                                                              \
        { SD_GPT_ROOT_##id, "root-" name },                                             \
        { SD_GPT_USR_##id, "usr-" name },                                               \
        { SD_GPT_ROOT_##id##_VERITY, "root-" name "-verity" },                          \
        { SD_GPT_USR_##id##_VERITY, "usr-" name "-verity" },                            \
        { SD_GPT_ROOT_##id##_VERITY_SIG, "root-" name "-verity-sig" },                  \
        { SD_GPT_USR_##id##_VERITY_SIG, "usr-" name "-verity-sig" }

static const struct {
        sd_id128_t type;
        const char *name;
} dps_types[] = {
        DPS_ARCH(ALPHA, "alpha"),
        DPS_ARCH(ARC, "arc"),
        DPS_ARCH(ARM, "arm"),
        DPS_ARCH(ARM64, "arm64"),
        DPS_ARCH(IA64, "ia64"),
        DPS_ARCH(LOONGARCH64, "loongarch64"),
        DPS_ARCH(MIPS, "mips"),
        DPS_ARCH(MIPS64, "mips64"),
        DPS_ARCH(MIPS_LE, "mips-le"),
        DPS_ARCH(MIPS64_LE, "mips64-le"),
        DPS_ARCH(PARISC, "parisc"),
        DPS_ARCH(PPC, "ppc"),
        DPS_ARCH(PPC64, "ppc64"),
        DPS_ARCH(PPC64_LE, "ppc64-le"),
        DPS_ARCH(RISCV32, "riscv32"),
        DPS_ARCH(RISCV64, "riscv64"),
        DPS_ARCH(S390, "s390"),
        DPS_ARCH(S390X, "s390x"),
        DPS_ARCH(TILEGX, "tilegx"),
        DPS_ARCH(X86, "x86"),
        DPS_ARCH(X86_64, "x86-64"),
        { SD_GPT_ESP, "esp" },
        { SD_GPT_XBOOTLDR, "xbootldr" },
        { SD_GPT_SWAP, "swap" },
        { SD_GPT_HOME, "home" },
        { SD_GPT_SRV, "srv" },
        { SD_GPT_VAR, "var" },
        { SD_GPT_TMP, "tmp" },
        { SD_GPT_USER_HOME, "user-home" },
        { SD_GPT_LINUX_GENERIC, "linux-generic" },
};

const char *parttable_type_name(const char *type) {
        sd_id128_t id;

        /* Only the formatted UUID, as in a table: sd_id128_from_string() also takes 32 hex
         * digits, which no MBR type is, but "0x83" must not be read as anything. */
        if (!type || strlen(type) != 36 || sd_id128_from_string(type, &id) < 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(dps_types); i++)
                if (sd_id128_equal(dps_types[i].type, id))
                        return dps_types[i].name;
        return NULL;
}

/* Copies s into dst (size n), cut at a character boundary when it does not fit. */
static void copy_string(char *dst, size_t n, const char *s) {
        size_t len = strnlen(s ?: "", n);

        if (len >= n) {
                len = n - 1;
                /* Back to the start of a UTF-8 sequence: never half a character. */
                while (len > 0 && ((unsigned char) s[len] & 0xC0) == 0x80)
                        len--;
        }
        memcpy(dst, s ?: "", len);
        dst[len] = 0;
}

static void lookup(blkid_probe pr, const char *name, char *buf, size_t n) {
        const char *data = NULL;
        size_t len = 0;
        char tmp[512];

        buf[0] = 0;
        if (blkid_probe_lookup_value(pr, name, &data, &len) < 0 || !data)
                return;
        len = strnlen(data, len);
        if (len >= sizeof(tmp))
                len = sizeof(tmp) - 1;
        memcpy(tmp, data, len);
        tmp[len] = 0;
        copy_string(buf, n, tmp);
}

static void blkid_free_probep(blkid_probe *pr) {
        if (*pr)
                blkid_free_probe(*pr);
}

/* What the byte range of e holds: one superblock probe of every type on that range. */
static int probe_content(int fd, PartEntry *e) {
        _cleanup_(blkid_free_probep) blkid_probe pr = blkid_new_probe();
        int r;

        if (!pr)
                return -ENOMEM;
        if (blkid_probe_set_device(pr, fd, (blkid_loff_t) e->start, (blkid_loff_t) e->size) < 0)
                return -EIO;
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
                                                      BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
        blkid_probe_enable_partitions(pr, 0);
        r = blkid_do_safeprobe(pr);
        if (r == -2) {
                e->ambiguous = true;
                return 0;
        }
        if (r < 0)
                return -EIO;
        if (r == 1)
                return 0; /* nothing recognised */
        lookup(pr, "TYPE", e->fstype, sizeof(e->fstype));
        lookup(pr, "USAGE", e->usage, sizeof(e->usage));
        lookup(pr, "LABEL", e->label, sizeof(e->label));
        lookup(pr, "UUID", e->fsuuid, sizeof(e->fsuuid));
        return 0;
}

/* One entry of the table as libblkid read it; the content is probed separately. */
static void read_entry(blkid_partition p, bool gpt, uint64_t disk_size, PartEntry *e) {
        blkid_loff_t start = blkid_partition_get_start(p), size = blkid_partition_get_size(p);
        int no = blkid_partition_get_partno(p);

        *e = (PartEntry) { .number = no > 0 ? (uint32_t) no : 0 };
        /* In 512-byte sectors whatever the disk's sector size (libblkid's unit). */
        if (start < 0 || size < 0 || (uint64_t) start > UINT64_MAX / 512 ||
            (uint64_t) size > UINT64_MAX / 512)
                e->beyond_end = true;
        else {
                e->start = (uint64_t) start * 512;
                e->size = (uint64_t) size * 512;
                e->beyond_end = e->start > disk_size || e->size > disk_size - e->start;
        }
        if (gpt) {
                copy_string(e->type, sizeof(e->type), blkid_partition_get_type_string(p));
                for (char *c = e->type; *c; c++)
                        *c = (char) tolower((unsigned char) *c);
                copy_string(e->name, sizeof(e->name), blkid_partition_get_name(p));
        } else
                snprintf(e->type, sizeof(e->type), "0x%02x",
                         (unsigned) blkid_partition_get_type(p) & 0xffU);
        copy_string(e->type_name, sizeof(e->type_name), parttable_type_name(e->type));
        copy_string(e->uuid, sizeof(e->uuid), blkid_partition_get_uuid(p));
        e->extended = blkid_partition_is_extended(p);
}

int parttable_read(int fd, PartTable *ret) {
        _cleanup_(blkid_free_probep) blkid_probe pr = blkid_new_probe();
        blkid_partlist list;
        blkid_parttable table;
        const char *type;
        bool gpt;
        int n, r;

        if (!pr)
                return -ENOMEM;
        memset(ret, 0, offsetof(PartTable, entries));
        if (blkid_probe_set_device(pr, fd, 0, 0) < 0)
                return -EIO;
        blkid_probe_enable_superblocks(pr, 0);
        blkid_probe_enable_partitions(pr, 1);
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
        ret->disk_size = (uint64_t) blkid_probe_get_size(pr);
        list = blkid_probe_get_partitions(pr);
        if (!list)
                return 0; /* no table (or none libblkid can read) */
        table = blkid_partlist_get_table(list);
        type = table ? blkid_parttable_get_type(table) : NULL;
        if (!type)
                return 0;
        n = blkid_partlist_numof_partitions(list);
        if (n < 0)
                return -EIO;
        if ((unsigned) n > PARTTABLE_MAX)
                return -E2BIG;
        copy_string(ret->type, sizeof(ret->type), type);
        gpt = streq(ret->type, "gpt");
        for (int i = 0; i < n; i++) {
                blkid_partition p = blkid_partlist_get_partition(list, i);
                PartEntry *e = &ret->entries[ret->n_entries];

                if (!p)
                        continue;
                read_entry(p, gpt, ret->disk_size, e);
                ret->n_entries++;
                if (e->extended || e->beyond_end || e->size == 0)
                        continue;
                r = probe_content(fd, e);
                if (r < 0)
                        return r;
        }
        return 0;
}

const PartEntry *parttable_find(const PartTable *t, uint32_t number) {
        for (size_t i = 0; number > 0 && i < t->n_entries; i++)
                if (t->entries[i].number == number)
                        return &t->entries[i];
        return NULL;
}
