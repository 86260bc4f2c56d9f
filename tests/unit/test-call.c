/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus edge without a bus daemon: real method call messages of every method, valid
 * and not, read into a MountCall by bus_parse_call() (request-dbus.h), the fields it fills and
 * the InvalidArgument (or other) sentence of each refusal; and the table-driven params
 * reader (busparams.h) on its own, with a table of the test's.
 */
#include <fcntl.h>
#include <glib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "request-dbus.h"
#include "busparams.h"
#include "call.h"
#include "conf.h"
#include "driverpolicy.h"
#include "macro.h"
#include "policy.h"
#include "source.h"

static sd_bus *bus;
static int peer = -EBADF; /* the socketpair's other end, which nobody reads */
static Conf *conf;

/* A bus that was never connected cannot make messages; one started on a socketpair can
 * (as in tests/fuzz/fuzz-params.c). */
static void setup(void) {
        int sv[2];

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        g_assert_cmpint(sd_bus_new(&bus), >=, 0);
        g_assert_cmpint(sd_bus_set_fd(bus, sv[0], sv[0]), >=, 0);
        g_assert_cmpint(sd_bus_start(bus), >=, 0);
        peer = sv[1];
        g_assert_cmpint(conf_new_default(&conf), ==, 0);
}

/* A sealed call of member with arguments types (sd_bus_message_append()), read from its
 * start as the vtable hands it to a method. */
static sd_bus_message *new_call(const char *member, const char *types, ...) {
        sd_bus_message *m = NULL;
        va_list ap;
        int r;

        g_assert_cmpint(sd_bus_message_new_method_call(bus, &m, "org.freedesktop.UserMount1",
                                                       "/org/freedesktop/UserMount1",
                                                       "org.freedesktop.UserMount1.Manager",
                                                       member), >=, 0);
        if (types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                g_assert_cmpint(r, >=, 0);
        }
        g_assert_cmpint(sd_bus_message_seal(m, 1, 0), >=, 0);
        g_assert_cmpint(sd_bus_message_rewind(m, true), >=, 0);
        return m;
}

/* Parses m (taken) as method into call, which the test then owns (call_done()). */
static int parse(CallMethod method, sd_bus_message *m, MountCall *call, UmError *error) {
        call_init(call, method, m);
        sd_bus_message_unref(m);
        return bus_parse_call(call, conf, error);
}

/* m (taken) as method is refused with kind and exactly message. */
static void assert_refused(CallMethod method, sd_bus_message *m, UmErrorKind kind,
                           const char *message) {
        MountCall call;
        UmError e = {};
        int r;

        r = parse(method, m, &call, &e);
        g_assert_cmpint(r, <, 0);
        g_assert_cmpint(e.kind, ==, kind);
        g_assert_cmpstr(e.message, ==, message);
        call_done(&call);
}

static void assert_invalid(CallMethod method, sd_bus_message *m, const char *message) {
        assert_refused(method, m, UM_ERROR_KIND_INVALID_ARGUMENT, message);
}

static int open_null(int flags) {
        int fd = open("/dev/null", flags | O_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        return fd;
}

static void test_open_mount(void) {
        _cleanup_close_ int fd = open_null(O_RDONLY);
        MountCall call;
        UmError e = {};

        g_assert_cmpint(parse(METHOD_OPEN_MOUNT,
                              new_call("OpenMount", "hssa{sv}", fd, "", "noatime", 5,
                                       "read-only", "b", 1, "exec", "b", 0, "idmap", "s",
                                       "user", "interactive", "b", 1, "driver", "s",
                                       "userspace"),
                              &call, &e), ==, 0);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_NONE);
        g_assert_cmpint(call.method, ==, METHOD_OPEN_MOUNT);
        g_assert_nonnull(call.message);
        g_assert_null(call.device_path);
        /* A copy of its own, not the caller's number. */
        g_assert_cmpint(call.source_fd, >=, 3);
        g_assert_cmpint(call.source_fd, !=, fd);
        g_assert_true(call.source_read_only);
        g_assert_cmpstr(call.source_path, ==, "/dev/null");
        g_assert_cmpstr(call.fstype, ==, "");
        g_assert_cmpstr(call.options, ==, "noatime");
        g_assert_null(call.params.target);
        g_assert_true(call.params.read_only);
        g_assert_false(call.params.exec);
        g_assert_true(call.params.interactive);
        g_assert_cmpint(call.params.idmap, ==, IDMAP_USER);
        g_assert_true(call.params.idmap_given);
        g_assert_cmpint(call.params.driver, ==, DRIVER_USERSPACE);
        g_assert_cmpint(call.params.userns_fd, ==, -EBADF);
        g_assert_false(call.params.userns_given);
        /* The caller stage fills the caller; the edge leaves it empty. */
        g_assert_cmpint(call.caller.pidfd, ==, -EBADF);
        g_assert_null(call.caller.user_name);
        call_done(&call);
        g_assert_null(call.message);
        g_assert_cmpint(call.source_fd, ==, -EBADF);
}

