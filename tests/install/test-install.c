/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The install tree: "meson install" of this very build into a DESTDIR on the harness's
 * private /run, checked to be complete (every file the build promises) and coherent (the
 * activation file, the unit and the bus policy agree on the daemon's path and bus name),
 * then used: the DESTDIR is overlaid where the prefix says it lives (in the test's mount
 * namespace only), the private bus gets the installed activation file as its service
 * directory, and a call to org.freedesktop.UserMount1 must activate the installed daemon;
 * after a SIGTERM the next call activates a new one that still knows the earlier mount;
 * once that mount is gone the daemon exits when idle, and the next call activates it again.
 * Finally the installed unit goes through "systemd-analyze verify" and "security".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "conf.h"
#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define ACTIVATION_FILE UM_BUS_NAME ".service"
#define UNIT_NAME "usermountd.service"
#define USER_UNIT_NAME "usermount-automount.service"
#define INSTALLED_DAEMON INSTALL_LIBEXECDIR "/usermountd"
/* usermountd starts its workers from the directory it runs from. */
#define INSTALLED_WORKER INSTALL_LIBEXECDIR "/usermount-worker"
#define SERVICE_DIR INSTALL_DATADIR "/dbus-1/system-services"
#define IMAGE_LABEL "INSTALLTEST"
/* The most systemd-analyze security may score the unit (0 best, 10 worst). */
#define MAX_EXPOSURE 5.0
/* The same for the user unit. systemd-analyze --offline scores it as if it ran as root
 * with every capability, which no user's service manager gives; what is left out, and
 * why, is in the unit's header (a mount namespace would hide automount's mounts). */
#define MAX_USER_EXPOSURE 6.0

static char *destdir;
static char *image;
static char *mount_point; /* what the first instance mounted, for the second to list */
static bool overlaid;

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') == 0 &&\n"
        "            subject.user == 'umtest1')\n"
        "                return polkit.Result.YES;\n"
        "});\n";

/* ---------------------------------------------------------------------------------- */
/* Helpers                                                                             */

/* path as installed: below DESTDIR. */
static char *staged(const char *path) {
        return g_build_filename(destdir, path, NULL);
}

static char *read_staged(const char *path) {
        g_autofree char *p = staged(path);
        g_autoptr(GError) error = NULL;
        char *contents = NULL;

        if (!g_file_get_contents(p, &contents, NULL, &error))
                g_error("cannot read %s: %s", p, error->message);
        return contents;
}

/* The value of the first "key=" line of an ini-style file (unit or activation file). */
static char *ini_value(const char *contents, const char *key) {
        g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
        size_t n = strlen(key);

        for (size_t i = 0; lines[i]; i++)
                if (strncmp(lines[i], key, n) == 0 && lines[i][n] == '=')
                        return g_strdup(lines[i] + n + 1);
        return NULL;
}

/* Runs argv; its stdout and stderr (merged in that order) go to ret_output. */
static int run(const char *const *argv, char **ret_output) {
        g_autofree char *out = NULL, *err = NULL;
        g_autoptr(GError) error = NULL;
        int status;

        if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                    &status, &error)) {
                g_test_message("cannot run %s: %s", argv[0], error->message);
                return -1;
        }
        *ret_output = g_strconcat(out, err, NULL);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int install(void) {
        g_autofree char *output = NULL;
        const char *argv[] = { "meson", "install", "-C", INSTALL_BUILD_ROOT, "--no-rebuild",
                "--quiet", "--destdir", destdir, NULL };
        int r;

        r = run(argv, &output);
        if (r != 0)
                fprintf(stderr, "meson install failed (%d):\n%s\n", r, output);
        return r == 0 ? 0 : -EIO;
}

/*
 * Makes the DESTDIR's copy of dir visible at dir, in this mount namespace only: a read-only
 * overlay of the DESTDIR on the deepest directory of dir's path that exists here (the host's
 * files stay visible beside the installed ones). Nothing is created on the host: the prefix
 * (e.g. /usr/local/libexec) may not exist there.
 */
