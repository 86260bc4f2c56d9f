/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The caller stage without a bus: the cache of the bus's answers (hit, miss, the least
 * recently used entry going at the bound, a closed connection forgotten), the check of
 * the calling process through a pidfd, and the one reader of /proc/PID/status and
 * /proc/PID/stat (procfs.h) on hostile and real text.
 */
#include <fcntl.h>
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caller.h"
#include "macro.h"
#include "procfs.h"

static char *name_of(unsigned i) {
        return g_strdup_printf(":1.%u", i);
}

static void test_cache_hit_and_miss(void) {
        CallerCache *c = NULL;
        const CallerCreds *got;

        g_assert_cmpint(caller_cache_new(NULL, NULL, NULL, &c), ==, 0);
        g_assert_null(caller_cache_get(c, ":1.7"));
        g_assert_cmpint(caller_cache_put(c, ":1.7", &(CallerCreds) { 1000, 4242, (char *) "l" }),
                        ==, 0);
        got = caller_cache_get(c, ":1.7");
        g_assert_nonnull(got);
        g_assert_cmpuint(got->uid, ==, 1000);
        g_assert_cmpint(got->pid, ==, 4242);
        g_assert_cmpstr(got->label, ==, "l");
        /* A name is a whole name, not a prefix. */
        g_assert_null(caller_cache_get(c, ":1.70"));
        g_assert_null(caller_cache_get(c, ":1."));
        /* Put again replaces (never two entries for one name); no label is NULL. */
        g_assert_cmpint(caller_cache_put(c, ":1.7", &(CallerCreds) { 1001, 4243, NULL }), ==, 0);
        got = caller_cache_get(c, ":1.7");
        g_assert_cmpuint(got->uid, ==, 1001);
        g_assert_null(got->label);
        g_assert_cmpuint(caller_cache_size(c), ==, 1);
        g_assert_cmpuint(caller_cache_pending(c), ==, 0);
        caller_cache_free(c);
}

/* The start time of the connecting process is recorded once, at the first check, and kept:
 * a later call whose pid names a process started at another time is refused (caller.c). */
static void test_cache_start_time(void) {
        CallerCache *c = NULL;
        const CallerCreds *got;

        g_assert_cmpint(caller_cache_new(NULL, NULL, NULL, &c), ==, 0);
        g_assert_cmpint(caller_cache_put(c, ":1.7", &(CallerCreds) { 1000, 4242, NULL }), ==, 0);
        g_assert_cmpuint(caller_cache_get(c, ":1.7")->start_time, ==, 0);
        caller_cache_note_start_time(c, ":1.7", 123);
        caller_cache_note_start_time(c, ":1.7", 456); /* a reused pid does not overwrite */
        caller_cache_note_start_time(c, ":1.8", 789); /* nobody's: nothing happens */
        got = caller_cache_get(c, ":1.7");
        g_assert_cmpuint(got->start_time, ==, 123);
        g_assert_null(caller_cache_get(c, ":1.8"));
        caller_cache_free(c);
}

/* Full: the least recently used goes, not the oldest put; and never more than the bound. */
static void test_cache_bound(void) {
        CallerCache *c = NULL;

        g_assert_cmpint(caller_cache_new(NULL, NULL, NULL, &c), ==, 0);
        for (unsigned i = 0; i < CALLER_CACHE_MAX; i++) {
                g_autofree char *n = name_of(i);

                g_assert_cmpint(caller_cache_put(c, n, &(CallerCreds) { i, (pid_t) i + 1 }), ==, 0);
        }
        g_assert_cmpuint(caller_cache_size(c), ==, CALLER_CACHE_MAX);
        /* :1.0 is used again: :1.1 is now the least recently used. */
        g_assert_nonnull(caller_cache_get(c, ":1.0"));
        g_assert_cmpint(caller_cache_put(c, ":2.0", &(CallerCreds) { 7, 8 }), ==, 0);
        g_assert_cmpuint(caller_cache_size(c), ==, CALLER_CACHE_MAX);
        g_assert_nonnull(caller_cache_get(c, ":1.0"));
        g_assert_null(caller_cache_get(c, ":1.1"));
        g_assert_nonnull(caller_cache_get(c, ":2.0"));
        g_assert_nonnull(caller_cache_get(c, ":1.2"));

        /* Many more: still the bound, and the most recent ones are there. */
        for (unsigned i = 0; i < 3 * CALLER_CACHE_MAX; i++) {
                g_autofree char *n = g_strdup_printf(":3.%u", i);

                g_assert_cmpint(caller_cache_put(c, n, &(CallerCreds) { i, 1, (char *) "x" }),
                                ==, 0);
                g_assert_cmpuint(caller_cache_size(c), <=, CALLER_CACHE_MAX);
        }
        g_assert_cmpuint(caller_cache_size(c), ==, CALLER_CACHE_MAX);
        g_assert_nonnull(caller_cache_get(c, ":3.767"));
        g_assert_nonnull(caller_cache_get(c, ":3.512"));
        g_assert_null(caller_cache_get(c, ":3.511"));
        g_assert_null(caller_cache_get(c, ":1.0"));
        caller_cache_free(c);
}

