/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The administrator's configuration end to end: /etc/usermount/usermount.conf (in the
 * harness's private /etc) read at start, obeyed by the real daemon, reloaded on SIGHUP
 * without dropping mounts or requests in flight, and never weakened by a bad file (the
 * daemon refuses to start with one, and keeps the previous settings on reload).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define CONF_FILE "usermount/usermount.conf"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image_ext4;  /* labelled "cfgstick" */
static char *image_xfs;   /* labelled "cfgxfs" */
static char *image_slow;  /* ext4 labelled "slow": its polkit check takes two seconds */

static char *marks_dir;   /* where the slow rule leaves a mark when it starts waiting */

/* Everybody may mount and use exec; a request for the image labelled "slow" stays in
 * polkit for three seconds (polkit.spawn() blocks the rule), after leaving a mark, so the
 * test knows it is in flight when it reloads the configuration. */
static const char rules_format[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (action.lookup('label') == 'slow')\n"
        "                polkit.spawn(['/bin/sh', '-c', 'touch %s/slow && sleep 3']);\n"
        "        return polkit.Result.YES;\n"
        "});\n";

/* ---- Callers ------------------------------------------------------------------------- */

typedef struct Call {
        const char *method;  /* "MountFd", "Unmount" */
        const char *path;    /* image or mount point */
        const char *options;
        bool exec;
        bool read_only;
} Call;

static int caller(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int fd = -EBADF;
        const Param params[] = {
                { "exec", "b", c->exec ? "true" : "false" },
                { "read-only", "b", c->read_only ? "true" : "false" },
                {},
        };
        sd_bus *bus = NULL;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, c->method), >=, 0);
        if (streq(c->method, "Unmount")) {
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
                g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
        } else {
                fd = open(c->path, O_RDWR | O_CLOEXEC);
                g_assert_cmpint(fd, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", fd, "", strempty(c->options)),
                                >=, 0);
                g_assert_cmpint(calls_append_params(call, params), >=, 0);
        }
        harness_report("sent=1");
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0 && streq(c->method, "MountFd")) {
                const char *mp;

                g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                harness_report("mount-point=%s", mp);
                calls_report_info(reply, "info-");
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}

static GHashTable *call_as(uid_t uid, const Call *c) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, uid, 0, caller, (void *) c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

static GHashTable *mount_fd(const char *image, const char *options, bool exec) {
        const Call c = { .method = "MountFd", .path = image, .options = options, .exec = exec };

        return call_as(HARNESS_UID_USER1, &c);
}

static void unmount(const char *mount_point) {
        const Call c = { .method = "Unmount", .path = mount_point };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
}

/* ---- Helpers ------------------------------------------------------------------------- */

static char *make_image(const char *fstype, const char *label) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644 }, {} };
        /* umtest1's images: their root directory is umtest1's (for other callers the
         * daemon then maps it to them: idmap "user", see test-security.c). */
        const HarnessImageSpec spec = { .label = label, .entries = entries,
                                        .root_uid = HARNESS_UID_USER1,
                                        .root_gid = HARNESS_GID_USER1 };
        char *path = NULL;

        g_assert_cmpint(harness_make_image(fstype, &spec, &path), ==, 0);
        g_assert_cmpint(chmod(path, 0666), ==, 0);
        return path;
}

/* The SupportedFilesystems property, comma-separated. */
static char *supported_filesystems(void) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        char **types = NULL;
        char *joined;

        g_assert_cmpint(sd_bus_get_property_strv(harness_bus(), UM_BUS_NAME, UM_OBJECT_PATH,
                                                 UM_MANAGER_INTERFACE, "SupportedFilesystems",
                                                 &error, &types), >=, 0);
        joined = g_strjoinv(",", types);
        g_strfreev(types);
        return joined;
}

/* Writes the configuration and sends SIGHUP. The daemon handles the signal before any
 * call that arrives after it (its signal source outranks the bus), so the next call
 * already sees the outcome of the reload. */
