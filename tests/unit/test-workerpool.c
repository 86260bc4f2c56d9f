/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the workers (daemon/workerpool.c, the daemon's side; worker/runner.c, the
 * worker's), driving stub-worker, a worker with test-only jobs (stub-worker-jobs.h):
 * a reply and an fd arrive, and a last job's reply only once the worker has exited; a
 * crash, an exit, a hang or a kill at any step becomes a clean error; the pool hits,
 * misses, refills, does not spin on a binary that cannot work, and empties; a worker
 * binary of another build or a garbled job is refused with a clear error on both sides;
 * and no fd or process is left behind in any case.
 */
#include <dirent.h>
#include <fcntl.h>
#include <glib.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "jobproto.h"
#include "stub-worker-jobs.h"
#include "runner.h"
#include "workerpool.h"

extern char **environ;

#define LONG_TIMEOUT (30 * G_USEC_PER_SEC)

static char *worker_bin; /* stub-worker */

/* ---- the test process: fds and children ---------------------------------------------- */

static unsigned count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        g_assert_nonnull(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

typedef struct Child {
        pid_t pid;
        char state;
        char comm[32];
} Child;

/* Our children (zombies too), from /proc/<pid>/stat: "pid (comm) state ppid ...". */
static unsigned list_children(Child *ret, unsigned max) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        unsigned n = 0;

        g_assert_nonnull(d);
        while ((de = readdir(d))) {
                g_autofree char *path = NULL, *stat = NULL;
                const char *open, *close;
                char state;
                int ppid;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                path = g_strdup_printf("/proc/%s/stat", de->d_name);
                if (!g_file_get_contents(path, &stat, NULL, NULL))
                        continue; /* gone meanwhile */
                open = strchr(stat, '(');
                close = strrchr(stat, ')');
                if (!open || !close || sscanf(close + 1, " %c %d", &state, &ppid) != 2)
                        continue;
                if (ppid != getpid())
                        continue;
                if (ret && n < max) {
                        ret[n] = (Child) { .pid = atoi(de->d_name), .state = state };
                        g_strlcpy(ret[n].comm, open + 1,
                                  MIN(sizeof(ret[n].comm), (size_t) (close - open)));
                }
                n++;
        }
        closedir(d);
        return n;
}

/* A live child whose process name is comm (worker/runner.c names its workers), or 0. */
static pid_t find_child(const char *comm, pid_t not) {
        Child c[32];
        unsigned n = MIN(list_children(c, G_N_ELEMENTS(c)), G_N_ELEMENTS(c));

        for (unsigned i = 0; i < n; i++)
                if (c[i].state != 'Z' && c[i].pid != not && g_str_equal(c[i].comm, comm))
                        return c[i].pid;
        return 0;
}

static unsigned count_children_named(const char *comm) {
        Child c[32];
        unsigned n = MIN(list_children(c, G_N_ELEMENTS(c)), G_N_ELEMENTS(c)), k = 0;

        for (unsigned i = 0; i < n; i++)
                if (c[i].state != 'Z' && g_str_equal(c[i].comm, comm))
                        k++;
        return k;
}

/* Children that still run (not zombies: those hold no fd any more). */
static unsigned count_live_children(void) {
        Child c[32];
        unsigned n = MIN(list_children(c, G_N_ELEMENTS(c)), G_N_ELEMENTS(c)), k = 0;

        for (unsigned i = 0; i < n; i++)
                if (c[i].state != 'Z')
                        k++;
        return k;
}

static char proc_state(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid), *stat = NULL;
        const char *close;

        if (!g_file_get_contents(path, &stat, NULL, NULL))
                return 0;
        close = strrchr(stat, ')');
        return close && close[1] == ' ' ? close[2] : 0;
}

static void assert_no_children(void) {
        /* A worker the pool killed while a request held it is not waited for (it may be
         * stuck in the kernel): give it two seconds to die, reaping as the daemon's event
         * loop would, before calling it left over. */
        for (int i = 0; i < 200 && list_children(NULL, 0) > 0; i++) {
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                if (list_children(NULL, 0) > 0)
                        g_usleep(10 * 1000);
        }
        g_assert_cmpuint(list_children(NULL, 0), ==, 0);
        g_assert_cmpint(waitpid(-1, NULL, WNOHANG), ==, -1);
        g_assert_cmpint(errno, ==, ECHILD);
}

/* ---- the event loop ------------------------------------------------------------------- */

/* Runs the loop until cond holds (at most 10 s, which only a bug takes). */
#define RUN_UNTIL(e, cond)                                                                    \
        do {                                                                                  \
                gint64 _deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;              \
                while (!(cond) && g_get_monotonic_time() < _deadline)                         \
                        g_assert_cmpint(sd_event_run((e), 10 * 1000), >=, 0);                 \
                g_assert_true(cond);                                                          \
        } while (0)

/* Dispatches whatever is pending now. */
static void drain(sd_event *e) {
        int r;

        while ((r = sd_event_run(e, 0)) > 0)
                ;
        g_assert_cmpint(r, >=, 0);
}

/* Runs the loop for usec: for the tests that watch that nothing happens too often. */
static void run_for(sd_event *e, uint64_t usec) {
        gint64 deadline = g_get_monotonic_time() + (gint64) usec, now;

        while ((now = g_get_monotonic_time()) < deadline)
                g_assert_cmpint(sd_event_run(e, (uint64_t) (deadline - now)), >=, 0);
}

