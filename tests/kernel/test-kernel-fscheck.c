/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fscheck_run() on real loop devices: clean images pass, deliberately damaged ones are
 * refused with the checker's words, and the sandbox holds what fscheck.c promises. The
 * sandbox is probed by this very binary run as a fake checker ("--fake-checker probe"),
 * which reports what it can see and do as one line of key=value pairs and exits 3, so
 * the report arrives in the error sentence like a real checker's complaint.
 */
#include <fcntl.h>
#include <linux/loop.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>

#include "fscheck.h"
#include "kernel-util.h"
#include "loop.h"
#include "macro.h"

#define TEST_UID 61950
#define TEST_GID 61950

static char self_exe[4096];

/* ---- the fake checker (runs inside the sandbox) ------------------------------------ */

static unsigned long long status_hex(const char *key) {
        g_autofree char *s = NULL;
        const char *p;

        if (!g_file_get_contents("/proc/self/status", &s, NULL, NULL) || !(p = strstr(s, key)))
                return ~0ULL;
        return g_ascii_strtoull(p + strlen(key), NULL, 16);
}

static int open_errno(const char *path, int flags) {
        int fd = open(path, flags | O_CLOEXEC, 0644);

        if (fd < 0)
                return errno;
        close(fd);
        return 0;
}

static int count_procs(void) {
        g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
        const char *n;
        int k = 0;

        while (d && (n = g_dir_read_name(d)))
                k += g_ascii_isdigit(n[0]);
        return k;
}

/* argv: self --fake-checker probe <tmpname> <ns>... <device> */
static int fake_probe(int argc, char **argv) {
        const char *device = argv[argc - 1];
        g_autofree char *tmp = g_strdup_printf("/tmp/%s", argv[3]);
        g_autofree char *vartmp = g_strdup_printf("/var/tmp/%s", argv[3]);
        GString *shared = g_string_new(NULL);
        int fd, clr = 0, chg = 0;

        for (int i = 4; i < argc - 1; i++) {
                char link[128] = "";
                g_autofree char *p = g_strdup_printf("/proc/self/ns/%.*s",
                                                     (int) strcspn(argv[i], ":"), argv[i]);

                if (readlink(p, link, sizeof(link) - 1) < 0 || streq(link, argv[i]))
                        g_string_append_printf(shared, "%s%.*s", shared->len ? "," : "",
                                               (int) strcspn(argv[i], ":"), argv[i]);
        }
        fd = open(device, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                clr = ioctl(fd, LOOP_CLR_FD, 0) < 0 ? errno : 0;
                chg = ioctl(fd, LOOP_CHANGE_FD, 0) < 0 ? errno : 0;
                close(fd);
        }
        printf("uid=%u gid=%u ngroups=%d capeff=%llx capprm=%llx capinh=%llx capbnd=%llx "
               "capamb=%llx nnp=%d seccomp=%llu securebits=%x pid=%d procs=%d devro=%d "
               "devrw=%d loopclr=%d loopchg=%d hostdev=%d tmp=%d vartmp=%d shared=%s "
               "env=%s,%s,%d\n",
               getuid(), getgid(), getgroups(0, NULL), status_hex("CapEff:"),
               status_hex("CapPrm:"), status_hex("CapInh:"), status_hex("CapBnd:"),
               status_hex("CapAmb:"), prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
               status_hex("Seccomp:"), (unsigned) prctl(PR_GET_SECUREBITS, 0, 0, 0, 0), getpid(),
               count_procs(), fd >= 0 ? 0 : errno, open_errno(device, O_RDWR), clr, chg,
               open_errno("/dev/sda", O_RDONLY), open_errno(tmp, O_WRONLY | O_CREAT),
               open_errno(vartmp, O_WRONLY | O_CREAT), shared->len ? shared->str : "none",
               strempty(getenv("PATH")),
               strempty(getenv("LANG")), g_strv_length(environ));
        fflush(stdout);
        g_string_free(shared, TRUE);
        /* _exit: no sanitizer exit-time checks (they cannot stop the world in the sandbox). */
        _exit(3);
}