static void reload_with(const char *contents) {
        g_autofree char *conf = harness_conf_kernel(contents);

        g_assert_cmpint(harness_write_etc(CONF_FILE, conf), ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
}

static void start_daemon_with(const char *contents) {
        g_autofree char *conf = harness_conf_kernel(contents);

        g_assert_cmpint(harness_write_etc(CONF_FILE, conf), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
}

static void stop_daemon(void) {
        calls_assert_clean(daemon_pid, &baseline);
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        daemon_pid = 0;
}

/* ---- Tests --------------------------------------------------------------------------- */

/* A file with an error: the daemon does not start at all (it never runs with less policy
 * than the administrator wrote). */
static void test_bad_file_refuses_start(void) {
        static const char *const bad[] = {
                "[General]\nAllowExec=maybe\n",
                "[Limits]\nMaxRequestsPerUser=-1\n",
                "[General]\nAllowedFilesystems=ext4 vfat2\n",
                "[ext4]\nAllowedOptions=suid\n",
                "[Unknown]\nKey=1\n",
                "just some words\n",
        };
        pid_t pid = 0;

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_test_message("file: %s", bad[i]);
                g_assert_cmpint(harness_write_etc(CONF_FILE, bad[i]), ==, 0);
                g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &pid), ==,
                                -ESRCH);
        }
        g_assert_cmpint(harness_write_etc(CONF_FILE, ""), ==, 0);
}

/* AllowedFilesystems= is obeyed, shown in SupportedFilesystems, and changed by SIGHUP. */
static void test_allowed_filesystems_and_reload(void) {
        g_autofree char *before = NULL, *after = NULL, *kept = NULL;

        start_daemon_with("[General]\nAllowedFilesystems=ext4 squashfs\n");
        before = supported_filesystems();
        g_assert_cmpstr(before, ==, "ext4,squashfs");
        {
                g_autoptr(GHashTable) t = mount_fd(image_xfs, NULL, false);

                g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_FILESYSTEM_NOT_ALLOWED);
                g_assert_nonnull(strstr(report_get(t, "message"), "AllowedFilesystems="));
        }

        reload_with("[General]\nAllowedFilesystems=ext4 xfs\n");
        after = supported_filesystems();
        g_assert_cmpstr(after, ==, "ext4,xfs");
        {
                g_autoptr(GHashTable) t = mount_fd(image_xfs, NULL, false);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                g_assert_cmpstr(report_get(t, "info-fstype"), ==, "xfs");
                unmount(report_get(t, "mount-point"));
        }

        /* A bad file on reload changes nothing. */
        reload_with("[General]\nAllowedFilesystems=ext4\nAllowExec=perhaps\n");
        kept = supported_filesystems();
        g_assert_cmpstr(kept, ==, "ext4,xfs");
        {
                g_autoptr(GHashTable) t = mount_fd(image_xfs, NULL, false);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                unmount(report_get(t, "mount-point"));
        }
        g_assert_cmpint(kill(daemon_pid, 0), ==, 0);
        stop_daemon();
}

/* A mount made before a reload stays registered; a request in flight during the reload
 * finishes under the configuration it started with; the next one gets the new one. */
static void test_reload_keeps_mounts_and_requests(void) {
        const Call slow = { .method = "MountFd", .path = image_slow };
        g_autoptr(HarnessCaller) c = NULL;
        g_autofree char *line = NULL, *output = NULL, *mark = NULL;
        g_autoptr(GHashTable) first = NULL, t = NULL, refused = NULL;

        start_daemon_with("[General]\nMediaRoot=/run/media/before\n");
        first = mount_fd(image_ext4, NULL, false);
        g_assert_cmpstr(report_get(first, "result"), ==, "ok");
        g_assert_cmpstr(report_get(first, "mount-point"), ==, "/run/media/before/umtest1/cfgstick");

        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, caller,
                                             (void *) &slow, &c), ==, 0);
        g_assert_cmpint(harness_caller_read_line(c, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_cmpstr(line, ==, "sent=1");
        mark = g_build_filename(marks_dir, "slow", NULL);
        for (int i = 0; i < 600 && access(mark, F_OK) < 0; i++)
                g_usleep(50 * 1000);
        g_assert_cmpint(access(mark, F_OK), ==, 0);
        reload_with("[General]\nMediaRoot=/run/media/after\nAllowedFilesystems=xfs\n");

        g_assert_cmpint(harness_caller_wait(c, HARNESS_CALLER_TIMEOUT_MS, &output), ==, 0);
        t = calls_parse_report(output);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "mount-point"), ==, "/run/media/before/umtest1/slow");

        /* Both mounts are still registered and can be unmounted under the new settings. */
        unmount(report_get(first, "mount-point"));
        unmount(report_get(t, "mount-point"));

        refused = mount_fd(image_ext4, NULL, false);
        g_assert_cmpstr(report_get(refused, "result"), ==, UM_ERROR_FILESYSTEM_NOT_ALLOWED);
        reload_with("");
        stop_daemon();
}

