/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The harness's own test: the private bus and its policy, polkitd answering for the
 * project's actions under test rules, unprivileged callers (also in a user namespace) and
 * which bus clients work for them, the image factories, the daemon lifecycle (with a
 * stand-in) and the leak counters.
 *
 * UM_HARNESS_SMOKE_CRASH=abort|sigkill|hang makes it set up a busy environment and then
 * crash or hang instead of running tests; test-harness-cleanup.sh uses that to check that
 * nothing survives.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <blkid.h>
#include <gio/gio.h>
#include <sys/capability.h>

#include "harness.h"
#include "macro.h"
#include "usermount-names.h"

/* ---------------------------------------------------------------------------------- */
/* Helpers                                                                             */

static uid_t bus_name_uid(const char *name) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t uid;

        g_assert_cmpint(sd_bus_call_method(harness_bus(), "org.freedesktop.DBus",
                                "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                "GetConnectionUnixUser", &error, &reply, "s", name),
                >=, 0);
        g_assert_cmpint(sd_bus_message_read(reply, "u", &uid), >=, 0);
        return uid;
}

static bool name_has_owner(const char *name) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int has;

        g_assert_cmpint(sd_bus_call_method(harness_bus(), "org.freedesktop.DBus",
                                "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                                &error, &reply, "s", name),
                >=, 0);
        g_assert_cmpint(sd_bus_message_read(reply, "b", &has), >=, 0);
        return has;
}

/* Reads "key=value" lines a caller reported into a table. */
static GHashTable *parse_report(const char *output) {
        GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        g_auto(GStrv) lines = g_strsplit(output, "\n", -1);

        for (size_t i = 0; lines[i]; i++) {
                char *eq = strchr(lines[i], '=');

                if (eq)
                        g_hash_table_insert(t, g_strndup(lines[i], (gsize) (eq - lines[i])),
                                g_strdup(eq + 1));
        }
        return t;
}

/* A caller that connects with sd-bus, reports its unique name and stays connected until
 * released: a polkit subject. */
static int caller_hold_name(void *userdata) {
        sd_bus *bus = NULL;
        const char *name;

        if (harness_sd_bus_connect(&bus) < 0 || sd_bus_get_unique_name(bus, &name) < 0)
                return 1;
        harness_report("%s", name);
        harness_await_release();
        sd_bus_flush_close_unref(bus);
        return 0;
}

typedef struct Subject {
        HarnessCaller *caller;
        char *name;
} Subject;

static void subject_start(Subject *s, uid_t uid, gid_t gid) {
        g_assert_cmpint(harness_caller_spawn(uid, gid, 0, caller_hold_name, NULL, &s->caller),
                ==, 0);
        g_assert_cmpint(harness_caller_read_line(s->caller, HARNESS_TIMEOUT_MS, &s->name), ==, 0);
        g_assert_cmpuint(bus_name_uid(s->name), ==, uid);
}

static void subject_stop(Subject *s) {
        g_assert_cmpint(harness_caller_release(s->caller), ==, 0);
        g_assert_cmpint(harness_caller_wait(s->caller, HARNESS_TIMEOUT_MS, NULL), ==, 0);
        s->caller = harness_caller_free(s->caller);
        g_clear_pointer(&s->name, g_free);
}

static void assert_check(const Subject *s, const char *action, const char *read_only,
        bool authorized, bool challenge) {
        const char *details[] = { "read-only", read_only, NULL };
        HarnessAuthorization a;

        g_assert_cmpint(harness_polkit_check(s->name, action, read_only ? details : NULL, false,
                                &a),
                ==, 0);
        g_test_message("%s for %s (read-only=%s): authorized=%d challenge=%d", action, s->name,
                read_only ? read_only : "-", a.is_authorized, a.is_challenge);
        g_assert_cmpint(a.is_authorized, ==, authorized);
        g_assert_cmpint(a.is_challenge, ==, challenge);
}

/* ---------------------------------------------------------------------------------- */
/* The bus                                                                             */

static void test_bus_private(void) {
        g_autofree char *socket = NULL;

        /* polkitd is on the private bus, which is not the host's. */
        g_assert_true(g_str_has_prefix(harness_bus_address(), "unix:path=/run/"));
        g_assert_cmpstr(g_getenv("DBUS_SYSTEM_BUS_ADDRESS"), ==, harness_bus_address());
        g_assert_true(name_has_owner("org.freedesktop.PolicyKit1"));
        g_assert_false(name_has_owner(UM_BUS_NAME));
        socket = g_file_read_link("/run/dbus/system_bus_socket", NULL);
        g_assert_nonnull(socket);
        g_assert_true(g_str_has_suffix(harness_bus_address(), socket));
}

