/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Attacks on the userspace drivers (issue 14) through the real usermountd, the real
 * polkitd and the real drivers, by unprivileged callers: a caller that wants the kernel
 * to parse its bytes after all, sources that are no image, a read-only fd asked to be
 * written, options meant for the driver's -o string, a driver that stops answering, a
 * caller that kills its own driver again and again, concurrent drivers of two users that
 * must never share a uid, and an image that serves setuid files and device nodes.
 * Each test asserts the safe outcome and that nothing was left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

/* The shipped Driver=auto, instead of the harness's default configuration. */
#define CONF_AUTO "[General]\nDriver=auto\n"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *ext4_image, *squashfs_image, *comma_image, *suid_image;

/* umtest1 may do everything but unmount others' mounts; umtest2 everything but the
 * kernel driver where the userspace one is the rule. */
static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (action.id == 'org.freedesktop.usermount1.mount-kernel-driver')\n"
        "                return subject.user == 'umtest1' ? polkit.Result.YES : polkit.Result.NO;\n"
        "        if (action.id == 'org.freedesktop.usermount1.unmount-others')\n"
        "                return polkit.Result.NO;\n"
        "        if (subject.user == 'umtest1' || subject.user == 'umtest2')\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- The caller side ------------------------------------------------------------------- */

typedef enum SourceKindT {
        SRC_RW,      /* the image, O_RDWR */
        SRC_RO,      /* the image, O_RDONLY */
        SRC_WRONLY,  /* the image, O_WRONLY */
        SRC_OPATH,   /* the image, O_PATH */
        SRC_FIFO,
        SRC_SOCKET,
        SRC_DEVNULL,
        SRC_DEVZERO,
        SRC_DIR,
} SourceKindT;

typedef enum AttackCallKind {
        ACALL_OPEN_MOUNT, /* OpenMount; with target: attach and probe; with hold: hold it */
        ACALL_MOUNT_FD,
        ACALL_UNMOUNT,
        ACALL_LIST,
} AttackCallKind;

typedef struct ACall {
        AttackCallKind kind;
        SourceKindT source;
        const char *path;     /* the image; for ACALL_UNMOUNT the mount point */
        const char *options;
        Param params[4];
        const char *target;   /* ACALL_OPEN_MOUNT: attach here and probe */
        bool hold;            /* report "held=yes" and hold the mount until released */
        bool probe_files;     /* ACALL_MOUNT_FD: use what the image serves (probe_files()) */
} ACall;

static int open_source(const ACall *c) {
        int sv[2];

        switch (c->source) {
        case SRC_RW:
                return open(c->path, O_RDWR | O_CLOEXEC);
        case SRC_RO:
                return open(c->path, O_RDONLY | O_CLOEXEC);
        case SRC_WRONLY:
                return open(c->path, O_WRONLY | O_CLOEXEC);
        case SRC_OPATH:
                return open(c->path, O_PATH | O_CLOEXEC);
        case SRC_FIFO: {
                g_autofree char *fifo = g_strdup_printf("/tmp/um-attack-fifo-%d", (int) getpid());
                int fd;

                g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
                fd = open(fifo, O_RDWR | O_CLOEXEC);
                unlink(fifo);
                return fd;
        }
        case SRC_SOCKET:
                g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
                return sv[0];
        case SRC_DEVNULL:
                return open("/dev/null", O_RDWR | O_CLOEXEC);
        case SRC_DEVZERO:
                return open("/dev/zero", O_RDWR | O_CLOEXEC);
        case SRC_DIR:
                return open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        return -EINVAL;
}

/* What a caller does with what the image serves: a setuid-root program, a device node
 * for /dev/mem, a symlink to /etc/shadow. */
static void probe_files(const char *dir) {
        g_autofree char *mem = g_build_filename(dir, "mem", NULL);
        g_autofree char *suid = g_build_filename(dir, "suid-id", NULL);
        g_autofree char *link = g_build_filename(dir, "shadow", NULL);
        const char *argv[] = { suid, "-u", NULL };
        g_autoptr(GError) err = NULL;
        g_autofree char *out = NULL;
        int r, status = 0;

        r = open(mem, O_RDONLY | O_CLOEXEC);
        harness_report("open-mem=%s", calls_errno_name(r < 0 ? -errno : 0));
        if (r >= 0)
                close(r);
        r = open(link, O_RDONLY | O_CLOEXEC);
        harness_report("open-shadow=%s", calls_errno_name(r < 0 ? -errno : 0));
        if (r >= 0)
                close(r);
        if (g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                         &out, NULL, &status, &err) && status == 0)
                harness_report("suid-euid=%s", g_strstrip(out));
        else
                harness_report("suid-euid=failed");
}

