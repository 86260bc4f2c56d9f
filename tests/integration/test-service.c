/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermountd as a service, through the real daemon on the private bus: the idle exit
 * (--idle-timeout) happens by itself with exit status 0 and the name gone, never while a
 * request is in flight (held at a FUSE gate) or a mount is registered; a restarted daemon
 * (after an idle exit or SIGTERM) serves the registry it left; and the sd_notify messages
 * (READY=1, STATUS=, RELOADING=1/MONOTONIC_USEC= and READY=1 around SIGHUP, STOPPING=1)
 * reach a $NOTIFY_SOCKET the test owns.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness-fuse.h"
#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

/* Longer than the idle timeout (1 s) plus the reconcile timer's period (2 s), which is
 * when a loop device that went away by itself is noticed. */
#define STAYS_MS 3500
#define EXIT_MS 20000

static char *image;

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (subject.user == 'umtest1')\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- Callers ------------------------------------------------------------------------- */

typedef enum CallKind {
        CALL_MOUNT_FD,
        CALL_UNMOUNT,
        CALL_LIST,
        CALL_LIST_ROUTED, /* ListMounts, reporting "routed=1" once the bus routed it */
        CALL_MOUNT_FD_ROUTED, /* MountFd, the same way */
} CallKind;

typedef struct Call {
        CallKind kind;
        const char *path; /* image for MountFd, mount point for Unmount */
        bool read_only;   /* MountFd: an O_RDONLY fd */
} Call;

static int on_list_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        int *done = userdata;

        calls_report_result(sd_bus_message_is_method_error(reply, NULL) ? -EIO : 0,
                            sd_bus_message_get_error(reply));
        *done = 1;
        return 0;
}

/*
 * Sends ListMounts, then makes a round trip to the bus daemon on the same connection: the
 * bus handles a connection's messages in order, so once GetId is answered the call has
 * been routed to whoever owned the name at that moment.
 */
static int call_routed(const char *image_path) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_close_ int fd = -EBADF;
        sd_bus *bus = NULL;
        int done = 0;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE,
                                                       image_path ? "MountFd" : "ListMounts"),
                        >=, 0);
        if (image_path) {
                fd = open(image_path, O_RDWR | O_CLOEXEC);
                g_assert_cmpint(fd, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", fd, "", ""), >=, 0);
        }
        g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
        g_assert_cmpint(sd_bus_call_async(bus, &slot, call, on_list_reply, &done,
                                          60 * G_USEC_PER_SEC), >=, 0);
        g_assert_cmpint(sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                           "org.freedesktop.DBus", "GetId", NULL, NULL, ""), >=, 0);
        harness_report("routed=1");
        while (!done) {
                g_assert_cmpint(sd_bus_process(bus, NULL), >=, 0);
                if (!done)
                        g_assert_cmpint(sd_bus_wait(bus, UINT64_MAX), >=, 0);
        }
        slot = sd_bus_slot_unref(slot);
        sd_bus_flush_close_unref(bus);
        return 0;
}

static int caller(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int fd = -EBADF;
        sd_bus *bus = NULL;
        int r;

        if (c->kind == CALL_LIST_ROUTED || c->kind == CALL_MOUNT_FD_ROUTED)
                return call_routed(c->kind == CALL_MOUNT_FD_ROUTED ? c->path : NULL);
        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE,
                                                       c->kind == CALL_MOUNT_FD ? "MountFd" :
                                                       c->kind == CALL_UNMOUNT ? "Unmount" :
                                                       "ListMounts"), >=, 0);
        switch (c->kind) {
        case CALL_MOUNT_FD:
                fd = open(c->path, (c->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
                g_assert_cmpint(fd, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", fd, "", ""), >=, 0);
                break;
        case CALL_UNMOUNT:
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
                break;
        case CALL_LIST:
        case CALL_LIST_ROUTED:
        case CALL_MOUNT_FD_ROUTED:
                break;
        }
        g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
        harness_report("sent=1");
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0) {
                if (c->kind == CALL_MOUNT_FD) {
                        const char *mp;

                        g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                        harness_report("mount-point=%s", mp);
                } else if (c->kind == CALL_LIST)
                        calls_report_mount_list(reply);
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

static char *mount_as_user1(const char *path) {
        const Call c = { CALL_MOUNT_FD, path };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_nonnull(report_get(t, "mount-point"));
        return g_strdup(report_get(t, "mount-point"));
}

static void unmount_as_user1(const char *mount_point) {
        const Call c = { CALL_UNMOUNT, mount_point };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
}

/* ---- The daemon's life ------------------------------------------------------------------ */

static pid_t start_daemon(const char *idle_timeout) {
        g_autofree char *arg = idle_timeout ? g_strdup_printf("--idle-timeout=%s", idle_timeout) : NULL;
        const char *const args[] = { arg, NULL };
        pid_t pid;

        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), args, &pid), ==, 0);
        return pid;
}

