/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Limits and faults through the real daemon (docs/security.md, classes 25, 26, 27, 30 and 36):
 * floods that hit each [Limits] key while other users are still served (also from uids
 * that /etc/subuid delegates, which count as their owner, and from callers polkit refuses,
 * who share a small budget), messages with hundreds of fds or an fd index out of range, a
 * worker killed mid-mount, a filesystem that hangs (a gated FUSE image, harness-fuse.h)
 * against RequestTimeoutSec, and the CLI run with a hostile environment. Each test starts
 * its own daemon with its own /etc/usermount/usermount.conf and proves that nothing is left
 * behind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gunixfdlist.h>

#include "harness-fuse.h"
#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define LIMIT_EXCEEDED "org.freedesktop.UserMount1.Error.LimitExceeded"
#define ERROR_FAILED "org.freedesktop.UserMount1.Error.Failed"
#define WAIT_MS 30000

static bool streq0(const char *a, const char *b) {
        return a && streq(a, b);
}

static pid_t daemon_pid;
static HarnessSnapshot baseline;

/* Ordinary ext4 images ("lim0".."lim5"), and the one every gated FUSE file copies. */
#define N_IMAGES 6
static char *images[N_IMAGES];
static char *image_gated;

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (action.id == 'org.freedesktop.usermount1.mount-exec' ||\n"
        "            action.id == 'org.freedesktop.usermount1.unmount-others')\n"
        "                return polkit.Result.NO;\n"
        "        if (subject.user == 'umtest1' || subject.user == 'umtest2' ||\n"
        "            subject.user == 'umtestadm')\n"
        "                return polkit.Result.YES;\n"
        "        if (subject.user.indexOf('umsub1') == 0)\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- Callers ------------------------------------------------------------------------- */

/*
 * One caller sends every call of a batch at once on one connection (so that they are all
 * in flight together), reports "sent=N", then one "resultI=", "messageI=" (and for
 * MountFd "mount-pointI=") per reply, then "done=N". With unmount_after, each mount made
 * is unmounted again ("unmountI="). With hold, the mount fds OpenMount returned stay open
 * (holding their loop devices) until the test releases the caller.
 */
typedef struct Batch {
        const char *method;    /* "OpenMount" or "MountFd" */
        const char *paths[8];  /* sources, NULL-terminated */
        bool unmount_after;
        bool hold;
} Batch;

typedef struct Pending {
        unsigned index;
        unsigned *n_done;
        int mount_fd;
        char *mount_point;
} Pending;

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Pending *p = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int fd;

        (*p->n_done)++;
        if (e) {
                harness_report("result%u=%s", p->index, e->name);
                harness_report("message%u=%s", p->index, strempty(e->message));
                return 0;
        }
        harness_report("result%u=ok", p->index);
        if (sd_bus_message_has_signature(reply, "ha{sv}")) {
                g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
                p->mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        } else {
                const char *mp;

                g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                p->mount_point = g_strdup(mp);
                harness_report("mount-point%u=%s", p->index, mp);
        }
        return 0;
}

static int caller_batch(void *userdata) {
        const Batch *b = userdata;
        Pending pending[G_N_ELEMENTS(b->paths)] = {};
        unsigned n = 0, n_done = 0;
        sd_bus *bus = NULL;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        for (; b->paths[n]; n++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
                _cleanup_close_ int fd = open(b->paths[n], (streq(b->method, "MountFd") ? O_RDWR :
                                                            O_RDONLY) | O_CLOEXEC);

                g_assert_cmpint(fd, >=, 0);
                pending[n] = (Pending) { .index = n, .n_done = &n_done, .mount_fd = -EBADF };
                g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME,
                                                               UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                                               b->method), >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", fd, "", ""), >=, 0);
                g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
                g_assert_cmpint(sd_bus_call_async(bus, NULL, call, on_reply, &pending[n],
                                                  110 * G_USEC_PER_SEC), >=, 0);
        }
        g_assert_cmpint(sd_bus_flush(bus), >=, 0);
        harness_report("sent=%u", n);

        while (n_done < n) {
                r = sd_bus_process(bus, NULL);
                g_assert_cmpint(r, >=, 0);
                if (r == 0)
                        g_assert_cmpint(sd_bus_wait(bus, UINT64_MAX), >=, 0);
        }
        for (unsigned i = 0; i < n; i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

                if (!b->unmount_after || !pending[i].mount_point)
                        continue;
                r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                       "Unmount", &error, NULL, "sa{sv}",
                                       pending[i].mount_point, 0);
                harness_report("unmount%u=%s", i, r >= 0 ? "ok" : error.name);
        }
        harness_report("done=%u", n);
        if (b->hold)
                (void) harness_await_release();
        for (unsigned i = 0; i < n; i++) {
                safe_close(pending[i].mount_fd);
                g_free(pending[i].mount_point);
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}

/* ---- The test side ------------------------------------------------------------------- */

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

static HarnessCaller *spawn_batch(uid_t uid, const Batch *b) {
        HarnessCaller *c = NULL;
        g_autofree char *line = NULL;
        unsigned n = 0;

        while (b->paths[n])
                n++;
        g_assert_cmpint(harness_caller_spawn(uid, uid, 0, caller_batch, (void *) b, &c), ==, 0);
        g_assert_cmpint(harness_caller_read_line(c, WAIT_MS, &line), ==, 0);
        g_autofree char *expected = g_strdup_printf("sent=%u", n);
        g_assert_cmpstr(line, ==, expected);
        return c;
}

/* Waits for a batch caller to exit and returns its report. */
static GHashTable *finish_batch(HarnessCaller *c) {
        g_autofree char *output = NULL;
        int status;

        status = harness_caller_wait(c, HARNESS_CALLER_TIMEOUT_MS, &output);
        g_test_message("caller output:\n%s", output ?: "");
        harness_caller_free(c);
        g_assert_cmpint(status, ==, 0);
        return calls_parse_report(output);
}

static GHashTable *run_batch(uid_t uid, const Batch *b) {
        return finish_batch(spawn_batch(uid, b));
}

/* Reads lines of a holding caller until "done=N", into a report. */
static GHashTable *read_until_done(HarnessCaller *c) {
        g_autoptr(GString) all = g_string_new(NULL);

        for (;;) {
                g_autofree char *line = NULL;

                g_assert_cmpint(harness_caller_read_line(c, WAIT_MS, &line), ==, 0);
                g_string_append_printf(all, "%s\n", line);
                if (g_str_has_prefix(line, "done="))
                        break;
        }
        g_test_message("caller output:\n%s", all->str);
        return calls_parse_report(all->str);
}

static void assert_result(GHashTable *t, unsigned i, const char *expected) {
        g_autofree char *key = g_strdup_printf("result%u", i);

        g_assert_cmpstr(report_get(t, key), ==, expected);
}

/* The refusal names the limit: its [Limits] key, as "Key=" (org.freedesktop.UserMount1(5),
 * LimitExceeded). */
static void assert_limit(GHashTable *t, unsigned i, const char *key) {
        g_autofree char *mkey = g_strdup_printf("message%u", i);
        g_autofree char *named = g_strconcat(key, "=", NULL);
        const char *message = report_get(t, mkey);

        assert_result(t, i, LIMIT_EXCEEDED);
        if (!strstr(strempty(message), named))
                g_error("LimitExceeded message '%s' does not name %s", message, key);
}

