/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * polkit end to end: the example rules shipped in polkit/, loaded from their real text
 * into the real polkitd, and each action of the action table (docs/architecture.md,
 * "Authorization"), asked by the real daemon for real unprivileged callers, with rules
 * that answer YES only for one exact action id and only when every documented detail has
 * the expected value. Every test checks that nothing is left behind.
 *
 * What this machine can and cannot show: there is no systemd-logind, so polkitd puts no
 * caller in a session: every subject is inactive, not local and has no seat. The rules
 * about sessions and seats are therefore shown twice: once for the real subject (what
 * polkitd really says here), and once "as if logind said otherwise": the rule's own text
 * runs in the real polkitd, but the subject it is handed is the real one with "active",
 * "local" and "seat" replaced (see as_if_session()). There is no SCSI, USB or MMC bus in
 * this kernel, so no block device is really removable: mount-removable is shown with a
 * real zram disk whose sysfs "removable" attribute is replaced, in the test's private
 * mount namespace, by a file that says 1 (see removable_zram_new()).
 *
 * A rule that refuses says why through polkit.log(); run with UM_HARNESS_DEBUG=1 to see
 * polkitd's log on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define LABEL_A "polimg"
#define UUID_A "5a1c3e0e-7d52-4d0b-9a51-2f6a3c9d0a01"
#define LABEL_B "other"
#define UUID_B "5a1c3e0e-7d52-4d0b-9a51-2f6a3c9d0b02"
#define LABEL_SYS "polsys"
#define UUID_SYS "5a1c3e0e-7d52-4d0b-9a51-2f6a3c9d0c03"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image_a;  /* ext4, LABEL_A, UUID_A */
static char *image_b;  /* ext4, LABEL_B, UUID_B */
static char *image_sq; /* squashfs: always mounted read-only */

/* Grants every usermount action: put after a rule under test, it shows what that rule
 * leaves through. */
static const char allow_all[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf(\"" UM_ACTION_PREFIX "\") == 0)\n"
        "                return polkit.Result.YES;\n"
        "});\n";

/* Grants mount-image only, whatever the details: the source action for rules that only
 * answer mount-exec. */
static const char grant_mount_image[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id == \"" UM_ACTION_MOUNT_IMAGE "\")\n"
        "                return polkit.Result.YES;\n"
        "});\n";

/* ---- Callers ------------------------------------------------------------------------- */

typedef enum CallKind {
        CALL_MOUNT_FD,
        CALL_MOUNT,
        CALL_OPEN_MOUNT,
        CALL_UNMOUNT,
        CALL_LIST,
} CallKind;

typedef struct Call {
        CallKind kind;
        const char *path;    /* image, device node or mount point */
        const char *fstype;  /* NULL: "" */
        const char *options; /* NULL: "" */
        const char *target;  /* params["target"], NULL: none */
        bool read_only;      /* params["read-only"] = true */
        bool exec;           /* params["exec"] = true */
        const char *idmap;   /* params["idmap"], NULL: none */
        const char *driver;  /* params["driver"], NULL: none */
        bool in_userns;      /* the caller is root in a user namespace of its own */
} Call;

static void report_reply(const Call *c, sd_bus_message *reply) {
        const char *mp;
        int fd;

        switch (c->kind) {
        case CALL_MOUNT_FD:
        case CALL_MOUNT:
                g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                harness_report("mount-point=%s", mp);
                calls_report_info(reply, "info-");
                break;
        case CALL_OPEN_MOUNT:
                /* The fd goes with the reply: nothing stays attached anywhere. */
                g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
                calls_report_info(reply, "info-");
                break;
        case CALL_LIST:
                calls_report_mount_list(reply);
                break;
        case CALL_UNMOUNT:
                break;
        }
}

static int caller(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int fd = -EBADF;
        static const char *const methods[] = {
                [CALL_MOUNT_FD] = "MountFd", [CALL_MOUNT] = "Mount",
                [CALL_OPEN_MOUNT] = "OpenMount", [CALL_UNMOUNT] = "Unmount",
                [CALL_LIST] = "ListMounts",
        };
        Param params[6] = {};
        size_t n = 0;
        sd_bus *bus = NULL;
        int r;

        if (c->target)
                params[n++] = (Param) { "target", "s", c->target };
        if (c->read_only)
                params[n++] = (Param) { "read-only", "b", "true" };
        if (c->exec)
                params[n++] = (Param) { "exec", "b", "true" };
        if (c->idmap)
                params[n++] = (Param) { "idmap", "s", c->idmap };
        if (c->driver)
                params[n++] = (Param) { "driver", "s", c->driver };

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, methods[c->kind]),
                        >=, 0);
        switch (c->kind) {
        case CALL_MOUNT_FD:
        case CALL_OPEN_MOUNT:
                fd = open(c->path, O_RDWR | O_CLOEXEC);
                g_assert_cmpint(fd, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", fd, strempty(c->fstype),
                                                      strempty(c->options)), >=, 0);
                break;
        case CALL_MOUNT:
                g_assert_cmpint(sd_bus_message_append(call, "sss", c->path, strempty(c->fstype),
                                                      strempty(c->options)), >=, 0);
                break;
        case CALL_UNMOUNT:
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
                n = 0;
                break;
        case CALL_LIST:
                n = 0;
                break;
        }
        g_assert_cmpint(calls_append_params(call, n > 0 ? params : NULL), >=, 0);

        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0)
                report_reply(c, reply);
        sd_bus_flush_close_unref(bus);
        return 0;
}