/* A container with the mount: tries to unlock it, attaches it, uses what it serves. */
static void probe_mount(int fd, const char *target) {
        struct mount_attr a = { .attr_clr = MOUNT_ATTR_NODEV };
        g_autofree char *mem = g_build_filename(target, "mem", NULL);
        int r;

        r = mount_setattr(fd, "", AT_EMPTY_PATH, &a, sizeof(a));
        harness_report("clear-nodev=%s", calls_errno_name(r < 0 ? -errno : 0));
        a = (struct mount_attr) { .attr_clr = MOUNT_ATTR_NOSUID };
        r = mount_setattr(fd, "", AT_EMPTY_PATH, &a, sizeof(a));
        harness_report("clear-nosuid=%s", calls_errno_name(r < 0 ? -errno : 0));
        r = move_mount(fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH);
        harness_report("attach=%s", calls_errno_name(r < 0 ? -errno : 0));
        if (r < 0)
                return;
        r = open(mem, O_RDONLY | O_CLOEXEC);
        harness_report("ns-open-mem=%s", calls_errno_name(r < 0 ? -errno : 0));
        if (r >= 0)
                close(r);
        r = umount2(target, MNT_DETACH);
        harness_report("detach=%s", calls_errno_name(r < 0 ? -errno : 0));
}

static int attack_caller(void *userdata) {
        const ACall *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int source = -EBADF, mount_fd = -EBADF;
        const char *method = c->kind == ACALL_OPEN_MOUNT ? "OpenMount" :
                             c->kind == ACALL_MOUNT_FD   ? "MountFd" :
                             c->kind == ACALL_UNMOUNT    ? "Unmount" :
                                                           "ListMounts";
        sd_bus *bus = NULL;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, method), >=, 0);
        if (c->kind == ACALL_OPEN_MOUNT || c->kind == ACALL_MOUNT_FD) {
                source = open_source(c);
                g_assert_cmpint(source, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", source, "",
                                                      strempty(c->options)), >=, 0);
        } else if (c->kind == ACALL_UNMOUNT)
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
        g_assert_cmpint(calls_append_params(call, c->kind == ACALL_OPEN_MOUNT ||
                                                          c->kind == ACALL_MOUNT_FD ? c->params
                                                                                    : NULL),
                        >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0) {
                if (c->kind == ACALL_OPEN_MOUNT) {
                        int fd;

                        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
                        mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                        calls_report_info(reply, "info-");
                } else if (c->kind == ACALL_MOUNT_FD) {
                        const char *mp;

                        g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                        harness_report("mount-point=%s", mp);
                        calls_report_info(reply, "info-");
                        if (c->probe_files)
                                probe_files(mp);
                } else if (c->kind == ACALL_LIST)
                        calls_report_mount_list(reply);
                if (c->path && c->kind != ACALL_UNMOUNT)
                        harness_report("image-loops=%d", calls_count_loops_on(c->path));
        }
        reply = sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        if (mount_fd >= 0 && c->hold) {
                harness_report("held=yes");
                harness_await_release();
        } else if (mount_fd >= 0 && c->target)
                probe_mount(mount_fd, c->target);
        return 0;
}

/* ---- The test side ----------------------------------------------------------------------- */

static GHashTable *acall_as(uid_t uid, HarnessRunFlags flags, const ACall *c) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, uid, flags, attack_caller, (void *) c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

/* OpenMount callers in a user + mount namespace of their own, the others in the host's. */
static GHashTable *acall(uid_t uid, const ACall *c) {
        return acall_as(uid, c->kind == ACALL_OPEN_MOUNT ? HARNESS_NEW_USERNS : 0, c);
}

static HarnessCaller *spawn_holder(uid_t uid, const ACall *c) {
        HarnessCaller *h = NULL;
        g_autofree char *line = NULL;

        g_assert_cmpint(harness_caller_spawn(uid, uid, HARNESS_NEW_USERNS, attack_caller,
                                             (void *) c, &h), ==, 0);
        for (;;) {
                g_clear_pointer(&line, g_free);
                g_assert_cmpint(harness_caller_read_line(h, 60000, &line), ==, 0);
                if (g_str_has_prefix(line, "result=") && !streq(line, "result=ok"))
                        g_error("holder failed: %s", line);
                if (streq(line, "held=yes"))
                        return h;
        }
}