static sd_event *new_event(void) {
        sd_event *e = NULL;
        sigset_t mask;

        /* sd-event's child sources need SIGCHLD blocked. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        g_assert_cmpint(sigprocmask(SIG_BLOCK, &mask, NULL), ==, 0);
        g_assert_cmpint(sd_event_new(&e), >=, 0);
        return e;
}

/* ---- a pool, and the outcome of jobs --------------------------------------------------- */

static uint32_t test_layout(void) {
        WorkerJobType t[TEST_N_JOBS];

        for (size_t i = 0; i < TEST_N_JOBS; i++)
                t[i] = (WorkerJobType) { .layout = test_job_layouts[i] };
        return worker_runner_layout(t, TEST_N_JOBS);
}

typedef struct Env {
        unsigned fds_before;
        sd_event *e;
        WorkerPool *p;
} Env;

static void env_setup_full(Env *env, const char *path, unsigned size, uint32_t layout) {
        assert_no_children();
        env->fds_before = count_fds();
        env->e = new_event();
        g_assert_cmpint(worker_pool_new(env->e, path, size, layout, &env->p), ==, 0);
}

static void env_setup(Env *env, unsigned size) {
        env_setup_full(env, worker_bin, size, test_layout());
}

/* Frees everything and checks that nothing is left: no fd, no process. */
static void env_teardown(Env *env) {
        env->p = worker_pool_free(env->p);
        env->e = sd_event_unref(env->e);
        g_assert_cmpuint(count_fds(), ==, env->fds_before);
        assert_no_children();
}

typedef struct Outcome {
        Env *env;
        bool keep;               /* not released in the callback: more jobs follow */
        unsigned calls;
        uint32_t type;           /* of the job in flight */
        int r;
        int fd;
        UmErrorKind kind;
        int error;
        char message[512];
        bool message_terminated; /* error->message had its NUL within the field */
        bool have_reply;
        TestReply reply;
        unsigned alive_at_done;  /* workers taken and not yet reaped when done ran */
        unsigned busy_at_done;
        unsigned owner_busy_at_done; /* of those, TEST_OWNER's */
        unsigned children_at_done; /* running, not zombies (sd-event reaps after the
                                    * child source's callback, which done runs in) */
        WorkerState state_at_done;
} Outcome;

#define TEST_OWNER ((uid_t) 4242)

static void on_done(Worker *w, int r, const void *reply, const UmError *error, int fd,
                    void *userdata) {
        Outcome *o = userdata;

        o->calls++;
        o->alive_at_done = worker_pool_count_alive(o->env->p);
        o->busy_at_done = worker_pool_count_busy(o->env->p, (uid_t) -1);
        o->owner_busy_at_done = worker_pool_count_busy(o->env->p, TEST_OWNER);
        o->children_at_done = count_live_children();
        o->state_at_done = worker_get_state(w);
        o->r = r;
        o->fd = fd;
        o->kind = error ? error->kind : UM_ERROR_KIND_NONE;
        o->error = error ? error->error : 0;
        o->message_terminated = !error || memchr(error->message, 0, sizeof(error->message));
        if (o->message_terminated)
                g_strlcpy(o->message, error ? error->message : "", sizeof(o->message));
        else
                memcpy(o->message, error->message, sizeof(o->message) - 1);
        o->have_reply = reply != NULL;
        memset(&o->reply, 0, sizeof(o->reply));
        for (size_t i = 0; reply && i < TEST_N_JOBS; i++)
                if (test_job_layouts[i].type == o->type &&
                    test_job_layouts[i].reply_size == sizeof(TestReply))
                        memcpy(&o->reply, reply, sizeof(TestReply));
        if (!o->keep)
                worker_release(w);
}

static WorkerJob make_job(TestJobType type, const TestJob *in, const int *fds, size_t n_fds,
                          bool last, uint64_t timeout_usec) {
        for (size_t i = 0; i < TEST_N_JOBS; i++)
                if (test_job_layouts[i].type == type)
                        return (WorkerJob) {
                                .layout = test_job_layouts[i],
                                .input = in,
                                .fds = fds,
                                .n_fds = n_fds,
                                .last = last,
                                .timeout_usec = timeout_usec,
                        };
        g_assert_not_reached();
}

static int start_job(Env *env, Outcome *o, TestJobType type, const char *text, uint32_t flags,
                     const int *fds, size_t n_fds, bool last, uint64_t timeout_usec,
                     Worker **ret) {
        TestJob in = { .flags = flags };
        WorkerJob job = make_job(type, &in, fds, n_fds, last, timeout_usec);

        g_strlcpy(in.text, text, sizeof(in.text));
        o->env = env;
        o->type = type;
        o->keep = !last;
        return worker_start(env->p, &job, on_done, o, ret);
}

static int send_job(Worker *w, Outcome *o, TestJobType type, const char *text, uint32_t flags,
                    bool last) {
        TestJob in = { .flags = flags };
        WorkerJob job = make_job(type, &in, NULL, 0, last, LONG_TIMEOUT);

        g_strlcpy(in.text, text, sizeof(in.text));
        o->type = type;
        o->keep = !last;
        return worker_send(w, &job, on_done, o);
}

/* A last job's outcome arrived and its worker was reaped. */
#define RUN_UNTIL_DONE(env, o, n) \
        RUN_UNTIL((env)->e, (o)->calls >= (n) && worker_pool_count_alive((env)->p) == 0)

/* The pool's n ready workers said hello, and the pool heard it. */
static void wait_ready(Env *env, unsigned n) {
        RUN_UNTIL(env->e, count_children_named(WORKER_NAME_READY) >= n);
        drain(env->e);
}

/* ---- the old tests' cases: one job, one outcome ----------------------------------------- */

static void test_reply_and_fd(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        struct stat st, null;
        int fd;

        env_setup(&env, 1);
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "hello", TEST_JOB_SEND_FD, &fd, 1,
                                  true, LONG_TIMEOUT, &w), ==, 0);
        /* Sent: the kernel holds its own copy. */
        close(fd);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpuint(o.calls, ==, 1);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_true(o.have_reply);
        g_assert_cmpstr(o.reply.text, ==, "hello");
        g_assert_cmpuint(o.reply.n_fds, ==, 1);
        g_assert_cmpint(o.fd, >=, 0);
        g_assert_cmpint(fstat(o.fd, &st), ==, 0);
        g_assert_cmpint(stat("/dev/null", &null), ==, 0);
        g_assert_true(S_ISCHR(st.st_mode));
        g_assert_cmpuint(st.st_rdev, ==, null.st_rdev);
        g_assert_cmpint(fcntl(o.fd, F_GETFD) & FD_CLOEXEC, ==, FD_CLOEXEC);
        close(o.fd);
        env_teardown(&env);
}

/*
 * The reply to a last job is handed on only once the worker has exited and was reaped,
 * so it holds nothing then: here the write end of a pipe it sent back, which must be
 * closed everywhere once ours is (the same as an fd on a mount it made, which would keep
 * that mount busy).
 */
static void test_reply_after_exit(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        struct pollfd p;
        int pipefd[2];

        env_setup(&env, 0); /* no ready worker: the only child is the one that worked */
        g_assert_cmpint(pipe2(pipefd, O_CLOEXEC), ==, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "pipe", TEST_JOB_SEND_FD,
                                  &pipefd[1], 1, true, LONG_TIMEOUT, &w), ==, 0);
        close(pipefd[1]);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpuint(o.alive_at_done, ==, 0);
        g_assert_cmpuint(o.children_at_done, ==, 0);
        g_assert_cmpint(o.state_at_done, ==, WORKER_EXITING);
        g_assert_cmpint(o.fd, >=, 0);
        close(o.fd);
        p = (struct pollfd) { .fd = pipefd[0], .events = POLLIN };
        g_assert_cmpint(poll(&p, 1, 0), ==, 1);
        g_assert_true(p.revents & POLLHUP);
        close(pipefd[0]);
        env_teardown(&env);
}

/*
 * The worker replied and exited before the loop looked: its reply still sits in the
 * socket when its exit is seen, and is read then rather than lost.
 */
static void test_reply_read_after_exit(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        Child c;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "late", 0, NULL, 0, true,
                                  LONG_TIMEOUT, &w), ==, 0);
        g_assert_cmpuint(list_children(&c, 1), ==, 1);
        /* Without running the loop: the reply and the exit are both pending at once. */
        for (int i = 0; i < 10000 && proc_state(c.pid) != 'Z'; i++)
                g_usleep(1000);
        g_assert_cmpint(proc_state(c.pid), ==, 'Z');
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpstr(o.reply.text, ==, "late");
        env_teardown(&env);
}

static void test_failure_carries_error_not_fd(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;

        env_setup(&env, 1);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_FAIL, "", 0, NULL, 0, true, LONG_TIMEOUT,
                                  &w), ==, 0);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, -EBUSY);
        g_assert_cmpint(o.kind, ==, UM_ERROR_KIND_DEVICE_BUSY);
        g_assert_cmpint(o.error, ==, EBUSY);
        g_assert_cmpstr(o.message, ==, "busy here");
        g_assert_false(o.have_reply);
        g_assert_cmpint(o.fd, <, 0);
        env_teardown(&env);
}

static void test_crash(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;

        env_setup(&env, 1);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_CRASH, "", 0, NULL, 0, true, LONG_TIMEOUT,
                                  &w), ==, 0);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, -ECHILD);
        g_assert_cmpint(o.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_false(o.have_reply);
        g_assert_cmpint(o.fd, <, 0);
        g_assert_nonnull(strstr(o.message, "killed by signal 9"));
        env_teardown(&env);
}

