/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mountns_*() against real mount namespaces: children that unshare their own (plain, or
 * with a user namespace like an unprivileged container) and mount a tmpfs there. Ids
 * differ between namespaces and are stable; a mount exists (with its mount point) while
 * it is mounted and its namespace lives, and not after; a process in a namespace is found
 * while one lives there. Every test checks that no child, mount or fd is left behind.
 */
#include <fcntl.h>
#include <pthread.h>
#include <linux/types.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kernel-util.h"
#include "kernel-compat.h"
#include "macro.h"
#include "mountns.h"
#include "nsenter.h"

static char *test_dir; /* mount points of the children live here */

/* ---- children in their own namespaces ------------------------------------------------ */

typedef enum ChildMode {
        CHILD_SAME_NS,  /* stays in the test's mount namespace */
        CHILD_NEW_NS,   /* unshare(CLONE_NEWNS) as root */
        CHILD_USERNS,   /* KU_TEST_UID, then root in a new user + mount namespace */
} ChildMode;

typedef struct Child {
        pid_t pid;
        int pidfd;
        int sock;               /* closing it makes the child exit */
        uint64_t mount_id;      /* of the tmpfs at mount_point, if one was asked for */
        char mount_point[256];
} Child;

typedef struct ChildReply {
        int r;                  /* 0 or -errno of the step that failed */
        uint64_t mount_id;
} ChildReply;

static void child_reply(int sock, int r, uint64_t mount_id) {
        ChildReply reply = { .r = r, .mount_id = mount_id };

        (void) send(sock, &reply, sizeof(reply), MSG_NOSIGNAL);
}

static int child_setup(ChildMode mode, const char *mount_point, uint64_t *ret_mount_id) {
        struct statx stx = {};

        if (mode == CHILD_USERNS)
                ku_become_userns_root();
        else if (mode == CHILD_NEW_NS && unshare(CLONE_NEWNS) < 0)
                return -errno;
        /* Nothing the child mounts may reach the test's namespace. */
        if (mode != CHILD_SAME_NS && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        if (!mount_point)
                return 0;
        if (mount("tmpfs", mount_point, "tmpfs", MS_NODEV | MS_NOSUID, "size=64k") < 0)
                return -errno;
        if (statx(AT_FDCWD, mount_point, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID_UNIQUE, &stx) < 0)
                return -errno;
        if (!(stx.stx_mask & STATX_MNT_ID_UNIQUE))
                return -EOPNOTSUPP;
        *ret_mount_id = stx.stx_mnt_id;
        return 0;
}

/* The child: sets up, reports, then unmounts on 'u' and exits when the socket closes. */
static _noreturn_ void child_main(int sock, ChildMode mode, const char *mount_point) {
        uint64_t mount_id = 0;
        char cmd;
        int r;

        /*
         * Keep only our end of the socket: an inherited copy of another child's socket
         * would keep that child from seeing its socket close.
         */
        if (dup2(sock, 3) < 0 || close_range(4, ~0U, 0) < 0)
                _exit(EXIT_FAILURE);
        sock = 3;
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        r = child_setup(mode, mount_point, &mount_id);
        child_reply(sock, r, mount_id);
        while (r >= 0 && recv(sock, &cmd, 1, 0) == 1) {
                if (cmd == 'u')
                        child_reply(sock, umount2(mount_point, 0) < 0 ? -errno : 0, 0);
        }
        _exit(0);
}

/* Starts a child; with name, it mounts a tmpfs on <test_dir>/<name> in its namespace. */
static void child_start(Child *c, ChildMode mode, const char *name) {
        ChildReply reply = {};
        int pair[2];

        *c = (Child) { .pid = -1, .pidfd = -EBADF, .sock = -EBADF };
        if (name) {
                snprintf(c->mount_point, sizeof(c->mount_point), "%s/%s", test_dir, name);
                g_assert_cmpint(mkdir(c->mount_point, 0755), ==, 0);
        }
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), ==, 0);
        fflush(NULL);
        c->pid = fork();
        g_assert_cmpint(c->pid, >=, 0);
        if (c->pid == 0) {
                close(pair[0]);
                child_main(pair[1], mode, name ? c->mount_point : NULL);
        }
        close(pair[1]);
        c->sock = pair[0];
        c->pidfd = pidfd_open(c->pid, 0);
        g_assert_cmpint(c->pidfd, >=, 0);
        g_assert_cmpint(recv(c->sock, &reply, sizeof(reply), 0), ==, sizeof(reply));
        g_assert_cmpint(reply.r, ==, 0);
        c->mount_id = reply.mount_id;
        if (name)
                g_assert_cmpuint(c->mount_id, >, UINT64_C(1) << 31);
}