/* The identities and files the harness adds to the private namespace. */
static void test_env_private(void) {
        g_autofree char *subuid = NULL, *conf = NULL;
        struct passwd *pw;
        struct group *gr;

        pw = getpwnam(HARNESS_ADMIN);
        g_assert_nonnull(pw);
        g_assert_cmpuint(pw->pw_uid, ==, HARNESS_UID_ADMIN);
        gr = getgrnam(HARNESS_GROUP);
        g_assert_nonnull(gr);
        g_assert_cmpuint(gr->gr_gid, ==, HARNESS_GID_GROUP);
        g_assert_true(g_strv_contains((const char *const *) gr->gr_mem, HARNESS_ADMIN));
        g_assert_true(g_file_get_contents("/etc/subuid", &subuid, NULL, NULL));
        g_assert_nonnull(strstr(subuid, HARNESS_USER1 ":2000000000:65536\n"));

        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", "[test]\n"), ==, 0);
        g_assert_true(g_file_get_contents("/etc/usermount/usermount.conf", &conf, NULL, NULL));
        g_assert_cmpstr(conf, ==, "[test]\n");
        /* test-harness-cleanup.sh checks from the host that none of this shows there. */
}

static int caller_request_daemon_name(void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r;

        if (harness_sd_bus_connect(&bus) < 0)
                return 1;
        r = sd_bus_request_name(bus, UM_BUS_NAME, 0);
        harness_report("request-name=%s", r >= 0 ? "ok" : g_strerror(-r));
        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus", "RequestName", &error, NULL, "su", UM_BUS_NAME, 0);
        harness_report("request-name-error=%s", r >= 0 ? "none" : error.name);
        sd_bus_flush_close_unref(bus);
        return 0;
}

/* The project's bus policy: only root may own the daemon's name. */
static void test_bus_policy_own(void) {
        g_autofree char *output = NULL;
        g_autoptr(GHashTable) report = NULL;

        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                caller_request_daemon_name, NULL, &output),
                ==, 0);
        report = parse_report(output);
        g_assert_cmpstr(g_hash_table_lookup(report, "request-name-error"), ==,
                "org.freedesktop.DBus.Error.AccessDenied");
        g_assert_false(name_has_owner(UM_BUS_NAME));
}

/* ---------------------------------------------------------------------------------- */
/* Callers                                                                             */

static int caller_identity(void *userdata) {
        g_autofree char *status = NULL, *fds = NULL;
        g_autoptr(GString) list = g_string_new(NULL);
        g_autoptr(GDir) dir = NULL;
        gid_t groups[64];
        int n = getgroups(G_N_ELEMENTS(groups), groups);
        const char *name;

        harness_report("uid=%u", (unsigned) getuid());
        harness_report("euid=%u", (unsigned) geteuid());
        harness_report("gid=%u", (unsigned) getgid());
        for (int i = 0; i < n; i++)
                g_string_append_printf(list, "%s%u", i ? "," : "", (unsigned) groups[i]);
        harness_report("groups=%s", list->str);
        if (g_file_get_contents("/proc/self/status", &status, NULL, NULL)) {
                char *cap = strstr(status, "CapEff:\t");

                if (cap)
                        harness_report("capeff=%.16s", cap + strlen("CapEff:\t"));
        }
        harness_report("no-new-privs=%d", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
        g_string_truncate(list, 0);
        dir = g_dir_open("/proc/self/fd", 0, NULL);
        while (dir && (name = g_dir_read_name(dir)))
                g_string_append_printf(list, "%s,", name);
        harness_report("fds=%s", list->str);
        return 7;
}

static void test_caller_identity(void) {
        g_autofree char *output = NULL;
        g_autoptr(GHashTable) r = NULL;
        g_auto(GStrv) fds = NULL;

        /* The exit status comes back; privileges are gone entirely. */
        g_assert_cmpint(harness_run_as(HARNESS_UID_ADMIN, HARNESS_GID_ADMIN, 0, caller_identity,
                                NULL, &output),
                ==, 7);
        r = parse_report(output);
        g_assert_cmpstr(g_hash_table_lookup(r, "uid"), ==, "61003");
        g_assert_cmpstr(g_hash_table_lookup(r, "euid"), ==, "61003");
        g_assert_cmpstr(g_hash_table_lookup(r, "gid"), ==, "61003");
        /* Supplementary groups from the private /etc/group. */
        g_assert_nonnull(strstr(g_hash_table_lookup(r, "groups"), "61100"));
        g_assert_cmpstr(g_hash_table_lookup(r, "capeff"), ==, "0000000000000000");
        g_assert_cmpstr(g_hash_table_lookup(r, "no-new-privs"), ==, "0");
        /* Nothing inherited but stdio, the report pipes and the fd listing itself. */
        fds = g_strsplit(g_hash_table_lookup(r, "fds"), ",", -1);
        for (size_t i = 0; fds[i]; i++)
                if (*fds[i])
                        g_assert_cmpint(atoi(fds[i]), <=, 5);

        g_clear_pointer(&output, g_free);
        g_clear_pointer(&r, g_hash_table_unref);
        g_assert_cmpint(harness_run_as(HARNESS_UID_ADMIN, HARNESS_GID_ADMIN,
                                HARNESS_NO_SUPPLEMENTARY_GROUPS, caller_identity, NULL, &output),
                ==, 7);
        r = parse_report(output);
        g_assert_cmpstr(g_hash_table_lookup(r, "groups"), ==, "");
}

static int caller_crash(void *userdata) {
        abort();
}

static void test_caller_signal(void) {
        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, caller_crash,
                                NULL, NULL),
                ==, 128 + SIGABRT);
}

