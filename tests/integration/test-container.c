/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount mount --container=PID and unmount --container=PID, run by a user on the host
 * for a running container of theirs: a process of the user in its own user and mount
 * namespace (as 'unshare -Urm' makes), and a real rootless podman container whose root is
 * a directory made from busybox-static. The container sees the image's files owned as its
 * own users (idmap "namespace"), can write, cannot clear nosuid/nodev/noexec, and the
 * mount and its loop device go away with unmount --container or with the container.
 * Refusals: a PID that does not exist, is not the user's, is on the host; a target that is
 * missing, not empty, a symlink, not a directory. The real daemon, polkitd and loop
 * devices; nothing left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_NOSUID
#define MOUNT_ATTR_NOSUID 0x00000002
#endif
struct test_mount_attr {
        uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image;

static const char rules[] = CALLS_RULES_ALLOW_USER1;

/* ---- Running programs as a test user ---------------------------------------------------- */

typedef struct Exec {
        const char *const *argv; /* NULL-terminated; argv[0] "usermount" is the CLI */
        const char *const *envp; /* NULL: the CLI's environment */
} Exec;

static int caller_exec(void *userdata) {
        const Exec *x = userdata;
        g_autofree char *bus = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", harness_bus_address());
        const char *const cli_env[] = { bus, "HOME=/", "USER=" HARNESS_USER1,
                                        "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                        "ASAN_OPTIONS=verify_asan_link_order=0", NULL };
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_autofree char *out = NULL, *err = NULL;
        g_autoptr(GError) error = NULL;
        int status;

        for (size_t i = 0; x->argv[i]; i++)
                g_ptr_array_add(argv, (char *) (i == 0 && streq(x->argv[0], "usermount") ?
                                                g_getenv("UM_USERMOUNT") : x->argv[i]));
        g_ptr_array_add(argv, NULL);
        if (!g_spawn_sync("/", (char **) argv->pdata, (char **) (x->envp ?: cli_env),
                          G_SPAWN_SEARCH_PATH_FROM_ENVP, NULL, NULL, &out, &err, &status,
                          &error)) {
                harness_report("status=spawn");
                harness_report("output=%s", error->message);
                return 0;
        }
        harness_report("status=%d", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
        harness_report("output=%s%s", g_strstrip(out), strempty(err));
        return 0;
}

/* Runs argv as uid (and its primary group) on the host; its exit status, *ret_output what
 * it printed (stdout then stderr, newlines made spaces). */
static int run_as(uid_t uid, const char *const *argv, const char *const *envp,
                  char **ret_output) {
        g_autofree char *output = NULL;
        g_autoptr(GHashTable) t = NULL;
        const Exec x = { argv, envp };
        g_autofree char *cmd = g_strjoinv(" ", (char **) argv);

        g_assert_cmpint(harness_run_as(uid, uid, 0, caller_exec, (void *) &x, &output), ==, 0);
        t = calls_parse_report(output);
        g_test_message("$ %s\n%s", cmd, strempty(report_get(t, "output")));
        g_assert_nonnull(report_get(t, "status"));
        if (ret_output)
                *ret_output = g_strdup(strempty(report_get(t, "output")));
        return streq(report_get(t, "status"), "spawn") ? -1 : atoi(report_get(t, "status"));
}

static void assert_contains(const char *s, const char *part) {
        if (!strstr(strempty(s), part))
                g_error("'%s' lacks '%s'", strempty(s), part);
}

/* ---- A process in a user and mount namespace of its own (unshare -Urm) ------------------ */

/* What the process in the namespace checks at each release by the test. */
static char *ns_target;

static void report_stat(const char *key, const char *dir, const char *name) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        struct stat st;

        if (stat(path, &st) < 0)
                harness_report("%s=%s", key, calls_errno_name(-errno));
        else
                harness_report("%s=%u:%u", key, (unsigned) st.st_uid, (unsigned) st.st_gid);
}

static const char *is_mount_root(const char *path) {
        struct statx stx;

        if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) < 0)
                return calls_errno_name(-errno);
        return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) ? "yes" : "no";
}

