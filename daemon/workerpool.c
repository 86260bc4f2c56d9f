/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's side of the workers (workerpool.h): starting usermount-worker, the pool of
 * ready ones, sending jobs and receiving replies, timeouts, and reaping.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "log.h"
#include "spawner.h"
#include "workerpool.h"

/* After a worker could not be started (or died before it was ready), the pool tries
 * again this much later rather than at once: a missing binary must not make it spin. */
#define POOL_RETRY_USEC (1ULL * 1000000ULL)

/* While requests are in flight, a taken worker is replaced once they are done, or this
 * much later. */
#define POOL_REFILL_LATER_USEC (20ULL * 1000ULL)

/* The largest reply a job of ours sends, with room to see a larger one. */
#define REPLY_BUFFER_MAX (64U * 1024U)

struct Worker {
        WorkerPool *pool;
        Worker *next, *prev;     /* pool->workers: every worker not yet reaped */
        pid_t pid;
        int fd;                  /* our end of the socket */
        sd_event_source *io;
        sd_event_source *child;
        sd_event_source *timer;
        WorkerState state;
        bool taken;              /* given to a request; else one of the pool's ready workers */
        bool working;            /* a job was sent and not answered (also after a timeout
                                  * or release, until the process is gone) */
        bool released;           /* the owner dropped it */
        bool exited;             /* reaped */
        bool killed;             /* we killed it */
        bool given_up;           /* killed while working: it may never die (a caller's FUSE
                                  * server holds it), so only its owner's limit counts it */
        uid_t owner;
        bool unauthorized;
        WorkerJobLayout job;     /* the job in flight */
        char timeout_message[UM_ERROR_MESSAGE_MAX]; /* its WorkerJob.timeout_message */
        bool job_last;
        WorkerDone done;
        void *userdata;
        /* The reply to a last job, handed on once the worker has been reaped. */
        bool pending;
        int pending_r;
        UmError pending_error;
        void *pending_reply;
        int pending_fd;
};

struct WorkerPool {
        sd_event *event;
        Spawner *spawner;         /* starts workers from a table with no caller's file */
        char *path;
        unsigned size;
        uint32_t layout;
        Worker *workers;
        sd_event_source *refill;  /* starts ready workers when the loop is idle */
        sd_event_source *retry;   /* after a failure */
        sd_event_source *later;   /* a refill put off while requests are in flight */
        bool failing;             /* the last start failed: wait for the retry */
        WorkerPoolStats stats;
        uint8_t buf[REPLY_BUFFER_MAX]; /* where messages are read, one at a time */
};

static void pool_schedule_refill(WorkerPool *p);

/* ---- the list and the counts --------------------------------------------------------- */

static void pool_link(WorkerPool *p, Worker *w) {
        w->next = p->workers;
        if (p->workers)
                p->workers->prev = w;
        p->workers = w;
}

static void pool_unlink(WorkerPool *p, Worker *w) {
        if (w->prev)
                w->prev->next = w->next;
        else if (p->workers == w)
                p->workers = w->next;
        if (w->next)
                w->next->prev = w->prev;
        w->next = w->prev = NULL;
}

static unsigned pool_count_ready(const WorkerPool *p) {
        unsigned n = 0;

        for (Worker *w = p->workers; w; w = w->next)
                if (!w->taken && w->state != WORKER_EXITING)
                        n++;
        return n;
}

unsigned worker_pool_count_alive(const WorkerPool *p) {
        unsigned n = 0;

        for (Worker *w = p ? p->workers : NULL; w; w = w->next)
                if (w->taken)
                        n++;
        return n;
}

unsigned worker_pool_count_busy(const WorkerPool *p, uid_t owner) {
        unsigned n = 0;

        for (Worker *w = p ? p->workers : NULL; w; w = w->next)
                if (owner == (uid_t) -1 ? w->working && !w->given_up
                                        : w->owner == owner &&
                                                  (w->working || w->state == WORKER_EXITING))
                        n++;
        return n;
}