static int fake_checker(int argc, char **argv) {
        if (argc >= 5 && streq(argv[2], "probe"))
                return fake_probe(argc, argv);
        if (argc >= 3 && streq(argv[2], "crash")) {
                /* A real fault: the PID namespace's init ignores signals sent to itself. */
                static volatile uintptr_t nowhere;

                signal(SIGSEGV, SIG_DFL); /* not a sanitizer's handler */
                *(volatile int *) nowhere = 1;
        }
        return 99;
}

/* ---- helpers ----------------------------------------------------------------------- */

static const FsCheckSpec spec = { .uid = TEST_UID, .gid = TEST_GID,
                                  .timeout_usec = 120 * G_USEC_PER_SEC };

/* Processes running as the test uid: the sandbox must leave none. */
static int count_test_uid_processes(void) {
        g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
        const char *n;
        int k = 0;

        while ((n = g_dir_read_name(d))) {
                g_autofree char *p = g_strdup_printf("/proc/%s", n);
                struct stat st;

                if (g_ascii_isdigit(n[0]) && stat(p, &st) == 0 && st.st_uid == TEST_UID)
                        k++;
        }
        return k;
}

/* Checks the image file itself (fscheck_run_file(), as for erofs mounted from its file)
 * instead of a loop device when set. */
static bool check_as_file;

/* Attaches image (read-write unless read_only) and runs check with fstype or checker. */
static int check_image(const char *image, const char *fstype, const FsChecker *checker,
                       const FsCheckSpec *s, UmError *e) {
        _cleanup_close_ int image_fd = open(image, O_RDWR | O_CLOEXEC), loop_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        int r;

        g_assert_cmpint(image_fd, >=, 0);
        if (check_as_file) {
                int loops = ku_loops_on_test_images();

                r = fscheck_run_file(image_fd, fstype, s, e);
                ku_note("%s (file): %d %s", fstype, r, e->message);
                g_assert_cmpint(count_test_uid_processes(), ==, 0);
                g_assert_cmpint(ku_loops_on_test_images(), ==, loops);
                return r;
        }
        g_assert_cmpint(loop_attach(image_fd, false, &loop_fd, &path, e), ==, 0);
        if (checker)
                r = fscheck_run_checker(loop_fd, checker, s, e);
        else
                r = fscheck_run(loop_fd, fstype, s, e);
        ku_note("%s: %d %s", fstype ? fstype : checker->path, r, e->message);
        g_assert_cmpint(count_test_uid_processes(), ==, 0);
        return r;
}

static void run_tool(const char *const *argv) {
        g_autoptr(GError) err = NULL;
        int status;

        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL |
                                   G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                                   &status, &err));
        g_assert_no_error(err);
        g_assert_true(g_spawn_check_wait_status(status, NULL));
}