static void release_holder(HarnessCaller *h) {
        g_assert_cmpint(harness_caller_release(h), ==, 0);
        g_assert_cmpint(harness_caller_wait(h, 30000, NULL), ==, 0);
        harness_caller_free(h);
}

static pid_t the_driver(void) {
        g_autoptr(GArray) pids = NULL;

        calls_await_drivers(1);
        pids = calls_running_drivers();
        return g_array_index(pids, pid_t, 0);
}

static void assert_clean(void) {
        calls_await_drivers(0);
        calls_assert_clean(daemon_pid, &baseline);
}

static char *make_target(const char *name, uid_t uid) {
        char *dir = g_build_filename(harness_tmpdir(), "attack-targets", name, NULL);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, uid, uid), ==, 0);
        return dir;
}

static void write_conf(const char *contents) {
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", contents), ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
        g_usleep(200 * 1000);
}

/* The driver's argument after "-o". */
static char *driver_options(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/cmdline", (int) pid);
        g_autofree char *text = NULL;
        gsize len = 0;

        g_assert_true(g_file_get_contents(path, &text, &len, NULL));
        for (gsize o = 0; o < len; o += strlen(text + o) + 1)
                if (streq(text + o, "-o") && o + 3 < len)
                        return g_strdup(text + o + 3);
        return NULL;
}

/* The access mode of the driver's fd n. */
static int driver_fd_accmode(pid_t pid, int n) {
        g_autofree char *path = g_strdup_printf("/proc/%d/fdinfo/%d", (int) pid, n);
        g_autofree char *text = NULL;
        const char *flags;

        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        flags = strstr(text, "flags:");
        g_assert_nonnull(flags);
        return (int) (g_ascii_strtoull(flags + 6, NULL, 8) & O_ACCMODE);
}

/* ---- Tests ----------------------------------------------------------------------------- */

/*
 * The caller controls the bytes and wants the kernel to parse them (a kernel ext4 bug is
 * its way in). driver=kernel needs mount-kernel-driver where the userspace driver is the
 * rule; asking instead for what only the kernel can do (idmap=namespace on ext4) must
 * need it just the same, or the rule protects nobody who attacks on purpose.
 */