static void child_unmount(Child *c) {
        ChildReply reply = {};

        g_assert_cmpint(send(c->sock, "u", 1, MSG_NOSIGNAL), ==, 1);
        g_assert_cmpint(recv(c->sock, &reply, sizeof(reply), 0), ==, sizeof(reply));
        g_assert_cmpint(reply.r, ==, 0);
}

/* Makes the child exit and waits until it is a zombie, without reaping it. */
static void child_exit_unreaped(Child *c) {
        siginfo_t si = {};

        c->sock = safe_close(c->sock);
        g_assert_cmpint(waitid(P_PIDFD, (id_t) c->pidfd, &si, WEXITED | WNOWAIT), ==, 0);
        g_assert_cmpint(si.si_pid, ==, c->pid);
        g_assert_cmpint(si.si_code, ==, CLD_EXITED);
        g_assert_cmpint(si.si_status, ==, 0);
}

/* Makes the child exit and reaps it. */
static void child_reap(Child *c) {
        if (c->sock >= 0)
                child_exit_unreaped(c);
        if (c->pid > 0)
                ku_wait_ok(c->pid);
        c->pid = -1;
        c->pidfd = safe_close(c->pidfd);
}

/*
 * Removes the child's mount point. Only once its namespace is gone: removing a directory
 * detaches whatever other namespaces have mounted on it, which would hide what a test
 * means to observe.
 */
static void child_remove_dir(Child *c) {
        if (c->mount_point[0])
                g_assert_cmpint(rmdir(c->mount_point), ==, 0);
        c->mount_point[0] = 0;
}

static void child_stop(Child *c) {
        child_reap(c);
        child_remove_dir(c);
}

static uint64_t child_mntns(const Child *c) {
        uint64_t by_pidfd = 0, by_pid = 0;

        g_assert_cmpint(mountns_id_of_process(c->pidfd, c->pid, &by_pidfd), ==, 0);
        g_assert_cmpint(mountns_id_of_process(-EBADF, c->pid, &by_pid), ==, 0);
        g_assert_cmpuint(by_pidfd, !=, 0);
        g_assert_cmpuint(by_pidfd, ==, by_pid);
        return by_pidfd;
}

static uint64_t self_mntns(void) {
        uint64_t id = 0;

        g_assert_cmpint(mountns_id_of_process(-EBADF, getpid(), &id), ==, 0);
        g_assert_cmpuint(id, !=, 0);
        return id;
}

/* The pid a pidfd refers to, from its fdinfo ("Pid:"). */
static pid_t pidfd_pid(int pidfd) {
        g_autofree char *path = g_strdup_printf("/proc/self/fdinfo/%d", pidfd);
        g_autofree char *text = NULL;
        const char *p;

        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        p = strstr(text, "\nPid:");
        g_assert_nonnull(p);
        return (pid_t) strtol(p + 5, NULL, 10);
}

/* ---- the mount namespace id, independently: statmount() of our root mount ---------------- */