unsigned worker_pool_count_busy_unauthorized(const WorkerPool *p) {
        unsigned n = 0;

        for (Worker *w = p ? p->workers : NULL; w; w = w->next)
                if (w->working && w->unauthorized && !w->given_up)
                        n++;
        return n;
}

WorkerPoolStats worker_pool_stats(const WorkerPool *p) {
        return p->stats;
}

WorkerState worker_get_state(const Worker *w) {
        return w->state;
}

void worker_set_owner(Worker *w, uid_t owner) {
        if (w)
                w->owner = owner;
}

void worker_set_unauthorized(Worker *w, bool b) {
        if (w)
                w->unauthorized = b;
}

/* ---- one worker ---------------------------------------------------------------------- */

static Worker *worker_free(Worker *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->io);
        sd_event_source_disable_unref(w->timer);
        sd_event_source_disable_unref(w->child);
        safe_close(w->fd);
        safe_close(w->pending_fd);
        free(w->pending_reply);
        free(w);
        return NULL;
}

static void worker_kill(Worker *w) {
        w->given_up = w->given_up || w->working;
        w->io = sd_event_source_disable_unref(w->io);
        w->timer = sd_event_source_disable_unref(w->timer);
        w->fd = safe_close(w->fd);
        if (w->pid > 0)
                (void) kill(w->pid, SIGKILL);
        w->killed = true;
        w->state = WORKER_EXITING;
}

/* Hands on the outcome of the job in flight, once. */
static void worker_deliver(Worker *w, int r, const void *reply, const UmError *error, int fd) {
        WorkerDone done = w->done;

        w->done = NULL;
        w->timer = sd_event_source_disable_unref(w->timer);
        if (!done || w->released) {
                safe_close(fd);
                return;
        }
        done(w, r, reply, error, fd, w->userdata);
}

static void worker_fail(Worker *w, int r, const char *fmt, ...) _printf_(3, 4);
static void worker_fail(Worker *w, int r, const char *fmt, ...) {
        UmError error = { .kind = UM_ERROR_KIND_FAILED, .error = -r };
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(error.message, sizeof(error.message), fmt, ap);
        va_end(ap);
        worker_kill(w);
        worker_deliver(w, r, NULL, &error, -EBADF);
}

static void worker_on_hello(Worker *w, const uint8_t *payload, size_t size) {
        WorkerHello hello;

        if (size != sizeof(hello)) {
                log_error("usermount-worker (pid %d) sent a malformed HELLO.", (int) w->pid);
                worker_fail(w, -EPROTO, "The mount worker could not be used: it sent "
                                   "a malformed greeting.");
        }
        memcpy(&hello, payload, sizeof(hello));
        if (hello.layout != w->pool->layout) {
                log_error("%s (pid %d) was built with other job types than this usermountd "
                          "(layout %08x, expected %08x): installed from another build? "
                          "Restart usermountd.", w->pool->path, (int) w->pid,
                          (unsigned) hello.layout, (unsigned) w->pool->layout);
                /* Every worker started from that binary is the same: not again at once. */
                w->pool->stats.failures++;
                w->pool->failing = true;
                return worker_fail(w, -EPROTO, "The mount worker is from another build of "
                                   "usermount than the daemon; the daemon needs a restart.");
        }
        if (w->state == WORKER_STARTING)
                w->state = WORKER_READY;
        w->pool->failing = false;
}