static void test_exit_without_reply(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;

        env_setup(&env, 1);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_EXIT, "", 0, NULL, 0, true, LONG_TIMEOUT,
                                  &w), ==, 0);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, -ECHILD);
        g_assert_cmpint(o.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(o.message, "exited with status 3 without a result"));
        env_teardown(&env);
}

static void test_timeout_kills(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_HANG, "", 0, NULL, 0, true, 200 * 1000,
                                  &w), ==, 0);
        worker_set_owner(w, TEST_OWNER);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, -ETIMEDOUT);
        g_assert_nonnull(strstr(o.message, "in time"));
        /* Given up on but not dead yet when it is told: still counts for its owner's
         * limit, not for everybody's (a stuck worker costs its owner alone). */
        g_assert_cmpuint(o.owner_busy_at_done, ==, 1);
        g_assert_cmpuint(o.busy_at_done, ==, 0);
        g_assert_cmpuint(worker_pool_count_busy(env.p, (uid_t) -1), ==, 0);
        assert_no_children();
        env_teardown(&env);
}

static void test_release_before_done_reaps(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_HANG, "", 0, NULL, 0, true, LONG_TIMEOUT,
                                  &w), ==, 0);
        g_assert_cmpuint(worker_pool_count_alive(env.p), ==, 1);
        RUN_UNTIL(env.e, find_child("umw-HANG", 0) != 0);
        g_assert_null(worker_release(w));
        RUN_UNTIL(env.e, worker_pool_count_alive(env.p) == 0);
        g_assert_cmpuint(o.calls, ==, 0);
        /* Reaped: no zombie, nothing to wait for. */
        assert_no_children();
        env_teardown(&env);
}

/*
 * Starting a worker leaves no copy of the daemon's fds behind once the call returns: a
 * pipe's write end, closed right after, reads as closed at once. (The copies that
 * close-on-exec drops go only at the end of the worker's exec, after posix_spawn()
 * returns: a mount fd held then kept a mount handed out meanwhile busy.)
 */
static void test_spawn_leaves_no_fd_copies(void) {
        unsigned before = count_fds();
        sd_event *e = new_event();
        WorkerPool *p = NULL;
        struct pollfd pfd;
        int pipe_fds[2];

        /* The window is short: looked at a hundred times. */
        for (int i = 0; i < 100; i++) {
                g_assert_cmpint(pipe2(pipe_fds, O_CLOEXEC), ==, 0);
                g_assert_cmpint(worker_pool_new(e, worker_bin, 1, test_layout(), &p), ==, 0);
                close(pipe_fds[1]);
                pfd = (struct pollfd) { .fd = pipe_fds[0], .events = POLLIN };
                g_assert_cmpint(poll(&pfd, 1, 0), ==, 1);
                g_assert_true(pfd.revents & POLLHUP);
                close(pipe_fds[0]);
                p = worker_pool_free(p);
        }
        sd_event_unref(e);
        g_assert_cmpuint(count_fds(), ==, before);
        assert_no_children();
}

/* The worker holds its socket and the fds it was given, nothing else of ours. */
static void test_child_keeps_only_given_fds(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        int kept, other, inheritable;

        env_setup(&env, 0); /* the worker starts while these are open */
        kept = open("/dev/null", O_RDONLY | O_CLOEXEC);
        other = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        /* Not O_CLOEXEC: a main like usermount-worker's closes it all the same. */
        inheritable = open("/dev/zero", O_RDONLY);
        g_assert_cmpint(kept, >=, 0);
        g_assert_cmpint(other, >=, 0);
        g_assert_cmpint(inheritable, >=, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_COUNT_FDS, "", 0, &kept, 1, true,
                                  LONG_TIMEOUT, &w), ==, 0);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpuint(o.reply.n_fds, ==, 1);
        g_assert_true(o.reply.fd0_valid);
        /* Fd 3, the socket, and the one it was given. */
        g_assert_cmpuint(o.reply.n_open, ==, 2);
        g_assert_cmpint(o.reply.open[0] == 3 ? o.reply.open[1] : o.reply.open[0], ==,
                        o.reply.fd0);
        g_assert_true(o.reply.open[0] == 3 || o.reply.open[1] == 3);
        g_assert_cmpint(o.reply.fd0, !=, 3);
        close(kept);
        close(other);
        close(inheritable);
        env_teardown(&env);
}

/* ---- several jobs in one worker -------------------------------------------------------- */

static void test_multi_job(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "one", 0, NULL, 0, false,
                                  LONG_TIMEOUT, &w), ==, 0);
        g_assert_cmpint(worker_get_state(w), ==, WORKER_BUSY);
        RUN_UNTIL(env.e, o.calls == 1);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpstr(o.reply.text, ==, "one");
        /* Not the last job: the reply comes while the worker lives on, and waits. */
        g_assert_cmpuint(o.alive_at_done, ==, 1);
        g_assert_cmpint(o.state_at_done, ==, WORKER_WAITING);
        g_assert_cmpint(worker_get_state(w), ==, WORKER_WAITING);
        RUN_UNTIL(env.e, find_child(WORKER_NAME_WAITING, 0) != 0);
        g_assert_cmpuint(worker_pool_count_alive(env.p), ==, 1);
        g_assert_cmpuint(worker_pool_count_busy(env.p, (uid_t) -1), ==, 0);

        g_assert_cmpint(send_job(w, &o, TEST_JOB_ECHO, "two", 0, true), ==, 0);
        g_assert_cmpint(worker_get_state(w), ==, WORKER_BUSY);
        g_assert_cmpuint(worker_pool_count_busy(env.p, (uid_t) -1), ==, 1);
        RUN_UNTIL_DONE(&env, &o, 2);
        g_assert_cmpuint(o.calls, ==, 2);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpstr(o.reply.text, ==, "two");
        g_assert_cmpuint(o.alive_at_done, ==, 0);
        g_assert_cmpuint(o.children_at_done, ==, 0);
        env_teardown(&env);
}

/* A failed job that was not the last leaves the worker waiting for the next one. */
static void test_multi_job_after_failure(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_FAIL, "", 0, NULL, 0, false, LONG_TIMEOUT,
                                  &w), ==, 0);
        RUN_UNTIL(env.e, o.calls == 1);
        g_assert_cmpint(o.r, ==, -EBUSY);
        g_assert_cmpint(o.fd, <, 0);
        g_assert_cmpint(worker_get_state(w), ==, WORKER_WAITING);
        g_assert_cmpint(send_job(w, &o, TEST_JOB_ECHO, "after", 0, true), ==, 0);
        RUN_UNTIL_DONE(&env, &o, 2);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpstr(o.reply.text, ==, "after");
        env_teardown(&env);
}

/* Owner and authorization marks count a busy worker for the limits, and only while busy. */
static void test_busy_counts(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_HANG, "", 0, NULL, 0, false,
                                  200 * 1000, &w), ==, 0);
        worker_set_owner(w, 1000);
        worker_set_unauthorized(w, true);
        g_assert_cmpuint(worker_pool_count_busy(env.p, (uid_t) -1), ==, 1);
        g_assert_cmpuint(worker_pool_count_busy(env.p, 1000), ==, 1);
        g_assert_cmpuint(worker_pool_count_busy(env.p, 1001), ==, 0);
        g_assert_cmpuint(worker_pool_count_busy_unauthorized(env.p), ==, 1);
        worker_set_unauthorized(w, false);
        g_assert_cmpuint(worker_pool_count_busy_unauthorized(env.p), ==, 0);
        RUN_UNTIL(env.e, o.calls == 1);
        g_assert_cmpint(o.r, ==, -ETIMEDOUT);
        g_assert_null(worker_release(w));
        RUN_UNTIL(env.e, list_children(NULL, 0) == 0);
        drain(env.e);
        g_assert_cmpuint(worker_pool_count_busy(env.p, 1000), ==, 0);
        g_assert_cmpuint(worker_pool_count_alive(env.p), ==, 0);
        env_teardown(&env);
}

