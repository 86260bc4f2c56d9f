/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Attacks on the id-mapping parameters that are worth keeping as regressions.
 *
 * userns-fuse-stall: params["userns"] may be any fd. An ioctl (NS_GET_NSTYPE) on a file
 * of a FUSE filesystem is forwarded to the FUSE server (a restricted ioctl, _IO: no data),
 * and a server that never answers blocks whoever asked. The daemon used to ask in its main
 * loop, so every other caller's call went unanswered; now only the request's probe worker
 * asks, under the request's timeout. The FUSE mount here is made by root with allow_other,
 * as fusermount3 does for a user when /etc/fuse.conf has user_allow_other; the caller that
 * passes the fd is unprivileged.
 *
 * media-root-bound (docs/security.md 38): a caller whose mount namespace has another
 * directory bound over the media root calls Mount without a target. The daemon makes
 * <media-root>/<user> and the mount point there as root; in such a namespace that would be
 * inside the other directory (bwrap is setuid on some systems, and "bwrap --bind /etc
 * /run/media" would have it create root-owned directories in the host's /etc). Shown
 * twice: a namespace root made and then dropped privileges in, as a setuid sandbox does
 * (here a root-owned stand-in for /etc is bound), and a caller that is root in a user +
 * mount namespace of its own and binds a directory it owns.
 */
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define FILE_NAME "ns"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image;

static const char rules[] = CALLS_RULES_ALLOW_USER1;

/* ---- A FUSE server whose ioctls wait for the test ------------------------------------- */

/*
 * Served by a process of its own: the test process stays single-threaded, so the callers
 * it forks cannot inherit a lock a server thread held. Each ioctl writes a byte to
 * reached_fd and then waits until the test closes its end of release_fd.
 */
static int reached_fd = -EBADF, release_fd = -EBADF;

static int cb_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
        memset(st, 0, sizeof(*st));
        if (streq(path, "/")) {
                st->st_mode = S_IFDIR | 0755;
                st->st_nlink = 2;
                return 0;
        }
        if (streq(path, "/" FILE_NAME)) {
                st->st_mode = S_IFREG | 0666;
                st->st_nlink = 1;
                return 0;
        }
        return -ENOENT;
}

static int cb_open(const char *path, struct fuse_file_info *fi) {
        return streq(path, "/" FILE_NAME) ? 0 : -ENOENT;
}

static int cb_ioctl(const char *path, unsigned int cmd, void *arg, struct fuse_file_info *fi,
                    unsigned int flags, void *data) {
        char c = 0;

        (void) !write(reached_fd, "1", 1);
        /* The test's close() of the other end ends every wait at once. */
        while (read(release_fd, &c, 1) < 0 && errno == EINTR)
                ;
        return -ENOTTY;
}

static const struct fuse_operations ops = {
        .getattr = cb_getattr,
        .open = cb_open,
        .ioctl = cb_ioctl,
};

typedef struct AttackFuse {
        pid_t pid;
        int reached; /* a byte per ioctl that reached the server */
        int release; /* closed: every ioctl is answered (ENOTTY) */
} AttackFuse;

/* Mounts the server on mnt (allow_other) from a process of its own; it serves until the
 * test unmounts it. */