static const char *try_gdbus(GDBusConnectionFlags extra, char **ret_name) {
        g_autoptr(GDBusConnection) c = NULL;
        g_autoptr(GError) error = NULL;
        static char message[256];

        c = g_dbus_connection_new_for_address_sync(g_getenv("DBUS_SYSTEM_BUS_ADDRESS"),
                G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                        G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION | extra,
                NULL, NULL, &error);
        if (!c) {
                g_strlcpy(message, error->message, sizeof(message));
                g_strdelimit(message, "\n", ' ');
                return message;
        }
        if (ret_name)
                *ret_name = g_strdup(g_dbus_connection_get_unique_name(c));
        return "ok";
}

/* Which clients can reach the system bus from inside a user namespace. */
static int caller_userns_clients(void *userdata) {
        g_autoptr(GDBusConnection) gdbus = NULL;
        g_autoptr(GError) error = NULL;
        g_autofree char *out = NULL, *err = NULL, *uid_map = NULL;
        sd_bus *bus = NULL;
        const char *name = NULL;
        int status, r;

        harness_report("uid=%u", (unsigned) getuid());
        if (g_file_get_contents("/proc/self/uid_map", &uid_map, NULL, NULL))
                harness_report("uid_map=%s", g_strstrip(uid_map));

        r = harness_sd_bus_connect(&bus);
        if (r >= 0)
                r = sd_bus_get_unique_name(bus, &name);
        harness_report("sd-bus=%s", r >= 0 ? name : g_strerror(-r));

        gdbus = harness_gdbus_connect(&error);
        harness_report("gdbus-cross-namespace=%s",
                gdbus ? g_dbus_connection_get_unique_name(gdbus) : error->message);

        /* Both stay connected until the test process has looked at them. */
        harness_report("ready=1");
        harness_await_release();
        sd_bus_flush_close_unref(bus);

        harness_report("gdbus-plain=%s", try_gdbus(0, NULL));

        const char *argv[] = { "dbus-send", "--system", "--print-reply", "--reply-timeout=5000",
                "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetId", NULL };
        if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                    &status, NULL))
                harness_report("libdbus=cannot run dbus-send");
        else
                harness_report("libdbus=%s", g_spawn_check_wait_status(status, NULL)
                                                     ? "ok"
                                                     : g_strstrip(g_strdelimit(err, "\n", ' ')));
        return 0;
}

static void test_caller_userns_clients(void) {
        g_autoptr(HarnessCaller) c = NULL;
        g_autoptr(GHashTable) r = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        g_autofree char *rest = NULL;
        g_autoptr(GHashTable) late = NULL;

        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1,
                                HARNESS_NEW_USERNS, caller_userns_clients, NULL, &c),
                ==, 0);
        for (;;) {
                g_autofree char *line = NULL;
                char *eq;

                g_assert_cmpint(harness_caller_read_line(c, HARNESS_TIMEOUT_MS, &line), ==, 0);
                g_test_message("caller: %s", line);
                eq = strchr(line, '=');
                g_assert_nonnull(eq);
                g_hash_table_insert(r, g_strndup(line, (gsize) (eq - line)), g_strdup(eq + 1));
                if (g_str_has_prefix(line, "ready="))
                        break;
        }
        /* Root in its own user namespace... */
        g_assert_cmpstr(g_hash_table_lookup(r, "uid"), ==, "0");
        g_assert_cmpstr(g_hash_table_lookup(r, "uid_map"), ==, "0      61001          1");
        /* ...and the bus sees the real uid for both working clients. */
        g_assert_true(g_str_has_prefix(g_hash_table_lookup(r, "sd-bus"), ":"));
        g_assert_cmpuint(bus_name_uid(g_hash_table_lookup(r, "sd-bus")), ==, HARNESS_UID_USER1);
        g_assert_true(g_str_has_prefix(g_hash_table_lookup(r, "gdbus-cross-namespace"), ":"));
        g_assert_cmpuint(bus_name_uid(g_hash_table_lookup(r, "gdbus-cross-namespace")), ==,
                HARNESS_UID_USER1);

        g_assert_cmpint(harness_caller_release(c), ==, 0);
        g_assert_cmpint(harness_caller_wait(c, HARNESS_TIMEOUT_MS, &rest), ==, 0);
        late = parse_report(rest);
        /* Documented, not required: GDBus without the flag and libdbus are rejected. */
        g_test_message("GDBus without CROSS_NAMESPACE in a user namespace: %s",
                (char *) g_hash_table_lookup(late, "gdbus-plain"));
        g_test_message("libdbus (dbus-send) in a user namespace: %s",
                (char *) g_hash_table_lookup(late, "libdbus"));
        g_assert_nonnull(g_hash_table_lookup(late, "gdbus-plain"));
        g_assert_nonnull(g_hash_table_lookup(late, "libdbus"));
}