/* Another user mounts an ordinary image and unmounts it again. */
static void assert_served(uid_t uid, const char *image) {
        const Batch b = { "MountFd", { image }, .unmount_after = true };
        g_autoptr(GHashTable) t = run_batch(uid, &b);

        assert_result(t, 0, "ok");
        g_assert_cmpstr(report_get(t, "unmount0"), ==, "ok");
}

static HarnessFuse *new_gated(HarnessFuseGate gate) {
        HarnessFuse *f = NULL;

        g_assert_cmpint(harness_fuse_new(image_gated, &f), ==, 0);
        harness_fuse_set_gate(f, gate);
        return f;
}

/* /proc/PID/status values in kB. */
static long status_kb(pid_t pid, const char *field) {
        g_autofree char *path = g_strdup_printf("/proc/%d/status", (int) pid);
        g_autofree char *status = NULL;
        const char *p;

        g_assert_true(g_file_get_contents(path, &status, NULL, NULL));
        p = strstr(status, field);
        g_assert_nonnull(p);
        return strtol(p + strlen(field) + 1, NULL, 10);
}

static bool daemon_is_sanitized(void) {
        g_autofree char *path = g_strdup_printf("/proc/%d/maps", (int) daemon_pid);
        g_autofree char *maps = NULL;

        g_assert_true(g_file_get_contents(path, &maps, NULL, NULL));
        return strstr(maps, "libasan") || strstr(maps, "libubsan");
}

/* The daemon's worker processes (its children), alive or not yet reaped, but for the
 * ready ones of its pool, which wait for a request. */
static GArray *daemon_workers(void) {
        return harness_children(daemon_pid, NULL, WORKER_NAME_READY);
}

static int wait_no_workers(int timeout_ms) {
        int64_t deadline = g_get_monotonic_time() + (int64_t) timeout_ms * 1000;

        for (;;) {
                g_autoptr(GArray) pids = daemon_workers();

                if (pids->len == 0)
                        return 0;
                if (g_get_monotonic_time() > deadline)
                        return -ETIMEDOUT;
                g_usleep(20 * 1000); /* polling /proc: there is nothing to wait on */
        }
}

/* Auto-clearing loop devices go shortly after their last user. */
static int wait_fuse_loops_gone(HarnessFuse *f) {
        int64_t deadline = g_get_monotonic_time() + (int64_t) WAIT_MS * 1000;

        while (harness_fuse_count_loop_devices(f) > 0) {
                if (g_get_monotonic_time() > deadline)
                        return -ETIMEDOUT;
                g_usleep(20 * 1000); /* the kernel gives nothing to wait on */
        }
        return 0;
}

/* ---- Item 25: floods and limits ------------------------------------------------------ */

#define FLOOD_N 3

/* One round: FLOOD_N gated requests of umtest1 in flight, the next refused, umtest2
 * served meanwhile, then all released and finished. */
static void flood_round(HarnessFuse **fuses, const HarnessSnapshot *expected) {
        Batch flood = { "OpenMount" };
        const Batch extra = { "OpenMount", { images[0] } };
        g_autoptr(GHashTable) refused = NULL, done = NULL;
        HarnessCaller *c;

        for (unsigned i = 0; i < FLOOD_N; i++) {
                harness_fuse_set_gate(fuses[i], HARNESS_FUSE_GATE_ALL);
                flood.paths[i] = harness_fuse_image_path(fuses[i]);
        }
        c = spawn_batch(HARNESS_UID_USER1, &flood);
        for (unsigned i = 0; i < FLOOD_N; i++)
                g_assert_cmpint(harness_fuse_wait_waiting(fuses[i], 1, WAIT_MS), ==, 0);

        refused = run_batch(HARNESS_UID_USER1, &extra);
        assert_limit(refused, 0, "MaxRequestsPerUser");
        assert_served(HARNESS_UID_USER2, images[1]);

        for (unsigned i = 0; i < FLOOD_N; i++)
                harness_fuse_set_gate(fuses[i], HARNESS_FUSE_GATE_OPEN);
        done = finish_batch(c);
        for (unsigned i = 0; i < FLOOD_N; i++)
                assert_result(done, i, "ok");
        g_assert_cmpint(harness_wait_snapshot(daemon_pid, expected, 20000), ==, 0);
}

static void test_flood_per_user(void) {
        HarnessFuse *fuses[FLOOD_N];
        long rss_warm, anon_warm, rss, anon;
        HarnessSnapshot with_fuse;
        int fds_warm;

        start_daemon("MaxRequestsPerUser=3\nMaxWorkersPerUser=16\nMaxLoopDevicesPerUser=16\n");
        for (unsigned i = 0; i < FLOOD_N; i++)
                fuses[i] = new_gated(HARNESS_FUSE_GATE_OPEN);
        /* The FUSE mounts are below the harness's directory and counted. */
        g_assert_cmpint(harness_snapshot(daemon_pid, &with_fuse), ==, 0);

        flood_round(fuses, &with_fuse); /* warm-up: allocator pools, polkit connection, caches */
        fds_warm = harness_count_fds(daemon_pid);
        rss_warm = status_kb(daemon_pid, "VmRSS:");
        anon_warm = status_kb(daemon_pid, "RssAnon:");
        for (unsigned round = 0; round < 4; round++)
                flood_round(fuses, &with_fuse);
        rss = status_kb(daemon_pid, "VmRSS:");
        anon = status_kb(daemon_pid, "RssAnon:");
        g_test_message("daemon after warm-up: %d fds, VmRSS %ld kB, RssAnon %ld kB; after 4 "
                       "rounds: %d fds, VmRSS %ld kB, RssAnon %ld kB", fds_warm, rss_warm,
                       anon_warm, harness_count_fds(daemon_pid), rss, anon);
        g_assert_cmpint(harness_count_fds(daemon_pid), ==, baseline.daemon_fds);
        g_assert_cmpint(fds_warm, ==, baseline.daemon_fds);
        if (daemon_is_sanitized())
                g_test_message("sanitizer build: its quarantine grows memory; not compared");
        else {
                /* A leak of one request's state per call (a few kB) over the 4 rounds'
                 * ~20 calls shows; page-granular noise of the allocator does not. */
                g_assert_cmpint(anon, <=, anon_warm + 256);
                g_assert_cmpint(rss, <=, rss_warm + 512);
        }
        for (unsigned i = 0; i < FLOOD_N; i++)
                harness_fuse_free(fuses[i]);
        stop_daemon();
}

