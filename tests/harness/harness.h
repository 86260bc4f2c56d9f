/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The integration-test harness: runs the real usermountd on a private system bus with the
 * real polkitd, real filesystem images on real loop devices, and unprivileged callers
 * (optionally inside their own user namespace), all inside a private mount namespace so
 * that nothing reaches or stays on the host.
 *
 * A test program does:
 *
 *         int main(int argc, char **argv) {
 *                 g_test_init(&argc, &argv, NULL);
 *                 harness_init_or_exit(NULL);       // before any thread exists
 *                 g_test_add_func("/foo/bar", test_bar);
 *                 return g_test_run();
 *         }
 *
 * What harness_init() builds (all of it private to the test's mount namespace):
 *   - a tmpfs on /run: the harness temporary directory (harness_tmpdir(), under /run), the
 *     daemon's /run/usermount and /run/media all live there and vanish with the namespace;
 *   - /etc as an overlay whose upper layer is on that tmpfs, holding /etc/passwd,
 *     /etc/group, /etc/subuid and /etc/subgid with the test identities below added
 *     (falls back to bind-mounting copies of passwd and group when overlayfs is not
 *     available);
 *   - a dbus-daemon with a system-bus configuration on <tmpdir>/bus/system_bus_socket
 *     (also reachable as /run/dbus/system_bus_socket), DBUS_SYSTEM_BUS_ADDRESS set;
 *   - polkitd, with the project's .policy (and a harness probe action) bind-mounted over
 *     /usr/share/polkit-1/actions and empty temporary rules directories over
 *     /etc/polkit-1/rules.d and /usr/share/polkit-1/rules.d;
 *   - a real systemd-udevd with Debian's persistent-storage rules (/dev/disk/by-label,
 *     by-uuid...) and its writes to /run/udev and /dev kept private, in a network
 *     namespace of the harness's own so that its events reach only the daemon under test
 *     (see harness-udev.c; HarnessOptions.without_udevd leaves it out).
 *
 * Cleanup: harness_init() forks. The original process becomes a supervisor that only
 * waits for the test process; when it ends, however it ends (exit, failed assertion,
 * crash, SIGTERM from the test runner), the supervisor kills every process left below it
 * (it is a child subreaper), unmounts what uses the harness's loop devices and detaches
 * them. The test process also tears down in an atexit() handler. All spawned services die
 * with the test process (PR_SET_PDEATHSIG), and every loop device the harness makes is
 * auto-clearing, so even a SIGKILL of the whole process group leaves nothing behind.
 *
 * Threads and forking: GDBus is not fork-safe (a process forked after GDBus was used
 * cannot use GDBus). The harness therefore uses sd-bus itself, and a test program must not
 * use GDBus in its main process if its callers (harness_run_as()) use GDBus. Use
 * harness_bus() (sd-bus) in the test process, GDBus or sd-bus in callers.
 *
 * Errors: functions returning int return >= 0 on success and -errno on failure; they log
 * the cause to stderr (never to stdout, which carries TAP). Strings returned through
 * ret_* parameters are owned by the caller (g_free()).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <gio/gio.h>
#include <systemd/sd-bus.h>

/* Test identities, present in the private /etc/passwd and /etc/group. Each user has a
 * primary group of the same name and id; umtestadm is also a member of umtestgrp. */
#define HARNESS_USER1 "umtest1"
#define HARNESS_USER2 "umtest2"
#define HARNESS_ADMIN "umtestadm"
#define HARNESS_GROUP "umtestgrp"
#define HARNESS_UID_USER1 61001
#define HARNESS_UID_USER2 61002
#define HARNESS_UID_ADMIN 61003
#define HARNESS_GID_USER1 61001
#define HARNESS_GID_USER2 61002
#define HARNESS_GID_ADMIN 61003
#define HARNESS_GID_GROUP 61100

/* Passwords of the test users in the private /etc/shadow (when /etc is an overlay), for
 * tests that authenticate through polkit's agent helper (PAM "polkit-1", pam_unix). */
#define HARNESS_PASSWORD_USER1 "umtest1-secret"
#define HARNESS_PASSWORD_USER2 "umtest2-secret"
#define HARNESS_PASSWORD_ADMIN "umtestadm-secret"

/* Also present, for the harness's own use only: umtestprobe (uid and gid 61009), the
 * unprivileged polkit subject of the rules probe (see harness_set_rules()). */