/* What statmount(STATMOUNT_MNT_NS_ID) says about the namespace of our "/" mount. */
static uint64_t statmount_root_mntns(void) {
        struct statx stx = {};
        struct um_mnt_id_req req = {
                .size = UM_MNT_ID_REQ_SIZE_VER0,
                .param = UM_STATMOUNT_MNT_NS_ID,
        };
        g_autofree struct um_statmount *sm = g_malloc0(4096);

        g_assert_cmpint(statx(AT_FDCWD, "/", 0, STATX_MNT_ID_UNIQUE, &stx), ==, 0);
        req.mnt_id = stx.stx_mnt_id;
        g_assert_cmpint(syscall(SYS_statmount, &req, sm, 4096, 0), ==, 0);
        g_assert_true(sm->mask & UM_STATMOUNT_MNT_NS_ID);
        return sm->mnt_ns_id;
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_id_self(void) {
        _cleanup_close_ int pidfd = pidfd_open(getpid(), 0);
        uint64_t self = self_mntns(), by_pid = 0, by_pidfd = 0;

        g_assert_cmpint(pidfd, >=, 0);
        g_assert_cmpint(mountns_id_of_process(-EBADF, getpid(), &by_pid), ==, 0);
        g_assert_cmpint(mountns_id_of_process(pidfd, 0, &by_pidfd), ==, 0);
        g_assert_cmpuint(by_pid, ==, self);
        g_assert_cmpuint(by_pidfd, ==, self);
        g_assert_cmpuint(self_mntns(), ==, self);
        g_assert_cmpuint(statmount_root_mntns(), ==, self);
}

static void test_id_namespaces_differ(void) {
        uint64_t self = self_mntns(), a, b, same;
        Child ca, cb, cs;

        child_start(&ca, CHILD_NEW_NS, NULL);
        child_start(&cb, CHILD_NEW_NS, "b");
        child_start(&cs, CHILD_SAME_NS, NULL);
        a = child_mntns(&ca);
        b = child_mntns(&cb);
        same = child_mntns(&cs);
        g_assert_cmpuint(a, !=, self);
        g_assert_cmpuint(b, !=, self);
        g_assert_cmpuint(a, !=, b);
        g_assert_cmpuint(same, ==, self);
        /* Stable: the same answer again, and after a mount was made and removed there. */
        g_assert_cmpuint(child_mntns(&ca), ==, a);
        child_unmount(&cb);
        g_assert_cmpuint(child_mntns(&cb), ==, b);
        g_assert_cmpuint(self_mntns(), ==, self);
        child_stop(&ca);
        child_stop(&cb);
        child_stop(&cs);
}

/* A process that has exited is -ESRCH, as a zombie and after being reaped; no id leaks. */
static void test_id_exited(void) {
        uint64_t id = 77;
        pid_t pid;
        Child c;

        child_start(&c, CHILD_NEW_NS, NULL);
        pid = c.pid;
        child_exit_unreaped(&c);
        g_assert_cmpint(mountns_id_of_process(c.pidfd, c.pid, &id), ==, -ESRCH);
        g_assert_cmpint(mountns_id_of_process(-EBADF, c.pid, &id), ==, -ESRCH);
        ku_wait_ok(c.pid);
        c.pid = -1;
        g_assert_cmpint(mountns_id_of_process(c.pidfd, pid, &id), ==, -ESRCH);
        g_assert_cmpint(mountns_id_of_process(-EBADF, pid, &id), ==, -ESRCH);
        g_assert_cmpuint(id, ==, 77);
        child_stop(&c);
}

static void test_id_arguments(void) {
        _cleanup_close_ int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int ns_fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        uint64_t id = 77;

        g_assert_cmpint(mountns_id_of_process(-EBADF, 0, &id), ==, -EINVAL);
        g_assert_cmpint(mountns_id_of_process(-EBADF, -5, &id), ==, -EINVAL);
        /* Not a pidfd: the pidfd ioctl is never sent to another kind of fd. */
        g_assert_cmpint(mountns_id_of_process(null_fd, getpid(), &id), ==, -EBADF);
        g_assert_cmpint(mountns_id_of_process(ns_fd, getpid(), &id), ==, -EBADF);
        g_assert_cmpint(mountns_id_of_process(-EBADF, INT32_MAX, &id), ==, -ESRCH);
        g_assert_cmpuint(id, ==, 77);
}

static void test_exists_live(void) {
        g_autofree char *mp = NULL;
        char *mp_host = (char *) 0x1;
        uint64_t ns;
        Child c;

        child_start(&c, CHILD_NEW_NS, "m");
        ns = child_mntns(&c);
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, &mp), ==, 1);
        g_assert_cmpstr(mp, ==, c.mount_point);
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, NULL), ==, 1);
        /* Not in the test's own namespace, where nothing is mounted there. */
        g_assert_cmpint(mountns_mount_exists(self_mntns(), c.mount_id, &mp_host), ==, 0);
        g_assert_true(mp_host == (char *) 0x1);
        g_assert_false(ku_mountinfo_has_path_under(0, c.mount_point));
        g_assert_true(ku_mountinfo_has_path_under(c.pid, c.mount_point));
        /* A unique id that no mount has. */
        g_assert_cmpint(mountns_mount_exists(ns, UINT64_MAX - 1, NULL), ==, 0);
        child_unmount(&c);
        child_stop(&c);
}

