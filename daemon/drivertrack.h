/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The userspace drivers (driver/fusedriver.h) usermountd started for users and that still run:
 * for the driver limits (MaxDrivers=, MaxDriversPerUser=) and to notice a driver that
 * exits. A driver lives as long as its mount, not as long as the daemon: an OpenMount
 * mount's driver runs for as long as the caller keeps the mount, across the daemon's idle
 * exit and restarts, without the daemon hearing of it again. So the table is kept in a
 * state file in the runtime directory too ("drivers", one line "PID START OWNER UID" per
 * driver, written atomically after every change), and a new instance takes over the
 * drivers of the last one that still run.
 *
 * A driver is recognised by its pid and start time (field 22 of /proc/PID/stat): a reused
 * pid has another start time. Each one is watched through a pidfd; when it exits, the
 * table forgets it and calls on_exit (the Manager then detaches a registered mount whose
 * driver is gone and emits MountRemoved).
 *
 * A driver is in the table from its start (START_DRIVER, jobproto.h), before anything looks
 * into its mount, so that it counts for the limits and can be ended whatever happens to
 * the request. The table also holds a copy of each driver's FUSE connection: polled, it
 * reports an error once the superblock is gone (the last mount of it unmounted or
 * closed, or its device removed), and a driver still running then is given
 * DRIVERTRACK_GRACE_USEC to finish writing and exit before it is killed. A driver that
 * exits lets go of its connection only when the table does too, which it does at once
 * (its mount's users then get ENOTCONN). A new instance takes the connection of each
 * driver it takes over from the driver itself (pidfd_getfd()).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#define DRIVERTRACK_FILE "drivers"
/* How long a driver whose mount is gone may take to exit by itself (a driver writes its
 * caches back to its image then) before it is killed. */
#define DRIVERTRACK_GRACE_USEC (10ULL * 1000000ULL)
/* Where a driver has its FUSE connection (fusedriver.c). */
#define DRIVERTRACK_CONN_FD 4
/* A state file with more lines is refused as a whole: far more than any limit allows. */
#define DRIVERTRACK_MAX 65536

typedef struct DriverTrackEntry {
        pid_t pid;
        uint64_t start;          /* clock ticks after boot */
        uid_t owner;             /* whom the per-user limit charges (owner.h) */
        uid_t uid;               /* the uid the driver runs as */
        int pidfd;
        sd_event_source *watch;  /* EPOLLIN on pidfd: it exited */
        int conn_fd;             /* its FUSE connection, or -EBADF */
        sd_event_source *conn_watch; /* EPOLLERR on conn_fd: the superblock is gone */
        sd_event_source *grace;  /* the mount is gone: killed when this fires */
} DriverTrackEntry;

typedef struct DriverTrack DriverTrack;
typedef void (*DriverTrackExit)(DriverTrack *t, pid_t pid, uint64_t start, void *userdata);

struct DriverTrack {
        DriverTrackEntry *entries;
        size_t n_entries;
        char *path;              /* the state file; NULL: not saved (tests) */
        sd_event *event;         /* NULL: not watched */
        DriverTrackExit on_exit;
        void *userdata;
};

/* Remembers a driver (pidfd and conn_fd, which may be -EBADF, are taken, also on failure),
 * watches it and saves the table. -ENOMEM, or -errno of the watch. A driver that has
 * already exited is still added: its watch fires at once. */
int drivertrack_add(DriverTrack *t, pid_t pid, uint64_t start, uid_t owner, uid_t uid,
                    int pidfd, int conn_fd);

/* The same for a driver this instance did not start (the last one did): its FUSE
 * connection is taken from the driver itself (pidfd_getfd()), if it still has it. */
int drivertrack_adopt(DriverTrack *t, pid_t pid, uint64_t start, uid_t owner, uid_t uid,
                      int pidfd);

/* Kills the driver (SIGKILL through its pidfd): the request that started it failed. It
 * stays in the table until its exit watch runs. -ESRCH if the table does not hold it. */
int drivertrack_kill(DriverTrack *t, pid_t pid, uint64_t start);

/* The drivers remembered for owner, or all with (uid_t) -1. */
size_t drivertrack_count(const DriverTrack *t, uid_t owner);

/* Forgets the drivers that exited and whose exit watch has not run yet (an OpenMount's
 * caller closed the mount a moment ago); returns how many. Without calling on_exit: the
 * reconcile notices a registered mount's dead driver on its own. */
size_t drivertrack_prune(DriverTrack *t);

/* Whether the table holds the driver pid that started at start. */
bool drivertrack_has(const DriverTrack *t, pid_t pid, uint64_t start);

/* Whether the process pid with that start time still runs (a pidfd and /proc). */
bool drivertrack_alive(pid_t pid, uint64_t start);

/* Reads the state file t->path and takes over the drivers in it that still run; the rest
 * are dropped, and so is a malformed file (with a count in *ret_dropped). */
int drivertrack_load(DriverTrack *t, size_t *ret_dropped);

/* Writes the state file (temporary file, rename). */
int drivertrack_save(const DriverTrack *t);

/* Forgets every driver (the processes go on) and frees the table's memory. */
void drivertrack_done(DriverTrack *t);
