/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The caller stage through the real daemon and the real bus (daemon/caller.h): a call
 * whose sender is gone by the time the daemon reads it is refused, says why, and leaves
 * nothing; and the bus is asked about each connection once, however many calls it makes
 * (watched from a bus monitor: every GetConnectionCredentials on the bus is seen).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define JOURNAL_DIR "/run/systemd/journal"

static char *image; /* ext4, readable by everybody */

/* ---- The test plays journald (as test-service does), to read the daemon's log -------- */

static int journal_open(void) {
        return harness_dgram_listen(JOURNAL_DIR "/socket");
}

static void journal_close(int fd) {
        safe_close(fd);
        g_assert_cmpint(unlink(JOURNAL_DIR "/socket"), ==, 0);
}

/* The next entry that contains what (within HARNESS_TIMEOUT_MS per entry), or fails. */
static char *journal_find(int fd, const char *what) {
        for (;;) {
                char *entry = harness_dgram_next(fd);

                if (strstr(entry, what))
                        return entry;
                g_free(entry);
        }
}

/* ---- A caller that sends and goes ------------------------------------------------------ */

/* Sends OpenMount of the image without waiting for a reply, reports its bus name, exits. */
static int fire_and_forget_main(void *userdata) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_ int fd = open(image, O_RDONLY | O_CLOEXEC);
        const char *name = NULL;

        if (fd < 0 || harness_sd_bus_connect(&bus) < 0 || sd_bus_get_unique_name(bus, &name) < 0)
                return 1;
        if (sd_bus_message_new_method_call(bus, &m, UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, "OpenMount") < 0 ||
            sd_bus_message_append(m, "hss", fd, "ext4", "") < 0 ||
            calls_append_params(m, NULL) < 0 || sd_bus_send(bus, m, NULL) < 0 ||
            sd_bus_flush(bus) < 0)
                return 2;
        harness_report("name=%s", name);
        return 0;
}

/* Whether name has an owner on the bus (the bus has not yet seen its connection close). */
static bool name_has_owner(const char *name) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

        return sd_bus_call_method(harness_bus(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "GetNameOwner", &error, &reply, "s",
                                  name) >= 0;
}

/*
 * The daemon is stopped while the caller sends OpenMount and exits, and the bus has seen
 * the connection close before the daemon reads the call: the credentials lookup fails
 * (the name has no owner any more) and the call is refused, logged with the reason; no
 * worker, loop device or fd is left. The rules would allow the mount: only the caller
 * stage stops it.
 */
static void test_sender_gone(void) {
        const char *const args[] = { "--log-target=journal", NULL };
        g_autoptr(HarnessCaller) caller = NULL;
        g_autofree char *line = NULL, *entry = NULL;
        HarnessSnapshot baseline;
        int journal = journal_open();
        const char *name;
        pid_t pid;

        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), args, &pid), ==, 0);
        g_assert_cmpint(harness_snapshot(pid, &baseline), ==, 0);

        g_assert_cmpint(kill(pid, SIGSTOP), ==, 0);
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             fire_and_forget_main, NULL, &caller), ==, 0);
        g_assert_cmpint(harness_caller_read_line(caller, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_true(g_str_has_prefix(line, "name=:"));
        name = line + strlen("name=");
        g_assert_cmpint(harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, NULL), ==, 0);
        for (int i = 0; i < 1000 && name_has_owner(name); i++)
                g_usleep(10 * 1000);
        g_assert_false(name_has_owner(name));
        g_assert_cmpint(kill(pid, SIGCONT), ==, 0);

        entry = journal_find(journal, "\nUSERMOUNT_ACTION=refuse\n");
        g_test_message("journal entry:\n%s", entry);
        g_assert_true(g_str_has_prefix(entry, "MESSAGE=Refused OpenMount from "));
        g_assert_nonnull(strstr(entry, name));
        g_assert_nonnull(strstr(entry, "closed before its request was handled"));
        g_assert_nonnull(strstr(entry, "daemon/manager-dbus.c\n"));

        calls_assert_clean(pid, &baseline);
        g_assert_cmpint(harness_count_loop_devices(), ==, 0);
        g_assert_cmpint(harness_stop_daemon(pid, NULL), ==, 0);
        journal_close(journal);
}

/* ---- Many calls, one question ------------------------------------------------------------ */

/* ListMounts on bus; 0 if it was answered "ok". */
static int list_mounts(sd_bus *bus) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, "ListMounts");
        if (r >= 0)
                r = calls_append_params(m, NULL);
        if (r >= 0)
                r = sd_bus_call(bus, m, 0, &error, &reply);
        return r < 0 ? r : 0;
}

/* Two connections: three calls on the first, two on the second; reports both names, then
 * keeps them open until released (a closed connection would be forgotten anyway). */
static int two_connections_main(void *userdata) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *a = NULL, *b = NULL;
        const char *name_a = NULL, *name_b = NULL;
        int failed = 0;

        if (harness_sd_bus_connect(&a) < 0 || harness_sd_bus_connect(&b) < 0 ||
            sd_bus_get_unique_name(a, &name_a) < 0 || sd_bus_get_unique_name(b, &name_b) < 0)
                return 1;
        for (int i = 0; i < 3; i++)
                failed += list_mounts(a) < 0;
        for (int i = 0; i < 2; i++)
                failed += list_mounts(b) < 0;
        harness_report("a=%s", name_a);
        harness_report("b=%s", name_b);
        harness_report("failed=%d", failed);
        return harness_await_release() < 0 ? 2 : 0;
}

