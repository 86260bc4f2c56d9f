/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The layers of the sandbox for programs that parse hostile data (see sandbox.h for the
 * order). Such a program is treated as compromised from its first instruction, so the
 * sandbox holds only what it needs:
 *
 *  - New PID, mount, network, IPC, UTS and cgroup namespaces. Its own PID namespace means
 *    other processes of the same uid cannot be seen, signalled or ptraced, and killing the
 *    namespace's init (the program itself) kills everything it forked; a fresh /proc shows
 *    only the sandbox. No network or abstract sockets; no System V IPC.
 *  - The mount namespace's tree is made private, then read-only and nosuid recursively
 *    with mount_setattr(); /dev is replaced by a small tmpfs holding null, zero, full,
 *    random, urandom and, for the checker, one read-only block node owned by root: the
 *    program can open that one device for reading and nothing else. /run (the system bus
 *    and other daemons' sockets) is an empty read-only tmpfs, /tmp a private tiny tmpfs.
 *    Making the nodes needs CAP_MKNOD in the worker.
 *  - A dedicated uid and gid (never 0), no supplementary groups, every capability dropped
 *    from all sets including the bounding and ambient sets, securebits locked (no root
 *    privilege on exec, no setuid fixup), no_new_privs (a setuid-root program such as
 *    ntfs-3g runs as the sandbox's uid). Dropping the bounding set and locking securebits
 *    need CAP_SETPCAP in the worker.
 *  - A seccomp filter that refuses loop ioctls: LOOP_CLR_FD and LOOP_CHANGE_FD need no
 *    write access to the device, and LOOP_CHANGE_FD would let a checker swap the backing
 *    file of a read-only loop device after it vouched for the contents. It refuses new
 *    namespaces (unshare() and clone() with CLONE_NEW* flags, setns(); clone3() gets
 *    ENOSYS, as its flags cannot be filtered): without it, the program, unprivileged as it
 *    is, could make a user namespace and be root there, with the kernel's mount and
 *    netfilter code within reach. For drivers it also refuses the mount system calls: the
 *    daemon makes and owns the mount. Other architectures' system calls (x32, ia32) are
 *    refused so the filter cannot be bypassed.
 *  - rlimits: no core dumps, no locked memory, and what the caller gives for file size,
 *    fds, processes and address space. stdin is /dev/null; stdout and stderr go to one
 *    pipe the parent reads. All other fds but the ones the caller keeps are closed.
 */
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/param.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sched.h> /* struct clone_args */
#include <linux/securebits.h>

#include "kernel-compat.h"
#include "um-error.h"
#include "sandbox.h"

#if defined(__x86_64__)
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_X86_64
#define SANDBOX_SYSCALL_BIT 0x40000000 /* x32 system calls */
#elif defined(__aarch64__)
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_I386
#elif defined(__riscv) && __riscv_xlen == 64
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_RISCV64
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__s390x__)
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_S390X
#else
#error "sandbox: add this architecture's AUDIT_ARCH_* for the seccomp filter"
#endif

/* The low 32 bits of argument i (flags and ioctl numbers are 32-bit values). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SANDBOX_ARG_LOW(i) offsetof(struct seccomp_data, args[i])
#else
#define SANDBOX_ARG_LOW(i) (offsetof(struct seccomp_data, args[i]) + 4)
#endif

/* clone()'s flags come first, but second on s390 (CONFIG_CLONE_BACKWARDS2). */
#if defined(__s390x__)
#define SANDBOX_CLONE_FLAGS_ARG 1
#else
#define SANDBOX_CLONE_FLAGS_ARG 0
#endif

/* Every namespace flag; CLONE_NEWTIME only for unshare(): for clone() its bit is part of
 * the exit signal. */
#define SANDBOX_CLONE_NS_FLAGS                                                             \
        (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |      \
         CLONE_NEWPID | CLONE_NEWNET)
#define SANDBOX_UNSHARE_NS_FLAGS (SANDBOX_CLONE_NS_FLAGS | CLONE_NEWTIME)

#define SANDBOX_RET(action) BPF_STMT(BPF_RET | BPF_K, (action))
#define SANDBOX_DENY(e) SANDBOX_RET(SECCOMP_RET_ERRNO | (e))
/* If the system call is nr, go on with the next instruction, else skip n of them. */
#define SANDBOX_IF_NR(nr, n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, (n))
/* Load the low 32 bits of argument i. */
#define SANDBOX_LOAD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SANDBOX_ARG_LOW(i))

pid_t sandbox_clone(int *ret_pidfd) {
        struct clone_args args = {
                .flags = CLONE_PIDFD | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET |
                         CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP,
                .pidfd = (uint64_t) (uintptr_t) ret_pidfd,
                .exit_signal = SIGCHLD,
        };

        return (pid_t) syscall(SYS_clone3, &args, sizeof(args));
}

/*
 * What neither a checker nor a driver needs, refused for both: io_uring. Its rings run
 * system calls (IORING_OP_SOCKET, IORING_OP_OPENAT, ...) on the program's behalf without
 * passing through this filter, so a filter that refuses socket() would refuse nothing to
 * a program that has a ring. (The sandbox's locked-memory limit of 0 stops io_uring_setup()
 * only on kernels that charge the ring to it.)
 */
static const unsigned refused_calls[] = {
        __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
};

/*
 * What a driver never needs beyond that:
 *  - the mount family: it serves a mount the daemon made, and makes, moves and unmounts
 *    none (its C library's mount() and umount2() are answered by the preload shim before
 *    they get here, fuse-shim.c);
 *  - sockets: it talks to the kernel through its FUSE fd alone. The read-only tree does
 *    not stop connect() to a Unix socket of the host's that is outside /run, /tmp and
 *    /dev (the network namespace stops only the abstract ones and IP); syslog() then fails
 *    quietly;
 *  - the kernel's keyrings: a keyring of its uid would outlive it, for the next driver
 *    that is given the same uid, another user's;
 *  - new processes (fork(), vfork(), clone() without CLONE_THREAD; threads are fine): a
 *    driver is one process, so that its rlimits (RLIMIT_AS above all, counted per
 *    process) are the limits of all of it, and so that nothing it started can stay behind
 *    in a cgroup it was moved out of (driverscope.h). No driver forks once it serves
 *    (the shim answers fuse_daemonize()).
 */
static const unsigned driver_refused_calls[] = {
        __NR_mount,       __NR_umount2,    __NR_fsopen,     __NR_fsconfig,
        __NR_fsmount,     __NR_fspick,     __NR_move_mount, __NR_open_tree,
        __NR_pivot_root,  __NR_mount_setattr,
        __NR_socket,      __NR_socketpair,
        __NR_add_key,     __NR_keyctl,     __NR_request_key,
#ifdef __NR_fork
        __NR_fork,
#endif
#ifdef __NR_vfork
        __NR_vfork,
#endif
};

int sandbox_seccomp(bool driver) {
        /* A checker may fork (e2fsck and xfs_repair run helpers); a driver may not. */
        const uint32_t thread_mask = driver ? CLONE_THREAD : 0;
        struct sock_filter head[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_AUDIT_ARCH, 1, 0),
                SANDBOX_DENY(ENOSYS),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef SANDBOX_SYSCALL_BIT
                BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SANDBOX_SYSCALL_BIT, 0, 1),
                SANDBOX_DENY(ENOSYS),
#endif
                /* The accumulator holds the number until a branch below is taken. */
                SANDBOX_IF_NR(__NR_ioctl, 5),
                SANDBOX_LOAD_ARG(1),
                BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff00),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x4c00, 0, 1),
                SANDBOX_DENY(EPERM),
                SANDBOX_RET(SECCOMP_RET_ALLOW),

                SANDBOX_IF_NR(__NR_unshare, 4),
                SANDBOX_LOAD_ARG(0),
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SANDBOX_UNSHARE_NS_FLAGS, 0, 1),
                SANDBOX_DENY(EPERM),
                SANDBOX_RET(SECCOMP_RET_ALLOW),

                /* clone(): no namespace flags; and (flags & thread_mask) == thread_mask,
                 * which for a driver means threads only. */
                SANDBOX_IF_NR(__NR_clone, 7),
                SANDBOX_LOAD_ARG(SANDBOX_CLONE_FLAGS_ARG),
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SANDBOX_CLONE_NS_FLAGS, 0, 1),
                SANDBOX_DENY(EPERM),
                BPF_STMT(BPF_ALU | BPF_AND | BPF_K, thread_mask),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, thread_mask, 1, 0),
                SANDBOX_DENY(EPERM),
                SANDBOX_RET(SECCOMP_RET_ALLOW),

                SANDBOX_IF_NR(__NR_clone3, 1),
                SANDBOX_DENY(ENOSYS),
                SANDBOX_IF_NR(__NR_setns, 1),
                SANDBOX_DENY(EPERM),
        };
        struct sock_filter filter[ELEMENTSOF(head) + 2 * ELEMENTSOF(refused_calls) +
                                  2 * ELEMENTSOF(driver_refused_calls) + 1];
        struct sock_fprog prog = { .filter = filter };
        size_t n = ELEMENTSOF(head);

        memcpy(filter, head, sizeof(head));
        for (size_t i = 0; i < ELEMENTSOF(refused_calls); i++) {
                filter[n++] = (struct sock_filter) SANDBOX_IF_NR(refused_calls[i], 1);
                filter[n++] = (struct sock_filter) SANDBOX_DENY(EPERM);
        }
        for (size_t i = 0; driver && i < ELEMENTSOF(driver_refused_calls); i++) {
                filter[n++] = (struct sock_filter) SANDBOX_IF_NR(driver_refused_calls[i], 1);
                filter[n++] = (struct sock_filter) SANDBOX_DENY(EPERM);
        }
        filter[n++] = (struct sock_filter) SANDBOX_RET(SECCOMP_RET_ALLOW);
        prog.len = (unsigned short) n;

        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                return -errno;
        return 0;
}

