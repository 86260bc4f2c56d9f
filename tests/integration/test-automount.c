/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount automount end to end: the real usermount binary runs as the unprivileged
 * test user, with the harness's real systemd-udevd (its events reach this test's network
 * namespace, where the automount runs), the real usermountd and polkitd, and zram disks
 * as the devices that come and go. A private session bus (dbus-daemon run as the user,
 * as a session's is) carries the desktop notifications to a stand-in notification
 * server that reports every Notify call (summary and body) to the test.
 *
 * zram disks are not removable media, so usermountd asks polkit for mount-system; the
 * test's rule allows it for the test user and for labels of this test only (umauto-*),
 * and refuses umauto-deny*. Other devices that happen to come and go on this machine (its
 * own tests' zram disks) are refused too, so the test never mounts anybody else's.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define NOTIFY_NAME "org.freedesktop.Notifications"
#define MEDIA "/run/media/" HARNESS_USER1 "/"
#define WAIT_MS 30000

#define RULES                                                                                \
        "polkit.addRule(function(action, subject) {\n"                                       \
        "        if (action.id.indexOf('org.freedesktop.usermount1.mount-') != 0 ||\n"      \
        "            subject.user != 'umtest1')\n"                                           \
        "                return polkit.Result.NOT_HANDLED;\n"                                \
        "        var label = action.lookup('label') || '';\n"                                \
        "        if (label.indexOf('umauto-') == 0 && label.indexOf('umauto-deny') != 0)\n" \
        "                return polkit.Result.YES;\n"                                        \
        "        return polkit.Result.NO;\n"                                                 \
        "});\n"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *session_address;         /* the private session bus */
static HarnessCaller *session_bus;    /* its dbus-daemon, run as the test user */
static char *home;                    /* the test user's XDG_CONFIG_HOME and logs */
static unsigned n_runs;

/* ---- The session bus and the notification server ---------------------------------------- */

static int run_session_bus(void *userdata) {
        const char *config = userdata;

        /* --print-address to the report pipe: the test reads the address as a line. */
        if (fcntl(3, F_SETFD, 0) < 0)
                return 124;
        execl("/usr/bin/dbus-daemon", "dbus-daemon", "--nofork", "--nopidfile",
              "--print-address=3", "--config-file", config, (char *) NULL);
        return 127;
}

static void session_bus_start(void) {
        g_autofree char *dir = g_build_filename(home, "session", NULL);
        g_autofree char *config = g_build_filename(home, "session.conf", NULL);
        g_autofree char *xml = g_strdup_printf(
                "<!DOCTYPE busconfig PUBLIC\n"
                " \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<busconfig>\n"
                "  <type>session</type>\n"
                "  <listen>unix:path=%s/bus</listen>\n"
                "  <auth>EXTERNAL</auth>\n"
                "  <policy context=\"default\">\n"
                "    <allow send_destination=\"*\" eavesdrop=\"true\"/>\n"
                "    <allow eavesdrop=\"true\"/>\n"
                "    <allow own=\"*\"/>\n"
                "  </policy>\n"
                "</busconfig>\n", dir);

        g_assert_cmpint(mkdir(dir, 0700), ==, 0);
        g_assert_cmpint(chown(dir, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_true(g_file_set_contents(config, xml, -1, NULL));
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             run_session_bus, config, &session_bus), ==, 0);
        g_assert_cmpint(harness_caller_read_line(session_bus, WAIT_MS, &session_address), ==, 0);
        g_assert_true(g_str_has_prefix(session_address, "unix:"));
}

static int method_notify(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *app, *icon, *summary, *body;
        uint32_t replaces;
        unsigned *id = userdata;
        int r;

        r = sd_bus_message_read(m, "susss", &app, &replaces, &icon, &summary, &body);
        if (r < 0)
                return r;
        harness_report("notify %s|%s", summary, body);
        return sd_bus_reply_method_return(m, "u", ++*id);
}

static const sd_bus_vtable notify_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Notify", "susssasa{sv}i", "u", method_notify, 0),
        SD_BUS_VTABLE_END,
};

/* In a caller: owns org.freedesktop.Notifications and reports each Notify. */
static int run_notification_server(void *userdata) {
        sd_bus *bus = NULL;
        unsigned id = 0;

        g_assert_cmpint(sd_bus_new(&bus), >=, 0);
        g_assert_cmpint(sd_bus_set_address(bus, session_address), >=, 0);
        g_assert_cmpint(sd_bus_set_bus_client(bus, 1), >=, 0);
        g_assert_cmpint(sd_bus_start(bus), >=, 0);
        g_assert_cmpint(sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/Notifications",
                                                 NOTIFY_NAME, notify_vtable, &id), >=, 0);
        g_assert_cmpint(sd_bus_request_name(bus, NOTIFY_NAME, 0), >=, 0);
        harness_report("ready");
        /* Until the test kills it. */
        for (;;) {
                int r = sd_bus_process(bus, NULL);

                if (r < 0)
                        return 1;
                if (r == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
                        return 1;
        }
}

typedef struct Notifications {
        HarnessCaller *server;
        GPtrArray *seen; /* "summary|body" */
} Notifications;

static void notifications_start(Notifications *n) {
        g_autofree char *line = NULL;

        *n = (Notifications) { .seen = g_ptr_array_new_with_free_func(g_free) };
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             run_notification_server, NULL, &n->server), ==, 0);
        g_assert_cmpint(harness_caller_read_line(n->server, WAIT_MS, &line), ==, 0);
        g_assert_cmpstr(line, ==, "ready");
}