/* In the namespace: owners, a write, the flags, and that they cannot be cleared. */
static void ns_check_mount(void) {
        g_autofree char *name = g_strdup_printf("written-%d.txt", (int) getpid());
        g_autofree char *written = g_build_filename(ns_target, name, NULL);
        struct test_mount_attr attr = { .attr_clr = MOUNT_ATTR_NOSUID };
        struct statvfs sv;
        int r, fd;

        harness_report("mounted=%s", is_mount_root(ns_target));
        report_stat("hello", ns_target, "hello.txt");
        report_stat("far", ns_target, "far.txt");
        fd = open(written, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        r = fd < 0 ? -errno : write(fd, "from the container\n", 19) != 19 ? -errno : 0;
        if (fd >= 0 && close(fd) < 0 && r == 0)
                r = -errno;
        harness_report("write=%s", calls_errno_name(r));
        report_stat("written", ns_target, name);
        if (statvfs(ns_target, &sv) == 0)
                harness_report("flags=%s%s%s", sv.f_flag & ST_NOSUID ? "nosuid," : "",
                               sv.f_flag & ST_NODEV ? "nodev," : "",
                               sv.f_flag & ST_NOEXEC ? "noexec" : "");
        /* Root here administers this mount namespace: a remount that keeps the flags works,
         * one that drops them does not. */
        r = mount(NULL, ns_target, NULL, MS_REMOUNT | MS_BIND, NULL) < 0 ? -errno : 0;
        harness_report("remount-clear=%s", calls_errno_name(r));
        r = syscall(SYS_mount_setattr, AT_FDCWD, ns_target, 0, &attr, sizeof(attr)) < 0 ?
                    -errno : 0;
        harness_report("setattr-clear=%s", calls_errno_name(r));
        r = mount(NULL, ns_target, NULL,
                  MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL) < 0 ?
                    -errno : 0;
        harness_report("remount-ro=%s", calls_errno_name(r));
}

/* Reports its pid, then, at each release, what the test wants seen from inside. */
static int caller_namespace(void *userdata) {
        const char *phases = userdata; /* one letter a phase: m(ount), u(nmounted), q(uit) */

        harness_report("pid=%d", (int) getpid());
        for (const char *p = phases; *p; p++) {
                if (harness_await_release() < 0)
                        return 1;
                if (*p == 'm')
                        ns_check_mount();
                else if (*p == 'u')
                        harness_report("mounted=%s", is_mount_root(ns_target));
                else if (*p == 'e')
                        harness_report("mounted=%s", is_mount_root(ns_target));
                harness_report("phase-done=%c", *p);
        }
        return 0;
}

/* In a user namespace of its own, but still in the host's mount namespace (unshare -U). */
static int caller_userns_only(void *userdata) {
        if (unshare(CLONE_NEWUSER) < 0)
                return 125;
        harness_report("pid=%d", (int) getpid());
        return harness_await_release() < 0;
}

/* Reads report lines of c up to "phase-done=..." into a table. */
static GHashTable *read_phase(HarnessCaller *c) {
        GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

        for (;;) {
                g_autofree char *line = NULL;
                char *eq;

                g_assert_cmpint(harness_caller_read_line(c, HARNESS_TIMEOUT_MS, &line), ==, 0);
                g_test_message("inside: %s", line);
                eq = strchr(line, '=');
                g_assert_nonnull(eq);
                *eq = 0;
                g_hash_table_replace(t, g_strdup(line), g_strdup(eq + 1));
                if (streq(line, "phase-done"))
                        return t;
        }
}

static pid_t spawn_namespace(uid_t uid, HarnessRunFlags flags, const char *phases,
                             HarnessCaller **ret) {
        g_autofree char *line = NULL;

        g_assert_cmpint(harness_caller_spawn(uid, uid, flags, caller_namespace, (void *) phases,
                                             ret), ==, 0);
        g_assert_cmpint(harness_caller_read_line(*ret, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_true(g_str_has_prefix(line, "pid="));
        return (pid_t) atoi(line + 4);
}

/* A directory (or file, or symlink) for the tests, owned by umtest1. */
static char *make_path(const char *name, mode_t type, const char *symlink_to) {
        g_autofree char *base = g_build_filename(harness_tmpdir(), "container", NULL);
        char *path = g_build_filename(base, name, NULL);

        g_assert_cmpint(g_mkdir_with_parents(base, 0755), ==, 0);
        if (S_ISDIR(type))
                g_assert_cmpint(g_mkdir_with_parents(path, 0755), ==, 0);
        else if (S_ISLNK(type))
                g_assert_cmpint(symlink(symlink_to, path), ==, 0);
        else
                g_assert_true(g_file_set_contents(path, "x\n", -1, NULL));
        g_assert_cmpint(lchown(path, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        return path;
}

static char *pid_str(pid_t pid) {
        return g_strdup_printf("--container=%d", (int) pid);
}

/* unshare -Urm: mount, look inside, unmount, mount again, the process exits. */
static void test_unshare(void) {
        g_autoptr(HarnessCaller) c = NULL;
        g_autofree char *opt = NULL, *out = NULL;
        g_autoptr(GHashTable) t1 = NULL, t2 = NULL, t3 = NULL;
        pid_t pid;
        int status;

        ns_target = make_path("unshare-target", S_IFDIR, NULL);
        pid = spawn_namespace(HARNESS_UID_USER1, HARNESS_NEW_USERNS, "mue", &c);
        opt = pid_str(pid);

        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount", opt,
                        image, ns_target, NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 0);
        assert_contains(out, "id-mapped (namespace: uids 0:61001:1, gids 0:61001:1)");
        /* Not in the host's namespace: the mount is the container's only. */
        g_assert_cmpstr(is_mount_root(ns_target), ==, "no");

        g_assert_cmpint(harness_caller_release(c), ==, 0);
        t1 = read_phase(c);
        g_assert_cmpstr(report_get(t1, "mounted"), ==, "yes");
        g_assert_cmpstr(report_get(t1, "hello"), ==, "0:0");
        g_assert_cmpstr(report_get(t1, "far"), ==, "65534:65534");
        g_assert_cmpstr(report_get(t1, "write"), ==, "ok");
        g_assert_cmpstr(report_get(t1, "written"), ==, "0:0");
        g_assert_cmpstr(report_get(t1, "flags"), ==, "nosuid,nodev,noexec");
        g_assert_cmpstr(report_get(t1, "remount-clear"), ==, "EPERM");
        g_assert_cmpstr(report_get(t1, "setattr-clear"), ==, "EPERM");
        g_assert_cmpstr(report_get(t1, "remount-ro"), ==, "ok");

        g_clear_pointer(&out, g_free);
        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "unmount", opt,
                        ns_target, NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 0);
        assert_contains(out, "Unmounted");
        g_assert_cmpint(harness_caller_release(c), ==, 0);
        t2 = read_phase(c);
        g_assert_cmpstr(report_get(t2, "mounted"), ==, "no");
        calls_assert_clean(daemon_pid, &baseline);

        /* Unmounting again: nothing there. */
        g_clear_pointer(&out, g_free);
        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "unmount", opt,
                        ns_target, NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 9);
        assert_contains(out, "Nothing is mounted at");

        /* Mounted again, then the process (and with it the namespace) goes away. */
        g_clear_pointer(&out, g_free);
        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount", opt,
                        image, ns_target, NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 0);
        g_assert_cmpint(harness_caller_release(c), ==, 0);
        t3 = read_phase(c);
        g_assert_cmpstr(report_get(t3, "mounted"), ==, "yes");
        g_assert_cmpint(harness_caller_wait(c, HARNESS_TIMEOUT_MS, NULL), ==, 0);
        calls_assert_clean(daemon_pid, &baseline);
        g_clear_pointer(&ns_target, g_free);
}

/* The userspace driver (a FUSE mount usermountd names "usermount"): mounted, written, and
 * taken down by unmount --container. A FUSE mount cannot be id-mapped for a namespace, so
 * usermountd refuses the default --idmap=namespace, saying so; --idmap=user makes the
 * image's root (the owner of its root directory) the user, which is the container's root. */
static void test_unshare_userspace(void) {
        g_autoptr(HarnessCaller) c = NULL;
        g_autofree char *opt = NULL, *out = NULL;
        g_autoptr(GHashTable) t1 = NULL, t2 = NULL;
        pid_t pid;
        int status;

        if (access("/usr/sbin/fuse2fs", X_OK) < 0 && access("/usr/bin/fuse2fs", X_OK) < 0) {
                g_test_skip("fuse2fs is not installed");
                return;
        }
        ns_target = make_path("userspace-target", S_IFDIR, NULL);
        pid = spawn_namespace(HARNESS_UID_USER1, HARNESS_NEW_USERNS, "mu", &c);
        opt = pid_str(pid);

        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount", opt,
                        "--driver=userspace", image, ns_target, NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 4);
        assert_contains(out, "Use idmap 'user'");
        g_clear_pointer(&out, g_free);
        calls_assert_clean(daemon_pid, &baseline);
        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount", opt,
                        "--driver=userspace", "--idmap=user", image, ns_target, NULL }, NULL,
                        &out);
        g_assert_cmpint(status, ==, 0);
        g_assert_cmpint(harness_caller_release(c), ==, 0);
        t1 = read_phase(c);
        g_assert_cmpstr(report_get(t1, "mounted"), ==, "yes");
        g_assert_cmpstr(report_get(t1, "hello"), ==, "0:0");
        /* Every file is the container's root's: it writes where the image's root wrote. */
        g_assert_cmpstr(report_get(t1, "write"), ==, "ok");
        g_assert_cmpstr(report_get(t1, "remount-clear"), ==, "EPERM");

        g_clear_pointer(&out, g_free);
        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "unmount", opt,
                        ns_target, NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 0);
        g_assert_cmpint(harness_caller_release(c), ==, 0);
        t2 = read_phase(c);
        g_assert_cmpstr(report_get(t2, "mounted"), ==, "no");
        g_assert_cmpint(harness_caller_wait(c, HARNESS_TIMEOUT_MS, NULL), ==, 0);
        calls_assert_clean(daemon_pid, &baseline);
        g_clear_pointer(&ns_target, g_free);
}

