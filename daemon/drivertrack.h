/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The userspace drivers (fusedriver.h) usermountd started for users and that still run:
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
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#define DRIVERTRACK_FILE "drivers"
/* A state file with more lines is refused as a whole: far more than any limit allows. */
#define DRIVERTRACK_MAX 65536

typedef struct DriverTrackEntry {
        pid_t pid;
        uint64_t start;          /* clock ticks after boot */
        uid_t owner;             /* whom the per-user limit charges (owner.h) */
        uid_t uid;               /* the uid the driver runs as */
        int pidfd;
        sd_event_source *watch;  /* EPOLLIN on pidfd: it exited */
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

/* Remembers a driver (pidfd is taken, also on failure), watches it and saves the table.
 * -ENOMEM, or -errno of the watch. A driver that has already exited is still added: its
 * watch fires at once. */
int drivertrack_add(DriverTrack *t, pid_t pid, uint64_t start, uid_t owner, uid_t uid,
                    int pidfd);

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