/* Waits for a notification whose "summary|body" starts with prefix; returns it. */
static const char *notifications_await(Notifications *n, const char *prefix) {
        for (;;) {
                g_autofree char *line = NULL;

                if (harness_caller_read_line(n->server, WAIT_MS, &line) < 0)
                        g_error("no notification '%s' arrived", prefix);
                g_test_message("notification: %s", line);
                g_assert_true(g_str_has_prefix(line, "notify "));
                g_ptr_array_add(n->seen, g_strdup(line + strlen("notify ")));
                if (g_str_has_prefix(line + strlen("notify "), prefix))
                        return n->seen->pdata[n->seen->len - 1];
        }
}

static unsigned notifications_count(Notifications *n, const char *prefix) {
        unsigned count = 0;

        for (guint i = 0; i < n->seen->len; i++)
                count += g_str_has_prefix(n->seen->pdata[i], prefix);
        return count;
}

static void notifications_stop(Notifications *n) {
        n->server = harness_caller_free(n->server);
        g_ptr_array_unref(n->seen);
}

/* ---- usermount automount as the test user ---------------------------------------------- */

typedef struct Automount {
        const char *const *args;  /* after "usermount automount" */
        bool session;             /* DBUS_SESSION_BUS_ADDRESS set to the private bus */
        char *out_path, *err_path; /* its stdout and stderr */
        HarnessCaller *caller;
} Automount;

static int run_automount(void *userdata) {
        const Automount *a = userdata;
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        int out, err;

        out = open(a->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        err = open(a->err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
                return 124;
        g_setenv("XDG_CONFIG_HOME", home, TRUE);
        g_unsetenv("XDG_RUNTIME_DIR");
        if (a->session)
                g_setenv("DBUS_SESSION_BUS_ADDRESS", session_address, TRUE);
        else
                g_unsetenv("DBUS_SESSION_BUS_ADDRESS");
        g_ptr_array_add(argv, (char *) g_getenv("UM_USERMOUNT"));
        g_ptr_array_add(argv, "automount");
        for (size_t i = 0; a->args && a->args[i]; i++)
                g_ptr_array_add(argv, (char *) a->args[i]);
        g_ptr_array_add(argv, NULL);
        execv(argv->pdata[0], (char **) argv->pdata);
        return 127;
}

static void automount_init(Automount *a, const char *const *args, bool session) {
        n_runs++;
        *a = (Automount) {
                .args = args,
                .session = session,
                .out_path = g_strdup_printf("%s/run%u.out", home, n_runs),
                .err_path = g_strdup_printf("%s/run%u.err", home, n_runs),
        };
}

static void automount_start(Automount *a, const char *const *args, bool session) {
        automount_init(a, args, session);
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             run_automount, a, &a->caller), ==, 0);
}

