/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The system tier: usermount as users get it, on a real host. This machine's own OS boots
 * with systemd as PID 1 in systemd-nspawn (real dbus-daemon, systemd-logind, polkitd and
 * journald), usermount's Debian packages (tools/package) are installed into it with
 * apt-get and nothing else, as the README says, and usermountd is started by D-Bus
 * activation through its unit, with all of its hardening. The packages go through their
 * life there: installed as an older version, upgraded with a mount registered, then
 * removed with a user's mount in place, purged (nothing of them left), and the UDisks2
 * front installed in place of udisks2; debian/tests/smoke runs as autopkgtest would.
 * The journeys between are what root, a user at a terminal in a logind session, the same
 * user in a user namespace, and an admin do; each checks what they see and that nothing
 * is left behind (no mount, loop device, session or registered mount).
 *
 * The tests share one booted system and run in order.
 *
 * What cannot be real here, and what stands in for it: this kernel has no hot-pluggable
 * disk, and no block device can be removed while it is mounted (zram refuses, a loop
 * device's detach waits for the unmount). "The device went away" is what the daemon reads
 * in sysfs, so the test puts a file of its own over the zram disk's sysfs "dev" attribute
 * in the container, with the same contents, and empties it; the daemon then sees what a
 * pulled USB stick looks like.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "system-host.h"

#define USER1 "umsys1"     /* the user at the terminal: its password is asked for */
#define USER2 "umsys2"     /* a user whose mounts need an administrator's password */
#define ADMIN "umsysadm"   /* that administrator */
#define PASSWORD1 "umsys1-Secret"
#define PASSWORD2 "umsys2-Secret"
#define PASSWORD_ADMIN "umsysadm-Secret"
#define NS_GROUP "usermount" /* the GROUP of the example rule for user namespaces */

#define EXIT_NOT_AUTHORIZED 3
#define EXIT_AUTH_FAILED 10

#define TOOLS_DIR "/opt/usermount-system" /* um-system-call, inside the container */

static SystemHost host;
static char *zram;       /* /dev/zramN, bound into the container */
static uid_t uid1;       /* USER1's uid inside */

/* Who may do what, for polkitd in the container. The admin rule sorts before Debian's
 * 50-default.rules (which names the sudo group); the test rule after the shipped example
 * rules, which an admin copies to /etc with their own names. */
static const char admin_rule[] =
        "polkit.addAdminRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') == 0)\n"
        "                return ['unix-user:" ADMIN "'];\n"
        "});\n";
static const char test_rule[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id == 'org.freedesktop.usermount1.mount-system' &&\n"
        "            subject.user == '" USER1 "' &&\n"
        "            action.lookup('device').indexOf('/dev/zram') == 0)\n"
        "                return polkit.Result.YES;\n"
        "        if (action.id == 'org.freedesktop.usermount1.mount-image' &&\n"
        "            subject.user == '" USER1 "')\n"
        "                return polkit.Result.AUTH_SELF;\n"
        "        if (action.id == 'org.freedesktop.usermount1.mount-image' &&\n"
        "            subject.user == '" USER2 "')\n"
        "                return polkit.Result.AUTH_ADMIN;\n"
        "});\n";

/* ---- helpers ------------------------------------------------------------------------- */

/* Runs a root command inside that must succeed; returns its output (g_free()). */
static char *check(const char *format, ...) G_GNUC_PRINTF(1, 2);
static char *check(const char *format, ...) {
        g_autofree char *script = NULL;
        char *output;
        va_list ap;

        va_start(ap, format);
        script = g_strdup_vprintf(format, ap);
        va_end(ap);
        output = system_host_check(&host, script);
        if (!output)
                g_error("'%s' failed inside the test system", script);
        return output;
}

static void assert_contains(const char *haystack, const char *needle) {
        if (!strstr(haystack, needle))
                g_error("expected \"%s\" in:\n%s", needle, haystack);
}

static void assert_lacks(const char *haystack, const char *needle) {
        if (strstr(haystack, needle))
                g_error("did not expect \"%s\" in:\n%s", needle, haystack);
}

/* An ext4 image at path (in a home directory: on the harness's /run, where its loop
 * devices are counted) with label, owned by owner. */
static void make_image(const char *path, const char *label, const char *owner) {
        g_autofree char *out = check("truncate -s 32M %s && mkfs.ext4 -q -L %s %s && "
                                     "chown %s: %s",
                                     path, label, path, owner, path);
}

/* The mounts of the container's root namespace below /run/media, /home or /root. */
static int count_user_mounts(void) {
        g_autofree char *out = check("awk '$5 ~ \"^/(run/media|home|root)/\"' "
                                     "/proc/1/mountinfo | wc -l");

        return atoi(out);
}

/* usermount's registry, as root sees it through ListMounts. */
static char *list_mounts(void) {
        return check("usermount list");
}

/* Waits (bounded) until script's output contains want; returns the last output. */
static char *wait_for_output(const char *script, const char *want, int timeout_ms) {
        gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * 1000;
        char *out = NULL;

        for (;;) {
                g_free(out);
                out = NULL;
                (void) system_host_run(&host, NULL, script, &out);
                if (out && strstr(out, want))
                        return out;
                if (g_get_monotonic_time() >= deadline)
                        g_error("'%s' never showed \"%s\"; it shows:\n%s", script, want,
                                strempty(out));
                g_usleep(100 * 1000);
        }
}

/* Nothing left: no user mount, no loop device on an image, nothing registered, no
 * logind session. */
static void assert_nothing_left(void) {
        g_autofree char *list = NULL, *sessions = NULL;

        g_assert_cmpint(count_user_mounts(), ==, 0);
        list = list_mounts();
        assert_contains(list, "No mounts.");
        /* Auto-clearing loop devices go a moment after their last mount. */
        for (int i = 0; i < 200 && harness_count_loop_devices() > 0; i++)
                g_usleep(50 * 1000);
        g_assert_cmpint(harness_count_loop_devices(), ==, 0);
        /* logind closes a session shortly after its last process. */
        g_free(wait_for_output("loginctl list-sessions --no-legend | wc -l; echo done",
                               "0\ndone", 30000));
        sessions = check("loginctl list-sessions --no-legend");
        g_assert_cmpstr(sessions, ==, "");
}

static char *unit_property(const char *property) {
        g_autofree char *out = check("systemctl show --value -p %s usermountd.service", property);

        return g_strdup(g_strstrip(out));
}

static pid_t daemon_pid(void) {
        g_autofree char *pid = unit_property("MainPID");

        return (pid_t) atoi(pid);
}

/* The number of polkitd's rule loads so far (it logs one line for each). */
static int polkit_rule_loads(void) {
        g_autofree char *out = check("journalctl -q -o cat -u polkit.service --no-pager | "
                                     "grep -c 'Finished loading, compiling and executing' "
                                     "|| true");

        return atoi(out);
}

/* ---- installing and booting ----------------------------------------------------------- */

static void write_root_file(const char *relative, const char *contents, mode_t mode) {
        g_autofree char *path = g_build_filename(host.root, relative, NULL);
        g_autofree char *dir = g_path_get_dirname(path);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_true(g_file_set_contents(path, contents, -1, NULL));
        g_assert_cmpint(chmod(path, mode), ==, 0);
}

static void copy_tool(const char *name) {
        g_autofree char *from = g_build_filename(SYSTEM_BUILD_DIR, name, NULL);
        g_autofree char *to = g_build_filename(TOOLS_DIR, name, NULL), *contents = NULL;
        gsize len;

        g_assert_true(g_file_get_contents(from, &contents, &len, NULL));
        g_autofree char *path = g_build_filename(host.root, to, NULL);
        g_autofree char *dir = g_path_get_dirname(path);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_true(g_file_set_contents(path, contents, (gssize) len, NULL));
        g_assert_cmpint(chmod(path, 0755), ==, 0);
}

/* The zram disk the block-device journeys use: ext4 labelled "zramdisk". */
static void make_zram(void) {
        g_autofree char *cmd = NULL;

        g_assert_cmpint(harness_zram_new("64M", &zram), ==, 0);
        cmd = g_strdup_printf("mkfs.ext4 -q -L zramdisk %s >&2", zram);
        g_assert_cmpint(system(cmd), ==, 0);
        system_host_add_device(&host, zram);
}

static int setup(void) {
        int r;

        r = system_host_install(&host, SYSTEM_SOURCE_ROOT);
        if (r < 0)
                return r;
        r = system_host_make_root(&host);
        if (r < 0)
                return r;
        write_root_file("etc/polkit-1/rules.d/40-usermount-system-admin.rules", admin_rule,
                        0644);
        write_root_file("etc/polkit-1/rules.d/60-usermount-system-test.rules", test_rule,
                        0644);
        copy_tool("um-system-call");
        make_zram();
        return system_host_boot(&host);
}

/* ---- the packages ------------------------------------------------------------------- */

/* apt-get, as an admin runs it, on packages in SYSTEM_DEBS_DIR: its output. Recommends
 * are left out: the container cannot download, and the drivers are the host's anyway. */
#define APT_GET "cd " SYSTEM_DEBS_DIR " && DEBIAN_FRONTEND=noninteractive apt-get -y " \
                "--no-install-recommends "

/* What the packages may leave behind is compared with this: every path on the container's
 * own filesystems but those that are not the packages' to keep clean (the journeys'
 * homes, images and temporary files; logs and caches, which Debian keeps after a purge;
 * the package manager's own records, PackageKit's apt hook's included; the state systemd, logind, polkitd and the journal
 * keep at run time), and the users and groups. */
#define SNAPSHOT_SCRIPT                                                                    \
        "{ for d in / /usr /run; do find $d -xdev \\( -path /proc -o -path /sys -o "      \
        "-path /dev -o -path /home -o -path /root -o -path /tmp -o -path /var/tmp -o "      \
        "-path /var/log -o -path /var/cache -o -path /var/lib/dpkg -o -path /var/lib/apt " \
        "-o -path /var/lib/PackageKit "                                                      \
        "-o -path /var/lib/systemd/linger -o -path /var/lib/systemd/timers -o "             \
        "-path /var/lib/systemd/coredump -o -path /var/lib/polkit-1 -o -path /run/user -o " \
        "-path /run/systemd -o -path /run/log -o -path /run/udev -o -path /run/dbus -o "    \
        "-path /run/lock -o -path /run/credentials -o -path /run/mount -o "                 \
        "-path /run/sudo -o -path /run/zram-dev -o -path " TOOLS_DIR " \\) -prune -o "  \
        "-print; done; getent passwd | sed 's/^/user /'; getent group | sed 's/^/group /'; }" \
        " | sed 's/:.*//' | sort -u"

static char *before_install; /* SNAPSHOT_SCRIPT's output before the first install */

/* "ii VERSION" for an installed package, "rc ..." for a removed one, "" for none. */
static char *installed_version(const char *package) {
        g_autofree char *out = NULL;
        g_autofree char *script = g_strdup_printf("dpkg-query -W "
                                                  "-f='${db:Status-Abbrev}${Version}' %s",
                                                  package);
        int r = system_host_run(&host, NULL, script, &out);

        return g_strdup(r == 0 ? g_strstrip(out) : "");
}

/*
 * The users of the journeys, then the packages as an admin installs them: apt-get install
 * of the .debs (the older version: the upgrade comes next), and nothing else. The
 * package's scripts made the image check's user and the state and media directories,
 * started nothing, and the first call starts usermountd through D-Bus activation.
 */
static void test_install(void) {
        g_autofree char *out = NULL, *state = NULL, *tmpfiles = NULL, *users = NULL;
        g_autofree char *want = g_strdup_printf("ii %s", host.previous_version);
        g_autofree char *version = NULL, *lib_version = NULL;

        g_free(check("useradd -m -s /bin/bash " USER1 " && useradd -m -s /bin/bash " USER2 " && "
                     "useradd -m -s /bin/bash " ADMIN " && "
                     "printf '%%s\\n' '" USER1 ":" PASSWORD1 "' '" USER2 ":" PASSWORD2 "' "
                     "'" ADMIN ":" PASSWORD_ADMIN "' | chpasswd && groupadd " NS_GROUP " && "
                     "usermod -a -G " NS_GROUP " " USER1));
        out = check("id -u " USER1);
        uid1 = (uid_t) atoi(out);
        g_assert_cmpuint(uid1, >, 0);
        /* This machine's image was made from a Docker image, whose policy-rc.d forbids
         * package scripts to start or restart services; a user's machine has none (it is
         * no package's file), so the container does not either. */
        g_free(check("rm -f /usr/sbin/policy-rc.d"));
        before_install = check(SNAPSHOT_SCRIPT);

        g_free(out);
        out = check(APT_GET "install ./usermount_%s_*.deb ./libusermount1_%s_*.deb",
                    host.previous_version, host.previous_version);
        g_test_message("apt-get install:\n%s", out);
        version = installed_version("usermount");
        lib_version = installed_version("libusermount1");
        g_assert_cmpstr(version, ==, want);
        g_assert_cmpstr(lib_version, ==, want);
        /* sysusers made the fsck sandbox's user; tmpfiles the state and media roots. */
        users = check("getent passwd usermount-check");
        assert_contains(users, "usermount-check:");
        tmpfiles = check("stat -c '%%a %%U %%n' /run/usermount /run/media");
        assert_contains(tmpfiles, "700 root /run/usermount");
        assert_contains(tmpfiles, "755 root /run/media");
        /* Nothing started it: D-Bus activation does, at the first call. */
        state = unit_property("ActiveState");
        g_assert_cmpstr(state, ==, "inactive");
        g_free(out);
        out = check("usermount list");
        assert_contains(out, "No mounts.");
        g_free(state);
        state = unit_property("ActiveState");
        g_assert_cmpstr(state, ==, "active");
        g_assert_cmpint(daemon_pid(), >, 0);
}

/* The upgrade to the new version with a mount registered: the package restarts the
 * running daemon, and the new one has the mount in its registry and unmounts it. */
static void test_upgrade_keeps_registry(void) {
        g_autofree char *out = NULL, *list = NULL, *version = NULL;
        g_autofree char *want = g_strdup_printf("ii %s", host.version);
        pid_t before, after;

        make_image("/root/upgrade.img", "upgrade", "root");
        g_free(check("usermount mount /root/upgrade.img"));
        before = daemon_pid();
        g_assert_cmpint(before, >, 0);
        out = check(APT_GET "install ./usermount_%s_*.deb ./libusermount1_%s_*.deb",
                    host.version, host.version);
        g_test_message("apt-get install (upgrade):\n%s", out);
        version = installed_version("usermount");
        g_assert_cmpstr(version, ==, want);
        after = daemon_pid();
        g_assert_cmpint(after, >, 0);
        g_assert_cmpint(after, !=, before);
        list = list_mounts();
        assert_contains(list, "/run/media/root/upgrade");
        g_free(check("usermount unmount /run/media/root/upgrade"));
        assert_nothing_left();
}

/* ---- root --------------------------------------------------------------------------- */

/* The capabilities of the unit's CapabilityBoundingSet: CHOWN, DAC_OVERRIDE, KILL,
 * SETGID, SETUID, SETPCAP, SYS_CHROOT, SYS_PTRACE, SYS_ADMIN, MKNOD. */
#define UNIT_CAPABILITIES 0x82c01e3ULL

static uint64_t status_hex(const char *status, const char *field) {
        const char *p = strstr(status, field);

        g_assert_nonnull(p);
        return g_ascii_strtoull(p + strlen(field), NULL, 16);
}

/* The unit runs with its hardening: no new privileges, a seccomp filter, no capability
 * beyond its bounding set, in its own cgroup. */
static void assert_hardened(pid_t pid) {
        g_autofree char *status = check("grep -E '^(NoNewPrivs|Seccomp|CapBnd|CapEff):' "
                                        "/proc/%d/status", (int) pid);
        g_autofree char *cgroup = check("cat /proc/%d/cgroup", (int) pid);

        assert_contains(status, "NoNewPrivs:\t1");
        assert_contains(status, "Seccomp:\t2");
        g_assert_cmphex(status_hex(status, "CapBnd:\t") & ~UNIT_CAPABILITIES, ==, 0);
        g_assert_cmphex(status_hex(status, "CapEff:\t") & ~UNIT_CAPABILITIES, ==, 0);
        g_assert_cmphex(status_hex(status, "CapEff:\t"), !=, 0);
        assert_contains(cgroup, "/system.slice/usermountd.service");
}

static void test_root_mount_list_unmount(void) {
        g_autofree char *out = NULL, *list = NULL, *mountinfo = NULL, *after = NULL;
        g_autofree char *exe = NULL, *env = NULL;
        pid_t pid;
        int r;

        make_image("/root/root.img", "rootdisk", "root");
        r = system_host_run(&host, NULL, "usermount mount /root/root.img", &out);
        g_test_message("usermount mount:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "at /run/media/root/rootdisk");
        assert_contains(out, "nodev,nosuid,noexec locked");

        /* Started by D-Bus activation, through the unit. */
        pid = daemon_pid();
        g_assert_cmpint(pid, >, 0);
        exe = check("readlink /proc/%d/exe", (int) pid);
        assert_contains(exe, "/usr/libexec/usermountd");
        env = check("tr '\\0' '\\n' < /proc/%d/environ", (int) pid);
        assert_contains(env, "INVOCATION_ID=");
        assert_hardened(pid);

        list = list_mounts();
        assert_contains(list, "/run/media/root/rootdisk");
        assert_contains(list, "/root/root.img");
        mountinfo = check("grep ' /run/media/root/rootdisk ' /proc/1/mountinfo");
        assert_contains(mountinfo, "nosuid,nodev,noexec");

        g_free(out);
        out = NULL;
        r = system_host_run(&host, NULL, "usermount unmount /run/media/root/rootdisk", &out);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "Unmounted /run/media/root/rootdisk");
        /* The mount point it made is gone again. */
        after = check("ls -A /run/media/root");
        g_assert_cmpstr(after, ==, "");
        assert_nothing_left();
}

/* ---- a user at a terminal in a logind session ------------------------------------------- */

/* The session's terminal shows the prompt for whose password polkit asks. */
static void test_session_right_password(void) {
        g_autofree char *out = NULL, *list = NULL, *sessions = NULL, *ls = NULL;
        SystemSession s;
        bool prompted = false;
        int r;

        make_image("/home/" USER1 "/photos.img", "photos", USER1);
        g_assert_cmpint(system_session_open(&host, USER1, &s), ==, 0);
        /* A real logind session: polkit finds the agent through it. */
        sessions = check("loginctl list-sessions --no-legend");
        assert_contains(sessions, USER1);

        r = system_session_run(&s, "usermount mount ~/photos.img", PASSWORD1, &prompted, &out);
        g_test_message("terminal:\n%s", out);
        g_assert_true(prompted);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "AUTHENTICATING FOR org.freedesktop.usermount1.mount-image");
        assert_contains(out, "Authenticating as: " USER1);
        assert_contains(out, "at /run/media/" USER1 "/photos");

        /* Served by fuse2fs in a scope of its own, with the driver's caps (driverscope.h). */
        {
                g_autofree char *scope = check("systemctl show --no-pager -p MemoryMax "
                                               "-p TasksMax -p CPUQuotaPerSecUSec "
                                               "-p ActiveState 'usermount-driver-*.scope'");

                g_test_message("scope:\n%s", scope);
                assert_contains(scope, "MemoryMax=1073741824");
                assert_contains(scope, "TasksMax=64");
                assert_contains(scope, "CPUQuotaPerSecUSec=1s");
                assert_contains(scope, "ActiveState=active");
        }
        g_free(out);
        r = system_session_run(&s, "usermount list", NULL, NULL, &out);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "/run/media/" USER1 "/photos");
        /* The user can read the mount; the directory above is theirs to enter only. */
        ls = check("stat -c '%%a %%U' /run/media/" USER1);
        assert_contains(ls, "750 root");
        g_free(out);
        r = system_session_run(&s, "ls -d /run/media/" USER1 "/photos/lost+found", NULL, NULL,
                               &out);
        g_assert_cmpint(r, ==, 0);

        g_free(out);
        r = system_session_run(&s, "usermount unmount ~/photos.img", NULL, NULL, &out);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "Unmounted /run/media/" USER1 "/photos");
        g_assert_cmpint(system_session_close(&s), ==, 0);
        assert_nothing_left();
}

