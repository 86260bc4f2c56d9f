/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libusermount end to end: every public function against the real daemon, polkitd and
 * loop devices, called by unprivileged callers as a desktop or container tool would:
 * the client and its properties, MountFd with every option setter and every info getter,
 * ListMounts, Unmount, OpenMount in a user namespace, the monitor with its event-loop
 * interface, its blocking run and across a restart of usermountd, the errors (name,
 * message, errno, kind) of refused, unauthorized and unknown requests, and the example
 * program of libusermount(3).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"
#include "usermount.h"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image;

/* umtest1 may do anything, umtest2 nothing; the admin could after authenticating. */
static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (subject.user == 'umtest1')\n"
        "                return polkit.Result.YES;\n"
        "        if (subject.user == 'umtestadm')\n"
        "                return polkit.Result.AUTH_SELF;\n"
        "        return polkit.Result.NO;\n"
        "});\n";

/* ---- In the callers ------------------------------------------------------------------- */

/* "ok" or the errno's name of a library result (calls_errno_name() reads errno for -1). */
static const char *errname(int r) {
        return r >= 0 ? "ok" : strerrorname_np(-r) ?: "unknown";
}

/* Reports "<prefix>-r", and the error's name, message and kind when the call failed. */
static void report_result(usermount_client *c, const char *prefix, int r) {
        const char *name = NULL, *message = NULL;

        harness_report("%s-r=%s", prefix, errname(r));
        if (usermount_client_get_error(c, &name, &message) >= 0) {
                harness_report("%s-name=%s", prefix, name);
                harness_report("%s-message=%s", prefix, message);
                harness_report("%s-kind=%d", prefix, (int) usermount_error_kind_from_name(name));
        } else
                harness_report("%s-name=none", prefix);
}

static void report_info(const char *prefix, const usermount_info *info) {
        const char *const *attributes = usermount_info_get_attributes(info);
        g_autofree char *joined = g_strjoinv(",", (char **) attributes);
        uint32_t uid = 0;
        int r;

        harness_report("%s-mount-point=%s", prefix, strempty(usermount_info_get_mount_point(info)));
        harness_report("%s-device=%s", prefix, strempty(usermount_info_get_device(info)));
        harness_report("%s-backing-file=%s", prefix, strempty(usermount_info_get_backing_file(info)));
        harness_report("%s-fstype=%s", prefix, strempty(usermount_info_get_fstype(info)));
        harness_report("%s-label=%s", prefix, strempty(usermount_info_get_label(info)));
        harness_report("%s-uuid=%s", prefix, strempty(usermount_info_get_uuid(info)));
        harness_report("%s-options=%s", prefix, strempty(usermount_info_get_options(info)));
        harness_report("%s-driver=%s", prefix, strempty(usermount_info_get_driver(info)));
        harness_report("%s-idmap=%s", prefix, strempty(usermount_info_get_idmap(info)));
        harness_report("%s-uid-map=%s", prefix, strempty(usermount_info_get_idmap_uid_map(info)));
        harness_report("%s-gid-map=%s", prefix, strempty(usermount_info_get_idmap_gid_map(info)));
        harness_report("%s-attributes=%s", prefix, joined);
        harness_report("%s-has-ro=%d", prefix, usermount_info_has_attribute(info, "ro"));
        harness_report("%s-has-bogus=%d", prefix, usermount_info_has_attribute(info, "bogus"));
        harness_report("%s-mount-id=%s", prefix, usermount_info_get_mount_id(info) > 0 ? "set" : "0");
        harness_report("%s-partition=%u", prefix, usermount_info_get_partition(info));
        r = usermount_info_get_owner_uid(info, &uid);
        harness_report("%s-owner-uid=%s", prefix, r < 0 ? calls_errno_name(r) : "");
        if (r >= 0)
                harness_report("%s-owner-uid=%u", prefix, uid);
        harness_report("%s-created=%s", prefix,
                       usermount_info_get_created_usec(info) > 0 ? "set" : "0");
        harness_report("%s-json=%s", prefix, strempty(usermount_info_get_json(info)));
}

/* The client, its connection and the properties. */
static int caller_client(void *userdata) {
        usermount_client *c = NULL;
        char *version = NULL, **filesystems = NULL;
        int r;

        harness_report("new=%s", calls_errno_name(usermount_client_new(&c)));
        harness_report("connected=%d", usermount_client_is_connected(c));
        harness_report("fds=%d", usermount_client_can_pass_fds(c));
        harness_report("auth-bad=%s", calls_errno_name(usermount_client_set_auth(c, 42)));
        harness_report("auth-tty=%s", calls_errno_name(usermount_client_set_auth(c, USERMOUNT_AUTH_TTY_AGENT)));
        harness_report("timeout=%s", calls_errno_name(usermount_client_set_timeout(c, 30 * 1000000ULL)));
        r = usermount_get_version(c, &version);
        harness_report("version-r=%s", calls_errno_name(r));
        harness_report("version=%s", strempty(version));
        r = usermount_get_supported_filesystems(c, &filesystems);
        harness_report("filesystems-r=%s", calls_errno_name(r));
        if (r >= 0) {
                g_autofree char *joined = g_strjoinv(",", filesystems);
                harness_report("filesystems=,%s,", joined);
        }
        harness_report("error-after-success=%s",
                       calls_errno_name(usermount_client_get_error(c, NULL, NULL)));
        harness_report("auth-result=%d", (int) usermount_client_get_auth_result(c, NULL));
        free(version);
        usermount_strv_free(filesystems);
        harness_report("unref=%s", usermount_client_unref(c) ? "object" : "null");
        harness_report("unref-null=%s", usermount_client_unref(NULL) ? "object" : "null");
        return 0;
}

