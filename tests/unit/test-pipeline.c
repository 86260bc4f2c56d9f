/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The request pipeline as a unit (daemon/manager-dbus.c -> caller.c -> pipeline.c), without
 * root, a bus daemon or a mount: a real Manager whose bus is one end of a socketpair, the
 * test the other end. The test plays the bus daemon (Hello, RequestName, AddMatch,
 * GetConnectionCredentials) and polkit (CheckAuthorization), and sends the calls; the
 * workers are stub-jobs, the real job types with canned answers steered by the source
 * file's text (stub-jobs.c). The caller is a child of the test (as another uid when the
 * test runs as root), so the caller stage checks a real process.
 */
#include <fcntl.h>
#include <glib.h>
#include <grp.h>
#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "busfds.h"
#include "drivertable.h"
#include "jobproto.h"
#include "manager-dbus.h"
#include "manager.h"
#include "reconcile.h"
#include "request.h"
#include "um-error.h"
#include "usermount-names.h"

#define CALLER_NAME ":1.42"
#define STUB_JOBS_ENV "UM_TEST_STUB_JOBS"

typedef struct Env {
        char *dir;            /* runtime directory, configuration, sources */
        Manager *m;
        sd_bus *peer;         /* the test's end: the bus daemon, polkit, the caller */
        sd_bus_slot *slots[2];
        pid_t caller_pid;     /* the process the caller stage checks */
        uid_t caller_uid;
        bool polkit_yes;      /* what CheckAuthorization answers */
        bool polkit_dismissed; /* and, when no, whether the user dismissed the dialog */
        GPtrArray *asked;     /* the actions polkit was asked about */
        unsigned name_requests;
} Env;

static Env env;

/* ---- the test's end: bus daemon and polkit --------------------------------------------- */

static int method_hello(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(m, "s", ":1.1");
}

static int method_request_name(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        env.name_requests++;
        return sd_bus_reply_method_return(m, "u", 1); /* primary owner */
}

static int method_add_match(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(m, NULL);
}

static int method_credentials(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *name;

        g_assert_cmpint(sd_bus_message_read(m, "s", &name), >, 0);
        if (!g_str_equal(name, CALLER_NAME))
                return sd_bus_reply_method_errorf(m, "org.freedesktop.DBus.Error.NameHasNoOwner",
                                                  "no %s", name);
        g_assert_cmpint(sd_bus_message_new_method_return(m, &reply), >=, 0);
        g_assert_cmpint(sd_bus_message_append(reply, "a{sv}", 2,
                                              "UnixUserID", "u", (uint32_t) env.caller_uid,
                                              "ProcessID", "u", (uint32_t) env.caller_pid),
                        >=, 0);
        return sd_bus_send(NULL, reply, NULL);
}

static int method_check_authorization(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *action;

        g_assert_cmpint(sd_bus_message_skip(m, "(sa{sv})"), >=, 0);
        g_assert_cmpint(sd_bus_message_read(m, "s", &action), >, 0);
        g_ptr_array_add(env.asked, g_strdup(action));
        if (env.polkit_dismissed)
                return sd_bus_reply_method_return(m, "(bba{ss})", false, false, 1,
                                                  "polkit.dismissed", "true");
        return sd_bus_reply_method_return(m, "(bba{ss})", env.polkit_yes, false, 0);
}

static const sd_bus_vtable bus_daemon_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Hello", "", "s", method_hello, 0),
        SD_BUS_METHOD("RequestName", "su", "u", method_request_name, 0),
        SD_BUS_METHOD("AddMatch", "s", "", method_add_match, 0),
        SD_BUS_METHOD("GetConnectionCredentials", "s", "a{sv}", method_credentials, 0),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable polkit_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("CheckAuthorization", "(sa{sv})sa{ss}us", "(bba{ss})",
                      method_check_authorization, 0),
        SD_BUS_VTABLE_END,
};

/* ---- set up and tear down -------------------------------------------------------------- */

static char *stub_jobs_path(void) {
        const char *e = g_getenv(STUB_JOBS_ENV);
        g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
        g_autofree char *dir = NULL;

        if (e)
                return g_strdup(e);
        dir = g_path_get_dirname(self);
        return g_build_filename(dir, "stub-jobs", NULL);
}

/* A process that only waits: the caller the bus names. As root, it runs as nobody, and
 * is only the caller once it does (the caller stage checks that the process runs as the
 * uid the bus says: a call made while the child still ran as root was refused). */