static GHashTable *call_as(uid_t uid, const Call *c) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, uid, c->in_userns ? HARNESS_NEW_USERNS : 0, caller,
                                       (void *) c, &output), ==, 0);
        g_test_message("caller %u output:\n%s", (unsigned) uid, output ?: "");
        return calls_parse_report(output);
}

/* Calls and checks the outcome: "ok" or an error name. */
static GHashTable *expect_call(uid_t uid, const Call *c, const char *result) {
        GHashTable *t = call_as(uid, c);

        g_assert_cmpstr(report_get(t, "result"), ==, result);
        return t;
}

/* Unmounts one's own mount: needs no authorization, so it works under any rules. */
static void unmount_own(uid_t uid, const char *mount_point) {
        const Call u = { .kind = CALL_UNMOUNT, .path = mount_point };
        g_autoptr(GHashTable) t = expect_call(uid, &u, "ok");
}

static void assert_clean(void) {
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- Rules ----------------------------------------------------------------------------- */

/* s as a JavaScript string literal; NULL becomes undefined. */
static char *js_string(const char *s) {
        GString *js;

        if (!s)
                return g_strdup("undefined");
        js = g_string_new("\"");
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        g_string_append_printf(js, "\\%c", *p);
                else if (*p < 0x20 || *p == 0x7f)
                        g_string_append_printf(js, "\\u%04x", *p);
                else
                        g_string_append_c(js, (char) *p);
        }
        g_string_append_c(js, '"');
        return g_string_free(js, false);
}


/*
 * rule, but the subject it is handed is the real one with the properties of session_js
 * (a JavaScript object literal, e.g. "{ active: true }") put over it. Only
 * polkit.addRule() is wrapped, for the duration of rule's text, so rule runs unchanged in
 * the real polkitd, seeing what logind would tell polkitd about such a session.
 */
static char *as_if_session(const char *rule, const char *session_js) {
        return g_strdup_printf(
                "(function() {\n"
                "        var add = polkit.addRule;\n"
                "        var session = %s;\n"
                "        polkit.addRule = function(rule) {\n"
                "                add.call(polkit, function(action, subject) {\n"
                "                        var s = Object.create(subject);\n"
                "                        for (var k in session)\n"
                "                                s[k] = session[k];\n"
                "                        return rule(action, s);\n"
                "                });\n"
                "        };\n"
                "        try {\n%s\n        } finally {\n"
                "                polkit.addRule = add;\n"
                "        }\n"
                "})();\n",
                session_js, rule);
}

/* What logind says about the foreground session of a seat, a session without a seat (ssh),
 * and a session in the background of its seat (another user switched to). */
#define SESSION_ON(seat) "{ active: true, local: true, seat: \"" seat "\" }"
#define SESSION_NO_SEAT "{ active: true, local: false, seat: \"\" }"
#define SESSION_IN_BACKGROUND "{ active: false, local: true, seat: \"seat0\" }"

static void set_rules(const char *first, const char *second) {
        g_autofree char *js = g_strconcat(first ?: "", "\n", second ?: "", NULL);

        g_assert_cmpint(harness_set_rules(js), ==, 0);
}

/* The details docs/architecture.md documents, in the order it lists them. */
static const char *const detail_keys[] = {
        "device", "fstype", "label", "uuid", "read-only", "exec", "idmap", "target", "options",
        "driver",
};
#define N_DETAILS 10
G_STATIC_ASSERT(ELEMENTSOF(detail_keys) == N_DETAILS);

/* Values in the order of detail_keys; NULL: the detail must be absent. */
typedef struct Details {
        const char *value[N_DETAILS];
} Details;

/*
 * A rule that answers every usermount action: YES for the ids in granted (NULL-terminated)
 * when each documented detail is exactly as in want, NO otherwise (saying why in polkitd's
 * log).
 */
static char *exact_rule(const char *const *granted, const Details *want) {
        GString *js = g_string_new("polkit.addRule(function(action, subject) {\n"
                                   "        var granted = [");

        for (size_t i = 0; granted[i]; i++) {
                g_autofree char *id = js_string(granted[i]);
                g_string_append_printf(js, "%s%s", i ? ", " : "", id);
        }
        g_string_append(js, "];\n        var want = {");
        for (size_t i = 0; i < N_DETAILS; i++) {
                g_autofree char *v = js_string(want->value[i]);
                g_string_append_printf(js, "%s\"%s\": %s", i ? ", " : "", detail_keys[i], v);
        }
        g_string_append(js,
                "};\n"
                "        if (action.id.indexOf(\"" UM_ACTION_PREFIX "\") != 0)\n"
                "                return polkit.Result.NOT_HANDLED;\n"
                "        if (granted.indexOf(action.id) < 0) {\n"
                "                polkit.log(\"test-polkit: refusing \" + action.id);\n"
                "                return polkit.Result.NO;\n"
                "        }\n"
                "        for (var k in want) {\n"
                "                if (action.lookup(k) !== want[k]) {\n"
                "                        polkit.log(\"test-polkit: \" + action.id +\n"
                "                                   \" detail \" + k + \" is '\" +\n"
                "                                   action.lookup(k) + \"', expected '\" +\n"
                "                                   want[k] + \"'\");\n"
                "                        return polkit.Result.NO;\n"
                "                }\n"
                "        }\n"
                "        return polkit.Result.YES;\n"
                "});\n");
        return g_string_free(js, false);
}

static void set_exact_rule(const char *const *granted, const Details *want) {
        g_autofree char *js = exact_rule(granted, want);

        g_assert_cmpint(harness_set_rules(js), ==, 0);
}