static void test_mount_fd(void) {
        _cleanup_close_ int fd = open_null(O_RDWR);
        MountCall call;
        UmError e = {};

        g_assert_cmpint(parse(METHOD_MOUNT_FD,
                              new_call("MountFd", "hssa{sv}", fd, "ext4", "", 1, "target",
                                       "s", "/home/u/mnt"),
                              &call, &e), ==, 0);
        g_assert_cmpuint(call.params.partition, ==, 0);
        g_assert_false(call.params.partition_given);
        g_assert_cmpint(call.source_fd, >=, 3);
        g_assert_false(call.source_read_only);
        g_assert_cmpstr(call.fstype, ==, "ext4");
        g_assert_cmpstr(call.params.target, ==, "/home/u/mnt");
        g_assert_false(call.params.read_only);
        g_assert_cmpint(call.params.idmap, ==, IDMAP_NONE);
        g_assert_false(call.params.idmap_given);
        g_assert_cmpint(call.params.driver, ==, -1);
        call_done(&call);

        g_assert_cmpint(parse(METHOD_MOUNT_FD,
                              new_call("MountFd", "hssa{sv}", fd, "", "", 1, "partition", "u",
                                       UINT32_C(4294967295)),
                              &call, &e), ==, 0);
        g_assert_cmpuint(call.params.partition, ==, UINT32_MAX);
        g_assert_true(call.params.partition_given);
        call_done(&call);
}

static void test_mount(void) {
        MountCall call;
        UmError e = {};

        g_assert_cmpint(parse(METHOD_MOUNT,
                              new_call("Mount", "sssa{sv}", "/dev/disk/by-label/STICK", "vfat",
                                       "", 0),
                              &call, &e), ==, 0);
        g_assert_cmpstr(call.device_path, ==, "/dev/disk/by-label/STICK");
        g_assert_cmpint(call.source_fd, ==, -EBADF);
        g_assert_null(call.source_path);
        g_assert_cmpstr(call.fstype, ==, "vfat");
        g_assert_cmpstr(call.options, ==, "");
        g_assert_null(call.params.target);
        call_done(&call);
}

static void test_mount_userns(void) {
        _cleanup_close_ int ns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        MountCall call;
        UmError e = {};

        g_assert_cmpint(ns, >=, 0);
        g_assert_cmpint(parse(METHOD_MOUNT,
                              new_call("Mount", "sssa{sv}", "/dev/sdb1", "", "", 2, "userns",
                                       "h", ns, "idmap", "s", "namespace"),
                              &call, &e), ==, 0);
        g_assert_cmpint(call.params.idmap, ==, IDMAP_NAMESPACE);
        g_assert_cmpint(call.params.userns_fd, >=, 3);
        g_assert_cmpint(call.params.userns_fd, !=, ns);
        g_assert_true(call.params.userns_given);
        call_done(&call);
        g_assert_cmpint(call.params.userns_fd, ==, -EBADF);
}