static void start_caller(void) {
        int ready[2];
        char c;

        g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
        env.caller_uid = getuid() == 0 ? 65534 : getuid();
        env.caller_pid = fork();
        g_assert_cmpint(env.caller_pid, >=, 0);
        if (env.caller_pid == 0) {
                if (getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 ||
                                      setuid(65534) < 0))
                        _exit(1);
                /* After setuid(), which clears it: the caller dies with the test. */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                        _exit(1);
                if (write(ready[1], "x", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(ready[1]);
        g_assert_cmpint(read(ready[0], &c, 1), ==, 1);
        close(ready[0]);
}

static void env_setup(const char *conf_text) {
        g_autoptr(GError) error = NULL;
        g_autofree char *conf = NULL, *stub = stub_jobs_path();
        sd_bus *bus = NULL;
        sd_id128_t id;
        int sv[2];

        env = (Env) { .polkit_yes = true, .asked = g_ptr_array_new_with_free_func(g_free) };
        env.dir = g_dir_make_tmp("um-pipeline-XXXXXX", &error);
        g_assert_no_error(error);
        g_assert_cmpint(chmod(env.dir, 0755), ==, 0);
        conf = g_build_filename(env.dir, "usermount.conf", NULL);
        g_assert_true(g_file_set_contents(conf, conf_text, -1, NULL));
        start_caller();

        g_assert_cmpint(manager_new(&env.m), ==, 0);
        g_assert_cmpint(manager_load_conf(env.m, conf, false), ==, 0);
        free(env.m->runtime_dir);
        env.m->runtime_dir = g_build_filename(env.dir, "run", NULL);
        g_assert_cmpint(g_mkdir(env.m->runtime_dir, 0700), ==, 0);
        g_assert_cmpint(manager_load_registry(env.m), ==, 0);
        g_assert_cmpint(worker_pool_new(env.m->event, stub, 1, job_layouts_hash(),
                                        &env.m->workers), ==, 0);

        /* The daemon's end: a bus client, as on the system bus. */
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv),
                        ==, 0);
        g_assert_cmpint(sd_bus_new(&bus), >=, 0);
        g_assert_cmpint(sd_bus_set_fd(bus, sv[0], sv[0]), >=, 0);
        g_assert_cmpint(sd_bus_set_bus_client(bus, 1), >=, 0);
        g_assert_cmpint(sd_bus_negotiate_fds(bus, 1), >=, 0);
        g_assert_cmpint(sd_bus_start(bus), >=, 0);
        g_assert_cmpint(manager_attach_bus(env.m, bus), ==, 0);

        /* The test's end: the bus daemon and polkit, and the caller's calls. */
        g_assert_cmpint(sd_id128_randomize(&id), >=, 0);
        g_assert_cmpint(sd_bus_new(&env.peer), >=, 0);
        g_assert_cmpint(sd_bus_set_fd(env.peer, sv[1], sv[1]), >=, 0);
        g_assert_cmpint(sd_bus_set_server(env.peer, 1, id), >=, 0);
        g_assert_cmpint(sd_bus_negotiate_fds(env.peer, 1), >=, 0);
        g_assert_cmpint(sd_bus_add_object_vtable(env.peer, &env.slots[0], "/org/freedesktop/DBus",
                                                 "org.freedesktop.DBus", bus_daemon_vtable, NULL),
                        >=, 0);
        g_assert_cmpint(sd_bus_add_object_vtable(env.peer, &env.slots[1],
                                                 "/org/freedesktop/PolicyKit1/Authority",
                                                 "org.freedesktop.PolicyKit1.Authority",
                                                 polkit_vtable, NULL), >=, 0);
        g_assert_cmpint(sd_bus_start(env.peer), >=, 0);
        g_assert_cmpint(sd_bus_attach_event(env.peer, env.m->event, 0), >=, 0);
        /* Until the daemon said Hello and asked for its name: a bus client takes no call
         * before its Hello is answered. */
        for (int i = 0; i < 1000 && env.name_requests == 0; i++)
                g_assert_cmpint(sd_event_run(env.m->event, 10 * 1000), >=, 0);
        g_assert_cmpuint(env.name_requests, ==, 1);
}

