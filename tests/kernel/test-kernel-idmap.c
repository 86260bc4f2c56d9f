/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel-facing parts of id-mapped mounts (worker/idmap-userns.c) on real mounts and real
 * user namespaces: a user namespace the daemon makes with given maps id-maps a real ext4
 * mount as the maps say; the maps of a namespace (also one nested in another) are read
 * back as host ids, and the helper children are gone when the calls return; a filesystem
 * that cannot be id-mapped (ramfs) is refused with its name; and the checks of a
 * caller's `userns` fd (docs/security.md, class 23).
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "idmap-userns.h"
#include "kernel-compat.h"
#include "kernel-util.h"
#include "loop.h"
#include "macro.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* A map from /proc text or from the "first:lower:count,..." form of info. */
static IdMap parse_map(const char *text) {
        g_autofree char *t = g_strdup(text);
        IdMap m;

        g_strdelimit(t, ":", ' ');
        g_strdelimit(t, ",", '\n');
        g_assert_cmpint(idmap_parse(t, &m), ==, 0);
        return m;
}

static char *map_string(const IdMap *m) {
        char buf[IDMAP_MAX_EXTENTS * 36 + 1];

        g_assert_cmpint(idmap_to_string(m, buf, sizeof(buf)), ==, 0);
        return g_strdup(buf);
}

/* The helper children of idmap-userns.c are reaped before the calls return. */
static void assert_no_children(void) {
        g_assert_cmpint(waitpid(-1, NULL, WNOHANG), ==, -1);
        g_assert_cmpint(errno, ==, ECHILD);
}

static void write_text(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, text, strlen(text)), ==, (ssize_t) strlen(text));
}

static void write_maps(pid_t pid, const char *uid_map, const char *gid_map) {
        g_autofree char *u = g_strdup_printf("/proc/%d/uid_map", (int) pid);
        g_autofree char *g = g_strdup_printf("/proc/%d/gid_map", (int) pid);

        write_text(u, uid_map);
        write_text(g, gid_map);
}

/* A child that waits in a new user namespace (optionally as uid, or after joining
 * another user namespace first) until its socket closes. */
typedef struct NsChild {
        pid_t pid;
        int sock;
} NsChild;