static int overlay_installed(const char *dir) {
        g_autofree char *base = g_strdup(dir), *lower = NULL, *options = NULL;

        while (access(base, F_OK) < 0) {
                char *slash = strrchr(base, '/');

                if (!slash || slash == base)
                        return -ENOENT; /* would overlay "/" */
                *slash = 0;
        }
        lower = staged(base);
        options = g_strdup_printf("lowerdir=%s:%s", lower, base);
        if (mount("overlay", base, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, options) < 0) {
                int r = -errno;

                fprintf(stderr, "cannot overlay %s on %s: %m\n", lower, base);
                return r;
        }
        g_test_message("overlaid the DESTDIR's %s", base);
        return 0;
}

/* Every installed file the daemon and the tools need is at its installed path. */
static void ensure_overlay(void) {
        const char *const files[] = { INSTALLED_DAEMON, INSTALLED_WORKER,
                INSTALL_BINDIR "/usermount", SERVICE_DIR "/" ACTIVATION_FILE,
                INSTALL_MANDIR "/man1/usermount.1", INSTALL_MANDIR "/man5/usermount.conf.5",
                INSTALL_MANDIR "/man5/org.freedesktop.UserMount1.5",
                INSTALL_MANDIR "/man8/usermountd.8" };

        if (overlaid)
                return;
        for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
                g_autofree char *dir = g_path_get_dirname(files[i]);
                g_autofree char *want = staged(files[i]), *want_data = NULL, *got_data = NULL;

                /* Already there, and the installed one (not a host copy)? */
                if (g_file_get_contents(files[i], &got_data, NULL, NULL) &&
                    g_file_get_contents(want, &want_data, NULL, NULL) &&
                    streq(got_data, want_data))
                        continue;
                g_assert_cmpint(overlay_installed(dir), ==, 0);
                g_assert_true(g_file_test(files[i], G_FILE_TEST_EXISTS));
        }
        overlaid = true;
}

/* The pid that owns name, or 0. */
static pid_t name_owner_pid(const char *name) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t pid;
        int r;

        r = sd_bus_call_method(harness_bus(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus", "GetConnectionUnixProcessID", &error, &reply, "s", name);
        if (r < 0) {
                g_assert_cmpstr(error.name, ==, "org.freedesktop.DBus.Error.NameHasNoOwner");
                return 0;
        }
        g_assert_cmpint(sd_bus_message_read(reply, "u", &pid), >=, 0);
        return (pid_t) pid;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        *(bool *) userdata = true;
        return 0;
}

/* Waits until nobody owns name (the bus saw the last owner's connection close). */
static void wait_name_released(const char *name) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        g_autofree char *match = g_strdup_printf(
                "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
                "arg0='%s'", name);
        int64_t deadline = g_get_monotonic_time() + HARNESS_TIMEOUT_MS * 1000LL;
        bool changed = true;

        g_assert_cmpint(sd_bus_add_match(harness_bus(), &slot, match, on_owner_changed, &changed),
                >=, 0);
        for (;;) {
                int64_t now = g_get_monotonic_time();

                if (changed) {
                        changed = false;
                        if (name_owner_pid(name) == 0)
                                return;
                }
                g_assert_cmpint(now, <, deadline);
                if (sd_bus_process(harness_bus(), NULL) > 0)
                        continue;
                g_assert_cmpint(sd_bus_wait(harness_bus(), (uint64_t) (deadline - now)), >=, 0);
        }
}

/* The daemon that owns the bus name: checks it is the installed binary, started by the bus
 * (activation sets DBUS_STARTER_BUS_TYPE; the harness starts nothing here), and returns its
 * pid. */
static pid_t activated_daemon(void) {
        g_autofree char *exe_link = NULL, *exe = NULL, *environ_path = NULL, *env = NULL;
        pid_t pid = name_owner_pid(UM_BUS_NAME);
        bool starter = false;
        gsize n;

        g_assert_cmpint(pid, >, 0);
        exe_link = g_strdup_printf("/proc/%d/exe", (int) pid);
        exe = g_file_read_link(exe_link, NULL);
        g_assert_cmpstr(exe, ==, INSTALLED_DAEMON);

        environ_path = g_strdup_printf("/proc/%d/environ", (int) pid);
        g_assert_true(g_file_get_contents(environ_path, &env, &n, NULL));
        for (const char *p = env; p < env + n; p += strlen(p) + 1)
                starter = starter || streq(p, "DBUS_STARTER_BUS_TYPE=system");
        g_assert_true(starter);
        return pid;
}