/* Per-type options from the file: forced, default, narrowed; AllowExec=no. */
static void test_options_and_exec(void) {
        start_daemon_with("[General]\nAllowExec=no\n"
                          "[ext4]\nAllowedOptions=noatime,relatime,acl\n"
                          "DefaultOptions=relatime\nForcedOptions=data=ordered\n");
        {
                g_autoptr(GHashTable) t = mount_fd(image_ext4, NULL, false);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                g_assert_nonnull(strstr(report_get(t, "info-options"), "data=ordered"));
                g_assert_nonnull(strstr(report_get(t, "info-options"), "errors=remount-ro"));
                unmount(report_get(t, "mount-point"));
        }
        {
                g_autoptr(GHashTable) t = mount_fd(image_ext4, "data=journal", false);

                g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_OPTION_NOT_ALLOWED);
                g_assert_nonnull(strstr(report_get(t, "message"), "data=ordered"));
        }
        {
                g_autoptr(GHashTable) t = mount_fd(image_ext4, "commit=5", false);

                g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_OPTION_NOT_ALLOWED);
                g_assert_nonnull(strstr(report_get(t, "message"), "AllowedOptions="));
        }
        {
                g_autoptr(GHashTable) t = mount_fd(image_ext4, "acl", true);

                g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_OPTION_NOT_ALLOWED);
                g_assert_nonnull(strstr(report_get(t, "message"), "AllowExec=no"));
        }
        /* Exec is allowed again after a reload, with polkit's mount-exec (the rules say yes). */
        reload_with("[General]\nAllowExec=yes\n");
        {
                g_autoptr(GHashTable) t = mount_fd(image_ext4, NULL, true);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                g_assert_cmpstr(report_get(t, "info-attributes"), ==, "nodev,nosuid");
                unmount(report_get(t, "mount-point"));
        }
        reload_with("");
        stop_daemon();
}

/* A copy on disk of a new erofs image (mounted from its file, no loop device); damaged:
 * the root inode's bytes overwritten, which breaks the superblock's checksum. */
static char *erofs_on_disk(bool damaged) {
        g_autofree char *image = make_image("erofs", damaged ? "bad-erofs" : "erofs");
        char *copy = calls_disk_copy(image, HARNESS_UID_USER1);
        _cleanup_close_ int fd = open(copy, O_RDWR | O_CLOEXEC);
        uint16_t nid;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(pread(fd, &nid, 2, 1024 + 14), ==, 2);
        if (damaged)
                g_assert_cmpint(pwrite(fd, "\xff\xff\xff\xff\xff\xff\xff\xff", 8,
                                       (off_t) nid * 32 + 8), ==, 8);
        return copy;
}

/* ImageCheck=yes: a damaged image is refused with the checker's words, a clean one
 * mounts (erofs images mounted from their files are checked as files); the checker runs as the
 * configured unprivileged uid (ImageCheckUidRange= empty: every check as ImageCheckUser=; the
 * default range's uid of its own per check is tested in tests/kernel/test-kernel-fscheck-isolation.c). */