/*
 * As shipped (Driver=auto: images to the userspace driver), for a user polkit does not let
 * use the kernel's driver: the implied --idmap=namespace is refused, saying why and what
 * works, and changes nothing; --idmap=user is served by the sandboxed driver, and the
 * container's root can write.
 */
static void test_shipped_driver_auto(void) {
        static const char no_kernel_driver[] =
                "polkit.addRule(function(action, subject) {\n"
                "        if (action.id == 'org.freedesktop.usermount1.mount-kernel-driver')\n"
                "                return polkit.Result.NO;\n"
                "        return polkit.Result.NOT_HANDLED;\n"
                "});\n" CALLS_RULES_ALLOW_USER1;
        g_autoptr(HarnessCaller) c = NULL;
        g_autofree char *opt = NULL, *out = NULL;
        g_autoptr(GHashTable) t = NULL;
        pid_t pid;
        int status;

        if (access("/usr/sbin/fuse2fs", X_OK) < 0 && access("/usr/bin/fuse2fs", X_OK) < 0) {
                g_test_skip("fuse2fs is not installed");
                return;
        }
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf",
                                          "[General]\nDriver=auto\n"), ==, 0);
        g_assert_cmpint(harness_set_rules(no_kernel_driver), ==, 0);
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), >=, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        ns_target = make_path("shipped-target", S_IFDIR, NULL);
        pid = spawn_namespace(HARNESS_UID_USER1, HARNESS_NEW_USERNS, "mu", &c);
        opt = pid_str(pid);
        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount", opt,
                        "--no-ask-password", image, ns_target, NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 3);
        assert_contains(out, "mount-kernel-driver");
        assert_contains(out, "idmap 'user' can do without it");
        calls_assert_clean(daemon_pid, &baseline);

        g_clear_pointer(&out, g_free);
        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount", opt,
                        "--idmap=user", image, ns_target, NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 0);
        g_assert_cmpint(harness_caller_release(c), ==, 0);
        t = read_phase(c);
        g_assert_cmpstr(report_get(t, "mounted"), ==, "yes");
        g_assert_cmpstr(report_get(t, "hello"), ==, "0:0");
        g_assert_cmpstr(report_get(t, "write"), ==, "ok");
        g_assert_cmpstr(report_get(t, "remount-clear"), ==, "EPERM");
        /* The container stops: the mount and its driver go with it. */
        g_assert_cmpint(harness_caller_release(c), ==, 0);
        g_hash_table_unref(read_phase(c));
        g_assert_cmpint(harness_caller_wait(c, HARNESS_TIMEOUT_MS, NULL), ==, 0);
        calls_await_drivers(0);
        calls_assert_clean(daemon_pid, &baseline);
        g_clear_pointer(&ns_target, g_free);

        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", HARNESS_CONF_DEFAULT), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), >=, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
}

