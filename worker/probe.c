/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a source holds (source_probe(), source_probe_as() of source.h): read with libblkid
 * from a private reopening of the fd, so the caller's file offset is never touched. Only
 * workers probe; the daemon's main process does not load libblkid.
 */
#include <blkid/blkid.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parttable.h"
#include "partition.h"
#include "source.h"

/* What probe() does about a partition table on the source. */
typedef enum ProbeTable {
        PROBE_TABLE_REFUSE,    /* refuse the source, naming the partitions */
        PROBE_TABLE_REPORT,    /* return 1: the caller reads the table */
} ProbeTable;

/*
 * A private file description for the same file, so that libblkid's lseek()+read() never
 * moves the caller's offset. Reopening through /proc grants nothing: the fd must already
 * be open for reading, and the new one is read-only.
 */
static int reopen_for_probe(int fd, UmError *error) {
        _cleanup_close_ int probe_fd = -EBADF;
        struct stat a, b;
        char path[64];
        int flags;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || (flags & O_PATH) ||
            ((flags & O_ACCMODE) != O_RDONLY && (flags & O_ACCMODE) != O_RDWR))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the source is not open for reading");
        if (fstat(fd, &a) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "the source cannot be inspected");

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        probe_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (probe_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "the source could not be opened for probing");
        if (fstat(probe_fd, &b) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "the source could not be inspected for probing");
        if (a.st_dev != b.st_dev || a.st_ino != b.st_ino || a.st_rdev != b.st_rdev)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the source changed while it was being probed");
        return TAKE_FD(probe_fd);
}

static void blkid_free_probep(blkid_probe *pr) {
        if (*pr)
                blkid_free_probe(*pr);
}

/* Copies a probed value (raw bytes, may hold anything but NUL) into buf; false if too long. */
static bool lookup_value(blkid_probe pr, const char *name, char *buf, size_t n) {
        const char *data = NULL;
        size_t len = 0;

        buf[0] = 0;
        if (blkid_probe_lookup_value(pr, name, &data, &len) < 0 || !data)
                return true;
        len = strnlen(data, len);
        if (len >= n)
                return false;
        memcpy(buf, data, len);
        buf[len] = 0;
        return true;
}

/* "the disk has a partition table (partitions 1, 2); mount a partition instead" */
static int refuse_partition_table(blkid_probe pr, UmError *error) {
        blkid_partlist parts = blkid_probe_get_partitions(pr);
        char list[256] = "", pttype[32];
        int n = parts ? blkid_partlist_numof_partitions(parts) : 0;
        size_t o = 0;

        if (!lookup_value(pr, "PTTYPE", pttype, sizeof(pttype)))
                pttype[0] = 0;
        for (int i = 0; i < n && o + 16 < sizeof(list); i++) {
                blkid_partition p = blkid_partlist_get_partition(parts, i);

                if (p)
                        o += snprintf(list + o, sizeof(list) - o, "%s%d", o ? ", " : "",
                                      blkid_partition_get_partno(p));
        }
        if (n <= 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the disk has a %s partition table with no partitions; "
                                    "there is no filesystem to mount",
                                    isempty(pttype) ? "" : pttype);
        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                            "the disk has a partition table (partition%s %s); "
                            "mount a partition instead",
                            n == 1 ? "" : "s", list);
}

/*
 * Hybrid ISO images carry a DOS partition table for booting from USB next to the
 * iso9660/udf filesystem of the whole device; the whole device is what users mean.
 */
static bool whole_device_filesystem_wins(const char *fstype) {
        return streq(fstype, "iso9660") || streq(fstype, "udf");
}

/*
 * A table without a single partition holds nothing to mount, and competes with no
 * filesystem of the whole device: the boot sector of FAT and exFAT (mkfs.vfat,
 * mkfs.exfat) ends in the 0x55AA signature that libblkid's DOS prober reads as an empty
 * MBR.
 */
static bool table_is_empty(blkid_probe pr) {
        blkid_partlist l = blkid_probe_get_partitions(pr);

        return l && blkid_partlist_numof_partitions(l) == 0;
}

/*
 * libblkid's name of a type and usermount's differ for NTFS: libblkid says "ntfs", the
 * kernel's driver, the configuration and the policy say "ntfs3" (and lowntfs-3g serves it).
 */
static const struct {
        const char *blkid, *usermount;
} type_aliases[] = {
        { "ntfs", "ntfs3" },
};

static void type_from_blkid(char *fstype, size_t size) {
        for (size_t i = 0; i < ELEMENTSOF(type_aliases); i++)
                if (streq(fstype, type_aliases[i].blkid))
                        snprintf(fstype, size, "%s", type_aliases[i].usermount);
}

static const char *type_to_blkid(const char *fstype) {
        for (size_t i = 0; i < ELEMENTSOF(type_aliases); i++)
                if (streq(fstype, type_aliases[i].usermount))
                        return type_aliases[i].blkid;
        return fstype;
}

