/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The source of a mount: a caller's fd (block device or regular image file). Inspection
 * of the fd's type and access mode (cheap, never blocks, safe in the main process) and
 * probing its content with libblkid (reads the device: runs in a worker).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "um-error.h"

typedef enum SourceType {
        SOURCE_UNKNOWN,       /* not inspected yet (source_check_access() only) */
        SOURCE_BLOCK_DEVICE,
        SOURCE_IMAGE, /* a regular file */
} SourceType;

typedef struct SourceInfo {
        SourceType type;
        bool read_only; /* the fd was opened O_RDONLY */
        dev_t rdev;     /* block devices */
        bool removable; /* block devices: removable media by the rules of removable.h */
} SourceInfo;

/*
 * The part of source_inspect_fd() that asks nothing of the file's filesystem: the fd is
 * open for reading (O_RDONLY or O_RDWR, never O_PATH). Fills *ret with type
 * SOURCE_UNKNOWN and read_only. Only fcntl(): safe in the main process, even for a file on
 * a FUSE or network filesystem whose server hangs.
 */
int source_check_access(int fd, SourceInfo *ret, UmError *error);

/*
 * Checks that fd is a block device or a regular file opened for reading (O_RDONLY or
 * O_RDWR, never O_PATH), and fills *ret. Everything else (directory, socket, pipe, char
 * device, eventfd, nsfs, pidfd, mount fd, memfd without a filesystem...) is -EINVAL with
 * UM_ERROR_KIND_INVALID_SOURCE. fstat() and fstatfs() reach the file's filesystem, which
 * for FUSE or NFS can hang: for a caller's fd, run it in a worker.
 */
int source_inspect_fd(int fd, SourceInfo *ret, UmError *error);

typedef struct SourceProbe {
        char fstype[32]; /* "" when nothing was recognised */
        char label[256]; /* raw bytes as probed, NUL-terminated; may hold anything */
        char uuid[64];
} SourceProbe;

/*
 * Probes the filesystem on fd (a block device or an image file) with libblkid, without
 * changing the fd's offset. A whole disk with a partition table is -EINVAL with
 * UM_ERROR_KIND_INVALID_SOURCE (naming the partitions if it can); nothing recognised or an
 * ambiguous result is -EINVAL with UM_ERROR_KIND_INVALID_SOURCE.
 */
int source_probe(int fd, SourceProbe *ret, UmError *error);

/*
 * The same, with libblkid's prober of fstype alone (and no partition tables): what the
 * kernel reads when it is asked to mount that type. For the check right before the mount
 * (the type is known by then), at a fraction of the cost of every prober.
 */
int source_probe_as(int fd, const char *fstype, SourceProbe *ret, UmError *error);

/* Where in the source the filesystem is: a partition of a partitioned image, or all of it. */
typedef struct SourcePartition {
        uint32_t number; /* as in the partition table, 1-based; 0: the whole source */
        uint64_t offset; /* in bytes; 0 for the whole source */
        uint64_t size;   /* in bytes; 0 for the whole source (to its end) */
} SourcePartition;

/*
 * source_probe() for an image, which may hold a partition table (GPT, MBR). partition 0:
 * the whole image, or, when it has a partition table (and no iso9660 or udf filesystem
 * spanning it, as hybrid ISO images have), the only partition usermount can mount;
 * partition N: partition N of its table. The choice and its refusals are partition.h's;
 * partition > 0 on an image without a table is -EINVAL with UM_ERROR_KIND_INVALID_ARGUMENT.
 * On success *ret is what the chosen partition holds and *ret_part where it is.
 */
int source_probe_image(int fd, uint32_t partition, SourceProbe *ret, SourcePartition *ret_part,
                       UmError *error);

/* source_probe_as() on the byte range of part (NULL or number 0: the whole source). */
int source_probe_as_in(int fd, const SourcePartition *part, const char *fstype,
                       SourceProbe *ret, UmError *error);