typedef struct MountFdCall {
        const char *target;
} MountFdCall;

/* MountFd with every setter that applies, then ListMounts and Unmount (twice). */
static int caller_mount_fd(void *userdata) {
        const MountFdCall *call = userdata;
        usermount_client *c = NULL;
        usermount_options *o = NULL;
        usermount_info *info = NULL, **infos = NULL;
        char *mount_point = NULL;
        _cleanup_close_ int fd = open(image, O_RDWR | O_CLOEXEC);
        size_t n = 0;
        int r;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(usermount_client_new(&c), ==, 0);
        g_assert_cmpint(usermount_options_new(&o), ==, 0);
        g_assert_cmpint(usermount_options_set_fstype(o, "ext4"), ==, 0);
        g_assert_cmpint(usermount_options_set_fs_options(o, "noatime"), ==, 0);
        harness_report("target-relative=%s",
                       calls_errno_name(usermount_options_set_target(o, "relative/dir")));
        harness_report("fstype-bad-utf8=%s",
                       calls_errno_name(usermount_options_set_fstype(o, "\xff")));
        g_assert_cmpint(usermount_options_set_target(o, call->target), ==, 0);
        g_assert_cmpint(usermount_options_set_read_only(o, 1), ==, 0);
        g_assert_cmpint(usermount_options_set_exec(o, 0), ==, 0);
        g_assert_cmpint(usermount_options_set_idmap(o, "user"), ==, 0);
        g_assert_cmpint(usermount_options_set_driver(o, "kernel"), ==, 0);
        g_assert_cmpint(usermount_options_set_partition(o, 0), ==, 0);

        r = usermount_mount_fd(c, fd, o, &mount_point, &info);
        report_result(c, "mount", r);
        if (r < 0)
                return 0;
        harness_report("mount-point=%s", mount_point);
        report_info("info", info);

        r = usermount_list(c, &infos, &n);
        report_result(c, "list", r);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (streq_ptr(usermount_info_get_mount_point(infos[i]), mount_point))
                        report_info("listed", infos[i]);
        usermount_info_list_free(infos, n);

        /* A file open on the mount keeps it busy: refused, then lazily detached by force. */
        g_autofree char *hello = g_build_filename(mount_point, "hello.txt", NULL);
        _cleanup_close_ int busy = open(hello, O_RDONLY | O_CLOEXEC);
        harness_report("busy-open=%s", errname(busy < 0 ? -errno : 0));
        report_result(c, "busy", usermount_unmount(c, mount_point, 0));
        report_result(c, "unmount", usermount_unmount(c, mount_point, USERMOUNT_UNMOUNT_FORCE));
        busy = safe_close(busy);
        report_result(c, "unmount-flags", usermount_unmount(c, mount_point, 0x100));
        report_result(c, "unmount-again", usermount_unmount(c, mount_point, USERMOUNT_UNMOUNT_FORCE));

        free(mount_point);
        usermount_info_free(info);
        usermount_options_free(o);
        usermount_client_unref(c);
        return 0;
}

/* OpenMount in the caller's own user and mount namespace; attached with move_mount(). */
static int caller_open_mount(void *userdata) {
        const char *target = userdata;
        usermount_client *c = NULL;
        usermount_options *o = NULL;
        usermount_info *info = NULL;
        _cleanup_close_ int fd = open(image, O_RDONLY | O_CLOEXEC), mount_fd = -EBADF,
                userns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        g_autofree char *hello = g_build_filename(target, "hello.txt", NULL);
        struct stat st;
        int r;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(usermount_client_new(&c), ==, 0);
        g_assert_cmpint(usermount_options_new(&o), ==, 0);
        g_assert_cmpint(usermount_options_set_idmap(o, "namespace"), ==, 0);
        g_assert_cmpint(usermount_options_set_userns_fd(o, userns), ==, 0);
        /* The options hold a copy: ours may go. */
        userns = safe_close(userns);

        r = usermount_open_mount(c, fd, o, &mount_fd, &info);
        report_result(c, "open", r);
        if (r < 0)
                return 0;
        harness_report("cloexec=%d", (fcntl(mount_fd, F_GETFD) & FD_CLOEXEC) != 0);
        report_info("info", info);
        r = move_mount(mount_fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH);
        harness_report("move=%s", calls_errno_name(r < 0 ? -errno : 0));
        mount_fd = safe_close(mount_fd);
        if (stat(hello, &st) == 0)
                harness_report("hello=%u:%u", (unsigned) st.st_uid, (unsigned) st.st_gid);
        /* Detached: usermountd's worker may still be closing its copy of the mount fd. */
        harness_report("umount=%s", calls_errno_name(umount2(target, MNT_DETACH) < 0 ? -errno : 0));

        usermount_info_free(info);
        usermount_options_free(o);
        usermount_client_unref(c);
        return 0;
}

