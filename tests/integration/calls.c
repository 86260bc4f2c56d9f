/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared pieces of the integration tests' callers (see calls.h). */
#include <fcntl.h>
#include <glob.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

int calls_append_params(sd_bus_message *m, const Param *params) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");

        for (const Param *p = params; r >= 0 && p && p->key; p++) {
                if (streq(p->type, "s"))
                        r = sd_bus_message_append(m, "{sv}", p->key, "s", p->value);
                else if (streq(p->type, "b"))
                        r = sd_bus_message_append(m, "{sv}", p->key, "b", streq(p->value, "true"));
                else
                        r = sd_bus_message_append(m, "{sv}", p->key, "u",
                                                  (uint32_t) strtoul(p->value, NULL, 10));
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static void report_variant(sd_bus_message *reply, const char *prefix, const char *key,
                           const char *contents) {
        if (streq(contents, "s")) {
                const char *s;

                g_assert_cmpint(sd_bus_message_read(reply, "s", &s), >, 0);
                harness_report("%s%s=%s", prefix, key, s);
        } else if (streq(contents, "t") || streq(contents, "u")) {
                uint64_t t = 0;
                uint32_t u = 0;

                if (streq(contents, "t"))
                        g_assert_cmpint(sd_bus_message_read(reply, "t", &t), >, 0);
                else {
                        g_assert_cmpint(sd_bus_message_read(reply, "u", &u), >, 0);
                        t = u;
                }
                harness_report("%s%s=%" PRIu64, prefix, key, t);
        } else if (streq(contents, "as")) {
                g_autoptr(GString) joined = g_string_new(NULL);
                const char *s;

                g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "s"), >, 0);
                while (sd_bus_message_read(reply, "s", &s) > 0)
                        g_string_append_printf(joined, "%s%s", joined->len ? "," : "", s);
                g_assert_cmpint(sd_bus_message_exit_container(reply), >, 0);
                harness_report("%s%s=%s", prefix, key, joined->str);
        } else {
                g_assert_cmpint(sd_bus_message_skip(reply, contents), >=, 0);
                harness_report("%s%s=<type %s>", prefix, key, contents);
        }
}

void calls_report_info(sd_bus_message *reply, const char *prefix) {
        const char *key, *contents;
        char type;

        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "{sv}"), >, 0);
        while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
                g_assert_cmpint(sd_bus_message_read(reply, "s", &key), >, 0);
                g_assert_cmpint(sd_bus_message_peek_type(reply, &type, &contents), >, 0);
                g_assert_cmpint(sd_bus_message_enter_container(reply, 'v', contents), >, 0);
                report_variant(reply, prefix, key, contents);
                g_assert_cmpint(sd_bus_message_exit_container(reply), >, 0);
                g_assert_cmpint(sd_bus_message_exit_container(reply), >, 0);
        }
        g_assert_cmpint(sd_bus_message_exit_container(reply), >, 0);
}

int calls_report_result(int r, const sd_bus_error *error) {
        if (r >= 0) {
                harness_report("result=ok");
                return r;
        }
        harness_report("result=%s", error && error->name ? error->name : calls_errno_name(r));
        harness_report("message=%s", error && error->message ? error->message : "");
        return r;
}

const char *calls_errno_name(int r) {
        if (r >= 0)
                return "ok";
        return strerrorname_np(r < -1 ? -r : errno) ?: "unknown";
}

GHashTable *calls_parse_report(const char *output) {
        GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        g_auto(GStrv) lines = g_strsplit(output ?: "", "\n", -1);

        for (size_t i = 0; lines[i]; i++) {
                char *eq = strchr(lines[i], '=');

                if (eq)
                        g_hash_table_insert(t, g_strndup(lines[i], (gsize) (eq - lines[i])),
                                            g_strdup(eq + 1));
        }
        return t;
}