static void worker_on_reply(Worker *w, const WorkerHeader *h, const uint8_t *payload, int fd) {
        WorkerStatus status;

        if (!w->working || h->size < sizeof(status)) {
                safe_close(fd);
                return worker_fail(w, -ECHILD, "The mount worker sent a malformed result.");
        }
        memcpy(&status, payload, sizeof(status));
        status.error.message[sizeof(status.error.message) - 1] = 0;
        if (status.r < 0) {
                /* A failure is good as long as it has its status, whatever follows. */
                fd = safe_close(fd);
                if (status.error.kind <= UM_ERROR_KIND_NONE || status.error.kind >= _UM_ERROR_KIND_MAX)
                        um_error_set(&status.error, UM_ERROR_KIND_FAILED, -status.r,
                                     "The mount worker failed: %s.", strerror(-status.r));
        } else if (h->type != w->job.type || h->size != sizeof(status) + w->job.reply_size) {
                safe_close(fd);
                return worker_fail(w, -ECHILD, "The mount worker sent a malformed result.");
        } else
                status.r = 0;

        w->working = false;
        if (!w->job_last) {
                w->state = WORKER_WAITING;
                return worker_deliver(w, status.r, status.r < 0 ? NULL : payload + sizeof(status),
                                      &status.error, fd);
        }
        /* A failure is handed on at once: nothing of it is held by the worker that the
         * caller could need, and the worker's exit may wait (on the close of a caller's file
         * whose FUSE server does not answer); its owner's limit counts it until it is gone. */
        if (status.r < 0) {
                w->state = WORKER_EXITING;
                w->io = sd_event_source_disable_unref(w->io);
                return worker_deliver(w, status.r, NULL, &status.error, -EBADF);
        }
        /* Handed on once the worker is reaped (worker_on_exit()), which is right away: it
         * holds nothing but its copy of the fd by now, and exits. */
        w->state = WORKER_EXITING;
        w->pending = true;
        w->pending_r = status.r;
        w->pending_error = status.error;
        w->pending_fd = fd;
        if (status.r >= 0) {
                w->pending_reply = malloc(w->job.reply_size ?: 1);
                if (!w->pending_reply) {
                        w->pending = false;
                        w->pending_fd = safe_close(w->pending_fd);
                        return worker_fail(w, -ENOMEM, "Out of memory.");
                }
                memcpy(w->pending_reply, payload + sizeof(status), w->job.reply_size);
        }
        w->io = sd_event_source_disable_unref(w->io);
}

/* Reads and handles one message into the pool's buffer (never re-entered: the loop is single
 * threaded and no callback reads); 1 if there was one, 0 if not. */
static int worker_read_one(Worker *w, int fd) {
        uint8_t *buf = w->pool->buf;
        int fds[1] = { -EBADF };
        WorkerHeader h;
        size_t n_fds;
        ssize_t n;

        n = fdpass_recv(fd, buf, REPLY_BUFFER_MAX, fds, 1, &n_fds, MSG_DONTWAIT);
        if (n == -EAGAIN)
                return 0;
        if (n <= 0 && n != -EMSGSIZE) {
                /* Gone without a (further) message: worker_on_exit() says how it died. */
                w->io = sd_event_source_disable_unref(w->io);
                return 0;
        }
        if (n < (ssize_t) sizeof(h)) {
                close_many(fds, n_fds);
                worker_fail(w, -ECHILD, "The mount worker sent a malformed message.");
                return 1;
        }
        memcpy(&h, buf, sizeof(h));
        if (h.magic != WORKER_MAGIC || h.version != WORKER_PROTOCOL_VERSION) {
                close_many(fds, n_fds);
                if (h.magic != WORKER_MAGIC)
                        log_error("%s (pid %d) sent something that is not usermount's worker "
                                  "protocol.", w->pool->path, (int) w->pid);
                else
                        log_error("%s (pid %d) speaks worker protocol version %u, this "
                                  "usermountd %u: installed from another build? Restart "
                                  "usermountd.", w->pool->path, (int) w->pid,
                                  (unsigned) h.version, (unsigned) WORKER_PROTOCOL_VERSION);
                worker_fail(w, -EPROTO, "The mount worker is from another build of "
                            "usermount than the daemon; the daemon needs a restart.");
                return 1;
        }
        if (h.size != (size_t) n - sizeof(h)) {
                close_many(fds, n_fds);
                worker_fail(w, -ECHILD, "The mount worker sent a malformed message.");
                return 1;
        }
        if (h.kind == WORKER_MSG_HELLO && n_fds == 0)
                worker_on_hello(w, buf + sizeof(h), h.size);
        else if (h.kind == WORKER_MSG_REPLY)
                worker_on_reply(w, &h, buf + sizeof(h), n_fds > 0 ? fds[0] : -EBADF);
        else {
                close_many(fds, n_fds);
                worker_fail(w, -ECHILD, "The mount worker sent a malformed message.");
        }
        return 1;
}