static size_t detail_index(const char *key) {
        for (size_t i = 0; i < N_DETAILS; i++)
                if (streq(detail_keys[i], key))
                        return i;
        g_assert_not_reached();
}

/* Calls c as uid under exact_rule(granted, want) and expects "ok": the daemon asked for
 * exactly the granted actions with exactly the documented details. */
static GHashTable *call_exact(uid_t uid, const Call *c, const char *const *granted,
                              const Details *want) {
        GHashTable *t;

        set_exact_rule(granted, want);
        t = call_as(uid, c);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        return t;
}

/* ---- Sources ----------------------------------------------------------------------------- */

static char *make_image(const char *fstype, const char *label, const char *uuid) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644 }, {} };
        /* umtest1's images: their root directory is umtest1's (for other callers the
         * daemon then maps it to them: idmap "user", see test-security.c). */
        const HarnessImageSpec spec = { .label = label, .entries = entries,
                                        .root_uid = HARNESS_UID_USER1,
                                        .root_gid = HARNESS_GID_USER1 };
        g_autofree char *cmd = NULL;
        char *path = NULL;

        g_assert_cmpint(harness_make_image(fstype, &spec, &path), ==, 0);
        if (uuid) {
                cmd = g_strdup_printf("tune2fs -U %s %s >&2", uuid, path);
                g_assert_cmpint(system(cmd), ==, 0);
        }
        g_assert_cmpint(chmod(path, 0666), ==, 0);
        return path;
}

static char *make_dir(const char *name, uid_t owner) {
        char *dir = g_build_filename(harness_tmpdir(), "targets", name, NULL);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, owner, owner), ==, 0);
        return dir;
}

/* A real block device that is not a loop device: a zram disk with ext4 (LABEL_SYS,
 * UUID_SYS). ret_removable_attr: NULL for a plain disk; else set to the path of its sysfs
 * "removable" attribute, over which a file saying "1" is bind-mounted in the test's
 * private mount namespace (the daemon's too): the daemon then reads what the kernel
 * reports for an SD card or a CD drive. */
static char *zram_new(char **ret_removable_attr) {
        g_autofree char *cmd = NULL;
        char *node = NULL;
        int id;

        g_assert_cmpint(harness_zram_new("64M", &node), ==, 0);
        g_assert_cmpint(sscanf(node, "/dev/zram%d", &id), ==, 1);
        cmd = g_strdup_printf("mkfs.ext4 -q -L %s -U %s %s >&2", LABEL_SYS, UUID_SYS, node);
        g_assert_cmpint(system(cmd), ==, 0);
        if (ret_removable_attr) {
                g_autofree char *one = g_build_filename(harness_tmpdir(), "removable-1", NULL);
                char *attr = g_strdup_printf("/sys/block/zram%d/removable", id);
                g_autofree char *before = NULL;

                g_assert_true(g_file_get_contents(attr, &before, NULL, NULL));
                g_assert_cmpstr(before, ==, "0\n");
                g_assert_true(g_file_set_contents(one, "1\n", -1, NULL));
                g_assert_cmpint(mount(one, attr, NULL, MS_BIND, NULL), ==, 0);
                *ret_removable_attr = attr;
        }
        return node;
}

static void zram_free(char *node, char *removable_attr) {
        if (removable_attr)
                g_assert_cmpint(umount2(removable_attr, 0), ==, 0);
        g_assert_cmpint(harness_zram_free(node), ==, 0);
        g_free(node);
        g_free(removable_attr);
}

/* ---- The shipped example rules ---------------------------------------------------------- */

/* 50-usermount-group-images.rules: a group member mounts images read-only without a
 * password; not read-write, not with exec; a non-member gets the defaults. */