static NsChild ns_child_start(uid_t uid, int join_fd) {
        int sv[2];
        char c = 0;
        pid_t pid;

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        fflush(NULL);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                /* No other child's socket may stay open here, or it would never see EOF. */
                if (dup3(sv[1], 3, 0) < 0 || close_range(4, ~0U, 0) < 0)
                        _exit(5);
                sv[1] = 3;
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                if (uid != 0 && (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0 ||
                                 prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0))
                        _exit(1);
                if (join_fd >= 0 && setns(join_fd, CLONE_NEWUSER) < 0)
                        _exit(2);
                if (unshare(CLONE_NEWUSER) < 0)
                        _exit(3);
                if (write(sv[1], &c, 1) != 1)
                        _exit(4);
                while (read(sv[1], &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        close(sv[1]);
        g_assert_cmpint(read(sv[0], &c, 1), ==, 1);
        return (NsChild) { .pid = pid, .sock = sv[0] };
}

static int ns_child_userns(const NsChild *c) {
        g_autofree char *path = g_strdup_printf("/proc/%d/ns/user", (int) c->pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        return fd;
}

static void ns_child_stop(NsChild *c) {
        c->sock = safe_close(c->sock);
        ku_wait_ok(c->pid);
}

/* A fresh ext4 mount of the test image, detached and never attached. */
static int ext4_mount(int *ret_loop_fd) {
        _cleanup_close_ int image = -EBADF, fsfd = -EBADF;
        g_autofree char *loop_path = NULL;
        UmError e = {};
        int mfd;

        image = open(ku_image("ext4"), O_RDWR | O_CLOEXEC);
        g_assert_cmpint(image, >=, 0);
        g_assert_cmpint(loop_attach(image, false, ret_loop_fd, &loop_path, &e), ==, 0);
        fsfd = fsopen("ext4", FSOPEN_CLOEXEC);
        g_assert_cmpint(fsfd, >=, 0);
        g_assert_cmpint(fsconfig(fsfd, FSCONFIG_SET_STRING, "source", loop_path, 0), ==, 0);
        g_assert_cmpint(fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0), ==, 0);
        mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
        g_assert_cmpint(mfd, >=, 0);
        return mfd;
}

static void assert_owner(int dirfd, const char *path, uid_t uid, gid_t gid) {
        struct stat st;

        g_assert_cmpint(fstatat(dirfd, path, &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW), ==, 0);
        g_assert_cmpuint(st.st_uid, ==, uid);
        g_assert_cmpuint(st.st_gid, ==, gid);
}

/* ---- idmap_make_userns + idmap_apply ---------------------------------------------------- */

static void apply_on_ext4(const char *uid_text, const char *gid_text, uid_t want_uid,
                          gid_t want_gid) {
        _cleanup_close_ int loop_fd = -EBADF, mfd = -EBADF, userns = -EBADF;
        IdMap u = parse_map(uid_text), g = parse_map(gid_text), ru, rg;
        g_autofree char *us = NULL, *gs = NULL;
        UmError e = {};

        mfd = ext4_mount(&loop_fd);
        assert_owner(mfd, "", 0, 0);
        assert_owner(mfd, "hello.txt", 0, 0);

        g_assert_cmpint(idmap_make_userns(&u, &g, &userns, &e), ==, 0);
        assert_no_children();
        g_assert_cmpint(ioctl(userns, NS_GET_NSTYPE), ==, CLONE_NEWUSER);
        g_assert_cmpint(fcntl(userns, F_GETFD), ==, FD_CLOEXEC);
        /* The namespace holds exactly the maps it was asked for. */
        g_assert_cmpint(idmap_read_userns(userns, &ru, &rg, &e), ==, 0);
        assert_no_children();
        us = map_string(&ru);
        gs = map_string(&rg);
        g_assert_cmpstr(us, ==, uid_text);
        g_assert_cmpstr(gs, ==, gid_text);

        g_assert_cmpint(idmap_apply(mfd, userns, "ext4", IDMAP_USER, &e), ==, 0);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_NONE);
        assert_owner(mfd, "", want_uid, want_gid);
        assert_owner(mfd, "hello.txt", want_uid, want_gid);
}

static void test_apply_ext4(const char *arg) {
        /* Root on disk appears as 1000:2000. */
        apply_on_ext4("0:1000:1", "0:2000:1", 1000, 2000);
        /* A range. */
        apply_on_ext4("0:100000:65536", "0:200000:10", 100000, 200000);
        /* Root on disk unmapped: the overflow ids. */
        apply_on_ext4("1:1000:1", "1:1000:1", 65534, 65534);
}

/* Applying twice, or to a mount that was attached, is refused by the kernel. */
static void test_apply_twice(const char *arg) {
        _cleanup_close_ int loop_fd = -EBADF, mfd = -EBADF, userns = -EBADF;
        IdMap u = parse_map("0 1000 1");
        UmError e = {};

        mfd = ext4_mount(&loop_fd);
        g_assert_cmpint(idmap_make_userns(&u, &u, &userns, &e), ==, 0);
        g_assert_cmpint(idmap_apply(mfd, userns, "ext4", IDMAP_USER, &e), ==, 0);
        e = (UmError) {};
        g_assert_cmpint(idmap_apply(mfd, userns, "ext4", IDMAP_USER, &e), <, 0);
        g_assert_cmpint(e.kind, !=, UM_ERROR_KIND_NONE);
        assert_owner(mfd, "", 1000, 1000);
}

static void test_apply_ramfs(const char *arg) {
        _cleanup_close_ int fsfd = -EBADF, mfd = -EBADF, userns = -EBADF;
        IdMap u = parse_map("0 1000 1");
        UmError e = {};

        fsfd = fsopen("ramfs", FSOPEN_CLOEXEC);
        g_assert_cmpint(fsfd, >=, 0);
        g_assert_cmpint(fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0), ==, 0);
        mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
        g_assert_cmpint(mfd, >=, 0);
        g_assert_cmpint(idmap_make_userns(&u, &u, &userns, &e), ==, 0);
        g_assert_cmpint(idmap_apply(mfd, userns, "ramfs", IDMAP_NAMESPACE, &e), ==, -EINVAL);
        ku_note("%s", e.message);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_ARGUMENT);
        g_assert_nonnull(strstr(e.message, "ramfs"));
        g_assert_nonnull(strstr(e.message, "namespace"));
        assert_owner(mfd, "", 0, 0);
}