static void test_session_wrong_password(void) {
        g_autofree char *out = NULL;
        SystemSession s;
        bool prompted = false;
        int r;

        make_image("/home/" USER1 "/wrong.img", "wrongpw", USER1);
        g_assert_cmpint(system_session_open(&host, USER1, &s), ==, 0);
        r = system_session_run(&s, "usermount mount ~/wrong.img", "not-the-password", &prompted,
                               &out);
        g_test_message("terminal:\n%s", out);
        g_assert_true(prompted);
        g_assert_cmpint(r, ==, EXIT_AUTH_FAILED);
        assert_contains(out, "Authentication failed: the password was wrong");
        assert_lacks(out, "Mounted");
        g_assert_cmpint(system_session_close(&s), ==, 0);
        assert_nothing_left();
}

static void test_session_no_ask_password(void) {
        g_autofree char *out = NULL;
        SystemSession s;
        bool prompted = true;
        int r;

        make_image("/home/" USER1 "/noask.img", "noask", USER1);
        g_assert_cmpint(system_session_open(&host, USER1, &s), ==, 0);
        r = system_session_run(&s, "usermount mount --no-ask-password ~/noask.img", NULL,
                               &prompted, &out);
        g_test_message("terminal:\n%s", out);
        g_assert_false(prompted);
        g_assert_cmpint(r, ==, EXIT_NOT_AUTHORIZED);
        assert_contains(out, "Not asking for a password (--no-ask-password).");
        assert_contains(out, "Authentication is required for this request.");
        g_assert_cmpint(system_session_close(&s), ==, 0);
        assert_nothing_left();
}

