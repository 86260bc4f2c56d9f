/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workers: all privileged or possibly blocking work of a request (probing a device,
 * attaching a loop device, building the mount, changing namespaces) runs in
 * usermount-worker, a separate binary the daemon starts with posix_spawn(), never in the
 * main loop (docs/architecture.md, "Process model"). A worker serves one request: it is given
 * typed jobs (jobproto.h) one after another over its socket (worker-proto.h) and exits after
 * the one sent as last. The daemon hands on the reply to a last job only once the worker
 * has exited, so no worker holds anything of the request any more (an fd on a mount it
 * made would keep that mount busy).
 *
 * The WorkerPool keeps a few workers started and warm (WorkerPoolSize, 2 by default), so
 * that a request does not wait for a process to start: a request takes a ready worker (a
 * hit) or starts one (a miss), and the pool starts a replacement once the event loop is
 * idle. Ready workers are not busy and do not keep the daemon from its idle exit; they
 * are killed then. Every worker (ready, working, or given up on and still dying) is on the
 * pool's list until it is reaped.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "um-error.h"
#include "worker-proto.h"

typedef struct Worker Worker;
typedef struct WorkerPool WorkerPool;

typedef enum WorkerState {
        WORKER_STARTING, /* spawned, HELLO not yet received, no job */
        WORKER_READY,    /* warm, in the pool, no job */
        WORKER_BUSY,     /* working on a job */
        WORKER_WAITING,  /* replied to a job that was not its last; waits for the next */
        WORKER_EXITING,  /* replied to its last job, or killed; not yet reaped */
} WorkerState;

/* One job to send (jobproto.h has the types). */
typedef struct WorkerJob {
        WorkerJobLayout layout; /* type and sizes: the reply must have reply_size bytes */
        const void *input;      /* layout.input_size bytes */
        const int *fds;         /* sent with it (dup()ed by the kernel; still the caller's) */
        size_t n_fds;
        bool last;              /* the worker exits after it */
        uint64_t timeout_usec;  /* killed if it has not replied by then */
        const char *timeout_message; /* what the caller is told then (copied); NULL: a
                                      * general sentence */
} WorkerJob;

/*
 * Called in the main loop exactly once per job, unless worker_release() came first: r is
 * the reply's r when a reply arrived, -ETIMEDOUT after the timeout, or -ECHILD when the
 * worker died without replying (error describes it). reply (layout.reply_size bytes, or
 * NULL when r < 0) is valid only during the call; fd (-EBADF if none) is owned by the
 * callback. After a job that was not last, w waits for worker_send() or worker_release().
 */
typedef void (*WorkerDone)(Worker *w, int r, const void *reply, const UmError *error, int fd,
                           void *userdata);

/*
 * A pool of size ready workers of the binary at path (argv: path, the daemon's pid; fd 3:
 * its socket); layout: the hash of the job table the workers must have. Filled before it
 * returns.
 */
int worker_pool_new(sd_event *event, const char *path, unsigned size, uint32_t layout,
                    WorkerPool **ret);
/* Kills every worker, reaped or not (the daemon is exiting). Accepts NULL. */
WorkerPool *worker_pool_free(WorkerPool *p);

/* Changes the number of ready workers kept (0: none; the daemon is about to exit). */
void worker_pool_set_size(WorkerPool *p, unsigned size);

typedef struct WorkerPoolStats {
        unsigned spawned;   /* workers started */
        unsigned hits;      /* requests that found a ready worker */
        unsigned misses;    /* requests that had to start one */
        unsigned failures;  /* workers that could not be started, or died before HELLO */
} WorkerPoolStats;
WorkerPoolStats worker_pool_stats(const WorkerPool *p);

/*
 * Takes a worker (ready if there is one), sends it job, and calls done with its reply. On
 * success *ret is the handle (owned by the caller: worker_release()).
 */
int worker_start(WorkerPool *p, const WorkerJob *job, WorkerDone done, void *userdata,
                 Worker **ret);

/* Sends the next job to w, which is WORKER_WAITING. On failure w is unchanged. */
int worker_send(Worker *w, const WorkerJob *job, WorkerDone done, void *userdata);

/*
 * Drops the caller's interest: the callback is never called; a worker still running is
 * killed and reaped later by the event loop, after which the handle frees itself.
 * Accepts NULL; returns NULL.
 */
Worker *worker_release(Worker *w);

WorkerState worker_get_state(const Worker *w);

/* Records whose request w works for (default: nobody's, (uid_t) -1). Accepts NULL. */
void worker_set_owner(Worker *w, uid_t owner);

/* Marks w as working for a request polkit has not authorized yet, for
 * MaxUnauthorizedRequests= (owner.h); false once it has. Accepts NULL. */
void worker_set_unauthorized(Worker *w, bool b);

/* Workers that were taken for requests and are not reaped yet (ready ones do not count):
 * whether the daemon is idle. */
unsigned worker_pool_count_alive(const WorkerPool *p);

/* Workers working on a job (WORKER_BUSY) for owner, or for everybody with (uid_t) -1; for
 * the worker limits. One waiting for its next job or ready does not count. One given up
 * on (killed after a timeout) or done and exiting, and not yet reaped, still counts for
 * its owner: a worker stuck on the owner's hung device or FUSE server is still a process;
 * but not in the count of everybody's, which would let one user's stuck workers refuse
 * everyone else (each owner has at most MaxWorkersPerUser= of them). */
unsigned worker_pool_count_busy(const WorkerPool *p, uid_t owner);

/* Of everybody's, the ones marked unauthorized (worker_set_unauthorized()). */
unsigned worker_pool_count_busy_unauthorized(const WorkerPool *p);