/* ---------------------------------------------------------------------------------- */
/* polkit                                                                              */

static void test_polkit_defaults(void) {
        Subject s = {};

        /* No rules: the .policy defaults. A subject without a session is neither local
         * nor active, so allow_any (auth_admin) applies: a challenge, not a yes. */
        g_assert_cmpint(harness_set_rules(NULL), ==, 0);
        subject_start(&s, HARNESS_UID_USER1, HARNESS_GID_USER1);
        assert_check(&s, UM_ACTION_MOUNT_IMAGE, NULL, false, true);
        assert_check(&s, UM_ACTION_MOUNT_REMOVABLE, NULL, false, true);
        assert_check(&s, UM_ACTION_UNMOUNT_OTHERS, NULL, false, true);
        subject_stop(&s);
}

static void test_polkit_yes_no_challenge(void) {
        Subject s = {};

        subject_start(&s, HARNESS_UID_USER1, HARNESS_GID_USER1);

        g_assert_cmpint(harness_set_rules("polkit.addRule(function(action, subject) {\n"
                                          "  if (action.id == \"" UM_ACTION_MOUNT_IMAGE "\")\n"
                                          "    return polkit.Result.YES;\n"
                                          "});\n"),
                ==, 0);
        assert_check(&s, UM_ACTION_MOUNT_IMAGE, NULL, true, false);
        /* Other actions keep their defaults. */
        assert_check(&s, UM_ACTION_MOUNT_EXEC, NULL, false, true);

        /* Replacing the rules takes effect before harness_set_rules() returns. */
        g_assert_cmpint(harness_set_rules("polkit.addRule(function(action, subject) {\n"
                                          "  if (action.id == \"" UM_ACTION_MOUNT_IMAGE "\")\n"
                                          "    return polkit.Result.NO;\n"
                                          "});\n"),
                ==, 0);
        assert_check(&s, UM_ACTION_MOUNT_IMAGE, NULL, false, false);

        g_assert_cmpint(harness_set_rules("polkit.addRule(function(action, subject) {\n"
                                          "  if (action.id == \"" UM_ACTION_MOUNT_IMAGE "\")\n"
                                          "    return polkit.Result.AUTH_ADMIN;\n"
                                          "});\n"),
                ==, 0);
        assert_check(&s, UM_ACTION_MOUNT_IMAGE, NULL, false, true);

        subject_stop(&s);
        g_assert_cmpint(harness_set_rules(NULL), ==, 0);
}

static void test_polkit_group_read_only(void) {
        Subject admin = {}, user = {};

        g_assert_cmpint(harness_set_rules("polkit.addRule(function(action, subject) {\n"
                                          "  if (action.id == \"" UM_ACTION_MOUNT_IMAGE "\" &&\n"
                                          "      subject.isInGroup(\"" HARNESS_GROUP "\") &&\n"
                                          "      action.lookup(\"read-only\") == \"true\")\n"
                                          "    return polkit.Result.YES;\n"
                                          "});\n"),
                ==, 0);
        subject_start(&admin, HARNESS_UID_ADMIN, HARNESS_GID_ADMIN);
        subject_start(&user, HARNESS_UID_USER1, HARNESS_GID_USER1);

        assert_check(&admin, UM_ACTION_MOUNT_IMAGE, "true", true, false);
        assert_check(&admin, UM_ACTION_MOUNT_IMAGE, "false", false, true);
        assert_check(&admin, UM_ACTION_MOUNT_IMAGE, NULL, false, true);
        assert_check(&user, UM_ACTION_MOUNT_IMAGE, "true", false, true);

        subject_stop(&admin);
        subject_stop(&user);
        g_assert_cmpint(harness_set_rules(NULL), ==, 0);
}