void calls_report_mount_list(sd_bus_message *reply) {
        unsigned n = 0;

        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "a{sv}"), >, 0);
        while (!sd_bus_message_at_end(reply, false)) {
                g_autofree char *prefix = g_strdup_printf("entry%u-", n++);
                calls_report_info(reply, prefix);
        }
        harness_report("count=%u", n);
}

void calls_assert_clean(pid_t daemon_pid, const void *baseline_snapshot) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        char *version = NULL;

        g_assert_cmpint(harness_wait_snapshot(daemon_pid, baseline_snapshot, 20000), ==, 0);
        g_assert_cmpint(kill(daemon_pid, 0), ==, 0);
        g_assert_cmpint(sd_bus_get_property_string(harness_bus(), UM_BUS_NAME, UM_OBJECT_PATH,
                                                   UM_MANAGER_INTERFACE, "Version", &error,
                                                   &version), >=, 0);
        g_assert_cmpstr(version, ==, PACKAGE_VERSION);
        free(version);
}

void calls_assert_no_uid_claims(const char *runtime_dir) {
        g_autofree char *pattern = g_build_filename(runtime_dir, "*-uid-*", NULL);
        glob_t g = {};

        if (glob(pattern, 0, NULL, &g) == 0)
                for (size_t i = 0; i < g.gl_pathc; i++) {
                        int fd = open(g.gl_pathv[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

                        g_assert_cmpint(fd, >=, 0);
                        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                                g_error("%s is still held", g.gl_pathv[i]);
                        close(fd);
                }
        globfree(&g);
}

/* ---- Signals, seen by root on the test's own connection -------------------------------- */

static GPtrArray *signals_seen;

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *mp;

        if (sd_bus_message_read(m, "s", &mp) >= 0)
                g_ptr_array_add(signals_seen,
                                g_strdup_printf("%s %s", sd_bus_message_get_member(m), mp));
        return 0;
}

void calls_watch_signals(void) {
        signals_seen = g_ptr_array_new_with_free_func(g_free);
        g_assert_cmpint(sd_bus_match_signal(harness_bus(), NULL, UM_BUS_NAME, UM_OBJECT_PATH,
                                            UM_MANAGER_INTERFACE, NULL, on_signal, NULL), >=, 0);
}

void calls_subscribe(void) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call_method(harness_bus(), UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                               "Subscribe", &error, NULL, "");
        if (r < 0)
                g_error("Subscribe failed: %s", error.message ?: g_strerror(-r));
}

void calls_forget_signals(void) {
        /* A daemon started since the last call knows nothing of the test's subscription. */
        calls_subscribe();
        /* What already arrived is read first, so that it is forgotten too. */
        while (sd_bus_process(harness_bus(), NULL) > 0)
                ;
        g_ptr_array_set_size(signals_seen, 0);
}

void calls_await_signal(const char *member, const char *mount_point) {
        g_autofree char *want = g_strdup_printf("%s %s", member, mount_point);

        for (int i = 0; i < 200; i++) {
                for (guint k = 0; k < signals_seen->len; k++)
                        if (streq(signals_seen->pdata[k], want)) {
                                g_ptr_array_remove_index(signals_seen, k);
                                return;
                        }
                while (sd_bus_process(harness_bus(), NULL) > 0)
                        ;
                (void) sd_bus_wait(harness_bus(), 100 * 1000);
        }
        g_error("signal '%s' not seen", want);
}

char *calls_example_rule(const char *file, const char *variable, const char *value_js) {
        g_autofree char *path = g_build_filename(harness_source_root(), "polkit", file, NULL);
        g_autofree char *text = NULL, *prefix = g_strdup_printf("var %s = ", variable);
        g_auto(GStrv) lines = NULL;
        unsigned found = 0;

        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        lines = g_strsplit(text, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
                const char *code = lines[i] + strspn(lines[i], " ");

                if (!g_str_has_prefix(code, prefix))
                        continue;
                g_assert_true(g_str_has_suffix(code, ";"));
                g_free(lines[i]);
                lines[i] = g_strdup_printf("        var %s = %s;", variable, value_js);
                found++;
        }
        g_assert_cmpuint(found, ==, 1);
        return g_strjoinv("\n", lines);
}