/* A connection that closed is forgotten, and only that one. */
static void test_cache_forget(void) {
        CallerCache *c = NULL;

        g_assert_cmpint(caller_cache_new(NULL, NULL, NULL, &c), ==, 0);
        for (unsigned i = 0; i < 5; i++) {
                g_autofree char *n = name_of(i);

                g_assert_cmpint(caller_cache_put(c, n, &(CallerCreds) { i, 1, (char *) "l" }),
                                ==, 0);
        }
        g_assert_true(caller_cache_forget(c, ":1.1"));
        g_assert_false(caller_cache_forget(c, ":1.1"));
        g_assert_false(caller_cache_forget(c, ":9.9"));
        g_assert_cmpuint(caller_cache_size(c), ==, 4);
        g_assert_null(caller_cache_get(c, ":1.1"));
        for (unsigned i = 0; i < 5; i++) {
                g_autofree char *n = name_of(i);

                if (i != 1)
                        g_assert_cmpuint(caller_cache_get(c, n)->uid, ==, i);
        }
        /* The last entry, and the only one. */
        g_assert_true(caller_cache_forget(c, ":1.4"));
        g_assert_true(caller_cache_forget(c, ":1.0"));
        g_assert_true(caller_cache_forget(c, ":1.2"));
        g_assert_true(caller_cache_forget(c, ":1.3"));
        g_assert_cmpuint(caller_cache_size(c), ==, 0);
        g_assert_false(caller_cache_forget(NULL, ":1.3"));
        g_assert_cmpuint(caller_cache_size(NULL), ==, 0);
        g_assert_null(caller_cache_free(NULL));
        caller_cache_free(c);
}

/* This very process: all uids are ours, alive; start time and umask as /proc says. */
static void test_check_process_self(void) {
        _cleanup_close_ int pidfd = -EBADF;
        uint64_t start = 0, again = 0;
        mode_t mask = 0, old = umask(0027);

        g_assert_cmpint(caller_check_process(getpid(), getuid(), -EBADF, &pidfd, &start, &mask),
                        ==, 0);
        umask(old);
        g_assert_cmpint(pidfd, >=, 0);
        g_assert_cmpint(fcntl(pidfd, F_GETFD), ==, FD_CLOEXEC);
        g_assert_cmpuint(mask, ==, 0027);
        g_assert_cmpint(proc_start_time(getpid(), &again), ==, 0);
        g_assert_cmpuint(start, ==, again);
        g_assert_cmpuint(start, >, 0);
}

/* Another uid than the process has: refused. Not a process: gone. */
static void test_check_process_refused(void) {
        int pidfd = -EBADF;
        uint64_t start = 0;
        mode_t mask = 0;

        g_assert_cmpint(caller_check_process(getpid(), getuid() + 1, -EBADF, &pidfd, &start,
                                             &mask), ==, -EPERM);
        g_assert_cmpint(pidfd, ==, -EBADF);
        g_assert_cmpint(caller_check_process(0, getuid(), -EBADF, &pidfd, &start, &mask), ==,
                        -ESRCH);
        g_assert_cmpint(caller_check_process(-1, getuid(), -EBADF, &pidfd, &start, &mask), ==,
                        -ESRCH);
}

/* A process that exited (a zombie: its pid is still taken, /proc still shows it) is gone;
 * once reaped as well. */
static void test_check_process_exited(void) {
        int pidfd = -EBADF;
        uint64_t start = 0;
        mode_t mask = 0;
        siginfo_t si;
        pid_t pid = fork();

        g_assert_cmpint(pid, >=, 0);
        if (pid == 0)
                _exit(0);
        g_assert_cmpint(waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT), ==, 0);
        g_assert_cmpint(caller_check_process(pid, getuid(), -EBADF, &pidfd, &start, &mask), ==,
                        -ESRCH);
        g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
        g_assert_cmpint(caller_check_process(pid, getuid(), -EBADF, &pidfd, &start, &mask), ==,
                        -ESRCH);
        g_assert_cmpint(pidfd, ==, -EBADF);
}

/* ---- procfs ---------------------------------------------------------------------------- */

static const char status_text[] =
        "Name:\tUid: Gid: fake\n"
        "Umask:\t0022\n"
        "State:\tS (sleeping)\n"
        "Tgid:\t12\n"
        "Uid:\t1000\t1001\t1002\t1003\n"
        "Gid:\t2000\t2001\t2002\t2003\n"
        "FDSize:\t64\n"
        "Groups:\t4 24 27 4294967294 \n"
        "NStgid:\t12\n";

static void test_status_parse(void) {
        ProcStatus st;

        g_assert_cmpint(proc_status_parse(status_text, &st), ==, 0);
        g_assert_cmpuint(st.uids[0], ==, 1000);
        g_assert_cmpuint(st.uids[3], ==, 1003);
        g_assert_cmpuint(st.gids[0], ==, 2000);
        g_assert_cmpuint(st.gids[3], ==, 2003);
        g_assert_true(st.has_umask);
        g_assert_cmpuint(st.umask, ==, 0022);
        g_assert_cmpuint(st.n_groups, ==, 4);
        g_assert_cmpuint(st.groups[0], ==, 4);
        g_assert_cmpuint(st.groups[3], ==, 4294967294u);
        g_assert_false(proc_status_has_only_uid(&st, 1000));
}