/* ---- idmap_read_userns ------------------------------------------------------------------ */

static void test_read_userns(const char *arg) {
        NsChild c = ns_child_start(0, -EBADF);
        _cleanup_close_ int userns = -EBADF;
        g_autofree char *us = NULL, *gs = NULL;
        UmError e = {};
        IdMap u, g;

        write_maps(c.pid, "0 100000 1000\n1000 61001 1\n", "0 200000 10\n");
        userns = ns_child_userns(&c);
        g_assert_cmpint(idmap_read_userns(userns, &u, &g, &e), ==, 0);
        us = map_string(&u);
        gs = map_string(&g);
        g_assert_cmpstr(us, ==, "0:100000:1000,1000:61001:1");
        g_assert_cmpstr(gs, ==, "0:200000:10");
        ns_child_stop(&c);
        assert_no_children();
}

/*
 * A user namespace inside one whose maps are 0:100000:1000: its own map "0 5 10" (ids of
 * the outer namespace) must come back as the host ids 100005.., because the reader is in
 * the initial namespace.
 */
static void nested_writer(void *data) {
        int outer = *(int *) data;
        NsChild inner;
        char c = 0;

        /* Root in the outer namespace: the parent namespace of the inner one, which only a
         * process there may write the inner maps from. */
        g_assert_cmpint(setns(outer, CLONE_NEWUSER), ==, 0);
        /* Only our end of the socket (101) stays: the test's end must close with the test. */
        g_assert_cmpint(close_range(3, STDOUT_FILENO + 99, 0), ==, 0);
        /* A new namespace's creator must have mapped ids in its parent: become its root. */
        g_assert_cmpint(setresgid(0, 0, 0), ==, 0);
        g_assert_cmpint(setresuid(0, 0, 0), ==, 0);
        /* Changing ids made us undumpable: the inner child's /proc files would be host
         * root's, which the writer (host uid 100000) cannot open. */
        g_assert_cmpint(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), ==, 0);
        inner = ns_child_start(0, -EBADF);
        write_maps(inner.pid, "0 5 10\n", "0 7 3\n");
        /* Hand the inner child's pid to the test and wait until it is done. */
        g_assert_cmpint(write(STDOUT_FILENO + 100, &inner.pid, sizeof(inner.pid)), ==,
                        sizeof(inner.pid));
        g_assert_cmpint(read(STDOUT_FILENO + 100, &c, 1), >=, 0);
        ns_child_stop(&inner);
}

static void test_read_userns_nested(const char *arg) {
        IdMap ou = parse_map("0 100000 1000"), og = parse_map("0 200000 1000"), u, g;
        _cleanup_close_ int outer = -EBADF, inner = -EBADF;
        g_autofree char *us = NULL, *gs = NULL, *path = NULL;
        UmError e = {};
        pid_t writer, inner_pid = 0;
        int sv[2];

        g_assert_cmpint(idmap_make_userns(&ou, &og, &outer, &e), ==, 0);
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        /* The writer finds its end at a fixed number, whatever fds the test holds. */
        g_assert_cmpint(dup3(sv[1], STDOUT_FILENO + 100, O_CLOEXEC), ==, STDOUT_FILENO + 100);
        safe_close(sv[1]);
        writer = ku_fork(nested_writer, &outer);
        safe_close(STDOUT_FILENO + 100);
        g_assert_cmpint(read(sv[0], &inner_pid, sizeof(inner_pid)), ==, sizeof(inner_pid));

        path = g_strdup_printf("/proc/%d/ns/user", (int) inner_pid);
        inner = open(path, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(inner, >=, 0);
        g_assert_cmpint(idmap_read_userns(inner, &u, &g, &e), ==, 0);
        us = map_string(&u);
        gs = map_string(&g);
        g_assert_cmpstr(us, ==, "0:100005:10");
        g_assert_cmpstr(gs, ==, "0:200007:3");

        safe_close(sv[0]);
        ku_wait_ok(writer);
        assert_no_children();
}

/* A namespace whose maps were never written: InvalidArgument saying so. */
static void test_read_userns_no_maps(const char *arg) {
        NsChild c = ns_child_start(0, -EBADF);
        _cleanup_close_ int userns = ns_child_userns(&c);
        UmError e = {};
        IdMap u, g;

        g_assert_cmpint(idmap_read_userns(userns, &u, &g, &e), ==, -EINVAL);
        ku_note("%s", e.message);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_ARGUMENT);
        g_assert_nonnull(strstr(e.message, "no uid or gid map"));
        ns_child_stop(&c);
        assert_no_children();
}