static void attack_fuse_start(const char *mnt, AttackFuse *ret) {
        int reached[2], release[2], ready[2];
        char c = 0;
        pid_t pid;

        g_assert_cmpint(pipe2(reached, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(release, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                char *argv[] = { (char *) "attack-fuse", (char *) "-o",
                                 (char *) "allow_other,fsname=attack-fuse", NULL };
                struct fuse_args args = FUSE_ARGS_INIT(3, argv);
                struct fuse_loop_config *config;
                struct fuse *fuse;

                /* Dies with the test (its /dev/fuse closing aborts the connection). */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                        _exit(EXIT_FAILURE);
                close(reached[0]);
                close(release[1]);
                close(ready[0]);
                reached_fd = reached[1];
                release_fd = release[0];
                fuse = fuse_new(&args, &ops, sizeof(ops), NULL);
                if (!fuse || fuse_mount(fuse, mnt) < 0)
                        _exit(EXIT_FAILURE);
                if (write(ready[1], "1", 1) != 1)
                        _exit(EXIT_FAILURE);
                config = fuse_loop_cfg_create();
                fuse_loop_cfg_set_max_threads(config, 16);
                (void) fuse_loop_mt(fuse, config);
                _exit(EXIT_SUCCESS);
        }
        close(reached[1]);
        close(release[0]);
        close(ready[1]);
        g_assert_cmpint(read(ready[0], &c, 1), ==, 1);
        close(ready[0]);
        *ret = (AttackFuse) { pid, reached[0], release[1] };
}

static void attack_fuse_release(AttackFuse *f) {
        f->release = safe_close(f->release);
}

/* Whether n ioctls reached the server within timeout_ms. */
static bool attack_fuse_wait_ioctls(AttackFuse *f, unsigned n, int timeout_ms) {
        gint64 end = g_get_monotonic_time() + timeout_ms * 1000LL;
        unsigned seen = 0;
        char c;

        while (seen < n) {
                struct pollfd p = { .fd = f->reached, .events = POLLIN };
                gint64 left = (end - g_get_monotonic_time()) / 1000;

                if (left <= 0 || poll(&p, 1, (int) left) <= 0 || read(f->reached, &c, 1) != 1)
                        return false;
                seen++;
        }
        return true;
}

/* Unmounts (the server then ends, once nothing has the file open) and reaps the server,
 * killing it (which aborts the connection) if it is not gone within HARNESS_TIMEOUT_MS. */
static void attack_fuse_stop(AttackFuse *f, const char *mnt) {
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, f->pid, 0);
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int status;

        attack_fuse_release(f);
        g_assert_cmpint(umount2(mnt, MNT_DETACH), ==, 0);
        g_assert_cmpint(pidfd, >=, 0);
        if (poll(&p, 1, HARNESS_TIMEOUT_MS) != 1)
                (void) kill(f->pid, SIGKILL);
        g_assert_cmpint(waitpid(f->pid, &status, 0), ==, f->pid);
        g_assert_true(WIFEXITED(status));
        f->reached = safe_close(f->reached);
}

/* ---- Callers ---------------------------------------------------------------------------- */

typedef struct Fuse {
        const char *file;
} Fuse;

/* Sends MountFd(image, idmap namespace, userns = the FUSE file) and does not wait. */
static int caller_send_fuse_userns(void *userdata) {
        const Fuse *f = userdata;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_close_ int source = -EBADF, ns = -EBADF;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        source = open(image, O_RDWR | O_CLOEXEC);
        ns = open(f->file, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(source, >=, 0);
        g_assert_cmpint(ns, >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, "MountFd"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "hss", source, "", ""), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "a{sv}", 2, "idmap", "s", "namespace",
                                              "userns", "h", ns), >=, 0);
        g_assert_cmpint(sd_bus_send(bus, call, NULL), >=, 0);
        g_assert_cmpint(sd_bus_flush(bus), >=, 0);
        harness_report("sent=1");
        (void) harness_await_release();
        return 0;
}

/* Another user's ListMounts, with a short timeout: does the daemon still answer? */
static int caller_list(void *userdata) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, "ListMounts"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "a{sv}", 0), >=, 0);
        r = sd_bus_call(bus, call, 5 * G_USEC_PER_SEC, &error, &reply);
        calls_report_result(r, &error);
        sd_bus_error_free(&error);
        return 0;
}

static GHashTable *list_as_user2(void) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(HARNESS_UID_USER2, HARNESS_GID_USER2, 0, caller_list, NULL,
                                       &output), ==, 0);
        g_test_message("list output:\n%s", output ?: "");
        return calls_parse_report(output);
}

static void test_userns_fuse_stall(void) {
        g_autofree char *mnt = g_build_filename(harness_tmpdir(), "attack-fuse", NULL);
        g_autofree char *file = g_build_filename(mnt, FILE_NAME, NULL);
        g_autoptr(HarnessCaller) sender = NULL;
        g_autoptr(GHashTable) during = NULL, after = NULL;
        g_autofree char *line = NULL;
        const Fuse f = { file };
        AttackFuse server;
        bool stalled;

        g_assert_cmpint(g_mkdir_with_parents(mnt, 0755), ==, 0);
        attack_fuse_start(mnt, &server);

        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             caller_send_fuse_userns, (void *) &f, &sender), ==, 0);
        g_assert_cmpint(harness_caller_read_line(sender, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_cmpstr(line, ==, "sent=1");
        /* Whether the daemon's ioctl reached the server at all (it is the attack). */
        stalled = attack_fuse_wait_ioctls(&server, 1, 5000);
        g_test_message("the daemon's ioctl reached the FUSE server: %s", stalled ? "yes" : "no");

        during = list_as_user2();

        attack_fuse_release(&server);
        after = list_as_user2();
        g_assert_cmpint(harness_caller_release(sender), ==, 0);
        g_assert_cmpint(harness_caller_wait(sender, HARNESS_CALLER_TIMEOUT_MS, NULL), ==, 0);
        attack_fuse_stop(&server, mnt);

        g_assert_cmpstr(report_get(after, "result"), ==, "ok");
        calls_assert_clean(daemon_pid, &baseline);
        /* The finding: another user's call must be answered while the FUSE server sits on
         * the ioctl. Only the attacker's own request (in its worker, with its timeout) may
         * wait on it. */
        g_assert_cmpstr(report_get(during, "result"), ==, "ok");
}

/* ---- A media root with something else bound over it ------------------------------------ */

#define MEDIA_ROOT "/run/media"

typedef struct BoundMedia {
        const char *over; /* a directory bound ... */
        const char *at;   /* ... over this one (NULL: MEDIA_ROOT) */
        bool in_userns;   /* the caller binds it itself, as root of its own user namespace */
} BoundMedia;

/* MountFd(image) without a target; in_userns: binds b->over over b->at first. */
static int caller_mount_default(void *userdata) {
        const BoundMedia *b = userdata;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_close_ int source = -EBADF;
        const char *mp;
        int r;

        if (b->in_userns)
                g_assert_cmpint(mount(b->over, b->at ?: MEDIA_ROOT, NULL, MS_BIND, NULL), ==, 0);
        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        source = open(image, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(source, >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, "MountFd"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "hss", source, "", ""), >=, 0);
        g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0 && sd_bus_message_read(reply, "s", &mp) > 0)
                harness_report("mount-point=%s", mp);
        return 0;
}