/* The example rules shipped in polkit/ load and do what their comments say. */
static void test_polkit_example_rules(void) {
        g_autofree char *group_path = g_build_filename(harness_source_root(), "polkit",
                "50-usermount-group-images.rules", NULL);
        g_autofree char *seat_path = g_build_filename(harness_source_root(), "polkit",
                "50-usermount-deny-seat.rules", NULL);
        g_autofree char *group_js = NULL, *seat_js = NULL, *js = NULL;
        g_auto(GStrv) parts = NULL;
        const char *exec_details[] = { "read-only", "true", "exec", "true", NULL };
        Subject admin = {}, user = {};
        HarnessAuthorization a;

        g_assert_true(g_file_get_contents(group_path, &group_js, NULL, NULL));
        g_assert_true(g_file_get_contents(seat_path, &seat_js, NULL, NULL));
        parts = g_strsplit(group_js, "var GROUP = \"usermount\";", 2);
        g_assert_nonnull(parts[1]);
        js = g_strconcat(parts[0], "var GROUP = \"" HARNESS_GROUP "\";", parts[1], "\n",
                seat_js, NULL);
        g_assert_cmpint(harness_set_rules(js), ==, 0);

        subject_start(&admin, HARNESS_UID_ADMIN, HARNESS_GID_ADMIN);
        subject_start(&user, HARNESS_UID_USER1, HARNESS_GID_USER1);
        assert_check(&admin, UM_ACTION_MOUNT_IMAGE, "true", true, false);
        assert_check(&admin, UM_ACTION_MOUNT_IMAGE, "false", false, true);
        assert_check(&user, UM_ACTION_MOUNT_IMAGE, "true", false, true);
        g_assert_cmpint(harness_polkit_check(admin.name, UM_ACTION_MOUNT_IMAGE, exec_details,
                                false, &a),
                ==, 0);
        g_assert_false(a.is_authorized);
        /* Our subjects have no seat: the seat rule leaves them alone. */
        assert_check(&user, UM_ACTION_MOUNT_REMOVABLE, NULL, false, true);
        subject_stop(&admin);
        subject_stop(&user);
        g_assert_cmpint(harness_set_rules(NULL), ==, 0);
}

/* ---------------------------------------------------------------------------------- */
/* Images                                                                              */

static const HarnessEntry image_entries[] = {
        { HARNESS_ENTRY_DIR, "dir", .mode = 0750, .uid = HARNESS_UID_USER1,
                .gid = HARNESS_GID_USER1 },
        { HARNESS_ENTRY_FILE, "dir/hello", "hello, world\n", 0640, HARNESS_UID_USER1,
                HARNESS_GID_USER1 },
        { HARNESS_ENTRY_FILE, "secret", "root only\n", HARNESS_MODE_ZERO },
        /* A world-accessible node for /dev/mem and for loop0. */
        { HARNESS_ENTRY_CHAR_DEVICE, "mem", .mode = 0666, .major = 1, .minor = 1 },
        { HARNESS_ENTRY_BLOCK_DEVICE, "loop0", .mode = 0666, .major = 7, .minor = 0 },
        { HARNESS_ENTRY_COPY, "suid-id", "/usr/bin/id", 04755 },
        { HARNESS_ENTRY_COPY, "cap-true", "/bin/true", 0755, .caps = "cap_setuid=ep" },
        { HARNESS_ENTRY_SYMLINK, "link", "dir/hello" },
        {},
};

static char *probe_value(const char *image, const char *key) {
        blkid_probe pr = blkid_new_probe_from_filename(image);
        const char *value = NULL;
        char *result = NULL;

        g_assert_nonnull(pr);
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL);
        if (blkid_do_safeprobe(pr) == 0 && blkid_probe_lookup_value(pr, key, &value, NULL) == 0)
                result = g_strdup(value);
        blkid_free_probe(pr);
        return result;
}

static void assert_stat(const char *root, const char *path, mode_t type, mode_t mode, uid_t uid,
        struct stat *ret) {
        g_autofree char *p = g_build_filename(root, path, NULL);
        struct stat st;

        g_assert_cmpint(lstat(p, &st), ==, 0);
        g_assert_cmpuint(st.st_mode & S_IFMT, ==, type);
        if (type != S_IFLNK)
                g_assert_cmpuint(st.st_mode & 07777, ==, mode);
        g_assert_cmpuint(st.st_uid, ==, uid);
        if (ret)
                *ret = st;
}