static void test_idmap_namespace_kernel_bypass(void) {
        const ACall c = { .kind = ACALL_OPEN_MOUNT, .source = SRC_RW, .path = ext4_image,
                          .params = { { "idmap", "s", "namespace" }, {} } };
        g_autoptr(GHashTable) t = acall(HARNESS_UID_USER2, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
        g_assert_nonnull(strstr(strempty(report_get(t, "message")), "mount-kernel-driver"));
        g_assert_null(report_get(t, "image-loops"));
        assert_clean();

        /* Who has the action gets the kernel's driver for it. */
        g_autoptr(GHashTable) t1 = acall(HARNESS_UID_USER1, &c);
        g_assert_cmpstr(report_get(t1, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t1, "info-driver"), ==, "kernel");
        assert_clean();

        /* And driver=kernel itself, the documented way, stays refused. */
        const ACall k = { .kind = ACALL_OPEN_MOUNT, .source = SRC_RW, .path = ext4_image,
                          .params = { { "driver", "s", "kernel" }, {} } };
        g_autoptr(GHashTable) t2 = acall(HARNESS_UID_USER2, &k);
        g_assert_cmpstr(report_get(t2, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
        assert_clean();
}

/* Sources that are no image, with driver=userspace: refused before any driver starts. */
static void test_bad_sources(void) {
        static const struct {
                SourceKindT source;
                const char *name;
        } bad[] = {
                { SRC_WRONLY, "write-only fd" }, { SRC_OPATH, "O_PATH fd" },
                { SRC_FIFO, "fifo" },            { SRC_SOCKET, "socket" },
                { SRC_DEVNULL, "/dev/null" },    { SRC_DEVZERO, "/dev/zero" },
                { SRC_DIR, "directory" },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                const ACall c = { .kind = ACALL_OPEN_MOUNT, .source = bad[i].source,
                                  .path = ext4_image,
                                  .params = { { "driver", "s", "userspace" }, {} } };
                g_autoptr(GHashTable) t = acall(HARNESS_UID_USER1, &c);

                g_test_message("%s: %s %s", bad[i].name, report_get(t, "result"),
                               strempty(report_get(t, "message")));
                g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_INVALID_SOURCE);
                assert_clean();
        }
}

/* A read-only fd: never written, not even by a compromised driver. rw is refused; the
 * default mount is read-only and its driver holds the source read-only. An O_RDWR fd
 * mounted "ro" is reopened read-only for the driver as well. */
static void test_read_only_source(void) {
        const ACall rw = { .kind = ACALL_OPEN_MOUNT, .source = SRC_RO, .path = ext4_image,
                           .options = "rw" };
        g_autoptr(GHashTable) t = acall(HARNESS_UID_USER1, &rw);

        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_OPTION_NOT_ALLOWED);
        assert_clean();

        static const struct {
                SourceKindT source;
                const char *options;
        } ro[] = { { SRC_RO, NULL }, { SRC_RW, "ro" } };
        for (size_t i = 0; i < G_N_ELEMENTS(ro); i++) {
                const ACall c = { .kind = ACALL_OPEN_MOUNT, .source = ro[i].source,
                                  .path = ext4_image, .options = ro[i].options, .hold = true };
                HarnessCaller *h = spawn_holder(HARNESS_UID_USER1, &c);
                pid_t pid = the_driver();
                g_autofree char *o = driver_options(pid);

                g_assert_true(g_str_has_prefix(strempty(o), "ro"));
                g_assert_cmpint(driver_fd_accmode(pid, 5), ==, O_RDONLY);
                release_holder(h);
                assert_clean();
        }
}

/* Options meant for the driver or for the FUSE mount never get there; a label with
 * commas (the image's bytes) never reaches the driver's command line. */
static void test_option_injection(void) {
        static const char *const injected[] = {
                "allow_other", "ro,allow_other", "allow_root", "user_id=0", "group_id=0",
                "default_permissions", "uid=0", "gid=0", "ro,uid=0", "fd=3",
                "rootmode=40000", "max_read=1", "blksize=4096", "offset=0", "fsname=x",
                "subtype=x", "rw+", "ro,rw+", "kernel_cache", "modules=subdir,subdir=/",
                "ro\\,allow_other", "ro=1", "ro,,allow_other", "no_detach", "debug",
                "umask=0", "dmask=0", "fmask=0", "permissions", "nodev,allow_other",
        };

        for (size_t i = 0; i < G_N_ELEMENTS(injected); i++) {
                const ACall c = { .kind = ACALL_OPEN_MOUNT, .source = SRC_RW,
                                  .path = ext4_image, .options = injected[i] };
                g_autoptr(GHashTable) t = acall(HARNESS_UID_USER1, &c);
                const char *result = report_get(t, "result");

                g_test_message("options '%s': %s", injected[i], result);
                if (!streq(result, UM_ERROR_OPTION_NOT_ALLOWED) &&
                    !streq(result, UM_ERROR_INVALID_ARGUMENT))
                        g_error("options '%s' gave %s", injected[i], result);
                assert_clean();
        }

        /* The label "x,allow_other": the driver gets numbers only. */
        const ACall c = { .kind = ACALL_OPEN_MOUNT, .source = SRC_RW, .path = comma_image,
                          .options = "noatime", .hold = true };
        HarnessCaller *h = spawn_holder(HARNESS_UID_USER1, &c);
        g_autofree char *o = driver_options(the_driver());
        g_autoptr(GRegex) re = g_regex_new("^(ro|rw)(,uid=[0-9]+,gid=[0-9]+)?$", 0, 0, NULL);

        g_test_message("driver options: %s", o);
        g_assert_true(g_regex_match(re, strempty(o), 0, NULL));
        release_holder(h);
        assert_clean();
}

/* Without allow_other only the caller may use the mount: root and other users get EACCES
 * at once, also from a driver that stopped answering (a compromised or hung one), and the
 * daemon lists and unmounts it without waiting for the driver. */
typedef struct StatArgs {
        const char *path;
} StatArgs;

static int stat_caller(void *userdata) {
        const StatArgs *a = userdata;
        struct stat st;
        int r;

        alarm(5); /* a hang is a failure, not a stuck test */
        r = stat(a->path, &st);
        harness_report("stat=%s", calls_errno_name(r < 0 ? -errno : 0));
        return 0;
}

static char *stat_as(uid_t uid, const char *path) {
        StatArgs a = { .path = path };
        g_autoptr(GHashTable) t = NULL;
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, uid, 0, stat_caller, &a, &output), ==, 0);
        t = calls_parse_report(output);
        return g_strdup(report_get(t, "stat"));
}