/* SIGTERMs an activated daemon and waits until it has exited and left the bus. */
static void stop_daemon(pid_t pid) {
        int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        struct pollfd p = { .fd = pidfd, .events = POLLIN };

        g_assert_cmpint(pidfd, >=, 0);
        g_assert_cmpint(kill(pid, SIGTERM), ==, 0);
        g_assert_cmpint(poll(&p, 1, HARNESS_TIMEOUT_MS), ==, 1);
        close(pidfd);
        wait_name_released(UM_BUS_NAME);
}

/* ---------------------------------------------------------------------------------- */
/* Callers (forked, unprivileged)                                                      */

static int caller_mount(void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int fd = open(userdata, O_RDONLY | O_CLOEXEC);
        const char *where;
        int r;

        if (fd < 0 || harness_sd_bus_connect(&bus) < 0)
                return 1;
        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "MountFd",
                &error, &reply, "hssa{sv}", fd, "", "", 0);
        if (calls_report_result(r, &error) < 0)
                return 0;
        if (sd_bus_message_read(reply, "s", &where) < 0)
                return 1;
        harness_report("mount-point=%s", where);
        return 0;
}

static int caller_list(void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (harness_sd_bus_connect(&bus) < 0)
                return 1;
        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                "ListMounts", &error, &reply, "a{sv}", 0);
        if (calls_report_result(r, &error) < 0)
                return 0;
        if (sd_bus_message_enter_container(reply, 'a', "a{sv}") < 0)
                return 1;
        for (unsigned i = 0; !sd_bus_message_at_end(reply, false); i++) {
                g_autofree char *prefix = g_strdup_printf("mount%u.", i);

                calls_report_info(reply, prefix);
        }
        return 0;
}

static int caller_unmount(void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        if (harness_sd_bus_connect(&bus) < 0)
                return 1;
        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "Unmount",
                &error, NULL, "sa{sv}", (const char *) userdata, 0);
        calls_report_result(r, &error);
        return 0;
}

static GHashTable *run_caller(HarnessCallerFunc func, void *userdata) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, func, userdata,
                                &output),
                ==, 0);
        return calls_parse_report(output);
}

/* ---------------------------------------------------------------------------------- */
/* The tree                                                                            */

static void test_tree_complete(void) {
        const char *const files[] = {
                INSTALL_BINDIR "/usermount",
                INSTALLED_DAEMON,
                SERVICE_DIR "/" ACTIVATION_FILE,
                INSTALL_DATADIR "/dbus-1/system.d/" UM_BUS_NAME ".conf",
                INSTALL_DATADIR "/dbus-1/interfaces/" UM_MANAGER_INTERFACE ".xml",
                INSTALL_DATADIR "/polkit-1/actions/org.freedesktop.usermount1.policy",
                INSTALL_DATADIR "/usermount/usermount.conf",
                INSTALL_DATADIR "/usermount/udisks2/udisks2.conf",
                INSTALL_DATADIR "/usermount/udisks2/org.freedesktop.UDisks2.service",
                INSTALL_DATADIR "/usermount/udisks2/org.freedesktop.UDisks2-usermount.conf",
                INSTALL_DATADIR "/usermount/polkit-rules/50-usermount-deny-inactive.rules",
                INSTALL_DATADIR "/usermount/polkit-rules/50-usermount-deny-seat.rules",
                INSTALL_DATADIR "/usermount/polkit-rules/50-usermount-deny-user.rules",
                INSTALL_DATADIR "/usermount/polkit-rules/50-usermount-exec-uuids.rules",
                INSTALL_DATADIR "/usermount/polkit-rules/50-usermount-from-udisks2.rules",
                INSTALL_DATADIR "/usermount/polkit-rules/50-usermount-group-images.rules",
                INSTALL_DATADIR "/usermount/polkit-rules/50-usermount-kernel-driver.rules",
                INSTALL_LIBEXECDIR "/usermount-fuse-shim.so",
                INSTALL_UNITDIR "/" UNIT_NAME,
                INSTALL_USERUNITDIR "/" USER_UNIT_NAME,
                INSTALL_TMPFILESDIR "/usermount.conf",
                INSTALL_SYSUSERSDIR "/usermount.conf",
                INSTALL_MANDIR "/man1/usermount.1",
                INSTALL_MANDIR "/man8/usermountd.8",
                INSTALL_MANDIR "/man5/usermount.conf.5",
                INSTALL_MANDIR "/man5/org.freedesktop.UserMount1.5",
                INSTALL_MANDIR "/man3/libusermount.3",
                INSTALL_MANDIR "/man3/usermount_client_new.3",
                INSTALL_MANDIR "/man3/usermount_open_mount.3",
                INSTALL_MANDIR "/man3/usermount_unmount.3",
                INSTALL_MANDIR "/man3/usermount_list.3",
                INSTALL_MANDIR "/man3/usermount_monitor_new.3",
                INSTALL_MANDIR "/man3/usermount_mount_fd.3", /* a link */
                INSTALL_LIBDIR "/libusermount.so.1.0.0",
                INSTALL_INCLUDEDIR "/usermount.h",
                INSTALL_LIBDIR "/pkgconfig/usermount.pc",
                INSTALL_PREFIX "/lib/udev/rules.d/59-usermount-loop.rules",
                INSTALL_COMPLETIONDIR "/usermount",
                INSTALL_ZSHCOMPLETIONDIR "/_usermount",
                INSTALL_FISHCOMPLETIONDIR "/usermount.fish",
        };
        const char *const executables[] = { INSTALL_BINDIR "/usermount", INSTALLED_DAEMON,
                                            INSTALLED_WORKER };

        for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
                g_autofree char *p = staged(files[i]);
                struct stat st;

                if (stat(p, &st) < 0)
                        g_error("not installed: %s", files[i]);
                g_assert_true(S_ISREG(st.st_mode));
        }
        for (size_t i = 0; i < G_N_ELEMENTS(executables); i++) {
                g_autofree char *p = staged(executables[i]);

                g_assert_cmpint(access(p, X_OK), ==, 0);
        }
}

