/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Forked workers (see worker.h). The child side is deliberately small: reset signals,
 * close every fd it was not given, run the function, send one message, _exit().
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker.h"

struct Worker {
        pid_t pid;
        int fd;                  /* our end of the socketpair */
        sd_event_source *io;
        sd_event_source *child;
        sd_event_source *timer;
        WorkerDone done;
        void *done_userdata;
        bool finished;           /* done was called (or released) */
        bool exited;             /* child reaped */
        bool released;           /* owner dropped it */
        uid_t owner;             /* whose request it works for, for per-user limits */
        bool unauthorized;       /* for a request polkit has not authorized yet */
        bool replied;            /* its reply arrived: it is exiting, and counts no more */
        WorkerReply *pending;    /* that reply, handed on once the child is reaped */
        int pending_fd;          /* and the fd it carried */
        Worker *alive_next, *alive_prev;
};

/* Every worker not yet reaped, including released ones that are still dying (a worker
 * stuck in the kernel on a hung device stays here until it finally exits). */
static Worker *alive;
static unsigned n_alive;

unsigned worker_count_alive(void) {
        return n_alive;
}

unsigned worker_count_busy(uid_t owner) {
        unsigned n = 0;

        for (Worker *w = alive; w; w = w->alive_next)
                if (!w->replied && (owner == (uid_t) -1 || w->owner == owner))
                        n++;
        return n;
}

void worker_set_owner(Worker *w, uid_t owner) {
        if (w)
                w->owner = owner;
}

void worker_set_unauthorized(Worker *w) {
        if (w)
                w->unauthorized = true;
}

unsigned worker_count_busy_unauthorized(void) {
        unsigned n = 0;

        for (Worker *w = alive; w; w = w->alive_next)
                if (!w->replied && w->unauthorized)
                        n++;
        return n;
}

static void alive_add(Worker *w) {
        w->alive_next = alive;
        if (alive)
                alive->alive_prev = w;
        alive = w;
        n_alive++;
}

static void alive_remove(Worker *w) {
        if (w->alive_prev)
                w->alive_prev->alive_next = w->alive_next;
        else
                alive = w->alive_next;
        if (w->alive_next)
                w->alive_next->alive_prev = w->alive_prev;
        w->alive_next = w->alive_prev = NULL;
        n_alive--;
}

static Worker *worker_free(Worker *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->io);
        sd_event_source_disable_unref(w->timer);
        sd_event_source_disable_unref(w->child);
        safe_close(w->fd);
        safe_close(w->pending_fd);
        free(w->pending);
        free(w);
        return NULL;
}

/* Frees the handle once nobody needs it: the owner is gone and the child was reaped. */
static void worker_maybe_free(Worker *w) {
        if (w->released && w->exited)
                worker_free(w);
}

static void worker_finish(Worker *w, int r, const WorkerReply *reply, const UmError *error,
                          int fd) {
        w->io = sd_event_source_disable_unref(w->io);
        w->timer = sd_event_source_disable_unref(w->timer);
        w->fd = safe_close(w->fd);

        if (w->finished || !w->done) {
                safe_close(fd);
                return;
        }
        w->finished = true;
        w->done(w, r, reply, error, fd, w->done_userdata);
}

static void worker_kill(Worker *w) {
        if (w->pid > 0)
                (void) kill(w->pid, SIGKILL);
}