static void test_flood_global(void) {
        g_autoptr(HarnessFuse) f1 = NULL, f2 = NULL, f3 = NULL;
        const Batch extra = { "OpenMount", { images[0] } };
        g_autoptr(GHashTable) refused = NULL, r1 = NULL, r2 = NULL, later = NULL;
        HarnessCaller *c1, *c2;

        start_daemon("MaxRequests=3\nMaxRequestsPerUser=2\nMaxWorkers=16\n");
        f1 = new_gated(HARNESS_FUSE_GATE_ALL);
        f2 = new_gated(HARNESS_FUSE_GATE_ALL);
        f3 = new_gated(HARNESS_FUSE_GATE_ALL);
        const Batch b1 = { "OpenMount", { harness_fuse_image_path(f1), harness_fuse_image_path(f2) } };
        const Batch b2 = { "OpenMount", { harness_fuse_image_path(f3) } };

        c1 = spawn_batch(HARNESS_UID_USER1, &b1);
        c2 = spawn_batch(HARNESS_UID_USER2, &b2);
        g_assert_cmpint(harness_fuse_wait_waiting(f1, 1, WAIT_MS), ==, 0);
        g_assert_cmpint(harness_fuse_wait_waiting(f2, 1, WAIT_MS), ==, 0);
        g_assert_cmpint(harness_fuse_wait_waiting(f3, 1, WAIT_MS), ==, 0);

        /* A third user, under its own per-user limit, meets the global one. */
        refused = run_batch(HARNESS_UID_ADMIN, &extra);
        assert_limit(refused, 0, "MaxRequests");

        harness_fuse_set_gate(f1, HARNESS_FUSE_GATE_OPEN);
        harness_fuse_set_gate(f2, HARNESS_FUSE_GATE_OPEN);
        harness_fuse_set_gate(f3, HARNESS_FUSE_GATE_OPEN);
        r1 = finish_batch(c1);
        r2 = finish_batch(c2);
        assert_result(r1, 0, "ok");
        assert_result(r1, 1, "ok");
        assert_result(r2, 0, "ok");
        /* Once the others finished, the same user is served. */
        later = run_batch(HARNESS_UID_ADMIN, &extra);
        assert_result(later, 0, "ok");
        g_clear_pointer(&f1, harness_fuse_free);
        g_clear_pointer(&f2, harness_fuse_free);
        g_clear_pointer(&f3, harness_fuse_free);
        stop_daemon();
}

static void unmount_as_root(const char *mp) {
        g_assert_nonnull(mp);
        g_assert_cmpint(sd_bus_call_method(harness_bus(), UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, "Unmount", NULL, NULL, "sa{sv}",
                                           mp, 0), >=, 0);
}

static void test_mounts(void) {
        const Batch user1 = { "MountFd", { images[0], images[1] } };
        const Batch user1_more = { "MountFd", { images[2] } };
        const Batch user2 = { "MountFd", { images[3] } };
        const Batch admin = { "MountFd", { images[4] } };
        g_autoptr(GHashTable) t1 = NULL, t1_more = NULL, t2 = NULL, ta = NULL;

        start_daemon("MaxMountsPerUser=2\nMaxMounts=3\n");
        t1 = run_batch(HARNESS_UID_USER1, &user1);
        assert_result(t1, 0, "ok");
        assert_result(t1, 1, "ok");
        t1_more = run_batch(HARNESS_UID_USER1, &user1_more);
        assert_limit(t1_more, 0, "MaxMountsPerUser");

        t2 = run_batch(HARNESS_UID_USER2, &user2);
        assert_result(t2, 0, "ok");
        ta = run_batch(HARNESS_UID_ADMIN, &admin);
        assert_limit(ta, 0, "MaxMounts");

        /* Unmount everything; then the admin is served. */
        unmount_as_root(report_get(t1, "mount-point0"));
        unmount_as_root(report_get(t1, "mount-point1"));
        unmount_as_root(report_get(t2, "mount-point0"));
        assert_served(HARNESS_UID_ADMIN, images[4]);
        stop_daemon();
}

/* Sent together, the mounts still in flight count: two of three are made, never three. */
static void test_mounts_concurrent(void) {
        const Batch user1 = { "MountFd", { images[0], images[1], images[2] } };
        g_autoptr(GHashTable) t = NULL;
        unsigned n_ok = 0;

        start_daemon("MaxMountsPerUser=2\n");
        t = run_batch(HARNESS_UID_USER1, &user1);
        for (unsigned i = 0; i < 3; i++) {
                g_autofree char *key = g_strdup_printf("result%u", i);
                g_autofree char *mp = g_strdup_printf("mount-point%u", i);

                if (streq0(report_get(t, key), "ok")) {
                        n_ok++;
                        unmount_as_root(report_get(t, mp));
                } else
                        assert_limit(t, i, "MaxMountsPerUser");
        }
        g_assert_cmpuint(n_ok, ==, 2);
        stop_daemon();
}

static void test_loop_devices(void) {
        const Batch hold = { "OpenMount", { images[0], images[1] }, .hold = true };
        const Batch more = { "OpenMount", { images[2] } };
        g_autoptr(GHashTable) held = NULL, refused = NULL, other = NULL, after = NULL;
        HarnessCaller *c;

        start_daemon("MaxLoopDevicesPerUser=2\nMaxLoopDevices=3\n");
        c = spawn_batch(HARNESS_UID_USER1, &hold);
        held = read_until_done(c);
        assert_result(held, 0, "ok");
        assert_result(held, 1, "ok");
        g_assert_cmpint(harness_count_loop_devices(), ==, baseline.loop_devices + 2);

        refused = run_batch(HARNESS_UID_USER1, &more);
        assert_limit(refused, 0, "MaxLoopDevicesPerUser");
        other = run_batch(HARNESS_UID_USER2, &(const Batch) { "OpenMount", { images[3] } });
        assert_result(other, 0, "ok");

        /* Closing the mount fds lets the loop devices go; then the user is served again. */
        g_assert_cmpint(harness_caller_release(c), ==, 0);
        g_hash_table_unref(finish_batch(c));
        g_assert_cmpint(harness_wait_snapshot(daemon_pid, &baseline, 20000), ==, 0);
        after = run_batch(HARNESS_UID_USER1, &more);
        assert_result(after, 0, "ok");
        stop_daemon();
}

static void test_workers_per_user(void) {
        g_autoptr(HarnessFuse) f1 = NULL, f2 = NULL;
        const Batch more = { "OpenMount", { images[0] } };
        g_autoptr(GHashTable) refused = NULL, held = NULL;
        HarnessCaller *c;

        start_daemon("MaxWorkersPerUser=2\nMaxRequestsPerUser=8\n");
        f1 = new_gated(HARNESS_FUSE_GATE_ALL);
        f2 = new_gated(HARNESS_FUSE_GATE_ALL);
        c = spawn_batch(HARNESS_UID_USER1, &(const Batch) { "OpenMount",
                                                            { harness_fuse_image_path(f1),
                                                              harness_fuse_image_path(f2) } });
        g_assert_cmpint(harness_fuse_wait_waiting(f1, 1, WAIT_MS), ==, 0);
        g_assert_cmpint(harness_fuse_wait_waiting(f2, 1, WAIT_MS), ==, 0);

        refused = run_batch(HARNESS_UID_USER1, &more);
        assert_limit(refused, 0, "MaxWorkersPerUser");
        assert_served(HARNESS_UID_USER2, images[1]);

        harness_fuse_set_gate(f1, HARNESS_FUSE_GATE_OPEN);
        harness_fuse_set_gate(f2, HARNESS_FUSE_GATE_OPEN);
        held = finish_batch(c);
        assert_result(held, 0, "ok");
        assert_result(held, 1, "ok");
        g_clear_pointer(&f1, harness_fuse_free);
        g_clear_pointer(&f2, harness_fuse_free);
        stop_daemon();
}

