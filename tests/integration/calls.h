/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared pieces of the integration tests' callers: calling the daemon from a forked,
 * unprivileged caller, reporting what came back as "key=value" lines
 * (harness_report()), and reading those reports in the test process.
 */
#pragma once

#include <glib.h>
#include <systemd/sd-bus.h>

/* polkit rules: every usermount action is allowed for umtest1, nothing said for others. */
#define CALLS_RULES_ALLOW_USER1                                                              \
        "polkit.addRule(function(action, subject) {\n"                                       \
        "        if (action.id.indexOf('org.freedesktop.usermount1.') == 0 &&\n"            \
        "            subject.user == 'umtest1')\n"                                           \
        "                return polkit.Result.YES;\n"                                        \
        "        return polkit.Result.NOT_HANDLED;\n"                                        \
        "});\n"

typedef struct Param {
        const char *key;
        const char *type; /* "s", "b" or "u" */
        const char *value;
} Param;

/* Appends a{sv} from params (terminated by key == NULL; NULL: empty). */
int calls_append_params(sd_bus_message *m, const Param *params);

/* In a caller: reports every key of an a{sv} info dict as "<prefix><key>=<value>"
 * (arrays comma-separated). */
void calls_report_info(sd_bus_message *reply, const char *prefix);

/* In a caller: reports the aa{sv} of a ListMounts reply, each mount's keys as
 * "entry<N>-<key>=<value>", then "count=<N>". */
void calls_report_mount_list(sd_bus_message *reply);

/* In a caller: reports "result=ok", or "result=<error name>" and "message=<text>".
 * Returns r. */
int calls_report_result(int r, const sd_bus_error *error);

/* "ok" for r >= 0, else the name of errno ("EPERM"). */
const char *calls_errno_name(int r);

/* In the test: the "key=value" lines of a caller's output as a table (later keys win). */
GHashTable *calls_parse_report(const char *output);

#define report_get(t, key) ((const char *) g_hash_table_lookup((t), (key)))

/* In the test: records usermountd's MountAdded and MountRemoved on harness_bus() from now
 * on; forgets what was recorded (call it before the action whose signal a test awaits:
 * mount points repeat from test to test); and waits (up to 20 s, processing that bus)
 * until "<member> <mount point>" was recorded, and takes it off the record. A test failure
 * if it never comes. */
void calls_watch_signals(void);
void calls_forget_signals(void);
/* Subscribe() on harness_bus() (root: every mount's signals); signals go to subscribers
 * only. calls_forget_signals() does it again, for a daemon started since. */
void calls_subscribe(void);
void calls_await_signal(const char *member, const char *mount_point);

/* In the test: the daemon still serves and nothing is left compared to the baseline. */
void calls_assert_clean(pid_t daemon_pid, const void *baseline_snapshot);
/* No uid claim (uidclaim.h) of a driver or image check is held in runtime_dir: each lock
 * file there (a driver's stays after it) can be locked. */
void calls_assert_no_uid_claims(const char *runtime_dir);

/* The real text of polkit/<file>, with the line that sets variable (the one an admin
 * edits) replaced by "var <variable> = <value_js>;" (owned). Fails the test unless there
 * is exactly one such line. */
char *calls_example_rule(const char *file, const char *variable, const char *value_js);

/*
 * A copy of image in a new directory under /var/tmp, owned by uid (mode 0666), for the
 * erofs images that are mounted from their files: the harness's images are on the
 * private /run, a tmpfs, whose files erofs cannot read that way (those get loop devices).
 * The copy and its directory are removed at exit. Returns the copy's path (owned).
 */
char *calls_disk_copy(const char *image, uid_t uid);

/* The default DriverUidRange= of usermount.conf. */
#define CALLS_DRIVER_UID_FIRST 1879048448u
#define CALLS_DRIVER_UID_COUNT 1024u

/* The real uid of process pid, from /proc; false when it is gone. */
bool calls_process_uid(pid_t pid, unsigned *ret_uid);

/* The userspace drivers running (not zombies): the processes whose uid is in the default
 * DriverUidRange=. Owned (g_array_unref). */
GArray *calls_running_drivers(void);

/* Waits (up to 10 s, or timeout_ms) until n drivers run; a test failure if they never
 * do. */
void calls_await_drivers(guint n);
void calls_await_drivers_for(guint n, int timeout_ms);

/* Loop devices bound to the file at path (by the path sysfs shows), in any process. */
int calls_count_loops_on(const char *path);
