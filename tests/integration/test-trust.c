/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an administrator can trust in what the daemon reports, end to end with the real
 * daemon, polkitd and unprivileged callers.
 *
 * polkit details: "device" is, for a file descriptor the caller passed, the path of the
 * open file in the caller's mount namespace; a caller in a user namespace of its own
 * binds a file of its own over another path and "device" names that path. The facts
 * "image-owner-uid", "image-inode" and "device-number" come from the open file or device
 * itself. The shipped 50-usermount-own-images.rules decides on the owner.
 *
 * The log: a target path (valid UTF-8 without C0 controls, or the bus edge refuses it) can
 * hold C1 controls and bidi overrides, and a label anything; the daemon's log (here its
 * stderr, the stream journald parses) must show them escaped, never as they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

/* U+202E RIGHT-TO-LEFT OVERRIDE and U+0085 NEXT LINE (a C1 control), as UTF-8. */
#define RLO "\xe2\x80\xae"
#define NEL "\xc2\x85"
#define RLO_ESCAPED "\\xe2\\x80\\xae"
#define NEL_ESCAPED "\\xc2\\x85"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *log_path;   /* the daemon's stderr */
static char *image_own;  /* ext4, owned by umtest1 */
static char *image_root; /* ext4, owned by root, readable by all */
static char *image_bidi; /* ext4 whose label holds RLO */

/* ---- Callers --------------------------------------------------------------------------- */

typedef struct Call {
        const char *method;  /* "MountFd", "OpenMount", "Mount" or "Unmount" */
        const char *path;    /* the file opened for MountFd/OpenMount; Mount's device; Unmount's
                              * mount point */
        const char *target;  /* params["target"], NULL: none */
        const char *idmap;   /* params["idmap"], NULL: none */
        const char *bind;    /* in_userns: bound over path before it is opened */
        bool in_userns;
} Call;

static int caller(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int fd = -EBADF;
        Param params[3] = {};
        size_t n = 0;
        const char *mp;
        int r;

        if (c->bind)
                g_assert_cmpint(mount(c->bind, c->path, NULL, MS_BIND, NULL), ==, 0);
        if (c->target)
                params[n++] = (Param) { "target", "s", c->target };
        if (c->idmap)
                params[n++] = (Param) { "idmap", "s", c->idmap };
        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, c->method), >=, 0);
        if (streq(c->method, "Unmount"))
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
        else if (streq(c->method, "Mount"))
                g_assert_cmpint(sd_bus_message_append(call, "sss", c->path, "", ""), >=, 0);
        else {
                fd = open(c->path, O_RDONLY | O_CLOEXEC);
                g_assert_cmpint(fd, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", fd, "", ""), >=, 0);
        }
        g_assert_cmpint(calls_append_params(call, n > 0 ? params : NULL), >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0 &&
            (streq(c->method, "MountFd") || streq(c->method, "Mount")) &&
            sd_bus_message_read(reply, "s", &mp) > 0)
                harness_report("mount-point=%s", mp);
        return 0;
}

static GHashTable *expect_call(uid_t uid, const Call *c, const char *result) {
        g_autofree char *output = NULL;
        GHashTable *t;

        g_assert_cmpint(harness_run_as(uid, uid, c->in_userns ? HARNESS_NEW_USERNS : 0, caller,
                                       (void *) c, &output), ==, 0);
        g_test_message("caller %u output:\n%s", (unsigned) uid, output ?: "");
        t = calls_parse_report(output);
        g_assert_cmpstr(report_get(t, "result"), ==, result);
        return t;
}

static void unmount_own(uid_t uid, const char *mount_point) {
        const Call u = { .method = "Unmount", .path = mount_point };
        g_autoptr(GHashTable) t = expect_call(uid, &u, "ok");
}