/* Runs it to the end (--once, or a failure); returns the exit status. */
static int automount_run(Automount *a, const char *const *args, bool session) {
        automount_init(a, args, session);
        return harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, run_automount, a, NULL);
}

static char *read_file(const char *path) {
        char *s = NULL;

        if (!g_file_get_contents(path, &s, NULL, NULL))
                return g_strdup("");
        return s;
}

/* Waits until its stderr has text; fails the test if it never does. */
static void automount_await_log(Automount *a, const char *text) {
        for (int i = 0; i < WAIT_MS / 20; i++) {
                g_autofree char *log = read_file(a->err_path);

                if (strstr(log, text))
                        return;
                if (a->caller && harness_child_exited(harness_caller_pid(a->caller)))
                        g_error("automount exited before logging '%s':\n%s", text, log);
                g_usleep(20 * 1000);
        }
        g_autofree char *log = read_file(a->err_path);
        g_error("automount did not log '%s':\n%s", text, log);
}

/* SIGTERM: it exits with status 0, and leaves its mounts. */
static void automount_stop(Automount *a) {
        g_autofree char *log = NULL;

        g_assert_cmpint(kill(harness_caller_pid(a->caller), SIGTERM), ==, 0);
        g_assert_cmpint(harness_caller_wait(a->caller, WAIT_MS, NULL), ==, 0);
        log = read_file(a->err_path);
        g_test_message("automount's log:\n%s", log);
        a->caller = harness_caller_free(a->caller);
        unlink(a->out_path);
        unlink(a->err_path);
        g_free(a->out_path);
        g_free(a->err_path);
}

static void automount_done(Automount *a) {
        unlink(a->out_path);
        unlink(a->err_path);
        g_free(a->out_path);
        g_free(a->err_path);
}

/* ---- Disks and mounts ------------------------------------------------------------------- */

/* A zram disk with a filesystem (mkfs: ext2 or ext4) whose root directory is the test
 * user's, as udevd sees it once the kernel said it changed. */
static char *disk_new(const char *mkfs, const char *label, const char *uuid) {
        g_autofree char *cmd = NULL;
        char *node = NULL;

        /* The root directory is the user's: usermountd id-maps it only when asked to. */
        cmd = g_strdup_printf("%s -q -E root_owner=%u:%u -L %s%s%s", mkfs, HARNESS_UID_USER1,
                              HARNESS_GID_USER1, label, uuid ? " -U " : "", uuid ?: "");
        g_assert_cmpint(harness_zram_new_fs("64M", cmd, &node), ==, 0);
        return node;
}