static void test_stopped_driver(void) {
        const ACall c = { .kind = ACALL_MOUNT_FD, .source = SRC_RW, .path = ext4_image };
        g_autoptr(GHashTable) t = acall(HARNESS_UID_USER1, &c);
        g_autofree char *hello = NULL, *s1 = NULL, *s2 = NULL;
        const char *mp = report_get(t, "mount-point");
        struct stat st;
        pid_t pid;
        gint64 t0;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        hello = g_build_filename(mp, "hello.txt", NULL);
        pid = the_driver();
        s1 = stat_as(HARNESS_UID_USER1, hello);
        g_assert_cmpstr(s1, ==, "ok");

        g_assert_cmpint(kill(pid, SIGSTOP), ==, 0);
        t0 = g_get_monotonic_time();
        g_assert_cmpint(stat(hello, &st), ==, -1);
        g_assert_cmpint(errno, ==, EACCES);
        g_assert_cmpint(stat(mp, &st), ==, -1);
        g_assert_cmpint(errno, ==, EACCES);
        s2 = stat_as(HARNESS_UID_USER2, hello);
        g_assert_cmpstr(s2, ==, "EACCES");
        g_assert_cmpint(g_get_monotonic_time() - t0, <, 3 * G_USEC_PER_SEC);

        const ACall list = { .kind = ACALL_LIST };
        g_autoptr(GHashTable) l = acall(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(l, "count"), ==, "1");
        const ACall un = { .kind = ACALL_UNMOUNT, .path = mp };
        g_autoptr(GHashTable) u = acall(HARNESS_UID_USER1, &un);
        g_assert_cmpstr(report_get(u, "result"), ==, "ok");
        g_assert_cmpint(g_get_monotonic_time() - t0, <, 30 * G_USEC_PER_SEC);
        g_assert_cmpint(kill(pid, SIGCONT), ==, 0);
        assert_clean();
}

/* A caller that kills its own driver again and again: each registered mount goes with
 * its driver, the counts return, and the daemon serves on. */
static void test_kill_own_driver(void) {
        write_conf(CONF_AUTO "[Limits]\nMaxDriversPerUser=1\n");
        for (int i = 0; i < 5; i++) {
                const ACall c = { .kind = ACALL_MOUNT_FD, .source = SRC_RW, .path = ext4_image };
                g_autoptr(GHashTable) t = NULL;
                const char *mp;

                calls_forget_signals();
                t = acall(HARNESS_UID_USER1, &c);
                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                mp = report_get(t, "mount-point");
                calls_await_signal("MountAdded", mp);
                g_assert_cmpint(kill(the_driver(), i % 2 ? SIGTERM : SIGKILL), ==, 0);
                calls_await_signal("MountRemoved", mp);
        }
        /* Held OpenMounts whose drivers die, in a row: never counted twice. */
        for (int i = 0; i < 3; i++) {
                const ACall c = { .kind = ACALL_OPEN_MOUNT, .source = SRC_RW,
                                  .path = squashfs_image, .hold = true };
                HarnessCaller *h = spawn_holder(HARNESS_UID_USER1, &c);

                g_assert_cmpint(kill(the_driver(), SIGKILL), ==, 0);
                release_holder(h);
                calls_await_drivers(0);
        }
        const ACall list = { .kind = ACALL_LIST };
        g_autoptr(GHashTable) l = acall(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(l, "count"), ==, "0");
        write_conf(CONF_AUTO);
        assert_clean();
}

/* Drivers of two users started at once never share a uid (the claim under concurrency),
 * and each uid is one no process used before. */