/* Subordinate id ranges delegated in the private /etc/subuid and /etc/subgid (same
 * ranges for uids and gids). umtestadm has none. */
#define HARNESS_SUBID_USER1_START 2000000000u
#define HARNESS_SUBID_USER2_START 2000065536u
#define HARNESS_SUBID_COUNT 65536u

/* How long the harness waits for a service to appear on the bus or for rules to take
 * effect before giving up, and how long harness_run_as() lets a caller run. */
#define HARNESS_TIMEOUT_MS 30000
#define HARNESS_CALLER_TIMEOUT_MS 120000

/* ---------------------------------------------------------------------------------- */
/* Lifecycle                                                                          */

typedef struct HarnessOptions {
        /* The bus policy. false (the default): the rules of Debian's system.conf (deny
         * owning names and method calls unless a policy file punches a hole) plus polkit's
         * policy and the project's dbus/org.freedesktop.UserMount1.conf, so tests see the
         * bus policy users get. true: everything allowed, plus the project's file. */
        bool bus_allow_all;
        /* Run polkitd with its debug output (also enabled by UM_HARNESS_DEBUG=1). */
        bool polkit_debug;
        /* A directory of D-Bus activation files for the private bus (NULL: none), for
         * tests of bus activation. The bus has no <servicehelper>: it runs a file's Exec=
         * itself, as root, in the test's mount namespace, with DBUS_SYSTEM_BUS_ADDRESS set
         * to the private bus; the harness neither starts nor tracks such a process. The
         * directory may appear after harness_init() (in the private /run, or mounted by
         * the test): the bus reads its service directories again when it is asked for a
         * name it does not know. */
        const char *bus_service_dir;
        /* Only the private mount namespace with its /run and the supervisor: no test
         * identities, bus, polkitd or udevd. For the system tier, which boots an OS of its
         * own that brings all of those. */
        bool namespace_only;
        /* No systemd-udevd (see "udev" below): for tests of what the daemon does where
         * none runs, and for the benchmark, whose figures leave udev's work out. */
        bool without_udevd;
        /* polkit action files to load besides the project's (NULL-terminated; NULL: none),
         * e.g. udisks2's, for the benchmark that runs udisks2's own daemon. */
        const char *const *extra_polkit_policies;
} HarnessOptions;

/* Builds the environment described above. Must be called once, as root, in the main
 * thread, before any other thread exists (it forks a supervisor, see above). Returns 0
 * in the test process; the supervisor never returns. -EPERM when not root. In a GLib
 * test subprocess (g_test_trap_subprocess()) it attaches to the parent's environment
 * instead of building a new one. */
int harness_init(const HarnessOptions *options);

/* harness_init(), but exits: with a TAP "1..0 # SKIP" plan when not root, with
 * "Bail out!" on any other failure. */
void harness_init_or_exit(const HarnessOptions *options);

/* Stops the daemon(s), polkitd and dbus-daemon, unmounts everything under the temporary
 * directory and releases the harness's loop devices. Runs at exit; idempotent. */
void harness_teardown(void);

/* The temporary directory (mode 0755, under the private /run). Images live in
 * <tmpdir>/images. Owned by the harness. */
const char *harness_tmpdir(void);

/* The address of the private system bus ("unix:path=..."). */
const char *harness_bus_address(void);

/* The harness's own connection to the private bus, as root (sd-bus, owned by the
 * harness: do not unref). Only for the test process, never in a forked caller. */
sd_bus *harness_bus(void);

/* The project's source directory, for test data such as polkit/ example rules. */
const char *harness_source_root(void);

/* The configuration every daemon the harness starts reads, unless a test writes its own:
 * the kernel's drivers, as the tests written before userspace drivers expect. */
#define HARNESS_CONF_DEFAULT "[General]\nDriver=kernel\n"

/* contents (a usermount.conf) with Driver=kernel in its [General] section, added right
 * after that section's header or as a section of its own at the top (owned). For tests of
 * the kernel's drivers that write their own configuration. */
char *harness_conf_kernel(const char *contents);

/* Writes a file below the private /etc (e.g. "usermount/usermount.conf"), creating
 * parent directories. -EOPNOTSUPP when /etc is not an overlay (see above). */
int harness_write_etc(const char *relative_path, const char *contents);

/* What /proc/PID/stat says of a process the tests look for. */
typedef struct HarnessProcessStat {
        char comm[64];
        char state;                    /* 'R', 'S', 'Z', ... */
        pid_t ppid;
        unsigned long long start_time; /* clock ticks after boot: a pid and this name one
                                        * process, even when the pid is reused */
} HarnessProcessStat;