static void test_mount_params_refused(void) {
        _cleanup_close_ int fd = open_null(O_RDONLY);

        assert_invalid(METHOD_MOUNT_FD,
                       new_call("MountFd", "hssa{sv}", fd, "", "", 1, "lazy", "b", 1),
                       "Unknown parameter 'lazy' (known: target, read-only, exec, idmap, userns, "
                       "interactive, driver, partition).");
        /* Unmount's key is nobody else's. */
        assert_invalid(METHOD_MOUNT,
                       new_call("Mount", "sssa{sv}", "/dev/sdb1", "", "", 1, "force", "b", 1),
                       "Unknown parameter 'force' (known: target, read-only, exec, idmap, "
                       "userns, interactive, driver, partition).");
        /* A key is escaped before it is shown. */
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 1, "a\x1b[2J", "b", 1),
                       "Unknown parameter 'a\\x1b[2J' (known: target, read-only, exec, idmap, "
                       "userns, interactive, driver, partition).");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 2, "exec", "b", 0, "exec",
                                "b", 1),
                       "Parameter 'exec' was given twice.");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 1, "read-only", "s", "yes"),
                       "Parameter 'read-only' must have D-Bus type 'b'.");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 1, "userns", "b", 1),
                       "Parameter 'userns' must have D-Bus type 'h'.");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 1, "idmap", "s", "all"),
                       "Parameter 'idmap' must be 'none', 'user' or 'namespace'.");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 1, "driver", "s", "fuse"),
                       "Parameter 'driver' must be 'kernel' or 'userspace'.");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 1, "driver", "b", 1),
                       "Parameter 'driver' must have D-Bus type 's'.");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 2, "idmap", "s", "user",
                                "userns", "h", fd),
                       "Parameter 'userns' is only meaningful with idmap 'namespace'.");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 1, "userns", "h", fd),
                       "Parameter 'userns' is only meaningful with idmap 'namespace'.");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 1, "target", "s", "/mnt"),
                       "OpenMount does not attach the mount; 'target' is for Mount and MountFd.");
        assert_invalid(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "", 1, "partition", "i", 2),
                       "Parameter 'partition' must have D-Bus type 'u'.");
        /* A device path names its partition itself; even 0 is refused there. */
        assert_invalid(METHOD_MOUNT,
                       new_call("Mount", "sssa{sv}", "/dev/sdb", "", "", 1, "partition", "u", 2),
                       "Mount takes the partition's own device (such as /dev/sdb2), not "
                       "'partition'; that parameter is for images passed to MountFd and "
                       "OpenMount.");
        assert_invalid(METHOD_MOUNT,
                       new_call("Mount", "sssa{sv}", "/dev/sdb", "", "", 1, "partition", "u", 0),
                       "Mount takes the partition's own device (such as /dev/sdb2), not "
                       "'partition'; that parameter is for images passed to MountFd and "
                       "OpenMount.");
}

static void test_mount_arguments_refused(void) {
        _cleanup_close_ int fd = open_null(O_RDONLY), path_fd = -EBADF, wr_fd = open_null(O_WRONLY);
        UmError want = {};
        SourceInfo info;

        assert_invalid(METHOD_MOUNT_FD,
                       new_call("MountFd", "hssa{sv}", fd, "", "", 1, "target", "s", "mnt"),
                       "The target must be an absolute path without '.', '..' or '//' "
                       "components: 'mnt'.");
        assert_invalid(METHOD_MOUNT_FD,
                       new_call("MountFd", "hssa{sv}", fd, "", "", 1, "target", "s", "/a/../b"),
                       "The target must be an absolute path without '.', '..' or '//' "
                       "components: '/a/../b'.");
        assert_invalid(METHOD_MOUNT_FD,
                       new_call("MountFd", "hssa{sv}", fd, "", "", 1, "target", "s", "/a\tb"),
                       "The target contains control characters.");
        assert_invalid(METHOD_MOUNT,
                       new_call("Mount", "sssa{sv}", "/dev//sdb1", "", "", 0),
                       "The device must be an absolute path without '.', '..' or '//' "
                       "components: '/dev//sdb1'.");
        assert_refused(METHOD_MOUNT, new_call("Mount", "sssa{sv}", "/dev/sdb1", "nfs", "", 0),
                       UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED,
                       "Filesystem type 'nfs' is not allowed for user mounts.");

        /* What the option syntax check and the source check say, passed on as they say it. */
        g_assert_cmpint(policy_check_options_syntax("ro,ro", &want), <, 0);
        assert_refused(METHOD_OPEN_MOUNT,
                       new_call("OpenMount", "hssa{sv}", fd, "", "ro,ro", 0), want.kind,
                       want.message);

        path_fd = open("/dev/null", O_PATH | O_CLOEXEC);
        g_assert_cmpint(path_fd, >=, 0);
        want = (UmError) {};
        g_assert_cmpint(source_check_access(path_fd, &info, &want), <, 0);
        g_assert_cmpint(want.kind, ==, UM_ERROR_KIND_INVALID_SOURCE);
        assert_refused(METHOD_MOUNT_FD, new_call("MountFd", "hssa{sv}", path_fd, "", "", 0),
                       want.kind, want.message);
        want = (UmError) {};
        g_assert_cmpint(source_check_access(wr_fd, &info, &want), <, 0);
        assert_refused(METHOD_OPEN_MOUNT, new_call("OpenMount", "hssa{sv}", wr_fd, "", "", 0),
                       UM_ERROR_KIND_INVALID_SOURCE, want.message);
}