static int sandbox_mknod(const char *path, mode_t mode, dev_t dev) {
        if (mknod(path, mode, dev) < 0)
                return -errno;
        /* Explicitly, whatever the umask: root-owned and not writable by the program. */
        if (chmod(path, mode & 07777) < 0)
                return -errno;
        return 0;
}

/* Replaces /dev with a tmpfs holding the harmless nodes and what m asks for. */
static int sandbox_dev(const SandboxMounts *m) {
        static const struct {
                const char *name;
                unsigned minor;
        } mem[] = { { "null", 3 }, { "zero", 5 }, { "full", 7 }, { "random", 8 },
                    { "urandom", 9 } };
        char path[64];
        int r;

        if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
                  "mode=0755,size=64k,nr_inodes=16") < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(mem); i++) {
                snprintf(path, sizeof(path), "/dev/%s", mem[i].name);
                r = sandbox_mknod(path, S_IFCHR | 0666, makedev(1, mem[i].minor));
                if (r < 0)
                        return r;
        }
        if (m->dev_fd_link && symlink("/proc/self/fd", "/dev/fd") < 0)
                return -errno;
        if (m->block_path && m->file_tree) {
                r = sandbox_mknod(m->block_path, S_IFREG | 0444, 0);
                if (r < 0)
                        return r;
                if (move_mount(m->file_tree_fd, "", AT_FDCWD, m->block_path,
                               MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return -errno;
                return 0;
        }
        if (m->block_path)
                return sandbox_mknod(m->block_path, S_IFBLK | 0444, m->block_dev);
        return 0;
}

int sandbox_mounts(const SandboxMounts *m, const char **ret_step) {
        struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID };
        int r;

        *ret_step = "private mounts";
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        *ret_step = "/dev";
        r = sandbox_dev(m);
        if (r < 0)
                return r;
        *ret_step = "/proc";
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return -errno;
        *ret_step = "/run";
        if (mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "mode=0755,size=4k,nr_inodes=4") < 0)
                return -errno;
        *ret_step = "read-only root";
        if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof(ro)) < 0)
                return -errno;
        /* After the read-only step: the only writable place, tiny and the sandbox's own. */
        *ret_step = "/tmp";
        if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "mode=01777,size=1m,nr_inodes=64") < 0)
                return -errno;
        if (m->own_dir) {
                if (mkdir(m->own_dir, 0700) < 0)
                        return -errno;
                if (chown(m->own_dir, m->own_uid, (gid_t) m->own_uid) < 0)
                        return -errno;
        }
        if (chdir("/") < 0)
                return -errno;
        return 0;
}

