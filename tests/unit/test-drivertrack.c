/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The table of running userspace drivers (drivertrack.h), with real processes standing in
 * for drivers: counting, the state file a new instance takes over, the exit watch, and
 * malformed or stale lines.
 */
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drivertrack.h"
#include "procfs.h"

typedef struct Child {
        pid_t pid;
        uint64_t start;
} Child;

static Child child_start(void) {
        Child c = {};

        c.pid = fork();
        g_assert_cmpint(c.pid, >=, 0);
        if (c.pid == 0) {
                pause();
                _exit(0);
        }
        g_assert_cmpint(proc_start_time(c.pid, &c.start), ==, 0);
        return c;
}

static void child_kill(Child *c) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
}

/* Killed, and not reaped: a zombie has its pid and start time, but is no driver. */
static void child_kill_unreaped(Child *c) {
        siginfo_t si;

        kill(c->pid, SIGKILL);
        g_assert_cmpint(waitid(P_PID, (id_t) c->pid, &si, WEXITED | WNOWAIT), ==, 0);
}

static char *state_path(void) {
        g_autofree char *dir = g_dir_make_tmp("test-drivertrack-XXXXXX", NULL);

        g_assert_nonnull(dir);
        return g_build_filename(dir, DRIVERTRACK_FILE, NULL);
}

static void cleanup_path(const char *path) {
        g_autofree char *dir = g_path_get_dirname(path);

        unlink(path);
        rmdir(dir);
}

static void test_count_and_take_over(void) {
        Child a = child_start(), b = child_start();
        DriverTrack t = { .path = state_path() }, next = {};
        g_autofree char *text = NULL;
        size_t dropped = 99;

        g_assert_cmpint(drivertrack_add(&t, a.pid, a.start, 1000, 5001, pidfd_open(a.pid, 0), -EBADF), ==, 0);
        g_assert_cmpint(drivertrack_add(&t, b.pid, b.start, 1001, 5002, pidfd_open(b.pid, 0), -EBADF), ==, 0);
        g_assert_cmpuint(drivertrack_count(&t, 1000), ==, 1);
        g_assert_cmpuint(drivertrack_count(&t, 1002), ==, 0);
        g_assert_cmpuint(drivertrack_count(&t, (uid_t) -1), ==, 2);
        g_assert_true(drivertrack_alive(a.pid, a.start));
        g_assert_false(drivertrack_alive(a.pid, a.start + 1));
        g_assert_true(g_file_get_contents(t.path, &text, NULL, NULL));
        g_assert_nonnull(strstr(text, " 1000 5001\n"));

        /* A new instance takes over what still runs: b is gone by then. */
        child_kill(&b);
        next.path = g_strdup(t.path);
        g_assert_cmpint(drivertrack_load(&next, &dropped), ==, 0);
        g_assert_cmpuint(dropped, ==, 1);
        g_assert_cmpuint(drivertrack_count(&next, (uid_t) -1), ==, 1);
        g_assert_cmpint(next.entries[0].pid, ==, a.pid);
        g_assert_cmpuint(next.entries[0].owner, ==, 1000);
        g_assert_cmpuint(next.entries[0].uid, ==, 5001);
        g_clear_pointer(&text, g_free);
        g_assert_true(g_file_get_contents(t.path, &text, NULL, NULL));
        g_assert_null(strstr(text, " 1001 "));

        child_kill_unreaped(&a);
        g_assert_false(drivertrack_alive(a.pid, a.start));
        waitpid(a.pid, NULL, 0);
        drivertrack_done(&next);
        cleanup_path(t.path);
        drivertrack_done(&t);
}

static void test_malformed(void) {
        Child a = child_start();
        DriverTrack t = { .path = state_path() };
        g_autofree char *good = NULL, *text = NULL;
        size_t dropped = 0;

        good = g_strdup_printf("%d %" G_GUINT64_FORMAT " 1000 5001\n", (int) a.pid, a.start);
        text = g_strconcat("garbage\n", "0 1 2 3\n", "1 2 3\n", "-5 1 1000 5001\n",
                           "12 34 1000 0\n", "12 34 4294967295 5001\n",
                           "99999999999 1 1000 5001\n", good, good, "12 34 1000 5001 extra\n",
                           NULL);
        g_assert_true(g_file_set_contents(t.path, text, -1, NULL));
        g_assert_cmpint(drivertrack_load(&t, &dropped), ==, 0);
        /* Eight malformed lines; the good one taken once. */
        g_assert_cmpuint(dropped, ==, 8);
        g_assert_cmpuint(drivertrack_count(&t, (uid_t) -1), ==, 1);
        child_kill(&a);
        cleanup_path(t.path);
        drivertrack_done(&t);
}

typedef struct Exited {
        pid_t pid;
        sd_event *event;
} Exited;

static void on_exit_cb(DriverTrack *t, pid_t pid, uint64_t start, void *userdata) {
        Exited *e = userdata;

        e->pid = pid;
        sd_event_exit(e->event, 0);
}

static void test_exit_watch(void) {
        Child a = child_start();
        Exited seen = {};
        DriverTrack t = { .path = state_path(), .on_exit = on_exit_cb, .userdata = &seen };

        g_assert_cmpint(sd_event_new(&t.event), >=, 0);
        seen.event = t.event;
        g_assert_cmpint(drivertrack_add(&t, a.pid, a.start, 1000, 5001, pidfd_open(a.pid, 0), -EBADF), ==, 0);
        child_kill(&a);
        g_assert_cmpint(sd_event_loop(t.event), ==, 0);
        g_assert_cmpint(seen.pid, ==, a.pid);
        g_assert_cmpuint(drivertrack_count(&t, (uid_t) -1), ==, 0);
        cleanup_path(t.path);
        drivertrack_done(&t);
        sd_event_unref(seen.event);
}

/* A driver that exited before its watch ran is forgotten by a prune, without on_exit. */
static void test_prune(void) {
        Child a = child_start(), b = child_start();
        DriverTrack t = { .path = state_path() };

        g_assert_cmpint(drivertrack_add(&t, a.pid, a.start, 1000, 5001, pidfd_open(a.pid, 0), -EBADF), ==, 0);
        g_assert_cmpint(drivertrack_add(&t, b.pid, b.start, 1000, 5002, pidfd_open(b.pid, 0), -EBADF), ==, 0);
        g_assert_cmpuint(drivertrack_prune(&t), ==, 0);
        child_kill_unreaped(&a);
        g_assert_cmpuint(drivertrack_prune(&t), ==, 1);
        g_assert_cmpuint(drivertrack_count(&t, 1000), ==, 1);
        g_assert_true(drivertrack_has(&t, b.pid, b.start));
        waitpid(a.pid, NULL, 0);
        child_kill(&b);
        cleanup_path(t.path);
        drivertrack_done(&t);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/drivertrack/count-and-take-over", test_count_and_take_over);
        g_test_add_func("/drivertrack/malformed", test_malformed);
        g_test_add_func("/drivertrack/exit-watch", test_exit_watch);
        g_test_add_func("/drivertrack/prune", test_prune);
        return g_test_run();
}