static void write_at(const char *path, off_t off, const void *data, size_t n) {
        _cleanup_close_ int fd = open(path, O_RDWR | O_CLOEXEC);

        g_assert_cmpint(pwrite(fd, data, n, off), ==, (ssize_t) n);
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_clean(const char *fstype) {
        UmError e = {};

        g_assert_true(fscheck_available(fstype));
        g_assert_cmpint(check_image(ku_image(fstype), fstype, NULL, &spec, &e), ==, 0);
}

/* A copy of the image with one metadata field wrong, found by the checker. */
static void test_damaged(const char *fstype) {
        g_autofree char *copy = g_strdup_printf("%s/damaged-%s.img", ku_dir(), fstype);
        const char *expect;
        UmError e = {};

        run_tool((const char *const[]) { "/bin/cp", "--sparse=always", ku_image(fstype), copy,
                                         NULL });
        if (streq(fstype, "ext4")) {
                run_tool((const char *const[]) { "/usr/sbin/debugfs", "-w", "-R",
                                                 "sif /hello.txt links_count 7", copy, NULL });
                expect = "ref count is 7, should be 1";
        } else if (streq(fstype, "xfs")) {
                run_tool((const char *const[]) { "/usr/sbin/xfs_db", "-x", "-c", "inode 128",
                                                 "-c", "write core.nlinkv2 9", copy, NULL });
                expect = "would have reset inode 128 nlinks from 9 to";
        } else if (streq(fstype, "btrfs")) {
                /* Garbage over the primary superblock's fields (it starts at 64 KiB). */
                write_at(copy, 65536 + 0x80, "\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
                expect = "superblock checksum mismatch";
        } else {
                /* The root inode sits in the superblock's block: its checksum no longer
                 * matches, which fsck.erofs 1.5 reports but exits 0 for. */
                uint16_t nid;
                _cleanup_close_ int fd = open(copy, O_RDONLY | O_CLOEXEC);

                g_assert_cmpint(pread(fd, &nid, 2, 1024 + 14), ==, 2);
                write_at(copy, (off_t) nid * 32 + 8, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
                expect = "chksum doesn't match";
        }

        g_assert_cmpint(check_image(copy, fstype, NULL, &spec, &e), ==, -EUCLEAN);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(e.message, fscheck_find(fstype)->path));
        g_assert_nonnull(strstr(e.message, "found damage"));
        g_assert_nonnull(strstr(e.message, expect));
        g_assert_cmpint(unlink(copy), ==, 0);
}

static char *own_ns(const char *name) {
        g_autofree char *p = g_strdup_printf("/proc/self/ns/%s", name);
        char link[128] = "";

        g_assert_cmpint(readlink(p, link, sizeof(link) - 1), >, 0);
        return g_strdup(link);
}

/* What a compromised checker can see and do. */
static void test_sandbox(const char *arg) {
        g_autofree char *tmpname = g_strdup_printf("fscheck-probe-%d", getpid());
        g_autofree char *hosttmp = g_strdup_printf("/tmp/%s", tmpname);
        g_autofree char *mnt = own_ns("mnt"), *net = own_ns("net"), *ipc = own_ns("ipc");
        g_autofree char *uts = own_ns("uts"), *pid = own_ns("pid_for_children");
        g_autofree char *cg = own_ns("cgroup");
        g_autofree char *msg = NULL;
        const char *argv[] = { "fake", "--fake-checker", "probe", tmpname, mnt, net, ipc,
                               uts, pid, cg, NULL };
        FsChecker fake = { .path = self_exe, .argv = argv };
        UmError e = {};

        g_assert_cmpint(check_image(ku_image("ext4"), NULL, &fake, &spec, &e), ==, -EUCLEAN);
        g_assert_nonnull(strstr(e.message, "(exit status 3): uid="));
        msg = g_strdup_printf(" %s", strstr(e.message, "uid="));
        ku_assert_probe(msg, "uid", "61950");
        ku_assert_probe(msg, "gid", "61950");
        ku_assert_probe(msg, "ngroups", "0");
        ku_assert_probe(msg, "capeff", "0");
        ku_assert_probe(msg, "capprm", "0");
        ku_assert_probe(msg, "capinh", "0");
        ku_assert_probe(msg, "capbnd", "0");
        ku_assert_probe(msg, "capamb", "0");
        ku_assert_probe(msg, "nnp", "1");
        ku_assert_probe(msg, "seccomp", "2");
        /* NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE and all locks; KEEP_CAPS off. */
        ku_assert_probe(msg, "securebits", "ef");
        ku_assert_probe(msg, "pid", "1");
        ku_assert_probe(msg, "procs", "1");  /* no host process visible */
        ku_assert_probe(msg, "shared", "none"); /* every namespace differs from the test's */
        ku_assert_probe(msg, "devro", "0");  /* the device, read-only */
        ku_assert_probe(msg, "devrw", "13"); /* EACCES: not for writing */
        ku_assert_probe(msg, "loopclr", "1"); /* EPERM from the seccomp filter */
        ku_assert_probe(msg, "loopchg", "1");
        ku_assert_probe(msg, "hostdev", "2"); /* ENOENT: no other device node */
        ku_assert_probe(msg, "tmp", "0");    /* a private /tmp ... */
        ku_assert_probe(msg, "vartmp", "30"); /* EROFS: the rest is read-only */
        ku_assert_probe(msg, "env", "/usr/sbin:/usr/bin:/sbin:/bin,C,2");
        g_assert_cmpint(access(hosttmp, F_OK), <, 0); /* ... not the host's */
}

/* A checker that hangs (and forks) is killed with its whole namespace in time. */
static void test_timeout(const char *arg) {
        const char *argv[] = { "sh", "-c", "sleep 1000 & exec sleep 1000", "sh", NULL };
        FsChecker hang = { .path = "/bin/sh", .argv = argv };
        FsCheckSpec s = spec;
        UmError e = {};
        gint64 start;

        s.timeout_usec = 500 * 1000;
        start = g_get_monotonic_time();
        g_assert_cmpint(check_image(ku_image("ext4"), NULL, &hang, &s, &e), ==, -ETIMEDOUT);
        g_assert_cmpint(g_get_monotonic_time() - start, <, 5 * G_USEC_PER_SEC);
        g_assert_nonnull(strstr(e.message, "did not finish within 500 ms"));
}

/* Exit status and signal are named; the output is escaped; chatter is left out. */
static void test_verdicts(const char *arg) {
        const char *argv[] = { "sh", "-c",
                               "echo 'Pass 1: noise'; printf 'bad \\033[31m\\n'; exit 4", "sh",
                               NULL };
        const char *quiet[] = { "Pass ", NULL };
        FsChecker complain = { .path = "/bin/sh", .argv = argv, .quiet_prefixes = quiet };
        const char *crash_argv[] = { "fake", "--fake-checker", "crash", NULL };
        FsChecker crash = { .path = self_exe, .argv = crash_argv };
        const char *ok_argv[] = { "sh", "-c", "echo '<E> complaint'", "sh", NULL };
        const char *marks[] = { "<E>", NULL };
        FsChecker ok = { .path = "/bin/sh", .argv = ok_argv };
        FsChecker marked = { .path = "/bin/sh", .argv = ok_argv, .damage_prefixes = marks };
        UmError e = {};

        g_assert_cmpint(check_image(ku_image("ext4"), NULL, &complain, &spec, &e), ==, -EUCLEAN);
        g_assert_cmpstr(e.message, ==,
                        "The filesystem check by /bin/sh found damage (exit status 4): "
                        "bad \\x1b[31m");
        e = (UmError) {};
        g_assert_cmpint(check_image(ku_image("ext4"), NULL, &crash, &spec, &e), ==, -EUCLEAN);
        g_assert_nonnull(strstr(e.message, "(killed by signal 11)"));
        e = (UmError) {};
        g_assert_cmpint(check_image(ku_image("ext4"), NULL, &ok, &spec, &e), ==, 0);
        g_assert_cmpint(check_image(ku_image("ext4"), NULL, &marked, &spec, &e), ==, -EUCLEAN);
        g_assert_nonnull(strstr(e.message, "(exit status 0): <E> complaint"));
}

static void test_refusals(const char *arg) {
        _cleanup_close_ int fd = open(ku_image("ext4"), O_RDONLY | O_CLOEXEC);
        FsCheckSpec root = spec, root_group = spec, no_timeout = spec;
        UmError e = {};

        root.uid = 0;
        root_group.gid = 0;
        no_timeout.timeout_usec = 0;
        g_assert_cmpint(check_image(ku_image("ext4"), "ext4", NULL, &root, &e), ==, -EINVAL);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_ARGUMENT);
        g_assert_cmpint(check_image(ku_image("ext4"), "ext4", NULL, &root_group, &e), ==, -EINVAL);
        g_assert_cmpint(check_image(ku_image("ext4"), "ext4", NULL, &no_timeout, &e), ==, -EINVAL);
        g_assert_cmpint(fscheck_run(fd, "ext4", &spec, &e), ==, -ENOTBLK);
        for (const char *const *t = (const char *const[]) { "squashfs", "iso9660", "udf",
                                                            "nonsense", NULL };
             *t; t++) {
                g_assert_false(fscheck_available(*t));
                g_assert_cmpint(check_image(ku_image("ext4"), *t, NULL, &spec, &e), ==, -ENOENT);
        }
        g_assert_false(fscheck_available(NULL));
}

/*
 * With the daemon's capabilities (main.c's kept_caps) plus CAP_MKNOD and CAP_SETPCAP the
 * check works; without CAP_SETPCAP the sandbox is not built, and that is not a verdict.
 */
static void with_caps(bool setpcap, void *data) {
        cap_value_t caps[] = { CAP_SYS_ADMIN,   CAP_SYS_CHROOT, CAP_SYS_PTRACE,
                               CAP_DAC_OVERRIDE, CAP_CHOWN,      CAP_SETUID,
                               CAP_SETGID,      CAP_MKNOD,      CAP_SETPCAP };
        cap_t c = cap_init();
        UmError e = {};
        int r;

        g_assert_cmpint(cap_set_flag(c, CAP_PERMITTED, ELEMENTSOF(caps) - !setpcap, caps,
                                     CAP_SET), ==, 0);
        g_assert_cmpint(cap_set_flag(c, CAP_EFFECTIVE, ELEMENTSOF(caps) - !setpcap, caps,
                                     CAP_SET), ==, 0);
        g_assert_cmpint(cap_set_proc(c), ==, 0);
        cap_free(c);
        r = check_image(ku_image("ext4"), "ext4", NULL, &spec, &e);
        if (setpcap)
                g_assert_cmpint(r, ==, 0);
        else {
                g_assert_cmpint(r, ==, -EPERM);
                g_assert_nonnull(strstr(e.message, "dropping privileges"));
        }
}

static void with_daemon_caps(void *data) {
        with_caps(true, data);
}

static void without_setpcap(void *data) {
        with_caps(false, data);
}

static void test_daemon_caps(const char *arg) {
        ku_wait_ok(ku_fork(with_daemon_caps, NULL));
        ku_wait_ok(ku_fork(without_setpcap, NULL));
}

/* The same checks on the image file, as an erofs image mounted without a loop device gets:
 * a clean image passes, a damaged one is refused, and an image of another owner that only
 * its owner may read is read by the checker through the id-mapped bind mount. */
static void test_file(const char *fstype) {
        g_autofree char *copy = g_strdup_printf("%s/private-%s.img", ku_dir(), fstype);
        UmError e = {};
        struct stat before, after;

        check_as_file = true;
        test_clean(fstype);
        test_damaged(fstype);
        run_tool((const char *const[]) { "/bin/cp", "--sparse=always", ku_image(fstype), copy,
                                         NULL });
        g_assert_cmpint(chown(copy, 4242, 4242), ==, 0);
        g_assert_cmpint(chmod(copy, 0400), ==, 0);
        g_assert_cmpint(stat(copy, &before), ==, 0);
        g_assert_cmpint(check_image(copy, fstype, NULL, &spec, &e), ==, 0);
        g_assert_cmpint(stat(copy, &after), ==, 0);
        g_assert_cmpint(after.st_uid, ==, 4242);
        g_assert_cmpint(after.st_mode, ==, before.st_mode);
        g_assert_cmpint(after.st_mtim.tv_nsec, ==, before.st_mtim.tv_nsec);
        /* Not readable by its owner: not given to the check (the loop device then). */
        g_assert_cmpint(chmod(copy, 0040), ==, 0);
        g_assert_cmpint(check_image(copy, fstype, NULL, &spec, &e), ==, -EOPNOTSUPP);
        g_assert_cmpint(unlink(copy), ==, 0);
        check_as_file = false;
}

static void add_per_fs(const char *prefix, void (*body)(const char *)) {
        static const char *const types[] = { "ext4", "xfs", "btrfs", "erofs" };

        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                g_autofree char *path = g_strdup_printf("%s/%s", prefix, types[i]);

                ku_add(path, body, types[i], types[i]);
        }
}

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
        if (!g_test_subprocess())
                g_test_set_nonfatal_assertions();
        ku_images_setup();

        add_per_fs("/fscheck/clean", test_clean);
        add_per_fs("/fscheck/damaged", test_damaged);
        ku_add("/fscheck/file/erofs", test_file, "erofs", "erofs");
        ku_add("/fscheck/sandbox", test_sandbox, NULL, "ext4");
        ku_add("/fscheck/timeout", test_timeout, NULL, "ext4");
        ku_add("/fscheck/verdicts", test_verdicts, NULL, "ext4");
        ku_add("/fscheck/refusals", test_refusals, NULL, "ext4");
        ku_add("/fscheck/daemon-caps", test_daemon_caps, NULL, "ext4");

        r = g_test_run();
        ku_images_teardown();
        return r;
}