static GPtrArray *disk_copies;

static void disk_copies_remove(void) {
        for (guint i = 0; disk_copies && i < disk_copies->len; i++) {
                const char *path = g_ptr_array_index(disk_copies, i);
                g_autofree char *dir = g_path_get_dirname(path);

                (void) unlink(path);
                (void) rmdir(dir);
        }
}

char *calls_disk_copy(const char *image, uid_t uid) {
        g_autofree char *dir = g_strdup("/var/tmp/um-erofs-test-XXXXXX");
        g_autofree char *contents = NULL, *base = g_path_get_basename(image);
        gsize size = 0;
        char *path;

        g_assert_nonnull(g_mkdtemp(dir));
        g_assert_cmpint(chmod(dir, 0755), ==, 0);
        path = g_build_filename(dir, base, NULL);
        if (!disk_copies) {
                disk_copies = g_ptr_array_new();
                atexit(disk_copies_remove);
        }
        g_ptr_array_add(disk_copies, g_strdup(path));
        g_assert_true(g_file_get_contents(image, &contents, &size, NULL));
        g_assert_true(g_file_set_contents(path, contents, (gssize) size, NULL));
        g_assert_cmpint(chown(path, uid, uid), ==, 0);
        g_assert_cmpint(chmod(path, 0666), ==, 0);
        return path;
}

int calls_count_loops_on(const char *path) {
        g_autoptr(GDir) d = g_dir_open("/sys/block", 0, NULL);
        const char *n;
        int k = 0;

        while (d && (n = g_dir_read_name(d))) {
                g_autofree char *p = g_strdup_printf("/sys/block/%s/loop/backing_file", n);
                g_autofree char *backing = NULL;

                if (g_str_has_prefix(n, "loop") && g_file_get_contents(p, &backing, NULL, NULL) &&
                    streq(g_strchomp(backing), path))
                        k++;
        }
        return k;
}

/* ---- Userspace drivers ------------------------------------------------------------------ */

bool calls_process_uid(pid_t pid, unsigned *ret_uid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/status", (int) pid);
        g_autofree char *status = NULL;
        const char *line;

        if (!g_file_get_contents(path, &status, NULL, NULL))
                return false;
        line = strstr(status, "\nUid:");
        return line && sscanf(line, "\nUid:\t%u", ret_uid) == 1;
}

GArray *calls_running_drivers(void) {
        GArray *pids = g_array_new(false, false, sizeof(pid_t));
        g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
        const char *name;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d))) {
                pid_t pid = (pid_t) g_ascii_strtoll(name, NULL, 10);
                HarnessProcessStat st;
                unsigned uid;

                if (pid <= 0 || !calls_process_uid(pid, &uid))
                        continue;
                if (uid < CALLS_DRIVER_UID_FIRST ||
                    uid >= CALLS_DRIVER_UID_FIRST + CALLS_DRIVER_UID_COUNT)
                        continue;
                if (harness_process_stat(pid, &st) < 0 || st.state == 'Z')
                        continue;
                g_array_append_val(pids, pid);
        }
        return pids;
}

void calls_await_drivers_for(guint n, int timeout_ms) {
        const gint64 deadline = g_get_monotonic_time() + timeout_ms * 1000LL;

        do {
                g_autoptr(GArray) pids = calls_running_drivers();

                if (pids->len == n)
                        return;
                g_usleep(20 * 1000);
        } while (g_get_monotonic_time() < deadline);
        g_autoptr(GArray) pids = calls_running_drivers();
        g_error("%u drivers run after %d ms, expected %u", pids->len, timeout_ms, n);
}

void calls_await_drivers(guint n) {
        calls_await_drivers_for(n, 10000);
}