/* The activation file, the unit and the installed bus policy name the same bus name. */
static void test_tree_names(void) {
        g_autofree char *activation = read_staged(SERVICE_DIR "/" ACTIVATION_FILE);
        g_autofree char *unit = read_staged(INSTALL_UNITDIR "/" UNIT_NAME);
        g_autofree char *policy = read_staged(INSTALL_DATADIR "/dbus-1/system.d/" UM_BUS_NAME
                                                                 ".conf");
        g_autofree char *source_policy = NULL, *name = ini_value(activation, "Name");
        g_autofree char *own = NULL, *source_path = g_build_filename(harness_source_root(),
                                                               "dbus", UM_BUS_NAME ".conf", NULL);

        g_autofree char *bus_name = ini_value(unit, "BusName"), *type = ini_value(unit, "Type");
        g_autofree char *unit_name = ini_value(activation, "SystemdService");
        g_autofree char *user = ini_value(activation, "User");

        g_assert_cmpstr(name, ==, UM_BUS_NAME);
        g_assert_cmpstr(bus_name, ==, name);
        g_assert_cmpstr(type, ==, "dbus");
        g_assert_cmpstr(unit_name, ==, UNIT_NAME);
        g_assert_cmpstr(user, ==, "root");

        own = g_strdup_printf("<allow own=\"%s\"/>", name);
        g_assert_nonnull(strstr(policy, own));
        /* The private bus of this test reads the source's policy: it must be the same. */
        g_assert_true(g_file_get_contents(source_path, &source_policy, NULL, NULL));
        g_assert_cmpstr(policy, ==, source_policy);
}

/* Exec= and ExecStart= run the installed daemon, with the same arguments. */
static void test_tree_daemon_path(void) {
        g_autofree char *activation = read_staged(SERVICE_DIR "/" ACTIVATION_FILE);
        g_autofree char *unit = read_staged(INSTALL_UNITDIR "/" UNIT_NAME);
        g_autofree char *exec = ini_value(activation, "Exec");
        g_autofree char *exec_start = ini_value(unit, "ExecStart");
        g_auto(GStrv) argv = NULL;

        g_assert_nonnull(exec);
        g_assert_cmpstr(exec, ==, exec_start);
        g_assert_true(g_shell_parse_argv(exec, NULL, &argv, NULL));
        g_assert_cmpstr(argv[0], ==, INSTALLED_DAEMON);
        g_assert_cmpstr(argv[1], ==, "--idle-timeout=60");
}

