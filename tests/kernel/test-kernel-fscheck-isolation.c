/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How the fsck sandbox keeps checkers apart (docs/security.md 39), on real loop devices:
 *
 *  - namespaces: a compromised checker cannot make new namespaces. Unprivileged as it is,
 *    it could otherwise unshare(CLONE_NEWUSER) and be root in a user namespace of its own,
 *    with the kernel's mount and netfilter code within reach. The filter refuses unshare()
 *    and clone() with namespace flags and setns(); clone3() (whose flags seccomp cannot
 *    see) gets ENOSYS, and the C library's fork() and posix_spawn() still work.
 *  - uids: with a uid range (FsCheckSpec.uid_count), checks that run at the same time run
 *    as distinct uids; a uid that a process (or an account) uses is skipped; when every
 *    uid is taken the check is refused (-EBUSY); the lock files go with the checks.
 *
 * The checker is this binary run as a fake one ("--fake-checker ..."), which reports in
 * its output (the error sentence, as a real checker's complaint) and exits 3.
 */
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sched.h> /* struct clone_args */

#include "fscheck.h"
#include "kernel-util.h"
#include "loop.h"
#include "macro.h"

#define RANGE_UID 61960 /* the first uid of the test ranges; no account has it */

static char self_dir[64], self_exe[4096], release_path[4096];

/* ---- the fake checkers (run inside the sandbox) -------------------------------------- */

static int errno_of(long r) {
        return r < 0 ? errno : 0;
}

/* What a compromised checker tries: new namespaces, and still forking. */
static _noreturn_ void fake_namespaces(void) {
        struct clone_args args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
        extern char **environ;
        char *const true_argv[] = { (char *) "true", NULL };
        int userns, mntns, netns, clone_userns, clone3_plain, setns_r, fork_r, spawn_r;
        pid_t pid;
        int fd;

        userns = errno_of(unshare(CLONE_NEWUSER));
        mntns = errno_of(unshare(CLONE_NEWUSER | CLONE_NEWNS));
        netns = errno_of(unshare(CLONE_NEWNET));
        pid = (pid_t) syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, NULL, NULL, 0);
        if (pid == 0)
                _exit(0);
        clone_userns = pid < 0 ? errno : 0;
        if (pid > 0)
                (void) waitpid(pid, NULL, 0);
        args.flags = 0;
        pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        if (pid == 0)
                _exit(0);
        clone3_plain = pid < 0 ? errno : 0;
        if (pid > 0)
                (void) waitpid(pid, NULL, 0);
        fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        setns_r = fd < 0 ? -1 : errno_of(setns(fd, CLONE_NEWUSER));
        pid = fork();
        if (pid == 0)
                _exit(0);
        fork_r = pid < 0 ? errno : 0;
        if (pid > 0)
                (void) waitpid(pid, NULL, 0);
        spawn_r = posix_spawn(&pid, "/bin/true", NULL, NULL, true_argv, environ);
        if (spawn_r == 0)
                (void) waitpid(pid, NULL, 0);
        printf("userns=%d mntns=%d netns=%d clone-userns=%d clone3=%d setns=%d fork=%d "
               "spawn=%d\n",
               userns, mntns, netns, clone_userns, clone3_plain, setns_r, fork_r, spawn_r);
        fflush(stdout);
        _exit(3);
}

/* Says its uid and gid; with a path, first waits until that file exists. */
static _noreturn_ void fake_uid(const char *wait_for) {
        while (wait_for && access(wait_for, F_OK) < 0)
                usleep(10 * 1000);
        printf("uid=%u gid=%u\n", (unsigned) getuid(), (unsigned) getgid());
        fflush(stdout);
        _exit(3);
}

static int fake_checker(int argc, char **argv) {
        if (argc >= 4 && streq(argv[2], "namespaces"))
                fake_namespaces();
        if (argc >= 4 && streq(argv[2], "uid"))
                fake_uid(NULL);
        if (argc >= 5 && streq(argv[2], "wait"))
                fake_uid(argv[3]);
        return 99;
}

/* ---- helpers ------------------------------------------------------------------------- */

/* Runs checker on a loop device of the ext4 test image; the error sentence is returned. */
static int check(const FsChecker *checker, const FsCheckSpec *spec, char **ret_message) {
        _cleanup_close_ int image_fd = open(ku_image("ext4"), O_RDWR | O_CLOEXEC);
        _cleanup_close_ int loop_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        UmError e = {};
        int r;

        g_assert_cmpint(image_fd, >=, 0);
        g_assert_cmpint(loop_attach(image_fd, false, &loop_fd, &path, &e), ==, 0);
        r = fscheck_run_checker(loop_fd, checker, spec, &e);
        ku_note("%s: %d %s", checker->argv[2], r, e.message);
        *ret_message = g_strdup(e.message);
        return r;
}