/* Expects usermount mount (or unmount) --container=pid ... to fail with status, saying. */
static void assert_refused(const char *verb, pid_t pid, const char *target, int expected,
                           const char *says) {
        g_autofree char *opt = pid_str(pid), *out = NULL;
        int status;

        if (streq(verb, "mount"))
                status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", verb,
                                opt, image, target, NULL }, NULL, &out);
        else
                status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", verb,
                                opt, target, NULL }, NULL, &out);
        g_assert_cmpint(status, ==, expected);
        assert_contains(out, says);
        calls_assert_clean(daemon_pid, &baseline);
}

static void test_refused_pids(void) {
        g_autoptr(HarnessCaller) host = NULL, other = NULL, userns_only = NULL;
        g_autofree char *line = NULL;
        pid_t gone, host_pid, other_pid;

        /* A process that existed and is gone. */
        gone = fork();
        g_assert_cmpint(gone, >=, 0);
        if (gone == 0)
                _exit(0);
        g_assert_cmpint(waitpid(gone, NULL, 0), ==, gone);
        assert_refused("mount", gone, "/mnt", 4, "There is no process");

        /* umtest1's own process on the host: not in a container. */
        host_pid = spawn_namespace(HARNESS_UID_USER1, 0, "q", &host);
        assert_refused("mount", host_pid, "/mnt", 4, "is not in a container");
        assert_refused("unmount", host_pid, "/mnt", 4, "is not in a container");

        /* umtest2's container, and root's process. */
        other_pid = spawn_namespace(HARNESS_UID_USER2, HARNESS_NEW_USERNS, "q", &other);
        assert_refused("mount", other_pid, "/mnt", 4, "is not yours");
        assert_refused("unmount", other_pid, "/mnt", 4, "is not yours");
        assert_refused("mount", getpid(), "/mnt", 4, "is not yours");

        /* umtest1's user namespace, but the host's mount namespace: nobody there may mount. */
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             caller_userns_only, NULL, &userns_only), ==, 0);
        g_assert_cmpint(harness_caller_read_line(userns_only, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_true(g_str_has_prefix(line, "pid="));
        assert_refused("mount", (pid_t) atoi(line + 4), "/mnt", 4,
                       "mount namespace of process");

        g_assert_cmpint(harness_caller_release(host), ==, 0);
        g_assert_cmpint(harness_caller_release(other), ==, 0);
        g_assert_cmpint(harness_caller_release(userns_only), ==, 0);
}

static void test_refused_targets(void) {
        g_autoptr(HarnessCaller) c = NULL;
        g_autofree char *full = make_path("full", S_IFDIR, NULL);
        g_autofree char *inside = g_build_filename(full, "file", NULL);
        g_autofree char *file = make_path("file", S_IFREG, NULL);
        g_autofree char *real = make_path("real", S_IFDIR, NULL);
        g_autofree char *link = make_path("link", S_IFLNK, real);
        g_autofree char *missing = g_build_filename(harness_tmpdir(), "container", "missing", NULL);
        g_autofree char *opt = NULL, *out = NULL;
        pid_t pid;

        g_assert_true(g_file_set_contents(inside, "x\n", -1, NULL));
        pid = spawn_namespace(HARNESS_UID_USER1, HARNESS_NEW_USERNS, "q", &c);
        assert_refused("mount", pid, missing, 6, "does not exist in the container");
        assert_refused("mount", pid, full, 6, "is not empty");
        assert_refused("mount", pid, file, 6, "is not a directory");
        assert_refused("mount", pid, link, 6, "symbolic link");
        assert_refused("unmount", pid, real, 9, "Nothing is mounted at");
        assert_refused("unmount", pid, "/proc", 9, "is not one of usermount's");

        /* Usage errors. */
        opt = pid_str(pid);
        g_assert_cmpint(run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount",
                        opt, image, "relative", NULL }, NULL, &out), ==, 2);
        assert_contains(out, "must be an absolute path inside the container");
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount",
                        "--container=12x", image, "/mnt", NULL }, NULL, &out), ==, 2);
        assert_contains(out, "--container needs the PID");
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount",
                        opt, image, NULL }, NULL, &out), ==, 2);
        assert_contains(out, "Missing TARGET");
        g_assert_cmpint(harness_caller_release(c), ==, 0);
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- Real rootless podman ---------------------------------------------------------------- */