static int probe_results(blkid_probe pr, ProbeTable table, SourceProbe *ret, UmError *error) {
        SourceProbe p = {};
        char usage[32], escaped[128];
        bool has_pt;

        has_pt = blkid_probe_has_value(pr, "PTTYPE");
        if (!lookup_value(pr, "TYPE", p.fstype, sizeof(p.fstype)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the filesystem type name is too long");
        if (has_pt && !(p.fstype[0] &&
                        (whole_device_filesystem_wins(p.fstype) || table_is_empty(pr))))
                return table == PROBE_TABLE_REPORT ? 1 : refuse_partition_table(pr, error);
        if (!p.fstype[0])
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "no filesystem was recognised");
        type_from_blkid(p.fstype, sizeof(p.fstype));
        if (lookup_value(pr, "USAGE", usage, sizeof(usage)) && usage[0] &&
            !streq(usage, "filesystem"))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the source holds %s (%s), which is not a mountable filesystem",
                                    um_escape(p.fstype, escaped, sizeof(escaped)), usage);
        if (!lookup_value(pr, "LABEL", p.label, sizeof(p.label)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the filesystem label is too long");
        if (!lookup_value(pr, "UUID", p.uuid, sizeof(p.uuid)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the filesystem UUID is too long");
        *ret = p;
        return 0;
}

/* fstype NULL: every superblock type and the partition tables; else that type only. part:
 * the byte range to probe (NULL: all of fd). 1 only with PROBE_TABLE_REPORT. */
static int probe(int fd, const SourcePartition *part, const char *fstype, ProbeTable table,
                 SourceProbe *ret, UmError *error) {
        _cleanup_(blkid_free_probep) blkid_probe pr = NULL;
        _cleanup_close_ int probe_fd = -EBADF;
        int r;

        probe_fd = reopen_for_probe(fd, error);
        if (probe_fd < 0)
                return probe_fd;

        pr = blkid_new_probe();
        if (!pr)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM,
                                    "the filesystem probe could not be set up");
        if (blkid_probe_set_device(pr, probe_fd, part ? (blkid_loff_t) part->offset : 0,
                                   part ? (blkid_loff_t) part->size : 0) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno > 0 ? errno : EIO,
                                    "the source could not be read for probing");
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
                                                      BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
        if (fstype) {
                char *only[] = { (char *) type_to_blkid(fstype), NULL };

                if (blkid_probe_filter_superblocks_type(pr, BLKID_FLTR_ONLYIN, only) < 0)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM,
                                            "the filesystem probe could not be set up");
        } else {
                blkid_probe_enable_partitions(pr, 1);
                blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
        }

        r = blkid_do_safeprobe(pr);
        if (r == -2)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "more than one filesystem signature was found; the source "
                                    "is ambiguous and will not be mounted");
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno > 0 ? errno : EIO,
                                    "the source could not be read while probing it");
        if (r == 1)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "no filesystem was recognised");
        return probe_results(pr, table, ret, error);
}

int source_probe(int fd, SourceProbe *ret, UmError *error) {
        return probe(fd, NULL, NULL, PROBE_TABLE_REFUSE, ret, error);
}

int source_probe_as_in(int fd, const SourcePartition *part, const char *fstype,
                       SourceProbe *ret, UmError *error) {
        if (isempty(fstype))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "no filesystem was recognised");
        if (part && part->number == 0)
                part = NULL;
        return probe(fd, part, fstype, PROBE_TABLE_REFUSE, ret, error);
}

int source_probe_as(int fd, const char *fstype, SourceProbe *ret, UmError *error) {
        return source_probe_as_in(fd, NULL, fstype, ret, error);
}

/* The partition table of the image and the partition of it that the request means. */
static int probe_table(int fd, uint32_t partition, SourceProbe *ret, SourcePartition *ret_part,
                       UmError *error) {
        _cleanup_free_ PartTable *t = calloc(1, sizeof(PartTable));
        _cleanup_close_ int probe_fd = -EBADF;
        const PartEntry *e;
        int r;

        if (!t)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "out of memory");
        probe_fd = reopen_for_probe(fd, error);
        if (probe_fd < 0)
                return probe_fd;
        r = parttable_read(probe_fd, t);
        if (r == -E2BIG)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, E2BIG,
                                    "the image's partition table has more than %u partitions, "
                                    "the most usermount reads", PARTTABLE_MAX);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "the image's partition table could not be read: %s",
                                    strerror(-r));
        if (isempty(t->type))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter 'partition' was given, but the image has no "
                                    "partition table; mount it without one.");
        r = partition_select(t, partition, "image", &e, error);
        if (r < 0)
                return r;
        *ret = (SourceProbe) {};
        memcpy(ret->fstype, e->fstype, sizeof(ret->fstype));
        memcpy(ret->label, e->label, sizeof(ret->label));
        memcpy(ret->uuid, e->fsuuid, sizeof(ret->uuid));
        *ret_part = (SourcePartition) { .number = e->number, .offset = e->start, .size = e->size };
        return 0;
}

int source_probe_image(int fd, uint32_t partition, SourceProbe *ret, SourcePartition *ret_part,
                       UmError *error) {
        int r;

        /* A partition named: the table decides, whatever else the image holds. */
        if (partition > 0)
                return probe_table(fd, partition, ret, ret_part, error);
        r = probe(fd, NULL, NULL, PROBE_TABLE_REPORT, ret, error);
        if (r == 1)
                return probe_table(fd, 0, ret, ret_part, error);
        if (r >= 0)
                *ret_part = (SourcePartition) {};
        return r;
}