int sandbox_limits(const SandboxLimits *l) {
        const struct {
                int resource;
                rlim_t value;
        } limits[] = {
                { RLIMIT_CORE, 0 },        { RLIMIT_FSIZE, l->fsize }, { RLIMIT_NOFILE, l->nofile },
                { RLIMIT_NPROC, l->nproc }, { RLIMIT_MEMLOCK, 0 },      { RLIMIT_MSGQUEUE, 0 },
                { RLIMIT_AS, l->as },      { RLIMIT_CPU, l->cpu },
        };

        for (size_t i = 0; i < ELEMENTSOF(limits); i++) {
                struct rlimit rl = { limits[i].value, limits[i].value };

                if ((limits[i].resource == RLIMIT_AS || limits[i].resource == RLIMIT_CPU) &&
                    limits[i].value == 0)
                        continue;
                /* CPU time: SIGXCPU at the limit (a program may end cleanly), SIGKILL a
                 * few seconds later (one that ignores it). */
                if (limits[i].resource == RLIMIT_CPU && limits[i].value != RLIM_INFINITY)
                        rl.rlim_max = limits[i].value + SANDBOX_CPU_GRACE_SEC;
                if (limits[i].resource == RLIMIT_NPROC && l->nproc_exclusive)
                        rl.rlim_cur = 0;
                if (setrlimit(limits[i].resource, &rl) < 0)
                        return -errno;
        }
        return 0;
}

