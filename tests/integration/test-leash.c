/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Userspace drivers on a short leash (docs/security.md classes 46, 47 and 48), through
 * the real daemon with Driver=auto and a compromised driver: um-fake-driver, bind-mounted
 * over fuse2fs in the harness's mount namespace, so that usermountd starts it for ext4
 * images exactly as it starts fuse2fs (sandbox, uid of its own, the FUSE connection), and
 * it misbehaves as the test says (um-fake-driver.c):
 *
 *   - it never answers its start (mute), or stops answering after its start while the
 *     daemon looks into its mount (stall): the request fails in time, naming the driver,
 *     the driver is ended (through its pidfd, by a process that may signal it) and its uid
 *     is free; while it stalls it is in the drivers table (tracked from its start);
 *   - it stays when its mount is gone (ignore-end): it is ended, after the grace time,
 *     for an OpenMount mount the caller closed and for a registered mount unmounted;
 *   - it spins (DriverCPUSec=), takes memory (DriverMemoryMax=) or threads
 *     (DriverTasksMax=): it is ended or stopped at the cap, and its registered mount goes
 *     (MountRemoved).
 *
 * Each test asserts that no driver, worker, uid lock, mount or daemon fd is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
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

#define WAIT_MS 30000
/* A driver whose mount is gone is ended 10 s later (DRIVERTRACK_GRACE_USEC). */
#define GRACE_WAIT_MS 25000
#define FUSE2FS "/usr/bin/fuse2fs"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image;

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') == 0 &&\n"
        "            action.id != 'org.freedesktop.usermount1.mount-kernel-driver' &&\n"
        "            subject.user == 'umtest1')\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- the caller -------------------------------------------------------------------------- */

typedef struct LeashCall {
        const char *method;  /* "MountFd", "OpenMount" or "Unmount" */
        const char *path;    /* the image, or the mount point to unmount */
        bool hold;           /* OpenMount: hold the mount until released */
} LeashCall;

static int leash_caller(void *userdata) {
        const LeashCall *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int source = -EBADF, mount_fd = -EBADF;
        sd_bus *bus = NULL;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, c->method), >=, 0);
        if (streq(c->method, "Unmount"))
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
        else {
                source = open(c->path, O_RDWR | O_CLOEXEC);
                g_assert_cmpint(source, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", source, "", ""), >=, 0);
        }
        g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
        r = sd_bus_call(bus, call, 90 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0 && streq(c->method, "MountFd")) {
                g_autofree char *poke = NULL;
                const char *mp;

                g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                harness_report("mount-point=%s", mp);
                /* A look into the mount: what the fake driver's hogs wait for. */
                poke = g_build_filename(mp, "poke", NULL);
                (void) access(poke, F_OK);
        } else if (r >= 0 && streq(c->method, "OpenMount")) {
                int fd;

                g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
                mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        }
        reply = sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        if (mount_fd >= 0 && c->hold) {
                harness_report("held=yes");
                harness_await_release();
        }
        return 0;
}

static GHashTable *call_as(uid_t uid, const LeashCall *c) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, uid, c->hold ? HARNESS_NEW_USERNS : 0, leash_caller,
                                       (void *) c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

/* ---- the daemon and the driver ------------------------------------------------------------ */