/* polkit asks for the administrator's password, and says whose. */
static void test_session_auth_admin(void) {
        g_autofree char *out = NULL;
        SystemSession s;
        bool prompted = false;
        int r;

        make_image("/home/" USER2 "/admin.img", "adminok", USER2);
        g_assert_cmpint(system_session_open(&host, USER2, &s), ==, 0);
        r = system_session_run(&s, "usermount mount ~/admin.img", PASSWORD_ADMIN, &prompted,
                               &out);
        g_test_message("terminal:\n%s", out);
        g_assert_true(prompted);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "Authenticating as: " ADMIN);
        assert_contains(out, "at /run/media/" USER2 "/adminok");
        g_free(out);
        r = system_session_run(&s, "usermount unmount /run/media/" USER2 "/adminok", NULL, NULL,
                               &out);
        g_assert_cmpint(r, ==, 0);
        g_assert_cmpint(system_session_close(&s), ==, 0);
        assert_nothing_left();
}

/* The CLI's pid inside the container, as the host numbers it (0: none). */
static pid_t find_cli(void) {
        g_autofree char *ns = g_strdup_printf("/proc/%d/ns/pid", (int) host.init_pid);
        g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
        g_autofree char *want = g_file_read_link(ns, NULL);
        const char *name;

        while (dir && (name = g_dir_read_name(dir))) {
                g_autofree char *cmdline = NULL, *link = NULL;
                g_autofree char *cpath = g_strdup_printf("/proc/%s/cmdline", name);
                g_autofree char *npath = g_strdup_printf("/proc/%s/ns/pid", name);
                gsize len = 0;

                if (!g_ascii_isdigit(name[0]) ||
                    !g_file_get_contents(cpath, &cmdline, &len, NULL) || len == 0)
                        continue;
                link = g_file_read_link(npath, NULL);
                if (streq_ptr(link, want) && streq(cmdline, "usermount") &&
                    strlen(cmdline) + 6 < len && streq(cmdline + strlen(cmdline) + 1, "mount"))
                        return (pid_t) atoi(name);
        }
        return 0;
}

