/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A caller's FUSE server that never answers (docs/security.md class 45), through the real
 * daemon: every close() of a file sends its server a flush, and a server that holds the
 * flush holds the closer, uninterruptibly. The harness's FUSE server (harness-fuse.h)
 * serves an image and holds the flushes of one process, or of everybody:
 *
 *   - the daemon lets go of a caller's source (OpenMount) while its flush is held: the
 *     main loop still serves another user at once; the held close is charged to the
 *     caller (MaxRequestsPerUser=) and to nobody else; all is released with the server;
 *   - the same for an fd a caller attached to a call without naming it (ListMounts);
 *   - workers started while a caller's FUSE file is in the daemon's fd table (their start
 *     copies the table) do not wait on it;
 *   - workers stuck in that close (at the end of their job) are charged to their caller
 *     alone: a third user is served while two users' stuck workers remain.
 *
 * Each test asserts that the daemon's fds, workers and threads are back to the baseline
 * once the server lets go.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>

#include "harness-fuse.h"
#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define WAIT_MS 30000
/* How long another user's call may take while a flush is held: far more than it needs
 * (a few ms), far less than the held close (until the test lets go). */
#define PROMPT_MS 5000

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image, *plain_image;

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') == 0 &&\n"
        "            (subject.user == 'umtest1' || subject.user == 'umtest2' ||\n"
        "             subject.user == 'umtestadm'))\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- callers ---------------------------------------------------------------------------- */

typedef struct StallCall {
        const char *method;  /* "OpenMount", "MountFd" (path is the source) or "ListMounts" */
        const char *path;    /* ListMounts: attached without being named, if not NULL */
        int timeout_ms;
        const char *target;  /* MountFd: params["target"] */
} StallCall;

/* One call through GDBus (which can attach an fd the body does not name); reports
 * "result=" (ok or the error name), "message=" and "ms=" (how long the answer took). */
static int stall_caller(void *userdata) {
        const StallCall *c = userdata;
        g_autoptr(GError) error = NULL;
        g_autoptr(GDBusConnection) bus = NULL;
        g_autoptr(GDBusMessage) call = NULL, reply = NULL;
        g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
        _cleanup_close_ int fd = -EBADF;
        gint64 t0;

        bus = harness_gdbus_connect(&error);
        g_assert_no_error(error);
        call = g_dbus_message_new_method_call(UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                              c->method);
        if (c->path) {
                fd = open(c->path, O_RDONLY | O_CLOEXEC);
                g_assert_cmpint(fd, >=, 0);
                g_unix_fd_list_append(fds, fd, &error);
                g_assert_no_error(error);
                g_dbus_message_set_unix_fd_list(call, fds);
        }
        if (streq(c->method, "OpenMount"))
                g_dbus_message_set_body(call, g_variant_new("(hssa{sv})", 0, "", "", NULL));
        else if (streq(c->method, "MountFd")) {
                GVariantBuilder params;

                g_variant_builder_init(&params, G_VARIANT_TYPE("a{sv}"));
                g_variant_builder_add(&params, "{sv}", "target", g_variant_new_string(c->target));
                g_dbus_message_set_body(call, g_variant_new("(hssa{sv})", 0, "", "", &params));
        } else
                g_dbus_message_set_body(call, g_variant_new("(a{sv})", NULL));
        t0 = g_get_monotonic_time();
        reply = g_dbus_connection_send_message_with_reply_sync(bus, call,
                                                               G_DBUS_SEND_MESSAGE_FLAGS_NONE,
                                                               c->timeout_ms, NULL, NULL, &error);
        harness_report("ms=%" G_GINT64_FORMAT, (g_get_monotonic_time() - t0) / 1000);
        if (!reply)
                harness_report("result=local:%s", error->message);
        else if (g_dbus_message_get_message_type(reply) == G_DBUS_MESSAGE_TYPE_ERROR) {
                GVariant *body = g_dbus_message_get_body(reply);
                const char *text = "";

                if (body && g_variant_is_of_type(body, G_VARIANT_TYPE("(s)")))
                        g_variant_get(body, "(&s)", &text);
                harness_report("result=%s", g_dbus_message_get_error_name(reply));
                harness_report("message=%s", text);
        } else
                harness_report("result=ok");
        return 0;
}