/* Refused requests: the error's name and message reach the caller, with an errno. */
static int caller_errors(void *userdata) {
        const char *target = userdata;
        usermount_client *c = NULL;
        usermount_options *o = NULL;
        _cleanup_close_ int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
                fd = open(image, O_RDONLY | O_CLOEXEC);
        char *mount_point = NULL;
        int mount_fd = -EBADF;

        g_assert_cmpint(usermount_client_new(&c), ==, 0);
        g_assert_cmpint(usermount_options_new(&o), ==, 0);

        report_result(c, "dir-fd", usermount_mount_fd(c, dir, NULL, &mount_point, NULL));
        report_result(c, "dir-open", usermount_open_mount(c, dir, o, &mount_fd, NULL));
        /* Arguments refused here forget the last error: nothing was sent. */
        report_result(c, "negative-fd", usermount_mount_fd(c, -1, o, NULL, NULL));
        report_result(c, "device", usermount_mount(c, "/dev/null", o, &mount_point, NULL));
        report_result(c, "device-empty", usermount_mount(c, "", o, &mount_point, NULL));
        g_assert_cmpint(usermount_options_set_idmap(o, "bogus"), ==, 0);
        report_result(c, "idmap", usermount_mount_fd(c, fd, o, &mount_point, NULL));
        g_assert_cmpint(usermount_options_set_idmap(o, NULL), ==, 0);
        g_assert_cmpint(usermount_options_set_fs_options(o, "dev"), ==, 0);
        report_result(c, "option", usermount_mount_fd(c, fd, o, &mount_point, NULL));
        g_assert_cmpint(usermount_options_set_fs_options(o, NULL), ==, 0);
        g_assert_cmpint(usermount_options_set_fstype(o, "xfs"), ==, 0);
        report_result(c, "fstype", usermount_mount_fd(c, fd, o, &mount_point, NULL));
        g_assert_cmpint(usermount_options_set_fstype(o, NULL), ==, 0);
        g_assert_cmpint(usermount_options_set_target(o, target), ==, 0);
        report_result(c, "target", usermount_mount_fd(c, fd, o, &mount_point, NULL));
        report_result(c, "not-mounted", usermount_unmount(c, "/nonexistent", 0));
        g_assert_null(mount_point);
        g_assert_cmpint(mount_fd, <, 0);

        usermount_options_free(o);
        usermount_client_unref(c);
        return 0;
}

/* Not authorized: polkit says no, or wants a password that nobody may be asked for. */
static int caller_not_authorized(void *userdata) {
        usermount_client *c = NULL;
        _cleanup_close_ int fd = open(image, O_RDONLY | O_CLOEXEC);
        int agent_error = 0, r;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(usermount_client_new(&c), ==, 0);

        report_result(c, "none", usermount_mount_fd(c, fd, NULL, NULL, NULL));
        harness_report("none-auth=%d", (int) usermount_client_get_auth_result(c, NULL));

        g_assert_cmpint(usermount_client_set_auth(c, USERMOUNT_AUTH_TTY_AGENT), ==, 0);
        r = usermount_mount_fd(c, fd, NULL, NULL, NULL);
        report_result(c, "tty", r);
        harness_report("tty-auth=%d", (int) usermount_client_get_auth_result(c, &agent_error));
        harness_report("tty-agent-error=%d", agent_error);
        harness_report("stdin-tty=%d", isatty(STDIN_FILENO));

        g_assert_cmpint(usermount_client_set_auth(c, USERMOUNT_AUTH_ALLOW_INTERACTIVE), ==, 0);
        report_result(c, "interactive", usermount_mount_fd(c, fd, NULL, NULL, NULL));
        harness_report("interactive-auth=%d", (int) usermount_client_get_auth_result(c, NULL));

        usermount_client_unref(c);
        return 0;
}

typedef struct Events {
        GString *seen;
        const char *stop_at; /* "removed": stop usermount_monitor_run() there */
} Events;

static int on_event(usermount_monitor *m, usermount_event event, const char *mount_point,
                    const usermount_info *info, void *userdata) {
        Events *e = userdata;

        g_string_append_printf(e->seen, "%s %s %s;",
                               event == USERMOUNT_EVENT_ADDED ? "added" : "removed",
                               strempty(mount_point), strempty(usermount_info_get_fstype(info)));
        if (e->stop_at && event == USERMOUNT_EVENT_REMOVED)
                return -ECANCELED;
        return 0;
}