/* One worker per user still lets a request through all of its stages (probe, build,
 * attach, detach run one after the other). */
static void test_workers_one_per_user(void) {
        start_daemon("MaxWorkersPerUser=1\n");
        assert_served(HARNESS_UID_USER2, images[1]);
        stop_daemon();
}

static void test_workers_global(void) {
        g_autoptr(HarnessFuse) f1 = NULL, f2 = NULL, f3 = NULL;
        const Batch more = { "OpenMount", { images[0] } };
        g_autoptr(GHashTable) refused = NULL, r1 = NULL, r2 = NULL;
        HarnessCaller *c1, *c2;

        start_daemon("MaxWorkers=3\nMaxWorkersPerUser=2\n");
        f1 = new_gated(HARNESS_FUSE_GATE_ALL);
        f2 = new_gated(HARNESS_FUSE_GATE_ALL);
        f3 = new_gated(HARNESS_FUSE_GATE_ALL);
        c1 = spawn_batch(HARNESS_UID_USER1, &(const Batch) { "OpenMount",
                                                             { harness_fuse_image_path(f1),
                                                               harness_fuse_image_path(f2) } });
        c2 = spawn_batch(HARNESS_UID_USER2, &(const Batch) { "OpenMount",
                                                             { harness_fuse_image_path(f3) } });
        g_assert_cmpint(harness_fuse_wait_waiting(f1, 1, WAIT_MS), ==, 0);
        g_assert_cmpint(harness_fuse_wait_waiting(f2, 1, WAIT_MS), ==, 0);
        g_assert_cmpint(harness_fuse_wait_waiting(f3, 1, WAIT_MS), ==, 0);

        /* A third user, under its own per-user limit, meets the global one. */
        refused = run_batch(HARNESS_UID_ADMIN, &more);
        assert_limit(refused, 0, "MaxWorkers");

        /* Released one after the other, so that each request's stages fit the limit. */
        harness_fuse_set_gate(f3, HARNESS_FUSE_GATE_OPEN);
        r2 = finish_batch(c2);
        assert_result(r2, 0, "ok");
        harness_fuse_set_gate(f1, HARNESS_FUSE_GATE_OPEN);
        harness_fuse_set_gate(f2, HARNESS_FUSE_GATE_OPEN);
        r1 = finish_batch(c1);
        assert_result(r1, 0, "ok");
        assert_result(r1, 1, "ok");
        assert_served(HARNESS_UID_ADMIN, images[1]);
        g_clear_pointer(&f1, harness_fuse_free);
        g_clear_pointer(&f2, harness_fuse_free);
        g_clear_pointer(&f3, harness_fuse_free);
        stop_daemon();
}

/* ---- Item 36: subordinate uids and requests nobody has authorized --------------------- */

/* Users at uids that /etc/subuid delegates (the bus admits only uids with a passwd entry,
 * as nss-systemd or LDAP give them): three in umtest1's range, which the rules allow
 * like umtest1, and four in umtest2's, which nobody allows. */
#define N_SUB_USERS 3
#define SUB1(i) ((uid_t) (HARNESS_SUBID_USER1_START + 1 + (i)))
#define SUB2(i) ((uid_t) (HARNESS_SUBID_USER2_START + 1 + (i)))
#define ERROR_NOT_AUTHORIZED UM_ERROR_NOT_AUTHORIZED

static void add_sub_users(void) {
        g_autofree char *passwd = NULL;
        g_autoptr(GString) p = NULL;

        g_assert_true(g_file_get_contents("/etc/passwd", &passwd, NULL, NULL));
        p = g_string_new(passwd);
        if (p->len > 0 && p->str[p->len - 1] != '\n')
                g_string_append_c(p, '\n');
        for (unsigned i = 0; i < N_SUB_USERS + 1; i++) {
                g_assert_null(getpwuid(SUB1(i)));
                g_assert_null(getpwuid(SUB2(i)));
                if (i < N_SUB_USERS)
                        g_string_append_printf(p, "umsub1%c:x:%u:%u:usermount test subuid:"
                                               "/nonexistent:/usr/sbin/nologin\n", 'a' + i,
                                               (unsigned) SUB1(i), (unsigned) SUB1(i));
                g_string_append_printf(p, "umsub2%c:x:%u:%u:usermount test subuid:"
                                       "/nonexistent:/usr/sbin/nologin\n", 'a' + i,
                                       (unsigned) SUB2(i), (unsigned) SUB2(i));
        }
        g_assert_cmpint(harness_write_etc("passwd", p->str), ==, 0);
}

/* A request that hangs in its probe until the gate of f opens. */
static Batch stall_batch(HarnessFuse *f) {
        return (Batch) { "OpenMount", { harness_fuse_image_path(f) } };
}

/*
 * umtest1 and two of its subordinate uids each have one request hanging in its probe:
 * with a per-user limit of 3 (key), a third subordinate uid and umtest1 itself are over
 * it, while umtest2 is served; released, all three requests succeed.
 */
static void subuid_flood(const char *limits, const char *key) {
        const uid_t holders[3] = { HARNESS_UID_USER1, SUB1(0), SUB1(1) };
        const Batch extra = { "OpenMount", { images[0] } };
        g_autoptr(HarnessFuse) f = NULL;
        HarnessCaller *c[3];
        Batch stall;

        start_daemon(limits);
        f = new_gated(HARNESS_FUSE_GATE_ALL);
        stall = stall_batch(f);
        for (unsigned i = 0; i < 3; i++) {
                c[i] = spawn_batch(holders[i], &stall);
                g_assert_cmpint(harness_fuse_wait_waiting(f, i + 1, WAIT_MS), ==, 0);
        }
        {
                g_autoptr(GHashTable) sub = run_batch(SUB1(2), &extra);
                g_autoptr(GHashTable) own = run_batch(HARNESS_UID_USER1, &extra);

                assert_limit(sub, 0, key);
                assert_limit(own, 0, key);
        }
        assert_served(HARNESS_UID_USER2, images[1]);

        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_OPEN);
        for (unsigned i = 0; i < 3; i++) {
                g_autoptr(GHashTable) done = finish_batch(c[i]);

                assert_result(done, 0, "ok");
        }
        g_assert_cmpint(wait_no_workers(WAIT_MS), ==, 0);
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

static void test_subuid_requests(void) {
        subuid_flood("MaxRequestsPerUser=3\nMaxWorkersPerUser=16\n", "MaxRequestsPerUser");
}

static void test_subuid_workers(void) {
        subuid_flood("MaxWorkersPerUser=3\nMaxRequestsPerUser=16\n", "MaxWorkersPerUser");
}

/* Registered mounts and loop devices: the registry keeps each caller's own uid, the limits
 * count them for the owner. */