static int worker_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) worker_read_one(userdata, fd);
        return 0;
}

static int worker_on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Worker *w = userdata;

        /* It replied but does not exit: the reply stands, once the kill reaped it. */
        if (w->pending) {
                worker_kill(w);
                return 0;
        }
        worker_fail(w, -ETIMEDOUT, "%s", w->timeout_message[0] ? w->timeout_message :
                    "The mount worker did not finish in time; the request was cancelled.");
        return 0;
}

static int worker_on_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Worker *w = userdata;
        WorkerPool *p = w->pool;

        /* It has exited (sd-event reaps it once we return): forget the pid, so that nothing
         * signals it, or a process that reuses the pid later. */
        w->pid = 0;
        w->child = sd_event_source_disable_unref(w->child);
        /* A reply may still sit in the socket: drain it before declaring the worker dead. */
        while (!w->pending && w->fd >= 0 && w->io && w->done && worker_read_one(w, w->fd) > 0)
                ;
        w->state = WORKER_EXITING;
        w->working = false;
        /* Off the list before the reply is handed on: it is gone when its owner hears. */
        pool_unlink(p, w);
        if (w->pending) {
                w->pending = false;
                worker_deliver(w, w->pending_r, w->pending_reply, &w->pending_error,
                               TAKE_FD(w->pending_fd));
        } else if (w->done) {
                if (si->si_code == CLD_EXITED)
                        worker_fail(w, -ECHILD, "The mount worker exited with status %d "
                                    "without a result.", si->si_status);
                else
                        worker_fail(w, -ECHILD, "The mount worker was killed by signal %d.",
                                    si->si_status);
        }
        /* Only now: the done callback above may have released the handle. */
        w->exited = true;
        if (!w->taken && !w->killed) {
                /* A ready worker died: it never said hello, or something killed it. (One
                 * the pool let go of, or that failed its greeting, was killed by us.) */
                log_warning("A ready usermount-worker (%s) %s %d.", p->path,
                            si->si_code == CLD_EXITED ? "exited with status" :
                            "was killed by signal", si->si_status);
                p->stats.failures++;
                p->failing = true;
        }
        if (!w->taken || w->released)
                worker_free(w);
        /* One fewer in flight: maybe the moment to replace the ones taken. */
        pool_schedule_refill(p);
        return 0;
}

static int worker_spawn(WorkerPool *p, Worker **ret) {
        char pid_arg[16];
        char *const argv[] = { p->path, pid_arg, NULL };
        Worker *w;
        pid_t pid;
        int fd, r;

        snprintf(pid_arg, sizeof(pid_arg), "%d", (int) getpid());
        /* From the spawner's fd table, never the main thread's: that one may hold a caller's
         * file, whose close in the child could wait on the caller (spawner.h). */
        r = spawner_spawn(p->spawner, p->path, argv, &pid, &fd);
        if (r < 0)
                return r;

        w = calloc(1, sizeof(*w));
        if (!w) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                safe_close(fd);
                return -ENOMEM;
        }
        *w = (Worker) {
                .pool = p,
                .pid = pid,
                .fd = fd,
                .state = WORKER_STARTING,
                .owner = (uid_t) -1,
                .pending_fd = -EBADF,
        };
        p->stats.spawned++;
        pool_link(p, w);
        r = sd_event_add_child(p->event, &w->child, pid, WEXITED, worker_on_exit, w);
        if (r < 0) {
                /* Without a child source nobody would reap it: kill and reap right now. */
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                pool_unlink(p, w);
                worker_free(w);
                return r;
        }
        r = sd_event_add_io(p->event, &w->io, w->fd, EPOLLIN, worker_on_io, w);
        if (r < 0) {
                /* Reaped by its child source, then freed as a released one. */
                w->taken = w->released = true;
                worker_kill(w);
                return r;
        }
        *ret = w;
        return 0;
}