/* The monitor: the event-loop interface for MountAdded, the blocking run for MountRemoved. */
static int caller_monitor(void *userdata) {
        const char *target = userdata;
        usermount_client *c = NULL, *watcher = NULL;
        usermount_monitor *m = NULL;
        usermount_options *o = NULL;
        g_autoptr(GString) seen = g_string_new("");
        Events events = { .seen = seen };
        _cleanup_close_ int fd = open(image, O_RDWR | O_CLOEXEC);
        char *mount_point = NULL;
        uint64_t timeout = 0;
        int r;

        g_assert_cmpint(usermount_client_new(&watcher), ==, 0);
        g_assert_cmpint(usermount_client_new(&c), ==, 0);
        r = usermount_monitor_new(watcher, on_event, &events, &m);
        harness_report("monitor=%s", calls_errno_name(r));
        if (r < 0)
                return 0;
        /* The monitor holds its own reference to the client. */
        watcher = usermount_client_unref(watcher);
        harness_report("fd=%s", usermount_monitor_get_fd(m) >= 0 ? "ok" : "bad");
        /* 0 when messages are already queued: process() without waiting. */
        harness_report("events=%s", errname(usermount_monitor_get_events(m)));
        harness_report("timeout=%s", calls_errno_name(usermount_monitor_get_timeout(m, &timeout)));

        g_assert_cmpint(usermount_options_new(&o), ==, 0);
        g_assert_cmpint(usermount_options_set_target(o, target), ==, 0);
        r = usermount_mount_fd(c, fd, o, &mount_point, NULL);
        report_result(c, "mount", r);
        if (r < 0)
                return 0;

        /* An event loop of our own: poll() the fd, then process. */
        for (int i = 0; i < 100 && !strstr(seen->str, "added"); i++) {
                struct pollfd p = { .fd = usermount_monitor_get_fd(m),
                                    .events = (short) usermount_monitor_get_events(m) };

                (void) poll(&p, 1, 100);
                r = usermount_monitor_process(m);
                if (r < 0)
                        break;
        }
        harness_report("after-add=%s", seen->str);

        report_result(c, "unmount", usermount_unmount(c, mount_point, 0));
        events.stop_at = "removed";
        harness_report("run=%s", calls_errno_name(usermount_monitor_run(m)));
        harness_report("after-remove=%s", seen->str);
        harness_report("wait-after-stop=%s", calls_errno_name(usermount_monitor_wait(m, 1000)));

        free(mount_point);
        usermount_options_free(o);
        harness_report("free=%s", usermount_monitor_free(m) ? "object" : "null");
        usermount_client_unref(c);
        return 0;
}

static int on_restart_event(usermount_monitor *m, usermount_event event, const char *mount_point,
                            const usermount_info *info, void *userdata) {
        return event == USERMOUNT_EVENT_RESUBSCRIBED ? -ECANCELED : 0;
}

/* A monitor across a restart of usermountd: it subscribes again and says so. */
static int caller_restart(void *userdata) {
        usermount_client *c = NULL;
        usermount_monitor *m = NULL;
        int r = -ETIMEDOUT;

        g_assert_cmpint(usermount_client_new(&c), ==, 0);
        g_assert_cmpint(usermount_monitor_new(c, on_restart_event, NULL, &m), ==, 0);
        harness_report("ready=1");
        if (harness_await_release() < 0)
                return 1;
        for (int i = 0; i < 100 && r == -ETIMEDOUT; i++) {
                r = usermount_monitor_wait(m, 100 * 1000);
                if (r >= 0)
                        r = -ETIMEDOUT;
        }
        harness_report("restart=%s", errname(r));
        usermount_monitor_free(m);
        usermount_client_unref(c);
        return 0;
}

static int on_any_event(usermount_monitor *m, usermount_event event, const char *mount_point,
                        const usermount_info *info, void *userdata) {
        GString *seen = userdata;

        g_string_append_printf(seen, "%s %s;",
                               event == USERMOUNT_EVENT_ADDED ? "added" :
                               event == USERMOUNT_EVENT_REMOVED ? "removed" : "resubscribed",
                               strempty(mount_point));
        return 0;
}

/*
 * A monitor to whose connection another peer sends MountAdded, MountRemoved and
 * NameOwnerChanged of its own (any peer may send a signal to one connection): it hears
 * none of them, then the real ones of a mount and an unmount.
 */
static int caller_forged(void *userdata) {
        const char *target = userdata;
        usermount_client *c = NULL;
        usermount_monitor *m = NULL;
        usermount_options *o = NULL;
        g_autoptr(GString) seen = g_string_new("");
        _cleanup_close_ int fd = open(image, O_RDWR | O_CLOEXEC);
        char *mount_point = NULL;

        g_assert_cmpint(usermount_client_new(&c), ==, 0);
        g_assert_cmpint(usermount_monitor_new(c, on_any_event, seen, &m), ==, 0);
        harness_report("ready=%d", (int) getpid());
        if (harness_await_release() < 0)
                return 1;
        /* The forged signals were sent before the release: they are here by now. */
        for (int i = 0; i < 5; i++)
                (void) usermount_monitor_wait(m, 100 * 1000);
        harness_report("forged=%s", seen->str);

        g_assert_cmpint(usermount_options_new(&o), ==, 0);
        g_assert_cmpint(usermount_options_set_target(o, target), ==, 0);
        report_result(c, "mount", usermount_mount_fd(c, fd, o, &mount_point, NULL));
        report_result(c, "unmount", mount_point ? usermount_unmount(c, mount_point, 0) : -EINVAL);
        for (int i = 0; i < 100 && !strstr(seen->str, "removed"); i++)
                (void) usermount_monitor_wait(m, 100 * 1000);
        harness_report("real=%s", seen->str);
        free(mount_point);
        usermount_options_free(o);
        usermount_monitor_free(m);
        usermount_client_unref(c);
        return 0;
}