static void env_teardown(void) {
        g_autofree char *rm = g_strdup_printf("rm -rf '%s'", env.dir);
        int status;

        request_free_all(env.m);
        /* The threads that let go of the calls' fds (busfds.h) end first: a busfds freed
         * while one runs leaves their shared count behind, on purpose. */
        for (int i = 0; i < 5000 && busfds_pending(env.m->busfds, (uid_t) -1) > 0; i++)
                g_usleep(1000);
        g_assert_cmpuint(busfds_pending(env.m->busfds, (uid_t) -1), ==, 0);
        env.m = manager_free(env.m);
        for (size_t i = 0; i < G_N_ELEMENTS(env.slots); i++)
                sd_bus_slot_unref(env.slots[i]);
        sd_bus_flush_close_unref(env.peer);
        g_assert_cmpint(kill(env.caller_pid, SIGKILL), ==, 0);
        g_assert_cmpint(waitpid(env.caller_pid, &status, 0), ==, env.caller_pid);
        g_assert_cmpint(system(rm), ==, 0);
        g_free(env.dir);
        g_ptr_array_unref(env.asked);
}

/* ---- calls ----------------------------------------------------------------------------- */

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        *(sd_bus_message **) userdata = sd_bus_message_ref(m);
        return 0;
}

/* Runs the event loop until reply is set (at most 10 s). */
static void run_until(sd_bus_message **reply) {
        for (int i = 0; i < 1000 && !*reply; i++)
                g_assert_cmpint(sd_event_run(env.m->event, 10 * 1000), >=, 0);
        g_assert_nonnull(*reply);
}

/* A source file with text; its fd (O_RDWR). */
static int make_source(const char *name, const char *text) {
        g_autofree char *path = g_build_filename(env.dir, name, NULL);
        int fd;

        g_assert_true(g_file_set_contents(path, text, -1, NULL));
        fd = open(path, O_RDWR | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        return fd;
}

/* Sends method (OpenMount or MountFd) of source_fd from the caller; returns the answer. */
static sd_bus_message *call_mount(const char *method, int source_fd, const char *sender) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        sd_bus_message *reply = NULL;

        g_assert_cmpint(sd_bus_message_new_method_call(env.peer, &call, UM_BUS_NAME,
                                                       UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                                       method), >=, 0);
        if (sender)
                g_assert_cmpint(sd_bus_message_set_sender(call, sender), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "hssa{sv}", source_fd, "", "", 0), >=, 0);
        g_assert_cmpint(sd_bus_call_async(env.peer, NULL, call, on_reply, &reply, 0), >=, 0);
        run_until(&reply);
        return reply;
}

static sd_bus_message *call_list(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        sd_bus_message *reply = NULL;

        g_assert_cmpint(sd_bus_message_new_method_call(env.peer, &call, UM_BUS_NAME,
                                                       UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                                       "ListMounts"), >=, 0);
        g_assert_cmpint(sd_bus_message_set_sender(call, CALLER_NAME), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "a{sv}", 0), >=, 0);
        g_assert_cmpint(sd_bus_call_async(env.peer, NULL, call, on_reply, &reply, 0), >=, 0);
        run_until(&reply);
        return reply;
}

static void assert_error(sd_bus_message *reply, UmErrorKind kind, const char *part) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        g_assert_nonnull(e);
        g_test_message("%s: %s", e->name, e->message);
        g_assert_cmpstr(e->name, ==, um_error_kind_to_name(kind));
        if (part)
                g_assert_nonnull(strstr(e->message, part));
}

/* The string info[key] of an a{sv} being read; NULL if absent. */
static char *read_info(sd_bus_message *m, const char *key) {
        char *found = NULL;
        const char *k, *v;

        g_assert_cmpint(sd_bus_message_enter_container(m, 'a', "{sv}"), >, 0);
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                g_assert_cmpint(sd_bus_message_read(m, "s", &k), >, 0);
                if (g_str_equal(k, key) && sd_bus_message_read(m, "v", "s", &v) > 0)
                        found = g_strdup(v);
                else
                        g_assert_cmpint(sd_bus_message_skip(m, "v"), >=, 0);
                g_assert_cmpint(sd_bus_message_exit_container(m), >=, 0);
        }
        g_assert_cmpint(sd_bus_message_exit_container(m), >=, 0);
        return found;
}

static bool asked(const char *action) {
        for (guint i = 0; i < env.asked->len; i++)
                if (g_str_equal(env.asked->pdata[i], action))
                        return true;
        return false;
}

static void assert_nothing_in_flight(void) {
        g_assert_null(env.m->requests);
        g_assert_cmpuint(env.m->n_requests, ==, 0);
}

/* ---- the tests ------------------------------------------------------------------------- */

static const char conf_kernel[] = "[ext4]\nDriver=kernel\n";