/*
 * What a setuid sandbox does: a new mount namespace made by root (owned by the initial
 * user namespace, so the daemon's user-namespace check does not apply), b->over bound
 * over b->at, then the caller runs unprivileged in it. Runs in a child of the test
 * process (which keeps its own namespace) and hands the caller's report back on a pipe.
 */
static char *run_in_root_made_namespace(const BoundMedia *b) {
        g_autoptr(GString) output = g_string_new(NULL);
        int p[2], status;
        char buf[4096];
        ssize_t n;
        pid_t pid;

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                g_autofree char *out = NULL;
                int r;

                close(p[0]);
                if (unshare(CLONE_NEWNS) < 0 ||
                    mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ||
                    mount(b->over, b->at ?: MEDIA_ROOT, NULL, MS_BIND, NULL) < 0)
                        _exit(125);
                r = harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, caller_mount_default,
                                   (void *) b, &out);
                if (out)
                        (void) !write(p[1], out, strlen(out));
                /* _exit: the harness's atexit teardown belongs to the test process. */
                _exit(r == 0 ? 0 : 1);
        }
        close(p[1]);
        while ((n = read(p[0], buf, sizeof(buf))) > 0)
                g_string_append_len(output, buf, n);
        close(p[0]);
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        return g_strdup(output->str);
}

static int compare_names(gconstpointer a, gconstpointer b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The names in dir, sorted, comma-separated. */
static char *dir_names(const char *dir) {
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        const char *n;

        g_assert_nonnull(d);
        while ((n = g_dir_read_name(d)))
                g_ptr_array_add(names, (char *) n);
        g_ptr_array_sort(names, compare_names);
        g_ptr_array_add(names, NULL);
        return g_strjoinv(",", (char **) names->pdata);
}

static void check_bound_media(const BoundMedia *b) {
        g_autofree char *output = NULL, *left = NULL;
        g_autoptr(GHashTable) t = NULL;
        struct stat st;

        if (b->in_userns)
                g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1,
                                               HARNESS_NEW_USERNS, caller_mount_default,
                                               (void *) b, &output), ==, 0);
        else
                output = run_in_root_made_namespace(b);
        g_test_message("caller output:\n%s", output);
        t = calls_parse_report(output);
        left = dir_names(b->over);
        g_test_message("%s holds: %s", b->over, left);
        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_INVALID_TARGET);
        /* Nothing was made or changed in the directory that stood in for the media root. */
        g_assert_cmpstr(left, ==, "passwd");
        g_assert_cmpint(stat(b->over, &st), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0755);
        g_assert_cmpint(getxattr(b->over, "system.posix_acl_access", NULL, 0), <, 0);
        calls_assert_clean(daemon_pid, &baseline);
}

static void test_media_root_bound(void) {
        g_autofree char *etc = g_build_filename(harness_tmpdir(), "attack-etc", NULL);
        g_autofree char *own = g_build_filename(harness_tmpdir(), "attack-own-media", NULL);
        g_autofree char *etc_file = g_build_filename(etc, "passwd", NULL);
        g_autofree char *own_file = g_build_filename(own, "passwd", NULL);
        g_autofree char *user_dir = g_build_filename(MEDIA_ROOT, HARNESS_USER1, NULL);

        g_assert_cmpint(g_mkdir_with_parents(MEDIA_ROOT, 0755), ==, 0);
        /* A stand-in for the host's /etc: root's, 0755, not empty. */
        g_assert_cmpint(g_mkdir_with_parents(etc, 0755), ==, 0);
        g_assert_true(g_file_set_contents(etc_file, "root:x:0:0::/root:/bin/sh\n", -1, NULL));
        check_bound_media(&(const BoundMedia) { .over = etc });
        /* One level down: the daemon would give <media-root>/<user> to the user. */
        g_assert_cmpint(g_mkdir_with_parents(user_dir, 0750), ==, 0);
        check_bound_media(&(const BoundMedia) { .over = etc, .at = user_dir });

        /* The caller's own directory, bound by the caller as root of its user namespace. */
        g_assert_cmpint(g_mkdir_with_parents(own, 0755), ==, 0);
        g_assert_true(g_file_set_contents(own_file, "", -1, NULL));
        g_assert_cmpint(chown(own, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        check_bound_media(&(const BoundMedia) { .over = own, .in_userns = true });
}

int main(int argc, char *argv[]) {
        const HarnessImageSpec spec = { .root_uid = 0, .root_gid = 0 };
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/attack/userns-fuse-stall", test_userns_fuse_stall);
        g_test_add_func("/attack/media-root-bound", test_media_root_bound);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
