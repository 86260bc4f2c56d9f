/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a user does with a mount, run by a forked unprivileged caller of the userspace
 * benchmark (bench-userspace.c): OpenMount of a source with a chosen driver, the mount
 * attached in the caller's own mount namespace, then one job through it (a sequential
 * read or write, random reads, a small-files job, an archive unpack), timed in the
 * caller and written into memory shared with the bench.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define WORK_MAX_SAMPLES 512

typedef enum WorkKind {
        WORK_MOUNT,  /* count OpenMount cycles: the fd closed, a userspace driver's exit awaited */
        WORK_READ,   /* first byte of read_path, then all of it in 1 MiB read()s */
        WORK_RANDOM, /* count 4 KiB pread()s at random aligned offsets of read_path */
        WORK_WRITE,  /* size bytes into a new file in 1 MiB write()s, fsync, close */
        WORK_META,   /* count small files in count/100 directories: create, stat, read, delete */
        WORK_UNPACK, /* tar -xf tarball into the mount, syncfs */
        _WORK_MAX,
} WorkKind;

/* The phases of WORK_META. */
enum { META_CREATE, META_STAT, META_READ, META_DELETE, _META_MAX };

/* Written by the caller only; read by the bench once done is set. */
typedef struct WorkResult {
        int done;
        bool failed;
        char error[400];
        uint64_t first_byte_ns;  /* WORK_READ: OpenMount sent to the first 4 KiB read */
        uint64_t ns;             /* the job: open of the file to its close; META: all phases */
        uint64_t phase_ns[_META_MAX];
        uint64_t bytes;          /* WORK_WRITE: written within the budget */
        unsigned n_done;         /* WORK_META: files, WORK_RANDOM: reads done within the budget */
        unsigned n_samples;      /* WORK_MOUNT: cycles timed */
        uint64_t samples_ns[WORK_MAX_SAMPLES]; /* WORK_MOUNT: OpenMount send to fd received */
} WorkResult;

typedef struct WorkJob {
        WorkKind kind;
        const char *source;    /* image or block device, opened by the caller */
        bool read_only;        /* opened O_RDONLY and mounted "ro"; else O_RDWR, "rw" */
        const char *fstype;
        const char *driver;    /* "kernel" or "userspace": params["driver"] */
        const char *target;    /* an empty directory the caller may attach the mount on */
        const char *cgroup;    /* the daemon's cgroup2 directory, where its drivers run */
        const char *read_path; /* WORK_READ, WORK_RANDOM: relative to the mount */
        const char *keep_as;   /* WORK_WRITE: rename the file to this; NULL: delete it */
        const char *tarball;   /* WORK_UNPACK */
        uint64_t size;         /* WORK_READ: expected size; WORK_WRITE: bytes to write */
        unsigned count;        /* cycles, reads or files */
        unsigned warmup;       /* WORK_MOUNT: untimed cycles first */
        /* WORK_WRITE, WORK_RANDOM, WORK_META: once this much time went by, stop writing
         * (the bytes written so far count), reading (the reads so far count) or creating
         * files (the phases then take the files made); 0: no limit. fusefat needs minutes
         * for what the others do in seconds (it walks a file's FAT chain for every read). */
        uint64_t budget_ns;
        WorkResult *result;    /* shared memory */
} WorkJob;

/* A HarnessCallerFunc for a WorkJob *: 0, or 1 when the job failed (result->error).
 * WORK_MOUNT runs in the user's own namespaces (it finds each driver itself); every other
 * job needs a mount namespace of the caller's own (HARNESS_NEW_USERNS) and reports
 * "mounted" once its mount is attached, then "measured" once the job is done, and waits
 * for harness_caller_release() before it lets the mount go. */
int work_main(void *userdata);

const char *work_kind_name(WorkKind kind);