static void test_concurrent_uids(void) {
        HarnessCaller *h[8] = {};
        g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_autoptr(GArray) pids = NULL;
        const ACall c = { .kind = ACALL_OPEN_MOUNT, .source = SRC_RO, .path = squashfs_image,
                          .hold = true };

        for (size_t i = 0; i < G_N_ELEMENTS(h); i++)
                g_assert_cmpint(harness_caller_spawn(i % 2 ? HARNESS_UID_USER2 : HARNESS_UID_USER1,
                                                     i % 2 ? HARNESS_UID_USER2 : HARNESS_UID_USER1,
                                                     HARNESS_NEW_USERNS, attack_caller,
                                                     (void *) &c, &h[i]), ==, 0);
        for (size_t i = 0; i < G_N_ELEMENTS(h); i++) {
                g_autofree char *line = NULL;

                do {
                        g_clear_pointer(&line, g_free);
                        g_assert_cmpint(harness_caller_read_line(h[i], 60000, &line), ==, 0);
                        g_assert_true(!g_str_has_prefix(line, "result=") ||
                                      streq(line, "result=ok"));
                } while (!streq(line, "held=yes"));
        }
        pids = calls_running_drivers();
        g_assert_cmpuint(pids->len, ==, G_N_ELEMENTS(h));
        for (guint i = 0; i < pids->len; i++) {
                unsigned uid;

                g_assert_true(calls_process_uid(g_array_index(pids, pid_t, i), &uid));
                g_assert_false(g_hash_table_contains(seen, GUINT_TO_POINTER(uid)));
                g_hash_table_add(seen, GUINT_TO_POINTER(uid));
        }
        for (size_t i = 0; i < G_N_ELEMENTS(h); i++)
                release_holder(h[i]);
        assert_clean();
}

/* A process that runs as the first uid of DriverUidRange= without its lock (nothing of
 * ours: an administrator's mistake, or a program that squats it): the driver's exec finds
 * the uid in use, and the start takes the next one. */
static void test_uid_squatter(void) {
        const unsigned first = 1879048448u; /* DriverUidRange='s default */
        const ACall c = { .kind = ACALL_OPEN_MOUNT, .source = SRC_RO, .path = squashfs_image,
                          .hold = true };
        g_autoptr(GArray) pids = NULL;
        g_autofree char *line = NULL;
        HarnessCaller *h = NULL;
        int sync_pipe[2];
        unsigned uid;
        pid_t squatter;
        char b;

        g_assert_cmpint(pipe2(sync_pipe, O_CLOEXEC), ==, 0);
        squatter = fork();
        g_assert_cmpint(squatter, >=, 0);
        if (squatter == 0) {
                if (setresgid(first, first, first) < 0 || setresuid(first, first, first) < 0)
                        _exit(1);
                (void) !write(sync_pipe[1], "x", 1);
                pause();
                _exit(0);
        }
        g_assert_cmpint(read(sync_pipe[0], &b, 1), ==, 1);
        close(sync_pipe[0]);
        close(sync_pipe[1]);
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_UID_USER1,
                                             HARNESS_NEW_USERNS, attack_caller, (void *) &c, &h),
                        ==, 0);
        do {
                g_clear_pointer(&line, g_free);
                g_assert_cmpint(harness_caller_read_line(h, 60000, &line), ==, 0);
                g_assert_true(!g_str_has_prefix(line, "result=") || streq(line, "result=ok"));
        } while (!streq(line, "held=yes"));
        /* The processes of the range: the squatter and the driver. */
        pids = calls_running_drivers();
        g_assert_cmpuint(pids->len, ==, 2);
        for (guint i = 0; i < pids->len; i++)
                if (g_array_index(pids, pid_t, i) != squatter) {
                        g_assert_true(calls_process_uid(g_array_index(pids, pid_t, i), &uid));
                        g_assert_cmpuint(uid, ==, first + 1);
                }
        release_holder(h);
        g_assert_cmpint(kill(squatter, SIGKILL), ==, 0);
        g_assert_cmpint(waitpid(squatter, NULL, 0), ==, squatter);
        assert_clean();
}

/* An image with a setuid-root program, a world-readable /dev/mem node and a symlink to
 * /etc/shadow, mounted with exec and its own ids (idmap none): the program runs as the
 * caller, the node cannot be opened, the flags cannot be cleared. */