/* OpenMount of an image: caller, limits, probe, policy, polkit, build, the fd replied. */
static void test_open_mount(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        g_autofree char *fstype = NULL, *label = NULL;
        struct stat want, got;
        int fd, mount_fd;

        env_setup(conf_kernel);
        fd = make_source("image", "fstype=ext4\nlabel=STICK\n");
        reply = call_mount("OpenMount", fd, CALLER_NAME);
        g_assert_null(sd_bus_message_get_error(reply));
        g_assert_cmpint(sd_bus_message_read(reply, "h", &mount_fd), >, 0);
        /* The stub's "mount" is the source's directory. */
        g_assert_cmpint(fstat(mount_fd, &got), ==, 0);
        g_assert_cmpint(stat(env.dir, &want), ==, 0);
        g_assert_cmpuint(got.st_ino, ==, want.st_ino);
        fstype = read_info(reply, "fstype");
        g_assert_cmpstr(fstype, ==, "ext4");
        g_assert_cmpuint(env.name_requests, ==, 1);
        /* An image, with the kernel's driver as the administrator's rule: one action. */
        g_assert_cmpuint(env.asked->len, ==, 1);
        g_assert_true(asked(UM_ACTION_MOUNT_IMAGE));
        /* OpenMount registers nothing: the caller holds the only reference. */
        g_assert_cmpuint(env.m->registry->n_records, ==, 0);
        assert_nothing_in_flight();
        close(fd);
        env_teardown();
}

/* polkit says no: NotAuthorized, nothing built, nothing left. */
static void test_polkit_no(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int fd;

        env_setup(conf_kernel);
        env.polkit_yes = false;
        fd = make_source("image", "fstype=ext4\nlabel=NO\n");
        reply = call_mount("OpenMount", fd, CALLER_NAME);
        assert_error(reply, UM_ERROR_KIND_NOT_AUTHORIZED, NULL);
        g_assert_cmpuint(env.asked->len, ==, 1);
        assert_nothing_in_flight();
        close(fd);
        env_teardown();
}

/* polkit says the user dismissed its dialog: NotAuthorized, saying so (the UDisks2 front's
 * NotAuthorizedDismissed, by its errno). */
static void test_polkit_dismissed(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int fd;

        env_setup(conf_kernel);
        env.polkit_yes = false;
        env.polkit_dismissed = true;
        fd = make_source("image", "fstype=ext4\nlabel=NO\n");
        reply = call_mount("OpenMount", fd, CALLER_NAME);
        assert_error(reply, UM_ERROR_KIND_NOT_AUTHORIZED, "dialog for");
        assert_nothing_in_flight();
        close(fd);
        env.polkit_dismissed = false;
        env_teardown();
}

/* The probe refuses the source: its words reach the caller, polkit is never asked. */
static void test_probe_fails(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int fd;

        env_setup(conf_kernel);
        fd = make_source("image", "probe-fail=the superblock is damaged\n");
        reply = call_mount("OpenMount", fd, CALLER_NAME);
        assert_error(reply, UM_ERROR_KIND_INVALID_SOURCE, "the superblock is damaged");
        g_assert_cmpuint(env.asked->len, ==, 0);
        assert_nothing_in_flight();
        close(fd);
        env_teardown();
}

/* The build fails after polkit said yes: Failed with the worker's words. */
static void test_build_fails(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int fd;

        env_setup(conf_kernel);
        fd = make_source("image", "fstype=ext4\nbuild-fail=the journal needs recovery\n");
        reply = call_mount("OpenMount", fd, CALLER_NAME);
        assert_error(reply, UM_ERROR_KIND_FAILED, "the journal needs recovery");
        assert_nothing_in_flight();
        close(fd);
        env_teardown();
}

/* A type the policy does not allow: refused after the probe, before polkit. */
static void test_type_not_allowed(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int fd;

        env_setup("[General]\nAllowedFilesystems=vfat\n");
        fd = make_source("image", "fstype=ext4\n");
        reply = call_mount("OpenMount", fd, CALLER_NAME);
        assert_error(reply, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, "ext4");
        g_assert_cmpuint(env.asked->len, ==, 0);
        assert_nothing_in_flight();
        close(fd);
        env_teardown();
}

/* MountFd: built, attached, registered and replied with the mount point; ListMounts shows
 * it; a reconcile then finds that the mount does not exist (the stub made none) and
 * forgets it. */
