/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting processes from a file descriptor table that holds none of the callers' files
 * (see spawner.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd-util.h"
#include "spawner.h"

extern char **environ;

/* What the main thread asks: one process. */
typedef struct SpawnRequest {
        char path[PATH_MAX];
        uint32_t argc;
        char argv[SPAWNER_ARGS_MAX][SPAWNER_ARG_MAX];
} SpawnRequest;

/* What the thread answers (the socket end alongside on success); also its greeting. */
typedef struct SpawnReply {
        int32_t r;
        int32_t pid;
} SpawnReply;

struct Spawner {
        int fd;          /* the main thread's end */
        pthread_t thread;
        bool running;
};

/* In the thread: posix_spawn() as workerpool.c did it in the main thread, from this table. */
static int spawn_one(const SpawnRequest *req, pid_t *ret_pid, int *ret_fd) {
        char *argv[SPAWNER_ARGS_MAX + 1];
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all;
        int pair[2], r;

        for (uint32_t i = 0; i < req->argc; i++)
                argv[i] = (char *) req->argv[i];
        argv[req->argc] = NULL;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        /* dup2() onto fd 3 clears O_CLOEXEC only when it copies: never let it be 3 already. */
        if (pair[1] == 3) {
                int fd = fcntl(pair[1], F_DUPFD_CLOEXEC, 4);

                safe_close(pair[1]);
                pair[1] = fd;
                if (fd < 0) {
                        safe_close(pair[0]);
                        return -errno;
                }
        }
        sigemptyset(&none);
        sigfillset(&all);
        r = posix_spawn_file_actions_init(&fa);
        if (r == 0) {
                r = posix_spawn_file_actions_adddup2(&fa, pair[1], 3);
                /* This table holds only stdio and our sockets; still, nothing else. */
                if (r == 0)
                        r = posix_spawn_file_actions_addclosefrom_np(&fa, 4);
                if (r == 0)
                        r = posix_spawnattr_init(&attr);
                if (r == 0) {
                        /* Not the daemon's blocked signals (SIGCHLD, SIGTERM...) nor handlers. */
                        r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
                                                                    POSIX_SPAWN_SETSIGDEF);
                        if (r == 0)
                                r = posix_spawnattr_setsigmask(&attr, &none);
                        if (r == 0)
                                r = posix_spawnattr_setsigdefault(&attr, &all);
                        if (r == 0)
                                r = posix_spawn(ret_pid, req->path, &fa, &attr, argv, environ);
                        posix_spawnattr_destroy(&attr);
                }
                posix_spawn_file_actions_destroy(&fa);
        }
        safe_close(pair[1]);
        if (r != 0) {
                safe_close(pair[0]);
                return -r;
        }
        *ret_fd = pair[0];
        return 0;
}

static int send_reply(int sock, int r, pid_t pid, int fd) {
        const SpawnReply reply = { .r = r, .pid = (int32_t) pid };
        struct iovec iov = { .iov_base = (void *) &reply, .iov_len = sizeof(reply) };

        return fdpass_send(sock, &iov, 1, &fd, fd >= 0 ? 1 : 0);
}

/* A table of its own, holding stdio and sock: made from the daemon's at start, when no
 * caller's file is in it (so closing the copies waits on nobody). */
static int private_table(int sock) {
        if (unshare(CLONE_FILES) < 0)
                return -errno;
        if (sock > 3 && close_range(3, (unsigned) sock - 1, 0) < 0)
                return -errno;
        if (close_range((unsigned) sock + 1, ~0U, 0) < 0)
                return -errno;
        return 0;
}

static void *spawner_thread(void *userdata) {
        int sock = (int) (intptr_t) userdata;
        SpawnRequest *req = malloc(sizeof(SpawnRequest));
        int r = req ? private_table(sock) : -ENOMEM;

        (void) send_reply(sock, r, 0, -EBADF);
        while (r >= 0) {
                ssize_t n = recv(sock, req, sizeof(*req), 0);
                int fd = -EBADF;
                pid_t pid = 0;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break; /* the main thread closed its end */
                if ((size_t) n != sizeof(*req) || req->argc == 0 || req->argc > SPAWNER_ARGS_MAX)
                        r = -EBADMSG;
                else
                        r = spawn_one(req, &pid, &fd);
                (void) send_reply(sock, r, pid, fd);
                safe_close(fd);
                r = 0;
        }
        free(req);
        safe_close(sock);
        return NULL;
}

static int read_reply(int fd, SpawnReply *ret, int *ret_fd) {
        size_t n_fds = 0;
        ssize_t n;

        *ret_fd = -EBADF;
        n = fdpass_recv(fd, ret, sizeof(*ret), ret_fd, 1, &n_fds, 0);
        if (n < 0)
                return (int) n;
        if (n != sizeof(*ret)) {
                *ret_fd = safe_close(*ret_fd);
                return -EPROTO;
        }
        return 0;
}

int spawner_new(Spawner **ret) {
        _cleanup_(spawner_freep) Spawner *s = NULL;
        sigset_t all, saved;
        SpawnReply hello;
        int pair[2], fd, r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
                s->fd = -EBADF;
                return -errno;
        }
        s->fd = pair[0];
        /* No signal for the thread: the event loop reads them (signalfd), and one delivered
         * to a thread that did not block it would take its default action. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &saved);
        r = pthread_create(&s->thread, NULL, spawner_thread, (void *) (intptr_t) pair[1]);
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        if (r != 0) {
                safe_close(pair[1]);
                return -r;
        }
        s->running = true;
        r = read_reply(s->fd, &hello, &fd);
        /* The thread has its own copy of its end now: ours goes. */
        safe_close(pair[1]);
        safe_close(fd);
        if (r < 0)
                return r;
        if (hello.r < 0)
                return hello.r;
        *ret = TAKE_PTR(s);
        return 0;
}

Spawner *spawner_free(Spawner *s) {
        if (!s)
                return NULL;
        s->fd = safe_close(s->fd);
        if (s->running)
                (void) pthread_join(s->thread, NULL);
        free(s);
        return NULL;
}

int spawner_spawn(Spawner *s, const char *path, char *const argv[], pid_t *ret_pid,
                  int *ret_fd) {
        _cleanup_free_ SpawnRequest *req = calloc(1, sizeof(SpawnRequest));
        SpawnReply reply;
        int fd, r;

        if (!req)
                return -ENOMEM;
        if (snprintf(req->path, sizeof(req->path), "%s", path) >= (int) sizeof(req->path))
                return -ENAMETOOLONG;
        for (; argv[req->argc]; req->argc++) {
                if (req->argc >= SPAWNER_ARGS_MAX)
                        return -E2BIG;
                if (snprintf(req->argv[req->argc], SPAWNER_ARG_MAX, "%s", argv[req->argc]) >=
                    SPAWNER_ARG_MAX)
                        return -E2BIG;
        }
        if (send(s->fd, req, sizeof(*req), MSG_NOSIGNAL) != (ssize_t) sizeof(*req))
                return errno > 0 ? -errno : -EIO;
        r = read_reply(s->fd, &reply, &fd);
        if (r < 0)
                return r;
        if (reply.r < 0 || fd < 0) {
                safe_close(fd);
                return reply.r < 0 ? reply.r : -EPROTO;
        }
        *ret_pid = (pid_t) reply.pid;
        *ret_fd = fd;
        return 0;
}