typedef struct Podman {
        char *base;    /* <tmpdir>/podman: home, run, storage, rootfs */
        char *rootfs;
        char *env_home, *env_runtime;
        const char *env[5];
        /* The lock file rootless podman keeps in /dev/shm for the user, whatever its
         * configuration says; removed at the end unless it was there before. */
        char *shm_lock;
        bool shm_lock_existed;
} Podman;

static int podman(Podman *p, char **ret_output, ...) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        const char *a;
        va_list ap;

        g_ptr_array_add(argv, (char *) "podman");
        va_start(ap, ret_output);
        while ((a = va_arg(ap, const char *)))
                g_ptr_array_add(argv, (char *) a);
        va_end(ap);
        g_ptr_array_add(argv, NULL);
        return run_as(HARNESS_UID_USER1, (const char *const *) argv->pdata, p->env, ret_output);
}

static void write_file(const char *path, const char *contents) {
        g_assert_true(g_file_set_contents(path, contents, -1, NULL));
}

static void run_root(const char *const *argv) {
        int status;

        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                                   NULL, NULL, &status, NULL));
        g_assert_true(g_spawn_check_wait_status(status, NULL));
}

/*
 * This machine's cgroups are hybrid (v1 controllers, and a cgroup2 tree with a controller in
 * it at /sys/fs/cgroup/unified), which crun refuses even with --cgroups=disabled. In the
 * test's private mount namespace a tmpfs over that tree makes it plain v1, where rootless
 * containers run without cgroups.
 */