/* The unit's bounding set is exactly what the daemon keeps (kept_caps in daemon/main.c). */
static void test_tree_capabilities(void) {
        g_autofree char *unit = read_staged(INSTALL_UNITDIR "/" UNIT_NAME);
        g_autofree char *bounding = ini_value(unit, "CapabilityBoundingSet");
        g_autofree char *main_c = NULL, *path = g_build_filename(harness_source_root(), "daemon",
                                                        "main.c", NULL);
        g_autoptr(GRegex) regex = g_regex_new("CAP_[A-Z_]+", 0, 0, NULL);
        g_autoptr(GMatchInfo) match = NULL;
        g_autoptr(GPtrArray) kept = g_ptr_array_new_with_free_func(g_free);
        g_auto(GStrv) listed = NULL;
        const char *start, *end;

        g_assert_true(g_file_get_contents(path, &main_c, NULL, NULL));
        start = strstr(main_c, "kept_caps[] = {");
        g_assert_nonnull(start);
        end = strstr(start, "};");
        g_assert_nonnull(end);
        g_regex_match_full(regex, start, end - start, 0, 0, &match, NULL);
        for (; g_match_info_matches(match); g_match_info_next(match, NULL))
                g_ptr_array_add(kept, g_match_info_fetch(match, 0));
        g_assert_cmpuint(kept->len, >, 0);

        g_assert_nonnull(bounding);
        listed = g_strsplit(bounding, " ", -1);
        g_assert_cmpuint(g_strv_length(listed), ==, kept->len);
        for (guint i = 0; i < kept->len; i++)
                g_assert_true(g_strv_contains((const char *const *) listed, kept->pdata[i]));
}

/* tmpfiles.d makes the state directory and the media root; sysusers.d the check's user. */
static void test_tree_tmpfiles_sysusers(void) {
        g_autofree char *tmpfiles = read_staged(INSTALL_TMPFILESDIR "/usermount.conf");
        g_autofree char *sysusers = read_staged(INSTALL_SYSUSERSDIR "/usermount.conf");
        g_autofree char *state = g_strdup_printf("\nd %s 0700 root root -\n", USERMOUNT_RUNDIR);
        g_autofree char *user = g_strdup_printf("\nu %s ", CONF_DEFAULT_IMAGE_CHECK_USER);

        g_assert_nonnull(strstr(tmpfiles, state));
        g_assert_nonnull(strstr(tmpfiles, "\nd " CONF_DEFAULT_MEDIA_ROOT " 0755 root root -\n"));
        g_assert_nonnull(strstr(sysusers, user));
}

/* ---------------------------------------------------------------------------------- */
/* Activation                                                                          */

/* The installed activation file passes --idle-timeout=60 (test_tree_daemon_path()
 * checked it); the DESTDIR's copy gets 1 s, so that the idle exit and the activation after
 * it fit in a test. Done after that check and before anything is overlaid. */
static void shorten_idle_timeout(void) {
        g_autofree char *path = staged(SERVICE_DIR "/" ACTIVATION_FILE);
        g_autofree char *contents = read_staged(SERVICE_DIR "/" ACTIVATION_FILE);
        g_auto(GStrv) parts = g_strsplit(contents, " --idle-timeout=60", -1);
        g_autofree char *fixed = g_strjoinv(" --idle-timeout=1", parts);

        g_assert_cmpuint(g_strv_length(parts), ==, 2);
        g_assert_true(g_file_set_contents(path, fixed, -1, NULL));
}

/* Waits until pid (not our child) has exited and its name is gone. */
static void wait_exited(pid_t pid) {
        int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        struct pollfd p = { .fd = pidfd, .events = POLLIN };

        if (pidfd < 0 && errno == ESRCH)
                return wait_name_released(UM_BUS_NAME);
        g_assert_cmpint(pidfd, >=, 0);
        g_assert_cmpint(poll(&p, 1, HARNESS_TIMEOUT_MS), ==, 1);
        close(pidfd);
        wait_name_released(UM_BUS_NAME);
}