static void test_image_check(void) {
        g_autofree char *damaged = make_image("ext4", "damaged");
        g_autofree char *cmd = g_strdup_printf(
                "/usr/sbin/debugfs -w -R 'sif /hello.txt links_count 7' %s >/dev/null 2>&1", damaged);

        g_assert_cmpint(system(cmd), ==, 0);
        start_daemon_with("[General]\nImageCheck=yes\nImageCheckUidRange=\nImageCheckUser=61950\n"
                          "ImageCheckTimeoutSec=60\n");
        {
                g_autoptr(GHashTable) t = mount_fd(damaged, NULL, false);

                g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_FAILED);
                g_assert_nonnull(strstr(report_get(t, "message"), "e2fsck"));
        }
        {
                g_autoptr(GHashTable) t = mount_fd(image_ext4, NULL, false);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                unmount(report_get(t, "mount-point"));
        }
        {
                g_autofree char *bad = erofs_on_disk(true), *good = erofs_on_disk(false);
                g_autoptr(GHashTable) refused = mount_fd(bad, NULL, false);
                g_autoptr(GHashTable) t = NULL;

                g_assert_cmpstr(report_get(refused, "result"), ==, UM_ERROR_FAILED);
                g_assert_nonnull(strstr(report_get(refused, "message"), "fsck.erofs"));
                g_assert_nonnull(strstr(report_get(refused, "message"), "chksum"));
                g_assert_cmpint(calls_count_loops_on(bad), ==, 0);
                t = mount_fd(good, NULL, false);
                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                g_assert_cmpstr(report_get(t, "info-device"), ==, good);
                g_assert_cmpint(calls_count_loops_on(good), ==, 0);
                unmount(report_get(t, "mount-point"));
        }
        /* Without the check the damaged image mounts (the kernel tolerates this damage). */
        reload_with("");
        {
                g_autoptr(GHashTable) t = mount_fd(damaged, NULL, false);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                unmount(report_get(t, "mount-point"));
        }
        stop_daemon();
}

/* --check-config on the daemon binary: line numbers for errors, exit codes. */
static void test_check_config_cli(void) {
        g_autofree char *path = g_build_filename(harness_tmpdir(), "check.conf", NULL);
        g_autofree char *out = NULL, *err = NULL;
        const char *argv[] = { harness_daemon_path(), "--check-config", path, NULL };
        int status = 0;

        g_assert_true(g_file_set_contents(path, "[General]\nAllowExec=yes\n\n[Limits]\n"
                                          "MaxMountsPerUser=zero\n", -1, NULL));
        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, 0, NULL, NULL, &out, &err,
                                   &status, NULL));
        g_test_message("stdout: %s\nstderr: %s", out, err);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 1);
        g_assert_nonnull(strstr(out, ":5:"));
        g_assert_nonnull(strstr(out, "MaxMountsPerUser"));

        g_clear_pointer(&out, g_free);
        g_clear_pointer(&err, g_free);
        g_assert_true(g_file_set_contents(path, "[Limits]\nMaxMountsPerUser=3\n", -1, NULL));
        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, 0, NULL, NULL, &out, &err,
                                   &status, NULL));
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        image_ext4 = make_image("ext4", "cfgstick");
        image_xfs = make_image("xfs", "cfgxfs");
        image_slow = make_image("ext4", "slow");
        marks_dir = g_build_filename(harness_tmpdir(), "marks", NULL);
        g_assert_cmpint(mkdir(marks_dir, 0777), ==, 0);
        g_assert_cmpint(chmod(marks_dir, 0777), ==, 0); /* polkitd runs as its own user */
        {
                g_autofree char *rules = g_strdup_printf(rules_format, marks_dir);

                g_assert_cmpint(harness_set_rules(rules), ==, 0);
        }

        g_test_add_func("/config/bad-file-refuses-start", test_bad_file_refuses_start);
        g_test_add_func("/config/allowed-filesystems-reload", test_allowed_filesystems_and_reload);
        g_test_add_func("/config/reload-keeps-mounts-and-requests",
                        test_reload_keeps_mounts_and_requests);
        g_test_add_func("/config/options-and-exec", test_options_and_exec);
        g_test_add_func("/config/image-check", test_image_check);
        g_test_add_func("/config/check-config-cli", test_check_config_cli);

        r = g_test_run();
        if (daemon_pid > 0)
                harness_stop_daemon(daemon_pid, NULL);
        return r;
}