static void test_status_parse_refused(void) {
        static const char *const bad[] = {
                "",
                "Uid:\t1\t1\t1\t1\n",                       /* no Gid */
                "Gid:\t1\t1\t1\t1\n",                       /* no Uid */
                "Uid:\t1\t1\t1\nGid:\t1\t1\t1\t1\n",        /* three uids */
                "Uid:\t-1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",    /* negative */
                "Uid:\t1\t1\t1\t99999999999\nGid:\t1\t1\t1\t1\n", /* too big */
                "XUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",    /* not at a line start */
                "Uid:1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",       /* no separator */
        };
        ProcStatus st;

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
                g_assert_cmpint(proc_status_parse(bad[i], &st), ==, -EBADMSG);

        /* No Umask (before Linux 4.7), no Groups: fine, and said so. */
        g_assert_cmpint(proc_status_parse("Uid:\t5\t5\t5\t5\nGid:\t6\t6\t6\t6\n", &st), ==, 0);
        g_assert_false(st.has_umask);
        g_assert_cmpuint(st.n_groups, ==, 0);
        g_assert_true(proc_status_has_only_uid(&st, 5));
}

/* Groups beyond PROC_STATUS_GROUPS_MAX are cut, never wrapped or half read. */
static void test_status_many_groups(void) {
        g_autoptr(GString) s = g_string_new("Uid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:");
        ProcStatus st;

        for (unsigned i = 0; i < PROC_STATUS_GROUPS_MAX + 10; i++)
                g_string_append_printf(s, " %u", 100000 + i);
        g_string_append(s, "\n");
        g_assert_cmpint(proc_status_parse(s->str, &st), ==, 0);
        g_assert_cmpuint(st.n_groups, ==, PROC_STATUS_GROUPS_MAX);
        g_assert_cmpuint(st.groups[PROC_STATUS_GROUPS_MAX - 1], ==,
                         100000 + PROC_STATUS_GROUPS_MAX - 1);
}

/* The real file of this process agrees with the system calls. */
static void test_status_read_self(void) {
        ProcStatus st;
        gid_t groups[PROC_STATUS_GROUPS_MAX];
        int n = getgroups(G_N_ELEMENTS(groups), groups);

        g_assert_cmpint(proc_status_read(getpid(), &st), ==, 0);
        g_assert_cmpuint(st.uids[0], ==, getuid());
        g_assert_cmpuint(st.uids[1], ==, geteuid());
        g_assert_cmpuint(st.gids[0], ==, getgid());
        g_assert_cmpint(n, >=, 0);
        g_assert_cmpuint(st.n_groups, ==, (size_t) n);
        g_assert_true(st.has_umask);
        g_assert_cmpint(proc_status_read(0, &st), ==, -ESRCH);
}

static void test_stat_start_time(void) {
        /* A command name with spaces and ") " in it: fields count from the last ')'. */
        static const char stat_text[] =
                "4242 (evil) 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20) S 1 4242 4242 0 "
                "-1 4194560 1234 0 0 0 3 4 0 0 20 0 1 0 987654321 12345678 300 "
                "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        uint64_t t = 0;

        g_assert_cmpint(proc_stat_parse_start_time(stat_text, &t), ==, 0);
        g_assert_cmpuint(t, ==, 987654321);
        g_assert_cmpint(proc_stat_parse_start_time("4242 (x) S 1 2 3\n", &t), ==, -EBADMSG);
        g_assert_cmpint(proc_stat_parse_start_time("4242 x S 1 2 3\n", &t), ==, -EBADMSG);
        g_assert_cmpint(proc_stat_parse_start_time("", &t), ==, -EBADMSG);
        g_assert_cmpint(proc_stat_parse_start_time(
                                "1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 1\n", &t),
                        ==, -EBADMSG);
        g_assert_cmpuint(t, ==, 987654321); /* untouched on failure */
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/caller/cache/hit-and-miss", test_cache_hit_and_miss);
        g_test_add_func("/caller/cache/bound", test_cache_bound);
        g_test_add_func("/caller/cache/forget", test_cache_forget);
        g_test_add_func("/caller/cache/start-time", test_cache_start_time);
        g_test_add_func("/caller/process/self", test_check_process_self);
        g_test_add_func("/caller/process/refused", test_check_process_refused);
        g_test_add_func("/caller/process/exited", test_check_process_exited);
        g_test_add_func("/procfs/status/parse", test_status_parse);
        g_test_add_func("/procfs/status/refused", test_status_parse_refused);
        g_test_add_func("/procfs/status/many-groups", test_status_many_groups);
        g_test_add_func("/procfs/status/self", test_status_read_self);
        g_test_add_func("/procfs/stat/start-time", test_stat_start_time);
        return g_test_run();
}