static void test_image(gconstpointer data) {
        const char *fstype = data;
        bool labelled = !streq(fstype, "squashfs");
        HarnessImageSpec spec = {
                .label = labelled ? "UMTEST" : NULL,
                .root_uid = HARNESS_UID_USER2,
                .root_gid = HARNESS_GID_USER2,
                .root_mode = 0751,
                .entries = image_entries,
        };
        g_autofree char *image = NULL, *mountpoint = NULL, *type = NULL, *label = NULL;
        g_autofree char *hello = NULL, *hello_path = NULL, *cap_path = NULL, *link = NULL;
        g_autofree char *link_path = NULL;
        char *cap_text;
        HarnessSnapshot before;
        struct stat st;
        cap_t caps;

        g_assert_cmpint(harness_snapshot(0, &before), ==, 0);
        g_assert_cmpint(harness_make_image(fstype, &spec, &image), ==, 0);
        g_assert_true(g_str_has_prefix(image, harness_tmpdir()));
        /* Building it (loop-mounting xfs/btrfs) left nothing behind. */
        g_assert_cmpint(harness_wait_snapshot(0, &before, 5000), ==, 0);

        type = probe_value(image, "TYPE");
        g_assert_cmpstr(type, ==, fstype);
        label = probe_value(image, "LABEL");
        g_assert_cmpstr(label, ==, labelled ? "UMTEST" : NULL);

        g_assert_cmpint(harness_mount_image(image, fstype, MS_RDONLY | MS_NODEV | MS_NOSUID |
                                                                MS_NOEXEC,
                                &mountpoint),
                ==, 0);
        g_assert_cmpint(harness_count_loop_devices(), ==, before.loop_devices + 1);
        g_assert_cmpint(harness_count_mounts(0), ==, before.mounts + 1);

        assert_stat(mountpoint, ".", S_IFDIR, 0751, HARNESS_UID_USER2, NULL);
        assert_stat(mountpoint, "dir", S_IFDIR, 0750, HARNESS_UID_USER1, NULL);
        assert_stat(mountpoint, "dir/hello", S_IFREG, 0640, HARNESS_UID_USER1, NULL);
        hello_path = g_build_filename(mountpoint, "dir/hello", NULL);
        g_assert_true(g_file_get_contents(hello_path, &hello, NULL, NULL));
        g_assert_cmpstr(hello, ==, "hello, world\n");
        assert_stat(mountpoint, "secret", S_IFREG, 0, 0, NULL);
        assert_stat(mountpoint, "mem", S_IFCHR, 0666, 0, &st);
        g_assert_cmpuint(st.st_rdev, ==, makedev(1, 1));
        assert_stat(mountpoint, "loop0", S_IFBLK, 0666, 0, &st);
        g_assert_cmpuint(st.st_rdev, ==, makedev(7, 0));
        assert_stat(mountpoint, "suid-id", S_IFREG, 04755, 0, &st);
        g_assert_cmpint(st.st_size, >, 0);
        assert_stat(mountpoint, "cap-true", S_IFREG, 0755, 0, NULL);
        cap_path = g_build_filename(mountpoint, "cap-true", NULL);
        caps = cap_get_file(cap_path);
        g_assert_nonnull(caps);
        cap_text = cap_to_text(caps, NULL);
        g_test_message("%s: cap-true has %s", fstype, cap_text);
        g_assert_cmpstr(cap_text, ==, "cap_setuid=ep");
        cap_free(cap_text);
        cap_free(caps);
        assert_stat(mountpoint, "link", S_IFLNK, 0, 0, NULL);
        link_path = g_build_filename(mountpoint, "link", NULL);
        link = g_file_read_link(link_path, NULL);
        g_assert_cmpstr(link, ==, "dir/hello");

        g_assert_cmpint(harness_umount(mountpoint), ==, 0);
        g_assert_cmpint(harness_wait_snapshot(0, &before, 5000), ==, 0);
        g_assert_cmpint(unlink(image), ==, 0);
}

static void test_image_erofs_raw_label(void) {
        /* erofs labels are written by the harness: any bytes, for label-sanitising tests. */
        static const char raw[] = "a/b\n..\x1b[1m";
        HarnessImageSpec spec = { .label = raw };
        g_autofree char *image = NULL, *label = NULL;

        g_assert_cmpint(harness_make_image("erofs", &spec, &image), ==, 0);
        label = probe_value(image, "LABEL");
        g_assert_cmpstr(label, ==, raw);
        g_assert_cmpint(unlink(image), ==, 0);
}

static void test_loop_attach(void) {
        HarnessImageSpec spec = {};
        g_autofree char *image = NULL, *device = NULL;
        int before = harness_count_loop_devices();
        struct stat st;

        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(harness_loop_attach(image, true, &device), ==, 0);
        g_assert_cmpint(stat(device, &st), ==, 0);
        g_assert_true(S_ISBLK(st.st_mode));
        g_assert_cmpint(harness_count_loop_devices(), ==, before + 1);
        g_assert_cmpint(harness_loop_detach(device), ==, 0);
        g_assert_cmpint(harness_loop_detach(device), ==, -ENOENT);
        {
                HarnessSnapshot expected;

                g_assert_cmpint(harness_snapshot(0, &expected), ==, 0);
                expected.loop_devices = before;
                g_assert_cmpint(harness_wait_snapshot(0, &expected, 5000), ==, 0);
        }
        g_assert_cmpint(unlink(image), ==, 0);
}

/* ---------------------------------------------------------------------------------- */
/* The daemon (a stand-in)                                                             */

