/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Forked workers: all privileged or possibly blocking work of a request (probing a
 * device, attaching a loop device, building the mount, changing namespaces) runs in a
 * child process, never in the main loop (ARCHITECTURE.md, "Process model"). A worker runs
 * one function, sends one fixed-size reply (plus at most one fd) over a SOCK_SEQPACKET
 * socketpair, and exits. The main loop waits for the reply without blocking, enforces a
 * timeout (SIGKILL), and reaps the child even after its owner has lost interest.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "attach.h"
#include "idmap.h"
#include "source.h"
#include "um-error.h"

/* What a worker sends back; one struct for every kind of worker keeps the protocol trivial. */
typedef struct WorkerReply {
        int32_t r;     /* >= 0 success, else -errno, with error set */
        UmError error;
        SourceProbe probe;       /* probe workers */
        SourceInfo source;       /* probe workers of a caller's fd: what it is */
        char device[64];         /* mount workers: the block device mounted, e.g. /dev/loop3 */
        char backing_file[4096]; /* mount workers: the loop device's backing file, if any */
        uint64_t mount_id;       /* mount workers: unique mount id of the returned fd */
        uint64_t loop_devnum;    /* mount workers: the loop device made for an image (dev_t), or 0 */
        uint64_t loop_diskseq;   /* mount workers: its disk sequence number (looptrack.h) */
        bool read_only;          /* device probe workers: the device could only be opened read-only */
        AttachResult attach;     /* attach workers */
        IdMap uid_map;           /* probe workers: the caller's checked maps (idmap namespace); */
        IdMap gid_map;           /* mount workers: the maps applied (idmap user, namespace) */
        int32_t idmap_mode;      /* mount workers: the id-mapping applied (IdmapMode) */
} WorkerReply;

typedef struct Worker Worker;

/*
 * Runs in the child. Fills *reply (r and error for failures) and optionally *ret_fd (an fd
 * to pass back, closed by the worker code after sending). The return value is ignored;
 * what counts is reply->r.
 */
typedef void (*WorkerFunc)(void *userdata, WorkerReply *reply, int *ret_fd);

/*
 * Called in the main loop exactly once, unless worker_release() came first: r is
 * reply->r when a reply arrived, -ETIMEDOUT after the timeout, or -ECHILD when the child
 * died without replying (error describes it). fd (-EBADF if none) is owned by the
 * callback. reply is valid only during the call. A reply is handed on only once the child
 * has exited: by then no worker holds anything of the request (an fd on a mount it made
 * would keep that mount busy).
 */
typedef void (*WorkerDone)(Worker *w, int r, const WorkerReply *reply, const UmError *error,
                           int fd, void *userdata);

/*
 * Forks a child that keeps only keep_fds (and its socket) open, dies with the daemon, and
 * runs func(func_userdata, ...). SIGCHLD must be blocked in the caller (sd-event child
 * sources). On success *ret is the handle (owned by the caller: worker_release()).
 */
int worker_spawn(sd_event *event, uint64_t timeout_usec, const int *keep_fds, size_t n_keep_fds,
                 WorkerFunc func, void *func_userdata, WorkerDone done, void *done_userdata,
                 Worker **ret);

/*
 * Drops the caller's interest: the callback is never called; a child still running is
 * killed and reaped later by the event loop, after which the handle frees itself.
 * Accepts NULL; returns NULL.
 */
Worker *worker_release(Worker *w);

/* Number of workers alive (spawned and not yet reaped, even if released), for tests. */
unsigned worker_count_alive(void);

/* Workers that have not replied (working, or given up on but not yet dead: one stuck on
 * a hung device is still a process) for owner, or for everybody with (uid_t) -1; for the
 * worker limits. One that replied is on its way out and does not count. */
unsigned worker_count_busy(uid_t owner);

/* In a child: closes every fd >= 3 that is not in keep[] (which it sorts; negative
 * entries keep nothing). */
void close_all_fds_except(int *keep, size_t n_keep);

/* Records whose request w works for (default: nobody's, (uid_t) -1). Accepts NULL. */
void worker_set_owner(Worker *w, uid_t owner);

/* Marks w as working for a request polkit has not authorized yet, for
 * MaxUnauthorizedRequests= (owner.h). Accepts NULL. */
void worker_set_unauthorized(Worker *w);

/* Workers marked so that have not replied, as worker_count_busy() counts them: a probe
 * worker stuck on a hung device keeps counting after its request timed out. */
unsigned worker_count_busy_unauthorized(void);