/* true if pid exited within timeout_ms (it stays a zombie until harness_stop_daemon()). */
static bool exits_within(pid_t pid, int timeout_ms) {
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int r;

        g_assert_cmpint(pidfd, >=, 0);
        do
                r = poll(&p, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        g_assert_cmpint(r, >=, 0);
        return r > 0;
}

/* Reaps a daemon that exited by itself and checks that it exited with 0. */
static void assert_exited_cleanly(pid_t pid) {
        int status = -1;

        g_assert_cmpint(harness_stop_daemon(pid, &status), ==, 0);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

static bool name_has_owner(void) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int has = -1;

        g_assert_cmpint(sd_bus_call_method(harness_bus(), "org.freedesktop.DBus",
                                           "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                           "NameHasOwner", &error, &reply, "s", UM_BUS_NAME), >=, 0);
        g_assert_cmpint(sd_bus_message_read(reply, "b", &has), >, 0);
        return has;
}

static unsigned list_count(void) {
        const Call c = { CALL_LIST };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        return (unsigned) g_ascii_strtoull(report_get(t, "count"), NULL, 10);
}

/* ---- Tests ----------------------------------------------------------------------------- */

/* Nothing to do: it goes, with 0, and its name with it; the next start serves again. */
static void test_idle_exit(void) {
        pid_t pid = start_daemon("1");

        g_assert_true(exits_within(pid, EXIT_MS));
        assert_exited_cleanly(pid);
        g_assert_false(name_has_owner());

        pid = start_daemon("1");
        g_assert_cmpuint(list_count(), ==, 0);
        g_assert_true(exits_within(pid, EXIT_MS));
        assert_exited_cleanly(pid);
}

/* Whether pid is gone (or a zombie nobody reaped yet: dead all the same). */
static bool process_dead(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid);
        g_autofree char *stat = NULL;
        const char *p;

        if (!g_file_get_contents(path, &stat, NULL, NULL))
                return true;
        p = strrchr(stat, ')');
        return p && p[1] == ' ' && p[2] == 'Z';
}

/* Ready workers are no work: a daemon with its pool full still goes when idle, and takes
 * them with it. */
static void test_idle_exit_with_ready_workers(void) {
        pid_t pid = start_daemon("1");
        g_autoptr(GArray) ready = NULL;

        /* The pool is full before the daemon takes its name (daemon/workerpool.c). */
        ready = harness_children(pid, WORKER_NAME_READY, NULL);
        for (int i = 0; i < 200 && ready->len < 2; i++) {
                g_usleep(10 * 1000);
                g_clear_pointer(&ready, g_array_unref);
                ready = harness_children(pid, WORKER_NAME_READY, NULL);
        }
        g_assert_cmpuint(ready->len, ==, 2);
        g_assert_true(exits_within(pid, EXIT_MS));
        for (guint i = 0; i < ready->len; i++) {
                pid_t w = g_array_index(ready, pid_t, i);

                for (int k = 0; k < 200 && !process_dead(w); k++)
                        g_usleep(10 * 1000);
                g_assert_true(process_dead(w));
        }
        assert_exited_cleanly(pid);
}

/* --worker-pool=0: every request starts its own worker, and is served all the same. */
static void test_no_worker_pool(void) {
        const char *const args[] = { "--worker-pool=0", NULL };
        g_autoptr(GArray) ready = NULL;
        g_autofree char *mp = NULL;
        pid_t pid;

        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), args, &pid), ==, 0);
        ready = harness_children(pid, WORKER_NAME_READY, NULL);
        g_assert_cmpuint(ready->len, ==, 0);
        g_assert_cmpuint(list_count(), ==, 0);
        mp = mount_as_user1(image);
        g_assert_cmpuint(list_count(), ==, 1);
        unmount_as_user1(mp);
        g_assert_cmpuint(list_count(), ==, 0);
        g_assert_cmpint(harness_stop_daemon(pid, NULL), >=, 0);
}