/* Processes of pkttyagent inside the container. */
static int count_agents(void) {
        g_autofree char *out = check("pgrep -c -x pkttyagent || true");

        return atoi(out);
}

/* The CLI killed while the agent asks: the agent goes with it, nothing is mounted. */
static void test_session_killed_while_prompting(void) {
        g_autofree char *out = NULL;
        SystemSession s;
        pid_t cli;
        int r;

        make_image("/home/" USER1 "/killed.img", "killed", USER1);
        g_assert_cmpint(system_session_open(&host, USER1, &s), ==, 0);
        g_assert_cmpint(system_session_send(&s, "usermount mount ~/killed.img"), ==, 0);
        g_assert_true(system_session_wait_for(&s, "Password: "));
        g_assert_cmpint(count_agents(), ==, 1);
        cli = find_cli();
        g_assert_cmpint(cli, >, 0);
        g_assert_cmpint(kill(cli, SIGTERM), ==, 0);
        r = system_session_wait_status(&s, &out);
        g_test_message("terminal:\n%s", out);
        g_assert_cmpint(r, ==, 128 + SIGTERM);
        for (int i = 0; i < 200 && count_agents() > 0; i++)
                g_usleep(50 * 1000);
        g_assert_cmpint(count_agents(), ==, 0);
        g_assert_cmpint(system_session_close(&s), ==, 0);
        assert_nothing_left();
}

/* ---- the same user in a user namespace ---------------------------------------------------- */

/* Without a rule for it: no prompt can work there, and the CLI says what does. */
static void test_userns_without_rule(void) {
        g_autofree char *out = NULL;
        SystemSession s;
        bool prompted = true;
        int r;

        make_image("/home/" USER1 "/ns.img", "nsdisk", USER1);
        g_assert_cmpint(system_session_open(&host, USER1, &s), ==, 0);
        r = system_session_run(&s, "unshare --user --map-root-user --mount sh -c "
                               "'mkdir -p /tmp/ns && usermount mount ~/ns.img /tmp/ns'",
                               PASSWORD1, &prompted, &out);
        g_test_message("terminal:\n%s", out);
        g_assert_false(prompted);
        g_assert_cmpint(r, ==, EXIT_NOT_AUTHORIZED);
        assert_contains(out, "it runs in a user namespace");
        assert_contains(out, "/usr/share/usermount/polkit-rules/"
                             "50-usermount-namespace-images.rules");
        assert_contains(out, "usermount mount --container=PID IMAGE DIRECTORY");
        assert_lacks(out, "Run usermount on a terminal");
        g_assert_cmpint(count_agents(), ==, 0);
        g_assert_cmpint(system_session_close(&s), ==, 0);
        assert_nothing_left();
}

/*
 * The admin copies the shipped example rule into place; then the user mounts from inside
 * the namespace: id-mapped to the namespace (on-disk root is the namespace's root),
 * nosuid, nodev and noexec locked even for root there.
 */
static void test_userns_with_rule(void) {
        g_autofree char *out = NULL;
        SystemSession s;
        int loads, r;

        loads = polkit_rule_loads();
        g_free(check("cp /usr/share/usermount/polkit-rules/50-usermount-namespace-images.rules "
                     "/etc/polkit-1/rules.d/"));
        /* polkitd notices the new file and loads every rule again. */
        for (int i = 0; i < 300 && polkit_rule_loads() <= loads; i++)
                g_usleep(50 * 1000);
        g_assert_cmpint(polkit_rule_loads(), >, loads);

        g_assert_cmpint(system_session_open(&host, USER1, &s), ==, 0);
        r = system_session_run(&s, "unshare --user --map-root-user --mount sh -c '"
                               "mkdir -p /tmp/ns && usermount mount ~/ns.img /tmp/ns && "
                               "stat -c \"owner=%u:%g\" /tmp/ns && "
                               "grep \" /tmp/ns \" /proc/self/mountinfo && "
                               "touch /tmp/ns/by-container && "
                               "stat -c \"file=%u\" /tmp/ns/by-container && "
                               "if mount -o remount,bind,suid,dev,exec /tmp/ns; "
                               "then echo CLEA\"\"RED; "
                               "else echo still\"\"-locked; fi && umount /tmp/ns'",
                               NULL, NULL, &out);
        g_test_message("terminal:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        /* (The terminal also shows the command as typed: the words it prints are split
         * there by an empty quote, so only its output can match.) */
        assert_contains(out, "id-mapped (namespace");
        assert_contains(out, "owner=0:0");
        assert_contains(out, "file=0");
        assert_contains(out, "nosuid,nodev,noexec");
        assert_contains(out, "still-locked");
        assert_lacks(out, "CLEARED");
        g_assert_cmpint(system_session_close(&s), ==, 0);

        /* On disk, what the container's root made carries the container's own id, 0: the
         * image reads the same in the container the next time, on any host. */
        g_free(out);
        out = check("debugfs -R 'stat /by-container' /home/" USER1 "/ns.img 2>/dev/null | "
                    "sed -n 's/^User: *\\([0-9]*\\).*/\\1/p'");
        g_assert_cmpstr(g_strstrip(out), ==, "0");
        g_free(check("rm /etc/polkit-1/rules.d/50-usermount-namespace-images.rules"));
        assert_nothing_left();
}

/* ---- a real block device ------------------------------------------------------------------ */