static void start_daemon(const char *limits, const char *mode) {
        g_autofree char *conf = g_strdup_printf("[General]\nDriver=auto\n[Limits]\n%s", limits);

        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", conf), ==, 0);
        g_assert_cmpint(harness_write_etc("usermount-test/fake-driver", mode), ==, 0);
        g_assert_cmpint(mount(g_getenv("UM_FAKE_DRIVER"), FUSE2FS, NULL, MS_BIND, NULL), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        calls_forget_signals();
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
}

/* Nothing left: no driver, no uid claim, no worker; the daemon serves and its fds are
 * back. Then the daemon goes, and fuse2fs is itself again. */
static void stop_daemon(void) {

        calls_await_drivers(0);
        calls_assert_clean(daemon_pid, &baseline);
        calls_assert_no_uid_claims("/run/usermount");
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        daemon_pid = 0;
        g_assert_cmpint(umount2(FUSE2FS, 0), ==, 0);
}

static bool drivers_file_has(pid_t pid) {
        g_autofree char *text = NULL;
        g_autofree char *prefix = g_strdup_printf("%d ", (int) pid);

        if (!g_file_get_contents("/run/usermount/drivers", &text, NULL, NULL))
                return false;
        return g_str_has_prefix(text, prefix) || strstr(text, prefix);
}

/* Waits until pid holds no /dev/fuse fd: 0, or -ETIMEDOUT after WAIT_MS. */
static int wait_no_fuse_fd(pid_t pid) {
        for (int i = 0; i < WAIT_MS / 20; i++) {
                g_autofree char *dir = g_strdup_printf("/proc/%d/fd", (int) pid);
                g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
                const char *name;
                bool found = false;

                while (d && (name = g_dir_read_name(d)) && !found) {
                        g_autofree char *link = g_build_filename(dir, name, NULL);
                        g_autofree char *target = g_file_read_link(link, NULL);

                        found = target && streq(target, "/dev/fuse");
                }
                if (!found)
                        return 0;
                g_usleep(20 * 1000);
        }
        return -ETIMEDOUT;
}

/* umtest1, in a user namespace of its own, holds an OpenMount mount of the image (its
 * driver running) until released. */
static HarnessCaller *spawn_holder(void) {
        const LeashCall hold = { "OpenMount", image, true };
        g_autofree char *line = NULL;
        HarnessCaller *h = NULL;

        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_UID_USER1,
                                             HARNESS_NEW_USERNS, leash_caller, (void *) &hold,
                                             &h), ==, 0);
        do {
                g_clear_pointer(&line, g_free);
                g_assert_cmpint(harness_caller_read_line(h, WAIT_MS, &line), ==, 0);
                g_assert_false(g_str_has_prefix(line, "result=org."));
        } while (!streq(line, "held=yes"));
        calls_await_drivers(1);
        return h;
}

/* ---- tests ----------------------------------------------------------------------------------- */

/* A driver that never answers FUSE_INIT: stopped when its start time is up (half of
 * RequestTimeoutSec=), by name; before, the worker could not signal it (another uid, no
 * CAP_KILL) and waited for it past the request's timeout ("the device did not answer"). */
static void test_mute(void) {
        const LeashCall c = { "MountFd", image };
        g_autoptr(GHashTable) t = NULL;
        gint64 t0;

        start_daemon("RequestTimeoutSec=4\n", "mute");
        t0 = g_get_monotonic_time();
        t = call_as(HARNESS_UID_USER1, &c);
        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_FAILED);
        g_assert_nonnull(strstr(report_get(t, "message"), "The filesystem driver " FUSE2FS
                                " did not answer within"));
        g_assert_cmpint(g_get_monotonic_time() - t0, <, 8 * G_USEC_PER_SEC);
        stop_daemon();
}

/* A driver that answers its start, then nothing: the look into its mount (is its root the
 * caller's?) meets the request's limit; the driver, in the drivers table from its start,
 * is ended. */
static void test_stall(void) {
        const LeashCall c = { "MountFd", image };
        g_autoptr(HarnessCaller) h = NULL;
        g_autoptr(GArray) pids = NULL;
        g_autofree char *output = NULL;
        g_autoptr(GHashTable) t = NULL;

        start_daemon("RequestTimeoutSec=4\n", "stall");
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_UID_USER1, 0,
                                             leash_caller, (void *) &c, &h), ==, 0);
        calls_await_drivers(1);
        pids = calls_running_drivers();
        g_assert_true(drivers_file_has(g_array_index(pids, pid_t, 0)));
        g_assert_cmpint(harness_caller_wait(h, HARNESS_CALLER_TIMEOUT_MS, &output), ==, 0);
        g_clear_pointer(&h, harness_caller_free);
        t = calls_parse_report(output);
        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_FAILED);
        g_assert_nonnull(strstr(report_get(t, "message"), FUSE2FS));
        calls_await_drivers(0);
        /* The daemon writes the table once it has seen the driver's exit (its pidfd), a
         * moment after the process is gone. */
        for (int i = 0; i < WAIT_MS / 20 && drivers_file_has(g_array_index(pids, pid_t, 0)); i++)
                g_usleep(20 * 1000);
        g_assert_false(drivers_file_has(g_array_index(pids, pid_t, 0)));
        stop_daemon();
}

/* A driver that stays when its mount is gone is ended after the grace time: an OpenMount
 * mount whose caller closed it, and a registered mount unmounted. */