static void test_subuid_mounts_and_loops(void) {
        g_autoptr(GHashTable) t1 = NULL, t2 = NULL, over = NULL, other = NULL, held = NULL;
        g_autoptr(GHashTable) loops_over = NULL, later = NULL;
        HarnessCaller *c;

        start_daemon("MaxMountsPerUser=2\nMaxLoopDevicesPerUser=3\n");
        t1 = run_batch(HARNESS_UID_USER1, &(const Batch) { "MountFd", { images[0] } });
        assert_result(t1, 0, "ok");
        t2 = run_batch(SUB1(0), &(const Batch) { "MountFd", { images[1] } });
        assert_result(t2, 0, "ok");
        over = run_batch(SUB1(1), &(const Batch) { "MountFd", { images[2] } });
        assert_limit(over, 0, "MaxMountsPerUser");
        other = run_batch(HARNESS_UID_USER2, &(const Batch) { "MountFd", { images[3] } });
        assert_result(other, 0, "ok");

        /* The two mounts hold a loop device each; one more fits, then no more. */
        c = spawn_batch(SUB1(1), &(const Batch) { "OpenMount", { images[2] }, .hold = true });
        held = read_until_done(c);
        assert_result(held, 0, "ok");
        loops_over = run_batch(SUB1(2), &(const Batch) { "OpenMount", { images[4] } });
        assert_limit(loops_over, 0, "MaxLoopDevicesPerUser");

        g_assert_cmpint(harness_caller_release(c), ==, 0);
        g_hash_table_unref(finish_batch(c));
        unmount_as_root(report_get(t1, "mount-point0"));
        unmount_as_root(report_get(t2, "mount-point0"));
        unmount_as_root(report_get(other, "mount-point0"));
        g_assert_cmpint(harness_wait_snapshot(daemon_pid, &baseline, 20000), ==, 0);
        later = run_batch(SUB1(2), &(const Batch) { "OpenMount", { images[4] } });
        assert_result(later, 0, "ok");
        stop_daemon();
}

/* Refused by polkit once its probe is done: NotAuthorized or NotAuthorizedCanObtain. */
static void assert_not_authorized(GHashTable *t, unsigned i) {
        g_autofree char *key = g_strdup_printf("result%u", i);

        if (!g_str_has_prefix(strempty(report_get(t, key)), ERROR_NOT_AUTHORIZED))
                g_error("%s is %s, not %s", key, report_get(t, key), ERROR_NOT_AUTHORIZED);
}

/* Two of umtest2's subordinate uids (polkit allows them nothing) send requests that hang
 * in the probe on a gated FUSE image; returns the image, c gets the callers. */
static HarnessFuse *stall_two_unauthorized(HarnessCaller *c[2]) {
        HarnessFuse *f = new_gated(HARNESS_FUSE_GATE_ALL);
        Batch stall = stall_batch(f);

        for (unsigned i = 0; i < 2; i++) {
                c[i] = spawn_batch(SUB2(i), &stall);
                g_assert_cmpint(harness_fuse_wait_waiting(f, i + 1, WAIT_MS), ==, 0);
        }
        return f;
}

/*
 * Four subordinate uids of umtest2, which polkit allows nothing, send requests that hang
 * in the probe (the finding: such callers held every worker, and an authorized user got
 * MaxWorkers). Two fit the budget of requests nobody authorized; the others are refused,
 * as is umtestadm, whom polkit would allow but this daemon has not seen authorized yet.
 * umtest1, authorized before, is served: its requests are not charged to that budget,
 * and the workers and requests the budget holds leave room for it.
 */
static void test_unauthorized_budget(void) {
        g_autoptr(HarnessFuse) f = NULL;
        HarnessCaller *c[2];
        Batch stall;

        start_daemon("MaxWorkers=4\nMaxRequests=4\nMaxWorkersPerUser=8\nMaxRequestsPerUser=8\n"
                     "MaxUnauthorizedRequests=2\n");
        assert_served(HARNESS_UID_USER1, images[0]);
        f = stall_two_unauthorized(c);
        stall = stall_batch(f);
        for (unsigned i = 2; i < 4; i++) {
                g_autoptr(GHashTable) refused = run_batch(SUB2(i), &stall);

                assert_limit(refused, 0, "MaxUnauthorizedRequests");
        }
        {
                g_autoptr(GHashTable) fresh = run_batch(HARNESS_UID_ADMIN, &(const Batch) {
                                                                "OpenMount", { images[1] } });

                assert_limit(fresh, 0, "MaxUnauthorizedRequests");
        }
        assert_served(HARNESS_UID_USER1, images[2]);
        g_assert_cmpuint(harness_fuse_n_waiting(f), ==, 2);

        /* Released, the two are refused by polkit; nothing is left behind. */
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_OPEN);
        for (unsigned i = 0; i < 2; i++) {
                g_autoptr(GHashTable) done = finish_batch(c[i]);

                assert_not_authorized(done, 0);
        }
        g_assert_cmpint(wait_no_workers(WAIT_MS), ==, 0);
        g_clear_pointer(&f, harness_fuse_free);
        /* With the budget free again, the user polkit allows is served. */
        assert_served(HARNESS_UID_ADMIN, images[1]);
        stop_daemon();
}

/*
 * Probe workers stuck on a hung device (or a caller's FUSE server: a read the server took
 * and never answers, which not even SIGKILL ends) after their requests timed out are
 * charged to their owner alone (docs/security.md class 45). umtest2's two subordinate
 * uids leave two such workers: umtest2's next request meets MaxWorkersPerUser=, while
 * umtestadm, whom nobody has authorized yet either, is not refused for the shared budget
 * of unauthorized requests (the finding: "running 8 workers for requests that polkit has
 * not authorized yet" for an uninvolved user, for as long as the server lived).
 */