/* The example of libusermount(3), as built in the test suite. */
static int caller_example(void *userdata) {
        const char *target = userdata;
        g_autofree char *out = NULL, *err = NULL;
        const char *argv[] = { g_getenv("UM_LIBUSERMOUNT_EXAMPLE"), image, target, NULL };
        g_autoptr(GError) error = NULL;
        int status;

        if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                          &status, &error)) {
                harness_report("spawn=%s", error->message);
                return 0;
        }
        harness_report("status=%d", WIFEXITED(status) ? WEXITSTATUS(status) : 255);
        harness_report("output=%s%s", g_strstrip(out), g_strstrip(err));
        return 0;
}

/* ---- The test side --------------------------------------------------------------------- */

static char *make_dir(const char *name, uid_t uid, gid_t gid) {
        char *dir = g_build_filename(harness_tmpdir(), "libusermount", name, NULL);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, uid, gid), ==, 0);
        return dir;
}

static GHashTable *run_as(uid_t uid, gid_t gid, HarnessRunFlags flags, HarnessCallerFunc func,
                          void *userdata) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, gid, flags, func, userdata, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

static GHashTable *run(HarnessRunFlags flags, HarnessCallerFunc func, void *userdata) {
        return run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, flags, func, userdata);
}

static void assert_contains(const char *s, const char *part) {
        if (!strstr(strempty(s), part))
                g_error("'%s' lacks '%s'", strempty(s), part);
}

static void test_client(void) {
        g_autoptr(GHashTable) t = run(0, caller_client, NULL);

        g_assert_cmpstr(report_get(t, "new"), ==, "ok");
        g_assert_cmpstr(report_get(t, "connected"), ==, "1");
        g_assert_cmpstr(report_get(t, "fds"), ==, "1");
        g_assert_cmpstr(report_get(t, "auth-bad"), ==, "EINVAL");
        g_assert_cmpstr(report_get(t, "auth-tty"), ==, "ok");
        g_assert_cmpstr(report_get(t, "timeout"), ==, "ok");
        g_assert_cmpstr(report_get(t, "version-r"), ==, "ok");
        g_assert_cmpstr(report_get(t, "version"), ==, PACKAGE_VERSION);
        g_assert_cmpstr(report_get(t, "filesystems-r"), ==, "ok");
        assert_contains(report_get(t, "filesystems"), ",ext4,");
        g_assert_cmpstr(report_get(t, "error-after-success"), ==, "ENODATA");
        g_assert_cmpstr(report_get(t, "auth-result"), ==, "0");
        g_assert_cmpstr(report_get(t, "unref"), ==, "null");
        g_assert_cmpstr(report_get(t, "unref-null"), ==, "null");
        calls_assert_clean(daemon_pid, &baseline);
}

static void assert_error(GHashTable *t, const char *prefix, const char *name,
                         const char *errno_name, usermount_error_kind kind);