static void test_unmount(void) {
        MountCall call;
        UmError e = {};

        g_assert_cmpint(parse(METHOD_UNMOUNT,
                              new_call("Unmount", "sa{sv}", "/run/media/u/STICK", 1, "force",
                                       "b", 1),
                              &call, &e), ==, 0);
        g_assert_cmpstr(call.unmount_point, ==, "/run/media/u/STICK");
        g_assert_true(call.force);
        g_assert_false(call.params.interactive);
        call_done(&call);

        g_assert_cmpint(parse(METHOD_UNMOUNT,
                              new_call("Unmount", "sa{sv}", "/mnt", 2, "interactive", "b", 1,
                                       "force", "b", 0),
                              &call, &e), ==, 0);
        g_assert_false(call.force);
        g_assert_true(call.params.interactive);
        call_done(&call);
}

static void test_unmount_refused(void) {
        assert_invalid(METHOD_UNMOUNT,
                       new_call("Unmount", "sa{sv}", "/mnt", 1, "lazy", "b", 1),
                       "Unmount takes the parameters 'force' and 'interactive' (b), each once; "
                       "not 'lazy'.");
        assert_invalid(METHOD_UNMOUNT,
                       new_call("Unmount", "sa{sv}", "/mnt", 1, "target", "s", "/x"),
                       "Unmount takes the parameters 'force' and 'interactive' (b), each once; "
                       "not 'target'.");
        assert_invalid(METHOD_UNMOUNT,
                       new_call("Unmount", "sa{sv}", "/mnt", 2, "force", "b", 1, "force", "b",
                                1),
                       "Unmount takes the parameters 'force' and 'interactive' (b), each once; "
                       "not 'force'.");
        assert_invalid(METHOD_UNMOUNT,
                       new_call("Unmount", "sa{sv}", "/mnt", 1, "force", "s", "yes"),
                       "Parameter 'force' must have D-Bus type 'b'.");
        /* The params are checked before the mount point. */
        assert_invalid(METHOD_UNMOUNT,
                       new_call("Unmount", "sa{sv}", "mnt", 1, "lazy", "b", 1),
                       "Unmount takes the parameters 'force' and 'interactive' (b), each once; "
                       "not 'lazy'.");
        assert_invalid(METHOD_UNMOUNT, new_call("Unmount", "sa{sv}", "mnt", 0),
                       "The mount point must be an absolute path without '.', '..' or '//' "
                       "components: 'mnt'.");
        assert_invalid(METHOD_UNMOUNT, new_call("Unmount", "sa{sv}", "/mnt/", 0),
                       "The mount point must be an absolute path without '.', '..' or '//' "
                       "components: '/mnt/'.");
}

