/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state of one benchmark run, shared by its parts: the options, the processes it
 * measures, the images, and the report every part writes its figures into. Also the few
 * helpers every part uses: time a step, run one client, read the CPU counters.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench-client.h"
#include "bench-stats.h"
#include "harness.h"

#define MAX_CLIENT_RUNS 16
#define MAX_MOUNT_COUNTS 4

typedef struct Options {
        unsigned iterations;
        unsigned requests; /* per client in the concurrency runs */
        unsigned clients[MAX_CLIENT_RUNS];
        size_t n_clients;
        unsigned mounts[MAX_MOUNT_COUNTS]; /* extra host mounts, ascending, first 0 */
        size_t n_mounts;
        const char *fstype;
        bool quick;
} Options;

/* One latency row of the table. */
typedef struct Row {
        const char *name;
        Summary s;
} Row;

/* CPU time used, in ms: the daemon's main process, its workers (the children it reaped),
 * the daemon's cgroup (the daemon and everything it started after bench_setup(): workers,
 * the userspace drivers they start, exited ones included; -1 when unknown), polkitd,
 * dbus-daemon, and the whole machine (which includes the clients). */
typedef struct CpuSnap {
        double daemon, workers, tree, polkit, bus, machine;
} CpuSnap;

typedef struct ConcurrencyRun {
        CpuSnap cpu; /* per request */
        unsigned clients;
        unsigned requests; /* succeeded */
        double per_second;
        Summary s;
} ConcurrencyRun;

/* OpenMount with that many extra mounts in the daemon's mount namespace. */
typedef struct MountsRun {
        unsigned extra;
        int seen; /* mounts in the daemon's /proc/PID/mountinfo; -1 unknown */
        char name[48];
        Row row;
        Row raw_worker; /* the daemon's build worker reproduced in process, no bus */
} MountsRun;

/* The polkit subject answers the daemon may ask with. */
typedef struct PolkitReport {
        Row bus_name, process; /* system-bus-name, unix-process */
        bool pidfd_used;       /* polkitd identified the process by the pidfd alone */
        bool unknown_key_ok;   /* an unknown key in the unix-process subject was ignored */
} PolkitReport;

#define MAX_DRIVER_RUNS 8

/* One filesystem image served by one driver (bench-drivers.c). */
typedef struct DriverRun {
        const char *fstype;
        const char *driver;   /* "kernel", or the userspace driver's program */
        bool userspace;
        const char *skipped;  /* why it was not measured, or NULL */
        Row open;             /* OpenMount: send to fd received */
        Row cycle;            /* the same plus the close, and the driver's exit */
        CpuSnap cpu;          /* per mount, warm-up included */
        Row read;             /* the big file read through the mount; name NULL: not read */
} DriverRun;

/* Kernel against userspace drivers on the same images. */
typedef struct DriversReport {
        DriverRun runs[MAX_DRIVER_RUNS];
        size_t n_runs;
        uint64_t read_size;   /* bytes of the file the read runs read */
        unsigned read_repetitions;
} DriversReport;

/* The daemon's "worker pool: S spawned, H hits, M misses" line, read after it exits. */
typedef struct PoolReport {
        int found; /* 1: read; 0: the daemon wrote none; -errno: the log was not readable */
        unsigned spawned, hits, misses;
} PoolReport;

typedef struct Report {
        Row raw_device, raw_image, raw_loop, raw_worker, raw_umount, broker, unmount;
        Row probe_worker, fork_exit, probe, find_backing, bus_ping;
        PolkitReport polkit;
        CpuSnap broker_cpu; /* per OpenMount of the single-client latency run */
        ConcurrencyRun runs[MAX_CLIENT_RUNS];
        size_t n_runs;
        MountsRun mounts[MAX_MOUNT_COUNTS];
        size_t n_mounts;
        const char *mounts_skipped; /* why the extra-mounts runs did not happen, or NULL */
        PoolReport pool;
        DriversReport drivers;
        uint64_t rss_idle_kib, rss_peak_kib, hwm_end_kib, rss_end_kib;
        unsigned peak_workers, peak_workers_clients;
        int fds_before, fds_after;
        bool settled;
        char error[640]; /* the first failed request */
} Report;

/* Everything the run needs, made in bench_setup(). */
typedef struct Bench {
        Options opt;
        pid_t daemon_pid, polkit_pid, bus_pid; /* 0 when not found */
        char **images;   /* one per client of the largest run; images[0] for latency */
        size_t n_images;
        char *stage_dir; /* root-only, for the reproduced build worker */
        off_t log_start; /* where the daemon's output begins in our stderr, -1: unknown */
        char *cgroup;    /* the cgroup2 directory of the daemon's own cgroup, or NULL */
        HarnessSnapshot baseline;
        Report report;
} Bench;

/* Untimed requests before the timed ones of a latency row. */
unsigned bench_warmup(const Options *o);

/* Memory the forked clients write and the bench reads; zeroed. NULL on failure. */
void *bench_shared_alloc(size_t size);

/* Records what failed (the first failure only) and returns r. */
int bench_step_failed(Bench *b, const char *what, int r);

/* One timed iteration: its duration in *ret_ns, or -errno (after bench_step_failed()). */
typedef int (*StepFunc)(Bench *b, void *userdata, uint64_t *ret_ns);

/* Warm-up + timed iterations of step; the samples summarized into row, named name. */
int bench_measure(Bench *b, const char *name, StepFunc step, void *userdata, Row *row);

/* A StepFunc: the daemon's build worker reproduced in process, on the image fd *userdata. */
int bench_step_raw_worker(Bench *b, void *userdata, uint64_t *ret_ns);

/* One unprivileged client doing mode from start to end, on images[0]; its latencies in
 * row; the CPU used per request (warm-up included) in *ret_cpu (may be NULL). */
int bench_run_one_client(Bench *b, ClientMode mode, const char *name, Row *row,
                         CpuSnap *ret_cpu);

/* The same for a job the caller describes (mode, image, fstype, driver, target, read_path,
 * read_size, warmup, count; result, latency_ns and cycle_ns are set here), in a forked
 * caller with flags: its latencies in row, named name; with cycle_row (named by the
 * caller; may be NULL) the OpenMount cycles as well. */
int bench_run_client(Bench *b, ClientJob *job, HarnessRunFlags flags, const char *name,
                     Row *row, Row *cycle_row, CpuSnap *ret_cpu);

/* The CPU counters now, and their difference per request. */
void bench_cpu_snap(const Bench *b, CpuSnap *ret);
void bench_cpu_per_request(const CpuSnap *before, const CpuSnap *after, unsigned n,
                           CpuSnap *ret);

/* Records a client's failure (its own message, or its exit status). */
void bench_note_client_failure(Bench *b, const ClientResult *res, int status);