/* ---- a worker killed at each step --------------------------------------------------------- */

static void test_killed_ready(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        pid_t pid;

        env_setup(&env, 1);
        wait_ready(&env, 1);
        g_assert_cmpuint(worker_pool_stats(env.p).spawned, ==, 1);
        pid = find_child(WORKER_NAME_READY, 0);
        g_assert_cmpint(pid, >, 0);
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        RUN_UNTIL(env.e, worker_pool_stats(env.p).failures == 1);
        /* The pool refills (after POOL_RETRY_USEC: something may be wrong with workers). */
        RUN_UNTIL(env.e, find_child(WORKER_NAME_READY, pid) != 0);
        drain(env.e);
        g_assert_cmpuint(worker_pool_stats(env.p).spawned, ==, 2);
        g_assert_cmpuint(worker_pool_stats(env.p).failures, ==, 1);
        /* And the new one works. */
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "again", 0, NULL, 0, true,
                                  LONG_TIMEOUT, &w), ==, 0);
        g_assert_cmpuint(worker_pool_stats(env.p).hits, ==, 1);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpstr(o.reply.text, ==, "again");
        env_teardown(&env);
}

static void test_killed_busy(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        pid_t pid;

        env_setup(&env, 1);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_HANG, "", 0, NULL, 0, true, LONG_TIMEOUT,
                                  &w), ==, 0);
        RUN_UNTIL(env.e, (pid = find_child("umw-HANG", 0)) != 0);
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, -ECHILD);
        g_assert_cmpint(o.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(o.message, "killed by signal 9"));
        g_assert_cmpint(o.fd, <, 0);
        /* A worker that was taken and died is the request's failure, not the pool's. */
        g_assert_cmpuint(worker_pool_stats(env.p).failures, ==, 0);
        env_teardown(&env);
}

/* Killed while waiting for its next job, and reaped: the next job is refused. */
static void test_killed_waiting_reaped(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        pid_t pid;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "one", 0, NULL, 0, false,
                                  LONG_TIMEOUT, &w), ==, 0);
        RUN_UNTIL(env.e, o.calls == 1);
        g_assert_cmpint(o.r, ==, 0);
        RUN_UNTIL(env.e, (pid = find_child(WORKER_NAME_WAITING, 0)) != 0);
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        RUN_UNTIL(env.e, list_children(NULL, 0) == 0);
        drain(env.e);
        /* Nobody was waiting for a reply: nothing to tell. */
        g_assert_cmpuint(o.calls, ==, 1);
        g_assert_cmpuint(worker_pool_count_alive(env.p), ==, 0);
        g_assert_cmpint(worker_get_state(w), ==, WORKER_EXITING);
        g_assert_cmpint(send_job(w, &o, TEST_JOB_ECHO, "two", 0, true), ==, -ECHILD);
        drain(env.e);
        g_assert_cmpuint(o.calls, ==, 1);
        g_assert_null(worker_release(w));
        env_teardown(&env);
}

/* Killed while waiting, dead but not yet reaped: sending fails, the worker is unchanged. */
static void test_killed_waiting_dead(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        pid_t pid;
        int r;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "one", 0, NULL, 0, false,
                                  LONG_TIMEOUT, &w), ==, 0);
        RUN_UNTIL(env.e, o.calls == 1);
        RUN_UNTIL(env.e, (pid = find_child(WORKER_NAME_WAITING, 0)) != 0);
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        /* A zombie: its socket is closed, and the loop did not reap it yet. */
        for (int i = 0; i < 10000 && proc_state(pid) != 'Z'; i++)
                g_usleep(1000);
        g_assert_cmpint(proc_state(pid), ==, 'Z');
        r = send_job(w, &o, TEST_JOB_ECHO, "two", 0, true);
        g_assert_cmpint(r, <, 0);
        g_assert_true(r == -EPIPE || r == -ECONNRESET || r == -ECHILD);
        g_assert_cmpint(worker_get_state(w), ==, WORKER_WAITING);
        RUN_UNTIL(env.e, list_children(NULL, 0) == 0);
        drain(env.e);
        g_assert_cmpuint(o.calls, ==, 1);
        g_assert_cmpuint(worker_pool_count_alive(env.p), ==, 0);
        g_assert_null(worker_release(w));
        env_teardown(&env);
}

/* Killed while waiting, the next job sent at once: it fails one way or the other. */
static void test_killed_waiting_race(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        pid_t pid;
        int r;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "one", 0, NULL, 0, false,
                                  LONG_TIMEOUT, &w), ==, 0);
        RUN_UNTIL(env.e, o.calls == 1);
        RUN_UNTIL(env.e, (pid = find_child(WORKER_NAME_WAITING, 0)) != 0);
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        r = send_job(w, &o, TEST_JOB_ECHO, "two", 0, true);
        if (r < 0) {
                g_assert_null(worker_release(w));
                RUN_UNTIL(env.e, list_children(NULL, 0) == 0);
                drain(env.e);
                g_assert_cmpuint(o.calls, ==, 1);
        } else {
                RUN_UNTIL_DONE(&env, &o, 2);
                g_assert_cmpint(o.r, ==, -ECHILD);
                g_assert_nonnull(strstr(o.message, "killed by signal 9"));
        }
        env_teardown(&env);
}

/* ---- the pool ---------------------------------------------------------------------------- */

static void test_pool_empty(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        WorkerPoolStats s;

        env_setup(&env, 0);
        drain(env.e);
        g_assert_cmpuint(worker_pool_stats(env.p).spawned, ==, 0);
        assert_no_children();
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "miss", 0, NULL, 0, true,
                                  LONG_TIMEOUT, &w), ==, 0);
        s = worker_pool_stats(env.p);
        g_assert_cmpuint(s.misses, ==, 1);
        g_assert_cmpuint(s.hits, ==, 0);
        g_assert_cmpuint(s.spawned, ==, 1);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpstr(o.reply.text, ==, "miss");
        drain(env.e);
        s = worker_pool_stats(env.p);
        g_assert_cmpuint(s.spawned, ==, 1);
        g_assert_cmpuint(s.failures, ==, 0);
        assert_no_children();
        env_teardown(&env);
}

static void test_pool_hit(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        WorkerPoolStats s;

        env_setup(&env, 2);
        wait_ready(&env, 2);
        g_assert_cmpuint(worker_pool_stats(env.p).spawned, ==, 2);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "hit", 0, NULL, 0, true,
                                  LONG_TIMEOUT, &w), ==, 0);
        s = worker_pool_stats(env.p);
        g_assert_cmpuint(s.hits, ==, 1);
        g_assert_cmpuint(s.misses, ==, 0);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpstr(o.reply.text, ==, "hit");
        /* Refilled to two ready ones. */
        wait_ready(&env, 2);
        s = worker_pool_stats(env.p);
        g_assert_cmpuint(s.spawned, ==, 3);
        g_assert_cmpuint(s.failures, ==, 0);
        g_assert_cmpuint(count_children_named(WORKER_NAME_READY), ==, 2);
        env_teardown(&env);
}

