/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Security labels end to end, on this machine without a labelling LSM: an unprivileged
 * caller's OpenMount of an ext4 image gets no label option, neither in info["options"]
 * nor in the superblock options the kernel shows, also with [Labels] SELinuxType= set;
 * and label options from the caller (context=, smackfsroot=, ...) are refused with
 * OptionNotAllowed and leave nothing behind. The option computation for SELinux and Smack
 * is covered by tests/unit/test-label.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define CONF_FILE "usermount/usermount.conf"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image;
static char *target;

static const char rules[] = CALLS_RULES_ALLOW_USER1;

/* ---- The caller ------------------------------------------------------------------------ */

/* Reports the superblock options of the mount on path from /proc/self/mountinfo. */
static void report_super_options(const char *path) {
        g_autofree char *info = NULL;
        g_auto(GStrv) lines = NULL;

        g_assert_true(g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL));
        lines = g_strsplit(info, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
                g_auto(GStrv) f = g_strsplit(lines[i], " ", -1);
                guint n = g_strv_length(f);

                /* id parent dev root mountpoint opts [tags] - fstype source superopts */
                if (n < 10 || !streq(f[4], path))
                        continue;
                for (guint j = 6; j + 3 < n; j++)
                        if (streq(f[j], "-"))
                                harness_report("super-options=%s", f[j + 3]);
        }
}

static int caller_open_mount(void *userdata) {
        const char *options = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int source = -EBADF, mount_fd = -EBADF;
        sd_bus *bus = NULL;
        int fd, r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        source = open(image, O_RDWR | O_CLOEXEC);
        g_assert_cmpint(source, >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, "OpenMount"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "hss", source, "ext4", options), >=, 0);
        g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        calls_report_result(r, &error);
        if (r < 0) {
                sd_bus_flush_close_unref(bus);
                return 0;
        }
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        calls_report_info(reply, "info-");
        sd_bus_flush_close_unref(bus);

        r = move_mount(mount_fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH);
        harness_report("attach=%s", calls_errno_name(r));
        if (r < 0)
                return 0;
        report_super_options(target);
        r = umount2(target, MNT_DETACH);
        harness_report("detach=%s", calls_errno_name(r));
        return 0;
}

/* ---- The test -------------------------------------------------------------------------- */

static GHashTable *run_call(const char *options) {
        g_autofree char *output = NULL;
        int status;

        status = harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, HARNESS_NEW_USERNS,
                                caller_open_mount, (void *) options, &output);
        g_test_message("caller output:\n%s", output ?: "");
        g_assert_cmpint(status, ==, 0);
        return calls_parse_report(output);
}

static bool has_label_option(const char *options) {
        g_auto(GStrv) items = g_strsplit(strempty(options), ",", -1);

        for (size_t i = 0; items[i]; i++)
                if (g_str_has_prefix(items[i], "context=") ||
                    g_str_has_prefix(items[i], "fscontext=") ||
                    g_str_has_prefix(items[i], "defcontext=") ||
                    g_str_has_prefix(items[i], "rootcontext=") ||
                    streq(items[i], "seclabel") || g_str_has_prefix(items[i], "smackfs"))
                        return true;
        return false;
}

/* The mount works and carries exactly the options usermount chose, none of them a label. */
static void assert_mounted_unlabelled(const char *options, const char *want_options) {
        g_autoptr(GHashTable) t = run_call(options);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-options"), ==, want_options);
        g_assert_false(has_label_option(report_get(t, "info-options")));
        g_assert_cmpstr(report_get(t, "attach"), ==, "ok");
        /* What the kernel applied: no label option reached the superblock either. */
        g_assert_nonnull(report_get(t, "super-options"));
        g_assert_nonnull(strstr(report_get(t, "super-options"), "errors=remount-ro"));
        g_assert_false(has_label_option(report_get(t, "super-options")));
        g_assert_cmpstr(report_get(t, "detach"), ==, "ok");
        calls_assert_clean(daemon_pid, &baseline);
}

static void test_no_label_added(void) {
        assert_mounted_unlabelled("", "errors=remount-ro");
        assert_mounted_unlabelled("noatime,commit=30", "commit=30,errors=remount-ro");
}

/* SELinuxType= only matters where SELinux is enabled; here it changes nothing. */
static void test_no_label_with_selinux_type(void) {
        /* The forced commit=7 shows that the daemon runs with this file. */
        g_assert_cmpint(harness_write_etc(CONF_FILE, HARNESS_CONF_DEFAULT "[Labels]\nSELinuxType=removable_t\n"
                                                     "[ext4]\nForcedOptions=commit=7\n"), ==, 0);
        /* The daemon handles SIGHUP before any call that arrives after it. */
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
        assert_mounted_unlabelled("", "commit=7,errors=remount-ro");
        g_assert_cmpint(harness_write_etc(CONF_FILE, HARNESS_CONF_DEFAULT), ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
}

/* Labels come from usermount only: every label option from the caller is refused. */
static void test_caller_labels_refused(void) {
        static const char *const cases[] = {
                "context=system_u:object_r:tmp_t:s0",
                "context=unconfined_u:object_r:unconfined_t:s0-s0:c0.c1023",
                "fscontext=system_u:object_r:tmp_t:s0",
                "defcontext=system_u:object_r:tmp_t:s0",
                "rootcontext=system_u:object_r:tmp_t:s0",
                "seclabel",
                "smackfsroot=*",
                "smackfsdef=_",
                "smackfstransmute=User",
                "smackfshat=^",
                "smackfsfloor=_",
                "noatime,context=system_u:object_r:tmp_t:s0",
                "commit=30,smackfsroot=*",
                "Context=system_u:object_r:tmp_t:s0",
                "SMACKFSROOT=*",
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autoptr(GHashTable) t = run_call(cases[i]);
                const char *message = strempty(report_get(t, "message"));

                g_test_message("options: %s", cases[i]);
                g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_OPTION_NOT_ALLOWED);
                if (!strstr(message, "security labels on user mounts are set by usermount only"))
                        g_error("message '%s' does not say why", message);
                g_assert_null(report_get(t, "attach"));
                calls_assert_clean(daemon_pid, &baseline);
        }
}

int main(int argc, char *argv[]) {
        const HarnessEntry entries[] = {
                { HARNESS_ENTRY_FILE, "hello.txt", "hello labels\n", 0644, 0, 0 },
                { 0 },
        };
        const HarnessImageSpec spec = { .label = "um-labels", .entries = entries };
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(chmod(image, 0600), ==, 0);
        target = g_build_filename(harness_tmpdir(), "labels-target", NULL);
        g_assert_cmpint(g_mkdir_with_parents(target, 0755), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_write_etc(CONF_FILE, HARNESS_CONF_DEFAULT), ==, 0);
        r = harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid);
        g_assert_cmpint(r, ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/labels/none-added", test_no_label_added);
        g_test_add_func("/labels/none-added-with-selinux-type", test_no_label_with_selinux_type);
        g_test_add_func("/labels/caller-labels-refused", test_caller_labels_refused);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        g_free(target);
        g_free(image);
        return r;
}