/* -ESRCH when there is no such process. */
int harness_process_stat(pid_t pid, HarnessProcessStat *ret);

/* Lists pid, a process the test started that may outlive the test process's tree (such
 * as a container's PID 1, whose PID namespace keeps it alive when its parent dies), to be
 * killed (SIGKILL) by the supervisor, or by the harness's janitor when the whole process
 * group was killed, if the test has not stopped it. */
int harness_kill_at_exit(pid_t pid);

/* ---------------------------------------------------------------------------------- */
/* The daemon                                                                         */

/* The usermountd binary to test: $UM_USERMOUNTD (set by tests/integration/meson.build),
 * or NULL. The stand-in for harness tests: $UM_HARNESS_STANDIN. */
const char *harness_daemon_path(void);
const char *harness_standin_path(void);

/* Starts path with extra_args (NULL-terminated, may be NULL) and the private bus in its
 * environment, its stdout sent to stderr, dying with the test process; waits until it
 * owns org.freedesktop.UserMount1 (checked to be this very process) within
 * HARNESS_TIMEOUT_MS. -ESRCH if it exits first, -ETIMEDOUT if it does not appear; the
 * process is killed and reaped in both cases. The harness keeps track of the process
 * until harness_stop_daemon(). */
int harness_start_daemon(const char *path, const char *const *extra_args, pid_t *ret_pid);

/* Sends SIGTERM, waits up to 10 s, then SIGKILL; reaps. Also reaps a daemon that already
 * died (e.g. after a test's kill(pid, SIGKILL)). Returns 0 if it exited by itself after
 * SIGTERM (or had already exited), 1 if it had to be killed, -errno on failure.
 * ret_wait_status (may be NULL) gets the waitpid() status. */
int harness_stop_daemon(pid_t pid, int *ret_wait_status);

/* ---------------------------------------------------------------------------------- */
/* polkit                                                                             */

/* Replaces the test rules (/etc/polkit-1/rules.d/00-usermount-harness.rules) with js
 * (NULL or "": no rules, so the .policy defaults apply) and waits until polkitd evaluates
 * them. polkitd watches its rules directories (inotify) and reloads every *.rules file
 * when one changes, then emits Authority.Changed; the harness replaces the file
 * atomically, with a probe rule first that answers YES for the probe action only with
 * this call's generation number, and asks polkitd about the probe (after each Changed,
 * or every 50 ms) until it says yes. The probe's subject is an unprivileged process:
 * polkitd says yes to uid 0 without running any rule. -ETIMEDOUT when the rules never
 * load (a syntax error makes polkitd skip the whole file). Test rules see every other
 * action. The /usr/share/polkit-1/rules.d seen by polkitd is empty. */
int harness_set_rules(const char *js);

typedef struct HarnessAuthorization {
        bool is_authorized;
        bool is_challenge;
} HarnessAuthorization;

/* org.freedesktop.PolicyKit1.Authority.CheckAuthorization as root for the subject
 * system-bus-name:bus_name (usermountd asks with a unix-process subject; polkitd treats
 * both as the same process). details: NULL or a NULL-terminated
 * key, value, key, value... list. */
int harness_polkit_check(const char *bus_name, const char *action_id, const char *const *details,
        bool allow_user_interaction, HarnessAuthorization *ret);

/* ---------------------------------------------------------------------------------- */
/* Unprivileged callers                                                                */

typedef enum HarnessRunFlags {
        /* After dropping privileges: unshare(CLONE_NEWUSER|CLONE_NEWNS), map uid 0 and gid
         * 0 to the caller's own ids (setgroups denied) and make "/" private: the caller is
         * root in its own user namespace, like a container or a rootless sandbox. */
        HARNESS_NEW_USERNS = 1 << 0,
        /* No supplementary groups (default: those of the user's /etc/group entries). */
        HARNESS_NO_SUPPLEMENTARY_GROUPS = 1 << 1,
} HarnessRunFlags;

/* Runs in the forked caller; the return value (0..255) is its exit status. */
typedef int (*HarnessCallerFunc)(void *userdata);

typedef struct HarnessCaller HarnessCaller;