static void test_suid_and_devices(void) {
        const ACall c = { .kind = ACALL_MOUNT_FD, .source = SRC_RW, .path = suid_image,
                          .probe_files = true,
                          .params = { { "exec", "b", "true" }, { "idmap", "s", "none" }, {} } };
        g_autoptr(GHashTable) t = acall(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        g_assert_cmpstr(report_get(t, "open-mem"), ==, "EACCES");
        g_assert_cmpstr(report_get(t, "open-shadow"), ==, "EACCES");
        g_assert_cmpstr(report_get(t, "suid-euid"), ==, G_STRINGIFY(HARNESS_UID_USER1));
        const ACall un = { .kind = ACALL_UNMOUNT, .path = report_get(t, "mount-point") };
        g_autoptr(GHashTable) u = acall(HARNESS_UID_USER1, &un);
        g_assert_cmpstr(report_get(u, "result"), ==, "ok");
        assert_clean();

        /* A container: cannot unlock nodev/nosuid, and the node stays closed. */
        g_autofree char *target = make_target("suid", HARNESS_UID_USER1);
        const ACall o = { .kind = ACALL_OPEN_MOUNT, .source = SRC_RW, .path = suid_image,
                          .target = target };
        g_autoptr(GHashTable) t2 = acall(HARNESS_UID_USER1, &o);

        g_assert_cmpstr(report_get(t2, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t2, "clear-nodev"), ==, "EPERM");
        g_assert_cmpstr(report_get(t2, "clear-nosuid"), ==, "EPERM");
        g_assert_cmpstr(report_get(t2, "attach"), ==, "ok");
        g_assert_cmpstr(report_get(t2, "ns-open-mem"), ==, "EACCES");
        g_assert_cmpstr(report_get(t2, "detach"), ==, "ok");
        assert_clean();
}

static void make_images(void) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644 }, {} };
        const HarnessEntry suid[] = {
                { HARNESS_ENTRY_COPY, "suid-id", "/usr/bin/id", 04755, 0, 0 },
                { HARNESS_ENTRY_CHAR_DEVICE, "mem", NULL, 0666, 0, 0, 1, 1 },
                { HARNESS_ENTRY_SYMLINK, "shadow", "/etc/shadow" },
                {},
        };
        const HarnessImageSpec ext4 = { .label = "ua-ext4", .entries = entries,
                                        .root_uid = HARNESS_UID_USER1,
                                        .root_gid = HARNESS_GID_USER1 };
        const HarnessImageSpec comma = { .label = "x,allow_other", .entries = entries,
                                         .root_uid = HARNESS_UID_USER1,
                                         .root_gid = HARNESS_GID_USER1 };
        const HarnessImageSpec suid_spec = { .label = "ua-suid", .entries = suid,
                                             .root_uid = HARNESS_UID_USER1,
                                             .root_gid = HARNESS_GID_USER1 };
        const HarnessImageSpec squash = { .entries = entries };

        g_assert_cmpint(harness_make_image("ext4", &ext4, &ext4_image), ==, 0);
        g_assert_cmpint(harness_make_image("ext4", &comma, &comma_image), ==, 0);
        g_assert_cmpint(harness_make_image("ext4", &suid_spec, &suid_image), ==, 0);
        g_assert_cmpint(harness_make_image("squashfs", &squash, &squashfs_image), ==, 0);
        g_assert_cmpint(chmod(ext4_image, 0666), ==, 0);
        g_assert_cmpint(chmod(comma_image, 0666), ==, 0);
        g_assert_cmpint(chmod(suid_image, 0666), ==, 0);
        g_assert_cmpint(chmod(squashfs_image, 0666), ==, 0);
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        if (access("/usr/bin/fuse2fs", X_OK) < 0 && access("/usr/sbin/fuse2fs", X_OK) < 0) {
                printf("1..0 # SKIP fuse2fs is not installed\n");
                return 0;
        }
        make_images();
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", CONF_AUTO), ==, 0);
        calls_watch_signals();
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        calls_subscribe();
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/userspace-attack/idmap-namespace-kernel-bypass",
                        test_idmap_namespace_kernel_bypass);
        g_test_add_func("/userspace-attack/bad-sources", test_bad_sources);
        g_test_add_func("/userspace-attack/read-only-source", test_read_only_source);
        g_test_add_func("/userspace-attack/option-injection", test_option_injection);
        g_test_add_func("/userspace-attack/stopped-driver", test_stopped_driver);
        g_test_add_func("/userspace-attack/kill-own-driver", test_kill_own_driver);
        g_test_add_func("/userspace-attack/concurrent-uids", test_concurrent_uids);
        g_test_add_func("/userspace-attack/uid-squatter", test_uid_squatter);
        g_test_add_func("/userspace-attack/suid-and-devices", test_suid_and_devices);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