static void test_pool_missing_binary(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        WorkerPoolStats s;

        env_setup_full(&env, "/nonexistent/stub-worker", 1, test_layout());
        s = worker_pool_stats(env.p);
        g_assert_cmpuint(s.spawned, ==, 0);
        g_assert_cmpuint(s.failures, ==, 1);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "", 0, NULL, 0, true, LONG_TIMEOUT,
                                  &w), ==, -ENOENT);
        g_assert_null(w);
        g_assert_cmpuint(worker_pool_stats(env.p).failures, ==, 2);
        /* No spinning: the next try is POOL_RETRY_USEC later. */
        run_for(env.e, 500 * 1000);
        s = worker_pool_stats(env.p);
        g_assert_cmpuint(s.spawned, ==, 0);
        g_assert_cmpuint(s.failures, ==, 2);
        g_assert_cmpuint(o.calls, ==, 0);
        env_teardown(&env);
}

/* A binary that exits at once (not a worker at all): each try fails, a second apart. */
static void test_pool_binary_exits(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        WorkerPoolStats s;
        int r;

        env_setup_full(&env, "/bin/false", 1, test_layout());
        run_for(env.e, 1500 * 1000);
        s = worker_pool_stats(env.p);
        g_assert_cmpuint(s.spawned, >=, 1);
        g_assert_cmpuint(s.spawned, <=, 3);
        g_assert_cmpuint(s.failures, >=, s.spawned - 1);
        g_assert_cmpuint(s.failures, <=, s.spawned);
        /* A request on it fails cleanly, whether it is seen dead before or after sending. */
        r = start_job(&env, &o, TEST_JOB_ECHO, "", 0, NULL, 0, true, LONG_TIMEOUT, &w);
        if (r >= 0) {
                RUN_UNTIL_DONE(&env, &o, 1);
                g_assert_cmpint(o.r, <, 0);
        }
        env_teardown(&env);
}

/* The daemon's side of a version check: a worker built with other job types. */
static void test_pool_other_build(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        unsigned spawned;

        env_setup_full(&env, worker_bin, 1, test_layout() ^ 1);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_ECHO, "", 0, NULL, 0, true, LONG_TIMEOUT,
                                  &w), ==, 0);
        RUN_UNTIL_DONE(&env, &o, 1);
        g_assert_cmpint(o.r, ==, -EPROTO);
        g_assert_cmpint(o.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(o.message, "another build"));
        g_assert_cmpuint(worker_pool_stats(env.p).failures, >=, 1);
        /* Every worker of that binary is the same: no respawning in a tight loop. */
        drain(env.e);
        spawned = worker_pool_stats(env.p).spawned;
        g_assert_cmpuint(spawned, <=, 2);
        run_for(env.e, 500 * 1000);
        g_assert_cmpuint(worker_pool_stats(env.p).spawned, <=, spawned + 1);
        env_teardown(&env);
}

/* Idle: size 0 kills the ready workers; none comes back. */
static void test_pool_idle(void) {
        Env env = {};

        env_setup(&env, 2);
        wait_ready(&env, 2);
        worker_pool_set_size(env.p, 0);
        RUN_UNTIL(env.e, list_children(NULL, 0) == 0);
        drain(env.e);
        g_assert_cmpuint(worker_pool_stats(env.p).spawned, ==, 2);
        g_assert_cmpuint(worker_pool_stats(env.p).failures, ==, 0);
        assert_no_children();
        /* And back up. */
        worker_pool_set_size(env.p, 1);
        wait_ready(&env, 1);
        g_assert_cmpuint(worker_pool_stats(env.p).spawned, ==, 3);
        env_teardown(&env);
}

/* Freeing the pool kills and reaps its ready and starting workers at once. */
static void test_pool_free(void) {
        Env env = {};

        env_setup(&env, 2);
        wait_ready(&env, 2);
        env.p = worker_pool_free(env.p);
        assert_no_children();
        env_teardown(&env);

        env_setup(&env, 2); /* still starting */
        env.p = worker_pool_free(env.p);
        assert_no_children();
        env_teardown(&env);
}

/*
 * Freeing the pool while a request holds a worker (the daemon is exiting): the worker is
 * killed, and its handle can still be released afterwards.
 */
static void test_pool_free_taken(void) {
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;
        pid_t pid;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_HANG, "", 0, NULL, 0, true, LONG_TIMEOUT,
                                  &w), ==, 0);
        RUN_UNTIL(env.e, (pid = find_child("umw-HANG", 0)) != 0);
        env.p = worker_pool_free(env.p);
        g_assert_null(worker_release(w));
        g_assert_cmpuint(o.calls, ==, 0);
        /* Killed, and reaped if it died at once; what is left (a zombie) is up to the
         * exiting daemon (here: us). */
        if (waitpid(pid, NULL, 0) < 0)
                g_assert_cmpint(errno, ==, ECHILD);
        env_teardown(&env);
}

/* ---- the daemon's checks of what a worker sends ------------------------------------------ */

typedef struct Garbled {
        const char *name;
        TestGarble mode;
        bool valid;           /* a well-formed failure: sent as a job that is not last */
        int r;
        UmErrorKind kind;
        const char *message;  /* a part of it */
} Garbled;

static const Garbled garbled[] = {
        { "version", TEST_GARBLE_VERSION, false, -EPROTO, UM_ERROR_KIND_FAILED, "another build" },
        { "magic", TEST_GARBLE_MAGIC, false, -EPROTO, UM_ERROR_KIND_FAILED, "another build" },
        { "short", TEST_GARBLE_SHORT, false, -ECHILD, UM_ERROR_KIND_FAILED, "malformed message" },
        { "size", TEST_GARBLE_SIZE, false, -ECHILD, UM_ERROR_KIND_FAILED, "malformed message" },
        { "type", TEST_GARBLE_TYPE, false, -ECHILD, UM_ERROR_KIND_FAILED, "malformed result" },
        { "reply-size", TEST_GARBLE_REPLY_SIZE, false, -ECHILD, UM_ERROR_KIND_FAILED,
          "malformed result" },
        { "kind", TEST_GARBLE_KIND, false, -ECHILD, UM_ERROR_KIND_FAILED, "malformed message" },
        { "two-fds", TEST_GARBLE_TWO_FDS, false, -ECHILD, UM_ERROR_KIND_FAILED,
          "malformed message" },
        { "no-status", TEST_GARBLE_NO_STATUS, false, -ECHILD, UM_ERROR_KIND_FAILED,
          "malformed result" },
        { "huge", TEST_GARBLE_HUGE, false, -ECHILD, UM_ERROR_KIND_FAILED, "malformed message" },
        { "fail-with-fd", TEST_GARBLE_FAIL_WITH_FD, true, -EIO, UM_ERROR_KIND_DEVICE_BUSY, "x" },
        { "fail-bad-kind", TEST_GARBLE_FAIL_BAD_KIND, true, -EIO, UM_ERROR_KIND_FAILED,
          "The mount worker failed" },
        { "fail-no-nul", TEST_GARBLE_FAIL_NO_NUL, true, -EIO, UM_ERROR_KIND_DEVICE_BUSY, "AAAA" },
};

/*
 * A worker that sends something else than a good reply: the job fails with a clear error
 * (another build: -EPROTO; garbled: -ECHILD), and no fd it sent along stays open here.
 * A well-formed failure keeps its error, but never an fd.
 */