static int on_worker_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Worker *w = userdata;
        WorkerReply *reply;
        union {
                struct cmsghdr cmsghdr;
                uint8_t buf[CMSG_SPACE(sizeof(int) * 4)];
        } control;
        struct iovec iov;
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        int passed_fd = -EBADF;
        UmError error = {};
        ssize_t n;

        reply = calloc(1, sizeof(*reply));
        if (!reply) {
                um_error_set(&error, UM_ERROR_KIND_FAILED, ENOMEM, "Out of memory.");
                worker_kill(w);
                worker_finish(w, -ENOMEM, NULL, &error, -EBADF);
                return 0;
        }
        iov = (struct iovec) { .iov_base = reply, .iov_len = sizeof(*reply) };

        n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                free(reply);
                return 0;
        }
        if (n <= 0) {
                /* The child is gone without a reply: on_worker_exit() says how it died. */
                free(reply);
                w->io = sd_event_source_disable_unref(w->io);
                return 0;
        }

        /* Collect every fd the message carried; keep one, close the rest. */
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                int fds[4];
                memcpy(fds, CMSG_DATA(c), k * sizeof(int));
                for (size_t i = 0; i < k; i++) {
                        if (passed_fd < 0)
                                passed_fd = fds[i];
                        else
                                safe_close(fds[i]);
                }
        }

        if (n != (ssize_t) sizeof(*reply) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                safe_close(passed_fd);
                free(reply);
                um_error_set(&error, UM_ERROR_KIND_FAILED, EIO,
                             "The mount worker sent a malformed result.");
                worker_kill(w);
                worker_finish(w, -ECHILD, NULL, &error, -EBADF);
                return 0;
        }

        reply->error.message[sizeof(reply->error.message) - 1] = 0;
        if (reply->r >= 0)
                reply->r = 0;
        else if (reply->error.kind == UM_ERROR_KIND_NONE)
                um_error_set(&reply->error, UM_ERROR_KIND_FAILED, -reply->r,
                             "The mount worker failed: %s.", strerror(-reply->r));
        /*
         * Handed on once the child is reaped (on_worker_exit()), which is right away: it
         * holds nothing but its copy of the fd by now, and exits. Until then it still has
         * that copy, and a mount it made must not be busy when the caller, answered,
         * unmounts it.
         */
        w->replied = true;
        w->pending = reply;
        w->pending_fd = passed_fd;
        w->io = sd_event_source_disable_unref(w->io);
        return 0;
}

static int on_worker_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Worker *w = userdata;
        UmError error = {};

        worker_kill(w);
        /* It replied but does not exit: the reply stands, once the kill reaped it. */
        if (w->pending)
                return 0;
        um_error_set(&error, UM_ERROR_KIND_FAILED, ETIMEDOUT,
                     "The device did not answer in time; the request was cancelled.");
        worker_finish(w, -ETIMEDOUT, NULL, &error, -EBADF);
        return 0;
}

static int on_worker_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Worker *w = userdata;

        /* sd-event reaped it already: forget the pid so nothing can signal a reused one. */
        w->pid = 0;
        alive_remove(w);
        w->child = sd_event_source_disable_unref(w->child);
        /* A reply may still sit in the socket: on_worker_io runs before us only if it was
         * dispatched first, so drain it here before declaring the worker dead. */
        if (!w->finished && !w->pending && w->fd >= 0 && w->io)
                (void) on_worker_io(NULL, w->fd, EPOLLIN, w);
        if (!w->finished && w->pending) {
                WorkerReply *reply = TAKE_PTR(w->pending);

                worker_finish(w, reply->r, reply, &reply->error, TAKE_FD(w->pending_fd));
                free(reply);
        } else if (!w->finished) {
                UmError error = {};

                if (si->si_code == CLD_EXITED)
                        um_error_set(&error, UM_ERROR_KIND_FAILED, EIO,
                                     "The mount worker exited with status %d without a result.",
                                     si->si_status);
                else
                        um_error_set(&error, UM_ERROR_KIND_FAILED, EIO,
                                     "The mount worker was killed by signal %d.", si->si_status);
                worker_finish(w, -ECHILD, NULL, &error, -EBADF);
        }
        /* Only now: the done callback above may have released the handle. */
        w->exited = true;
        worker_maybe_free(w);
        return 0;
}

static int cmp_int(const void *a, const void *b) {
        return *(const int *) a - *(const int *) b;
}