/*
 * The child that joins the caller's namespace is gone when the call returns (and is not
 * dumpable, which only shows from inside that namespace: see the integration test).
 * Timed: a child that hung until a timeout would show here.
 */
static void test_read_userns_prompt(const char *arg) {
        IdMap m = parse_map("0 100000 1000"), u, g;
        _cleanup_close_ int userns = -EBADF;
        UmError e = {};
        gint64 start;

        g_assert_cmpint(idmap_make_userns(&m, &m, &userns, &e), ==, 0);
        start = g_get_monotonic_time();
        for (int i = 0; i < 50; i++) {
                g_assert_cmpint(idmap_read_userns(userns, &u, &g, &e), ==, 0);
                assert_no_children();
        }
        g_assert_cmpint(g_get_monotonic_time() - start, <, 10 * G_USEC_PER_SEC);
}

/*
 * The child that joins a caller's namespace is not dumpable: otherwise the owner of that
 * namespace, privileged there, could read or trace a process that is still root on the
 * host. The test traces the reader (as root, from outside), stops its child at the
 * write() that follows the join, and lets the namespace's owner (KU_TEST_UID) try to read
 * the child's /proc/PID/ns/user link (a ptrace-mode read check): refused. The same check on a
 * dumpable root process in the same namespace (a control) succeeds. (Joining a namespace
 * that another uid owns already makes a process undumpable in the kernel's setns();
 * idmap-userns.c's own prctl() comes first and holds whatever the owner is.)
 */
static void reader(void *data) {
        IdMap u, g;
        UmError e = {};

        g_assert_cmpint(ptrace(PTRACE_TRACEME, 0, NULL, NULL), ==, 0);
        g_assert_cmpint(raise(SIGSTOP), ==, 0);
        g_assert_cmpint(idmap_read_userns(*(int *) data, &u, &g, &e), ==, 0);
}

typedef struct Probe {
        pid_t pid;
        int result;
} Probe;

/* As KU_TEST_UID: errno of readlink(/proc/PID/ns/user) (a ptrace-mode read check), 0 if
 * it worked. */
static void probe_ns_link(void *data) {
        Probe *p = data;
        g_autofree char *path = g_strdup_printf("/proc/%d/ns/user", (int) p->pid);
        char buf[64];

        g_assert_cmpint(setresgid(KU_TEST_GID, KU_TEST_GID, KU_TEST_GID), ==, 0);
        g_assert_cmpint(setresuid(KU_TEST_UID, KU_TEST_UID, KU_TEST_UID), ==, 0);
        _exit(readlink(path, buf, sizeof(buf)) >= 0 ? 0 : errno);
}

static int probe_as_owner(pid_t pid) {
        Probe p = { .pid = pid };
        pid_t child = ku_fork(probe_ns_link, &p);
        int status = 0;

        g_assert_cmpint(waitpid(child, &status, 0), ==, child);
        g_assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static void joiner(void *data) {
        char c;

        g_assert_cmpint(setns(*(int *) data, CLONE_NEWUSER), ==, 0);
        /* The kernel made us undumpable when we joined a namespace another uid owns;
         * this is what a dumpable joiner would look like. */
        g_assert_cmpint(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), ==, 0);
        /* Only our end of the socket (100) stays, so the test's end closing wakes us. */
        g_assert_cmpint(close_range(3, STDIN_FILENO + 99, 0), ==, 0);
        c = 0;
        g_assert_cmpint(write(STDIN_FILENO + 100, &c, 1), ==, 1);
        (void) !read(STDIN_FILENO + 100, &c, 1);
}