/* A connection to the private bus that sees every GetConnectionCredentials call. */
static sd_bus *monitor_open(void) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        sd_bus *bus = NULL;

        g_assert_cmpint(sd_bus_new(&bus), >=, 0);
        g_assert_cmpint(sd_bus_set_address(bus, harness_bus_address()), >=, 0);
        g_assert_cmpint(sd_bus_set_bus_client(bus, true), >=, 0);
        g_assert_cmpint(sd_bus_set_monitor(bus, true), >=, 0);
        g_assert_cmpint(sd_bus_start(bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &m, "org.freedesktop.DBus",
                                                       "/org/freedesktop/DBus",
                                                       "org.freedesktop.DBus.Monitoring",
                                                       "BecomeMonitor"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(m, "asu", 1,
                                              "type='method_call',interface='org.freedesktop.DBus',"
                                              "member='GetConnectionCredentials'", 0), >=, 0);
        g_assert_cmpint(sd_bus_call(bus, m, 0, &error, NULL), >=, 0);
        return bus;
}

/*
 * Reads what the monitor saw until the test's own GetConnectionCredentials about sentinel
 * (asked last, so everything before it has been seen); counts the calls about a and b.
 */
static void monitor_count(sd_bus *mon, const char *sentinel, const char *a, const char *b,
                          unsigned *ret_a, unsigned *ret_b) {
        const char *own = NULL;
        gint64 deadline = g_get_monotonic_time() + HARNESS_TIMEOUT_MS * 1000LL;

        g_assert_cmpint(sd_bus_get_unique_name(harness_bus(), &own), >=, 0);
        *ret_a = *ret_b = 0;
        while (g_get_monotonic_time() < deadline) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                const char *arg = NULL;
                int r = sd_bus_process(mon, &m);

                g_assert_cmpint(r, >=, 0);
                if (r == 0) {
                        g_assert_cmpint(sd_bus_wait(mon, 100 * 1000), >=, 0);
                        continue;
                }
                if (!m || !sd_bus_message_is_method_call(m, "org.freedesktop.DBus",
                                                         "GetConnectionCredentials") ||
                    sd_bus_message_read(m, "s", &arg) < 0)
                        continue;
                g_test_message("GetConnectionCredentials(%s) from %s", arg,
                               sd_bus_message_get_sender(m));
                if (streq(sd_bus_message_get_sender(m), own) && streq(arg, sentinel))
                        return;
                *ret_a += streq(arg, a);
                *ret_b += streq(arg, b);
        }
        g_assert_not_reached();
}

static void test_one_question_per_connection(void) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *mon = NULL;
        g_autoptr(HarnessCaller) caller = NULL;
        g_autofree char *la = NULL, *lb = NULL, *lf = NULL;
        HarnessSnapshot baseline;
        unsigned n_a, n_b;
        pid_t pid;

        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &pid), ==, 0);
        g_assert_cmpint(harness_snapshot(pid, &baseline), ==, 0);
        mon = monitor_open();

        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             two_connections_main, NULL, &caller), ==, 0);
        g_assert_cmpint(harness_caller_read_line(caller, HARNESS_TIMEOUT_MS, &la), ==, 0);
        g_assert_cmpint(harness_caller_read_line(caller, HARNESS_TIMEOUT_MS, &lb), ==, 0);
        g_assert_cmpint(harness_caller_read_line(caller, HARNESS_TIMEOUT_MS, &lf), ==, 0);
        g_assert_cmpstr(lf, ==, "failed=0");

        /* The sentinel: asked by the test after all five calls were answered. */
        g_assert_cmpint(sd_bus_call_method(harness_bus(), "org.freedesktop.DBus",
                                           "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                           "GetConnectionCredentials", NULL, NULL, "s",
                                           la + 2), >=, 0);
        monitor_count(mon, la + 2, la + 2, lb + 2, &n_a, &n_b);
        g_assert_cmpuint(n_a, ==, 1);
        g_assert_cmpuint(n_b, ==, 1);

        g_assert_cmpint(harness_caller_release(caller), ==, 0);
        g_assert_cmpint(harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, NULL), ==, 0);
        /* Closed connections are forgotten, nothing of them kept (fds, workers). */
        calls_assert_clean(pid, &baseline);
        g_assert_cmpint(harness_stop_daemon(pid, NULL), ==, 0);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                g_test_skip("usermountd missing");
                return g_test_run();
        }
        g_assert_cmpint(harness_set_rules(CALLS_RULES_ALLOW_USER1), ==, 0);
        g_assert_cmpint(harness_make_image("ext4", &(HarnessImageSpec) { .label = "caller" },
                                           &image), ==, 0);
        g_assert_cmpint(chmod(image, 0644), ==, 0);

        g_test_add_func("/caller/sender-gone", test_sender_gone);
        g_test_add_func("/caller/one-question-per-connection", test_one_question_per_connection);
        return g_test_run();
}