static char *errno_text(int e) {
        return g_strdup_printf("%d", e);
}

/* 1 when a process runs as uid, looked up the way an administrator would. */
static bool uid_runs(uid_t uid) {
        g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
        const char *n;

        while ((n = g_dir_read_name(d))) {
                g_autofree char *p = g_strdup_printf("/proc/%s/status", n);
                g_autofree char *s = NULL, *want = g_strdup_printf("\nUid:\t%u\t", uid);

                if (g_ascii_isdigit(n[0]) && g_file_get_contents(p, &s, NULL, NULL) &&
                    strstr(s, want))
                        return true;
        }
        return false;
}

static void await_uid_runs(uid_t uid) {
        gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

        while (!uid_runs(uid)) {
                g_assert_cmpint(g_get_monotonic_time(), <, end);
                g_usleep(10 * 1000);
        }
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_namespaces(const char *arg) {
        const char *argv[] = { "fake", "--fake-checker", "namespaces", "-", NULL };
        const FsChecker fake = { .path = self_exe, .argv = argv };
        const FsCheckSpec spec = { .uid = RANGE_UID, .gid = RANGE_UID,
                                   .timeout_usec = 60 * G_USEC_PER_SEC };
        g_autofree char *msg = NULL, *eperm = errno_text(EPERM), *enosys = errno_text(ENOSYS);

        g_assert_cmpint(check(&fake, &spec, &msg), ==, -EUCLEAN);
        g_assert_nonnull(strstr(msg, "(exit status 3): userns="));
        ku_assert_probe(msg, "userns", eperm);
        ku_assert_probe(msg, "mntns", eperm);
        ku_assert_probe(msg, "netns", eperm);
        ku_assert_probe(msg, "clone-userns", eperm);
        ku_assert_probe(msg, "clone3", enosys);
        ku_assert_probe(msg, "setns", eperm);
        /* What checkers do need still works: fork(), and posix_spawn() (which tries clone3()
         * first and falls back to clone()). */
        ku_assert_probe(msg, "fork", "0");
        ku_assert_probe(msg, "spawn", "0");
}

/* A process of the test that runs as uid until its pipe closes. */
static pid_t hold_uid(uid_t uid, int *ret_release_fd) {
        int p[2];
        pid_t pid;

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                char c;

                close(p[1]);
                if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(1);
                (void) !read(p[0], &c, 1);
                _exit(0);
        }
        close(p[0]);
        *ret_release_fd = p[1];
        return pid;
}

static void reap(pid_t pid) {
        int status;

        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

/* Runs the waiting checker in a child process; its message comes back on *ret_fd. */
static pid_t check_in_child(const FsCheckSpec *spec, int *ret_fd) {
        int p[2];
        pid_t pid;

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                const char *argv[] = { "fake", "--fake-checker", "wait", release_path, "-",
                                       NULL };
                const FsChecker waits = { .path = self_exe, .argv = argv };
                g_autofree char *msg = NULL;

                close(p[0]);
                if (check(&waits, spec, &msg) != -EUCLEAN)
                        _exit(1);
                (void) !write(p[1], msg, strlen(msg));
                _exit(0);
        }
        close(p[1]);
        *ret_fd = p[0];
        return pid;
}

static char *read_all(int fd) {
        GString *s = g_string_new(NULL);
        char buf[1024];
        ssize_t n;

        while ((n = read(fd, buf, sizeof(buf))) > 0)
                g_string_append_len(s, buf, n);
        close(fd);
        return g_string_free(s, false);
}