static void test_read_userns_not_dumpable(const char *arg) {
        NsChild owner = ns_child_start(KU_TEST_UID, -EBADF);
        _cleanup_close_ int userns = -EBADF;
        struct __ptrace_syscall_info info;
        unsigned long msg = 0;
        pid_t w, c, j;
        int status, sv[2];

        write_maps(owner.pid, "0 65534 1\n", "0 65534 1\n");
        userns = ns_child_userns(&owner);

        /* Control: a dumpable root process that joined the namespace is readable. */
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        g_assert_cmpint(dup3(sv[1], STDIN_FILENO + 100, O_CLOEXEC), ==, STDIN_FILENO + 100);
        safe_close(sv[1]);
        j = ku_fork(joiner, &userns);
        safe_close(STDIN_FILENO + 100);
        {
                g_autofree char *path = g_strdup_printf("/proc/%d/ns/user", (int) j);
                struct stat a, b;
                char byte;

                /* It joined when it says so. */
                g_assert_cmpint(read(sv[0], &byte, 1), ==, 1);
                g_assert_cmpint(stat(path, &a), ==, 0);
                g_assert_cmpint(fstat(userns, &b), ==, 0);
                g_assert_cmpuint(a.st_ino, ==, b.st_ino);
        }
        g_assert_cmpint(probe_as_owner(j), ==, 0);
        safe_close(sv[0]);
        ku_wait_ok(j);

        w = ku_fork(reader, &userns);
        g_assert_cmpint(waitpid(w, &status, 0), ==, w);
        g_assert_true(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
        g_assert_cmpint(ptrace(PTRACE_SETOPTIONS, w, NULL,
                               (void *) (PTRACE_O_TRACEFORK | PTRACE_O_TRACESYSGOOD |
                                         PTRACE_O_EXITKILL)), ==, 0);
        g_assert_cmpint(ptrace(PTRACE_CONT, w, NULL, NULL), ==, 0);
        g_assert_cmpint(waitpid(w, &status, 0), ==, w);
        g_assert_cmpint(status >> 8, ==, SIGTRAP | (PTRACE_EVENT_FORK << 8));
        g_assert_cmpint(ptrace(PTRACE_GETEVENTMSG, w, NULL, &msg), ==, 0);
        c = (pid_t) msg;
        g_assert_cmpint(waitpid(c, &status, __WALL), ==, c);
        g_assert_true(WIFSTOPPED(status));

        /* Up to the child's first write(): its report, after prctl() and setns(). */
        for (;;) {
                g_assert_cmpint(ptrace(PTRACE_SYSCALL, c, NULL, NULL), ==, 0);
                g_assert_cmpint(waitpid(c, &status, __WALL), ==, c);
                g_assert_true(WIFSTOPPED(status));
                if (WSTOPSIG(status) != (SIGTRAP | 0x80))
                        continue;
                g_assert_cmpint(ptrace(PTRACE_GET_SYSCALL_INFO, c, (void *) sizeof(info), &info),
                                >, 0);
                if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_write)
                        break;
        }
        {
                g_autofree char *path = g_strdup_printf("/proc/%d/ns/user", (int) c);
                struct stat a, b;

                g_assert_cmpint(stat(path, &a), ==, 0);
                g_assert_cmpint(fstat(userns, &b), ==, 0);
                g_assert_cmpuint(a.st_ino, ==, b.st_ino);
        }
        g_assert_cmpint(probe_as_owner(c), ==, EACCES);

        g_assert_cmpint(ptrace(PTRACE_DETACH, c, NULL, NULL), ==, 0);
        g_assert_cmpint(ptrace(PTRACE_DETACH, w, NULL, NULL), ==, 0);
        ku_wait_ok(w);
        ns_child_stop(&owner);
        assert_no_children();
}

/* ---- idmap_check_userns_fd -------------------------------------------------------------- */

static void assert_check(int fd, uid_t uid, int want_r, UmErrorKind want_kind,
                         const char *message_part) {
        UmError e = {};

        g_assert_cmpint(idmap_check_userns_fd(fd, uid, &e), ==, want_r);
        g_assert_cmpint(e.kind, ==, want_kind);
        if (message_part && !strstr(e.message, message_part))
                g_error("message '%s' lacks '%s'", e.message, message_part);
}