static void test_unauthorized_stuck_workers(void) {
        const Batch plain = { "OpenMount", { images[1] } };
        g_autoptr(GHashTable) refused = NULL, later = NULL, other = NULL;
        g_autoptr(HarnessFuse) f = NULL;
        HarnessCaller *c[2];

        start_daemon("RequestTimeoutSec=2\nMaxWorkersPerUser=2\nMaxRequestsPerUser=8\n"
                     "MaxUnauthorizedRequests=2\n");
        assert_served(HARNESS_UID_USER1, images[0]);
        f = stall_two_unauthorized(c);
        for (unsigned i = 0; i < 2; i++) {
                g_autoptr(GHashTable) timed_out = finish_batch(c[i]);

                assert_result(timed_out, 0, ERROR_FAILED);
        }
        /* Killed, the workers still wait in their reads. */
        g_assert_cmpuint(harness_fuse_n_waiting(f), ==, 2);
        refused = run_batch(SUB2(2), &plain);
        assert_limit(refused, 0, "MaxWorkersPerUser");
        other = run_batch(HARNESS_UID_ADMIN, &plain);
        assert_result(other, 0, "ok");
        assert_served(HARNESS_UID_USER1, images[2]);

        /* Once the reads are answered the workers are gone, and so is the charge. */
        g_assert_cmpint(harness_fuse_abort(f), ==, 0);
        g_assert_cmpint(wait_no_workers(WAIT_MS), ==, 0);
        later = run_batch(SUB2(2), &plain);
        assert_not_authorized(later, 0);
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

/* ---- Item 27: killed workers and hung filesystems ------------------------------------ */

static void test_worker_killed(void) {
        g_autoptr(HarnessFuse) f = NULL;
        g_autoptr(GHashTable) t = NULL;
        g_autoptr(GArray) workers = NULL;
        HarnessCaller *c;

        start_daemon("");
        /* The probe reads the file directly and passes; the mount reads it through the loop
         * device and hangs: the build worker is caught mid-mount. */
        f = new_gated(HARNESS_FUSE_GATE_DEVICE);
        c = spawn_batch(HARNESS_UID_USER1, &(const Batch) { "OpenMount",
                                                            { harness_fuse_image_path(f) } });
        g_assert_cmpint(harness_fuse_wait_waiting(f, 1, WAIT_MS), ==, 0);
        g_assert_cmpint(harness_fuse_count_loop_devices(f), ==, 1);

        workers = daemon_workers();
        g_assert_cmpuint(workers->len, ==, 1);
        g_assert_cmpint(kill(g_array_index(workers, pid_t, 0), SIGKILL), ==, 0);
        /* The worker waits for its I/O uninterruptibly; the kill takes effect once the
         * device answers. */
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_OPEN);

        t = finish_batch(c);
        assert_result(t, 0, ERROR_FAILED);
        g_assert_cmpstr(report_get(t, "message0"), ==, "The mount worker was killed by signal 9.");
        g_assert_cmpint(wait_no_workers(WAIT_MS), ==, 0);
        g_assert_cmpint(wait_fuse_loops_gone(f), ==, 0);
        assert_served(HARNESS_UID_USER2, images[0]);
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

static void test_hung_filesystem(void) {
        g_autoptr(HarnessFuse) f = NULL;
        g_autoptr(GHashTable) t = NULL;
        HarnessCaller *c;
        int64_t start, elapsed_ms;

        start_daemon("RequestTimeoutSec=2\n");
        f = new_gated(HARNESS_FUSE_GATE_DEVICE);
        start = g_get_monotonic_time();
        c = spawn_batch(HARNESS_UID_USER1, &(const Batch) { "OpenMount",
                                                            { harness_fuse_image_path(f) } });
        g_assert_cmpint(harness_fuse_wait_waiting(f, 1, WAIT_MS), ==, 0);
        /* Served while the other request hangs (one OpenMount takes well under 2 s). */
        g_hash_table_unref(run_batch(HARNESS_UID_USER2,
                                     &(const Batch) { "OpenMount", { images[0] } }));
        g_assert_cmpuint(harness_fuse_n_waiting(f), >=, 1);

        t = finish_batch(c);
        elapsed_ms = (g_get_monotonic_time() - start) / 1000;
        g_test_message("the hung request was answered after %" G_GINT64_FORMAT " ms", elapsed_ms);
        assert_result(t, 0, ERROR_FAILED);
        if (!g_regex_match_simple("timed out|in time|did not answer within",
                                  strempty(report_get(t, "message0")), 0, 0))
                g_error("timeout message '%s' does not say so", report_get(t, "message0"));
        g_assert_cmpint(elapsed_ms, >=, 1500);
        g_assert_cmpint(elapsed_ms, <, 8000);

        /* The killed worker hangs in its I/O until the device goes away. */
        g_assert_cmpuint(harness_fuse_n_waiting(f), >=, 1);
        g_assert_cmpint(harness_fuse_abort(f), ==, 0);
        g_assert_cmpint(wait_no_workers(WAIT_MS), ==, 0);
        g_assert_cmpint(wait_fuse_loops_gone(f), ==, 0);
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

/* Opens the image, says so, waits for the test, then sends OpenMount with that fd. */
static int caller_open_then_call(void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_close_ int fd = -EBADF;
        sd_bus *bus = NULL;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        fd = open(userdata, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        harness_report("opened=1");
        g_assert_cmpint(harness_await_release(), ==, 0);
        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                               "OpenMount", &error, &reply, "hssa{sv}", fd, "", "", 0);
        calls_report_result(r, &error);
        sd_bus_flush_close_unref(bus);
        return 0;
}

/* A FUSE server that hangs in getattr and statfs (what fstat() and fstatfs() of the
 * caller's fd ask) must not stall the daemon: those run in the probe worker, which the
 * request timeout ends, while other users are served. */
static void test_hung_metadata(void) {
        g_autoptr(HarnessFuse) f = NULL;
        g_autoptr(HarnessCaller) c = NULL;
        g_autofree char *line = NULL, *output = NULL;
        g_autoptr(GHashTable) t = NULL;

        start_daemon("RequestTimeoutSec=2\n");
        f = new_gated(HARNESS_FUSE_GATE_OPEN);
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             caller_open_then_call,
                                             (void *) harness_fuse_image_path(f), &c), ==, 0);
        g_assert_cmpint(harness_caller_read_line(c, WAIT_MS, &line), ==, 0);
        g_assert_cmpstr(line, ==, "opened=1");
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_METADATA);
        g_assert_cmpint(harness_caller_release(c), ==, 0);
        g_assert_cmpint(harness_fuse_wait_waiting(f, 1, WAIT_MS), ==, 0);

        /* Served while the other request's worker hangs in the FUSE server. */
        {
                g_autoptr(GHashTable) other = run_batch(HARNESS_UID_USER2,
                                                        &(const Batch) { "OpenMount",
                                                                         { images[0] } });

                assert_result(other, 0, "ok");
        }
        g_assert_cmpuint(harness_fuse_n_waiting(f), >=, 1);

        g_assert_cmpint(harness_caller_wait(c, HARNESS_CALLER_TIMEOUT_MS, &output), ==, 0);
        t = calls_parse_report(output);
        g_assert_cmpstr(report_get(t, "result"), ==, ERROR_FAILED);
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_OPEN);
        g_assert_cmpint(wait_no_workers(WAIT_MS), ==, 0);
        g_clear_pointer(&f, harness_fuse_free);
        stop_daemon();
}

/* ---- Item 26: fds attached to messages ----------------------------------------------- */

typedef struct FdCall {
        const char *image;
        unsigned n_fds;    /* fds attached to the message */
        int32_t index;     /* the handle in the body */
} FdCall;

static int caller_fds(void *userdata) {
        const FdCall *fc = userdata;
        g_autoptr(GError) error = NULL;
        g_autoptr(GDBusConnection) bus = NULL;
        g_autoptr(GDBusMessage) call = NULL, reply = NULL;
        g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
        _cleanup_close_ int image = -EBADF, null = -EBADF;

        bus = harness_gdbus_connect(&error);
        g_assert_no_error(error);
        image = open(fc->image, O_RDONLY | O_CLOEXEC);
        null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(image, >=, 0);
        g_assert_cmpint(null, >=, 0);
        for (unsigned i = 0; i < fc->n_fds; i++) {
                g_unix_fd_list_append(fds, i == 0 ? image : null, &error);
                g_assert_no_error(error);
        }
        call = g_dbus_message_new_method_call(UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                              "OpenMount");
        g_dbus_message_set_body(call, g_variant_new("(hssa{sv})", fc->index, "", "", NULL));
        g_dbus_message_set_unix_fd_list(call, fds);
        reply = g_dbus_connection_send_message_with_reply_sync(bus, call,
                                                               G_DBUS_SEND_MESSAGE_FLAGS_NONE,
                                                               60000, NULL, NULL, &error);
        if (!reply) {
                harness_report("result=local:%s", error->message);
                return 0;
        }
        if (g_dbus_message_get_message_type(reply) == G_DBUS_MESSAGE_TYPE_ERROR) {
                GVariant *body = g_dbus_message_get_body(reply);
                const char *text = "";

                if (body && g_variant_is_of_type(body, G_VARIANT_TYPE("(s)")))
                        g_variant_get(body, "(&s)", &text);
                harness_report("result=%s", g_dbus_message_get_error_name(reply));
                harness_report("message=%s", text);
        } else
                harness_report("result=ok");
        harness_report("sender=%s", g_dbus_message_get_sender(reply));
        harness_report("reply-fds=%d", g_dbus_message_get_unix_fd_list(reply) ?
                       g_unix_fd_list_get_length(g_dbus_message_get_unix_fd_list(reply)) : 0);
        return 0;
}