static void test_mount_fd(void) {
        g_autofree char *dir = make_dir("mount-fd", HARNESS_UID_USER1, HARNESS_GID_USER1);
        const MountFdCall call = { .target = dir };
        g_autoptr(GHashTable) t = run(0, caller_mount_fd, (void *) &call);

        g_assert_cmpstr(report_get(t, "target-relative"), ==, "EINVAL");
        g_assert_cmpstr(report_get(t, "fstype-bad-utf8"), ==, "EINVAL");
        g_assert_cmpstr(report_get(t, "mount-r"), ==, "ok");
        g_assert_cmpstr(report_get(t, "mount-name"), ==, "none");
        g_assert_cmpstr(report_get(t, "mount-point"), ==, dir);
        g_assert_cmpstr(report_get(t, "info-mount-point"), ==, dir);
        g_assert_true(g_str_has_prefix(report_get(t, "info-device"), "/dev/loop"));
        g_assert_cmpstr(report_get(t, "info-backing-file"), ==, image);
        g_assert_cmpstr(report_get(t, "info-fstype"), ==, "ext4");
        g_assert_cmpstr(report_get(t, "info-label"), ==, "libum");
        g_assert_cmpuint(strlen(report_get(t, "info-uuid")), ==, 36);
        g_assert_cmpstr(report_get(t, "info-options"), !=, "");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "kernel");
        g_assert_cmpstr(report_get(t, "info-idmap"), ==, "user");
        g_assert_cmpstr(report_get(t, "info-uid-map"), ==, "0:61001:1");
        g_assert_cmpstr(report_get(t, "info-gid-map"), ==, "0:61001:1");
        assert_contains(report_get(t, "info-attributes"), "nodev");
        assert_contains(report_get(t, "info-attributes"), "nosuid");
        assert_contains(report_get(t, "info-attributes"), "noexec");
        assert_contains(report_get(t, "info-attributes"), "ro");
        g_assert_cmpstr(report_get(t, "info-has-ro"), ==, "1");
        g_assert_cmpstr(report_get(t, "info-has-bogus"), ==, "0");
        g_assert_cmpstr(report_get(t, "info-mount-id"), ==, "set");
        g_assert_cmpstr(report_get(t, "info-partition"), ==, "0");
        g_assert_cmpstr(report_get(t, "info-owner-uid"), ==, "ENODATA");
        g_assert_cmpstr(report_get(t, "info-created"), ==, "0");
        assert_contains(report_get(t, "info-json"), "\"fstype\":\"ext4\"");
        assert_contains(report_get(t, "info-json"), "\"attributes\":[");
        g_assert_true(g_str_has_prefix(report_get(t, "info-json"), "{\"mount-point\":"));
        /* ListMounts adds the owner and the time. */
        g_assert_cmpstr(report_get(t, "list-r"), ==, "ok");
        g_assert_cmpstr(report_get(t, "listed-mount-point"), ==, dir);
        g_assert_cmpstr(report_get(t, "listed-owner-uid"), ==, "61001");
        g_assert_cmpstr(report_get(t, "listed-created"), ==, "set");
        g_assert_cmpstr(report_get(t, "listed-fstype"), ==, "ext4");
        assert_contains(report_get(t, "listed-json"), "\"owner-uid\":61001");
        g_assert_cmpstr(report_get(t, "busy-open"), ==, "ok");
        assert_error(t, "busy", UM_ERROR_DEVICE_BUSY, "EBUSY", USERMOUNT_ERROR_DEVICE_BUSY);
        g_assert_cmpstr(report_get(t, "unmount-r"), ==, "ok");
        g_assert_cmpstr(report_get(t, "unmount-flags-r"), ==, "EINVAL");
        g_assert_cmpstr(report_get(t, "unmount-flags-name"), ==, "none");
        g_assert_cmpstr(report_get(t, "unmount-again-r"), ==, "ENOENT");
        g_assert_cmpstr(report_get(t, "unmount-again-name"), ==, UM_ERROR_NOT_MOUNTED);
        g_assert_cmpint(atoi(report_get(t, "unmount-again-kind")), ==, USERMOUNT_ERROR_NOT_MOUNTED);
        g_assert_cmpuint(strlen(report_get(t, "unmount-again-message")), >, 10);
        calls_assert_clean(daemon_pid, &baseline);
}

static void test_open_mount(void) {
        g_autofree char *dir = make_dir("open-mount", HARNESS_UID_USER1, HARNESS_GID_USER1);
        g_autoptr(GHashTable) t = run(HARNESS_NEW_USERNS, caller_open_mount, dir);

        g_assert_cmpstr(report_get(t, "open-r"), ==, "ok");
        g_assert_cmpstr(report_get(t, "cloexec"), ==, "1");
        g_assert_cmpstr(report_get(t, "info-mount-point"), ==, "");
        g_assert_cmpstr(report_get(t, "info-fstype"), ==, "ext4");
        g_assert_cmpstr(report_get(t, "info-idmap"), ==, "namespace");
        g_assert_cmpstr(report_get(t, "info-uid-map"), ==, "0:61001:1");
        g_assert_cmpstr(report_get(t, "info-has-ro"), ==, "1");
        g_assert_cmpstr(report_get(t, "move"), ==, "ok");
        g_assert_cmpstr(report_get(t, "hello"), ==, "0:0");
        g_assert_cmpstr(report_get(t, "umount"), ==, "ok");
        calls_assert_clean(daemon_pid, &baseline);
}

/* "prefix" failed with the D-Bus error name and the errno. */
static void assert_error(GHashTable *t, const char *prefix, const char *name, const char *errno_name,
                         usermount_error_kind kind) {
        g_autofree char *r = g_strconcat(prefix, "-r", NULL);
        g_autofree char *n = g_strconcat(prefix, "-name", NULL);
        g_autofree char *m = g_strconcat(prefix, "-message", NULL);
        g_autofree char *k = g_strconcat(prefix, "-kind", NULL);

        g_assert_cmpstr(report_get(t, n), ==, name);
        g_assert_cmpstr(report_get(t, r), ==, errno_name);
        g_assert_cmpuint(strlen(strempty(report_get(t, m))), >, 10);
        g_assert_cmpint(atoi(strempty(report_get(t, k))), ==, kind);
}

