/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the forked-worker machinery (daemon/worker.c): a reply and an fd arrive, a
 * crash or a hang becomes a clean error, a released worker is still reaped, and no fd
 * or process is left behind in any case.
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <glib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker.h"

typedef struct Outcome {
        bool called;
        int r;
        int fd;
        UmErrorKind kind;
        char message[512];
        char label[256];
        unsigned alive_at_done; /* workers not yet reaped when done ran */
} Outcome;

static unsigned count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        g_assert_nonnull(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

static void on_done(Worker *w, int r, const WorkerReply *reply, const UmError *error, int fd,
                    void *userdata) {
        Outcome *o = userdata;

        o->called = true;
        o->alive_at_done = worker_count_alive();
        o->r = r;
        o->fd = fd;
        if (error) {
                o->kind = error->kind;
                g_strlcpy(o->message, error->message, sizeof(o->message));
        }
        if (reply)
                g_strlcpy(o->label, reply->probe.label, sizeof(o->label));
        worker_release(w);
}

/* Runs the loop until the outcome arrived and every worker was reaped (bounded). */
static void run_until(sd_event *e, Outcome *o) {
        for (int i = 0; i < 2000 && (!o->called || worker_count_alive() > 0); i++)
                g_assert_cmpint(sd_event_run(e, 10 * 1000), >=, 0);
        g_assert_true(o->called);
        g_assert_cmpuint(worker_count_alive(), ==, 0);
}

static void job_ok_with_fd(void *userdata, WorkerReply *reply, int *ret_fd) {
        g_strlcpy(reply->probe.label, "hello", sizeof(reply->probe.label));
        reply->r = 0;
        *ret_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void job_fail(void *userdata, WorkerReply *reply, int *ret_fd) {
        reply->r = um_error_set(&reply->error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY, "busy %s", "here");
        /* An fd with a failure must not travel. */
        *ret_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void job_crash(void *userdata, WorkerReply *reply, int *ret_fd) {
        /* SIGKILL: no sanitizer or handler can turn it into an exit status. */
        raise(SIGKILL);
}

static void job_exit_silently(void *userdata, WorkerReply *reply, int *ret_fd) {
        _exit(3);
}

static void job_hang(void *userdata, WorkerReply *reply, int *ret_fd) {
        for (;;)
                pause();
}

/* The child sees only the fds it was given. */
static void job_count_fds(void *userdata, WorkerReply *reply, int *ret_fd) {
        int kept = *(int *) userdata;

        reply->r = 0;
        g_snprintf(reply->probe.label, sizeof(reply->probe.label), "%u %d", count_fds(),
                   fcntl(kept, F_GETFD) >= 0);
}

static sd_event *new_event(void) {
        sd_event *e = NULL;
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        g_assert_cmpint(sd_event_new(&e), >=, 0);
        return e;
}

static void test_reply_and_fd(void) {
        unsigned before = count_fds();
        sd_event *e = new_event();
        Outcome o = {};
        Worker *w = NULL;
        struct stat st;

        g_assert_cmpint(worker_spawn(e, 10 * G_USEC_PER_SEC, NULL, 0, job_ok_with_fd, NULL,
                                     on_done, &o, &w), ==, 0);
        run_until(e, &o);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpstr(o.label, ==, "hello");
        g_assert_cmpint(o.fd, >=, 0);
        g_assert_cmpint(fstat(o.fd, &st), ==, 0);
        g_assert_true(S_ISCHR(st.st_mode));
        g_assert_cmpint(fcntl(o.fd, F_GETFD) & FD_CLOEXEC, ==, FD_CLOEXEC);
        close(o.fd);
        sd_event_unref(e);
        g_assert_cmpuint(count_fds(), ==, before);
}

static void job_send_kept_fd(void *userdata, WorkerReply *reply, int *ret_fd) {
        const int *fd = userdata;

        reply->r = 0;
        *ret_fd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
}

/*
 * The reply is handed on only once the worker has exited, so it holds nothing then: here
 * the write end of a pipe it sent back, which must be closed everywhere once ours is (the
 * same as an fd on a mount it made, which would keep that mount busy).
 */
static void test_reply_after_exit(void) {
        sd_event *e = new_event();
        Outcome o = {};
        Worker *w = NULL;
        struct pollfd p;
        int pipefd[2];

        g_assert_cmpint(pipe2(pipefd, O_CLOEXEC), ==, 0);
        g_assert_cmpint(worker_spawn(e, 10 * G_USEC_PER_SEC, &pipefd[1], 1, job_send_kept_fd,
                                     &pipefd[1], on_done, &o, &w), ==, 0);
        close(pipefd[1]);
        run_until(e, &o);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpuint(o.alive_at_done, ==, 0);
        g_assert_cmpint(o.fd, >=, 0);
        close(o.fd);
        p = (struct pollfd) { .fd = pipefd[0], .events = POLLIN };
        g_assert_cmpint(poll(&p, 1, 0), ==, 1);
        g_assert_true(p.revents & POLLHUP);
        close(pipefd[0]);
        sd_event_unref(e);
}

static void test_failure_carries_error_not_fd(void) {
        unsigned before = count_fds();
        sd_event *e = new_event();
        Outcome o = {};
        Worker *w = NULL;

        g_assert_cmpint(worker_spawn(e, 10 * G_USEC_PER_SEC, NULL, 0, job_fail, NULL, on_done, &o,
                                     &w), ==, 0);
        run_until(e, &o);
        g_assert_cmpint(o.r, ==, -EBUSY);
        g_assert_cmpint(o.kind, ==, UM_ERROR_KIND_DEVICE_BUSY);
        g_assert_cmpstr(o.message, ==, "busy here");
        g_assert_cmpint(o.fd, <, 0);
        sd_event_unref(e);
        g_assert_cmpuint(count_fds(), ==, before);
}

static void test_crash(void) {
        unsigned before = count_fds();
        sd_event *e = new_event();
        Outcome o = {};
        Worker *w = NULL;

        g_assert_cmpint(worker_spawn(e, 10 * G_USEC_PER_SEC, NULL, 0, job_crash, NULL, on_done,
                                     &o, &w), ==, 0);
        run_until(e, &o);
        g_assert_cmpint(o.r, ==, -ECHILD);
        g_assert_cmpint(o.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(o.message, "signal"));
        sd_event_unref(e);
        g_assert_cmpuint(count_fds(), ==, before);
}

static void test_exit_without_reply(void) {
        sd_event *e = new_event();
        Outcome o = {};
        Worker *w = NULL;

        g_assert_cmpint(worker_spawn(e, 10 * G_USEC_PER_SEC, NULL, 0, job_exit_silently, NULL,
                                     on_done, &o, &w), ==, 0);
        run_until(e, &o);
        g_assert_cmpint(o.r, ==, -ECHILD);
        g_assert_nonnull(strstr(o.message, "without a result"));
        sd_event_unref(e);
}

static void test_timeout_kills(void) {
        unsigned before = count_fds();
        sd_event *e = new_event();
        Outcome o = {};
        Worker *w = NULL;

        g_assert_cmpint(worker_spawn(e, 200 * 1000, NULL, 0, job_hang, NULL, on_done, &o, &w), ==, 0);
        run_until(e, &o);
        g_assert_cmpint(o.r, ==, -ETIMEDOUT);
        g_assert_nonnull(strstr(o.message, "in time"));
        sd_event_unref(e);
        g_assert_cmpuint(count_fds(), ==, before);
}

static void test_release_before_done_reaps(void) {
        unsigned before = count_fds();
        sd_event *e = new_event();
        Worker *w = NULL;
        Outcome o = {};

        g_assert_cmpint(worker_spawn(e, 10 * G_USEC_PER_SEC, NULL, 0, job_hang, NULL, on_done, &o,
                                     &w), ==, 0);
        g_assert_cmpuint(worker_count_alive(), ==, 1);
        worker_release(w);
        for (int i = 0; i < 2000 && worker_count_alive() > 0; i++)
                g_assert_cmpint(sd_event_run(e, 10 * 1000), >=, 0);
        g_assert_cmpuint(worker_count_alive(), ==, 0);
        g_assert_false(o.called);
        /* No zombie left: nothing to wait for. */
        g_assert_cmpint(waitpid(-1, NULL, WNOHANG), ==, -1);
        g_assert_cmpint(errno, ==, ECHILD);
        sd_event_unref(e);
        g_assert_cmpuint(count_fds(), ==, before);
}

static void test_child_keeps_only_given_fds(void) {
        sd_event *e = new_event();
        int kept = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int other = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        Outcome o = {};
        Worker *w = NULL;

        g_assert_cmpint(worker_spawn(e, 10 * G_USEC_PER_SEC, &kept, 1, job_count_fds, &kept,
                                     on_done, &o, &w), ==, 0);
        run_until(e, &o);
        g_assert_cmpint(o.r, ==, 0);
        /* ".", "..", 0, 1, 2, the socket, the kept fd, and the fd opendir() uses. */
        g_assert_cmpstr(o.label, ==, "8 1");
        close(kept);
        close(other);
        sd_event_unref(e);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/worker/reply-and-fd", test_reply_and_fd);
        g_test_add_func("/worker/reply-after-exit", test_reply_after_exit);
        g_test_add_func("/worker/failure-carries-error-not-fd", test_failure_carries_error_not_fd);
        g_test_add_func("/worker/crash", test_crash);
        g_test_add_func("/worker/exit-without-reply", test_exit_without_reply);
        g_test_add_func("/worker/timeout-kills", test_timeout_kills);
        g_test_add_func("/worker/release-before-done-reaps", test_release_before_done_reaps);
        g_test_add_func("/worker/child-keeps-only-given-fds", test_child_keeps_only_given_fds);
        return g_test_run();
}