/* Without --idle-timeout (and with 0) it never goes by itself. */
static void test_no_idle_timeout(void) {
        pid_t pid = start_daemon(NULL), pid0;

        g_assert_false(exits_within(pid, STAYS_MS));
        g_assert_cmpint(harness_stop_daemon(pid, NULL), ==, 0);
        pid0 = start_daemon("0");
        g_assert_false(exits_within(pid0, STAYS_MS));
        g_assert_cmpint(harness_stop_daemon(pid0, NULL), ==, 0);
}

/* A request held at a FUSE gate keeps it; so does the mount it makes; the unmount lets it go. */
static void test_busy_stays(void) {
        g_autoptr(HarnessFuse) f = NULL;
        g_autoptr(HarnessCaller) c = NULL;
        g_autofree char *output = NULL, *line = NULL;
        g_autoptr(GHashTable) t = NULL;
        pid_t pid = start_daemon("1");
        const Call call = { CALL_MOUNT_FD, NULL };
        Call held;

        g_assert_cmpint(harness_fuse_new(image, &f), ==, 0);
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_ALL);
        held = call;
        held.path = harness_fuse_image_path(f);
        /* ext4 on FUSE is mounted read-only only (its server could change the superblock
         * between the daemon's check and the kernel's read). */
        held.read_only = true;
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_UID_USER1, 0, caller,
                                             &held, &c), ==, 0);
        g_assert_cmpint(harness_caller_read_line(c, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_cmpstr(line, ==, "sent=1");
        g_assert_cmpint(harness_fuse_wait_waiting(f, 1, HARNESS_TIMEOUT_MS), ==, 0);

        /* The probe worker hangs in its first read: a request and a worker in flight. */
        g_assert_false(exits_within(pid, STAYS_MS));

        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_OPEN);
        g_assert_cmpint(harness_caller_wait(c, HARNESS_CALLER_TIMEOUT_MS, &output), ==, 0);
        t = calls_parse_report(output);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_nonnull(report_get(t, "mount-point"));

        /* The mount is registered: its device must be watched. */
        g_assert_false(exits_within(pid, STAYS_MS));
        g_assert_true(name_has_owner());

        unmount_as_user1(report_get(t, "mount-point"));
        g_assert_true(exits_within(pid, EXIT_MS));
        assert_exited_cleanly(pid);
        g_assert_false(name_has_owner());
}

/* SIGTERM with a mount registered: the next daemon lists it, keeps watching it, and goes
 * once it is unmounted. */
static void test_restart_keeps_registry(void) {
        g_autofree char *mp = NULL;
        const Call list = { CALL_LIST };
        g_autoptr(GHashTable) t = NULL;
        pid_t pid = start_daemon("1");

        mp = mount_as_user1(image);
        g_assert_cmpint(harness_stop_daemon(pid, NULL), ==, 0);
        g_assert_false(name_has_owner());

        pid = start_daemon("1");
        t = call_as(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(t, "count"), ==, "1");
        g_assert_cmpstr(report_get(t, "entry0-mount-point"), ==, mp);
        g_assert_cmpstr(report_get(t, "entry0-owner-uid"), ==, "61001");
        g_assert_false(exits_within(pid, STAYS_MS));

        unmount_as_user1(mp);
        g_assert_true(exits_within(pid, EXIT_MS));
        assert_exited_cleanly(pid);

        pid = start_daemon("1");
        g_assert_cmpuint(list_count(), ==, 0);
        g_assert_cmpint(harness_stop_daemon(pid, NULL), ==, 0);
}

/*
 * Sends c while the daemon is decided to exit: the daemon is stopped past its idle
 * deadline, c is routed to it, and it is let go on; the expired timer goes first, so the
 * daemon releases its name with the call queued. Returns the caller's report, once the
 * daemon exited cleanly without its name.
 */
