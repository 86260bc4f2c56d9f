/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job loop of usermount-worker (runner.h).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "runner.h"

uint32_t worker_runner_layout(const WorkerJobType *types, size_t n_types) {
        WorkerJobLayout l[32];

        if (n_types > ELEMENTSOF(l))
                abort();
        for (size_t i = 0; i < n_types; i++)
                l[i] = types[i].layout;
        return worker_layout_hash(l, n_types);
}

static int parse_pid(const char *s, int *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v <= 0 || v > INT32_MAX)
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

int worker_runner_start(int argc, char *argv[], const char *what) {
        struct stat st;
        int ppid;

        if (argc != 2 || parse_pid(argv[1], &ppid) < 0 || fstat(WORKER_SOCKET_FD, &st) < 0 ||
            !S_ISSOCK(st.st_mode)) {
                fprintf(stderr, "%s\n", what);
                return 2;
        }
        /* Die with the daemon; if it is gone already, there is nobody to work for. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != (pid_t) ppid)
                return 1;
        /* No core dumps or ptrace of a process that holds callers' fds. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* Nothing but the socket: whatever else the daemon had is not ours. */
        (void) close_range(WORKER_SOCKET_FD + 1, ~0U, 0);
        return 0;
}

static int send_message(int sock, WorkerMsgKind kind, uint32_t type, const void *a, size_t na,
                        const void *b, size_t nb, int fd) {
        WorkerHeader h = {
                .magic = WORKER_MAGIC,
                .version = WORKER_PROTOCOL_VERSION,
                .kind = kind,
                .type = type,
                .size = (uint32_t) (na + nb),
        };
        const struct iovec iov[] = {
                { .iov_base = &h, .iov_len = sizeof(h) },
                { .iov_base = (void *) a, .iov_len = na },
                { .iov_base = (void *) b, .iov_len = nb },
        };

        return fdpass_send(sock, iov, ELEMENTSOF(iov), &fd, fd >= 0 ? 1 : 0);
}

/* A REPLY for a job that could not be run, then the end. */
_noreturn_ static void fail(int sock, uint32_t type, size_t reply_size, int err,
                            const char *message) {
        WorkerStatus status = { .r = -err };
        void *zero = calloc(1, reply_size ?: 1);

        um_error_set(&status.error, UM_ERROR_KIND_FAILED, err, "%s", message);
        status.r = -err;
        if (zero)
                (void) send_message(sock, WORKER_MSG_REPLY, type, &status, sizeof(status), zero,
                                    reply_size, -EBADF);
        _exit(EXIT_FAILURE);
}

/* The process name (comm) says what the worker does, for ps and for tests. */
static void set_name(const char *prefix, const char *name) {
        char comm[16];

        snprintf(comm, sizeof(comm), "%s%s", prefix, strempty(name));
        (void) prctl(PR_SET_NAME, comm);
}

static const WorkerJobType *find_type(const WorkerJobType *types, size_t n, uint32_t type) {
        for (size_t i = 0; i < n; i++)
                if (types[i].layout.type == type)
                        return &types[i];
        return NULL;
}