/* ---- the pool ------------------------------------------------------------------------ */

static int pool_on_refill(sd_event_source *s, void *userdata) {
        WorkerPool *p = userdata;

        while (!p->failing && pool_count_ready(p) < p->size) {
                Worker *w;
                int r = worker_spawn(p, &w);

                if (r < 0) {
                        log_warning_errno(r, "Could not start %s for the pool: %m", p->path);
                        p->stats.failures++;
                        p->failing = true;
                }
        }
        if (p->failing)
                pool_schedule_refill(p);
        return 0;
}

static int pool_on_later(sd_event_source *s, uint64_t usec, void *userdata) {
        WorkerPool *p = userdata;

        (void) sd_event_source_set_enabled(p->refill, SD_EVENT_ONESHOT);
        return 0;
}

static int pool_on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        WorkerPool *p = userdata;

        p->failing = false;
        return pool_on_refill(NULL, p);
}

static void pool_schedule_refill(WorkerPool *p) {
        if (pool_count_ready(p) >= p->size)
                return;
        if (p->failing) {
                if (!p->retry)
                        (void) sd_event_add_time_relative(p->event, &p->retry, CLOCK_MONOTONIC,
                                                          POOL_RETRY_USEC, 0, pool_on_retry, p);
                else if (sd_event_source_set_time_relative(p->retry, POOL_RETRY_USEC) >= 0)
                        (void) sd_event_source_set_enabled(p->retry, SD_EVENT_ONESHOT);
                return;
        }
        /* Starting a worker costs about a millisecond of CPU (exec, the dynamic linker): not
         * while a request's own worker needs the CPU, unless the pool is empty. Under
         * steady load, at the latest POOL_REFILL_LATER_USEC after a worker was taken. */
        if (pool_count_ready(p) > 0 && worker_pool_count_alive(p) > 0) {
                if (!p->later)
                        (void) sd_event_add_time_relative(p->event, &p->later, CLOCK_MONOTONIC,
                                                          POOL_REFILL_LATER_USEC, 0,
                                                          pool_on_later, p);
                else if (sd_event_source_get_enabled(p->later, NULL) == 0 &&
                         sd_event_source_set_time_relative(p->later, POOL_REFILL_LATER_USEC) >= 0)
                        (void) sd_event_source_set_enabled(p->later, SD_EVENT_ONESHOT);
                return;
        }
        (void) sd_event_source_set_enabled(p->refill, SD_EVENT_ONESHOT);
}

int worker_pool_new(sd_event *event, const char *path, unsigned size, uint32_t layout,
                    WorkerPool **ret) {
        WorkerPool *p;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->event = sd_event_ref(event);
        r = spawner_new(&p->spawner);
        if (r < 0) {
                worker_pool_free(p);
                return r;
        }
        p->size = size;
        p->layout = layout;
        p->path = strdup(path);
        if (!p->path) {
                worker_pool_free(p);
                return -ENOMEM;
        }
        /* Refills run when nothing else is pending: never ahead of a request's own work. */
        r = sd_event_add_defer(event, &p->refill, pool_on_refill, p);
        if (r >= 0)
                r = sd_event_source_set_priority(p->refill, SD_EVENT_PRIORITY_IDLE);
        if (r < 0) {
                worker_pool_free(p);
                return r;
        }
        (void) sd_event_source_set_enabled(p->refill, SD_EVENT_OFF);
        /* Filled now, before the daemon takes its name: the first request finds them. */
        (void) pool_on_refill(NULL, p);
        *ret = p;
        return 0;
}