int sandbox_fds(int out_fd, int err_fd, const int *keep, size_t n_keep) {
        int first_free = 4 + (int) n_keep, moved[8];
        int null_fd;

        if (n_keep > ELEMENTSOF(moved))
                return -E2BIG;
        /* Everything above the places it goes to first, so no dup lands on an fd that is
         * still to be moved. */
        out_fd = fcntl(out_fd, F_DUPFD_CLOEXEC, first_free);
        err_fd = fcntl(err_fd, F_DUPFD_CLOEXEC, first_free);
        if (out_fd < 0 || err_fd < 0)
                return -errno;
        for (size_t i = 0; i < n_keep; i++) {
                moved[i] = fcntl(keep[i], F_DUPFD_CLOEXEC, first_free);
                if (moved[i] < 0)
                        return -errno;
        }
        if (dup3(err_fd, 3, O_CLOEXEC) < 0)
                return -errno;
        if (dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
                return -errno;
        /* dup2() clears close-on-exec: these are the program's. */
        for (size_t i = 0; i < n_keep; i++)
                if (dup2(moved[i], 4 + (int) i) < 0)
                        return -errno;
        null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null_fd < 0)
                return -errno;
        if (dup2(null_fd, 0) < 0)
                return -errno;
        if (close_range((unsigned) first_free, ~0U, 0) < 0)
                return -errno;
        return 0;
}