static GHashTable *call_at_idle_exit(const Call *c) {
        g_autoptr(HarnessCaller) caller_handle = NULL;
        g_autofree char *line = NULL, *output = NULL;
        pid_t pid = start_daemon("1");

        g_assert_cmpint(kill(pid, SIGSTOP), ==, 0);
        /* Time has to pass here, with nothing to wait for: the idle deadline (1 s) expires
         * while the daemon cannot act on it. */
        g_usleep(1500 * 1000);
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_UID_USER1, 0, caller,
                                             (void *) c, &caller_handle), ==, 0);
        g_assert_cmpint(harness_caller_read_line(caller_handle, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_cmpstr(line, ==, "routed=1");
        g_assert_cmpint(kill(pid, SIGCONT), ==, 0);

        g_assert_cmpint(harness_caller_wait(caller_handle, HARNESS_CALLER_TIMEOUT_MS, &output), ==,
                        0);
        g_assert_true(exits_within(pid, EXIT_MS));
        assert_exited_cleanly(pid);
        g_assert_false(name_has_owner());
        return calls_parse_report(output);
}

/* A call that reaches the daemon as it decides to exit is served, not lost (after asking
 * polkit: still in flight after the release), and the daemon exits after it. */
static void test_call_at_exit(void) {
        const Call list = { CALL_LIST_ROUTED };
        g_autoptr(GHashTable) t = call_at_idle_exit(&list);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
}

/*
 * A mount call that reaches the daemon as it exits is refused with a request to send it
 * again, and leaves nothing: a mount made by a process that is about to be gone, without
 * its bus name, would be watched by nobody. The next call activates a new daemon.
 */
static void test_mount_at_exit(void) {
        const Call mount = { CALL_MOUNT_FD_ROUTED, image };
        g_autoptr(GHashTable) t = call_at_idle_exit(&mount);

        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_FAILED);
        g_assert_nonnull(strstr(strempty(report_get(t, "message")), "send it again"));
        g_assert_cmpint(harness_count_loop_devices(), ==, 0);
}

/* ---- sd_notify ------------------------------------------------------------------------- */

typedef struct Notify {
        int fd;
        char *path;
} Notify;

/* A datagram socket in the harness's directory, and $NOTIFY_SOCKET naming it for the
 * next daemon started (and only that one). */
static Notify notify_open(void) {
        Notify n = { .fd = -EBADF };

        n.path = g_build_filename(harness_tmpdir(), "notify", NULL);
        n.fd = harness_dgram_listen(n.path);
        g_assert_true(g_setenv("NOTIFY_SOCKET", n.path, TRUE));
        return n;
}

static void notify_close(Notify *n) {
        g_unsetenv("NOTIFY_SOCKET");
        safe_close(n->fd);
        (void) unlink(n->path);
        g_free(n->path);
}

static char *notify_next(Notify *n) {
        return harness_dgram_next(n->fd);
}

static void notify_expect(Notify *n, const char *want) {
        g_autofree char *have = notify_next(n);

        g_assert_cmpstr(have, ==, want);
}

static bool notify_pending(Notify *n) {
        struct pollfd p = { .fd = n->fd, .events = POLLIN };

        return poll(&p, 1, 0) == 1;
}

static void test_notify(void) {
        Notify n = notify_open();
        g_autofree char *mp = NULL, *reloading = NULL;
        unsigned long long usec = 0;
        pid_t pid = start_daemon(NULL);

        g_unsetenv("NOTIFY_SOCKET");
        notify_expect(&n, "READY=1");
        notify_expect(&n, "STATUS=Serving 0 requests, 0 mounts");

        /* A status per change of the counts: the request, then the mount it made. */
        mp = mount_as_user1(image);
        notify_expect(&n, "STATUS=Serving 1 request, 0 mounts");
        notify_expect(&n, "STATUS=Serving 0 requests, 1 mount");

        /* Events that change no count say nothing: root's ListMounts is answered at once,
         * without a request living past the event. */
        g_assert_cmpint(sd_bus_call_method(harness_bus(), UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, "ListMounts", NULL, NULL,
                                           "a{sv}", 0), >=, 0);
        g_assert_false(notify_pending(&n));

        g_assert_cmpint(kill(pid, SIGHUP), ==, 0);
        reloading = notify_next(&n);
        g_assert_true(g_str_has_prefix(reloading, "RELOADING=1\nMONOTONIC_USEC="));
        g_assert_cmpint(sscanf(reloading, "RELOADING=1\nMONOTONIC_USEC=%llu", &usec), ==, 1);
        g_assert_cmpuint(usec, >, 0);
        g_assert_cmpuint(usec, <=, (unsigned long long) g_get_monotonic_time());
        notify_expect(&n, "READY=1\nSTATUS=Serving 0 requests, 1 mount");

        unmount_as_user1(mp);
        notify_expect(&n, "STATUS=Serving 1 request, 1 mount");
        notify_expect(&n, "STATUS=Serving 0 requests, 0 mounts");

        g_assert_cmpint(harness_stop_daemon(pid, NULL), ==, 0);
        notify_expect(&n, "STOPPING=1\nSTATUS=Stopping");
        g_assert_false(notify_pending(&n));
        notify_close(&n);
}