static void podman_hide_hybrid_cgroup2(void) {
        struct statfs a, b;

        if (statfs("/sys/fs/cgroup", &a) < 0 || statfs("/sys/fs/cgroup/unified", &b) < 0)
                return;
        if (a.f_type == TMPFS_MAGIC && b.f_type == CGROUP2_SUPER_MAGIC)
                g_assert_cmpint(mount("usermount-test", "/sys/fs/cgroup/unified", "tmpfs",
                                      MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555"),
                                ==, 0);
}

static void podman_setup(Podman *p) {
        static const char *const applets[] = { "sh", "sleep", "stat", "ls", "mount", "touch",
                                               "cat", "grep", "id", NULL };
        g_autofree char *conf = NULL, *bin = NULL, *s = NULL;

        p->base = g_build_filename(harness_tmpdir(), "podman", NULL);
        p->rootfs = g_build_filename(p->base, "rootfs", NULL);
        p->shm_lock = g_strdup_printf("/dev/shm/libpod_rootless_lock_%u",
                                      (unsigned) HARNESS_UID_USER1);
        p->shm_lock_existed = access(p->shm_lock, F_OK) == 0;
        conf = g_build_filename(p->base, "home", ".config", "containers", NULL);
        bin = g_build_filename(p->rootfs, "bin", NULL);
        g_assert_cmpint(g_mkdir_with_parents(conf, 0755), ==, 0);
        g_assert_cmpint(g_mkdir_with_parents(bin, 0755), ==, 0);
        s = g_build_filename(p->base, "run", NULL);
        g_assert_cmpint(g_mkdir_with_parents(s, 0700), ==, 0);
        g_clear_pointer(&s, g_free);
        s = g_build_filename(p->rootfs, "mnt", NULL);
        g_assert_cmpint(g_mkdir_with_parents(s, 0755), ==, 0);
        g_clear_pointer(&s, g_free);

        /* The root filesystem: busybox-static and its applets; no image, no registry. */
        s = g_build_filename(bin, "busybox", NULL);
        run_root((const char *const[]) { "cp", "/bin/busybox", s, NULL });
        g_clear_pointer(&s, g_free);
        for (size_t i = 0; applets[i]; i++) {
                s = g_build_filename(bin, applets[i], NULL);
                g_assert_cmpint(symlink("busybox", s), ==, 0);
                g_clear_pointer(&s, g_free);
        }

        /* Storage and engine settings of its own, all under base. */
        s = g_strdup_printf("[storage]\ndriver = \"vfs\"\ngraphroot = \"%s/storage\"\n"
                            "runroot = \"%s/run/storage\"\n", p->base, p->base);
        g_free(conf), conf = g_build_filename(p->base, "home", ".config", "containers",
                                              "storage.conf", NULL);
        write_file(conf, s);
        g_clear_pointer(&s, g_free);
        g_free(conf), conf = g_build_filename(p->base, "home", ".config", "containers",
                                              "containers.conf", NULL);
        write_file(conf, "[engine]\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"none\"\n");
        run_root((const char *const[]) { "chown", "-R", "61001:61001", p->base, NULL });

        p->env_home = g_strdup_printf("HOME=%s/home", p->base);
        p->env_runtime = g_strdup_printf("XDG_RUNTIME_DIR=%s/run", p->base);
        p->env[0] = p->env_home;
        p->env[1] = p->env_runtime;
        p->env[2] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
        p->env[3] = "USER=" HARNESS_USER1;
        p->env[4] = NULL;
}

/* How many live (not zombie) processes run as uid. */
static unsigned count_processes_of(uid_t uid) {
        g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
        const char *name;
        unsigned n = 0;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d))) {
                g_autofree char *path = g_strdup_printf("/proc/%s/status", name);
                g_autofree char *status = NULL;
                unsigned ruid;
                const char *u, *st;

                if (name[0] < '0' || name[0] > '9' ||
                    !g_file_get_contents(path, &status, NULL, NULL))
                        continue;
                u = strstr(status, "\nUid:");
                st = strstr(status, "\nState:");
                if (u && sscanf(u, "\nUid: %u", &ruid) == 1 && ruid == uid &&
                    !(st && strstr(st, "\nState:\tZ") == st)) {
                        g_test_message("left: %s", name);
                        n++;
                }
        }
        return n;
}