static void test_list_mounts_and_subscribe(void) {
        MountCall call;
        UmError e = {};

        g_assert_cmpint(parse(METHOD_LIST_MOUNTS, new_call("ListMounts", "a{sv}", 0), &call, &e),
                        ==, 0);
        g_assert_cmpint(call.method, ==, METHOD_LIST_MOUNTS);
        call_done(&call);
        assert_invalid(METHOD_LIST_MOUNTS,
                       new_call("ListMounts", "a{sv}", 1, "all", "b", 1),
                       "ListMounts takes no parameters yet.");

        g_assert_cmpint(parse(METHOD_SUBSCRIBE, new_call("Subscribe", NULL), &call, &e), ==, 0);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_NONE);
        call_done(&call);
}

/* The reader on its own: a table of the test's, with a small bound. */
typedef struct TestParams {
        bool flag;
        char *name;
} TestParams;

static const BusParam test_params[] = {
        { "flag", 'b', offsetof(TestParams, flag), bus_param_set_bool },
        { "name", 's', offsetof(TestParams, name), bus_param_set_string },
};

static const BusParamTable test_table = {
        .params = test_params,
        .n_params = ELEMENTSOF(test_params),
        .max_entries = 2,
        .refuse = bus_params_refuse,
};

static int read_test_params(sd_bus_message *m, TestParams *p, UmError *e) {
        int r = bus_params_read(m, &test_table, p, e);

        sd_bus_message_unref(m);
        return r;
}

static void test_reader(void) {
        TestParams p = {};
        UmError e = {};

        g_assert_cmpint(read_test_params(new_call("X", "a{sv}", 2, "name", "s", "n", "flag", "b",
                                                  1),
                                         &p, &e), ==, 0);
        g_assert_true(p.flag);
        g_assert_cmpstr(p.name, ==, "n");
        p.name = mfree(p.name);

        g_assert_cmpint(read_test_params(new_call("X", "a{sv}", 3, "name", "s", "n", "flag", "b",
                                                  1, "x", "b", 1),
                                         &p, &e), ==, -E2BIG);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_ARGUMENT);
        g_assert_cmpstr(e.message, ==, "Too many parameters.");
        p.name = mfree(p.name);

        e = (UmError) {};
        g_assert_cmpint(read_test_params(new_call("X", "a{sv}", 1, "other", "b", 1), &p, &e), ==,
                        -EINVAL);
        g_assert_cmpstr(e.message, ==, "Unknown parameter 'other' (known: flag, name).");

        e = (UmError) {};
        g_assert_cmpint(read_test_params(new_call("X", "a{sv}", 2, "name", "s", "a", "name", "s",
                                                  "b"),
                                         &p, &e), ==, -EINVAL);
        g_assert_cmpstr(e.message, ==, "Parameter 'name' was given twice.");
        g_assert_cmpstr(p.name, ==, "a"); /* stored before the failure: p's */
        p.name = mfree(p.name);

        e = (UmError) {};
        g_assert_cmpint(read_test_params(new_call("X", "a{sv}", 1, "name", "as", 0), &p, &e), ==,
                        -EINVAL);
        g_assert_cmpstr(e.message, ==, "Parameter 'name' must have D-Bus type 's'.");
        g_assert_null(p.name);
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        setup();
        g_test_add_func("/call/open-mount", test_open_mount);
        g_test_add_func("/call/mount-fd", test_mount_fd);
        g_test_add_func("/call/mount", test_mount);
        g_test_add_func("/call/mount/userns", test_mount_userns);
        g_test_add_func("/call/mount/params-refused", test_mount_params_refused);
        g_test_add_func("/call/mount/arguments-refused", test_mount_arguments_refused);
        g_test_add_func("/call/unmount", test_unmount);
        g_test_add_func("/call/unmount/refused", test_unmount_refused);
        g_test_add_func("/call/list-mounts-and-subscribe", test_list_mounts_and_subscribe);
        g_test_add_func("/busparams/reader", test_reader);
        r = g_test_run();
        sd_bus_close_unref(bus); /* never authenticated: nothing to flush */
        safe_close(peer);
        conf_unref(conf);
        return r;
}