static GHashTable *run_fds(const FdCall *fc) {
        g_autofree char *output = NULL;
        int status;

        status = harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, caller_fds, (void *) fc,
                                &output);
        g_test_message("caller output:\n%s", output ?: "");
        g_assert_cmpint(status, ==, 0);
        return calls_parse_report(output);
}

static void test_many_fds(void) {
        g_autoptr(GHashTable) most = NULL, more = NULL, hundreds = NULL;

        start_daemon("");
        /* The system bus's max_message_unix_fds is 16 (dbus-daemon's built-in limit for the
         * system bus; Debian's system.conf leaves it): 16 is the most that reaches the
         * daemon. It uses the one its arguments name and must close the other 15. */
        most = run_fds(&(const FdCall) { images[0], 16, 0 });
        g_assert_cmpstr(report_get(most, "result"), ==, "ok");
        g_assert_cmpstr(report_get(most, "reply-fds"), ==, "1");
        calls_assert_clean(daemon_pid, &baseline);

        /* More, up to the hundreds the kernel lets one sendmsg() carry (SCM_MAX_FD, 253):
         * the bus disconnects the sender, the daemon never sees the message. */
        more = run_fds(&(const FdCall) { images[0], 17, 0 });
        g_assert_cmpstr(report_get(more, "result"), ==, "local:The connection is closed");
        hundreds = run_fds(&(const FdCall) { images[0], 253, 0 });
        g_assert_cmpstr(report_get(hundreds, "result"), ==, "local:The connection is closed");
        calls_assert_clean(daemon_pid, &baseline);
        assert_served(HARNESS_UID_USER2, images[1]);
        stop_daemon();
}

/* The daemon (not the bus, which forwards it) answers with a clean error. */
static void test_fd_index_out_of_range(void) {
        g_autoptr(GHashTable) t = NULL;
        const char *result;

        start_daemon("");
        t = run_fds(&(const FdCall) { images[0], 1, 7 });
        result = report_get(t, "result");
        g_assert_nonnull(result);
        if (!streq(result, "org.freedesktop.DBus.Error.InconsistentMessage") &&
            !streq(result, "org.freedesktop.UserMount1.Error.InvalidArgument"))
                g_error("unexpected answer %s", result);
        g_assert_cmpstr(report_get(t, "sender"), !=, "org.freedesktop.DBus");
        g_assert_true(g_str_has_prefix(strempty(report_get(t, "sender")), ":"));
        g_assert_cmpstr(report_get(t, "reply-fds"), ==, "0");
        calls_assert_clean(daemon_pid, &baseline);
        assert_served(HARNESS_UID_USER2, images[1]);
        stop_daemon();
}

/* ---- Item 30: the CLI in a hostile environment --------------------------------------- */

typedef struct CliRun {
        const char *const *args; /* after "usermount" */
        bool hostile;
} CliRun;

static char *hostile_dir(void) {
        return g_build_filename(harness_tmpdir(), "hostile", NULL);
}

/* Planted programs and files the environment points at; markers go to <dir>/markers. */
static void plant_hostile(void) {
        static const char *const programs[] = { "pkttyagent", "mount", "umount", "fsck", "blkid",
                                                "losetup", "mkfs", "sh", "dbus-send" };
        g_autofree char *dir = hostile_dir();
        g_autofree char *bin = g_build_filename(dir, "bin", NULL);
        g_autofree char *markers = g_build_filename(dir, "markers", NULL);
        g_autofree char *lib = g_build_filename(dir, "lib", NULL);
        g_autofree char *fstab = g_build_filename(dir, "fstab", NULL);
        g_autofree char *fstab_text = g_strdup_printf("%s /run/media/umtest1/lim0 ext4 "
                                                      "suid,dev,exec,rw 0 0\n", images[0]);

        g_assert_cmpint(g_mkdir_with_parents(bin, 0755), ==, 0);
        g_assert_cmpint(g_mkdir_with_parents(lib, 0755), ==, 0);
        g_assert_cmpint(g_mkdir_with_parents(markers, 0755), ==, 0);
        g_assert_cmpint(chmod(markers, 01777), ==, 0);
        for (size_t i = 0; i < G_N_ELEMENTS(programs); i++) {
                g_autofree char *path = g_build_filename(bin, programs[i], NULL);
                g_autofree char *script = g_strdup_printf("#!/bin/sh\n: > '%s/%s-'$(id -u)\n"
                                                          "exit 0\n", markers, programs[i]);

                g_assert_true(g_file_set_contents(path, script, -1, NULL));
                g_assert_cmpint(chmod(path, 0755), ==, 0);
        }
        g_assert_true(g_file_set_contents(fstab, fstab_text, -1, NULL));
        g_assert_cmpint(chmod(fstab, 0644), ==, 0);
}

static int caller_cli(void *userdata) {
        const CliRun *run = userdata;
        g_autofree char *dir = hostile_dir();
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func(g_free);
        const char *cli = g_getenv("UM_USERMOUNT");
        pid_t pid;
        int status;

        g_ptr_array_add(argv, (char *) cli);
        for (size_t i = 0; run->args[i]; i++)
                g_ptr_array_add(argv, (char *) run->args[i]);
        g_ptr_array_add(argv, NULL);

        g_ptr_array_add(env, g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", harness_bus_address()));
        g_ptr_array_add(env, g_strdup("HOME=/"));
        g_ptr_array_add(env, g_strdup("USER=" HARNESS_USER1));
        /* In the sanitizer build the CLI carries ASan, which insists on coming first in the
         * list of libraries; the preloaded library would make it refuse to start. */
        g_ptr_array_add(env, g_strdup("ASAN_OPTIONS=verify_asan_link_order=0"));
        if (run->hostile) {
                g_ptr_array_add(env, g_strdup_printf("PATH=%s/bin", dir));
                g_ptr_array_add(env, g_strdup_printf("LD_PRELOAD=%s", g_getenv("UM_TEST_PRELOAD")));
                g_ptr_array_add(env, g_strdup_printf("LD_LIBRARY_PATH=%s/lib", dir));
                g_ptr_array_add(env, g_strdup_printf("UM_TEST_MARKER_DIR=%s/markers", dir));
                g_ptr_array_add(env, g_strdup_printf("LIBMOUNT_FSTAB=%s/fstab", dir));
                g_ptr_array_add(env, g_strdup_printf("LIBMOUNT_MTAB=%s/fstab", dir));
                g_ptr_array_add(env, g_strdup_printf("LIBMOUNT_UTAB=%s/utab", dir));
                g_ptr_array_add(env, g_strdup("LIBMOUNT_DEBUG=all"));
                g_ptr_array_add(env, g_strdup("LIBBLKID_DEBUG=all"));
                g_ptr_array_add(env, g_strdup_printf("BLKID_FILE=%s/blkid.tab", dir));
                g_ptr_array_add(env, g_strdup_printf("BLKID_CONF=%s/blkid.conf", dir));
                g_ptr_array_add(env, g_strdup("SHELL=/bin/false"));
                g_ptr_array_add(env, g_strdup("POLKIT_AGENT_HELPER=/bin/false"));
        } else
                g_ptr_array_add(env, g_strdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin"));
        g_ptr_array_add(env, NULL);

        pid = fork();
        if (pid == 0) {
                execve(cli, (char **) argv->pdata, (char **) env->pdata);
                _exit(127);
        }
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        harness_report("exit=%d", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        return 0;
}

static int run_cli(bool hostile, const char *const *args) {
        const CliRun run = { args, hostile };
        g_autoptr(GHashTable) t = NULL;
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, caller_cli,
                                       (void *) &run, &output), ==, 0);
        t = calls_parse_report(output);
        g_assert_nonnull(report_get(t, "exit"));
        return atoi(report_get(t, "exit"));
}

/* What is mounted at mp, from mountinfo, without what differs from mount to mount (ids,
 * peer groups, the loop device): "<root> <mount options> <fstype> <super options>". */
static char *mount_entry(const char *mp) {
        g_autofree char *info = NULL;
        g_auto(GStrv) lines = NULL;

        g_assert_true(g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL));
        lines = g_strsplit(info, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
                g_auto(GStrv) f = g_strsplit(lines[i], " ", -1);
                size_t n = g_strv_length(f), dash = 6;

                if (n < 10 || !streq(f[4], mp))
                        continue;
                while (dash < n && !streq(f[dash], "-"))
                        dash++;
                g_assert_cmpuint(dash + 3, <, n);
                return g_strdup_printf("%s %s %s %s", f[3], f[5], f[dash + 1], f[dash + 3]);
        }
        return NULL;
}