static void assert_clean(void) {
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- polkit ---------------------------------------------------------------------------- */

static char *inode_of(const char *path) {
        struct stat st;

        g_assert_cmpint(stat(path, &st), ==, 0);
        return g_strdup_printf("%u:%u:%llu", major(st.st_dev), minor(st.st_dev),
                               (unsigned long long) st.st_ino);
}

/* 50-usermount-own-images.rules: the owner of the image decides, whatever its path. */
static void test_own_images(void) {
        g_autofree char *rule = calls_example_rule("50-usermount-own-images.rules", "GROUP",
                                                  "\"" HARNESS_USER1 "\"");
        const Call own = { .method = "MountFd", .path = image_own };
        const Call roots = { .method = "MountFd", .path = image_root };

        g_assert_cmpint(harness_set_rules(rule), ==, 0);
        g_autoptr(GHashTable) t = expect_call(HARNESS_UID_USER1, &own, "ok");
        unmount_own(HARNESS_UID_USER1, report_get(t, "mount-point"));
        /* Readable, but root's: the action's defaults (an administrator's password). */
        g_autoptr(GHashTable) t2 = expect_call(HARNESS_UID_USER1, &roots,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        /* umtest2 owns neither and is not in the group. */
        g_autoptr(GHashTable) t3 = expect_call(HARNESS_UID_USER2, &own,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        assert_clean();
}

/*
 * A caller in a user + mount namespace of its own binds its image over root's path and
 * passes that: "device" names root's image, the facts name the caller's. The rule answers
 * YES only when that is exactly what it is told.
 */
static void test_device_is_the_callers_path(void) {
        g_autofree char *own_inode = inode_of(image_own), *root_inode = inode_of(image_root);
        g_autofree char *rule = g_strdup_printf(
                "polkit.addRule(function(action, subject) {\n"
                "        if (action.id != \"" UM_ACTION_MOUNT_IMAGE "\")\n"
                "                return polkit.Result.NOT_HANDLED;\n"
                "        var want = { \"device\": \"%s\", \"image-owner-uid\": \"%u\",\n"
                "                     \"image-inode\": \"%s\" };\n"
                "        for (var k in want)\n"
                "                if (action.lookup(k) !== want[k]) {\n"
                "                        polkit.log(\"test-trust: \" + k + \" is \" +\n"
                "                                   action.lookup(k));\n"
                "                        return polkit.Result.NO;\n"
                "                }\n"
                "        return polkit.Result.YES;\n"
                "});\n",
                image_root, (unsigned) HARNESS_UID_USER1, own_inode);
        const Call c = { .method = "OpenMount", .path = image_root, .bind = image_own,
                         .idmap = "namespace", .in_userns = true };

        g_assert_cmpstr(own_inode, !=, root_inode);
        g_assert_cmpint(harness_set_rules(rule), ==, 0);
        g_autoptr(GHashTable) t = expect_call(HARNESS_UID_USER1, &c, "ok");
        assert_clean();
}

/* device-number: the block device's own number, for Mount by path; device-seat: seat0
 * for a disk udev puts on no seat. */
static void test_device_number(void) {
        g_autofree char *zram = NULL, *rule = NULL, *cmd = NULL;
        g_autofree char *dir = g_build_filename(harness_tmpdir(), "trust-zram", NULL);
        struct stat st;
        int r;

        r = harness_zram_new("64M", &zram);
        if (r == -ENODEV) {
                g_test_skip("no zram in this kernel");
                return;
        }
        g_assert_cmpint(r, ==, 0);
        cmd = g_strdup_printf("mkfs.ext4 -q %s >&2", zram);
        g_assert_cmpint(system(cmd), ==, 0);
        g_assert_cmpint(stat(zram, &st), ==, 0);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        rule = g_strdup_printf(
                "polkit.addRule(function(action, subject) {\n"
                "        if (action.id == \"" UM_ACTION_MOUNT_SYSTEM "\" &&\n"
                "            action.lookup(\"device-number\") === \"%u:%u\" &&\n"
                "            action.lookup(\"device-seat\") === \"seat0\" &&\n"
                "            action.lookup(\"image-owner-uid\") === undefined)\n"
                "                return polkit.Result.YES;\n"
                "        return polkit.Result.NO;\n"
                "});\n",
                major(st.st_rdev), minor(st.st_rdev));
        g_assert_cmpint(harness_set_rules(rule), ==, 0);
        {
                const Call c = { .method = "Mount", .path = zram, .target = dir };
                g_autoptr(GHashTable) t = expect_call(HARNESS_UID_USER1, &c, "ok");

                unmount_own(HARNESS_UID_USER1, dir);
        }
        assert_clean();
        g_assert_cmpint(harness_zram_free(zram), ==, 0);
}

/* ---- The log --------------------------------------------------------------------------- */

/* Waits until the daemon's log holds needle; returns the whole log. */
static char *await_log(const char *needle) {
        gint64 end = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;

        for (;;) {
                g_autofree char *text = NULL;

                g_assert_true(g_file_get_contents(log_path, &text, NULL, NULL));
                if (strstr(text, needle))
                        return TAKE_PTR(text);
                if (g_get_monotonic_time() > end)
                        g_error("the daemon's log never showed \"%s\":\n%s", needle, text);
                g_usleep(20 * 1000);
        }
}

static void test_log_escaped(void) {
        g_autofree char *parent = g_build_filename(harness_tmpdir(), "trust-log", NULL);
        g_autofree char *dir = g_build_filename(parent, "a" RLO "txt.exe" NEL "b", NULL);
        g_autofree char *shown = g_build_filename(parent, "a" RLO_ESCAPED "txt.exe" NEL_ESCAPED "b",
                                                  NULL);
        g_autofree char *mounted = NULL, *unmounted = NULL, *text = NULL;
        const Call m = { .method = "MountFd", .path = image_own, .target = dir };
        const Call open = { .method = "OpenMount", .path = image_bidi };

        g_assert_cmpint(harness_set_rules(CALLS_RULES_ALLOW_USER1), ==, 0);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);

        g_autoptr(GHashTable) t = expect_call(HARNESS_UID_USER1, &m, "ok");
        g_assert_cmpstr(report_get(t, "mount-point"), ==, dir);
        unmount_own(HARNESS_UID_USER1, dir);
        g_autoptr(GHashTable) t2 = expect_call(HARNESS_UID_USER1, &open, "ok");

        mounted = g_strdup_printf("for uid %u at %s", (unsigned) HARNESS_UID_USER1, shown);
        unmounted = g_strdup_printf("Unmounted %s for uid", shown);
        (void) g_free(await_log(mounted));
        (void) g_free(await_log(unmounted));
        text = await_log("label \"lbl" RLO_ESCAPED "gnp\"");
        /* Not one of them as it is, anywhere in the log. */
        g_assert_null(strstr(text, RLO));
        g_assert_null(strstr(text, NEL));
        assert_clean();
}

/* ---- main ------------------------------------------------------------------------------ */

static char *make_image(const char *label, uid_t owner) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644 }, {} };
        const HarnessImageSpec spec = { .label = label, .entries = entries };
        char *path = NULL;

        g_assert_cmpint(harness_make_image("ext4", &spec, &path), ==, 0);
        g_assert_cmpint(chown(path, owner, owner), ==, 0);
        g_assert_cmpint(chmod(path, 0644), ==, 0);
        return path;
}

/* The daemon with its stderr (its log, as journald would read it) in log_path. */
static void start_daemon(void) {
        const char *const args[] = { "--log-target=stderr", NULL };
        _cleanup_close_ int fd = -EBADF, saved = -EBADF;

        log_path = g_build_filename(harness_tmpdir(), "usermountd.log", NULL);
        fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
        saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(saved, >=, 0);
        g_assert_cmpint(dup2(fd, STDERR_FILENO), ==, STDERR_FILENO);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), args, &daemon_pid), ==, 0);
        g_assert_cmpint(dup2(saved, STDERR_FILENO), ==, STDERR_FILENO);
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        image_own = make_image("trustown", HARNESS_UID_USER1);
        image_root = make_image("trustroot", 0);
        image_bidi = make_image("lbl" RLO "gnp", 0);
        start_daemon();
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/trust/polkit/own-images", test_own_images);
        g_test_add_func("/trust/polkit/device-is-the-callers-path",
                        test_device_is_the_callers_path);
        g_test_add_func("/trust/polkit/device-number", test_device_number);
        g_test_add_func("/trust/log/escaped", test_log_escaped);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