static void test_example_group_images(void) {
        g_autofree char *rule = calls_example_rule("50-usermount-group-images.rules", "GROUP",
                                             "\"" HARNESS_GROUP "\"");
        const Call ro = { .kind = CALL_MOUNT_FD, .path = image_a, .read_only = true };
        const Call rw = { .kind = CALL_MOUNT_FD, .path = image_a };
        const Call ro_exec = { .kind = CALL_MOUNT_FD, .path = image_a, .read_only = true,
                               .exec = true };
        const Call squash = { .kind = CALL_MOUNT_FD, .path = image_sq };

        set_rules(rule, NULL);
        /* umtest1's image: its root directory appears as the admin's (idmap "user"). */
        g_autoptr(GHashTable) t = expect_call(HARNESS_UID_ADMIN, &ro, "ok");
        g_assert_cmpstr(report_get(t, "info-attributes"), ==, "nodev,nosuid,noexec,ro,idmap");
        unmount_own(HARNESS_UID_ADMIN, report_get(t, "mount-point"));

        /* squashfs is always read-only: the detail says what the mount will be. */
        g_autoptr(GHashTable) sq = expect_call(HARNESS_UID_ADMIN, &squash, "ok");
        g_assert_cmpstr(report_get(sq, "info-attributes"), ==, "nodev,nosuid,noexec,ro,idmap");
        unmount_own(HARNESS_UID_ADMIN, report_get(sq, "mount-point"));

        g_autoptr(GHashTable) t2 = expect_call(HARNESS_UID_ADMIN, &rw,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_autoptr(GHashTable) t3 = expect_call(HARNESS_UID_ADMIN, &ro_exec,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_autoptr(GHashTable) t4 = expect_call(HARNESS_UID_USER1, &ro,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        assert_clean();
}

/* 50-usermount-kernel-driver.rules, with the shipped Driver=auto (images to a userspace
 * driver): a group member has the kernel's driver parse its image without a password; a
 * non-member gets the action's default (an admin's password); and without driver=kernel
 * the userspace driver serves, and the rule is not asked at all. */
static void test_example_kernel_driver(void) {
        g_autofree char *rule = calls_example_rule("50-usermount-kernel-driver.rules", "GROUP",
                                                   "\"" HARNESS_GROUP "\"");
        const Call kernel = { .kind = CALL_OPEN_MOUNT, .path = image_a, .driver = "kernel" };
        const Call plain = { .kind = CALL_OPEN_MOUNT, .path = image_a };

        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", "[General]\nDriver=auto\n"),
                        ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
        set_rules(grant_mount_image, rule);
        g_autoptr(GHashTable) t = expect_call(HARNESS_UID_ADMIN, &kernel, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "kernel");
        g_autoptr(GHashTable) t2 = expect_call(HARNESS_UID_USER1, &kernel,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_assert_nonnull(strstr(report_get(t2, "message"), UM_ACTION_MOUNT_KERNEL_DRIVER));
        g_autoptr(GHashTable) t3 = expect_call(HARNESS_UID_USER1, &plain, "ok");
        g_assert_cmpstr(report_get(t3, "info-driver"), ==, "userspace");
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", HARNESS_CONF_DEFAULT),
                        ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
        assert_clean();
}

/* 50-usermount-namespace-images.rules: a group member in a user namespace of its own
 * mounts an image id-mapped to it without a password; not on the host without that
 * mapping, not with exec; a non-member gets the defaults. */
static void test_example_namespace_images(void) {
        g_autofree char *rule = calls_example_rule("50-usermount-namespace-images.rules", "GROUP",
                                             "\"" HARNESS_GROUP "\"");
        const Call ns = { .kind = CALL_OPEN_MOUNT, .path = image_a, .idmap = "namespace",
                          .in_userns = true };
        const Call ns_exec = { .kind = CALL_OPEN_MOUNT, .path = image_a, .idmap = "namespace",
                               .in_userns = true, .exec = true };
        const Call host = { .kind = CALL_MOUNT_FD, .path = image_a };

        set_rules(rule, NULL);
        g_autoptr(GHashTable) t = expect_call(HARNESS_UID_ADMIN, &ns, "ok");
        g_assert_cmpstr(report_get(t, "info-idmap"), ==, "namespace");
        g_autoptr(GHashTable) t2 = expect_call(HARNESS_UID_ADMIN, &host,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_autoptr(GHashTable) t3 = expect_call(HARNESS_UID_ADMIN, &ns_exec,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_autoptr(GHashTable) t4 = expect_call(HARNESS_UID_USER1, &ns,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        assert_clean();
}

/*
 * 50-usermount-deny-inactive.rules. Here every subject is inactive (no logind), so the
 * rule refuses every mount for real, while unmount-others is left to later rules. As if
 * logind said "active": a seated session mounts; a session without a seat mounts unless
 * REFUSE_WITHOUT_SEAT is true.
 */
static void test_example_deny_inactive(void) {
        g_autofree char *rule = calls_example_rule("50-usermount-deny-inactive.rules",
                                             "REFUSE_WITHOUT_SEAT", "false");
        g_autofree char *strict = calls_example_rule("50-usermount-deny-inactive.rules",
                                               "REFUSE_WITHOUT_SEAT", "true");
        g_autofree char *seated = as_if_session(rule, SESSION_ON("seat0"));
        g_autofree char *remote = as_if_session(rule, SESSION_NO_SEAT);
        g_autofree char *remote_strict = as_if_session(strict, SESSION_NO_SEAT);
        g_autofree char *background = as_if_session(rule, SESSION_IN_BACKGROUND);
        g_autofree char *zram = zram_new(NULL);
        const Call image = { .kind = CALL_MOUNT_FD, .path = image_a };
        const Call device = { .kind = CALL_MOUNT, .path = zram };
        const Call open = { .kind = CALL_OPEN_MOUNT, .path = image_a };
        const Call list = { .kind = CALL_LIST };

        /* The real subject: inactive, so no mount of any kind. */
        set_rules(rule, allow_all);
        g_autoptr(GHashTable) t1 = expect_call(HARNESS_UID_USER1, &image, UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) t2 = expect_call(HARNESS_UID_USER1, &device, UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) t3 = expect_call(HARNESS_UID_USER1, &open, UM_ERROR_NOT_AUTHORIZED);

        /* unmount-others is not a mount action: the rule leaves it to allow_all. */
        set_rules(allow_all, NULL);
        g_autoptr(GHashTable) mine = expect_call(HARNESS_UID_USER2, &image, "ok");
        const char *mp = report_get(mine, "mount-point");
        const Call unmount = { .kind = CALL_UNMOUNT, .path = mp };
        set_rules(rule, allow_all);
        g_autoptr(GHashTable) l = expect_call(HARNESS_UID_USER1, &list, "ok");
        g_assert_cmpstr(report_get(l, "count"), ==, "1");
        g_autoptr(GHashTable) u = expect_call(HARNESS_UID_USER1, &unmount, "ok");

        /* As if logind said otherwise. */
        set_rules(seated, allow_all);
        g_autoptr(GHashTable) t4 = expect_call(HARNESS_UID_USER1, &image, "ok");
        unmount_own(HARNESS_UID_USER1, report_get(t4, "mount-point"));
        set_rules(background, allow_all);
        g_autoptr(GHashTable) t5 = expect_call(HARNESS_UID_USER1, &image, UM_ERROR_NOT_AUTHORIZED);
        set_rules(remote, allow_all);
        g_autoptr(GHashTable) t6 = expect_call(HARNESS_UID_USER1, &device, "ok");
        unmount_own(HARNESS_UID_USER1, report_get(t6, "mount-point"));
        set_rules(remote_strict, allow_all);
        g_autoptr(GHashTable) t7 = expect_call(HARNESS_UID_USER1, &device, UM_ERROR_NOT_AUTHORIZED);
        assert_clean();
        zram_free(TAKE_PTR(zram), NULL);
}

/*
 * 50-usermount-deny-seat.rules. Here no subject has a seat, so the rule cannot match for
 * real: callers get what the next rule says. As if logind put the caller on SEAT, every
 * action is refused; on another seat, nothing changes.
 */
static void test_example_deny_seat(void) {
        g_autofree char *rule = calls_example_rule("50-usermount-deny-seat.rules", "SEAT", "\"seat1\"");
        g_autofree char *on_seat = as_if_session(rule, SESSION_ON("seat1"));
        g_autofree char *other_seat = as_if_session(rule, SESSION_ON("seat0"));
        const Call image = { .kind = CALL_MOUNT_FD, .path = image_a };
        const Call list = { .kind = CALL_LIST };

        /* The real subject has no seat: the rule lets it through. */
        set_rules(rule, allow_all);
        g_autoptr(GHashTable) t1 = expect_call(HARNESS_UID_USER1, &image, "ok");
        const char *mp = report_get(t1, "mount-point");
        const Call unmount = { .kind = CALL_UNMOUNT, .path = mp };

        /* On SEAT: every action is refused, unmount-others included. */
        set_rules(on_seat, allow_all);
        const Call image_b_call = { .kind = CALL_MOUNT_FD, .path = image_b };
        g_autoptr(GHashTable) t3 = expect_call(HARNESS_UID_USER2, &image_b_call,
                                               UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) l = expect_call(HARNESS_UID_USER2, &list, "ok");
        g_assert_cmpstr(report_get(l, "count"), ==, "0");
        g_autoptr(GHashTable) u = expect_call(HARNESS_UID_USER2, &unmount, UM_ERROR_NOT_AUTHORIZED);

        set_rules(other_seat, allow_all);
        g_autoptr(GHashTable) l2 = expect_call(HARNESS_UID_USER2, &list, "ok");
        g_assert_cmpstr(report_get(l2, "count"), ==, "1");
        g_autoptr(GHashTable) u2 = expect_call(HARNESS_UID_USER2, &unmount, "ok");
        assert_clean();
}

/* 50-usermount-deny-user.rules: the user is refused for every method that asks polkit;
 * another user is not. */
static void test_example_deny_user(void) {
        g_autofree char *rule = calls_example_rule("50-usermount-deny-user.rules", "USER",
                                             "\"" HARNESS_USER1 "\"");
        g_autofree char *zram = zram_new(NULL);
        const Call theirs = { .kind = CALL_MOUNT_FD, .path = image_b };
        const Call image = { .kind = CALL_MOUNT_FD, .path = image_a };
        const Call image_ro = { .kind = CALL_MOUNT_FD, .path = image_a, .read_only = true };
        const Call exec = { .kind = CALL_MOUNT_FD, .path = image_a, .exec = true };
        const Call device = { .kind = CALL_MOUNT, .path = zram };
        const Call open = { .kind = CALL_OPEN_MOUNT, .path = image_a };
        const Call list = { .kind = CALL_LIST };

        set_rules(rule, allow_all);
        g_autoptr(GHashTable) t = expect_call(HARNESS_UID_USER2, &theirs, "ok");
        const Call unmount = { .kind = CALL_UNMOUNT, .path = report_get(t, "mount-point") };

        /* The denied user: every action, so every method that asks. */
        g_autoptr(GHashTable) d1 = expect_call(HARNESS_UID_USER1, &image, UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) d2 = expect_call(HARNESS_UID_USER1, &image_ro,
                                               UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) d3 = expect_call(HARNESS_UID_USER1, &exec, UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) d4 = expect_call(HARNESS_UID_USER1, &device, UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) d5 = expect_call(HARNESS_UID_USER1, &open, UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) d6 = expect_call(HARNESS_UID_USER1, &unmount,
                                               UM_ERROR_NOT_AUTHORIZED);
        /* ListMounts does not fail: without unmount-others one sees one's own mounts. */
        g_autoptr(GHashTable) d7 = expect_call(HARNESS_UID_USER1, &list, "ok");
        g_assert_cmpstr(report_get(d7, "count"), ==, "0");

        /* Other users are not affected. */
        g_autoptr(GHashTable) o1 = expect_call(HARNESS_UID_USER2, &device, "ok");
        unmount_own(HARNESS_UID_USER2, report_get(o1, "mount-point"));
        g_autoptr(GHashTable) o2 = expect_call(HARNESS_UID_USER2, &open, "ok");
        g_assert_cmpstr(report_get(o2, "info-uuid"), ==, UUID_A);
        g_autoptr(GHashTable) o3 = expect_call(HARNESS_UID_ADMIN, &list, "ok");
        g_assert_cmpstr(report_get(o3, "count"), ==, "1");
        g_autoptr(GHashTable) o4 = expect_call(HARNESS_UID_ADMIN, &unmount, "ok");
        assert_clean();
        zram_free(TAKE_PTR(zram), NULL);
}

/* 50-usermount-exec-uuids.rules: exec for the listed UUID only; the source action still
 * needs its own grant. */
static void test_example_exec_uuids(void) {
        g_autofree char *rule = calls_example_rule("50-usermount-exec-uuids.rules", "UUIDS",
                                             "[\"" UUID_A "\"]");
        const Call exec_a = { .kind = CALL_MOUNT_FD, .path = image_a, .exec = true };
        const Call exec_b = { .kind = CALL_MOUNT_FD, .path = image_b, .exec = true };
        const Call plain_b = { .kind = CALL_MOUNT_FD, .path = image_b };

        /* Alone, the rule mounts nothing: mount-image keeps its defaults. */
        set_rules(rule, NULL);
        g_autoptr(GHashTable) t0 = expect_call(HARNESS_UID_USER1, &exec_a,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);

        /* With mount-image granted by a later rule. */
        set_rules(rule, grant_mount_image);
        g_autoptr(GHashTable) t1 = expect_call(HARNESS_UID_USER1, &exec_a, "ok");
        g_assert_cmpstr(report_get(t1, "info-attributes"), ==, "nodev,nosuid");
        unmount_own(HARNESS_UID_USER1, report_get(t1, "mount-point"));
        g_autoptr(GHashTable) t2 = expect_call(HARNESS_UID_USER1, &exec_b, UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) t3 = expect_call(HARNESS_UID_USER1, &plain_b, "ok");
        g_assert_cmpstr(report_get(t3, "info-attributes"), ==, "nodev,nosuid,noexec");
        unmount_own(HARNESS_UID_USER1, report_get(t3, "mount-point"));
        assert_clean();
}

/* ---- The .policy defaults ---------------------------------------------------------------- */

/* No rule answers: the defaults of org.freedesktop.usermount1.policy. No subject is in a
 * session here, so allow_any applies (auth_admin for every action): without interactive
 * authorization that is NotAuthorizedCanObtain. (allow_active = yes of mount-removable
 * cannot be shown: nothing is active here.) */
static void test_policy_defaults(void) {
        g_autofree char *attr = NULL;
        g_autofree char *zram = zram_new(NULL);
        g_autofree char *removable = zram_new(&attr);
        const Call image = { .kind = CALL_MOUNT_FD, .path = image_a };
        const Call exec = { .kind = CALL_MOUNT_FD, .path = image_a, .exec = true };
        const Call device = { .kind = CALL_MOUNT, .path = zram };
        const Call media = { .kind = CALL_MOUNT, .path = removable };
        const Call list = { .kind = CALL_LIST };

        set_rules(NULL, NULL);
        g_autoptr(GHashTable) t1 = expect_call(HARNESS_UID_USER1, &image,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_assert_nonnull(strstr(report_get(t1, "message"), UM_ACTION_MOUNT_IMAGE));
        g_autoptr(GHashTable) t2 = expect_call(HARNESS_UID_USER1, &device,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_assert_nonnull(strstr(report_get(t2, "message"), UM_ACTION_MOUNT_SYSTEM));
        g_autoptr(GHashTable) t3 = expect_call(HARNESS_UID_USER1, &media,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_assert_nonnull(strstr(report_get(t3, "message"), UM_ACTION_MOUNT_REMOVABLE));

        set_rules(grant_mount_image, NULL);
        g_autoptr(GHashTable) t4 = expect_call(HARNESS_UID_USER1, &exec,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_assert_nonnull(strstr(report_get(t4, "message"), UM_ACTION_MOUNT_EXEC));
        g_autoptr(GHashTable) mine = expect_call(HARNESS_UID_USER2, &image, "ok");
        const Call unmount = { .kind = CALL_UNMOUNT, .path = report_get(mine, "mount-point") };

        set_rules(NULL, NULL);
        g_autoptr(GHashTable) t5 = expect_call(HARNESS_UID_USER1, &unmount,
                                               UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        g_assert_nonnull(strstr(report_get(t5, "message"), UM_ACTION_UNMOUNT_OTHERS));
        g_autoptr(GHashTable) t6 = expect_call(HARNESS_UID_USER1, &list, "ok");
        g_assert_cmpstr(report_get(t6, "count"), ==, "0");
        unmount_own(HARNESS_UID_USER2, report_get(mine, "mount-point"));
        assert_clean();
        zram_free(TAKE_PTR(removable), TAKE_PTR(attr));
        zram_free(TAKE_PTR(zram), NULL);
}

/* ---- Each action, with exact details ----------------------------------------------------- */

/* A rule with the same grants that differs from want in the label only must refuse: the
 * rules above are not a YES in disguise. */
static void assert_label_matters(uid_t uid, const Call *c, const char *const *granted,
                                 const Details *want) {
        Details wrong = *want;

        wrong.value[detail_index("label")] = "not-the-label";
        set_exact_rule(granted, &wrong);
        g_autoptr(GHashTable) t = expect_call(uid, c, UM_ERROR_NOT_AUTHORIZED);
}

/*
 * mount-image: MountFd of a regular file. docs/architecture.md calls "device" the block device,
 * "the loop device for images"; but polkit is asked before anything is set up (docs/style.md
 * 7), when no loop device exists yet, so the detail is the image's path (what the reply
 * calls "backing-file").
 */
static void test_action_mount_image(void) {
        g_autofree char *dir = make_dir("image", HARNESS_UID_USER1);
        const char *const granted[] = { UM_ACTION_MOUNT_IMAGE, NULL };
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_a, .fstype = "ext4",
                         .options = "noatime,acl", .target = dir, .read_only = true };
        const Details want = { { image_a, "ext4", LABEL_A, UUID_A, "true", "false", "none", dir,
                                 "noatime,acl" , "kernel" } };

        assert_label_matters(HARNESS_UID_USER1, &c, granted, &want);
        g_autoptr(GHashTable) t = call_exact(HARNESS_UID_USER1, &c, granted, &want);
        g_assert_cmpstr(report_get(t, "mount-point"), ==, dir);
        g_assert_true(g_str_has_prefix(report_get(t, "info-device"), "/dev/loop"));
        g_assert_cmpstr(report_get(t, "info-backing-file"), ==, image_a);
        unmount_own(HARNESS_UID_USER1, dir);
        assert_clean();
}

/* OpenMount attaches nothing: target is "" (documented); the fstype is the probed one even
 * when the caller names none. */
static void test_action_mount_image_open(void) {
        const char *const granted[] = { UM_ACTION_MOUNT_IMAGE, NULL };
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = image_b };
        const Details want = { { image_b, "ext4", LABEL_B, UUID_B, "false", "false", "none", "",
                                 "" , "kernel" } };

        assert_label_matters(HARNESS_UID_USER2, &c, granted, &want);
        g_autoptr(GHashTable) t = call_exact(HARNESS_UID_USER2, &c, granted, &want);
        g_assert_cmpstr(report_get(t, "info-uuid"), ==, UUID_B);
        assert_clean();
}

/* Without params["target"], "target" is documented as where the mount will be attached:
 * the default mount point. */
static void test_action_mount_image_default_target(void) {
        const char *const granted[] = { UM_ACTION_MOUNT_IMAGE, NULL };
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_a };
        const Details want = { { image_a, "ext4", LABEL_A, UUID_A, "false", "false", "none",
                                 "/run/media/" HARNESS_USER1 "/" LABEL_A, "" , "kernel" } };

        g_autoptr(GHashTable) t = call_exact(HARNESS_UID_USER1, &c, granted, &want);
        g_assert_cmpstr(report_get(t, "mount-point"), ==, "/run/media/" HARNESS_USER1 "/" LABEL_A);
        unmount_own(HARNESS_UID_USER1, report_get(t, "mount-point"));
        assert_clean();
}

/* mount-system: Mount of a block device by path (a zram disk is not removable). */
static void test_action_mount_system(void) {
        g_autofree char *zram = zram_new(NULL);
        g_autofree char *dir = make_dir("system", HARNESS_UID_USER1);
        const char *const granted[] = { UM_ACTION_MOUNT_SYSTEM, NULL };
        const char *const removable_only[] = { UM_ACTION_MOUNT_REMOVABLE, NULL };
        const Call c = { .kind = CALL_MOUNT, .path = zram, .options = "noatime", .target = dir };
        const Details want = { { zram, "ext4", LABEL_SYS, UUID_SYS, "false", "false", "none", dir,
                                 "noatime" , "kernel" } };

        assert_label_matters(HARNESS_UID_USER1, &c, granted, &want);
        set_exact_rule(removable_only, &want);
        g_autoptr(GHashTable) t0 = expect_call(HARNESS_UID_USER1, &c, UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) t = call_exact(HARNESS_UID_USER1, &c, granted, &want);
        g_assert_cmpstr(report_get(t, "info-device"), ==, zram);
        unmount_own(HARNESS_UID_USER1, dir);
        assert_clean();
        zram_free(TAKE_PTR(zram), NULL);
}

/*
 * mount-removable. This kernel has no SCSI (so no scsi_debug), USB or MMC bus, so no block
 * device here is removable. The lowest real level is the daemon's own reading of sysfs:
 * a real zram disk whose "removable" attribute is replaced by a file saying 1 (only in
 * this test's mount namespace, which the daemon shares). The daemon's other criteria (an SD
 * card on the MMC bus, a parent device the kernel marks removable) are covered by the unit
 * test with fake sysfs trees (tests/unit/test-removable.c).
 */
static void test_action_mount_removable(void) {
        g_autofree char *attr = NULL;
        g_autofree char *zram = zram_new(&attr);
        g_autofree char *dir = make_dir("removable", HARNESS_UID_USER2);
        const char *const granted[] = { UM_ACTION_MOUNT_REMOVABLE, NULL };
        const char *const system_only[] = { UM_ACTION_MOUNT_SYSTEM, NULL };
        const Call c = { .kind = CALL_MOUNT, .path = zram, .fstype = "ext4", .target = dir,
                         .read_only = true };
        const Details want = { { zram, "ext4", LABEL_SYS, UUID_SYS, "true", "false", "none", dir,
                                 "" , "kernel" } };

        assert_label_matters(HARNESS_UID_USER2, &c, granted, &want);
        set_exact_rule(system_only, &want);
        g_autoptr(GHashTable) t0 = expect_call(HARNESS_UID_USER2, &c, UM_ERROR_NOT_AUTHORIZED);
        g_autoptr(GHashTable) t = call_exact(HARNESS_UID_USER2, &c, granted, &want);
        /* A stick formatted by root: its root directory appears as the user's. */
        g_assert_cmpstr(report_get(t, "info-attributes"), ==, "nodev,nosuid,noexec,ro,idmap");
        unmount_own(HARNESS_UID_USER2, dir);
        assert_clean();
        zram_free(TAKE_PTR(zram), TAKE_PTR(attr));
}

/* mount-exec: exec=true needs the source action and mount-exec, both with the details. */
static void test_action_mount_exec(void) {
        g_autofree char *dir = make_dir("exec", HARNESS_UID_USER2);
        const char *const both[] = { UM_ACTION_MOUNT_IMAGE, UM_ACTION_MOUNT_EXEC, NULL };
        const char *const exec_only[] = { UM_ACTION_MOUNT_EXEC, NULL };
        const char *const image_only[] = { UM_ACTION_MOUNT_IMAGE, NULL };
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_b, .options = "nodiscard",
                         .target = dir, .exec = true };
        const Details want = { { image_b, "ext4", LABEL_B, UUID_B, "false", "true", "none", dir,
                                 "nodiscard" , "kernel" } };

        set_exact_rule(exec_only, &want);
        g_autoptr(GHashTable) t1 = expect_call(HARNESS_UID_USER2, &c, UM_ERROR_NOT_AUTHORIZED);
        set_exact_rule(image_only, &want);
        g_autoptr(GHashTable) t2 = expect_call(HARNESS_UID_USER2, &c, UM_ERROR_NOT_AUTHORIZED);
        assert_label_matters(HARNESS_UID_USER2, &c, both, &want);
        g_autoptr(GHashTable) t = call_exact(HARNESS_UID_USER2, &c, both, &want);
        /* umtest1's image, mounted by umtest2: mapped to umtest2. */
        g_assert_cmpstr(report_get(t, "info-attributes"), ==, "nodev,nosuid,idmap");
        unmount_own(HARNESS_UID_USER2, dir);
        assert_clean();
}

/*
 * unmount-others: ListMounts and Unmount of another user's mount. Unmount concerns one
 * registered mount, so the documented details are that mount's: its device, fstype,
 * label, uuid, read-only, exec, idmap, where it is attached (target) and its options as
 * ListMounts shows them. ListMounts concerns no single mount: it passes no details.
 */
static void test_action_unmount_others(void) {
        g_autofree char *dir = make_dir("others", HARNESS_UID_USER1);
        const char *const granted[] = { UM_ACTION_UNMOUNT_OTHERS, NULL };
        const char *const image_only[] = { UM_ACTION_MOUNT_IMAGE, NULL };
        const Call m = { .kind = CALL_MOUNT_FD, .path = image_a, .options = "noatime",
                         .target = dir, .read_only = true, .exec = true };
        const Call list = { .kind = CALL_LIST };
        const Call u = { .kind = CALL_UNMOUNT, .path = dir };
        const Details none = {};

        set_rules(allow_all, NULL);
        g_autoptr(GHashTable) mine = expect_call(HARNESS_UID_USER1, &m, "ok");
        const Details want = { { report_get(mine, "info-device"), "ext4", LABEL_A, UUID_A,
                                 "true", "true", "none", dir,
                                 report_get(mine, "info-options") , "kernel" } };

        /* Not granted: only one's own mounts are listed, and the unmount is refused. */
        set_exact_rule(image_only, &none);
        g_autoptr(GHashTable) l0 = expect_call(HARNESS_UID_USER2, &list, "ok");
        g_assert_cmpstr(report_get(l0, "count"), ==, "0");
        g_autoptr(GHashTable) u0 = expect_call(HARNESS_UID_USER2, &u, UM_ERROR_NOT_AUTHORIZED);

        set_exact_rule(granted, &none);
        g_autoptr(GHashTable) l = expect_call(HARNESS_UID_USER2, &list, "ok");
        g_assert_cmpstr(report_get(l, "count"), ==, "1");
        g_assert_cmpstr(report_get(l, "entry0-mount-point"), ==, dir);
        g_assert_cmpstr(report_get(l, "entry0-owner-uid"), ==, "61001");

        assert_label_matters(HARNESS_UID_USER2, &u, granted, &want);
        g_autoptr(GHashTable) t = call_exact(HARNESS_UID_USER2, &u, granted, &want);
        assert_clean();
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        if (access("/sys/class/zram-control/hot_add", W_OK) < 0) {
                printf("1..0 # SKIP this kernel has no zram for block-device tests\n");
                return 0;
        }
        image_a = make_image("ext4", LABEL_A, UUID_A);
        image_b = make_image("ext4", LABEL_B, UUID_B);
        image_sq = make_image("squashfs", NULL, NULL);
        g_assert_cmpint(harness_set_rules(NULL), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/polkit/example/group-images", test_example_group_images);
        g_test_add_func("/polkit/example/namespace-images", test_example_namespace_images);
        g_test_add_func("/polkit/example/kernel-driver", test_example_kernel_driver);
        g_test_add_func("/polkit/example/deny-inactive", test_example_deny_inactive);
        g_test_add_func("/polkit/example/deny-seat", test_example_deny_seat);
        g_test_add_func("/polkit/example/deny-user", test_example_deny_user);
        g_test_add_func("/polkit/example/exec-uuids", test_example_exec_uuids);
        g_test_add_func("/polkit/defaults", test_policy_defaults);
        g_test_add_func("/polkit/action/mount-image", test_action_mount_image);
        g_test_add_func("/polkit/action/mount-image/open-mount", test_action_mount_image_open);
        g_test_add_func("/polkit/action/mount-image/default-target",
                        test_action_mount_image_default_target);
        g_test_add_func("/polkit/action/mount-system", test_action_mount_system);
        g_test_add_func("/polkit/action/mount-removable", test_action_mount_removable);
        g_test_add_func("/polkit/action/mount-exec", test_action_mount_exec);
        g_test_add_func("/polkit/action/unmount-others", test_action_unmount_others);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