static void test_mount_gone(void) {
        const LeashCall mount = { "MountFd", image };
        g_autoptr(HarnessCaller) h = NULL;
        g_autoptr(GHashTable) t = NULL, u = NULL;

        start_daemon("", "ignore-end");
        h = spawn_holder();
        /* A new daemon takes the driver over, and its FUSE connection from it. */
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        calls_forget_signals();
        g_assert_cmpint(harness_caller_release(h), ==, 0);
        g_assert_cmpint(harness_caller_wait(h, WAIT_MS, NULL), ==, 0);
        calls_await_drivers_for(0, GRACE_WAIT_MS);
        /* The new daemon's own baseline, without the driver it took over. */
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        t = call_as(HARNESS_UID_USER1, &mount);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        calls_await_drivers(1);
        const LeashCall un = { "Unmount", report_get(t, "mount-point") };
        u = call_as(HARNESS_UID_USER1, &un);
        g_assert_cmpstr(report_get(u, "result"), ==, "ok");
        calls_await_drivers_for(0, GRACE_WAIT_MS);
        stop_daemon();
}

/*
 * A restarted daemon takes drivers over with their FUSE connections, wherever they keep
 * them: a driver that moved its connection to another fd is still ended once its mount
 * is gone (move-conn), and one that holds no connection any more serves no mount and is
 * ended after the grace time, while its caller still holds the mount (drop-conn).
 */
static void test_adopt(gconstpointer data) {
        const char *mode = data;
        const bool drop = streq(mode, "drop-conn");
        g_autoptr(HarnessCaller) h = NULL;
        g_autoptr(GArray) pids = NULL;

        start_daemon("", mode);
        h = spawn_holder();
        pids = calls_running_drivers();
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        if (drop) {
                g_assert_cmpint(kill(g_array_index(pids, pid_t, 0), SIGUSR1), ==, 0);
                g_assert_cmpint(wait_no_fuse_fd(g_array_index(pids, pid_t, 0)), ==, 0);
        }
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        calls_forget_signals();
        if (!drop)
                g_assert_cmpint(harness_caller_release(h), ==, 0);
        calls_await_drivers_for(0, GRACE_WAIT_MS);
        if (drop)
                g_assert_cmpint(harness_caller_release(h), ==, 0);
        g_assert_cmpint(harness_caller_wait(h, WAIT_MS, NULL), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
        stop_daemon();
}

/* A driver that takes a moment to exit after its mount is gone (writing back) keeps its
 * claim on the image until it has: a mount of the image right after waits for it, rather
 * than be refused as busy. */
static void test_slow_exit(void) {
        const LeashCall c = { "OpenMount", image };

        start_daemon("", "slow-exit");
        for (int i = 0; i < 3; i++) {
                g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        }
        stop_daemon();
}

/* A driver past one of its caps is ended or fails, and its registered mount goes. */
static void capped(const char *limits, const char *mode) {
        const LeashCall c = { "MountFd", image };
        g_autoptr(GHashTable) t = NULL;

        start_daemon(limits, mode);
        t = call_as(HARNESS_UID_USER1, &c);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        calls_await_signal("MountRemoved", report_get(t, "mount-point"));
        stop_daemon();
}

static void test_cpu(void) {
        capped("DriverCPUSec=1\n", "hog-cpu");
}

static void test_memory(void) {
        capped("DriverMemoryMax=64M\n", "hog-memory");
}

static void test_tasks(void) {
        capped("DriverTasksMax=8\n", "hog-tasks");
}

int main(int argc, char *argv[]) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "f", "x\n", 0644 }, {} };
        const HarnessImageSpec spec = { .label = "leash", .entries = entries,
                                        .root_uid = HARNESS_UID_USER1,
                                        .root_gid = HARNESS_GID_USER1 };

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path() || !g_getenv("UM_FAKE_DRIVER")) {
                printf("1..0 # SKIP usermountd or um-fake-driver was not built\n");
                return 0;
        }
        if (access(FUSE2FS, X_OK) < 0) {
                printf("1..0 # SKIP fuse2fs is not installed at " FUSE2FS "\n");
                return 0;
        }
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chmod(image, 0666), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        calls_watch_signals();

        g_test_add_func("/leash/mute", test_mute);
        g_test_add_func("/leash/stall", test_stall);
        g_test_add_func("/leash/mount-gone", test_mount_gone);
        g_test_add_data_func("/leash/adopt-moved-conn", "move-conn", test_adopt);
        g_test_add_data_func("/leash/adopt-no-conn", "drop-conn", test_adopt);
        g_test_add_func("/leash/slow-exit", test_slow_exit);
        g_test_add_func("/leash/cpu", test_cpu);
        g_test_add_func("/leash/memory", test_memory);
        g_test_add_func("/leash/tasks", test_tasks);
        return g_test_run();
}