static GHashTable *call_as(uid_t uid, const char *method, const char *path, int timeout_ms) {
        const StallCall c = { method, path, timeout_ms };
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, uid, 0, stall_caller, (void *) &c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

static HarnessCaller *spawn_call(uid_t uid, const StallCall *c) {
        HarnessCaller *h = NULL;

        g_assert_cmpint(harness_caller_spawn(uid, uid, 0, stall_caller, (void *) c, &h), ==, 0);
        return h;
}

static GHashTable *finish_call(HarnessCaller *h) {
        g_autofree char *output = NULL;
        int status = harness_caller_wait(h, HARNESS_CALLER_TIMEOUT_MS, &output);

        g_test_message("caller output:\n%s", output ?: "");
        harness_caller_free(h);
        g_assert_cmpint(status, ==, 0);
        return calls_parse_report(output);
}

/* Another user is served at once: a list and a mount of an image of its own. */
static void assert_others_served(uid_t uid) {
        g_autoptr(GHashTable) list = call_as(uid, "ListMounts", NULL, PROMPT_MS);
        g_autoptr(GHashTable) mount = call_as(uid, "OpenMount", plain_image, PROMPT_MS);

        g_assert_cmpstr(report_get(list, "result"), ==, "ok");
        g_assert_cmpstr(report_get(mount, "result"), ==, "ok");
}

/* ---- the daemon --------------------------------------------------------------------------- */

static void start_daemon(const char *limits) {
        g_autofree char *conf = g_strdup_printf(HARNESS_CONF_DEFAULT "[Limits]\n%s", limits);

        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", conf), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
}

static void stop_daemon(void) {
        calls_assert_clean(daemon_pid, &baseline);
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        daemon_pid = 0;
}

/* ---- tests --------------------------------------------------------------------------------- */

/*
 * The finding: OpenMount of a file whose server holds the daemon's flush; the call was
 * answered, then the main loop blocked in close() and another user's ListMounts got no
 * answer for as long as the server held it.
 */
static void test_source_close(void) {
        g_autoptr(HarnessFuse) f = NULL;
        g_autoptr(GHashTable) first = NULL, refused = NULL, again = NULL;

        start_daemon("MaxRequestsPerUser=1\n");
        g_assert_cmpint(harness_fuse_new(image, &f), ==, 0);
        harness_fuse_hold_flush(f, daemon_pid, false);

        first = call_as(HARNESS_UID_USER1, "OpenMount", harness_fuse_image_path(f), WAIT_MS);
        g_assert_cmpstr(report_get(first, "result"), ==, "ok");
        g_assert_cmpint(harness_fuse_wait_flush_waiting(f, 1, WAIT_MS), ==, 0);

        assert_others_served(HARNESS_UID_USER2);
        /* The held close is umtest1's request that has not ended. */
        refused = call_as(HARNESS_UID_USER1, "OpenMount", plain_image, WAIT_MS);
        g_assert_cmpstr(report_get(refused, "result"), ==, UM_ERROR_LIMIT_EXCEEDED);
        g_assert_nonnull(strstr(report_get(refused, "message"), "MaxRequestsPerUser"));

        /* Answered, the close ends, and with it the charge (its thread ends a moment after
         * the server answered). */
        harness_fuse_hold_flush(f, -1, false);
        for (int i = 0; i < 100; i++) {
                g_clear_pointer(&again, g_hash_table_unref);
                again = call_as(HARNESS_UID_USER1, "OpenMount", plain_image, WAIT_MS);
                if (!streq(report_get(again, "result"), UM_ERROR_LIMIT_EXCEEDED))
                        break;
                g_usleep(50 * 1000);
        }
        g_assert_cmpstr(report_get(again, "result"), ==, "ok");
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

/* An fd attached to a call without being named in it: the daemon closes it too (sd-bus
 * does, when the message goes), and must not wait for that either. */
static void test_unnamed_fd(void) {
        g_autoptr(HarnessFuse) f = NULL;
        g_autoptr(GHashTable) t = NULL;

        start_daemon("");
        g_assert_cmpint(harness_fuse_new(image, &f), ==, 0);
        harness_fuse_hold_flush(f, daemon_pid, false);
        t = call_as(HARNESS_UID_USER1, "ListMounts", harness_fuse_image_path(f), WAIT_MS);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpint(harness_fuse_wait_flush_waiting(f, 1, WAIT_MS), ==, 0);
        assert_others_served(HARNESS_UID_USER2);
        assert_others_served(HARNESS_UID_USER1);

        harness_fuse_hold_flush(f, -1, false);
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

/*
 * While umtest1's request holds its FUSE file (its probe waits in a read), workers are
 * started for umtest2's requests: each start copies the daemon's fd table, and closing the
 * copy of umtest1's file waits on its server, which holds the flushes of the daemon and
 * its children. The workers
 * come from a table without callers' files (spawner.h): umtest2 is served at once.
 */
static void test_worker_start(void) {
        g_autoptr(HarnessFuse) f = NULL;
        g_autoptr(GHashTable) held = NULL;
        HarnessCaller *h;
        const StallCall c = { "OpenMount", NULL, WAIT_MS };
        StallCall hc = c;

        start_daemon("RequestTimeoutSec=60\n");
        g_assert_cmpint(harness_fuse_new(image, &f), ==, 0);
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_ALL);
        harness_fuse_hold_flush(f, daemon_pid, true);
        hc.path = harness_fuse_image_path(f);
        h = spawn_call(HARNESS_UID_USER1, &hc);
        g_assert_cmpint(harness_fuse_wait_waiting(f, 1, WAIT_MS), ==, 0);
        /* More requests than ready workers: the pool starts new ones meanwhile. */
        for (int i = 0; i < 4; i++)
                assert_others_served(HARNESS_UID_USER2);

        harness_fuse_hold_flush(f, -1, false);
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_OPEN);
        held = finish_call(h);
        g_assert_cmpstr(report_get(held, "result"), ==, "ok");
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

/*
 * Workers that wait forever in the close of their caller's file (the finding: a worker in
 * an uninterruptible FUSE wait that SIGKILL cannot end) after their requests timed out:
 * two users leave two each, and a third user who is not involved is served, because they
 * count for their own users alone. Released, everything goes.
 */
static void test_stuck_workers(void) {
        g_autoptr(HarnessFuse) f = NULL;
        const uid_t users[2] = { HARNESS_UID_USER1, HARNESS_UID_USER2 };
        HarnessCaller *h[4];
        StallCall c = { "OpenMount", NULL, WAIT_MS };

        start_daemon("RequestTimeoutSec=2\nMaxWorkers=4\nMaxWorkersPerUser=2\n");
        g_assert_cmpint(harness_fuse_new(image, &f), ==, 0);
        harness_fuse_hold_flush(f, daemon_pid, true);
        c.path = harness_fuse_image_path(f);
        for (int i = 0; i < 4; i++)
                h[i] = spawn_call(users[i % 2], &c);
        for (int i = 0; i < 4; i++) {
                g_autoptr(GHashTable) t = finish_call(h[i]);

                g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_FAILED);
        }
        g_assert_cmpuint(harness_fuse_n_flush_waiting(f), >=, 4);
        {
                g_autoptr(GHashTable) list = call_as(HARNESS_UID_ADMIN, "ListMounts", NULL,
                                                     PROMPT_MS);
                g_autoptr(GHashTable) mount = call_as(HARNESS_UID_ADMIN, "OpenMount",
                                                      plain_image, WAIT_MS);
                g_autoptr(GHashTable) own = call_as(HARNESS_UID_USER1, "OpenMount",
                                                    plain_image, WAIT_MS);

                g_assert_cmpstr(report_get(list, "result"), ==, "ok");
                g_assert_cmpstr(report_get(mount, "result"), ==, "ok");
                g_assert_cmpstr(report_get(own, "result"), ==, UM_ERROR_LIMIT_EXCEEDED);
                g_assert_nonnull(strstr(report_get(own, "message"), "MaxWorkersPerUser"));
        }
        harness_fuse_hold_flush(f, -1, false);
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

/*
 * A target under the caller's FUSE mount whose server does not answer (its lookup of the
 * target's last component waits): only the request's worker looks the target up, under
 * the request's time limit; another user is served meanwhile, and the caller gets an error
 * that says what did not answer.
 */
static void test_target(void) {
        g_autoptr(HarnessFuse) f = NULL;
        HarnessCaller *h;
        g_autoptr(GHashTable) t = NULL;
        StallCall c = { "MountFd", plain_image, WAIT_MS };

        start_daemon("RequestTimeoutSec=2\n");
        g_assert_cmpint(harness_fuse_new(image, &f), ==, 0);
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_METADATA);
        c.target = harness_fuse_image_path(f);
        h = spawn_call(HARNESS_UID_USER1, &c);
        g_assert_cmpint(harness_fuse_wait_waiting(f, 1, WAIT_MS), ==, 0);
        assert_others_served(HARNESS_UID_USER2);
        t = finish_call(h);
        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_FAILED);
        g_assert_nonnull(strstr(report_get(t, "message"), "target"));
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_OPEN);
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

int main(int argc, char *argv[]) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "f", "x\n", 0644 }, {} };
        const HarnessImageSpec spec = { .label = "stall", .entries = entries };
        const HarnessImageSpec plain = { .label = "plain", .entries = entries };
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(harness_make_image("ext4", &plain, &plain_image), ==, 0);
        g_assert_cmpint(chmod(plain_image, 0644), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);

        g_test_add_func("/stall/source-close", test_source_close);
        g_test_add_func("/stall/unnamed-fd", test_unnamed_fd);
        g_test_add_func("/stall/worker-start", test_worker_start);
        g_test_add_func("/stall/stuck-workers", test_stuck_workers);
        g_test_add_func("/stall/target", test_target);
        r = g_test_run();
        return r;
}