static void test_check_userns_fd(const char *arg) {
        _cleanup_close_ int net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int file = open(ku_image("ext4"), O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int initial = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int root_ns = -EBADF, user_ns = -EBADF;
        NsChild by_root = ns_child_start(0, -EBADF);
        NsChild by_user = ns_child_start(KU_TEST_UID, -EBADF);

        root_ns = ns_child_userns(&by_root);
        user_ns = ns_child_userns(&by_user);
        g_assert_cmpint(net, >=, 0);
        g_assert_cmpint(file, >=, 0);
        g_assert_cmpint(initial, >=, 0);

        assert_check(net, KU_TEST_UID, -EINVAL, UM_ERROR_KIND_INVALID_ARGUMENT,
                     "not a user namespace");
        assert_check(file, KU_TEST_UID, -EINVAL, UM_ERROR_KIND_INVALID_ARGUMENT,
                     "not a namespace at all");
        assert_check(initial, KU_TEST_UID, -EINVAL, UM_ERROR_KIND_INVALID_ARGUMENT,
                     "initial user namespace");
        assert_check(initial, 0, -EINVAL, UM_ERROR_KIND_INVALID_ARGUMENT,
                     "initial user namespace");
        assert_check(root_ns, KU_TEST_UID, -EPERM, UM_ERROR_KIND_NOT_AUTHORIZED,
                     "owned by uid 0");
        assert_check(user_ns, 0, -EPERM, UM_ERROR_KIND_NOT_AUTHORIZED, "owned by uid 65534");
        assert_check(user_ns, KU_TEST_UID, 0, UM_ERROR_KIND_NONE, NULL);
        assert_check(root_ns, 0, 0, UM_ERROR_KIND_NONE, NULL);

        ns_child_stop(&by_root);
        ns_child_stop(&by_user);
}

/* idmap_open_userns_of: a caller in the initial namespace is refused, one in its own
 * namespace gives that namespace. */
static void test_open_userns_of(const char *arg) {
        _cleanup_close_ int self = (int) syscall(SYS_pidfd_open, getpid(), 0);
        _cleanup_close_ int child_pidfd = -EBADF, fd = -EBADF, want = -EBADF;
        NsChild c = ns_child_start(KU_TEST_UID, -EBADF);
        struct stat a, b;
        UmError e = {};

        g_assert_cmpint(self, >=, 0);
        g_assert_cmpint(idmap_open_userns_of(self, getpid(), &fd, &e), ==, -EINVAL);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_ARGUMENT);
        g_assert_cmpint(fd, ==, -EBADF);

        child_pidfd = (int) syscall(SYS_pidfd_open, c.pid, 0);
        g_assert_cmpint(child_pidfd, >=, 0);
        e = (UmError) {};
        g_assert_cmpint(idmap_open_userns_of(child_pidfd, c.pid, &fd, &e), ==, 0);
        want = ns_child_userns(&c);
        g_assert_cmpint(fstat(fd, &a), ==, 0);
        g_assert_cmpint(fstat(want, &b), ==, 0);
        g_assert_cmpuint(a.st_ino, ==, b.st_ino);
        g_assert_cmpuint(a.st_dev, ==, b.st_dev);
        ns_child_stop(&c);
}

int main(int argc, char **argv) {
        int r;

        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        if (!g_test_subprocess())
                g_test_set_nonfatal_assertions();
        ku_images_setup();

        ku_add("/idmap/apply/ext4", test_apply_ext4, NULL, "ext4");
        ku_add("/idmap/apply/twice", test_apply_twice, NULL, "ext4");
        ku_add("/idmap/apply/ramfs-refused", test_apply_ramfs, NULL, NULL);
        ku_add("/idmap/read-userns/simple", test_read_userns, NULL, NULL);
        ku_add("/idmap/read-userns/nested", test_read_userns_nested, NULL, NULL);
        ku_add("/idmap/read-userns/no-maps", test_read_userns_no_maps, NULL, NULL);
        ku_add("/idmap/read-userns/prompt", test_read_userns_prompt, NULL, NULL);
        ku_add("/idmap/read-userns/not-dumpable", test_read_userns_not_dumpable, NULL, NULL);
        ku_add("/idmap/check-userns-fd", test_check_userns_fd, NULL, "ext4");
        ku_add("/idmap/open-userns-of", test_open_userns_of, NULL, NULL);

        r = g_test_run();
        ku_images_teardown();
        return r;
}
