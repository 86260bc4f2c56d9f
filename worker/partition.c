/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The choice of one partition of a partitioned image (partition.h).
 */
#include <stdio.h>
#include <string.h>

#include "partition.h"
#include "fstypes.h"

bool partition_mountable(const PartEntry *e, const char **ret_why) {
        const char *why = NULL;

        if (e->extended)
                why = "is an extended partition, a container of logical partitions";
        else if (e->beyond_end)
                why = "reaches past the end of the disk";
        else if (e->size == 0)
                why = "is empty";
        else if (e->ambiguous)
                why = "holds more than one filesystem signature";
        else if (isempty(e->fstype))
                why = "holds no filesystem that usermount recognises";
        else if (!isempty(e->usage) && !streq(e->usage, "filesystem"))
                why = "holds no filesystem but something else (swap, an encrypted volume, a "
                      "RAID member)";
        else if (!fstype_allowed(e->fstype))
                why = "holds a filesystem of a type that usermount does not mount";
        if (ret_why)
                *ret_why = why;
        return !why;
}

/* "2 (linux-generic, ext4 \"data\")": number, type, content; bounded whatever the disk says. */
static void describe(const PartEntry *e, char *buf, size_t n) {
        char type[48], fstype[40], label[40];

        um_escape(!isempty(e->type_name) ? e->type_name : e->type, type, sizeof(type));
        um_escape(e->fstype, fstype, sizeof(fstype));
        um_escape(e->label, label, sizeof(label));
        if (e->extended)
                snprintf(buf, n, "%u (%s, extended)", e->number, type);
        else if (isempty(e->fstype))
                snprintf(buf, n, "%u (%s, %s)", e->number, type,
                         e->ambiguous ? "ambiguous" : "no filesystem");
        else if (isempty(e->label))
                snprintf(buf, n, "%u (%s, %s)", e->number, type, fstype);
        else
                snprintf(buf, n, "%u (%s, %s \"%s\")", e->number, type, fstype, label);
}

char *partition_list(const PartTable *t, bool only_mountable, char *buf, size_t n) {
        size_t o = 0, listed = 0, total = 0;
        char one[160], more[32];

        buf[0] = 0;
        for (size_t i = 0; i < t->n_entries; i++) {
                const PartEntry *e = &t->entries[i];
                size_t len;

                if (only_mountable && !partition_mountable(e, NULL))
                        continue;
                total++;
                describe(e, one, sizeof(one));
                len = strlen(one) + (o ? 2 : 0);
                /* Room for this one and for a later ", and 128 more". */
                if (o + len + sizeof(more) >= n)
                        continue;
                o += (size_t) snprintf(buf + o, n - o, "%s%s", o ? ", " : "", one);
                listed++;
        }
        if (listed < total && o + sizeof(more) < n)
                snprintf(buf + o, n - o, "%sand %zu more", o ? ", " : "", total - listed);
        else if (total == 0)
                snprintf(buf, n, "none");
        return buf;
}

/* The table's kind as people know it: libblkid says "dos" for MBR. */
static const char *table_kind(const PartTable *t, char *buf, size_t n) {
        if (streq(t->type, "gpt"))
                return "GPT";
        if (streq(t->type, "dos"))
                return "MBR";
        return um_escape(t->type, buf, n);
}

static size_t count_mountable(const PartTable *t, const PartEntry **ret_last) {
        size_t n = 0;

        for (size_t i = 0; i < t->n_entries; i++)
                if (partition_mountable(&t->entries[i], NULL)) {
                        *ret_last = &t->entries[i];
                        n++;
                }
        return n;
}

int partition_select(const PartTable *t, uint32_t requested, const char *what,
                     const PartEntry **ret, UmError *error) {
        const PartEntry *e = NULL;
        char list[320], buf[24];
        const char *why, *pttype;
        size_t n;

        pttype = table_kind(t, buf, sizeof(buf));
        if (requested > 0) {
                e = parttable_find(t, requested);
                if (!e)
                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, ENOENT,
                                            "The %s's %s partition table has no partition %u; "
                                            "its partitions: %s.", what, pttype, requested,
                                            partition_list(t, false, list, sizeof(list)));
                if (!partition_mountable(e, &why))
                        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                            "Partition %u of the %s %s; nothing was mounted.",
                                            requested, what, why);
                *ret = e;
                return 0;
        }
        n = count_mountable(t, &e);
        if (n == 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, ENOENT,
                                    "The %s has %s %s partition table, and no partition "
                                    "usermount can mount; its partitions: %s.", what,
                                    streq(pttype, "MBR") ? "an" : "a", pttype,
                                    partition_list(t, false, list, sizeof(list)));
        if (n > 1)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "The %s has %s %s partition table with %zu partitions "
                                    "usermount can mount: %s; choose one with the 'partition' "
                                    "parameter (usermount mount --partition=N).", what,
                                    streq(pttype, "MBR") ? "an" : "a", pttype, n,
                                    partition_list(t, true, list, sizeof(list)));
        *ret = e;
        return 0;
}