static void test_exists_unmounted(void) {
        char *mp = (char *) 0x1;
        uint64_t ns;
        Child c;

        child_start(&c, CHILD_NEW_NS, "m");
        ns = child_mntns(&c);
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, NULL), ==, 1);
        child_unmount(&c);
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, &mp), ==, 0);
        g_assert_true(mp == (char *) 0x1);
        g_assert_false(ku_mountinfo_has_path_under(c.pid, c.mount_point));
        child_stop(&c);
}

/* The last process of a namespace exits with the mount still there: both are gone. */
static void test_exists_namespace_gone(void) {
        uint64_t ns;
        int pidfd = -EBADF;
        Child c;

        child_start(&c, CHILD_NEW_NS, "m");
        ns = child_mntns(&c);
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, NULL), ==, 1);
        child_reap(&c);
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, NULL), ==, 0);
        g_assert_cmpint(mountns_find_process(ns, &pidfd), ==, -ESRCH);
        g_assert_cmpint(pidfd, ==, -EBADF);
        child_remove_dir(&c);
}

/*
 * A namespace outlives its processes while something holds it (here an nsfs fd): its
 * mounts still exist, but no process can be found to work in it.
 */
static void test_exists_namespace_held(void) {
        _cleanup_close_ int ns_fd = -EBADF;
        g_autofree char *path = NULL;
        int pidfd = -EBADF;
        uint64_t ns;
        Child c;

        child_start(&c, CHILD_NEW_NS, "m");
        ns = child_mntns(&c);
        path = g_strdup_printf("/proc/%d/ns/mnt", (int) c.pid);
        ns_fd = open(path, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(ns_fd, >=, 0);
        child_reap(&c);
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, NULL), ==, 1);
        g_assert_cmpint(mountns_find_process(ns, &pidfd), ==, -ESRCH);
        ns_fd = safe_close(ns_fd);
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, NULL), ==, 0);
        child_remove_dir(&c);
}

/* A namespace owned by an unprivileged user namespace, as a container's. */
static void test_user_namespace(void) {
        g_autofree char *mp = NULL;
        _cleanup_close_ int found = -EBADF;
        uint64_t ns, found_ns = 0;
        Child c;

        g_assert_cmpint(chmod(test_dir, 0755), ==, 0);
        child_start(&c, CHILD_USERNS, "userns");
        ns = child_mntns(&c);
        g_assert_cmpuint(ns, !=, self_mntns());
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, &mp), ==, 1);
        g_assert_cmpstr(mp, ==, c.mount_point);
        g_assert_cmpint(mountns_find_process(ns, &found), ==, 0);
        g_assert_cmpint(pidfd_pid(found), ==, c.pid);
        g_assert_cmpint(mountns_id_of_process(found, 0, &found_ns), ==, 0);
        g_assert_cmpuint(found_ns, ==, ns);
        found = safe_close(found);
        child_reap(&c);
        g_assert_cmpint(mountns_mount_exists(ns, c.mount_id, NULL), ==, 0);
        g_assert_cmpint(mountns_find_process(ns, &found), ==, -ESRCH);
        child_remove_dir(&c);
        g_assert_cmpint(chmod(test_dir, 0700), ==, 0);
}

static void test_exists_arguments(void) {
        char *mp = (char *) 0x1;
        uint64_t self = self_mntns();

        g_assert_cmpint(mountns_mount_exists(0, UINT64_C(1) << 32, &mp), ==, -EINVAL);
        g_assert_cmpint(mountns_mount_exists(self, 0, &mp), ==, -EINVAL);
        /* Not a unique mount id (those are above 2^31): the kernel cannot say. */
        g_assert_cmpint(mountns_mount_exists(self, 5, &mp), ==, -EINVAL);
        g_assert_true(mp == (char *) 0x1);
        /* A namespace id that never was. */
        g_assert_cmpint(mountns_mount_exists(UINT64_MAX - 1, UINT64_C(1) << 32, &mp), ==, 0);
        g_assert_true(mp == (char *) 0x1);
}

