/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A compromised userspace driver, simulated: this test binary started by fusedriver_mount()
 * as the "driver", in the real sandbox with the real seccomp filter, limits and uid, runs
 * what an attacker who owns the driver after a parser bug would run, and reports what it
 * got (the report comes back in fusedriver_mount()'s error: the fake exits with status 3).
 * Also the uid claim that keeps drivers of two users apart, under concurrency and with
 * the uid in use, and the drivers table that must not adopt a process that reused a
 * driver's pid.
 */
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drivertrack.h"
#include "fusedriver.h"
#include "kernel-compat.h"
#include "kernel-util.h"
#include "macro.h"
#include "procfs.h"
#include "uidclaim.h"

#define DRIVER_UID 61998
#define TIMEOUT_USEC (20 * G_USEC_PER_SEC)
/* A range of uids no account and no process uses, for the claim tests. */
#define CLAIM_FIRST 1879990000u

static char shim_path[4096];
static char *ext4_image;

/* ---- the fake driver ------------------------------------------------------------------- */

static const char *err_name(int r) {
        return r < 0 ? strerrorname_np(errno) : "ok";
}

static int connect_unix(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

        if (fd < 0)
                return -1;
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        r = connect(fd, (struct sockaddr *) &sa, sizeof(sa));
        close(fd);
        return r;
}

/* Writing outside, seeing and signalling others, the bus, the network. */
static void fake_escape(const char *dir) {
        g_autofree char *vartmp = g_strdup_printf("%s/written", dir);
        g_autofree char *hostsock = g_strdup_printf("%s/sock", dir);
        struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(53),
                                  .sin_addr.s_addr = htonl(0x01010101) };
        static char block[64 << 10];
        int procs = 0, fd, r;
        struct dirent *de;
        DIR *d;

        fd = open("/etc/um-attack", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        printf("etc=%s ", err_name(fd));
        fd = open(vartmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        printf("vartmp=%s ", err_name(fd));
        r = mknod("/tmp/mem", S_IFCHR | 0666, makedev(1, 1));
        printf("mknod=%s ", err_name(r));
        r = mkdir("/dev/shm", 0777);
        printf("dev=%s ", err_name(r));
        fd = open("/tmp/fill", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        r = 0;
        for (int i = 0; fd >= 0 && i < 64 && r >= 0; i++)
                r = (int) write(fd, block, sizeof(block));
        printf("tmp=%s ", err_name(r));
        d = opendir("/proc");
        while (d && (de = readdir(d)))
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
                        procs++;
        if (d)
                closedir(d);
        printf("procs=%d ", procs);
        r = kill(-1, SIGKILL);
        printf("kill=%s ", err_name(r));
        r = connect_unix("/run/dbus/system_bus_socket");
        printf("bus=%s ", err_name(r));
        r = connect_unix("/var/run/dbus/system_bus_socket");
        printf("varbus=%s ", err_name(r));
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        r = fd < 0 ? -1 : connect(fd, (struct sockaddr *) &in, sizeof(in));
        printf("net=%s ", err_name(r));
        r = connect_unix(hostsock);
        printf("hostsock=%s ", err_name(r));
        /* A key in its uid's keyring would outlive it, for the next driver of that uid. */
        r = (int) syscall(SYS_add_key, "user", "um-attack", "x", (size_t) 1, -4 /* user */);
        printf("keyring=%s\n", err_name(r));
}

static void *thread_main(void *unused) {
        return NULL;
}

/* Namespaces, mounts, ids, other ABIs, io_uring, processes. */
static void fake_ns(void) {
        struct clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
        int fd, r;

        r = unshare(CLONE_NEWUSER);
        printf("userns=%s ", err_name(r));
        r = unshare(CLONE_NEWNS);
        printf("mntns=%s ", err_name(r));
        r = (int) syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
        if (r == 0)
                _exit(0);
        printf("clone=%s ", err_name(r));
        r = (int) syscall(SYS_clone3, &ca, sizeof(ca));
        if (r == 0)
                _exit(0);
        printf("clone3=%s ", err_name(r));
        fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        r = setns(fd, 0);
        printf("setns=%s ", err_name(r));
        r = (int) syscall(SYS_fsopen, "tmpfs", 0);
        printf("fsopen=%s ", err_name(r));
        r = (int) syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL);
        printf("mount=%s ", err_name(r));
#ifdef __x86_64__
        r = (int) syscall(0x40000000 | SYS_unshare, CLONE_NEWUSER);
        printf("x32=%s ", err_name(r));
#else
        printf("x32=ENOSYS ");
#endif
        r = setresuid(0, 0, 0);
        printf("setuid=%s ", err_name(r));
        r = ioctl(4, 0x4C01 /* LOOP_CLR_FD */);
        printf("loopioctl=%s ", err_name(r));
        /* io_uring would run system calls (sockets, opens) past the filter. */
        r = (int) syscall(SYS_io_uring_setup, 4, &(char[120]) {});
        printf("uring=%s ", err_name(r));
        /* One process: no fork, vfork or clone of a process; threads are fine. */
        r = (int) syscall(SYS_fork);
        if (r == 0)
                _exit(0);
        printf("fork=%s ", err_name(r));
        r = (int) syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
        if (r == 0)
                _exit(0);
        printf("procclone=%s ", err_name(r));
        pthread_t t;
        r = pthread_create(&t, NULL, thread_main, NULL);
        if (r == 0)
                (void) pthread_join(t, NULL);
        printf("thread=%s\n", r == 0 ? "ok" : strerrorname_np(r));
}

/* Memory, processes, fds. */
static void fake_limits(void) {
        void *p = mmap(NULL, (size_t) 3 << 30, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        int forks = 0, fds = 0, r;
        struct rlimit core;

        printf("mmap3g=%s ", p == MAP_FAILED ? strerrorname_np(errno) : "ok");
        for (;;) {
                pid_t pid = fork();

                if (pid == 0) {
                        pause();
                        _exit(0);
                }
                if (pid < 0)
                        break;
                if (++forks > 1000)
                        break;
        }
        printf("forks=%d(%s) ", forks, strerrorname_np(errno));
        while (fds < 1000 && open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0)
                fds++;
        printf("fds=%d(%s) ", fds, strerrorname_np(errno));
        r = getrlimit(RLIMIT_CORE, &core);
        printf("core=%llu ", r < 0 ? 99ULL : (unsigned long long) core.rlim_max);
        r = mlock(&forks, sizeof(forks));
        printf("mlock=%s\n", err_name(r));
        /* Exiting, the namespace's init takes every child with it. */
}

static int fake_driver(const char *mode, const char *dir) {
        if (streq(mode, "escape"))
                fake_escape(dir);
        else if (streq(mode, "ns"))
                fake_ns();
        else if (streq(mode, "limits"))
                fake_limits();
        fflush(stdout);
        return 3;
}

/* Runs the fake driver in mode in the sandbox; its report (owned). */
static _unused_ char *run_fake(const char *mode) {
        const FuseDriver *real = fusedriver_find("ext4");
        g_autofree char *dir = g_path_get_dirname(ku_self_copy());
        FuseDriver fake;
        int mount_fd = -1, pidfd = -1, fd;
        uint64_t start = 0;
        pid_t pid = 0;
        UmError e = {};
        int r;

        g_assert_nonnull(real);
        fake = *real;
        fake.path = ku_self_copy();
        fake.argv = (const char *const[]) { "fake-driver", "--fake-driver", mode, dir, NULL };
        fd = open(ext4_image, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        const FuseDriverSpec spec = {
                .driver = &fake,
                .fstype = "ext4",
                .source_fd = fd,
                .claim_fd = -EBADF,
                .uid_lock_fd = -EBADF,
                .read_only = true,
                .attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC |
                            MOUNT_ATTR_RDONLY,
                .caller_uid = KU_TEST_UID,
                .caller_gid = KU_TEST_UID,
                .driver_uid = DRIVER_UID,
                .timeout_usec = TIMEOUT_USEC,
                .shim_path = shim_path,
        };
        r = fusedriver_mount(&spec, &mount_fd, &pid, &pidfd, &start, NULL, &e);
        close(fd);
        g_assert_cmpint(r, ==, -EIO);
        ku_note("fake driver (%s): %s", mode, e.message);
        g_assert_nonnull(strstr(e.message, "(exit status 3): "));
        return g_strdup(strstr(e.message, "(exit status 3): ") + strlen("(exit status 3): "));
}

static void assert_report(const char *report, const char *key, const char *value) {
        g_autofree char *needle = g_strdup_printf("%s=%s", key, value);
        g_auto(GStrv) words = g_strsplit(report, " ", -1);

        if (!g_strv_contains((const char *const *) words, needle))
                g_error("'%s' lacks %s", report, needle);
}

static unsigned report_number(const char *report, const char *key) {
        g_autofree char *needle = g_strdup_printf(" %s=", key);
        const char *p = strstr(report, needle);

        g_assert_nonnull(p);
        return (unsigned) g_ascii_strtoull(p + strlen(needle), NULL, 10);
}

/* ---- tests ------------------------------------------------------------------------------ */

/* Nothing outside the sandbox's /tmp is writable, /tmp is small, nobody else is in sight,
 * the system bus and the network are out of reach. */
static void _unused_ test_escape(const char *arg) {
        g_autofree char *dir = g_path_get_dirname(ku_self_copy());
        g_autofree char *sock = g_strdup_printf("%s/sock", dir);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        g_autofree char *report = NULL;
        int lfd;

        /* A world-connectable socket in the host's /var/tmp: what a driver can reach of
         * the host's sockets outside /run and /tmp (reported, see below). */
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        g_assert_cmpint(lfd, >=, 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
        g_assert_cmpint(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), ==, 0);
        g_assert_cmpint(chmod(sock, 0777), ==, 0);
        g_assert_cmpint(chmod(dir, 0755), ==, 0);
        g_assert_cmpint(listen(lfd, 4), ==, 0);

        report = run_fake("escape");
        assert_report(report, "etc", "EROFS");
        assert_report(report, "vartmp", "EROFS");
        assert_report(report, "mknod", "EPERM");
        assert_report(report, "dev", "EROFS");
        assert_report(report, "tmp", "ENOSPC");
        assert_report(report, "procs", "1");
        assert_report(report, "kill", "ESRCH");
        /* No socket at all (seccomp): not the bus, not IP, not a Unix socket of the host's
         * outside /run, /tmp and /dev, which the read-only tree would not stop. */
        assert_report(report, "bus", "EPERM");
        assert_report(report, "varbus", "EPERM");
        assert_report(report, "net", "EPERM");
        assert_report(report, "hostsock", "EPERM");
        assert_report(report, "keyring", "EPERM");
        close(lfd);
        g_assert_cmpint(unlink(sock), ==, 0);
        g_assert_cmpint(access("/etc/um-attack", F_OK), ==, -1);
}

/* No namespaces (no user namespace: no root anywhere), no mounts, no root, no loop
 * ioctls, no way around the filter through another ABI. */
static void _unused_ test_ns(const char *arg) {
        g_autofree char *report = run_fake("ns");

        assert_report(report, "userns", "EPERM");
        assert_report(report, "mntns", "EPERM");
        assert_report(report, "clone", "EPERM");
        assert_report(report, "clone3", "ENOSYS");
        assert_report(report, "setns", "EPERM");
        assert_report(report, "fsopen", "EPERM");
        assert_report(report, "mount", "EPERM");
        assert_report(report, "x32", "ENOSYS");
        assert_report(report, "setuid", "EPERM");
        assert_report(report, "loopioctl", "EPERM");
        assert_report(report, "uring", "EPERM");
        assert_report(report, "fork", "EPERM");
        assert_report(report, "procclone", "EPERM");
        assert_report(report, "thread", "ok");
}

/* Memory, processes and fds are bounded; no core dumps, no locked memory. */
static void _unused_ test_limits(const char *arg) {
        g_autofree char *report = run_fake("limits");
        g_autofree char *spaced = g_strconcat(" ", report, NULL);

        assert_report(report, "mmap3g", "ENOMEM");
        /* Not one more process (seccomp); RLIMIT_NPROC stays as the cap of threads. */
        assert_report(report, "forks", "0(EPERM)");
        g_assert_cmpuint(report_number(spaced, "fds"), <, 64);
        assert_report(report, "core", "0");
        assert_report(report, "mlock", "EPERM");
}

/* ---- the uid claim ---------------------------------------------------------------------- */

typedef struct ClaimArgs {
        const char *dir;
        int report_fd;
        int barrier_fd; /* read end: EOF when the test lets the claimers go */
        int barrier_w;  /* its write end, which a claimer closes */
} ClaimArgs;

static void claimer(void *data) {
        const ClaimArgs *a = data;
        UidClaim c = UID_CLAIM_NULL;
        UmError e = {};
        int64_t uid = -1;
        char b;

        close(a->barrier_w);
        if (uid_claim(a->dir, "t-", CLAIM_FIRST, 4, 0, "a test", &c, &e) >= 0)
                uid = c.uid;
        g_assert_cmpint(write(a->report_fd, &uid, sizeof(uid)), ==, sizeof(uid));
        (void) !read(a->barrier_fd, &b, 1);
        uid_claim_release(&c);
}

/* Eight claimers at once for four uids: four get one each, all different; four are told
 * every uid is in use. */
static void test_claim_concurrent(const char *arg) {
        g_autofree char *dir = g_dir_make_tmp("uidclaim-XXXXXX", NULL);
        g_autoptr(GHashTable) seen = g_hash_table_new(g_int64_hash, g_int64_equal);
        int rep[2], bar[2], got = 0, busy = 0;
        pid_t pids[8];

        g_assert_nonnull(dir);
        for (unsigned i = 0; i < 4; i++)
                g_assert_cmpint(uid_claim_id_unused(CLAIM_FIRST + i), ==, 1);
        g_assert_cmpint(pipe2(rep, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(bar, O_CLOEXEC), ==, 0);
        ClaimArgs a = { .dir = dir, .report_fd = rep[1], .barrier_fd = bar[0],
                        .barrier_w = bar[1] };
        for (size_t i = 0; i < G_N_ELEMENTS(pids); i++)
                pids[i] = ku_fork(claimer, &a);
        close(rep[1]);
        close(bar[0]);
        for (size_t i = 0; i < G_N_ELEMENTS(pids); i++) {
                int64_t *uid = g_new(int64_t, 1);

                g_assert_cmpint(read(rep[0], uid, sizeof(*uid)), ==, sizeof(*uid));
                if (*uid < 0) {
                        busy++;
                        g_free(uid);
                        continue;
                }
                g_assert_false(g_hash_table_contains(seen, uid));
                g_hash_table_add(seen, uid);
                got++;
        }
        g_hash_table_foreach(seen, (GHFunc) (void (*)(void)) g_free, NULL);
        g_assert_cmpint(got, ==, 4);
        g_assert_cmpint(busy, ==, 4);
        close(bar[1]);
        close(rep[0]);
        for (size_t i = 0; i < G_N_ELEMENTS(pids); i++)
                ku_wait_ok(pids[i]);
        g_assert_cmpint(rmdir(dir), ==, 0);
}

/* A uid some process runs as (a driver whose claim was released once it ran, or anyone
 * else's process), or uses as its gid, is never handed out. */
static void test_claim_in_use(const char *arg) {
        g_autofree char *dir = g_dir_make_tmp("uidclaim-XXXXXX", NULL);
        UidClaim c = UID_CLAIM_NULL;
        UmError e = {};
        pid_t user, group;
        int p[2];
        char b;

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        user = fork();
        g_assert_cmpint(user, >=, 0);
        if (user == 0) {
                if (setresuid(CLAIM_FIRST, CLAIM_FIRST, CLAIM_FIRST) < 0)
                        _exit(1);
                (void) !write(p[1], "u", 1);
                pause();
                _exit(0);
        }
        group = fork();
        g_assert_cmpint(group, >=, 0);
        if (group == 0) {
                if (setresgid(CLAIM_FIRST + 1, CLAIM_FIRST + 1, CLAIM_FIRST + 1) < 0)
                        _exit(1);
                (void) !write(p[1], "g", 1);
                pause();
                _exit(0);
        }
        g_assert_cmpint(read(p[0], &b, 1), ==, 1);
        g_assert_cmpint(read(p[0], &b, 1), ==, 1);
        g_assert_cmpint(uid_claim(dir, "t-", CLAIM_FIRST, 3, 0, "a test", &c, &e), ==, 0);
        g_assert_cmpuint(c.uid, ==, CLAIM_FIRST + 2);
        uid_claim_release(&c);
        g_assert_cmpint(uid_claim(dir, "t-", CLAIM_FIRST, 2, 0, "a test", &c, &e), ==, -EBUSY);
        kill(user, SIGKILL);
        kill(group, SIGKILL);
        waitpid(user, NULL, 0);
        waitpid(group, NULL, 0);
        close(p[0]);
        close(p[1]);
        g_assert_cmpint(rmdir(dir), ==, 0);
}

/* ---- the drivers table after a restart -------------------------------------------------- */

static size_t load_line(pid_t pid, uint64_t start) {
        g_autofree char *dir = g_dir_make_tmp("drivertrack-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, "drivers", NULL);
        g_autofree char *line = g_strdup_printf("%d %" G_GUINT64_FORMAT " 61001 1879048448\n",
                                                (int) pid, start);
        DriverTrack t = { .path = g_strdup(path) };
        size_t dropped = 0, n;

        g_assert_true(g_file_set_contents(path, line, -1, NULL));
        g_assert_cmpint(drivertrack_load(&t, &dropped), ==, 0);
        n = t.n_entries;
        g_assert_cmpuint(n + dropped, ==, 1);
        drivertrack_done(&t);
        g_assert_cmpint(unlink(path), ==, 0);
        g_assert_cmpint(rmdir(dir), ==, 0);
        return n;
}

/* A process that reused a driver's pid (another start time) is not adopted; an exited
 * driver nobody reaped (a zombie) is not either; the driver itself is. */
static void test_track_pid_reuse(const char *arg) {
        uint64_t start;
        pid_t pid = fork();

        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                pause();
                _exit(0);
        }
        g_assert_cmpint(proc_start_time(pid, &start), ==, 0);
        g_assert_cmpuint(load_line(pid, start), ==, 1);
        g_assert_cmpuint(load_line(pid, start + 1), ==, 0);
        g_assert_cmpuint(load_line(pid, start - 1), ==, 0);
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        {
                siginfo_t si = {};

                g_assert_cmpint(waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT), ==, 0);
        }
        g_assert_cmpuint(load_line(pid, start), ==, 0);
        g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
}

static void _unused_ skip_under_asan(void) {
        g_test_skip("an AddressSanitizer build cannot run within a driver's RLIMIT_AS");
}

int main(int argc, char **argv) {
        g_autofree char *self = NULL;
        int r;

        if (argc >= 4 && streq(argv[1], "--fake-driver"))
                return fake_driver(argv[2], argv[3]);
        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        self = g_file_read_link("/proc/self/exe", NULL);
        g_assert_nonnull(self);
        g_autofree char *bin_dir = g_path_get_dirname(self);
        snprintf(shim_path, sizeof(shim_path), "%s/../../driver/usermount-fuse-shim.so",
                 bin_dir);
        g_assert_cmpint(access(shim_path, R_OK), ==, 0);
        if (!g_test_subprocess())
                g_test_set_nonfatal_assertions();
        ku_images_setup();
        ext4_image = (char *) ku_image("ext4");

#if defined(__SANITIZE_ADDRESS__)
        /* AddressSanitizer reserves terabytes of address space at start, far above a
         * driver's RLIMIT_AS: this instrumented binary cannot be the fake driver (the
         * same as test-fusedriver's /fusedriver/seccomp). */
        g_test_add_func("/fusedriver-attack/escape", skip_under_asan);
        g_test_add_func("/fusedriver-attack/namespaces", skip_under_asan);
        g_test_add_func("/fusedriver-attack/limits", skip_under_asan);
#else
        if (fusedriver_find("ext4") && ext4_image) {
                ku_add("/fusedriver-attack/escape", test_escape, NULL, NULL);
                ku_add("/fusedriver-attack/namespaces", test_ns, NULL, NULL);
                ku_add("/fusedriver-attack/limits", test_limits, NULL, NULL);
        }
#endif
        ku_add("/fusedriver-attack/claim-concurrent", test_claim_concurrent, NULL, NULL);
        ku_add("/fusedriver-attack/claim-in-use", test_claim_in_use, NULL, NULL);
        ku_add("/fusedriver-attack/track-pid-reuse", test_track_pid_reuse, NULL, NULL);

        r = g_test_run();
        ku_images_teardown();
        return r;
}
