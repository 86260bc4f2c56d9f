/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The system tier's host: this machine's own OS booted with systemd as PID 1 in
 * systemd-nspawn, with usermount's Debian packages at hand to install the way the README
 * tells users to, and ways to run commands and login sessions inside it.
 *
 * A test program does, after harness_init() with namespace_only (the private /run the
 * container lives on, and the supervisor that kills it if the test dies):
 *
 *         SystemHost h = {};
 *         system_host_install(&h);        // tools/package: the .debs, and older ones
 *         system_host_make_root(&h);      // a root directory with a copy of /etc
 *         system_host_boot(&h);           // systemd-nspawn -b, until the system is up
 *         system_host_run(&h, NULL, "usermount list", &out);
 *         system_host_shutdown(&h);       // ends sessions, powers off, cleans up
 *
 * What the container is: a root directory on the harness's private /run with a copy of
 * the host's /etc (the admin's enabled units left out, units that cannot run in a
 * container or are not ours masked) and of its package database (/var/lib/dpkg), /usr the
 * host's under a writable overlay (--overlay: what dpkg does there stays in the
 * container), the packages read-only at SYSTEM_DEBS_DIR, every loop device and /dev/loop-control bound in (the kernel makes no
 * new node in a container's /dev), and the cgroup v2 hierarchy for the container's
 * systemd (on the legacy one it never learns that a scope emptied, and sessions hold a
 * shutdown for minutes). It runs in a cgroup of the harness's, so that what nspawn leaves
 * in the cgroup trees is removed with it.
 *
 * Errors: functions return >= 0 on success, -errno on failure, and log the cause to
 * stderr. Strings returned through ret_* are the caller's (g_free()).
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

#include "harness.h"

/* How long the container may take to boot, and to power off before it is killed. */
#define SYSTEM_BOOT_TIMEOUT_MS 60000
#define SYSTEM_SHUTDOWN_TIMEOUT_MS 30000
/* How long one command inside may run. */
#define SYSTEM_COMMAND_TIMEOUT_MS 120000

/* The PATH of commands run inside. */
#define SYSTEM_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Where the packages are inside the container. */
#define SYSTEM_DEBS_DIR "/opt/usermount-debs"

typedef struct SystemHost {
        char *dir;         /* <harness tmpdir>/system */
        char *debs;        /* the packages tools/package built: <dir>/debs */
        char *version;     /* their version (debian/changelog's) */
        char *previous_version; /* that of the older ones, of the same tree */
        char *usr_upper;   /* the writable layer of the container's /usr: <dir>/usr */
        char *root;        /* the container's root directory: <dir>/root */
        char *console_log; /* what systemd-nspawn and the container's console printed */
        GPtrArray *binds;  /* extra device nodes to bind into the container */
        pid_t nspawn_pid;
        int nspawn_pidfd;
        pid_t init_pid;    /* the container's PID 1, as the host numbers it */
} SystemHost;

/* Builds the packages of source_root with its tools/package into h->debs, twice: as
 * h->previous_version (the upgrade journey's starting point) and as h->version. */
int system_host_install(SystemHost *h, const char *source_root);

/* Makes the root directory (see above). Files for the container can be written below
 * h->root afterwards, before the boot. */
int system_host_make_root(SystemHost *h);

/* Binds a device node of the host (e.g. a zram disk) into the container at the boot. */
void system_host_add_device(SystemHost *h, const char *node);

/* Boots the container and waits until its systemd reports the system up: "running", or
 * "degraded" (then the failed units are logged: units of the host's OS that cannot run in
 * a container, say; the journeys tell whether usermount's part works). */
int system_host_boot(SystemHost *h);

/*
 * Runs script with /bin/sh inside the container, in all its namespaces, with an empty
 * environment but PATH and LANG: as root (user NULL), or as user through "su -l USER -c",
 * which opens a logind session through PAM for the command. Standard output and error
 * are both in *ret_output (may be NULL). Returns the exit status (128 + signal when
 * killed), or -errno when it could not run or did not end in time.
 */
int system_host_run(SystemHost *h, const char *user, const char *script, char **ret_output);

/* system_host_run() as root that must succeed: its output, or NULL (logged) on failure. */
char *system_host_check(SystemHost *h, const char *script);

/* Ends every logind session, powers the container off (SIGRTMIN+4 to its PID 1), waits
 * for it (SIGKILL after SYSTEM_SHUTDOWN_TIMEOUT_MS) and removes its cgroups. Idempotent. */
int system_host_shutdown(SystemHost *h);

/* Frees h's memory (after system_host_shutdown()). */
void system_host_done(SystemHost *h);

/*
 * A login session of user inside the container, on a terminal of its own: "su -l USER"
 * run as root on a pseudo-terminal that is the session's controlling terminal, so that
 * PAM opens a logind session and polkit's text agent can ask for passwords there, as for
 * a person at a console.
 */
typedef struct SystemSession {
        HarnessTerminal terminal;
        pid_t pid;   /* the nsenter process, leader of the session on the terminal */
        char *user;
        size_t from; /* where in the terminal's output the command sent last starts */
} SystemSession;

int system_session_open(SystemHost *h, const char *user, SystemSession *ret);

/*
 * Types command into the session's shell and waits until it has finished. password: typed
 * when "Password: " shows and the terminal's echo is off (NULL: nothing is typed).
 * *ret_prompted (may be NULL): whether a password prompt showed. *ret_output: what the
 * terminal showed meanwhile (may be NULL). Returns the command's exit status, or -errno.
 */
int system_session_run(SystemSession *s, const char *command, const char *password,
                       bool *ret_prompted, char **ret_output);

/* Types command and returns at once; then wait for text with system_session_wait_for(). */
int system_session_send(SystemSession *s, const char *command);
bool system_session_wait_for(SystemSession *s, const char *text);
/* The exit status of the command sent last (waits for it), or -errno. */
int system_session_wait_status(SystemSession *s, char **ret_output);

/* Logs out and waits for the session's processes to end. */
int system_session_close(SystemSession *s);