static void test_find_process(void) {
        _cleanup_close_ int found = -EBADF, mine = -EBADF;
        uint64_t ns, id = 0;
        int unchanged = -EBADF;
        Child c;

        child_start(&c, CHILD_NEW_NS, NULL);
        ns = child_mntns(&c);
        g_assert_cmpint(mountns_find_process(ns, &found), ==, 0);
        g_assert_cmpint(pidfd_pid(found), ==, c.pid);
        g_assert_true(fcntl(found, F_GETFD) & FD_CLOEXEC);

        /* The test's own namespace has processes too; whichever is found lives there. */
        g_assert_cmpint(mountns_find_process(self_mntns(), &mine), ==, 0);
        g_assert_cmpint(mountns_id_of_process(mine, 0, &id), ==, 0);
        g_assert_cmpuint(id, ==, self_mntns());

        /* A zombie does not count: it has left its namespaces. */
        child_exit_unreaped(&c);
        g_assert_cmpint(mountns_find_process(ns, &unchanged), ==, -ESRCH);
        child_stop(&c);
        g_assert_cmpint(mountns_find_process(ns, &unchanged), ==, -ESRCH);
        g_assert_cmpint(mountns_find_process(0, &unchanged), ==, -EINVAL);
        g_assert_cmpint(unchanged, ==, -EBADF);
        /* The pidfd found earlier now refers to a process that is gone. */
        g_assert_cmpint(mountns_id_of_process(found, 0, &id), ==, -ESRCH);
}

/* ---- entering a namespace from a worker (nsenter.h) ------------------------------------ */

static void *hold_fs(void *userdata) {
        int fd = *(int *) userdata;
        char c;

        /* Alive, and sharing the process's fs_struct, until the pipe closes. */
        (void) !read(fd, &c, 1);
        return NULL;
}

/* In a child: a thread shares the fs_struct, as a worker's does for a moment after
 * pthread_join(); a plain setns() is refused (EINVAL), ns_enter() gets in. */
static void test_enter_with_thread(void) {
        pid_t pid = fork();
        int status;

        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                _cleanup_close_ int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
                UmError error = {};
                pthread_t t;
                int p[2];

                if (ns < 0 || pipe2(p, O_CLOEXEC) < 0 ||
                    pthread_create(&t, NULL, hold_fs, &p[0]) != 0)
                        _exit(10);
                if (setns(ns, CLONE_NEWNS) == 0 || errno != EINVAL)
                        _exit(11);
                if (ns_enter(ns, CLONE_NEWNS, "the test namespace", &error) < 0)
                        _exit(12);
                /* A failure names the namespace and the errno. */
                if (ns_enter(p[1], CLONE_NEWNS, "the pipe", &error) != -EINVAL ||
                    !strstr(error.message, "could not enter the pipe: Invalid argument"))
                        _exit(13);
                safe_close(p[1]);
                (void) pthread_join(t, NULL);
                _exit(0);
        }
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

/* ---- leftovers --------------------------------------------------------------------------- */

/* Runs a test and checks that it left no child, no fd and no mount in the test directory. */
static void run_checked(gconstpointer data) {
        void (*fn)(void) = (void (*)(void)) data;
        int fds = ku_count_fds();

        fn();
        g_assert_cmpint(waitpid(-1, NULL, WNOHANG), ==, -1);
        g_assert_cmpint(errno, ==, ECHILD);
        g_assert_cmpint(ku_count_fds(), ==, fds);
        g_assert_false(ku_mountinfo_has_path_under(0, test_dir));
}

static void add(const char *path, void (*fn)(void)) {
        g_test_add_data_func(path, (gconstpointer) fn, run_checked);
}

int main(int argc, char **argv) {
        g_autoptr(GError) err = NULL;
        g_autoptr(GDir) d = NULL;
        int r;

        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        test_dir = g_dir_make_tmp("usermount-mountns-XXXXXX", &err);
        g_assert_no_error(err);

        add("/mountns/id/self", test_id_self);
        add("/mountns/enter/with-thread", test_enter_with_thread);
        add("/mountns/id/namespaces-differ", test_id_namespaces_differ);
        add("/mountns/id/exited", test_id_exited);
        add("/mountns/id/arguments", test_id_arguments);
        add("/mountns/exists/live", test_exists_live);
        add("/mountns/exists/unmounted", test_exists_unmounted);
        add("/mountns/exists/namespace-gone", test_exists_namespace_gone);
        add("/mountns/exists/namespace-held", test_exists_namespace_held);
        add("/mountns/exists/arguments", test_exists_arguments);
        add("/mountns/userns/id-exists-find", test_user_namespace);
        add("/mountns/find/process", test_find_process);

        r = g_test_run();

        /* Every child removed its mount point; the directory must be empty now. */
        d = g_dir_open(test_dir, 0, NULL);
        g_assert_nonnull(d);
        g_assert_null(g_dir_read_name(d));
        g_assert_cmpint(rmdir(test_dir), ==, 0);
        g_free(test_dir);
        return r;
}