/* Forks a caller: it dies with the test process, sends stdout to stderr (so a failing
 * g_assert in it cannot corrupt the TAP stream), keeps no fd of the test process but
 * stdin, stdout, stderr and its report pipes (3, 4), drops to uid/gid (setgroups with
 * the user's groups, setresgid, setresuid: no capabilities left; no_new_privs is NOT
 * set, so setuid binaries behave as for any user), stays dumpable, applies flags, sets
 * HOME=/ and USER, and runs func(userdata). ret_caller is owned by the caller of this
 * function (harness_caller_free()). Exit status 125 means the harness could not set the
 * caller up (the reason is on stderr). */
int harness_caller_spawn(uid_t uid, gid_t gid, HarnessRunFlags flags, HarnessCallerFunc func,
        void *userdata, HarnessCaller **ret_caller);
pid_t harness_caller_pid(HarnessCaller *caller);
/* Next line the caller sent with harness_report() (without the newline). -ETIMEDOUT,
 * or -EPIPE if the caller exited without sending one. */
int harness_caller_read_line(HarnessCaller *caller, int timeout_ms, char **ret_line);
/* Lets a caller that waits in harness_await_release() go on. */
int harness_caller_release(HarnessCaller *caller);
/* Waits for the caller to exit (killing it after timeout_ms: -ETIMEDOUT). Returns its
 * exit status, or 128 + signal number if a signal ended it. ret_output (may be NULL)
 * gets the lines it reported and nobody read yet. */
int harness_caller_wait(HarnessCaller *caller, int timeout_ms, char **ret_output);
/* Kills (SIGKILL) and reaps a caller still running. Accepts NULL, returns NULL. */
HarnessCaller *harness_caller_free(HarnessCaller *caller);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HarnessCaller, harness_caller_free)

/* harness_caller_spawn() + harness_caller_wait(HARNESS_CALLER_TIMEOUT_MS): returns the
 * exit status (128 + signal number if killed) or -errno. */
int harness_run_as(uid_t uid, gid_t gid, HarnessRunFlags flags, HarnessCallerFunc func,
        void *userdata, char **ret_output);

/* In a caller: sends one line to the test process (printf format; newlines in the result
 * are replaced by spaces). */
void harness_report(const char *format, ...) G_GNUC_PRINTF(1, 2);
/* In a caller: blocks until the test process calls harness_caller_release() (returns 0)
 * or goes away (-EPIPE). */
int harness_await_release(void);

/* In a caller (or any fresh process): connections to the private system bus that work
 * inside a user namespace. GDBus needs G_DBUS_CONNECTION_FLAGS_CROSS_NAMESPACE (GLib
 * 2.74) there; sd-bus works as is. libdbus (dbus-send) is rejected at authentication. */
GDBusConnection *harness_gdbus_connect(GError **error);
int harness_sd_bus_connect(sd_bus **ret_bus);

/* ---------------------------------------------------------------------------------- */
/* Filesystem images and loop devices                                                 */

typedef enum HarnessEntryType {
        HARNESS_ENTRY_DIR,
        HARNESS_ENTRY_FILE,         /* data: contents (NUL-terminated) */
        HARNESS_ENTRY_COPY,         /* data: host file to copy, e.g. "/bin/id" */
        HARNESS_ENTRY_SYMLINK,      /* data: link target */
        HARNESS_ENTRY_CHAR_DEVICE,  /* major, minor */
        HARNESS_ENTRY_BLOCK_DEVICE, /* major, minor */
        HARNESS_ENTRY_FIFO,
} HarnessEntryType;

/* mode 0 means the default (0644 files, 0755 directories, source's mode for COPY, 0600
 * devices); HARNESS_MODE_ZERO asks for mode 0000. */
#define HARNESS_MODE_ZERO 0x40000000u

typedef struct HarnessEntry {
        HarnessEntryType type;
        const char *path; /* relative to the filesystem root; parents listed first */
        const char *data;
        mode_t mode;      /* permission bits including S_ISUID, S_ISGID, S_ISVTX */
        uid_t uid;
        gid_t gid;
        unsigned major, minor;
        const char *caps; /* file capabilities, cap_from_text() form ("cap_setuid=ep") */
} HarnessEntry;