static void test_errors(void) {
        g_autofree char *dir = make_dir("errors-not-mine", 0, 0);
        g_autoptr(GHashTable) t = run(0, caller_errors, dir);

        assert_error(t, "dir-fd", UM_ERROR_INVALID_SOURCE, "EINVAL", USERMOUNT_ERROR_INVALID_SOURCE);
        assert_error(t, "dir-open", UM_ERROR_INVALID_SOURCE, "EINVAL", USERMOUNT_ERROR_INVALID_SOURCE);
        g_assert_cmpstr(report_get(t, "negative-fd-r"), ==, "EINVAL");
        g_assert_cmpstr(report_get(t, "negative-fd-name"), ==, "none");
        assert_error(t, "device", UM_ERROR_INVALID_SOURCE, "EINVAL", USERMOUNT_ERROR_INVALID_SOURCE);
        g_assert_cmpstr(report_get(t, "device-empty-r"), ==, "EINVAL");
        g_assert_cmpstr(report_get(t, "device-empty-name"), ==, "none");
        assert_error(t, "idmap", UM_ERROR_INVALID_ARGUMENT, "EINVAL", USERMOUNT_ERROR_INVALID_ARGUMENT);
        assert_error(t, "option", UM_ERROR_OPTION_NOT_ALLOWED, "EPERM",
                     USERMOUNT_ERROR_OPTION_NOT_ALLOWED);
        assert_error(t, "fstype", UM_ERROR_FILESYSTEM_NOT_ALLOWED, "EMEDIUMTYPE",
                     USERMOUNT_ERROR_FILESYSTEM_NOT_ALLOWED);
        assert_error(t, "target", UM_ERROR_INVALID_TARGET, "ENOTDIR", USERMOUNT_ERROR_INVALID_TARGET);
        assert_error(t, "not-mounted", UM_ERROR_NOT_MOUNTED, "ENOENT", USERMOUNT_ERROR_NOT_MOUNTED);
        calls_assert_clean(daemon_pid, &baseline);
}

static void test_not_authorized(void) {
        g_autoptr(GHashTable) t2 = run_as(HARNESS_UID_USER2, HARNESS_GID_USER2, 0,
                                          caller_not_authorized, NULL);
        g_autoptr(GHashTable) ta = run_as(HARNESS_UID_ADMIN, HARNESS_GID_ADMIN, 0,
                                          caller_not_authorized, NULL);

        /* polkit says no, whatever the mode: nobody is asked. */
        assert_error(t2, "none", UM_ERROR_NOT_AUTHORIZED, "EACCES", USERMOUNT_ERROR_NOT_AUTHORIZED);
        g_assert_cmpstr(report_get(t2, "none-auth"), ==, "0");
        assert_error(t2, "tty", UM_ERROR_NOT_AUTHORIZED, "EACCES", USERMOUNT_ERROR_NOT_AUTHORIZED);
        g_assert_cmpstr(report_get(t2, "tty-auth"), ==, "0");
        assert_error(t2, "interactive", UM_ERROR_NOT_AUTHORIZED, "EACCES",
                     USERMOUNT_ERROR_NOT_AUTHORIZED);

        /* A password would do: not asked without a mode that asks, nor without a terminal. */
        assert_error(ta, "none", UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN, "EACCES",
                     USERMOUNT_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_assert_cmpint(atoi(report_get(ta, "none-auth")), ==, USERMOUNT_AUTH_RESULT_NOT_ASKED);
        assert_error(ta, "tty", UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN, "EACCES",
                     USERMOUNT_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_assert_cmpstr(report_get(ta, "stdin-tty"), ==, "0");
        g_assert_cmpint(atoi(report_get(ta, "tty-auth")), ==, USERMOUNT_AUTH_RESULT_NO_TERMINAL);
        /* Interactive, but no agent of ours is registered: polkit finds nobody to ask. */
        g_assert_cmpstr(report_get(ta, "interactive-r"), ==, "EACCES");
        g_assert_cmpstr(report_get(ta, "interactive-auth"), ==, "0");
        calls_assert_clean(daemon_pid, &baseline);
}

static void test_monitor(void) {
        g_autofree char *dir = make_dir("monitor", HARNESS_UID_USER1, HARNESS_GID_USER1);
        g_autoptr(GHashTable) t = run(0, caller_monitor, dir);
        g_autofree char *added = g_strdup_printf("added %s ext4;", dir);
        g_autofree char *removed = g_strdup_printf("removed %s ext4;", dir);

        g_assert_cmpstr(report_get(t, "monitor"), ==, "ok");
        g_assert_cmpstr(report_get(t, "fd"), ==, "ok");
        g_assert_cmpstr(report_get(t, "events"), ==, "ok");
        g_assert_cmpstr(report_get(t, "timeout"), ==, "ok");
        g_assert_cmpstr(report_get(t, "mount-r"), ==, "ok");
        g_assert_cmpstr(report_get(t, "after-add"), ==, added);
        g_assert_cmpstr(report_get(t, "unmount-r"), ==, "ok");
        g_assert_cmpstr(report_get(t, "run"), ==, "ECANCELED");
        g_autofree char *both = g_strconcat(added, removed, NULL);
        g_assert_cmpstr(report_get(t, "after-remove"), ==, both);
        g_assert_cmpstr(report_get(t, "wait-after-stop"), ==, "ECANCELED");
        g_assert_cmpstr(report_get(t, "free"), ==, "null");
        calls_assert_clean(daemon_pid, &baseline);
}

static void test_monitor_restart(void) {
        g_autoptr(HarnessCaller) caller = NULL;
        g_autofree char *line = NULL, *output = NULL;

        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             caller_restart, NULL, &caller), ==, 0);
        g_assert_cmpint(harness_caller_read_line(caller, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_cmpstr(line, ==, "ready=1");
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
        g_assert_cmpint(harness_caller_release(caller), ==, 0);
        g_assert_cmpint(harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, &output), ==, 0);
        g_autoptr(GHashTable) t = calls_parse_report(output);
        g_assert_cmpstr(report_get(t, "restart"), ==, "ECANCELED");
        calls_assert_clean(daemon_pid, &baseline);
}

/* The unique name of the bus connection of process pid. */
static char *connection_of(pid_t pid) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        g_auto(GStrv) names = NULL;
        sd_bus *bus = harness_bus();

        g_assert_cmpint(sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                           "org.freedesktop.DBus", "ListNames", NULL, &reply, ""),
                        >=, 0);
        g_assert_cmpint(sd_bus_message_read_strv(reply, &names), >=, 0);
        for (size_t i = 0; names[i]; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *pid_reply = NULL;
                uint32_t p = 0;

                if (names[i][0] != ':')
                        continue;
                if (sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                                       NULL, &pid_reply, "s", names[i]) < 0)
                        continue;
                if (sd_bus_message_read(pid_reply, "u", &p) >= 0 && (pid_t) p == pid)
                        return g_strdup(names[i]);
        }
        g_assert_not_reached();
}