static void test_mount_fd_registers(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL, *list = NULL;
        g_autofree char *listed = NULL;
        const char *mount_point;
        int fd;

        env_setup(conf_kernel);
        fd = make_source("image", "fstype=ext4\nlabel=PHOTOS\n");
        reply = call_mount("MountFd", fd, CALLER_NAME);
        g_assert_null(sd_bus_message_get_error(reply));
        g_assert_cmpint(sd_bus_message_read(reply, "s", &mount_point), >, 0);
        g_assert_cmpstr(mount_point, ==, "/stub/PHOTOS");
        g_assert_cmpuint(env.m->registry->n_records, ==, 1);
        g_assert_cmpstr(env.m->registry->records[0]->mount_point, ==, "/stub/PHOTOS");
        g_assert_cmpuint(env.m->registry->records[0]->owner_uid, ==, env.caller_uid);
        assert_nothing_in_flight();

        list = call_list();
        g_assert_null(sd_bus_message_get_error(list));
        g_assert_cmpint(sd_bus_message_enter_container(list, 'a', "a{sv}"), >, 0);
        listed = read_info(list, "mount-point");
        g_assert_cmpstr(listed, ==, "/stub/PHOTOS");
        g_assert_cmpint(sd_bus_message_at_end(list, false), >, 0);

        reconcile_all(env.m);
        g_assert_cmpuint(env.m->registry->n_records, ==, 0);
        close(fd);
        env_teardown();
}

/* The caller stage: a call whose connection the bus does not know is refused. */
static void test_unknown_caller(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int fd;

        env_setup(conf_kernel);
        fd = make_source("image", "fstype=ext4\n");
        reply = call_mount("OpenMount", fd, ":1.99");
        assert_error(reply, UM_ERROR_KIND_FAILED, "closed before its request was handled");
        assert_nothing_in_flight();
        close(fd);
        env_teardown();
}

/* A mount a userspace driver serves: the worker is told to prepare the driver's start
 * before polkit is asked, and START_DRIVER comes to the same worker after polkit's yes. */
static void test_driver_prepared(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int fd;

        if (!fusedriver_fuse_present() || !fusedriver_find("ext4")) {
                g_test_skip("no /dev/fuse or no fuse2fs here");
                return;
        }
        env_setup("[ext4]\nDriver=userspace\n");
        fd = make_source("image", "fstype=ext4\nlabel=US\n");
        reply = call_mount("OpenMount", fd, CALLER_NAME);
        assert_error(reply, UM_ERROR_KIND_FAILED, "stub-jobs cannot start a driver (prepared: yes)");
        g_assert_true(asked(UM_ACTION_MOUNT_IMAGE));
        assert_nothing_in_flight();
        close(fd);
        env_teardown();
}

/* A Subscribe refused by a limit leaves no subscription behind. (A request in flight is
 * counted by hand: the limit is all this checks.) */
static void test_subscribe_refused(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;

        env_setup("[Limits]\nMaxRequests=1\n");
        env.m->n_requests++;
        g_assert_cmpint(sd_bus_message_new_method_call(env.peer, &call, UM_BUS_NAME,
                                                       UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                                       "Subscribe"), >=, 0);
        g_assert_cmpint(sd_bus_message_set_sender(call, CALLER_NAME), >=, 0);
        g_assert_cmpint(sd_bus_call_async(env.peer, NULL, call, on_reply, &reply, 0), >=, 0);
        run_until(&reply);
        env.m->n_requests--;
        assert_error(reply, UM_ERROR_KIND_LIMIT_EXCEEDED, NULL);
        g_assert_cmpuint(env.m->subscribers.n, ==, 0);
        assert_nothing_in_flight();
        env_teardown();
}

int main(int argc, char **argv) {
        sigset_t mask;

        /* sd-event's child sources (the workers, the caller) need SIGCHLD blocked. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        g_assert_cmpint(sigprocmask(SIG_BLOCK, &mask, NULL), ==, 0);
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/pipeline/open-mount", test_open_mount);
        g_test_add_func("/pipeline/polkit-no", test_polkit_no);
        g_test_add_func("/pipeline/polkit-dismissed", test_polkit_dismissed);
        g_test_add_func("/pipeline/probe-fails", test_probe_fails);
        g_test_add_func("/pipeline/build-fails", test_build_fails);
        g_test_add_func("/pipeline/type-not-allowed", test_type_not_allowed);
        g_test_add_func("/pipeline/mount-fd-registers", test_mount_fd_registers);
        g_test_add_func("/pipeline/unknown-caller", test_unknown_caller);
        g_test_add_func("/pipeline/subscribe-refused", test_subscribe_refused);
        g_test_add_func("/pipeline/driver-prepared", test_driver_prepared);
        return g_test_run();
}