/* Two checks at the same time run as two uids; a uid in use is skipped; none left: EBUSY. */
static void test_distinct_uids(const char *arg) {
        g_autofree char *locks = g_build_filename(ku_dir(), "uid-locks", NULL);
        const char *argv[] = { "fake", "--fake-checker", "uid", "-", NULL };
        const FsChecker says_uid = { .path = self_exe, .argv = argv };
        FsCheckSpec spec = { .uid = RANGE_UID, .gid = RANGE_UID,
                             .timeout_usec = 60 * G_USEC_PER_SEC, .uid_count = 3,
                             .lock_dir = locks };
        g_autofree char *first = NULL, *second = NULL, *third = NULL, *busy = NULL;
        g_autofree char *alone = NULL;
        int first_fd, holder_fd;
        pid_t checker, holder;

        g_assert_cmpint(mkdir(locks, 0700), ==, 0);
        (void) unlink(release_path);

        /* A check that keeps running, as RANGE_UID: the first free uid. */
        checker = check_in_child(&spec, &first_fd);
        await_uid_runs(RANGE_UID);
        /* Meanwhile another check: not RANGE_UID. */
        g_assert_cmpint(check(&says_uid, &spec, &second), ==, -EUCLEAN);
        ku_assert_probe(second, "uid", "61961");
        ku_assert_probe(second, "gid", "61961");
        /* A process of somebody else runs as RANGE_UID + 1: that uid is skipped. */
        holder = hold_uid(RANGE_UID + 1, &holder_fd);
        await_uid_runs(RANGE_UID + 1);
        g_assert_cmpint(check(&says_uid, &spec, &third), ==, -EUCLEAN);
        ku_assert_probe(third, "uid", "61962");
        /* Only two uids: one with a running check, one with a process. */
        spec.uid_count = 2;
        g_assert_cmpint(check(&says_uid, &spec, &busy), ==, -EBUSY);
        g_assert_nonnull(strstr(busy, "(61960 to 61961) is in use"));

        close(holder_fd);
        reap(holder);
        g_assert_true(g_file_set_contents(release_path, "", 0, NULL));
        first = read_all(first_fd);
        reap(checker);
        ku_assert_probe(first, "uid", "61960");
        (void) unlink(release_path);

        /* Alone again: the first uid; and no lock file stays. */
        g_assert_cmpint(check(&says_uid, &spec, &alone), ==, -EUCLEAN);
        ku_assert_probe(alone, "uid", "61960");
        g_assert_cmpint(rmdir(locks), ==, 0);
}

/* Accounts are skipped too: 65534 is nobody's. Without a range, the one uid as before. */
static void test_account_skipped(const char *arg) {
        g_autofree char *locks = g_build_filename(ku_dir(), "uid-locks", NULL);
        const char *argv[] = { "fake", "--fake-checker", "uid", "-", NULL };
        const FsChecker says_uid = { .path = self_exe, .argv = argv };
        FsCheckSpec spec = { .uid = 65534, .gid = 65534, .timeout_usec = 60 * G_USEC_PER_SEC,
                             .uid_count = 2, .lock_dir = locks };
        g_autofree char *ranged = NULL, *single = NULL;
        UmError e = {};

        if (!getpwuid(65534) || getpwuid(65535) || getgrgid(65535)) {
                g_test_skip("needs an account with uid 65534 and none with 65535");
                return;
        }
        g_assert_cmpint(mkdir(locks, 0700), ==, 0);
        g_assert_cmpint(check(&says_uid, &spec, &ranged), ==, -EUCLEAN);
        ku_assert_probe(ranged, "uid", "65535");
        spec.uid_count = 0;
        g_assert_cmpint(check(&says_uid, &spec, &single), ==, -EUCLEAN);
        ku_assert_probe(single, "uid", "65534");
        g_assert_cmpint(rmdir(locks), ==, 0);

        /* Ranges that cannot work are refused before anything runs. */
        spec = (FsCheckSpec) { .uid = 4294967294u, .gid = 1, .timeout_usec = 1,
                               .uid_count = 2, .lock_dir = "/run" };
        g_assert_cmpint(fscheck_run_checker(-1, &says_uid, &spec, &e), ==, -EINVAL);
        spec = (FsCheckSpec) { .uid = 1000, .gid = 1, .timeout_usec = 1, .uid_count = 2,
                               .lock_dir = "relative" };
        g_assert_cmpint(fscheck_run_checker(-1, &says_uid, &spec, &e), ==, -EINVAL);
        spec.lock_dir = "/run";
        spec.uid_count = 65537;
        g_assert_cmpint(fscheck_run_checker(-1, &says_uid, &spec, &e), ==, -EINVAL);
}

/* ---- main ---------------------------------------------------------------------------- */

int main(int argc, char **argv) {
        int r;

        if (argc >= 3 && streq(argv[1], "--fake-checker"))
                return fake_checker(argc, argv);

        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        snprintf(self_exe, sizeof(self_exe), "%s", ku_self_copy());
        snprintf(self_dir, sizeof(self_dir), "%s", ku_self_copy());
        *strrchr(self_dir, '/') = 0;
        snprintf(release_path, sizeof(release_path), "%s/release", self_dir);
        if (!g_test_subprocess())
                g_test_set_nonfatal_assertions();
        ku_images_setup();

        ku_add("/fscheck-isolation/namespaces", test_namespaces, NULL, "ext4");
        ku_add("/fscheck-isolation/distinct-uids", test_distinct_uids, NULL, "ext4");
        ku_add("/fscheck-isolation/account-skipped", test_account_skipped, NULL, "ext4");

        r = g_test_run();
        ku_images_teardown();
        return r;
}