/* The idle exit says STOPPING=1 before it goes. */
static void test_notify_idle_exit(void) {
        Notify n = notify_open();
        pid_t pid = start_daemon("1");

        g_unsetenv("NOTIFY_SOCKET");
        notify_expect(&n, "READY=1");
        notify_expect(&n, "STATUS=Serving 0 requests, 0 mounts");
        g_assert_true(exits_within(pid, EXIT_MS));
        notify_expect(&n, "STOPPING=1\nSTATUS=Stopping");
        assert_exited_cleanly(pid);
        g_assert_false(notify_pending(&n));
        notify_close(&n);
}

/* ---- The journal ------------------------------------------------------------------------ */

/*
 * No journald runs here, but the journal's socket is just a datagram socket at a fixed
 * path, and /run is the harness's own tmpfs: the test plays journald and reads the native
 * protocol entries (one "NAME=value" line per field, for values without newlines).
 */
static void test_journal_fields(void) {
        const char *socket_path = "/run/systemd/journal/socket";
        const char *const args[] = { "--log-target=journal", NULL };
        g_autofree char *mp = NULL, *entry = NULL, *want_mp = NULL;
        _cleanup_close_ int fd = harness_dgram_listen(socket_path);
        pid_t pid;


        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), args, &pid), ==, 0);
        mp = mount_as_user1(image);
        want_mp = g_strdup_printf("\nUSERMOUNT_MOUNT_POINT=%s\n", mp);
        /* Entries come in order; the mount's is the one with its action. */
        for (;;) {
                g_free(entry);
                entry = harness_dgram_next(fd);
                if (strstr(entry, "\nUSERMOUNT_ACTION=mount\n"))
                        break;
        }
        g_assert_true(g_str_has_prefix(entry, "MESSAGE=Mounted "));
        g_assert_nonnull(strstr(entry, "\nPRIORITY=6\n"));
        g_assert_nonnull(strstr(entry, "\nSYSLOG_IDENTIFIER=usermountd\n"));
        g_assert_nonnull(strstr(entry, "\nCODE_FUNC=on_attach_done\n"));
        /* The place that logged, once: not also where log.c hands the entry on. */
        g_assert_cmpuint(harness_count_substrings(entry, "\nCODE_FILE="), ==, 1);
        g_assert_cmpuint(harness_count_substrings(entry, "\nCODE_LINE="), ==, 1);
        g_assert_cmpuint(harness_count_substrings(entry, "\nCODE_FUNC="), ==, 1);
        g_assert_nonnull(strstr(entry, "daemon/pipeline.c\n"));
        g_assert_nonnull(strstr(entry, "\nUSERMOUNT_UID=61001\n"));
        g_assert_nonnull(strstr(entry, "\nUSERMOUNT_DEVICE=/dev/loop"));
        g_assert_nonnull(strstr(entry, "\nUSERMOUNT_FSTYPE=ext4\n"));
        g_assert_nonnull(strstr(entry, want_mp));

        unmount_as_user1(mp);
        for (;;) {
                g_free(entry);
                entry = harness_dgram_next(fd);
                if (strstr(entry, "\nUSERMOUNT_ACTION=unmount\n"))
                        break;
        }
        g_assert_nonnull(strstr(entry, "\nUSERMOUNT_UID=61001\n"));
        g_assert_nonnull(strstr(entry, want_mp));
        g_assert_cmpint(harness_stop_daemon(pid, NULL), ==, 0);
        g_assert_cmpint(unlink(socket_path), ==, 0);
}