typedef struct HarnessImageSpec {
        const char *label;  /* NULL: none. squashfs has no label: must be NULL there. For
                             * erofs (erofs-utils 1.5 has no -L) the harness writes the
                             * superblock's volume name itself, any bytes, <= 16. */
        uint64_t size;      /* bytes, 0: the fs default (ext4 32 MiB, btrfs 128 MiB, xfs
                             * 320 MiB; sparse). squashfs and erofs are sized to content. */
        uid_t root_uid;     /* owner and mode of the root directory; mode 0: 0755 */
        gid_t root_gid;
        mode_t root_mode;
        const HarnessEntry *entries; /* terminated by an entry with path == NULL; may be NULL */
} HarnessImageSpec;

/* Makes an image of fstype ("ext4", "xfs", "btrfs", "squashfs", "erofs") populated from
 * spec in <tmpdir>/images (mode 0644, owned by root; chmod/chown it as a test needs).
 * ext4/squashfs/erofs are built from a staging directory by their mkfs; xfs/btrfs are
 * made empty, loop-mounted in the private namespace, populated and unmounted. */
int harness_make_image(const char *fstype, const HarnessImageSpec *spec, char **ret_path);

/* Attaches path to a new loop device (read-only if asked, auto-clearing) and keeps it
 * open, so it stays until harness_loop_detach() or teardown. ret_device: "/dev/loopN". */
int harness_loop_attach(const char *path, bool read_only, char **ret_device);
/* Detaches a device made by harness_loop_attach() (deferred by the kernel while mounted). */
int harness_loop_detach(const char *device);

/* Makes sure at least count loop devices exist that nothing is attached to, adding
 * devices through /dev/loop-control where needed, and returns every /dev/loopN node there
 * is now (NULL-terminated, g_strfreev()). For a system that cannot see devices made
 * later, such as a container whose /dev is bound at start. (At teardown the harness
 * removes every free loop device that was not there when it started, however it was
 * made: here, or by the kernel for LOOP_CTL_GET_FREE when none was free.) */
int harness_loop_reserve(unsigned count, char ***ret_nodes);

/* Mounts an image as root in the private namespace, on a new directory under
 * <tmpdir>/mnt, with mount flags (MS_*; add MS_NODEV|MS_NOSUID unless the test needs
 * otherwise) through an auto-clearing loop device. For tests that inspect an image. */
int harness_mount_image(const char *image, const char *fstype, unsigned long flags,
        char **ret_mountpoint);
/* Unmounts what harness_mount_image() mounted and removes the directory. */
int harness_umount(const char *mountpoint);

/* A zram disk of size bytes ("64M"): a real block device that is not a loop device, for
 * Mount by path. Removed by harness_zram_free(), or by the supervisor and teardown if the
 * test does not get that far. ret_node: "/dev/zramN". -ENODEV without zram. */
int harness_zram_new(const char *size, char **ret_node);
/* The same with a filesystem: the shell command mkfs (e.g. "mkfs.ext4 -q -L STICK") run
 * with the node appended, then a "change" uevent and udevd settled, so that udevd (and
 * whoever listens to it) knows the filesystem. */
int harness_zram_new_fs(const char *size, const char *mkfs, char **ret_node);
/* Unmounts (lazily) what uses it in this namespace, turns swap off, and removes it. */
int harness_zram_free(const char *node);

/* ---------------------------------------------------------------------------------- */
/* udev                                                                               */

/* Waits until the harness's udevd has handled every event so far (udevadm settle). */
int harness_udev_settle(void);
/* Makes the kernel send a real uevent with action ("add", "change", "remove") for the
 * block device node ("/dev/zram1"); the device itself stays as it is. */
int harness_udev_trigger(const char *node, const char *action);

/* ---------------------------------------------------------------------------------- */
/* cgroups                                                                            */

/* A cgroup of the test's own, <name>.<pid>, in each cgroup hierarchy the test process is
 * in that belongs to no controller (systemd's name=systemd hierarchy and the unified
 * one), for a program like systemd-nspawn that makes cgroups below its own and leaves
 * them behind. harness_cgroup_enter() moves the calling process into it (call it in a
 * child before exec). The whole tree is removed, deepest first, by
 * harness_cgroup_remove(), at teardown, or by the supervisor, once nothing runs in it. */
int harness_cgroup_new(const char *name);
int harness_cgroup_enter(void);
/* Moves process pid (all its threads; 0: the calling process) into it; what the process
 * forks afterwards is born there, wherever it was before. */
int harness_cgroup_move(pid_t pid);
/* The CPU time (user + system) used in its unified (cgroup2) directory since it was made,
 * by every process that ran there, exited ones included (cpu.stat usage_usec); -ENOENT
 * when there is no unified hierarchy. */