static void test_daemon_checks(gconstpointer data) {
        const Garbled *g = data;
        Env env = {};
        Outcome o = {};
        Worker *w = NULL;

        env_setup(&env, 0);
        g_assert_cmpint(start_job(&env, &o, TEST_JOB_GARBLE, "", g->mode, NULL, 0, !g->valid,
                                  LONG_TIMEOUT, &w), ==, 0);
        RUN_UNTIL(env.e, o.calls == 1);
        g_assert_cmpint(o.r, ==, g->r);
        g_assert_cmpint(o.kind, ==, g->kind);
        g_assert_cmpint(o.fd, <, 0);
        g_assert_false(o.have_reply);
        if (!strstr(o.message, g->message))
                g_error("\"%s\" does not say \"%s\"", o.message, g->message);
        g_assert_true(o.message_terminated);
        if (g->mode == TEST_GARBLE_FAIL_NO_NUL)
                g_assert_cmpuint(strlen(o.message), ==, sizeof(((UmError *) NULL)->message) - 1);
        if (g->valid) {
                g_assert_cmpint(worker_get_state(w), ==, WORKER_WAITING);
                g_assert_null(worker_release(w));
        }
        RUN_UNTIL(env.e, list_children(NULL, 0) == 0);
        drain(env.e);
        g_assert_cmpuint(o.calls, ==, 1);
        g_assert_cmpuint(worker_pool_count_alive(env.p), ==, 0);
        env_teardown(&env);
}

/* ---- the wire, by hand ---------------------------------------------------------------- */

typedef struct Manual {
        pid_t pid;
        int sock;
} Manual;

/* Starts the worker as worker.c does: the socket as fd 3, our pid as its argument. */
static void manual_spawn(Manual *m) {
        char ppid[16];
        char *const argv[] = { worker_bin, ppid, NULL };
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all;
        int pair[2], theirs;

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), ==, 0);
        /* Never fd 3 already: dup2() onto itself would leave it O_CLOEXEC. */
        theirs = fcntl(pair[1], F_DUPFD_CLOEXEC, 10);
        g_assert_cmpint(theirs, >=, 0);
        close(pair[1]);
        g_snprintf(ppid, sizeof(ppid), "%d", (int) getpid());
        sigemptyset(&none);
        sigfillset(&all);
        g_assert_cmpint(posix_spawn_file_actions_init(&fa), ==, 0);
        g_assert_cmpint(posix_spawn_file_actions_adddup2(&fa, theirs, 3), ==, 0);
        g_assert_cmpint(posix_spawnattr_init(&attr), ==, 0);
        g_assert_cmpint(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
                                                                POSIX_SPAWN_SETSIGDEF), ==, 0);
        g_assert_cmpint(posix_spawnattr_setsigmask(&attr, &none), ==, 0);
        g_assert_cmpint(posix_spawnattr_setsigdefault(&attr, &all), ==, 0);
        g_assert_cmpint(posix_spawn(&m->pid, worker_bin, &fa, &attr, argv, environ), ==, 0);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        close(theirs);
        m->sock = pair[0];
}

/* One message (bounded wait); its size, 0 at end of file. */
static ssize_t manual_recv(Manual *m, void *buf, size_t size, int *ret_fd) {
        struct pollfd p = { .fd = m->sock, .events = POLLIN };
        int fds[FDPASS_MAX];
        size_t n_fds;
        ssize_t n;

        g_assert_cmpint(poll(&p, 1, 10 * 1000), ==, 1);
        n = fdpass_recv(m->sock, buf, size, fds, G_N_ELEMENTS(fds), &n_fds, MSG_DONTWAIT);
        g_assert_cmpint(n, >=, 0);
        if (ret_fd)
                *ret_fd = n_fds > 0 ? fds[0] : -EBADF;
        else
                g_assert_cmpuint(n_fds, ==, 0);
        for (size_t i = 1; i < n_fds; i++)
                close(fds[i]);
        return n;
}

static void manual_hello(Manual *m) {
        uint8_t buf[256];
        WorkerHeader h;
        WorkerHello hello;
        ssize_t n = manual_recv(m, buf, sizeof(buf), NULL);

        g_assert_cmpint(n, ==, sizeof(h) + sizeof(hello));
        memcpy(&h, buf, sizeof(h));
        memcpy(&hello, buf + sizeof(h), sizeof(hello));
        g_assert_cmphex(h.magic, ==, WORKER_MAGIC);
        g_assert_cmpuint(h.version, ==, WORKER_PROTOCOL_VERSION);
        g_assert_cmpuint(h.kind, ==, WORKER_MSG_HELLO);
        g_assert_cmpuint(h.size, ==, sizeof(hello));
        g_assert_cmphex(hello.layout, ==, test_layout());
        g_assert_cmpint(hello.pid, ==, m->pid);
}

/* Sends a message as it is, with up to 16 fds (more than fdpass_send() would). */
static void manual_send(Manual *m, const void *buf, size_t size, const int *fds, size_t n_fds) {
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * 16)];
        } control = {};
        struct iovec iov = { .iov_base = (void *) buf, .iov_len = size };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        g_assert_cmpuint(n_fds, <=, 16);
        if (n_fds > 0) {
                struct cmsghdr *c;

                mh.msg_control = &control;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        g_assert_cmpint(sendmsg(m->sock, &mh, MSG_NOSIGNAL), ==, (ssize_t) size);
}

/* The worker closes the socket and exits with status. */
static void manual_expect_exit(Manual *m, int status) {
        uint8_t buf[64];
        int st;

        g_assert_cmpint(manual_recv(m, buf, sizeof(buf), NULL), ==, 0);
        g_assert_cmpint(waitpid(m->pid, &st, 0), ==, m->pid);
        g_assert_true(WIFEXITED(st));
        g_assert_cmpint(WEXITSTATUS(st), ==, status);
        close(m->sock);
}

/* A well-formed exchange by hand, so that the refusals below are refusals of what differs. */
static void test_protocol_by_hand(void) {
        unsigned before = count_fds();
        uint8_t buf[4096];
        struct {
                WorkerHeader h;
                TestJob job;
        } msg = {
                .h = { WORKER_MAGIC, WORKER_PROTOCOL_VERSION, WORKER_MSG_JOB, TEST_JOB_ECHO,
                       WORKER_JOB_LAST, sizeof(TestJob) },
                .job = { .text = "by hand", .flags = TEST_JOB_SEND_FD },
        };
        WorkerHeader h;
        WorkerStatus status;
        TestReply reply;
        Manual m;
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), got = -EBADF;
        ssize_t n;

        g_assert_cmpint(fd, >=, 0);
        manual_spawn(&m);
        manual_hello(&m);
        manual_send(&m, &msg, sizeof(msg), &fd, 1);
        close(fd);
        n = manual_recv(&m, buf, sizeof(buf), &got);
        g_assert_cmpint(n, ==, sizeof(h) + sizeof(status) + sizeof(reply));
        memcpy(&h, buf, sizeof(h));
        memcpy(&status, buf + sizeof(h), sizeof(status));
        memcpy(&reply, buf + sizeof(h) + sizeof(status), sizeof(reply));
        g_assert_cmpuint(h.kind, ==, WORKER_MSG_REPLY);
        g_assert_cmpuint(h.type, ==, TEST_JOB_ECHO);
        g_assert_cmpint(status.r, ==, 0);
        g_assert_cmpstr(reply.text, ==, "by hand");
        g_assert_cmpint(got, >=, 0);
        close(got);
        manual_expect_exit(&m, 0);
        g_assert_cmpuint(count_fds(), ==, before);
        assert_no_children();
}

