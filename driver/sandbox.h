/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox for programs that parse hostile data: the image checker (fscheck.c) and the
 * userspace filesystem drivers (fusedriver.c). One function per layer; a caller builds its
 * sandbox by calling them in this order in the child sandbox_clone() returned:
 *
 *   1. sandbox_clone()            new PID, mount, network, IPC, UTS, cgroup namespaces
 *   2. sandbox_mounts()           private, read-only, nosuid tree; /dev, /proc, /run, /tmp
 *   3. sandbox_fds()              stdin /dev/null, stdout+stderr a pipe, kept fds, no others
 *   4. sandbox_limits()           rlimits
 *   5. sandbox_drop_privileges()  unprivileged uid/gid, no capabilities, no_new_privs
 *   6. sandbox_seccomp()          no new namespaces, no loop ioctls[, a driver's more]
 *   7. execve()
 *
 * A step that fails is reported with sandbox_fail() over the close-on-exec pipe
 * sandbox_fds() put at fd 3, so a sandbox that could not be built is never mistaken for
 * something the program did. Why each layer is there is described at the top of
 * sandbox.c. The steps before sandbox_drop_privileges() need CAP_SYS_ADMIN (namespaces,
 * mounts), CAP_MKNOD (the nodes in /dev) and CAP_SETPCAP (bounding set, securebits): they
 * run in a privileged worker.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/types.h>

#include "macro.h"

/* What the child reports when it could not build the sandbox or exec the program. */
typedef struct SandboxFailure {
        int error; /* positive errno */
        char step[32];
} SandboxFailure;

/*
 * clone3() with CLONE_PIDFD and new PID, mount, network, IPC, UTS and cgroup namespaces,
 * exit signal SIGCHLD. Returns the child's pid in the parent (and *ret_pidfd, close-on-exec),
 * 0 in the child, -1 with errno on failure. The child is the PID namespace's init: when it
 * dies, everything it forked dies with it.
 */
pid_t sandbox_clone(int *ret_pidfd);

typedef struct SandboxMounts {
        /* A block device node for this device at block_path, root's, mode 0444, or none
         * when block_path is NULL. */
        dev_t block_dev;
        const char *block_path;
        /* With file_tree, instead of the block node: the detached mount file_tree_fd of one
         * regular file (an image checked as a file, fscheck_run_file()) over an empty file
         * at block_path. */
        bool file_tree;
        int file_tree_fd;
        /* /dev/fd -> /proc/self/fd: paths "/dev/fd/N" name the sandbox's own fds (a
         * symlink, not a device node). */
        bool dev_fd_link;
        /* An empty directory in the private /tmp owned by own_uid (== gid), mode 0700, or
         * none when own_dir is NULL. */
        const char *own_dir;
        uid_t own_uid;
} SandboxMounts;

/*
 * In the child, as root in the new mount namespace: makes the tree private, replaces /dev
 * with a tmpfs holding null, zero, full, random, urandom (and what m asks for), mounts a
 * fresh /proc, an empty /run, makes everything read-only and nosuid recursively, then
 * mounts a private 1 MiB /tmp (with m->own_dir in it) and changes to /. *ret_step names the step that failed.
 */
int sandbox_mounts(const SandboxMounts *m, const char **ret_step);

/*
 * In the child: stdin /dev/null, stdout and stderr out_fd, err_fd moved to 3 (close-on-exec:
 * it reports a failure to exec), keep[i] moved to 4 + i (inherited across exec), every
 * other fd closed. Opens /dev/null: after sandbox_mounts().
 */
int sandbox_fds(int out_fd, int err_fd, const int *keep, size_t n_keep);

typedef struct SandboxLimits {
        rlim_t fsize;  /* RLIMIT_FSIZE; RLIM_INFINITY for none */
        rlim_t nofile; /* RLIMIT_NOFILE */
        rlim_t nproc;  /* RLIMIT_NPROC, counted per uid */
        rlim_t as;     /* RLIMIT_AS; 0 leaves the inherited one */
        rlim_t cpu;    /* RLIMIT_CPU, seconds; 0 leaves the inherited one */
        /* The uid is to be this program's alone: RLIMIT_NPROC's soft limit is 0 until the
         * program raises it to the hard one (nproc), so that the kernel refuses its exec
         * with EAGAIN if any other task ran as the uid when sandbox_drop_privileges()
         * took it (setresuid() flags a uid over its limit, execve() refuses the flagged).
         * Only tasks whose uid is of the initial user namespace count; uidclaim.h
         * excludes the uids /etc/subuid hands to containers. */
        bool nproc_exclusive;
} SandboxLimits;

/* The CPU seconds past SandboxLimits.cpu (SIGXCPU) until SIGKILL. */
#define SANDBOX_CPU_GRACE_SEC 5

/* In the child: the limits of l, and always no core dumps, locked memory or message
 * queues. Hard and soft limits are the same, so the program cannot raise them, but for
 * CPU time, whose hard limit is SANDBOX_CPU_GRACE_SEC later (SIGXCPU, then SIGKILL; a
 * program may raise its soft limit up to that: the cap is the limit plus the grace), and
 * for processes with nproc_exclusive (soft 0 until the program raises it). */
int sandbox_limits(const SandboxLimits *l);

/*
 * In the child: uid and gid (never 0; not checked here), no supplementary groups, every
 * capability dropped from all sets including bounding and ambient, securebits locked (no
 * root privilege on exec, no setuid fixup), no_new_privs: a setuid binary exec'd afterwards
 * runs with the same uid and no capabilities, and without AT_SECURE.
 */
int sandbox_drop_privileges(uid_t uid, gid_t gid);

/*
 * In the child, last before execve(): a seccomp filter that refuses loop ioctls, new
 * namespaces (unshare()/clone() with CLONE_NEW*, setns(); clone3() gets ENOSYS so the C
 * library falls back to clone()), system calls of other ABIs, io_uring (io_uring_setup,
 * _enter, _register: a ring would do what the filter refuses), and, for a driver, the
 * mount family (mount, umount2, fsopen, fsconfig, fsmount, fspick, move_mount, open_tree,
 * pivot_root, mount_setattr), sockets (socket, socketpair), the keyrings (add_key,
 * keyctl, request_key) and new processes (fork, vfork, clone without CLONE_THREAD): EPERM.
 * sandbox.c says why each.
 */
int sandbox_seccomp(bool driver);

/* In the parent, while the program runs: reads what it wrote to its output pipe fd,
 * keeping the first max bytes in buf (*len so far; buf has max + 1 bytes and stays
 * NUL-terminated) and draining the rest. false at end of file. */
bool sandbox_read_output(int fd, char *buf, size_t max, size_t *len);

/* The output's lines that do not start with one of quiet_prefixes (NULL-terminated, or
 * NULL), trimmed, joined with "; " and escaped into ret (size n): the sentence of an
 * error; "it printed nothing" when none is left. */
void sandbox_output_summary(const char *output, const char *const *quiet_prefixes, char *ret,
                            size_t n);

/* Whether line (len bytes) starts with one of prefixes (NULL-terminated, or NULL). */
bool sandbox_line_has_prefix(const char *line, size_t len, const char *const *prefixes);

/* Steps 3 to 7 in one: what the program gets, after sandbox_mounts(). */
typedef struct SandboxExec {
        int out_fd;             /* its stdout and stderr */
        int err_fd;             /* where a failed step is reported (sandbox_fail()) */
        const int *keep;        /* kept at 4, 5, ... */
        size_t n_keep;
        SandboxLimits limits;
        uid_t uid;
        gid_t gid;
        bool driver;            /* sandbox_seccomp()'s */
        const char *path;
        char *const *argv;
        char *const *envp;
        const char *exec_step;  /* the name of the last step, "running the driver" */
} SandboxExec;

/* In the child, after sandbox_mounts(): sandbox_fds(), sandbox_limits(),
 * sandbox_drop_privileges(), sandbox_seccomp(), execve(). Never returns: a step that
 * fails is reported with sandbox_fail(). */
_noreturn_ void sandbox_exec(const SandboxExec *x);

/* In the parent: kills the sandbox first when kill is set (killing the PID namespace's
 * init kills every process in it), then reaps it into *ret_status. -errno. */
int sandbox_reap(int pidfd, bool kill, siginfo_t *ret_status);

/* In the child: reports r (-errno) at step over fd err_fd and exits 127. */
_noreturn_ void sandbox_fail(int err_fd, int r, const char *step);

/* In the parent, after every writer of err_fd is gone: the failure the child reported, or
 * .error == 0 if it reported none. */
void sandbox_read_failure(int err_fd, SandboxFailure *ret);