static void test_activation(void) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        g_autoptr(GHashTable) report = NULL;
        g_autofree char *version = NULL;
        pid_t pid;

        shorten_idle_timeout();
        ensure_overlay();
        g_assert_cmpint(name_owner_pid(UM_BUS_NAME), ==, 0);

        /* Reading a property activates the daemon. */
        g_assert_cmpint(sd_bus_get_property_string(harness_bus(), UM_BUS_NAME, UM_OBJECT_PATH,
                                UM_MANAGER_INTERFACE, "Version", &error, &version),
                >=, 0);
        g_assert_cmpstr(version, ==, PACKAGE_VERSION);
        pid = activated_daemon();

        /* An unprivileged caller's mount, registered in the daemon's state directory. */
        report = run_caller(caller_mount, image);
        g_assert_cmpstr(report_get(report, "result"), ==, "ok");
        mount_point = g_strdup(report_get(report, "mount-point"));
        g_assert_cmpstr(mount_point, ==, CONF_DEFAULT_MEDIA_ROOT "/" HARNESS_USER1 "/" IMAGE_LABEL);
        g_assert_cmpint(harness_count_mounts(0), ==, 1);
        g_assert_cmpint(name_owner_pid(UM_BUS_NAME), ==, pid);

        stop_daemon(pid);
        /* SIGTERM leaves mounts in place. */
        g_assert_cmpint(harness_count_mounts(0), ==, 1);
}

static void test_reactivation(void) {
        g_autoptr(GHashTable) report = NULL, after = NULL;

        if (!mount_point) {
                g_test_skip("the first activation failed");
                return;
        }
        g_assert_cmpint(name_owner_pid(UM_BUS_NAME), ==, 0);

        /* The caller's call activates a new daemon, which knows the earlier mount. */
        report = run_caller(caller_list, NULL);
        g_assert_cmpstr(report_get(report, "result"), ==, "ok");
        g_assert_cmpstr(report_get(report, "mount0.mount-point"), ==, mount_point);
        g_assert_null(report_get(report, "mount1.mount-point"));
        (void) activated_daemon();

        after = run_caller(caller_unmount, mount_point);
        g_assert_cmpstr(report_get(after, "result"), ==, "ok");
        g_assert_cmpint(harness_count_mounts(0), ==, 0);
        g_assert_cmpint(harness_count_loop_devices(), ==, 0);
}

/* With nothing left to watch the daemon exits by itself (after 1 s here), and the next
 * call activates it again. */
static void test_idle_exit_and_activation(void) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        g_autofree char *version = NULL;
        pid_t pid = name_owner_pid(UM_BUS_NAME), again;

        if (pid == 0) {
                g_test_skip("no activated daemon left by the earlier tests");
                return;
        }
        wait_exited(pid);
        g_assert_cmpint(sd_bus_get_property_string(harness_bus(), UM_BUS_NAME, UM_OBJECT_PATH,
                                UM_MANAGER_INTERFACE, "Version", &error, &version),
                >=, 0);
        again = activated_daemon();
        g_assert_cmpint(again, !=, pid);
        stop_daemon(again);
}

/* ---------------------------------------------------------------------------------- */
/* systemd-analyze                                                                     */

static bool have_systemd_analyze(void) {
        g_autofree char *path = g_find_program_in_path("systemd-analyze");

        if (!path)
                g_test_skip("systemd-analyze is not installed (package systemd)");
        return path != NULL;
}

static void test_unit_verify(void) {
        g_autofree char *unit = staged(INSTALL_UNITDIR "/" UNIT_NAME), *output = NULL;
        const char *argv[] = { "systemd-analyze", "verify", "--man=yes", unit, NULL };
        int r;

        if (!have_systemd_analyze())
                return;
        /* ExecStart='s binary and the Documentation= man pages must exist. */
        ensure_overlay();
        r = run(argv, &output);
        if (*output)
                g_test_message("systemd-analyze verify: %s", output);
        g_assert_cmpint(r, ==, 0);
        g_assert_cmpstr(output, ==, "");
}

static void test_unit_security(void) {
        g_autofree char *unit = staged(INSTALL_UNITDIR "/" UNIT_NAME), *output = NULL;
        const char *argv[] = { "systemd-analyze", "security", "--offline=true", "--no-pager",
                unit, NULL };
        const char *p;
        double score;

        if (!have_systemd_analyze())
                return;
        ensure_overlay();
        g_assert_cmpint(run(argv, &output), ==, 0);
        p = strstr(output, "Overall exposure level for " UNIT_NAME ": ");
        g_assert_nonnull(p);
        p += strlen("Overall exposure level for " UNIT_NAME ": ");
        score = g_ascii_strtod(p, NULL);
        g_test_message("systemd-analyze security exposure of %s: %.1f (at most %.1f allowed)",
                UNIT_NAME, score, MAX_EXPOSURE);
        g_assert_cmpfloat(score, >, 0.0);
        g_assert_cmpfloat(score, <=, MAX_EXPOSURE);
}

