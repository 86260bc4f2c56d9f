/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stub-worker: a usermount-worker with test-only jobs (stub-worker-jobs.h), so that
 * test-workerpool can drive the daemon's side of the workers (daemon/workerpool.c) and the job
 * loop (worker/runner.c) without any privilege. Its main() does what
 * worker/main.c does before it hands the socket to the runner.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "stub-worker-jobs.h"
#include "runner.h"


static int run_echo(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                    int *ret_fd) {
        const TestJob *j = input;
        TestReply *rep = reply;

        if (!memchr(j->text, 0, sizeof(j->text)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL, "no text");
        memcpy(rep->text, j->text, sizeof(rep->text));
        rep->n_fds = (uint32_t) n_fds;
        rep->fd0 = n_fds > 0 ? fds[0] : -1;
        if ((j->flags & TEST_JOB_SEND_FD) && n_fds > 0)
                *ret_fd = TAKE_FD(fds[0]);
        return 0;
}

static int run_fail(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                    int *ret_fd) {
        /* An fd with a failure must not travel: the runner and the daemon drop it. */
        *ret_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY, "busy %s", "here");
}

static int run_crash(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                     int *ret_fd) {
        /* SIGKILL: no sanitizer or handler can turn it into an exit status. */
        (void) raise(SIGKILL);
        return -EIO;
}

static int run_exit(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                    int *ret_fd) {
        _exit(3);
}

static int run_hang(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                    int *ret_fd) {
        for (;;)
                (void) pause();
        return -EIO; /* not reached */
}

static int run_count_fds(const void *input, int *fds, size_t n_fds, void *reply,
                         UmError *error, int *ret_fd) {
        TestReply *rep = reply;
        struct dirent *de;
        DIR *d;

        rep->n_fds = (uint32_t) n_fds;
        rep->fd0 = n_fds > 0 ? fds[0] : -1;
        rep->fd0_valid = n_fds > 0 && fcntl(fds[0], F_GETFD) >= 0;
        d = opendir("/proc/self/fd");
        if (!d)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno, "no /proc/self/fd");
        while ((de = readdir(d))) {
                int fd = atoi(de->d_name);

                if (de->d_name[0] == '.' || fd < 3 || fd == dirfd(d))
                        continue;
                if (rep->n_open < TEST_REPLY_FDS_MAX)
                        rep->open[rep->n_open] = fd;
                rep->n_open++;
        }
        closedir(d);
        return 0;
}

static int run_garble(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                      int *ret_fd) {
        const TestJob *j = input;
        struct {
                WorkerHeader h;
                WorkerStatus status;
                TestReply reply;
        } m = {
                .h = { WORKER_MAGIC, WORKER_PROTOCOL_VERSION, WORKER_MSG_REPLY, TEST_JOB_GARBLE,
                       0, sizeof(WorkerStatus) + sizeof(TestReply) },
        };
        size_t size = sizeof(m);
        int out[2] = { -EBADF, -EBADF };
        size_t n_out = 0;
        _cleanup_free_ uint8_t *huge = NULL;
        struct iovec iov;

        switch (j->flags) {
        case TEST_GARBLE_VERSION:
                m.h.version++;
                break;
        case TEST_GARBLE_MAGIC:
                m.h.magic ^= 1;
                break;
        case TEST_GARBLE_SHORT:
                size = sizeof(m.h) - 1;
                break;
        case TEST_GARBLE_SIZE:
                m.h.size++;
                break;
        case TEST_GARBLE_TYPE:
                m.h.type = TEST_JOB_ECHO;
                break;
        case TEST_GARBLE_REPLY_SIZE:
                m.h.size--;
                size--;
                break;
        case TEST_GARBLE_KIND:
                m.h.kind = WORKER_MSG_JOB;
                break;
        case TEST_GARBLE_TWO_FDS:
                out[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
                out[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
                n_out = 2;
                break;
        case TEST_GARBLE_NO_STATUS:
                m.h.size = sizeof(WorkerStatus) - 1;
                size = sizeof(m.h) + m.h.size;
                break;
        case TEST_GARBLE_HUGE:
                size = 64 * 1024 + 1;
                huge = calloc(1, size);
                if (!huge)
                        _exit(EXIT_FAILURE);
                m.h.size = (uint32_t) (size - sizeof(m.h));
                memcpy(huge, &m.h, sizeof(m.h));
                break;
        case TEST_GARBLE_FAIL_WITH_FD:
                (void) um_error_set(&m.status.error, UM_ERROR_KIND_DEVICE_BUSY, EIO, "x");
                m.status.r = -EIO;
                out[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
                n_out = 1;
                break;
        case TEST_GARBLE_FAIL_BAD_KIND:
                m.status.r = -EIO;
                m.status.error.kind = (UmErrorKind) 999;
                break;
        case TEST_GARBLE_FAIL_NO_NUL:
                (void) um_error_set(&m.status.error, UM_ERROR_KIND_DEVICE_BUSY, EIO, "x");
                m.status.r = -EIO;
                memset(m.status.error.message, 'A', sizeof(m.status.error.message));
                break;
        default:
                _exit(EXIT_FAILURE);
        }
        iov = (struct iovec) { .iov_base = huge ?: (void *) &m, .iov_len = size };
        if (fdpass_send(WORKER_SOCKET_FD, &iov, 1, out, n_out) < 0)
                _exit(EXIT_FAILURE);
        close_many(out, 2);
        /* Whatever the daemon makes of it, the runner must not answer as well. */
        for (;;)
                (void) pause();
        return -EIO; /* not reached */
}

static const struct {
        const char *name;
        int (*run)(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                   int *ret_fd);
} test_runs[TEST_N_JOBS] = {
        { "ECHO", run_echo },
        { "FAIL", run_fail },
        { "CRASH", run_crash },
        { "EXIT", run_exit },
        { "HANG", run_hang },
        { "COUNT_FDS", run_count_fds },
        { "GARBLE", run_garble },
};

int main(int argc, char *argv[]) {
        WorkerJobType types[TEST_N_JOBS];
        int r;

        r = worker_runner_start(argc, argv, "stub-worker is started by test-workerpool.");
        if (r != 0)
                return r;
        for (size_t i = 0; i < TEST_N_JOBS; i++)
                types[i] = (WorkerJobType) {
                        .layout = test_job_layouts[i],
                        .name = test_runs[i].name,
                        .run = test_runs[i].run,
                };
        worker_runner_run(WORKER_SOCKET_FD, types, TEST_N_JOBS);
}