static void send_forged(const char *destination, const char *path, const char *interface,
                        const char *member, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;

        g_assert_cmpint(sd_bus_message_new_signal(harness_bus(), &m, path, interface, member),
                        >=, 0);
        g_assert_cmpint(sd_bus_message_set_destination(m, destination), >=, 0);
        va_start(ap, types);
        g_assert_cmpint(sd_bus_message_appendv(m, types, ap), >=, 0);
        va_end(ap);
        g_assert_cmpint(sd_bus_send(harness_bus(), m, NULL), >=, 0);
}

static void test_monitor_forged(void) {
        g_autofree char *dir = make_dir("forged", HARNESS_UID_USER1, HARNESS_GID_USER1);
        g_autoptr(HarnessCaller) caller = NULL;
        g_autofree char *line = NULL, *output = NULL, *name = NULL, *real = NULL;

        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             caller_forged, dir, &caller), ==, 0);
        g_assert_cmpint(harness_caller_read_line(caller, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_true(g_str_has_prefix(line, "ready="));
        name = connection_of((pid_t) atoi(line + strlen("ready=")));
        send_forged(name, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "MountAdded", "sa{sv}",
                    "/forged", 1, "fstype", "s", "ext4");
        send_forged(name, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "MountRemoved", "sa{sv}",
                    "/forged", 0);
        send_forged(name, "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                    "sss", UM_BUS_NAME, ":1.1", ":1.9999");
        g_assert_cmpint(sd_bus_flush(harness_bus()), >=, 0);
        g_assert_cmpint(harness_caller_release(caller), ==, 0);
        g_assert_cmpint(harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, &output), ==, 0);
        g_autoptr(GHashTable) t = calls_parse_report(output);
        real = g_strdup_printf("added %s;removed %s;", dir, dir);
        g_assert_cmpstr(report_get(t, "forged"), ==, "");
        g_assert_cmpstr(report_get(t, "mount-r"), ==, "ok");
        g_assert_cmpstr(report_get(t, "unmount-r"), ==, "ok");
        g_assert_cmpstr(report_get(t, "real"), ==, real);
        calls_assert_clean(daemon_pid, &baseline);
}

static void test_example(void) {
        g_autofree char *dir = make_dir("example", HARNESS_UID_USER1, HARNESS_GID_USER1);
        g_autoptr(GHashTable) t = run(0, caller_example, dir);
        g_autofree char *mounted = g_strdup_printf("Mounted %s (ext4, label 'libum') at %s",
                                                   image, dir);

        g_assert_cmpstr(report_get(t, "status"), ==, "0");
        assert_contains(report_get(t, "output"), mounted);
        assert_contains(report_get(t, "output"), "Unmounted");
        calls_assert_clean(daemon_pid, &baseline);
}

int main(int argc, char *argv[]) {
        const HarnessEntry entries[] = {
                { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644, 0, 0 },
                { 0 },
        };
        const HarnessImageSpec spec = { .label = "libum", .entries = entries };

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path() || !g_getenv("UM_LIBUSERMOUNT_EXAMPLE")) {
                printf("1..0 # SKIP usermountd or the example was not built\n");
                return 0;
        }
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        /* umtest1's image; the others may read it too, and are refused by polkit. */
        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(chmod(image, 0644), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/libusermount/client", test_client);
        g_test_add_func("/libusermount/mount-fd", test_mount_fd);
        g_test_add_func("/libusermount/open-mount", test_open_mount);
        g_test_add_func("/libusermount/errors", test_errors);
        g_test_add_func("/libusermount/not-authorized", test_not_authorized);
        g_test_add_func("/libusermount/monitor", test_monitor);
        g_test_add_func("/libusermount/monitor-restart", test_monitor_restart);
        g_test_add_func("/libusermount/monitor-forged", test_monitor_forged);
        g_test_add_func("/libusermount/example", test_example);
        return g_test_run();
}
