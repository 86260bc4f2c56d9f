/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount's id-mapping options, end to end through the CLI: inside a user namespace
 * `usermount mount` asks for idmap "namespace" unless told otherwise, --idmap=none and
 * --idmap=user do what they say, --userns passes a namespace file, and the one-line
 * summary and `usermount list` say which mapping was applied. The real daemon, polkitd
 * and loop devices; unprivileged callers; nothing left behind.
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

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image;

static const char rules[] = CALLS_RULES_ALLOW_USER1;

typedef struct CliCall {
        const char *const *args;  /* after "usermount", NULL-terminated; "@IMG" and "@DIR" replaced */
        const char *dir;          /* the target directory */
        bool unmount_after;       /* umount(2) the target (namespace route) */
        bool cli_unmount_after;   /* usermount unmount TARGET (tracked route) */
} CliCall;

static int run_cli(const char *const *args, const char *dir, char **ret_out, int *ret_status) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *out = NULL, *err = NULL;
        g_autofree char *bus = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", harness_bus_address());
        char *envp[] = { bus, (char *) "HOME=/", (char *) "USER=" HARNESS_USER1,
                         (char *) "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                         (char *) "ASAN_OPTIONS=verify_asan_link_order=0", NULL };
        g_autoptr(GError) error = NULL;

        g_ptr_array_add(argv, g_strdup(g_getenv("UM_USERMOUNT")));
        for (size_t i = 0; args[i]; i++)
                g_ptr_array_add(argv, g_strdup(streq(args[i], "@IMG") ? image :
                                               streq(args[i], "@DIR") ? dir : args[i]));
        g_ptr_array_add(argv, NULL);
        if (!g_spawn_sync(NULL, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &out,
                          &err, ret_status, &error)) {
                fprintf(stderr, "spawn: %s\n", error->message);
                return -EIO;
        }
        *ret_out = g_strconcat(strempty(out), strempty(err), NULL);
        return 0;
}

static int caller_cli(void *userdata) {
        const CliCall *c = userdata;
        g_autofree char *out = NULL, *path = NULL, *list = NULL;
        const char *const list_args[] = { "list", NULL };
        const char *const unmount_args[] = { "unmount", "@DIR", NULL };
        int status;
        struct stat st;

        if (run_cli(c->args, c->dir, &out, &status) < 0)
                return 1;
        harness_report("status=%d", g_spawn_check_wait_status(status, NULL) ? 0 :
                                                WIFEXITED(status) ? WEXITSTATUS(status) : 255);
        harness_report("output=%s", g_strstrip(out));
        if (!g_spawn_check_wait_status(status, NULL))
                return 0;

        path = g_build_filename(c->dir, "hello.txt", NULL);
        if (stat(path, &st) == 0)
                harness_report("hello=%u:%u", (unsigned) st.st_uid, (unsigned) st.st_gid);
        g_free(path);
        path = g_build_filename(c->dir, "far.txt", NULL);
        if (stat(path, &st) == 0)
                harness_report("far=%u:%u", (unsigned) st.st_uid, (unsigned) st.st_gid);

        if (c->cli_unmount_after) {
                g_free(out);
                if (run_cli(list_args, c->dir, &list, &status) == 0)
                        harness_report("list=%s", g_strstrip(list));
                if (run_cli(unmount_args, c->dir, &out, &status) == 0)
                        harness_report("unmount=%s", g_spawn_check_wait_status(status, NULL) ?
                                                             "ok" : g_strstrip(out));
        }
        if (c->unmount_after)
                harness_report("umount=%s", calls_errno_name(umount2(c->dir, 0) < 0 ? -errno : 0));
        return 0;
}

/* A directory for umtest1 under the harness's temporary directory. */
static char *make_dir(const char *name) {
        char *dir = g_build_filename(harness_tmpdir(), "cli-idmap", name, NULL);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        return dir;
}

static GHashTable *run(HarnessRunFlags flags, const CliCall *c) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, flags, caller_cli,
                                       (void *) c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

static void assert_contains(const char *s, const char *part) {
        if (!strstr(strempty(s), part))
                g_error("'%s' lacks '%s'", strempty(s), part);
}

/* In a user namespace, no --idmap: "namespace", and the files root made are root's. */
static void test_userns_default(void) {
        g_autofree char *dir = make_dir("default");
        const CliCall c = { (const char *const[]) { "mount", "@IMG", "@DIR", NULL }, dir,
                            .unmount_after = true };
        g_autoptr(GHashTable) t = run(HARNESS_NEW_USERNS, &c);

        g_assert_cmpstr(report_get(t, "status"), ==, "0");
        assert_contains(report_get(t, "output"),
                        "id-mapped (namespace: uids 0:61001:1, gids 0:61001:1)");
        g_assert_cmpstr(report_get(t, "hello"), ==, "0:0");
        g_assert_cmpstr(report_get(t, "far"), ==, "65534:65534");
        g_assert_cmpstr(report_get(t, "umount"), ==, "ok");
        calls_assert_clean(daemon_pid, &baseline);
}