/* The end of the conversation: the daemon closes the socket, the worker exits 0. */
static void test_protocol_eof(void) {
        unsigned before = count_fds();
        uint8_t buf[64];
        Manual m;
        int st;

        manual_spawn(&m);
        manual_hello(&m);
        shutdown(m.sock, SHUT_WR);
        g_assert_cmpint(manual_recv(&m, buf, sizeof(buf), NULL), ==, 0);
        g_assert_cmpint(waitpid(m.pid, &st, 0), ==, m.pid);
        g_assert_true(WIFEXITED(st));
        g_assert_cmpint(WEXITSTATUS(st), ==, 0);
        close(m.sock);
        g_assert_cmpuint(count_fds(), ==, before);
        assert_no_children();
}

/* Started by hand without the socket or with bad arguments, it refuses. */
static void test_protocol_not_by_hand(void) {
        g_autofree char *ppid = g_strdup_printf("%d", (int) getpid());
        const char *bad[][4] = {
                { worker_bin, NULL },           /* no pid */
                { worker_bin, "x", NULL },      /* not a pid */
                { worker_bin, ppid, "1", NULL }, /* more than a pid */
                { worker_bin, ppid, NULL },     /* no socket as fd 3 */
        };

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                char *argv[5] = {};
                pid_t pid;
                int st;

                posix_spawn_file_actions_t fa;

                for (size_t k = 0; k < 4 && bad[i][k]; k++)
                        argv[k] = (char *) bad[i][k];
                /* Fd 3 is something, but not a socket. */
                g_assert_cmpint(posix_spawn_file_actions_init(&fa), ==, 0);
                g_assert_cmpint(posix_spawn_file_actions_addopen(&fa, 3, "/dev/null", O_RDONLY,
                                                                 0), ==, 0);
                g_assert_cmpint(posix_spawn(&pid, worker_bin, &fa, NULL, argv, environ), ==, 0);
                posix_spawn_file_actions_destroy(&fa);
                g_assert_cmpint(waitpid(pid, &st, 0), ==, pid);
                g_assert_true(WIFEXITED(st));
                g_assert_cmpint(WEXITSTATUS(st), ==, 2);
        }
        assert_no_children();
}

/* A job the worker must refuse: how it differs from a good ECHO job, and what it says. */
typedef struct BadJob {
        const char *name;
        uint32_t magic_xor;
        uint32_t version_add;
        uint32_t kind;           /* 0: JOB */
        uint32_t type;           /* 0: ECHO */
        int header_size_delta;   /* header.size = sizeof(TestJob) + this */
        int payload_size_delta;  /* bytes sent after the header: sizeof(TestJob) + this */
        size_t total_size;       /* >0: send only this many bytes in all */
        unsigned n_fds;
        int err;
        uint32_t reply_type;
        size_t reply_size;
        const char *message;
} BadJob;

static const BadJob bad_jobs[] = {
        { .name = "version", .version_add = 1, .err = EPROTO, .reply_type = TEST_JOB_ECHO,
          .reply_size = sizeof(TestReply), .message = "another version of the worker protocol" },
        { .name = "magic", .magic_xor = 1, .err = EPROTO, .reply_type = TEST_JOB_ECHO,
          .reply_size = sizeof(TestReply), .message = "another version of the worker protocol" },
        { .name = "short", .header_size_delta = -1, .payload_size_delta = -1, .err = EBADMSG,
          .reply_type = TEST_JOB_ECHO, .reply_size = sizeof(TestReply),
          .message = "truncated or malformed ECHO job" },
        { .name = "long", .header_size_delta = 1, .payload_size_delta = 1, .err = EBADMSG,
          .reply_type = TEST_JOB_ECHO, .reply_size = sizeof(TestReply),
          .message = "truncated or malformed ECHO job" },
        { .name = "header-says-more", .payload_size_delta = -1, .err = EBADMSG,
          .reply_type = TEST_JOB_ECHO, .reply_size = sizeof(TestReply),
          .message = "truncated or malformed ECHO job" },
        { .name = "header-says-less", .header_size_delta = -1, .err = EBADMSG,
          .reply_type = TEST_JOB_ECHO, .reply_size = sizeof(TestReply),
          .message = "truncated or malformed ECHO job" },
        { .name = "larger-than-any", .header_size_delta = 64, .payload_size_delta = 64,
          .err = EBADMSG, .reply_type = 0, .reply_size = 0, .message = "larger than any" },
        { .name = "too-many-fds", .n_fds = 3, .err = EBADMSG, .reply_type = TEST_JOB_ECHO,
          .reply_size = sizeof(TestReply), .message = "truncated or malformed ECHO job" },
        { .name = "fds-for-none", .type = TEST_JOB_HANG, .n_fds = 1, .err = EBADMSG,
          .reply_type = TEST_JOB_HANG, .reply_size = sizeof(TestReply),
          .message = "truncated or malformed HANG job" },
        { .name = "far-too-many-fds", .n_fds = FDPASS_MAX + 1, .err = EBADMSG, .reply_type = 0,
          .reply_size = 0, .message = "too many fds" },
        { .name = "unknown-type", .type = 99, .err = EBADMSG, .reply_type = 99,
          .reply_size = 0, .message = "not a job it knows" },
        { .name = "not-a-job", .kind = WORKER_MSG_REPLY, .err = EBADMSG,
          .reply_type = TEST_JOB_ECHO, .reply_size = sizeof(TestReply),
          .message = "not a job it knows" },
        { .name = "hello-back", .kind = WORKER_MSG_HELLO, .err = EBADMSG,
          .reply_type = TEST_JOB_ECHO, .reply_size = sizeof(TestReply),
          .message = "not a job it knows" },
        { .name = "no-header", .total_size = sizeof(WorkerHeader) - 1, .err = EBADMSG,
          .reply_type = 0, .reply_size = 0, .message = "truncated message" },
};

/*
 * The worker's side of the checks: it answers a job it cannot take with a REPLY that
 * says why (-EPROTO for another version, -EBADMSG for a garbled job) and exits 1.
 */
static void test_protocol_bad_job(gconstpointer data) {
        const BadJob *b = data;
        unsigned before = count_fds();
        uint8_t msg[sizeof(WorkerHeader) + sizeof(TestJob) + 256] = {}, buf[4096];
        WorkerHeader h = {
                .magic = WORKER_MAGIC ^ b->magic_xor,
                .version = WORKER_PROTOCOL_VERSION + b->version_add,
                .kind = b->kind ?: WORKER_MSG_JOB,
                .type = b->type ?: TEST_JOB_ECHO,
                .flags = WORKER_JOB_LAST,
                .size = (uint32_t) ((int) sizeof(TestJob) + b->header_size_delta),
        };
        TestJob job = { .text = "refused" };
        int fds[16];
        WorkerStatus status;
        size_t size;
        Manual m;
        ssize_t n;

        memcpy(msg, &h, sizeof(h));
        memcpy(msg + sizeof(h), &job, sizeof(job));
        size = b->total_size ?: sizeof(h) + (size_t) ((int) sizeof(TestJob) +
                                                     b->payload_size_delta);
        g_assert_cmpuint(size, <=, sizeof(msg));
        for (unsigned i = 0; i < b->n_fds; i++)
                g_assert_cmpint(fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC), >=, 0);

        manual_spawn(&m);
        manual_hello(&m);
        manual_send(&m, msg, size, fds, b->n_fds);
        for (unsigned i = 0; i < b->n_fds; i++)
                close(fds[i]);

        n = manual_recv(&m, buf, sizeof(buf), NULL);
        g_assert_cmpint(n, ==, sizeof(h) + sizeof(status) + b->reply_size);
        memcpy(&h, buf, sizeof(h));
        memcpy(&status, buf + sizeof(h), sizeof(status));
        g_assert_cmphex(h.magic, ==, WORKER_MAGIC);
        g_assert_cmpuint(h.version, ==, WORKER_PROTOCOL_VERSION);
        g_assert_cmpuint(h.kind, ==, WORKER_MSG_REPLY);
        g_assert_cmpuint(h.type, ==, b->reply_type);
        g_assert_cmpuint(h.size, ==, sizeof(status) + b->reply_size);
        g_assert_cmpint(status.r, ==, -b->err);
        g_assert_cmpint(status.error.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_cmpint(status.error.error, ==, b->err);
        g_assert_nonnull(memchr(status.error.message, 0, sizeof(status.error.message)));
        if (!strstr(status.error.message, b->message))
                g_error("\"%s\" does not say \"%s\"", status.error.message, b->message);
        manual_expect_exit(&m, 1);
        g_assert_cmpuint(count_fds(), ==, before);
        assert_no_children();
}