static int caller_talk_to_daemon(void *userdata) {
        g_autoptr(GDBusConnection) c = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) reply = NULL;

        c = harness_gdbus_connect(&error);
        if (!c) {
                harness_report("connect=%s", error->message);
                return 1;
        }
        reply = g_dbus_connection_call_sync(c, UM_BUS_NAME, UM_OBJECT_PATH,
                "org.freedesktop.DBus.Properties", "Get",
                g_variant_new("(ss)", UM_MANAGER_INTERFACE, "Version"), G_VARIANT_TYPE("(v)"),
                G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
        if (reply) {
                g_autoptr(GVariant) v = NULL;

                g_variant_get(reply, "(v)", &v);
                harness_report("version=%s", g_variant_get_string(v, NULL));
        } else
                harness_report("version-error=%s", error->message);
        g_clear_pointer(&reply, g_variant_unref);
        g_clear_error(&error);

        reply = g_dbus_connection_call_sync(c, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                "ListMounts", g_variant_new_parsed("(@a{sv} {},)"), G_VARIANT_TYPE("(aa{sv})"),
                G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
        harness_report("list=%s", reply ? "ok" : error->message);
        g_clear_pointer(&reply, g_variant_unref);
        g_clear_error(&error);

        /* The bus policy opens only the daemon's interfaces. */
        reply = g_dbus_connection_call_sync(c, UM_BUS_NAME, UM_OBJECT_PATH,
                "org.freedesktop.DBus.Properties", "Set",
                g_variant_new("(ssv)", UM_MANAGER_INTERFACE, "Version",
                        g_variant_new_string("x")),
                NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
        harness_report("set=%s", reply ? "ok" : g_dbus_error_get_remote_error(error));
        g_clear_pointer(&reply, g_variant_unref);
        g_clear_error(&error);

        reply = g_dbus_connection_call_sync(c, UM_BUS_NAME, UM_OBJECT_PATH, "org.example.Other",
                "Method", NULL, NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
        harness_report("other=%s", reply ? "ok" : g_dbus_error_get_remote_error(error));
        return 0;
}

static void test_daemon_standin(void) {
        const char *standin = harness_standin_path();
        g_autofree char *output = NULL;
        g_autoptr(GHashTable) r = NULL;
        pid_t pid;
        int status, fds;

        g_assert_nonnull(standin);
        g_assert_cmpint(harness_start_daemon(standin, NULL, &pid), ==, 0);
        g_assert_true(name_has_owner(UM_BUS_NAME));
        fds = harness_count_fds(pid);
        g_assert_cmpint(fds, >, 2);

        /* An unprivileged caller in a user namespace reaches it through the bus policy. */
        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, HARNESS_NEW_USERNS,
                                caller_talk_to_daemon, NULL, &output),
                ==, 0);
        r = parse_report(output);
        g_assert_cmpstr(g_hash_table_lookup(r, "version"), ==, "standin");
        g_assert_cmpstr(g_hash_table_lookup(r, "list"), ==, "ok");
        g_assert_cmpstr(g_hash_table_lookup(r, "set"), ==,
                "org.freedesktop.DBus.Error.AccessDenied");
        g_assert_cmpstr(g_hash_table_lookup(r, "other"), ==,
                "org.freedesktop.DBus.Error.AccessDenied");

        g_assert_cmpint(harness_stop_daemon(pid, &status), ==, 0);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_assert_false(name_has_owner(UM_BUS_NAME));
        g_assert_cmpint(harness_stop_daemon(pid, NULL), ==, -ESRCH);

        /* A daemon killed by a test is reaped by harness_stop_daemon(). */
        g_assert_cmpint(harness_start_daemon(standin, NULL, &pid), ==, 0);
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        g_assert_cmpint(harness_stop_daemon(pid, &status), ==, 0);
        g_assert_true(WIFSIGNALED(status));
        g_assert_cmpint(WTERMSIG(status), ==, SIGKILL);
}

static void test_daemon_early_exit(void) {
        const char *args[] = { "--exit-code=3", NULL };
        int64_t start = g_get_monotonic_time();
        pid_t pid = 0;

        g_assert_cmpint(harness_start_daemon(harness_standin_path(), args, &pid), ==, -ESRCH);
        /* Noticed right away, not after the timeout. */
        g_assert_cmpint(g_get_monotonic_time() - start, <, 5 * G_USEC_PER_SEC);
        g_assert_cmpint(pid, ==, 0);
}

/* A g_test_trap_subprocess() child works in its parent's environment. */
static void test_subprocess(void) {
        if (g_test_subprocess()) {
                g_assert_true(name_has_owner("org.freedesktop.PolicyKit1"));
                g_assert_nonnull(getpwnam(HARNESS_USER1));
                g_assert_true(g_file_test(harness_tmpdir(), G_FILE_TEST_IS_DIR));
                return;
        }
        g_test_trap_subprocess(NULL, 30 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
        g_test_trap_assert_passed();
        /* Its exit tore nothing down. */
        g_assert_true(name_has_owner("org.freedesktop.PolicyKit1"));
}

/* A second run while this one holds the machine (issue 22, item 12: two at once left
 * udev's links on the host): refused at once, naming this process, nothing changed. */
/* The second run starts in the network namespace the first one started in, as from
 * another shell (the test process itself is in the harness's private one). */
static void enter_netns(gpointer userdata) {
        if (setns(GPOINTER_TO_INT(userdata), CLONE_NEWNET) < 0)
                _exit(125);
}

static void test_second_run_refused(void) {
        g_autofree char *out = NULL, *err = NULL;
        g_auto(GStrv) env = g_get_environ();
        const char *argv[] = { "/proc/self/exe", "-p", "/harness/env/private", NULL };
        int loops = harness_count_loop_devices(), mounts = harness_count_mounts(0), status;
        _cleanup_close_ int netns = harness_open_claim_netns();
        gint64 t0;

        g_assert_cmpint(netns, >=, 0);
        t0 = g_get_monotonic_time();
        env = g_environ_unsetenv(env, "UM_HARNESS_TMPDIR");
        /* It waits that long for the claim (the previous program's janitor), then gives up. */
        env = g_environ_setenv(env, "UM_HARNESS_CLAIM_WAIT_MS", "1000", TRUE);
        g_assert_true(g_spawn_sync(NULL, (char **) argv, env, G_SPAWN_LEAVE_DESCRIPTORS_OPEN,
                                   enter_netns, GINT_TO_POINTER(netns), &out, &err, &status,
                                   NULL));
        g_test_message("second run:\n%s%s", out, err);
        g_assert_cmpint(g_get_monotonic_time() - t0, >=, 1000 * 1000);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 1);
        g_assert_nonnull(strstr(out, "Bail out! another usermount test run holds this machine"));
        g_assert_nonnull(strstr(err, "another usermount test run holds this machine (process "));
        g_assert_cmpint(harness_count_loop_devices(), ==, loops);
        g_assert_cmpint(harness_count_mounts(0), ==, mounts);
}

static void test_nothing_left(void) {
        g_assert_cmpint(harness_count_loop_devices(), ==, 0);
        g_assert_cmpint(harness_count_mounts(0), ==, 0);
}

/* ---------------------------------------------------------------------------------- */

/* Sets up everything teardown has to undo, then fails in the requested way. */
static _noreturn_ void crash(const char *how) {
        HarnessImageSpec spec = {};
        g_autofree char *image = NULL, *mountpoint = NULL, *device = NULL;
        g_autoptr(HarnessCaller) caller = NULL;
        pid_t pid;

        if (harness_make_image("ext4", &spec, &image) < 0 ||
                harness_mount_image(image, "ext4", MS_NODEV | MS_NOSUID, &mountpoint) < 0 ||
                harness_loop_attach(image, true, &device) < 0 ||
                harness_start_daemon(harness_standin_path(), NULL, &pid) < 0 ||
                harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, HARNESS_NEW_USERNS,
                        caller_hold_name, NULL, &caller) < 0 ||
                harness_write_etc("usermount/usermount.conf", "[crash]\n") < 0) {
                fprintf(stderr, "crash mode: setting up failed (UM_HARNESS_STANDIN=%s)\n",
                        strempty(harness_standin_path()));
                exit(1);
        }
        printf("READY %s %s %s\n", harness_tmpdir(), device, mountpoint);
        fflush(stdout);
        if (streq(how, "abort"))
                abort();
        if (streq(how, "sigkill"))
                raise(SIGKILL);
        for (;;)
                pause();
}