int sandbox_drop_privileges(uid_t uid, gid_t gid) {
        struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
        unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

        for (unsigned long c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
                        return -errno;
        if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
                return -errno;
        if (setgroups(0, NULL) < 0)
                return -errno;
        if (setresgid(gid, gid, gid) < 0)
                return -errno;
        if (setresuid(uid, uid, uid) < 0)
                return -errno;
        /* SECBIT_NO_SETUID_FIXUP kept the capabilities across setresuid(): clear them. */
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return -errno;
        if (syscall(SYS_capset, &header, data) < 0)
                return -errno;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

void sandbox_exec(const SandboxExec *x) {
        const char *step = "file descriptors";
        int err_fd = x->err_fd;
        int r = sandbox_fds(x->out_fd, x->err_fd, x->keep, x->n_keep);

        if (r >= 0) {
                err_fd = 3;
                step = "resource limits";
                r = sandbox_limits(&x->limits);
        }
        if (r >= 0) {
                step = "dropping privileges";
                r = sandbox_drop_privileges(x->uid, x->gid);
        }
        if (r >= 0) {
                step = "seccomp filter";
                r = sandbox_seccomp(x->driver);
        }
        if (r >= 0) {
                step = x->exec_step;
                execve(x->path, x->argv, x->envp);
                r = -errno;
        }
        sandbox_fail(err_fd, r, step);
}

void sandbox_fail(int err_fd, int r, const char *step) {
        SandboxFailure f = { .error = -r };

        snprintf(f.step, sizeof(f.step), "%s", step);
        (void) !write(err_fd, &f, sizeof(f));
        _exit(127);
}

void sandbox_read_failure(int err_fd, SandboxFailure *ret) {
        if (read(err_fd, ret, sizeof(*ret)) != sizeof(*ret))
                *ret = (SandboxFailure) {};
        ret->step[sizeof(ret->step) - 1] = 0;
}

bool sandbox_read_output(int fd, char *buf, size_t max, size_t *len) {
        char chunk[4096];
        ssize_t n = read(fd, chunk, sizeof(chunk));

        if (n < 0)
                return errno == EINTR || errno == EAGAIN;
        if (n == 0)
                return false;
        size_t keep = MIN((size_t) n, max - *len);
        memcpy(buf + *len, chunk, keep);
        *len += keep;
        buf[*len] = 0;
        return true;
}

bool sandbox_line_has_prefix(const char *line, size_t len, const char *const *prefixes) {
        for (const char *const *p = prefixes; p && *p; p++) {
                size_t n = strlen(*p);

                if (len >= n && strncmp(line, *p, n) == 0)
                        return true;
        }
        return false;
}

void sandbox_output_summary(const char *output, const char *const *quiet_prefixes, char *ret,
                            size_t n) {
        char joined[512] = "";
        size_t o = 0;
        const char *l = output;

        while (l && *l && o + 1 < sizeof(joined)) {
                const char *end = strchr(l, '\n');
                const char *next = end ? end + 1 : NULL;
                const char *raw = l;
                size_t len;

                /* A quiet prefix may name the line's indentation (xfs_repair's progress)
                 * or not (a driver's banner): both are tried. */
                while (*l == ' ' || *l == '\t')
                        l++;
                len = end ? (size_t) (end - l) : strlen(l);
                while (len > 0 && (l[len - 1] == ' ' || l[len - 1] == '\r'))
                        len--;
                if (len > 0 && !sandbox_line_has_prefix(l, len, quiet_prefixes) &&
                    !sandbox_line_has_prefix(raw, len + (size_t) (l - raw), quiet_prefixes)) {
                        int w = snprintf(joined + o, sizeof(joined) - o, "%s%.*s",
                                         o > 0 ? "; " : "", (int) len, l);
                        o = MIN(o + (size_t) MAX(w, 0), sizeof(joined) - 1);
                }
                l = next;
        }
        um_escape(o > 0 ? joined : "it printed nothing", ret, n);
}

int sandbox_reap(int pidfd, bool kill, siginfo_t *ret_status) {
        if (kill)
                (void) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        for (;;) {
                if (waitid((idtype_t) P_PIDFD, (id_t) pidfd, ret_status, WEXITED) >= 0)
                        return 0;
                if (errno != EINTR)
                        return -errno;
        }
}