/* Everything podman made: the container, its pause process, its storage and run files. */
static void podman_teardown(Podman *p) {
        g_autofree char *pidfile = g_build_filename(p->base, "run", "libpod", "tmp", "pause.pid",
                                                    NULL);
        g_autofree char *pause = NULL;

        (void) podman(p, NULL, "rm", "--force", "--time", "0", "box", NULL);
        g_assert_true(g_file_get_contents(pidfile, &pause, NULL, NULL));
        g_assert_cmpint(atoi(pause), >, 0);
        g_assert_cmpint(kill(atoi(pause), SIGKILL), ==, 0);
        /* conmon goes with the container; nothing of umtest1's may be left running. */
        for (unsigned i = 0; count_processes_of(HARNESS_UID_USER1) > 0; i++) {
                g_assert_cmpuint(i, <, 100);
                g_usleep(50 * 1000);
        }
        run_root((const char *const[]) { "rm", "-rf", "--one-file-system", p->base, NULL });
        if (!p->shm_lock_existed)
                (void) unlink(p->shm_lock);
        g_free(p->shm_lock);
        g_free(p->base);
        g_free(p->rootfs);
        g_free(p->env_home);
        g_free(p->env_runtime);
}

static void test_podman(void) {
        g_autofree char *out = NULL, *opt = NULL, *pid_text = NULL;
        Podman p = {};
        pid_t pid;
        int status;
        g_autofree char *podman_path = g_find_program_in_path("podman");

        if (!podman_path || access("/bin/busybox", X_OK) < 0 ||
            access("/usr/bin/newuidmap", X_OK) < 0) {
                g_test_skip("podman, uidmap or busybox-static is not installed "
                            "(tools/install-deps installs them)");
                return;
        }
        podman_hide_hybrid_cgroup2();
        podman_setup(&p);

        status = podman(&p, &out, "run", "--detach", "--name", "box", "--cgroups=disabled",
                        "--network=none", "--cap-add=SYS_ADMIN", "--rootfs", p.rootfs,
                        "sleep", "1000", NULL);
        g_assert_cmpint(status, ==, 0);
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(podman(&p, &pid_text, "inspect", "--format", "{{.State.Pid}}", "box",
                               NULL), ==, 0);
        pid = (pid_t) atoi(pid_text);
        g_assert_cmpint(pid, >, 0);
        g_assert_cmpint(harness_kill_at_exit(pid), ==, 0);
        opt = pid_str(pid);

        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount", opt,
                        image, "/mnt", NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 0);
        assert_contains(out, "at /mnt in the container of process ");
        assert_contains(out, "id-mapped (namespace: uids 0:61001:1,1:2000000000:65536");
        g_clear_pointer(&out, g_free);

        /* Owners as the container sees them: its root, its user 1000, an id it lacks. */
        g_assert_cmpint(podman(&p, &out, "exec", "box", "stat", "-c", "%u:%g", "/mnt/hello.txt",
                               "/mnt/user.txt", "/mnt/far.txt", NULL), ==, 0);
        g_assert_cmpstr(out, ==, "0:0 1000:1000 65534:65534");
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(podman(&p, &out, "exec", "box", "sh", "-c",
                               "echo hi > /mnt/written.txt && stat -c %u:%g /mnt/written.txt",
                               NULL), ==, 0);
        g_assert_cmpstr(out, ==, "0:0");
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(podman(&p, &out, "exec", "box", "grep", " /mnt ", "/proc/mounts", NULL),
                        ==, 0);
        assert_contains(out, "nosuid,nodev,noexec");
        g_clear_pointer(&out, g_free);
        /* The container's root has CAP_SYS_ADMIN over its mounts, and still cannot clear
         * the locked flags; a remount that keeps them is allowed. */
        g_assert_cmpint(podman(&p, &out, "exec", "box", "mount", "-o", "remount,bind,suid,dev,exec",
                               "/mnt", NULL), !=, 0);
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(podman(&p, &out, "exec", "box", "mount", "-o",
                               "remount,bind,ro,nosuid,nodev,noexec", "/mnt", NULL), ==, 0);
        g_clear_pointer(&out, g_free);

        /* The container's own /dev/shm is nosuid and nodev too, but not usermount's. */
        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "unmount", opt,
                        "/dev/shm", NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 9);
        assert_contains(out, "is not one of usermount's");
        g_clear_pointer(&out, g_free);

        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "unmount", opt,
                        "/mnt", NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 0);
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(podman(&p, &out, "exec", "box", "grep", " /mnt ", "/proc/mounts", NULL),
                        !=, 0);
        g_clear_pointer(&out, g_free);
        calls_assert_clean(daemon_pid, &baseline);

        /* Mounted again, then the container stops. */
        status = run_as(HARNESS_UID_USER1, (const char *const[]) { "usermount", "mount", opt,
                        image, "/mnt", NULL }, NULL, &out);
        g_assert_cmpint(status, ==, 0);
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(podman(&p, &out, "stop", "--time", "0", "box", NULL), ==, 0);
        calls_assert_clean(daemon_pid, &baseline);

        podman_teardown(&p);
}

int main(int argc, char *argv[]) {
        const HarnessEntry entries[] = {
                { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644, 0, 0 },
                { HARNESS_ENTRY_FILE, "user.txt", "user\n", 0644, 1000, 1000 },
                { HARNESS_ENTRY_FILE, "far.txt", "far\n", 0644, 70000, 70000 },
                { 0 },
        };
        const HarnessImageSpec spec = { .label = "container", .entries = entries };

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path() || !g_getenv("UM_USERMOUNT")) {
                printf("1..0 # SKIP usermountd or usermount was not built\n");
                return 0;
        }
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/container/unshare", test_unshare);
        g_test_add_func("/container/unshare-userspace", test_unshare_userspace);
        g_test_add_func("/container/shipped-driver-auto", test_shipped_driver_auto);
        g_test_add_func("/container/refused-pids", test_refused_pids);
        g_test_add_func("/container/refused-targets", test_refused_targets);
        g_test_add_func("/container/podman", test_podman);
        return g_test_run();
}