int main(int argc, char **argv) {
        static const char *const fstypes[] = { "ext4", "xfs", "btrfs", "squashfs", "erofs" };
        const char *how;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);

        how = g_getenv("UM_HARNESS_SMOKE_CRASH");
        if (how)
                crash(how);

        g_test_add_func("/harness/env/private", test_env_private);
        g_test_add_func("/harness/bus/private", test_bus_private);
        g_test_add_func("/harness/bus/policy-own", test_bus_policy_own);
        g_test_add_func("/harness/caller/identity", test_caller_identity);
        g_test_add_func("/harness/caller/signal", test_caller_signal);
        g_test_add_func("/harness/caller/userns-clients", test_caller_userns_clients);
        g_test_add_func("/harness/polkit/defaults", test_polkit_defaults);
        g_test_add_func("/harness/polkit/yes-no-challenge", test_polkit_yes_no_challenge);
        g_test_add_func("/harness/polkit/group-read-only", test_polkit_group_read_only);
        g_test_add_func("/harness/polkit/example-rules", test_polkit_example_rules);
        for (size_t i = 0; i < G_N_ELEMENTS(fstypes); i++) {
                g_autofree char *path = g_strdup_printf("/harness/image/%s", fstypes[i]);

                g_test_add_data_func(path, fstypes[i], test_image);
        }
        g_test_add_func("/harness/image/erofs-raw-label", test_image_erofs_raw_label);
        g_test_add_func("/harness/loop/attach", test_loop_attach);
        g_test_add_func("/harness/daemon/standin", test_daemon_standin);
        g_test_add_func("/harness/daemon/early-exit", test_daemon_early_exit);
        g_test_add_func("/harness/end/trapped-child", test_subprocess);
        g_test_add_func("/harness/end/second-run-refused", test_second_run_refused);
        g_test_add_func("/harness/end/nothing-left", test_nothing_left);
        return g_test_run();
}