/*
 * The user unit, as the user's service manager reads it (--user: systemd-analyze needs a
 * runtime directory for that, which the test provides).
 */
static void user_runtime_dir(void) {
        g_autofree char *dir = g_build_filename(harness_tmpdir(), "user-runtime", NULL);

        if (g_mkdir_with_parents(dir, 0700) < 0)
                g_error("cannot make %s: %m", dir);
        g_setenv("XDG_RUNTIME_DIR", dir, TRUE);
}

static void test_user_unit_verify(void) {
        g_autofree char *unit = staged(INSTALL_USERUNITDIR "/" USER_UNIT_NAME), *output = NULL;
        g_autofree char *text = NULL;
        const char *argv[] = { "systemd-analyze", "--user", "verify", "--man=yes", unit, NULL };
        int r;

        /* The unit runs the installed client. */
        g_assert_true(g_file_get_contents(unit, &text, NULL, NULL));
        g_assert_nonnull(strstr(text, "\nExecStart=" INSTALL_BINDIR "/usermount automount\n"));
        if (!have_systemd_analyze())
                return;
        ensure_overlay();
        user_runtime_dir();
        r = run(argv, &output);
        if (*output)
                g_test_message("systemd-analyze --user verify: %s", output);
        g_assert_cmpint(r, ==, 0);
        g_assert_cmpstr(output, ==, "");
}

static void test_user_unit_security(void) {
        g_autofree char *unit = staged(INSTALL_USERUNITDIR "/" USER_UNIT_NAME), *output = NULL;
        const char *argv[] = { "systemd-analyze", "--user", "security", "--offline=true",
                "--no-pager", unit, NULL };
        const char *p;
        double score;

        if (!have_systemd_analyze())
                return;
        ensure_overlay();
        user_runtime_dir();
        g_assert_cmpint(run(argv, &output), ==, 0);
        p = strstr(output, "Overall exposure level for " USER_UNIT_NAME ": ");
        g_assert_nonnull(p);
        p += strlen("Overall exposure level for " USER_UNIT_NAME ": ");
        score = g_ascii_strtod(p, NULL);
        g_test_message("systemd-analyze security exposure of %s: %.1f (at most %.1f allowed)",
                USER_UNIT_NAME, score, MAX_USER_EXPOSURE);
        g_assert_cmpfloat(score, >, 0.0);
        g_assert_cmpfloat(score, <=, MAX_USER_EXPOSURE);
}

/* ---------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
        const HarnessOptions options = { .bus_service_dir = SERVICE_DIR };
        const HarnessEntry entries[] = {
                { HARNESS_ENTRY_FILE, "hello.txt", "installed\n" },
                {},
        };
        const HarnessImageSpec spec = { .label = IMAGE_LABEL, .entries = entries };
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(&options);

        destdir = g_build_filename(harness_tmpdir(), "destdir", NULL);
        r = install();
        if (r < 0) {
                printf("Bail out! meson install into %s failed\n", destdir);
                return 1;
        }
        if (harness_set_rules(rules) < 0 || harness_make_image("ext4", &spec, &image) < 0) {
                printf("Bail out! cannot set up polkit rules or the image\n");
                return 1;
        }

        g_test_add_func("/install/tree/complete", test_tree_complete);
        g_test_add_func("/install/tree/names", test_tree_names);
        g_test_add_func("/install/tree/daemon-path", test_tree_daemon_path);
        g_test_add_func("/install/tree/capabilities", test_tree_capabilities);
        g_test_add_func("/install/tree/tmpfiles-sysusers", test_tree_tmpfiles_sysusers);
        g_test_add_func("/install/activation/first", test_activation);
        g_test_add_func("/install/activation/again", test_reactivation);
        g_test_add_func("/install/activation/after-idle-exit", test_idle_exit_and_activation);
        g_test_add_func("/install/unit/verify", test_unit_verify);
        g_test_add_func("/install/unit/security", test_unit_security);
        g_test_add_func("/install/user-unit/verify", test_user_unit_verify);
        g_test_add_func("/install/user-unit/security", test_user_unit_security);
        return g_test_run();
}
