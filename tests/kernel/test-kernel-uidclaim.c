/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * uidclaim.h with real processes and real lock files: a uid a process runs as is skipped,
 * two claims held at once get two uids, a released claim's uid is free again, a full
 * range is -EBUSY. Needs root (a child takes the uid of the range it occupies).
 */
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel-util.h"
#include "uidclaim.h"

/* Far from any account: the top of the block systemd leaves unused. */
#define FIRST 2147000000u

static void test_claim(void) {
        g_autofree char *dir = g_dir_make_tmp("test-uidclaim-XXXXXX", NULL);
        UidClaim a = UID_CLAIM_NULL, b = UID_CLAIM_NULL, c = UID_CLAIM_NULL;
        UmError e = {};
        pid_t child;

        g_assert_nonnull(dir);
        child = ku_occupy_uid(FIRST);
        /* FIRST runs a process: the first claim takes FIRST + 1, the second FIRST + 2. */
        g_assert_cmpint(uid_claim(dir, "t-", FIRST, 3, 0, "the test", &a, &e), ==, 0);
        g_assert_cmpuint(a.uid, ==, FIRST + 1);
        g_assert_cmpint(uid_claim(dir, "t-", FIRST, 3, 0, "the test", &b, &e), ==, 0);
        g_assert_cmpuint(b.uid, ==, FIRST + 2);
        /* Full: the process and two claims. */
        g_assert_cmpint(uid_claim(dir, "t-", FIRST, 3, 0, "the test", &c, &e), ==, -EBUSY);
        g_assert_nonnull(strstr(e.message, "is in use"));
        e = (UmError) {};
        /* Released: free again. */
        uid_claim_release(&a);
        g_assert_cmpint(uid_claim(dir, "t-", FIRST, 3, 0, "the test", &c, &e), ==, 0);
        g_assert_cmpuint(c.uid, ==, FIRST + 1);
        /* The process gone: its uid is free too. */
        ku_occupy_end(child);
        uid_claim_release(&b);
        uid_claim_release(&c);
        g_assert_cmpint(uid_claim(dir, "t-", FIRST, 3, 0, "the test", &a, &e), ==, 0);
        g_assert_cmpuint(a.uid, ==, FIRST);
        uid_claim_release(&a);
        /* Nothing is left of the locks. */
        g_assert_cmpint(rmdir(dir), ==, 0);
}

/* A range /etc/subuid delegates to a user is that user's containers': skipped. The test
 * runs in a mount namespace of its own with a private copy bound over /etc/subuid. */
static void test_delegated(void) {
        g_autofree char *dir = g_dir_make_tmp("test-uidclaim-XXXXXX", NULL);
        g_autofree char *copy = g_build_filename(dir, "subuid", NULL);
        g_autofree char *orig = NULL, *text = NULL;
        UidClaim a = UID_CLAIM_NULL;
        UmError e = {};
        pid_t pid;
        int status;

        if (!g_file_get_contents("/etc/subuid", &orig, NULL, NULL)) {
                /* Nothing to bind the copy over; the parsing is the same either way. */
                g_test_skip("this system has no /etc/subuid");
                g_assert_cmpint(rmdir(dir), ==, 0);
                return;
        }
        text = g_strdup_printf("%someone:%u:2\n", strempty(orig), FIRST);
        g_assert_true(g_file_set_contents(copy, text, -1, NULL));
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                    mount(copy, "/etc/subuid", NULL, MS_BIND, NULL) < 0)
                        _exit(2);
                if (uid_claim(dir, "t-", FIRST, 3, 0, "the test", &a, &e) < 0 || a.uid != FIRST + 2)
                        _exit(1);
                uid_claim_release(&a);
                _exit(0);
        }
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_assert_cmpint(unlink(copy), ==, 0);
        g_assert_cmpint(rmdir(dir), ==, 0);
}

/*
 * A driver's claim (UID_CLAIM_NO_PROCESS_SCAN): a uid a process runs as is not skipped
 * (the kernel refuses the driver's exec there, sandbox.h); a uid whose lock a process
 * inherited is skipped for as long as that process lives, and free again once it is gone,
 * its lock file taken over; the lock's fd is read-only.
 */
static void test_no_scan(void) {
        g_autofree char *dir = g_dir_make_tmp("test-uidclaim-XXXXXX", NULL);
        g_autofree char *lock = NULL;
        UidClaim a = UID_CLAIM_NULL, b = UID_CLAIM_NULL;
        UmError e = {};
        pid_t child, holder;
        int p[2];
        char c;

        g_assert_nonnull(dir);
        child = ku_occupy_uid(FIRST);
        g_assert_cmpint(uid_claim(dir, "t-", FIRST, 3, UID_CLAIM_NO_PROCESS_SCAN, "the test",
                                  &a, &e), ==, 0);
        g_assert_cmpuint(a.uid, ==, FIRST);
        g_assert_cmpint(fcntl(a.lock_fd, F_GETFL) & O_ACCMODE, ==, O_RDONLY);
        ku_occupy_end(child);

        /* Handed over to a process that keeps the lock's fd: skipped while it lives. */
        g_assert_cmpint(pipe(p), ==, 0);
        holder = fork();
        g_assert_cmpint(holder, >=, 0);
        if (holder == 0) {
                close(p[1]);
                (void) !read(p[0], &c, 1); /* until the test closes its end */
                _exit(0);
        }
        close(p[0]);
        uid_claim_hand_over(&a);
        g_assert_cmpint(a.lock_fd, <, 0);
        g_assert_cmpint(uid_claim(dir, "t-", FIRST, 3, UID_CLAIM_NO_PROCESS_SCAN, "the test",
                                  &b, &e), ==, 0);
        g_assert_cmpuint(b.uid, ==, FIRST + 1);
        uid_claim_release(&b);
        close(p[1]);
        g_assert_cmpint(waitpid(holder, NULL, 0), ==, holder);
        /* The holder gone: the uid is free, its file taken over. */
        lock = g_strdup_printf("%s/t-%u", dir, FIRST);
        g_assert_true(g_file_test(lock, G_FILE_TEST_EXISTS));
        g_assert_cmpint(uid_claim(dir, "t-", FIRST, 3, UID_CLAIM_NO_PROCESS_SCAN, "the test",
                                  &a, &e), ==, 0);
        g_assert_cmpuint(a.uid, ==, FIRST);
        uid_claim_release(&a);
        g_assert_false(g_file_test(lock, G_FILE_TEST_EXISTS));
        g_assert_cmpint(rmdir(dir), ==, 0);
}

static void test_bad_ranges(void) {
        UidClaim a = UID_CLAIM_NULL;
        UmError e = {};

        g_assert_cmpint(uid_claim("/", "t-", 0, 3, 0, "the test", &a, &e), ==, -EINVAL);
        g_assert_cmpint(uid_claim("/", "t-", FIRST, 0, 0, "the test", &a, &e), ==, -EINVAL);
        g_assert_cmpint(uid_claim("/", "t-", 4294967000u, 1000, 0, "the test", &a, &e), ==, -EINVAL);
        g_assert_cmpint(uid_claim("/nonexistent", "t-", FIRST, 3, 0, "the test", &a, &e), ==, -ENOENT);
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root\n");
                return 0;
        }
        g_test_add_func("/uidclaim/claim", test_claim);
        g_test_add_func("/uidclaim/delegated", test_delegated);
        g_test_add_func("/uidclaim/no-scan", test_no_scan);
        g_test_add_func("/uidclaim/bad-ranges", test_bad_ranges);
        return g_test_run();
}