static void disk_free(char *node) {
        g_assert_cmpint(harness_zram_free(node), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        g_free(node);
}

/* The per-mount options /proc/self/mountinfo shows for mount_point, or NULL. */
static char *mount_options(const char *mount_point) {
        g_autofree char *info = read_file("/proc/self/mountinfo");
        g_auto(GStrv) lines = g_strsplit(info, "\n", -1);

        for (char **l = lines; *l; l++) {
                g_auto(GStrv) f = g_strsplit(*l, " ", 7);

                if (g_strv_length(f) >= 6 && streq(f[4], mount_point))
                        return g_strdup(f[5]);
        }
        return NULL;
}

static bool is_mounted(const char *mount_point) {
        g_autofree char *options = mount_options(mount_point);

        return options != NULL;
}

static bool has_option(const char *options, const char *option) {
        g_auto(GStrv) o = g_strsplit(options, ",", -1);

        return g_strv_contains((const char *const *) o, option);
}

static void assert_clean(void) {
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- Tests ---------------------------------------------------------------------------- */

/* A new disk is mounted and the user told; pulling it is told too, and the mount is gone. */
static void test_mount_and_remove(void) {
        Notifications n;
        Automount a;
        char *disk;
        const char *s;
        g_autofree char *options = NULL;

        notifications_start(&n);
        automount_start(&a, NULL, true);
        disk = disk_new("mkfs.ext4", "umauto-one", NULL);
        s = notifications_await(&n, "Mounted umauto-one at " MEDIA "umauto-one|");
        g_assert_true(g_str_has_prefix(s, "Mounted umauto-one at " MEDIA "umauto-one|/dev/zram"));
        g_assert_true(g_str_has_suffix(s, ", ext4"));
        options = mount_options(MEDIA "umauto-one");
        g_assert_nonnull(options);
        g_assert_false(has_option(options, "ro"));
        g_assert_false(has_option(options, "idmapped"));
        g_assert_true(has_option(options, "nosuid"));
        automount_await_log(&a, "usermount: Mounted umauto-one at " MEDIA "umauto-one");

        disk_free(disk);
        notifications_await(&n, "umauto-one was removed|" MEDIA "umauto-one");
        automount_await_log(&a, "usermount: umauto-one was removed");
        g_assert_false(is_mounted(MEDIA "umauto-one"));
        automount_stop(&a);
        notifications_stop(&n);
        assert_clean();
}

static int run_unmount(void *userdata) {
        execl(g_getenv("UM_USERMOUNT"), "usermount", "unmount", (const char *) userdata,
              (char *) NULL);
        return 127;
}

/* The user unmounts what automount mounted: told, and not mounted again on udev's next word. */
static void test_unmounted(void) {
        Notifications n;
        Automount a;
        char *disk, *other;

        notifications_start(&n);
        automount_start(&a, NULL, true);
        disk = disk_new("mkfs.ext4", "umauto-un", NULL);
        notifications_await(&n, "Mounted umauto-un at ");
        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, run_unmount,
                                       (void *) MEDIA "umauto-un", NULL), ==, 0);
        notifications_await(&n, "umauto-un was unmounted|" MEDIA "umauto-un");
        g_assert_cmpint(harness_udev_trigger(disk, "change"), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        other = disk_new("mkfs.ext4", "umauto-un2", NULL);
        notifications_await(&n, "Mounted umauto-un2 at ");
        g_assert_false(is_mounted(MEDIA "umauto-un"));
        g_assert_cmpuint(notifications_count(&n, "Mounted umauto-un at "), ==, 1);
        disk_free(disk);
        disk_free(other);
        notifications_await(&n, "umauto-un2 was removed");
        automount_stop(&a);
        notifications_stop(&n);
        assert_clean();
}

/* Ignored by label and UUID (options) and by type (the file); the service goes on. */
static void test_ignore(void) {
        const char *const args[] = { "--ignore-label=umauto-ign-l",
                                     "--ignore-uuid=2F6B9A4E-1D3C-4E8A-9B7F-0C5D6E7F8A91",
                                     "--no-notify", NULL };
        g_autofree char *dir = g_build_filename(home, "usermount", NULL);
        g_autofree char *conf = g_build_filename(dir, "automount.conf", NULL);
        char *by_label, *by_uuid, *by_type, *other;
        Automount a;

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_true(g_file_set_contents(conf, "# ext2 sticks are for the camera\n"
                                          "[Automount]\nIgnoreFilesystemType=ext2 ntfs\n",
                                          -1, NULL));
        automount_start(&a, args, false);
        by_label = disk_new("mkfs.ext4", "umauto-ign-l", NULL);
        automount_await_log(&a, "Ignoring umauto-ign-l");
        by_uuid = disk_new("mkfs.ext4", "umauto-ign-u", "2f6b9a4e-1d3c-4e8a-9b7f-0c5d6e7f8a91");
        automount_await_log(&a, "Ignoring umauto-ign-u");
        by_type = disk_new("mkfs.ext2", "umauto-ign-t", NULL);
        automount_await_log(&a, "Ignoring umauto-ign-t");
        /* Events come in order: once this one is mounted, the others were dealt with. */
        other = disk_new("mkfs.ext4", "umauto-two", NULL);
        automount_await_log(&a, "Mounted umauto-two at " MEDIA "umauto-two");

        g_autofree char *log = read_file(a.err_path);
        g_assert_nonnull(strstr(log, "Ignoring umauto-ign-l"));
        g_assert_nonnull(strstr(log, "its label is in the ignore list"));
        g_assert_nonnull(strstr(log, "its UUID is in the ignore list"));
        g_assert_nonnull(strstr(log, "its filesystem type is in the ignore list"));
        g_assert_false(is_mounted(MEDIA "umauto-ign-l"));
        g_assert_false(is_mounted(MEDIA "umauto-ign-u"));
        g_assert_false(is_mounted(MEDIA "umauto-ign-t"));

        disk_free(by_label);
        disk_free(by_uuid);
        disk_free(by_type);
        disk_free(other);
        automount_stop(&a);
        g_assert_cmpint(unlink(conf), ==, 0);
        assert_clean();
}

/* --read-only and --idmap=user reach the mount; --no-notify sends nothing. */
static void test_read_only_idmap(void) {
        const char *const args[] = { "--read-only", "--idmap=user", "--no-notify", NULL };
        g_autofree char *options = NULL;
        g_autofree char *line = NULL;
        Notifications n;
        Automount a;
        char *disk;

        notifications_start(&n);
        automount_start(&a, args, true);
        disk = disk_new("mkfs.ext4", "umauto-ro", NULL);
        automount_await_log(&a, "Mounted umauto-ro at " MEDIA "umauto-ro: ");
        automount_await_log(&a, "read-only, id-mapped");
        options = mount_options(MEDIA "umauto-ro");
        g_assert_nonnull(options);
        g_assert_true(has_option(options, "ro"));
        g_assert_true(has_option(options, "idmapped"));
        disk_free(disk);
        automount_await_log(&a, "umauto-ro was removed");
        /* Nothing was sent to the notification server. */
        g_assert_cmpint(harness_caller_read_line(n.server, 500, &line), ==, -ETIMEDOUT);
        automount_stop(&a);
        notifications_stop(&n);
        assert_clean();
}

/* A session bus without a notification server: the log says it all. */
static void test_no_notification_server(void) {
        Automount a;
        char *disk;

        automount_start(&a, NULL, true);
        disk = disk_new("mkfs.ext4", "umauto-log", NULL);
        automount_await_log(&a, "usermount: Mounted umauto-log at " MEDIA "umauto-log: /dev/zram");
        disk_free(disk);
        automount_await_log(&a, "usermount: umauto-log was removed");
        g_autofree char *log = read_file(a.err_path);
        g_assert_null(strstr(log, "Cannot send a desktop notification"));
        automount_stop(&a);
        assert_clean();
}

/*
 * polkit says no: told once, not tried again on udev's next "change", and it goes on. A
 * device there at start (the machine's own disks, mostly) is refused in the log only.
 */
static void test_refused(void) {
        Notifications n;
        Automount a;
        char *denied, *other, *old;

        old = disk_new("mkfs.ext4", "umauto-deny-old", NULL);
        notifications_start(&n);
        automount_start(&a, NULL, true);
        automount_await_log(&a, "usermount: Could not mount umauto-deny-old (/dev/zram");
        denied = disk_new("mkfs.ext4", "umauto-deny", NULL);
        notifications_await(&n, "Could not mount umauto-deny (/dev/zram");
        g_assert_cmpint(harness_udev_trigger(denied, "change"), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        other = disk_new("mkfs.ext4", "umauto-three", NULL);
        notifications_await(&n, "Mounted umauto-three at ");
        g_assert_cmpuint(notifications_count(&n, "Could not mount umauto-deny ("), ==, 1);
        g_assert_cmpuint(notifications_count(&n, "Could not mount umauto-deny-old"), ==, 0);
        g_assert_false(harness_child_exited(harness_caller_pid(a.caller)));
        g_autofree char *log = read_file(a.err_path);
        g_assert_cmpuint(harness_count_substrings(log, "Could not mount umauto-deny ("), ==, 1);
        g_assert_cmpuint(harness_count_substrings(log, "Could not mount umauto-deny-old"), ==, 1);
        g_assert_false(is_mounted(MEDIA "umauto-deny"));

        disk_free(old);
        disk_free(denied);
        disk_free(other);
        automount_stop(&a);
        notifications_stop(&n);
        assert_clean();
}

/* --once: what is there now; exit 1 when something could not be mounted, else 0. */
static void test_once(void) {
        const char *const args[] = { "--once", "--no-notify", NULL };
        char *ok = disk_new("mkfs.ext4", "umauto-once", NULL);
        char *denied = disk_new("mkfs.ext4", "umauto-deny", NULL);
        g_autofree char *out = NULL, *err = NULL, *out2 = NULL;
        Automount a, b;

        g_assert_cmpint(automount_run(&a, args, false), ==, 1);
        out = read_file(a.out_path);
        err = read_file(a.err_path);
        g_test_message("stdout:\n%sstderr:\n%s", out, err);
        g_assert_nonnull(strstr(out, "Mounted umauto-once at " MEDIA "umauto-once: /dev/zram"));
        g_assert_nonnull(strstr(err, "usermount: Could not mount umauto-deny (/dev/zram"));
        g_assert_true(is_mounted(MEDIA "umauto-once"));
        automount_done(&a);

        /* The refused disk gone and the other one mounted already: nothing to do, 0. */
        disk_free(denied);
        g_assert_cmpint(automount_run(&b, args, false), ==, 0);
        out2 = read_file(b.out_path);
        g_assert_null(strstr(out2, "Mounted"));
        automount_done(&b);
        disk_free(ok);
        assert_clean();
}

/* A bad configuration file: exit status 2, with the file and the line. */
static void test_bad_config(void) {
        const char *const bad_value[] = { NULL };
        const char *const missing[] = { "--config=/nonexistent/automount.conf", NULL };
        g_autofree char *dir = g_build_filename(home, "usermount", NULL);
        g_autofree char *conf = g_build_filename(dir, "automount.conf", NULL);
        g_autofree char *want = g_strdup_printf("usermount: Bad configuration: %s:3: IdMap= "
                                                "needs none or user, not 'root'", conf);
        Automount a, b;

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_true(g_file_set_contents(conf, "[Automount]\nReadOnly=yes\nIdMap=root\n", -1,
                                          NULL));
        g_assert_cmpint(automount_run(&a, bad_value, false), ==, 2);
        g_autofree char *err = read_file(a.err_path);
        g_assert_nonnull(strstr(err, want));
        automount_done(&a);

        g_assert_cmpint(automount_run(&b, missing, false), ==, 2);
        g_autofree char *err2 = read_file(b.err_path);
        g_assert_nonnull(strstr(err2, "/nonexistent/automount.conf"));
        automount_done(&b);
        g_assert_cmpint(unlink(conf), ==, 0);
}

/* SIGTERM: exit status 0, and what it mounted stays mounted (the user may be using it). */
static void test_sigterm(void) {
        Automount a;
        char *disk;

        automount_start(&a, NULL, false);
        disk = disk_new("mkfs.ext4", "umauto-term", NULL);
        automount_await_log(&a, "Mounted umauto-term at ");
        automount_stop(&a);
        g_assert_true(is_mounted(MEDIA "umauto-term"));
        disk_free(disk);
        assert_clean();
}

/* usermountd not there at first: said once, and the disk is mounted once it comes. */
static void test_daemon_later(void) {
        Automount a;
        char *disk;

        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        automount_start(&a, NULL, false);
        automount_await_log(&a, "usermountd is not running");
        disk = disk_new("mkfs.ext4", "umauto-late", NULL);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        automount_await_log(&a, "usermountd is there now.");
        automount_await_log(&a, "Mounted umauto-late at ");
        g_autofree char *log = read_file(a.err_path);
        g_assert_cmpuint(harness_count_substrings(log, "usermountd is not running"), ==, 1);
        disk_free(disk);
        automount_await_log(&a, "umauto-late was removed");
        automount_stop(&a);
        /* The daemon's fds are the new one's; mounts and loop devices as before. */
        HarnessSnapshot before = baseline;
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
        g_assert_cmpint(baseline.mounts, ==, before.mounts);
        g_assert_cmpint(baseline.loop_devices, ==, before.loop_devices);
        assert_clean();
}

/*
 * usermountd goes away while automount runs: a device that comes meanwhile fails for that
 * reason (said once, not as the device's failure), and is mounted when usermountd is back.
 */
static void test_daemon_restart(void) {
        HarnessSnapshot before = baseline;
        Automount a;
        char *first, *disk;

        automount_start(&a, NULL, false);
        /* Once this one is mounted, automount is subscribed to usermountd. */
        first = disk_new("mkfs.ext4", "umauto-first", NULL);
        automount_await_log(&a, "Mounted umauto-first at ");
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        disk = disk_new("mkfs.ext4", "umauto-restart", NULL);
        automount_await_log(&a, "usermountd is not running");
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        automount_await_log(&a, "Mounted umauto-restart at " MEDIA "umauto-restart");
        g_autofree char *log = read_file(a.err_path);
        g_assert_cmpuint(harness_count_substrings(log, "usermountd is not running"), ==, 1);
        g_assert_null(strstr(log, "Could not mount"));
        disk_free(disk);
        automount_await_log(&a, "umauto-restart was removed");
        disk_free(first);
        automount_await_log(&a, "umauto-first was removed");
        automount_stop(&a);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
        g_assert_cmpint(baseline.mounts, ==, before.mounts);
        g_assert_cmpint(baseline.loop_devices, ==, before.loop_devices);
        assert_clean();
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        if (access("/sys/class/zram-control/hot_add", W_OK) < 0) {
                printf("1..0 # SKIP this kernel has no zram for block-device tests\n");
                return 0;
        }
        home = g_build_filename(harness_tmpdir(), "automount-home", NULL);
        g_assert_cmpint(mkdir(home, 0755), ==, 0);
        g_assert_cmpint(chown(home, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        session_bus_start();

        g_assert_cmpint(harness_set_rules(RULES), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/automount/mount-and-remove", test_mount_and_remove);
        g_test_add_func("/automount/unmounted", test_unmounted);
        g_test_add_func("/automount/ignore", test_ignore);
        g_test_add_func("/automount/read-only-idmap", test_read_only_idmap);
        g_test_add_func("/automount/no-notification-server", test_no_notification_server);
        g_test_add_func("/automount/refused", test_refused);
        g_test_add_func("/automount/once", test_once);
        g_test_add_func("/automount/bad-config", test_bad_config);
        g_test_add_func("/automount/sigterm", test_sigterm);
        g_test_add_func("/automount/daemon-later", test_daemon_later);
        g_test_add_func("/automount/daemon-restart", test_daemon_restart);
        r = g_test_run();
        session_bus = harness_caller_free(session_bus);
        g_free(session_address);
        g_free(home);
        return r;
}