/*
 * usermount-worker warms up on tables of its own: it opens neither /etc/fstab nor
 * /etc/crypttab before a job asks (a worker that held them open while warming up kept a
 * bind mount over them busy). Seen with inotify on files bound over both in a private
 * mount namespace, so nothing else on the machine counts.
 */
static void warm_up_child(void *data) {
        const char *path = data;
        const char *const etc[] = { "/etc/fstab", "/etc/crypttab" };
        g_autofree char *file = g_strdup("/tmp/um-test-etc-XXXXXX");
        _cleanup_close_ int in = -EBADF, tmp = -EBADF;
        sd_event *e = new_event();
        WorkerPool *p = NULL;
        char buf[4096];

        g_assert_cmpint(unshare(CLONE_NEWNS), ==, 0);
        g_assert_cmpint(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), ==, 0);
        tmp = mkstemp(file);
        g_assert_cmpint(tmp, >=, 0);
        in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        g_assert_cmpint(in, >=, 0);
        /* One that does not exist is not opened either (and nothing is made in /etc). */
        for (size_t i = 0; i < G_N_ELEMENTS(etc); i++)
                if (access(etc[i], F_OK) == 0)
                        g_assert_cmpint(mount(file, etc[i], NULL, MS_BIND, NULL), ==, 0);
        g_assert_cmpint(inotify_add_watch(in, file, IN_OPEN), >=, 0);
        (void) unlink(file); /* the binds keep the inode; nothing is left behind */
        g_assert_cmpint(worker_pool_new(e, path, 1, job_layouts_hash(), &p), ==, 0);
        RUN_UNTIL(e, count_children_named(WORKER_NAME_READY) >= 1);
        g_assert_cmpint(read(in, buf, sizeof(buf)), ==, -1);
        g_assert_cmpint(errno, ==, EAGAIN);
        p = worker_pool_free(p);
        sd_event_unref(e);
}

static void test_real_worker_warm_up_opens_no_system_file(void) {
        const char *path = getenv("UM_WORKER");

        if (!path || access(path, X_OK) < 0) {
                g_test_skip("$UM_WORKER does not name usermount-worker (run through meson)");
                return;
        }
        int status = -1;
        pid_t pid;

        fflush(NULL);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                warm_up_child((void *) path);
                _exit(0);
        }
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

/* ---- main ------------------------------------------------------------------------------ */

static char *find_worker_bin(const char *argv0) {
        const char *env = getenv(TEST_WORKER_BIN_ENV);
        g_autofree char *self = NULL, *dir = NULL;

        if (env)
                return g_strdup(env);
        /* Run by hand from the build directory: the binary is beside us. */
        self = g_file_read_link("/proc/self/exe", NULL);
        dir = g_path_get_dirname(self ?: argv0);
        return g_build_filename(dir, "stub-worker", NULL);
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        worker_bin = find_worker_bin(argv[0]);
        if (access(worker_bin, X_OK) < 0)
                g_error("%s: %s (set $" TEST_WORKER_BIN_ENV ")", worker_bin, g_strerror(errno));

        g_test_add_func("/worker/reply-and-fd", test_reply_and_fd);
        g_test_add_func("/worker/reply-after-exit", test_reply_after_exit);
        g_test_add_func("/worker/reply-read-after-exit", test_reply_read_after_exit);
        g_test_add_func("/worker/failure-carries-error-not-fd", test_failure_carries_error_not_fd);
        g_test_add_func("/worker/crash", test_crash);
        g_test_add_func("/worker/exit-without-reply", test_exit_without_reply);
        g_test_add_func("/worker/timeout-kills", test_timeout_kills);
        g_test_add_func("/worker/release-before-done-reaps", test_release_before_done_reaps);
        g_test_add_func("/worker/child-keeps-only-given-fds", test_child_keeps_only_given_fds);
        g_test_add_func("/worker/spawn-leaves-no-fd-copies", test_spawn_leaves_no_fd_copies);
        g_test_add_func("/worker/real-worker-warm-up-opens-no-system-file",
                        test_real_worker_warm_up_opens_no_system_file);

        g_test_add_func("/worker/multi-job", test_multi_job);
        g_test_add_func("/worker/multi-job-after-failure", test_multi_job_after_failure);
        g_test_add_func("/worker/busy-counts", test_busy_counts);

        g_test_add_func("/worker/killed/ready", test_killed_ready);
        g_test_add_func("/worker/killed/busy", test_killed_busy);
        g_test_add_func("/worker/killed/waiting-reaped", test_killed_waiting_reaped);
        g_test_add_func("/worker/killed/waiting-dead", test_killed_waiting_dead);
        g_test_add_func("/worker/killed/waiting-race", test_killed_waiting_race);

        g_test_add_func("/worker/pool/empty", test_pool_empty);
        g_test_add_func("/worker/pool/hit", test_pool_hit);
        g_test_add_func("/worker/pool/missing-binary", test_pool_missing_binary);
        g_test_add_func("/worker/pool/binary-exits", test_pool_binary_exits);
        g_test_add_func("/worker/pool/other-build", test_pool_other_build);
        g_test_add_func("/worker/pool/idle", test_pool_idle);
        g_test_add_func("/worker/pool/free", test_pool_free);
        g_test_add_func("/worker/pool/free-taken", test_pool_free_taken);

        for (size_t i = 0; i < G_N_ELEMENTS(garbled); i++) {
                g_autofree char *path = g_strdup_printf("/worker/daemon-checks/%s",
                                                        garbled[i].name);

                g_test_add_data_func(path, &garbled[i], test_daemon_checks);
        }

        g_test_add_func("/worker/protocol/by-hand", test_protocol_by_hand);
        g_test_add_func("/worker/protocol/eof", test_protocol_eof);
        g_test_add_func("/worker/protocol/not-by-hand", test_protocol_not_by_hand);
        for (size_t i = 0; i < G_N_ELEMENTS(bad_jobs); i++) {
                g_autofree char *path = g_strdup_printf("/worker/protocol/bad-job/%s",
                                                        bad_jobs[i].name);

                g_test_add_data_func(path, &bad_jobs[i], test_protocol_bad_job);
        }
        r = g_test_run();
        g_free(worker_bin);
        return r;
}
