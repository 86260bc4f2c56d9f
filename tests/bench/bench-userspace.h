/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The userspace drivers' benchmark (issue 25): what bench-userspace.c measured, per
 * medium, type and driver, and what bench-userspace-report.c prints from it.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "bench-stats.h"
#include "bench-workload.h"

typedef enum Medium { MEDIUM_MEMORY, MEDIUM_BLOCKDEV, _MEDIUM_MAX } Medium;

/* One driver on one type on one medium. A figure below 0 was not measured. */
typedef struct UsRow {
        Medium medium;
        const char *fstype;
        const char *driver;   /* "kernel" or the userspace driver's program */
        bool userspace;
        const char *skipped;  /* why the row has no figures, or NULL */
        Summary mount;        /* OpenMount: send to fd received (cycles) */
        double cpu_ms;        /* per mount: the daemon's cgroup (workers, drivers) */
        double first_byte_ms; /* OpenMount sent to the first 4 KiB of a file read */
        double read_mibs, write_mibs, random_iops;
        double meta_s, unpack_s;
        uint64_t file_bytes;   /* the sequential file's size asked for on this type */
        uint64_t written;      /* bytes the write job got to within its budget */
        unsigned meta_files;   /* files the small-files job got to within its budget; fewer
                                * than asked: meta_s is scaled up to all of them */
        double meta_phase_s[_META_MAX];
        double driver_hwm_mib; /* the driver's peak RSS over the row's jobs */
} UsRow;

/* Read-write OpenMount of an ext4 filesystem by its size. */
typedef struct SizeRow {
        const char *name;
        Summary kernel, fuse;
} SizeRow;

#define US_MAX_ROWS 32
#define US_SIZES 3

typedef struct UsReport {
        UsRow rows[US_MAX_ROWS];
        unsigned n_rows;
        SizeRow sizes[US_SIZES];
        unsigned n_sizes;
        uint64_t file_size;     /* of the sequential read and write */
        unsigned files;         /* of the small-files job */
        unsigned random_reads;
        unsigned tar_files;     /* in the archive */
        uint64_t tar_bytes;
        unsigned iterations;    /* mount cycles per row */
        unsigned budget_s;      /* of a write, random-read or small-files job */
        unsigned reps;          /* runs of the write, read and random jobs (median) */
        char error[480];        /* the first failure */
} UsReport;

void us_report_print(const UsReport *rep);

extern const char *const medium_names[_MEDIUM_MAX];