/* A pool size out of range or not a number: a usage error (2) that says what it takes. */
static void test_worker_pool_option_refused(void) {
        static const char *const bad[] = { "", "-1", "65", "1.5", "x", "99999999999999999999" };

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autofree char *arg = g_strdup_printf("--worker-pool=%s", bad[i]);
                g_autofree char *out = NULL, *err = NULL;
                const char *argv[] = { harness_daemon_path(), arg, NULL };
                int status = 0;

                g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL,
                                           NULL, &out, &err, &status, NULL));
                g_assert_true(WIFEXITED(status));
                g_assert_cmpint(WEXITSTATUS(status), ==, 2);
                g_assert_nonnull(strstr(err, "--worker-pool takes a number of workers, 0 to 64"));
        }
}

/* Durations out of range or not whole seconds: a usage error (2) that names the option, and
 * nothing started. */
static void test_duration_options_refused(void) {
        static const char *const bad[] = { "", "-1", "1.5", "2s", "86401", "99999999999999999999",
                                           " 2" };
        static const char *const options[] = { "--idle-timeout", "--watch-interval" };

        for (size_t o = 0; o < G_N_ELEMENTS(options); o++)
                for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                        g_autofree char *arg = g_strdup_printf("%s=%s", options[o], bad[i]);
                        g_autofree char *out = NULL, *err = NULL;
                        g_autofree char *want = g_strdup_printf("%s takes whole seconds, 0 to "
                                                                "86400", options[o]);
                        const char *argv[] = { harness_daemon_path(), arg, NULL };
                        int status = 0;

                        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL,
                                                   G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                                                   &status, NULL));
                        g_assert_true(WIFEXITED(status));
                        g_assert_cmpint(WEXITSTATUS(status), ==, 2);
                        g_assert_nonnull(strstr(err, want));
                }
}

/* A second instance while one owns the name: it says so and exits 1, and the first one
 * goes on serving. */
static void test_name_taken(void) {
        g_autofree char *dir = g_build_filename(harness_tmpdir(), "second-instance", NULL);
        g_autofree char *arg = g_strdup_printf("--runtime-dir=%s", dir);
        g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
        g_autofree char *out = NULL, *err = NULL;
        const char *argv[] = { harness_daemon_path(), arg, NULL };
        int status = 0;
        pid_t pid;

        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &pid), ==, 0);
        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                                   &out, &err, &status, NULL));
        g_test_message("second instance:\n%s", err);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 1);
        g_assert_nonnull(strstr(err, "Failed to acquire " UM_BUS_NAME " on the system bus: "
                                     "another process owns it."));
        g_assert_null(strstr(err, "ready on the system bus"));
        g_assert_true(name_has_owner());
        g_assert_cmpuint(list_count(), ==, 0);
        g_assert_cmpint(harness_stop_daemon(pid, NULL), ==, 0);
        g_assert_cmpint(system(rm), ==, 0);
}

int main(int argc, char *argv[]) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644 }, {} };
        const HarnessImageSpec spec = { .label = "svc", .entries = entries };

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chmod(image, 0666), ==, 0);

        g_test_add_func("/service/idle-exit", test_idle_exit);
        g_test_add_func("/service/idle-exit-with-ready-workers", test_idle_exit_with_ready_workers);
        g_test_add_func("/service/no-worker-pool", test_no_worker_pool);
        g_test_add_func("/service/worker-pool-option-refused", test_worker_pool_option_refused);
        g_test_add_func("/service/no-idle-timeout", test_no_idle_timeout);
        g_test_add_func("/service/busy-stays", test_busy_stays);
        g_test_add_func("/service/restart-keeps-registry", test_restart_keeps_registry);
        g_test_add_func("/service/call-at-exit", test_call_at_exit);
        g_test_add_func("/service/mount-at-exit", test_mount_at_exit);
        g_test_add_func("/service/notify", test_notify);
        g_test_add_func("/service/notify-idle-exit", test_notify_idle_exit);
        g_test_add_func("/service/journal-fields", test_journal_fields);
        g_test_add_func("/service/duration-options-refused", test_duration_options_refused);
        g_test_add_func("/service/name-taken", test_name_taken);
        return g_test_run();
}