_noreturn_ void worker_runner_run(int sock, const WorkerJobType *types, size_t n_types) {
        const WorkerHello hello = {
                .layout = worker_runner_layout(types, n_types),
                .pid = (int32_t) getpid(),
        };
        size_t max_input = 0, max_reply = 0;
        uint8_t *buf, *reply;

        for (size_t i = 0; i < n_types; i++) {
                if (types[i].layout.input_size > max_input)
                        max_input = types[i].layout.input_size;
                if (types[i].layout.reply_size > max_reply)
                        max_reply = types[i].layout.reply_size;
        }
        /* One byte more than the largest job: a longer message is not one of ours. */
        buf = malloc(sizeof(WorkerHeader) + max_input + 1);
        reply = malloc(max_reply ?: 1);
        if (!buf || !reply)
                _exit(EXIT_FAILURE);

        if (send_message(sock, WORKER_MSG_HELLO, 0, &hello, sizeof(hello), NULL, 0, -EBADF) < 0)
                _exit(EXIT_FAILURE);
        set_name(WORKER_NAME_READY, NULL);

        for (;;) {
                int fds[FDPASS_MAX], out_fd = -EBADF, r;
                const WorkerJobType *t;
                WorkerStatus status = {};
                WorkerHeader h;
                size_t n_fds;
                ssize_t n;

                for (size_t i = 0; i < FDPASS_MAX; i++)
                        fds[i] = -EBADF; /* a job that got fewer sees no stale number */
                n = fdpass_recv(sock, buf, sizeof(WorkerHeader) + max_input + 1, fds, FDPASS_MAX,
                                &n_fds, 0);
                if (n == 0)
                        _exit(EXIT_SUCCESS); /* the daemon is done with us */
                if (n == -EMSGSIZE)
                        fail(sock, 0, 0, EBADMSG, "usermount-worker received a job larger "
                             "than any it knows, or with too many fds; refused.");
                if (n < 0)
                        _exit(EXIT_FAILURE);
                if ((size_t) n < sizeof(h)) {
                        close_many(fds, n_fds);
                        fail(sock, 0, 0, EBADMSG, "usermount-worker received a truncated "
                             "message; refused.");
                }
                memcpy(&h, buf, sizeof(h));
                t = find_type(types, n_types, h.type);
                if (h.magic != WORKER_MAGIC || h.version != WORKER_PROTOCOL_VERSION) {
                        close_many(fds, n_fds);
                        fail(sock, h.type, t ? t->layout.reply_size : 0, EPROTO,
                             "usermount-worker speaks another version of the worker "
                             "protocol than this usermountd (installed from another build?); "
                             "restart usermountd.");
                }
                if (h.kind != WORKER_MSG_JOB || !t) {
                        close_many(fds, n_fds);
                        fail(sock, h.type, t ? t->layout.reply_size : 0, EBADMSG,
                             "usermount-worker received a message that is not a job it knows; "
                             "refused.");
                }
                if (h.size != t->layout.input_size ||
                    (size_t) n != sizeof(h) + t->layout.input_size ||
                    n_fds > t->layout.max_fds) {
                        char message[128];

                        close_many(fds, n_fds);
                        snprintf(message, sizeof(message), "usermount-worker received a "
                                 "truncated or malformed %s job; refused.", t->name);
                        fail(sock, h.type, t->layout.reply_size, EBADMSG, message);
                }

                set_name("umw-", t->name);
                memset(reply, 0, t->layout.reply_size);
                r = t->run(buf + sizeof(h), fds, n_fds, reply, &status.error, &out_fd);
                close_many(fds, n_fds);
                if (r < 0) {
                        out_fd = safe_close(out_fd);
                        if (status.error.kind == UM_ERROR_KIND_NONE)
                                um_error_set(&status.error, UM_ERROR_KIND_FAILED, -r,
                                             "The %s job failed: %s.", t->name, strerror(-r));
                }
                status.r = r < 0 ? r : 0;
                /* Before the last reply, let go of everything but the fd it carries: an fd
                 * on a mount (or a device) held on here would keep it busy after the daemon
                 * answered, when the caller may unmount at once. */
                if (h.flags & WORKER_JOB_LAST) {
                        int keep[2] = { sock, out_fd };

                        close_all_fds_except(keep, out_fd >= 0 ? 2 : 1);
                }
                r = send_message(sock, WORKER_MSG_REPLY, h.type, &status, sizeof(status), reply,
                                 t->layout.reply_size, out_fd);
                out_fd = safe_close(out_fd);
                if (r < 0 || (h.flags & WORKER_JOB_LAST))
                        _exit(r < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
                if (status.r >= 0 && t->after_reply)
                        t->after_reply();
                set_name(WORKER_NAME_WAITING, NULL);
        }
}