/* Mount by path: the daemon opens the device, polkit's rule allows zram disks. */
static void test_block_mount(void) {
        g_autofree char *out = NULL, *list = NULL, *mount = NULL, *unmount = NULL;
        int r;

        mount = g_strdup_printf("usermount mount %s", zram);
        unmount = g_strdup_printf("usermount unmount %s", zram);
        r = system_host_run(&host, USER1, mount, &out);
        g_test_message("usermount mount:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "at /run/media/" USER1 "/zramdisk");
        list = list_mounts();
        assert_contains(list, "/run/media/" USER1 "/zramdisk");
        assert_contains(list, zram);
        g_free(out);
        r = system_host_run(&host, USER1, unmount, &out);
        g_assert_cmpint(r, ==, 0);
        assert_nothing_left();
}

/*
 * MountFd of the device the user opened, then the device goes away while mounted: the
 * daemon detaches the mount, forgets it and says so (MountRemoved, which the user's
 * "usermount monitor" prints, and another user's prints nothing of), all from inside the
 * unit's sandbox.
 */
static void test_block_mount_fd_and_removal(void) {
        g_autofree char *out = NULL, *list = NULL, *events = NULL;
        g_autofree char *dev_attr = NULL, *script = NULL;
        int id, r;

        g_assert_cmpint(sscanf(zram, "/dev/zram%d", &id), ==, 1);
        /* The daemon's "is it still there" reads a file of ours from now on (see the top of
         * this file), which says the same until the disk is "pulled". */
        dev_attr = g_strdup_printf("/sys/devices/virtual/block/zram%d/dev", id);
        g_free(check("cat %s > /run/zram-dev && mount --bind /run/zram-dev %s && chown " USER1
                     " %s", dev_attr, dev_attr, zram));
        r = system_host_run(&host, USER2, "usermount monitor --json > ~/monitor.log 2>&1 & "
                            "sleep 1", &out);
        g_assert_cmpint(r, ==, 0);
        g_clear_pointer(&out, g_free);
        script = g_strdup_printf("usermount monitor --json > ~/monitor.log 2>&1 & "
                                 TOOLS_DIR "/um-system-call mount-fd %s", zram);
        r = system_host_run(&host, USER1, script, &out);
        g_test_message("MountFd:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "mount-point=/run/media/" USER1 "/zramdisk");
        list = list_mounts();
        assert_contains(list, "/run/media/" USER1 "/zramdisk");

        /* Pulled: no event tells the daemon (udevd does not run in a container); its
         * periodic check finds out. */
        g_free(check("truncate -s 0 /run/zram-dev"));
        events = wait_for_output("cat /home/" USER1 "/monitor.log", "\"removed\"", 30000);
        g_test_message("usermount monitor:\n%s", events);
        assert_contains(events, "/run/media/" USER1 "/zramdisk");
        g_free(wait_for_output("usermount list", "No mounts.", 30000));
        /* Subscribed all along, told nothing about another user's mount. */
        g_autofree char *other = check("cat /home/" USER2 "/monitor.log");
        g_assert_null(strstr(other, "zramdisk"));
        g_free(check("umount %s && rm /run/zram-dev; pkill -u " USER1 " -x usermount || true; "
                     "pkill -u " USER2 " -x usermount || true; chown root %s", dev_attr, zram));
        assert_nothing_left();
}

/* ---- the journal ------------------------------------------------------------------------ */

/* The README's query finds the user's mounts, with the fields it documents. */
static void test_journal(void) {
        g_autofree char *all = check("journalctl -u usermountd USERMOUNT_UID=%u "
                                     "USERMOUNT_ACTION=mount -o verbose --no-pager",
                                     (unsigned) uid1);
        g_autofree char *photos = check("journalctl -u usermountd USERMOUNT_UID=%u "
                                        "USERMOUNT_ACTION=mount "
                                        "USERMOUNT_MOUNT_POINT=/run/media/" USER1 "/photos "
                                        "-o verbose --no-pager",
                                        (unsigned) uid1);
        g_autofree char *uid_field = g_strdup_printf("USERMOUNT_UID=%u", (unsigned) uid1);

        g_test_message("journal:\n%s", photos);
        /* The image, the block device by path and by fd. */
        g_assert_cmpuint(harness_count_substrings(all, "USERMOUNT_ACTION=mount"), >=, 3);
        g_assert_cmpuint(harness_count_substrings(photos, "USERMOUNT_ACTION=mount"), ==, 1);
        assert_contains(photos, uid_field);
        assert_contains(photos, "MESSAGE=Mounted /home/" USER1 "/photos.img (ext4)");
        /* Served by fuse2fs (Driver=auto): no loop device; the device is the image. */
        assert_contains(photos, "USERMOUNT_DEVICE=/home/" USER1 "/photos.img");
        assert_contains(photos, "USERMOUNT_FSTYPE=ext4");
        assert_contains(photos, "_SYSTEMD_UNIT=usermountd.service");
        assert_contains(photos, "SYSLOG_IDENTIFIER=usermountd");
        /* Where it was logged, once. */
        g_assert_cmpuint(harness_count_substrings(photos, " CODE_FILE="), ==, 1);
        g_assert_cmpuint(harness_count_substrings(photos, " CODE_FUNC="), ==, 1);
        assert_contains(all, "USERMOUNT_DEVICE=");
}

/* ---- the service ------------------------------------------------------------------------ */

/* systemctl reload: the new configuration is in effect, mounts and name stay. */
static void test_service_reload(void) {
        g_autofree char *before = NULL, *after = NULL, *fs = NULL, *journal = NULL;
        g_autofree char *out = NULL;
        int r;

        g_free(check("busctl get-property org.freedesktop.UserMount1 /org/freedesktop/UserMount1 "
                     "org.freedesktop.UserMount1.Manager Version"));
        before = unit_property("MainPID");
        g_free(check("mkdir -p /etc/usermount && printf '[General]\\nAllowedFilesystems=ext4 "
                     "xfs\\nImageCheck=yes\\n' > /etc/usermount/usermount.conf && "
                     "systemctl reload usermountd"));
        after = unit_property("MainPID");
        g_assert_cmpstr(before, ==, after);
        fs = check("busctl get-property org.freedesktop.UserMount1 /org/freedesktop/UserMount1 "
                   "org.freedesktop.UserMount1.Manager SupportedFilesystems");
        g_assert_cmpstr(g_strstrip(fs), ==, "as 2 \"ext4\" \"xfs\"");

        /* ImageCheck=yes: the fsck sandbox works under the unit's restrictions. */
        make_image("/root/checked.img", "checked", "root");
        r = system_host_run(&host, NULL, "usermount mount /root/checked.img && "
                            "usermount unmount /root/checked.img", &out);
        g_test_message("with ImageCheck=yes:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        journal = check("journalctl -u usermountd -o cat --no-pager");
        assert_contains(journal, "Reloaded");

        g_free(check("rm -r /etc/usermount && systemctl reload usermountd"));
        g_free(fs);
        fs = check("busctl get-property org.freedesktop.UserMount1 /org/freedesktop/UserMount1 "
                   "org.freedesktop.UserMount1.Manager SupportedFilesystems");
        assert_contains(fs, "\"btrfs\"");
        assert_nothing_left();
}

/* systemctl restart with a mount registered: the new daemon knows it and unmounts it. */
static void test_service_restart_keeps_registry(void) {
        g_autofree char *before = NULL, *after = NULL, *list = NULL, *out = NULL;
        int r;

        make_image("/root/kept.img", "kept", "root");
        g_free(check("usermount mount /root/kept.img"));
        before = unit_property("MainPID");
        g_free(check("systemctl restart usermountd"));
        after = unit_property("MainPID");
        g_assert_cmpstr(before, !=, after);
        list = list_mounts();
        assert_contains(list, "/run/media/root/kept");
        r = system_host_run(&host, NULL, "usermount unmount /run/media/root/kept", &out);
        g_assert_cmpint(r, ==, 0);
        assert_nothing_left();
}

/*
 * A userspace driver's mount across "systemctl restart usermountd": the driver runs in a
 * scope of its own, not in the service's cgroup, so the restart leaves it and its mount
 * alone; the new daemon lists the mount and unmounts it, and the driver ends with it.
 */
static void test_userspace_restart(void) {
        g_autofree char *before = NULL, *after = NULL, *list = NULL, *pid = NULL;
        g_autofree char *cgroup = NULL, *data = NULL;

        g_autofree char *out = NULL;

        make_image("/root/us.img", "uskept", "root");
        out = check("usermount mount /root/us.img");
        g_test_message("usermount mount:\n%s", out);
        g_free(check("echo written-before > /run/media/root/uskept/f"));
        /* The driver: the one process running as a uid of DriverUidRange=. */
        pid = check("ps -eo pid=,uid= | awk '$2 >= 1879048448 && $2 <= 1879049471 "
                    "{ print $1 }'");
        g_strstrip(pid);
        g_assert_cmpint(atoi(pid), >, 0);
        cgroup = wait_for_output(g_strdup_printf("cat /proc/%s/cgroup", pid),
                                 "usermount-driver-", 10000);
        assert_contains(cgroup, "/system.slice/usermount-driver-");
        before = unit_property("MainPID");
        g_free(check("systemctl restart usermountd"));
        after = unit_property("MainPID");
        g_assert_cmpstr(before, !=, after);
        data = check("cat /run/media/root/uskept/f");
        assert_contains(data, "written-before");
        list = list_mounts();
        assert_contains(list, "/run/media/root/uskept");
        g_free(check("usermount unmount /run/media/root/uskept"));
        g_free(wait_for_output(g_strdup_printf("test -e /proc/%s || echo gone", pid), "gone",
                               10000));
        assert_nothing_left();
}

/* Idle exit, then activation again by the next call, through systemd; the same after
 * "systemctl stop". The unit's own timeout is 60 s; a drop-in shortens it for the test, as
 * an admin could. */
static void test_service_idle_exit(void) {
        g_autofree char *state = NULL, *pid = NULL, *journal = NULL;

        g_free(check("mkdir -p /etc/systemd/system/usermountd.service.d && "
                     "printf '[Service]\\nExecStart=\\nExecStart=/usr/libexec/usermountd "
                     "--idle-timeout=2\\n' > /etc/systemd/system/usermountd.service.d/idle.conf "
                     "&& systemctl daemon-reload && systemctl restart usermountd"));
        g_free(wait_for_output("systemctl show --value -p ActiveState usermountd", "inactive",
                               30000));
        journal = check("journalctl -u usermountd -o cat --no-pager");
        assert_contains(journal, "Deactivated successfully");

        g_free(check("usermount list"));
        state = unit_property("ActiveState");
        g_assert_cmpstr(state, ==, "active");
        pid = unit_property("MainPID");
        g_assert_cmpint(atoi(pid), >, 0);

        g_free(check("rm -r /etc/systemd/system/usermountd.service.d && systemctl daemon-reload "
                     "&& systemctl restart usermountd"));

        /* Stopped by the admin: the next call starts it again. */
        g_free(check("systemctl stop usermountd"));
        g_free(state);
        state = unit_property("ActiveState");
        g_assert_cmpstr(state, ==, "inactive");
        g_free(check("usermount list"));
        g_free(state);
        state = unit_property("ActiveState");
        g_assert_cmpstr(state, ==, "active");
}

/*
 * usermount automount as the user's own service: the user unit the package installs,
 * enabled by the user, run by the user's service manager (lingering, so with no login)
 * under the unit's hardening, connected to usermountd on the system bus, and stopped
 * cleanly. udevd does not run in a container, so no disk comes or goes here; the
 * integration tier's /automount tests have that, with a real udevd.
 */
#define USER_MANAGER_ENV "export XDG_RUNTIME_DIR=/run/user/$(id -u); "

static void test_automount_user_unit(void) {
        g_autofree char *out = NULL, *show = NULL, *peers = NULL, *journal = NULL;
        int r;

        g_free(check("loginctl enable-linger " USER1));
        g_free(wait_for_output("systemctl is-active user@$(id -u " USER1 ").service | "
                               "grep -qx active && echo READY", "READY", 30000));
        r = system_host_run(&host, USER1, USER_MANAGER_ENV
                            "systemctl --user enable --now usermount-automount.service", &out);
        g_test_message("systemctl --user enable --now:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "default.target.wants/usermount-automount.service");

        /* Still up after a while: the seccomp filter and the other settings let it run. */
        g_usleep(3 * G_USEC_PER_SEC);
        r = system_host_run(&host, USER1, USER_MANAGER_ENV
                            "systemctl --user show -p ActiveState -p NRestarts "
                            "usermount-automount.service", &show);
        g_test_message("systemctl --user show:\n%s", show);
        g_assert_cmpint(r, ==, 0);
        assert_contains(show, "ActiveState=active");
        assert_contains(show, "NRestarts=0");
        /* Its connection on the system bus, the user's, from its process. */
        peers = check("busctl --system list --no-legend --no-pager | "
                      "awk '$3 == \"usermount\" && $4 == \"" USER1 "\"'");
        g_test_message("busctl list:\n%s", peers);
        g_assert_cmpstr(g_strstrip(peers), !=, "");

        g_clear_pointer(&show, g_free);
        r = system_host_run(&host, USER1, USER_MANAGER_ENV
                            "systemctl --user disable --now usermount-automount.service && "
                            "systemctl --user show -p Result -p ActiveState "
                            "usermount-automount.service", &show);
        g_test_message("systemctl --user disable --now:\n%s", show);
        g_assert_cmpint(r, ==, 0);
        assert_contains(show, "Result=success");
        assert_contains(show, "ActiveState=inactive");
        journal = check("journalctl --no-pager -o cat _SYSTEMD_USER_UNIT="
                        "usermount-automount.service");
        g_test_message("its journal:\n%s", journal);
        g_assert_null(strstr(journal, "Cannot"));

        g_free(check("loginctl disable-linger " USER1));
        g_free(wait_for_output("systemctl is-active user@$(id -u " USER1 ").service | "
                               "grep -qx active || echo GONE", "GONE", 30000));
        assert_nothing_left();
}

/* ---- usermount's UDisks2 service -------------------------------------------------------- */

/*
 * A desktop switched over to usermount's UDisks2 service as the README says (the drop-in,
 * and udisks2.service an alias of usermountd.service), and back. The desktop's first call
 * activates it through udisks2's own activation file; a logind user mounts the stick with
 * udisksctl and gio; another user is asked for the administrator's password by
 * udisksctl's own agent on the terminal; the journal has the mounts' fields.
 *
 * No udevd runs in a container: the stick's udev database entry (what udevd's
 * persistent-storage rules and usb_id would have written for a USB stick) is written by
 * the test, before the service starts.
 */
static void test_udisks2(void) {
        g_autofree char *out = NULL, *uuid = NULL, *cmd = NULL, *journal = NULL, *pid = NULL;
        g_autofree char *name = g_path_get_basename(zram), *expect = NULL, *owner = NULL;
        g_autofree char *cursor = NULL;
        SystemSession s;
        bool prompted = false;
        struct stat st;
        int r;

        /* Where the journal is now: the journeys before mounted the same disk. */
        cursor = check("journalctl -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p'");
        g_strstrip(cursor);
        g_assert_cmpstr(cursor, !=, "");
        g_assert_cmpint(stat(zram, &st), ==, 0);
        cmd = g_strdup_printf("blkid -s UUID -o value %s", zram);
        g_assert_true(g_spawn_command_line_sync(cmd, &uuid, NULL, NULL, NULL));
        g_strstrip(uuid);
        g_free(check("mkdir -p /run/udev/data && printf '%%s\\n' I:1 E:ID_FS_USAGE=filesystem "
                     "E:ID_FS_TYPE=ext4 E:ID_FS_LABEL=zramdisk E:ID_FS_UUID=%s E:ID_BUS=usb "
                     "E:ID_VENDOR=usermount 'E:ID_MODEL=Test Stick' E:ID_REVISION=1.0 "
                     "E:ID_SERIAL_SHORT=%s E:ID_SERIAL=usermount_Test_Stick_%s "
                     "E:UDISKS_SYSTEM=0 E:UDISKS_AUTO=1 > /run/udev/data/b%u:%u",
                     uuid, name, name, major(st.st_rdev), minor(st.st_rdev)));
        /* Switching over: the README's commands. */
        g_free(check("mkdir -p /etc/systemd/system/usermountd.service.d && "
                     "cp /usr/share/usermount/udisks2/udisks2.conf "
                     "/etc/systemd/system/usermountd.service.d/ && "
                     "ln -sf /usr/lib/systemd/system/usermountd.service "
                     "/etc/systemd/system/udisks2.service && "
                     "systemctl daemon-reload && systemctl stop usermountd.service"));

        /* The desktop's first call starts it; the user mounts with udisksctl. */
        g_assert_cmpint(system_session_open(&host, USER1, &s), ==, 0);
        cmd = (g_free(cmd), g_strdup_printf("udisksctl status && udisksctl mount -b %s && "
                                            "stat -c %%U /run/media/" USER1 "/zramdisk",
                                            zram));
        r = system_session_run(&s, cmd, NULL, &prompted, &out);
        g_test_message("udisksctl:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        g_assert_false(prompted);
        assert_contains(out, "Test Stick");
        expect = g_strdup_printf("Mounted %s at /run/media/" USER1 "/zramdisk", zram);
        assert_contains(out, expect);
        assert_contains(out, USER1); /* id-mapped: the root directory is the user's */
        /* Served by usermountd itself, started by the unit with the drop-in. */
        pid = unit_property("MainPID");
        owner = check("busctl status --no-pager org.freedesktop.UDisks2 | grep '^PID='");
        g_assert_cmpstr(g_strstrip(owner) + strlen("PID="), ==, pid);
        g_free(out);
        out = check("cat /proc/%s/cmdline | tr '\\0' ' '", pid);
        assert_contains(out, "--udisks2");

        /* gio, through gvfs's volume monitor: the mount on its volume, unmounted, mounted */
        g_free(out);
        cmd = (g_free(cmd), g_strdup_printf("dbus-run-session -- sh -c 'gio mount -li; "
                                            "gio mount -u /run/media/" USER1 "/zramdisk && "
                                            "gio mount -d %s && echo remounted && "
                                            "gio mount -u /run/media/" USER1 "/zramdisk && "
                                            "echo unmounted'", zram));
        r = system_session_run(&s, cmd, NULL, NULL, &out);
        g_test_message("gio:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "Drive(0): usermount Test Stick");
        assert_contains(out, "Mount(0): zramdisk -> file:///run/media/" USER1 "/zramdisk");
        assert_contains(out, "remounted");
        assert_contains(out, "unmounted");
        g_assert_cmpint(system_session_close(&s), ==, 0);

        /* Another user: udisksctl's own agent asks for the administrator's password. */
        g_assert_cmpint(system_session_open(&host, USER2, &s), ==, 0);
        cmd = (g_free(cmd), g_strdup_printf("udisksctl mount -b %s", zram));
        g_free(out);
        r = system_session_run(&s, cmd, PASSWORD_ADMIN, &prompted, &out);
        g_test_message("udisksctl, another user:\n%s", out);
        g_assert_true(prompted);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "AUTHENTICATING FOR org.freedesktop.usermount1.mount-system");
        assert_contains(out, "/run/media/" USER2 "/zramdisk");
        cmd = (g_free(cmd), g_strdup_printf("udisksctl unmount -b %s", zram));
        g_free(out);
        g_assert_cmpint(system_session_run(&s, cmd, NULL, NULL, &out), ==, 0);
        g_assert_cmpint(system_session_close(&s), ==, 0);

        /* The journal: the mounts with usermount's fields, from the unit. */
        /* The README's query finds the user's mounts with usermount's fields... */
        journal = check("journalctl -u usermountd USERMOUNT_ACTION=mount USERMOUNT_DEVICE=%s "
                        "USERMOUNT_UID=%u -o verbose --after-cursor='%s' --no-pager", zram,
                        (unsigned) uid1, cursor);
        g_test_message("journal:\n%s", journal);
        assert_contains(journal, "USERMOUNT_MOUNT_POINT=/run/media/" USER1 "/zramdisk");
        /* ...and the unit's log has both, udisksctl's and gio's, each with its fields.
         * (journalctl 252 with field matches and --after-cursor listed only one of the two
         * here, which its unfiltered output shows: counted there.) */
        g_autofree char *all = check("journalctl -u usermountd -o verbose --after-cursor='%s' "
                                     "--no-pager", cursor);
        expect = (g_free(expect), g_strdup_printf("MESSAGE=Mounted %s (ext4) for uid %u at "
                                                  "/run/media/" USER1 "/zramdisk", zram,
                                                  (unsigned) uid1));
        g_assert_cmpuint(harness_count_substrings(all, expect), ==, 2);
        g_assert_cmpuint(harness_count_substrings(all, "USERMOUNT_ACTION=mount"), ==, 3);
        assert_contains(journal, "USERMOUNT_FSTYPE=ext4");
        assert_contains(journal, "_SYSTEMD_UNIT=usermountd.service");

        /* Switching back: udisks2.service is udisks2's again (masked here). */
        g_free(check("rm -r /etc/systemd/system/usermountd.service.d && "
                     "ln -sf /dev/null /etc/systemd/system/udisks2.service && "
                     "rm -f /run/udev/data/b%u:%u && "
                     "systemctl daemon-reload && systemctl stop usermountd.service",
                     major(st.st_rdev), minor(st.st_rdev)));
        g_free(out);
        r = system_host_run(&host, NULL, "busctl status org.freedesktop.UDisks2", &out);
        g_assert_cmpint(r, !=, 0);
        assert_nothing_left();
}

/* The exposure score systemd gives the unit as it runs (lower is better). */
static void test_service_security_score(void) {
        g_autofree char *out = check("usermount list >/dev/null && "
                                     "systemd-analyze security --no-pager usermountd.service");
        const char *p = strstr(out, "Overall exposure level for usermountd.service:");
        double score;

        g_assert_nonnull(p);
        score = g_ascii_strtod(p + strlen("Overall exposure level for usermountd.service:"),
                               NULL);
        g_test_message("systemd-analyze security: %.1f", score);
        printf("# systemd-analyze security usermountd.service: %.1f\n", score);
        g_assert_cmpfloat(score, >, 0.0);
        g_assert_cmpfloat(score, <=, 5.0);
}

/* systemd had nothing to say against the unit all along: no unknown setting, no
 * protection it could not set up (device policy, seccomp, namespaces). */
static void test_service_no_warnings(void) {
        g_autofree char *out = check("journalctl -b _PID=1 -p warning -o cat --no-pager | "
                                     "grep -i usermount || true");

        g_assert_cmpstr(out, ==, "");
}

/* ---- the packages' end ---------------------------------------------------------------- */

/* debian/tests/smoke, as autopkgtest runs it (needs-root): in the booted system with the
 * packages installed. */
static void test_autopkgtest(void) {
        g_autofree char *smoke = g_build_filename(SYSTEM_SOURCE_ROOT, "debian", "tests",
                                                  "smoke", NULL);
        g_autofree char *contents = NULL, *out = NULL;
        int r;

        g_assert_true(g_file_get_contents(smoke, &contents, NULL, NULL));
        write_root_file(TOOLS_DIR "/debian-tests-smoke", contents, 0755);
        r = system_host_run(&host, NULL, "cd /tmp && AUTOPKGTEST_TMP=$(mktemp -d) "
                            TOOLS_DIR "/debian-tests-smoke", &out);
        g_test_message("debian/tests/smoke:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        assert_contains(out, "smoke: ok");
        assert_nothing_left();
}

/*
 * apt-get remove with a user's mount in place: the service stops and goes, the mount
 * stays the user's, readable, until root unmounts it (docs/packaging.md says why).
 */
static void test_remove_keeps_mounts(void) {
        g_autofree char *out = NULL, *version = NULL, *state = NULL, *ls = NULL;
        g_autofree char *mount = g_strdup_printf("usermount mount %s", zram);
        int r;

        r = system_host_run(&host, USER1, mount, &out);
        g_test_message("usermount mount:\n%s", out);
        g_assert_cmpint(r, ==, 0);
        g_assert_cmpint(count_user_mounts(), ==, 1);
        g_free(out);
        out = check(APT_GET "remove usermount");
        g_test_message("apt-get remove:\n%s", out);
        version = installed_version("usermount");
        g_assert_true(g_str_has_prefix(version, "rc "));
        state = unit_property("LoadState");
        g_assert_cmpstr(state, ==, "not-found");
        g_free(out);
        r = system_host_run(&host, NULL, "pgrep -x usermountd", &out);
        g_assert_cmpint(r, !=, 0);
        /* The user's mount: still there, still theirs to read. */
        g_assert_cmpint(count_user_mounts(), ==, 1);
        r = system_host_run(&host, USER1, "ls /run/media/" USER1 "/zramdisk", &ls);
        g_assert_cmpint(r, ==, 0);
        assert_contains(ls, "lost+found");
        g_free(check("umount /run/media/" USER1 "/zramdisk"));
        g_assert_cmpint(count_user_mounts(), ==, 0);
}

/* apt-get purge: of the packages nothing is left, no file, directory, user or group. */
static void test_purge(void) {
        g_autofree char *out = NULL, *after = NULL, *version = NULL;
        g_auto(GStrv) was = NULL, is = NULL;
        g_autoptr(GString) diff = g_string_new(NULL);
        g_autoptr(GHashTable) was_set = g_hash_table_new(g_str_hash, g_str_equal);
        g_autoptr(GHashTable) is_set = g_hash_table_new(g_str_hash, g_str_equal);

        out = check(APT_GET "purge usermount libusermount1");
        g_test_message("apt-get purge:\n%s", out);
        version = installed_version("usermount");
        g_assert_cmpstr(version, ==, "");
        after = check(SNAPSHOT_SCRIPT);
        was = g_strsplit(before_install, "\n", -1);
        is = g_strsplit(after, "\n", -1);
        for (char **p = was; *p; p++)
                g_hash_table_add(was_set, *p);
        for (char **p = is; *p; p++)
                g_hash_table_add(is_set, *p);
        for (char **p = is; *p; p++)
                if (!g_hash_table_contains(was_set, *p))
                        g_string_append_printf(diff, "+ %s\n", *p);
        for (char **p = was; *p; p++)
                if (!g_hash_table_contains(is_set, *p))
                        g_string_append_printf(diff, "- %s\n", *p);
        if (diff->len > 0)
                g_error("the purge left the system different from before the install:\n%s",
                        diff->str);
}

/* usermount-udisks2 in place of udisks2: apt-get replaces udisks2's package, and the bus
 * starts usermountd for org.freedesktop.UDisks2. */
static void test_udisks2_package(void) {
        g_autofree char *out = NULL, *pid = NULL, *owner = NULL, *cmdline = NULL;
        g_autofree char *version = NULL, *udisks2 = NULL;
        g_autofree char *want = g_strdup_printf("ii %s", host.version);

        out = check(APT_GET "install ./usermount_%s_*.deb ./libusermount1_%s_*.deb "
                    "./usermount-udisks2_%s_all.deb", host.version, host.version, host.version);
        g_test_message("apt-get install usermount-udisks2:\n%s", out);
        version = installed_version("usermount-udisks2");
        g_assert_cmpstr(version, ==, want);
        udisks2 = installed_version("udisks2");
        g_assert_false(g_str_has_prefix(udisks2, "ii "));
        g_free(check("busctl get-property org.freedesktop.UDisks2 /org/freedesktop/UDisks2/Manager "
                     "org.freedesktop.UDisks2.Manager Version"));
        pid = unit_property("MainPID");
        owner = check("busctl status --no-pager org.freedesktop.UDisks2 | grep '^PID='");
        g_assert_cmpstr(g_strstrip(owner) + strlen("PID="), ==, pid);
        cmdline = check("cat /proc/%s/cmdline | tr '\\0' ' '", pid);
        assert_contains(cmdline, "--udisks2");
}

int main(int argc, char **argv) {
        static const HarnessOptions options = { .namespace_only = true };
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(&options);
        r = setup();
        if (r < 0) {
                system_host_shutdown(&host);
                printf("Bail out! the test system did not come up: %s\n", g_strerror(-r));
                return 1;
        }

        g_test_add_func("/system/01-install", test_install);
        g_test_add_func("/system/01b-upgrade-keeps-registry", test_upgrade_keeps_registry);
        g_test_add_func("/system/02-root-mount-list-unmount", test_root_mount_list_unmount);
        g_test_add_func("/system/03-session-right-password", test_session_right_password);
        g_test_add_func("/system/04-session-wrong-password", test_session_wrong_password);
        g_test_add_func("/system/05-session-no-ask-password", test_session_no_ask_password);
        g_test_add_func("/system/06-session-auth-admin", test_session_auth_admin);
        g_test_add_func("/system/07-session-killed-while-prompting",
                        test_session_killed_while_prompting);
        g_test_add_func("/system/08-userns-without-rule", test_userns_without_rule);
        g_test_add_func("/system/09-userns-with-rule", test_userns_with_rule);
        g_test_add_func("/system/10-block-mount", test_block_mount);
        g_test_add_func("/system/11-block-mount-fd-and-removal", test_block_mount_fd_and_removal);
        g_test_add_func("/system/12-journal", test_journal);
        g_test_add_func("/system/13-service-reload", test_service_reload);
        g_test_add_func("/system/14-service-restart-keeps-registry",
                        test_service_restart_keeps_registry);
        g_test_add_func("/system/15-service-idle-exit", test_service_idle_exit);
        g_test_add_func("/system/15b-userspace-driver-restart", test_userspace_restart);
        g_test_add_func("/system/15c-automount-user-unit", test_automount_user_unit);
        g_test_add_func("/system/15d-udisks2", test_udisks2);
        g_test_add_func("/system/16-service-security-score", test_service_security_score);
        g_test_add_func("/system/17-service-no-warnings", test_service_no_warnings);
        g_test_add_func("/system/18-autopkgtest", test_autopkgtest);
        g_test_add_func("/system/19-remove-keeps-mounts", test_remove_keeps_mounts);
        g_test_add_func("/system/20-purge", test_purge);
        g_test_add_func("/system/21-udisks2-package", test_udisks2_package);
        r = g_test_run();

        if (system_host_shutdown(&host) < 0 && r == 0)
                r = 1;
        if (zram)
                (void) harness_zram_free(zram);
        system_host_done(&host);
        return r;
}