static void assert_no_root_markers(void) {
        g_autofree char *dir = hostile_dir();
        g_autofree char *markers = g_build_filename(dir, "markers", NULL);
        g_autoptr(GDir) d = g_dir_open(markers, 0, NULL);
        const char *name;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d))) {
                g_autofree char *path = g_build_filename(markers, name, NULL);
                struct stat st;

                g_test_message("marker %s", name);
                g_assert_cmpint(stat(path, &st), ==, 0);
                if (st.st_uid == 0 || g_str_has_suffix(name, "-0") || strstr(name, "-0-"))
                        g_error("%s was run by root", name);
        }
}

static void test_cli_hostile(void) {
        const char *const mount_args[] = { "mount", images[0], NULL };
        const char *const refused_args[] = { "mount", "-o", "suid", images[1], NULL };
        const char *const refused_type_args[] = { "mount", "-t", "xfs", images[1], NULL };
        const char *const unmount_args[] = { "unmount", "/run/media/" HARNESS_USER1 "/lim0", NULL };
        g_autofree char *clean = NULL, *hostile = NULL, *dir = hostile_dir();
        g_autofree char *preload_marker_glob = NULL;

        start_daemon("");
        plant_hostile();

        g_assert_cmpint(run_cli(false, mount_args), ==, 0);
        clean = mount_entry("/run/media/" HARNESS_USER1 "/lim0");
        g_assert_nonnull(clean);
        g_assert_cmpint(run_cli(false, unmount_args), ==, 0);
        g_assert_cmpint(harness_wait_snapshot(daemon_pid, &baseline, 20000), ==, 0);

        g_assert_cmpint(run_cli(true, mount_args), ==, 0);
        hostile = mount_entry("/run/media/" HARNESS_USER1 "/lim0");
        g_test_message("clean:   %s\nhostile: %s", clean, hostile);
        g_assert_cmpstr(hostile, ==, clean);
        g_assert_cmpint(run_cli(true, unmount_args), ==, 0);
        g_assert_cmpint(harness_wait_snapshot(daemon_pid, &baseline, 20000), ==, 0);

        /* Refusals are the same. */
        g_assert_cmpint(run_cli(true, refused_args), ==, run_cli(false, refused_args));
        g_assert_cmpint(run_cli(false, refused_args), ==, 4);
        g_assert_cmpint(run_cli(true, refused_type_args), ==, run_cli(false, refused_type_args));
        g_assert_cmpint(run_cli(false, refused_type_args), ==, 4);

        /* The preload did run, in the CLI as the user (so the environment was in effect);
         * nothing planted ever ran as root. */
        {
                g_autofree char *markers = g_build_filename(dir, "markers", NULL);
                g_autoptr(GDir) d = g_dir_open(markers, 0, NULL);
                const char *name;
                bool user_preload = false;

                while (d && (name = g_dir_read_name(d)))
                        if (g_str_has_prefix(name, "preload-61001-"))
                                user_preload = true;
                g_assert_true(user_preload);
        }
        assert_no_root_markers();
        stop_daemon();
}

/* ---- main ---------------------------------------------------------------------------- */

static void make_images(void) {
        for (unsigned i = 0; i <= N_IMAGES; i++) {
                g_autofree char *label = g_strdup_printf(i < N_IMAGES ? "lim%u" : "gated", i);
                const HarnessEntry entries[] = {
                        { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644, 0, 0 },
                        { 0 },
                };
                const HarnessImageSpec spec = { .label = label, .entries = entries };
                char **path = i < N_IMAGES ? &images[i] : &image_gated;

                g_assert_cmpint(harness_make_image("ext4", &spec, path), ==, 0);
                g_assert_cmpint(chmod(*path, 0666), ==, 0);
        }
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        make_images();
        add_sub_users();
        g_assert_cmpint(harness_set_rules(rules), ==, 0);

        g_test_add_func("/limits/requests/per-user-flood", test_flood_per_user);
        g_test_add_func("/limits/requests/global", test_flood_global);
        g_test_add_func("/limits/mounts/sequential", test_mounts);
        g_test_add_func("/limits/mounts/concurrent", test_mounts_concurrent);
        g_test_add_func("/limits/loop-devices", test_loop_devices);
        g_test_add_func("/limits/workers/per-user", test_workers_per_user);
        g_test_add_func("/limits/workers/one-per-user", test_workers_one_per_user);
        g_test_add_func("/limits/workers/global", test_workers_global);
        g_test_add_func("/limits/subuid/requests", test_subuid_requests);
        g_test_add_func("/limits/subuid/workers", test_subuid_workers);
        g_test_add_func("/limits/subuid/mounts-and-loops", test_subuid_mounts_and_loops);
        g_test_add_func("/limits/unauthorized/budget", test_unauthorized_budget);
        g_test_add_func("/limits/unauthorized/stuck-workers", test_unauthorized_stuck_workers);
        g_test_add_func("/faults/worker-killed", test_worker_killed);
        g_test_add_func("/faults/hung-filesystem", test_hung_filesystem);
        g_test_add_func("/faults/hung-metadata", test_hung_metadata);
        g_test_add_func("/faults/many-fds", test_many_fds);
        g_test_add_func("/faults/fd-index-out-of-range", test_fd_index_out_of_range);
        g_test_add_func("/faults/cli-hostile-environment", test_cli_hostile);

        r = g_test_run();
        if (daemon_pid > 0)
                harness_stop_daemon(daemon_pid, NULL);
        return r;
}