void close_all_fds_except(int *keep, size_t n_keep) {
        unsigned next = 3;

        qsort(keep, n_keep, sizeof(int), cmp_int);
        for (size_t i = 0; i < n_keep; i++) {
                if (keep[i] < (int) next)
                        continue;
                if ((unsigned) keep[i] > next)
                        (void) close_range(next, (unsigned) keep[i] - 1, 0);
                next = (unsigned) keep[i] + 1;
        }
        (void) close_range(next, ~0U, 0);
}

_noreturn_ static void worker_child(int sock, const int *keep_fds, size_t n_keep, WorkerFunc func,
                                    void *userdata) {
        static WorkerReply reply;
        int keep[64];
        size_t n = 0;
        int fd = -EBADF;
        sigset_t all;

        /* Die with the daemon; never handle signals the daemon installed handlers for. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigemptyset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL);
        if (getppid() == 1)
                _exit(EXIT_FAILURE);

        keep[n++] = sock;
        for (size_t i = 0; i < n_keep && n < ELEMENTSOF(keep); i++)
                keep[n++] = keep_fds[i];
        close_all_fds_except(keep, n);

        memset(&reply, 0, sizeof(reply));
        func(userdata, &reply, &fd);
        if (reply.r < 0)
                fd = safe_close(fd);
        /* Before the reply, let go of everything but the fd it carries: an fd the worker
         * still held on a mount it attached (it inherited the request's mount fd) keeps
         * that mount busy, and the caller, answered, may unmount it at once. */
        n = 0;
        keep[n++] = sock;
        if (fd >= 0)
                keep[n++] = fd;
        close_all_fds_except(keep, n);

        union {
                struct cmsghdr cmsghdr;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct iovec iov = { .iov_base = &reply, .iov_len = sizeof(reply) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (fd >= 0) {
                mh.msg_control = &control;
                mh.msg_controllen = sizeof(control);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
                _exit(EXIT_FAILURE);
        /* The daemon has its own copy now; ours goes before the exit does. */
        safe_close(fd);
        _exit(EXIT_SUCCESS);
}

int worker_spawn(sd_event *event, uint64_t timeout_usec, const int *keep_fds, size_t n_keep_fds,
                 WorkerFunc func, void *func_userdata, WorkerDone done, void *done_userdata,
                 Worker **ret) {
        int pair[2];
        Worker *w;
        pid_t pid;
        int r;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;

        w = calloc(1, sizeof(*w));
        if (!w) {
                safe_close(pair[0]);
                safe_close(pair[1]);
                return -ENOMEM;
        }
        w->fd = pair[0];
        w->pending_fd = -EBADF;
        w->done = done;
        w->done_userdata = done_userdata;

        /* The child must be reapable by sd-event: SIGCHLD is blocked by main(). */
        pid = fork();
        if (pid < 0) {
                r = -errno;
                safe_close(pair[1]);
                worker_free(w);
                return r;
        }
        if (pid == 0) {
                safe_close(pair[0]);
                worker_child(pair[1], keep_fds, n_keep_fds, func, func_userdata);
        }
        safe_close(pair[1]);
        w->pid = pid;
        w->owner = (uid_t) -1;
        alive_add(w);

        r = sd_event_add_child(event, &w->child, pid, WEXITED, on_worker_exit, w);
        if (r < 0) {
                /* Without a child source nobody would reap it: kill and reap right now. */
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                alive_remove(w);
                worker_free(w);
                return r;
        }
        r = sd_event_add_io(event, &w->io, w->fd, EPOLLIN, on_worker_io, w);
        if (r >= 0)
                r = sd_event_add_time_relative(event, &w->timer, CLOCK_MONOTONIC, timeout_usec, 0,
                                               on_worker_timeout, w);
        if (r < 0) {
                worker_kill(w);
                w->finished = true;
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
        w->finished = true;
        w->done = NULL;
        w->io = sd_event_source_disable_unref(w->io);
        w->timer = sd_event_source_disable_unref(w->timer);
        w->fd = safe_close(w->fd);
        worker_kill(w);
        worker_maybe_free(w);
        return NULL;
}