WorkerPool *worker_pool_free(WorkerPool *p) {
        if (!p)
                return NULL;
        while (p->workers) {
                Worker *w = p->workers;
                pid_t pid = w->pid;

                pool_unlink(p, w);
                worker_kill(w);
                /* A ready worker dies at once; one stuck in the kernel is left to init. */
                if (pid > 0)
                        (void) waitpid(pid, NULL, w->taken ? WNOHANG : 0);
                w->pool = NULL;
                if (!w->taken || w->released)
                        worker_free(w);
                else {
                        /* Its owner still holds the handle; it is dead to the event loop. */
                        w->child = sd_event_source_disable_unref(w->child);
                        w->pid = 0;
                        w->exited = true;
                }
        }
        sd_event_source_disable_unref(p->refill);
        sd_event_source_disable_unref(p->retry);
        sd_event_source_disable_unref(p->later);
        spawner_free(p->spawner);
        sd_event_unref(p->event);
        free(p->path);
        free(p);
        return NULL;
}

void worker_pool_set_size(WorkerPool *p, unsigned size) {
        p->size = size;
        for (Worker *w = p->workers, *next; w; w = next) {
                next = w->next;
                if (!w->taken && w->state != WORKER_EXITING && pool_count_ready(p) > size)
                        worker_kill(w); /* reaped (and freed) by worker_on_exit() */
        }
        pool_schedule_refill(p);
}

/* ---- jobs ---------------------------------------------------------------------------- */

int worker_send(Worker *w, const WorkerJob *job, WorkerDone done, void *userdata) {
        WorkerHeader h = {
                .magic = WORKER_MAGIC,
                .version = WORKER_PROTOCOL_VERSION,
                .kind = WORKER_MSG_JOB,
                .type = job->layout.type,
                .flags = job->last ? WORKER_JOB_LAST : 0,
                .size = job->layout.input_size,
        };
        const struct iovec iov[] = {
                { .iov_base = &h, .iov_len = sizeof(h) },
                { .iov_base = (void *) job->input, .iov_len = job->layout.input_size },
        };
        int r;

        if (w->exited || w->fd < 0 || w->state == WORKER_EXITING || w->working)
                return -ECHILD;
        if (job->layout.reply_size > REPLY_BUFFER_MAX - sizeof(WorkerHeader) - sizeof(WorkerStatus))
                return -EMSGSIZE;
        r = fdpass_send(w->fd, iov, ELEMENTSOF(iov), job->fds, job->n_fds);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(w->pool->event, &w->timer, CLOCK_MONOTONIC,
                                       job->timeout_usec, 0, worker_on_timeout, w);
        if (r < 0) {
                worker_kill(w);
                return r;
        }
        w->job = job->layout;
        snprintf(w->timeout_message, sizeof(w->timeout_message), "%s",
                 strempty(job->timeout_message));
        w->job_last = job->last;
        w->done = done;
        w->userdata = userdata;
        w->working = true;
        w->state = WORKER_BUSY;
        return 0;
}

int worker_start(WorkerPool *p, const WorkerJob *job, WorkerDone done, void *userdata,
                 Worker **ret) {
        Worker *w = NULL;
        int r;

        /* A warm one first, else one still starting (further along than a new one). */
        for (Worker *i = p->workers; i; i = i->next)
                if (!i->taken && (i->state == WORKER_READY ||
                                  (i->state == WORKER_STARTING && !w)))
                        w = i;
        if (w)
                p->stats.hits++;
        else {
                r = worker_spawn(p, &w);
                if (r < 0) {
                        p->stats.failures++;
                        return r;
                }
                p->stats.misses++;
        }
        w->taken = true;
        pool_schedule_refill(p);
        r = worker_send(w, job, done, userdata);
        if (r < 0) {
                worker_release(w);
                return r;
        }
        *ret = w;
        return 0;
}

Worker *worker_release(Worker *w) {
        if (!w)
                return NULL;
        w->released = true;
        w->done = NULL;
        if (w->state != WORKER_EXITING || w->fd >= 0)
                worker_kill(w);
        if (w->exited)
                worker_free(w);
        return NULL;
}
