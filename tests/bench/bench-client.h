/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The benchmark's clients: forked, unprivileged harness callers, each with its own bus
 * connection, that call the daemon in a loop and write what they measured into memory
 * shared with the bench (mapped before the fork), so that timing never goes through a pipe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

typedef enum ClientMode {
        CLIENT_OPEN_MOUNT,    /* OpenMount of the image, the mount fd closed at once */
        CLIENT_MOUNT_UNMOUNT, /* MountFd of the image, then Unmount: the Unmount is timed */
        CLIENT_BUS_PING,      /* Get of the Version property: a bus round trip to the daemon */
        CLIENT_HOLD,          /* connect, report "name=<unique name>", wait for the release */
        CLIENT_OPEN_READ,     /* OpenMount, attach at target, time reading read_path through it
                               * (needs a mount namespace of the caller's own) */
} ClientMode;

/* Written by one client only; read by the bench once done is set. */
typedef struct ClientResult {
        uint64_t start_ns; /* just before the first timed request (CLOCK_MONOTONIC) */
        uint64_t end_ns;   /* when the last one's reply arrived */
        unsigned n_done;   /* timed requests that succeeded */
        int done;          /* set last, when the client is through, failed or not */
        bool failed;
        char error[512];   /* the first failure: D-Bus error name and message */
} ClientResult;

typedef struct ClientJob {
        ClientMode mode;
        const char *image;      /* opened O_RDONLY once; each request passes that fd */
        const char *fstype;
        const char *driver;     /* params["driver"] ("kernel", "userspace"), NULL: none; the
                                 * reply's info["driver"] must say the same */
        const char *cgroup;     /* the daemon's cgroup2 directory, where its userspace drivers
                                 * run (NULL: look for them across the machine) */
        const char *target;     /* CLIENT_OPEN_READ: an empty directory to attach the mount on */
        const char *read_path;  /* CLIENT_OPEN_READ: the file to read, relative to the mount */
        uint64_t read_size;     /* CLIENT_OPEN_READ: its size; reading less is a failure */
        unsigned warmup;        /* untimed requests first */
        unsigned count;         /* timed requests */
        bool start_on_release;  /* report "ready" and wait for harness_caller_release() */
        ClientResult *result;   /* shared memory */
        uint64_t *latency_ns;   /* shared memory, count entries: send to reply received;
                                 * CLIENT_OPEN_READ: open of read_path to its last byte read */
        uint64_t *cycle_ns;     /* CLIENT_OPEN_MOUNT, shared memory or NULL: send to reply
                                 * received, plus the close of the mount fd and, for a
                                 * userspace driver, until that driver exited */
} ClientJob;

/* A HarnessCallerFunc: runs job (a ClientJob *) in the forked caller; exit status 0, or
 * 1 when a request failed (the reason is in job->result->error). */
int client_main(void *userdata);

/* One OpenMount of source_fd (rewound first) with options and params["driver"] if driver
 * is not NULL (the reply's info["driver"] must say the same): the reply (which owns the
 * mount fd) in *ret_reply, the fd in *ret_fd, send to reply in *ret_ns. On failure the
 * D-Bus error (or what failed) in err, and -errno. */
int bench_open_mount(sd_bus *bus, int source_fd, const char *fstype, const char *options,
                     const char *driver, sd_bus_message **ret_reply, int *ret_fd,
                     uint64_t *ret_ns, char *err, size_t err_size);

/* The one userspace driver of the daemon's cgroup (NULL: of the machine) that runs now, as
 * a pidfd (and its pid, if ret_pid); more or fewer than one is a failure, said in err. */
int bench_find_driver(const char *cgroup, int *ret_pidfd, pid_t *ret_pid, char *err,
                      size_t err_size);

/* Until the process of pidfd has exited (HARNESS_TIMEOUT_MS at most). */
int bench_await_exit(int pidfd, char *err, size_t err_size);