int harness_cgroup_cpu_usec(uint64_t *ret_usec);
/* Its unified (cgroup2) directory (g_free()), where cgroup.procs lists who runs in it;
 * NULL when there is none. */
char *harness_cgroup_unified_dir(void);
/* Removes the tree; -EBUSY while a process still runs in it. */
int harness_cgroup_remove(void);

/* ---------------------------------------------------------------------------------- */
/* Terminals                                                                          */

/* A pseudo-terminal: a program runs with the slave as its controlling terminal, the test
 * reads what it shows from the master (collected in output) and types into it. */
typedef struct HarnessTerminal {
        int master;    /* non-blocking */
        int slave_fd;  /* kept open so that the master stays readable before the program
                        * opens the slave */
        char *slave;   /* the slave's path */
        GString *output;
} HarnessTerminal;

/* Opens a terminal whose slave belongs to owner:group. -errno on failure. */
int harness_terminal_open(HarnessTerminal *t, uid_t owner, gid_t group);
void harness_terminal_close(HarnessTerminal *t);
/* Appends what the master has within timeout_ms to output; false once the slave side is
 * closed and drained. */
bool harness_terminal_read(HarnessTerminal *t, int timeout_ms);
/* Waits until output shows text after its first from bytes, or pid (a child of ours; 0:
 * none) exits, or timeout_ms passes. Whether the text is there. */
bool harness_terminal_wait_for(HarnessTerminal *t, pid_t pid, size_t from, const char *text,
        int timeout_ms);
/* Types text (as is: add "\n" for Enter). */
int harness_terminal_type(HarnessTerminal *t, const char *text);
/* Types a password and Enter once the program has turned echo off: a password prompt
 * shows before echo goes off, and turning it off (TCSAFLUSH) throws away what was typed
 * until then, as a person typing fast would see. -ETIMEDOUT if echo stays on. */
int harness_terminal_type_password(HarnessTerminal *t, const char *password, int timeout_ms);
/* Whether our child pid has exited (it stays a zombie for whoever reaps it). */
bool harness_child_exited(pid_t pid);
/* How often needle occurs in haystack (not overlapping). */
unsigned harness_count_substrings(const char *haystack, const char *needle);

/* ---------------------------------------------------------------------------------- */
/* "Nothing left behind"                                                              */

/* Loop devices (system-wide) whose backing file lives on the harness's private /run,
 * including images the daemon attached for callers. */
int harness_count_loop_devices(void);
/* Mounts in pid's mount namespace (0: the test process) below <tmpdir>, /run/media or
 * /run/usermount (the harness's own mounts of those directories are not counted). */
int harness_count_mounts(pid_t pid);
/* A new fd (O_CLOEXEC) of the network namespace the run started in, where its claim of
 * the machine lives (one run at a time): a test of that claim starts a second run in it,
 * as from another shell. -errno on failure. */
int harness_open_claim_netns(void);
/* A datagram socket bound at path (its directory made, an old socket replaced): the test
 * plays the receiver of sd_notify or of the journal's native protocol. */
int harness_dgram_listen(const char *path);
/* The next datagram on fd (within HARNESS_TIMEOUT_MS) as a string; fails the test if
 * none comes. */
char *harness_dgram_next(int fd);

/* Open file descriptors of pid (0: the test process). */
int harness_count_fds(pid_t pid);

/* The children of parent (alive or not yet reaped), by their process name (comm): those
 * named only_name (NULL: any), but for those named except_name (NULL: none). A GArray of
 * pid_t; usermountd's workers name themselves (WORKER_NAME_READY, ...). */
GArray *harness_children(pid_t parent, const char *only_name, const char *except_name);

typedef struct HarnessSnapshot {
        int loop_devices;
        int mounts;
        int daemon_fds; /* -1 when no daemon pid was given */
} HarnessSnapshot;

/* Takes the three counts (daemon_pid 0: no fd count), once they have stayed the same for
 * about 100 ms (a daemon refills its worker pool just after a reply). */
int harness_snapshot(pid_t daemon_pid, HarnessSnapshot *ret);
/* Waits until the counts equal expected (within timeout_ms; the kernel releases an
 * auto-clearing loop device and a daemon its fds shortly after a reply): 0 when they
 * do, -ETIMEDOUT (with the difference logged) otherwise. */
int harness_wait_snapshot(pid_t daemon_pid, const HarnessSnapshot *expected, int timeout_ms);