/* --idmap=none in a user namespace: the ids on disk do not map here. */
static void test_userns_none(void) {
        g_autofree char *dir = make_dir("none");
        const CliCall c = { (const char *const[]) { "mount", "--idmap=none", "@IMG", "@DIR", NULL },
                            dir, .unmount_after = true };
        g_autoptr(GHashTable) t = run(HARNESS_NEW_USERNS, &c);

        g_assert_cmpstr(report_get(t, "status"), ==, "0");
        g_assert_null(strstr(strempty(report_get(t, "output")), "id-mapped"));
        g_assert_cmpstr(report_get(t, "hello"), ==, "65534:65534");
        g_assert_cmpstr(report_get(t, "umount"), ==, "ok");
        calls_assert_clean(daemon_pid, &baseline);
}

/* --idmap=user on the host: root's files appear as the caller's, list says so. */
static void test_host_user(void) {
        g_autofree char *dir = make_dir("user");
        const CliCall c = { (const char *const[]) { "mount", "--idmap=user", "@IMG", "@DIR", NULL },
                            dir, .cli_unmount_after = true };
        g_autoptr(GHashTable) t = run(0, &c);

        g_assert_cmpstr(report_get(t, "status"), ==, "0");
        assert_contains(report_get(t, "output"), "id-mapped (user: uids 0:61001:1, gids 0:61001:1)");
        g_assert_cmpstr(report_get(t, "hello"), ==, "61001:61001");
        g_assert_cmpstr(report_get(t, "far"), ==, "65534:65534");
        assert_contains(report_get(t, "list"), "idmap=user");
        g_assert_cmpstr(report_get(t, "unmount"), ==, "ok");
        calls_assert_clean(daemon_pid, &baseline);
}

/* --userns: the caller's own namespace file from the host is the initial one: refused. */
static void test_userns_initial_refused(void) {
        g_autofree char *dir = make_dir("initial");
        const CliCall c = { (const char *const[]) { "mount", "--userns=/proc/self/ns/user", "@IMG",
                                                    "@DIR", NULL }, dir };
        g_autoptr(GHashTable) t = run(0, &c);

        g_assert_cmpstr(report_get(t, "status"), !=, "0");
        assert_contains(report_get(t, "output"), "initial user namespace");
        calls_assert_clean(daemon_pid, &baseline);
}

/* Usage errors, found before anything is sent. */
static void test_usage_errors(void) {
        g_autofree char *dir = make_dir("usage");
        const CliCall c1 = { (const char *const[]) { "mount", "--idmap=user", "--userns=/x",
                                                     "@IMG", "@DIR", NULL }, dir };
        const CliCall c2 = { (const char *const[]) { "mount", "--userns=", "@IMG", "@DIR", NULL },
                             dir };
        const CliCall c3 = { (const char *const[]) { "mount", "--userns=/nonexistent", "@IMG",
                                                     "@DIR", NULL }, dir };
        g_autoptr(GHashTable) t1 = run(0, &c1);
        g_autoptr(GHashTable) t2 = run(0, &c2);
        g_autoptr(GHashTable) t3 = run(0, &c3);

        g_assert_cmpstr(report_get(t1, "status"), ==, "2");
        assert_contains(report_get(t1, "output"), "--userns only goes with --idmap=namespace");
        g_assert_cmpstr(report_get(t2, "status"), ==, "2");
        assert_contains(report_get(t2, "output"), "--userns needs a FILE");
        g_assert_cmpstr(report_get(t3, "status"), !=, "0");
        assert_contains(report_get(t3, "output"), "Cannot open the user namespace /nonexistent");
        calls_assert_clean(daemon_pid, &baseline);
}

int main(int argc, char *argv[]) {
        const HarnessEntry entries[] = {
                { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644, 0, 0 },
                { HARNESS_ENTRY_FILE, "far.txt", "far\n", 0644, 70000, 70000 },
                { 0 },
        };
        const HarnessImageSpec spec = { .label = "cli-idmap", .entries = entries };

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path() || !g_getenv("UM_USERMOUNT")) {
                printf("1..0 # SKIP usermountd or usermount was not built\n");
                return 0;
        }
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/cli-idmap/userns-default-namespace", test_userns_default);
        g_test_add_func("/cli-idmap/userns-none", test_userns_none);
        g_test_add_func("/cli-idmap/host-user", test_host_user);
        g_test_add_func("/cli-idmap/userns-initial-refused", test_userns_initial_refused);
        g_test_add_func("/cli-idmap/usage-errors", test_usage_errors);
        return g_test_run();
}
