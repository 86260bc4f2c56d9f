/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read-only pre-mount check of images (see fscheck.h).
 *
 * The checker parses hostile data, so it is treated as compromised from its first
 * instruction. It runs in the sandbox of sandbox.c (whose top comment says why each layer
 * is there), shared with the userspace filesystem drivers, with what a read-only check
 * needs and no more:
 *
 *  - /dev holds, besides null, zero, full, random and urandom, one block node for the
 *    loop device's dev_t, owned by root, mode 0444: the checker can open that one device
 *    for reading and nothing else. It cannot chmod the node (not its owner) and cannot
 *    reopen the host's /dev/loopN (mode 0660, group disk). Making the node needs CAP_MKNOD
 *    in the worker. An image checked as a file (an erofs image mounted without a loop
 *    device) is there instead as a read-only bind mount of that one file, id-mapped so
 *    that its owner appears as the checker (check_file_tree()).
 *  - A dedicated uid and gid from the spec (never 0; given a range of uids, one of its own
 *    for each check running at the same time: identity_claim()).
 *  - The seccomp filter without the mount-call layer (the checker has no capability to
 *    mount anyway; the filter is as it always was for checks).
 *  - rlimits: files of at most 1 MiB (unlimited for xfs_repair, which refuses to run
 *    otherwise; the only writable place is the 1 MiB /tmp anyway), 64 fds, 128 processes
 *    of the uid. The parent keeps the first 4 KiB of stdout and stderr. The environment is
 *    PATH and LANG=C, nothing else. All other fds are closed: the worker's socket and the
 *    caller's fds never reach it.
 *  - It dies with the worker (PR_SET_PDEATHSIG), and a timeout: the parent SIGKILLs the
 *    namespace's init through the pidfd and reaps it.
 *
 * Errors while building the sandbox are sent to the parent over a close-on-exec pipe, so
 * a sandbox that could not be built is never mistaken for a verdict on the image. Any
 * non-zero exit or death by signal of the checker counts as damage: the check fails closed
 * (a crash while parsing an image is the strongest sign of a hostile one).
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/param.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#include "fscheck.h"
#include "idmap-userns.h"
#include "kernel-compat.h"
#include "procfs.h"
#include "sandbox.h"
#include "time-util.h"
#include "uidclaim.h"

#define FSCHECK_OUTPUT_MAX 4096
#define FSCHECK_DEVICE "/dev/fscheck-device"

/* ---- the table of checkers -------------------------------------------------------- */

/*
 * Verified on Debian 12 (e2fsprogs 1.47.0, xfsprogs 6.1.0, btrfs-progs 6.2, erofs-utils
 * 1.5): every command opens the device read-only, forces a full check whatever the
 * superblock's (attacker-controlled) clean flag says, and exits 0 only for a clean
 * filesystem. xfs_repair -n exits 1 for a dirty log (it cannot replay it read-only), so
 * such images are refused. fsck.erofs needs --extract (without a directory) to decode
 * every file. fsck.fat, fsck.exfat and ntfsfix follow their manuals; they are not
 * installed on the test machine. squashfs, iso9660 and udf have no read-only checker:
 * fscheck_find() returns NULL and the caller decides.
 */
typedef struct FsCheckerEntry {
        const char *fstype;
        const char *const *paths; /* candidates, first installed one wins */
        FsChecker checker;        /* .path filled from paths by fscheck_find() */
} FsCheckerEntry;

#define STRV(...) ((const char *const[]) { __VA_ARGS__, NULL })

#define E2FSCK                                                                           \
        STRV("/usr/sbin/e2fsck", "/sbin/e2fsck"),                                        \
                { .argv = STRV("e2fsck", "-n", "-f"),                                    \
                  .quiet_prefixes = STRV("Pass ", "e2fsck 1.") }

static FsCheckerEntry checkers[] = {
        { "ext2", E2FSCK },
        { "ext3", E2FSCK },
        { "ext4", E2FSCK },
        { "xfs",
          STRV("/usr/sbin/xfs_repair", "/sbin/xfs_repair"),
          { .argv = STRV("xfs_repair", "-n"),
            .quiet_prefixes = STRV("Phase ", "        - ", "No modify flag set"),
            .unlimited_fsize = true } },
        { "btrfs",
          STRV("/usr/bin/btrfs", "/usr/sbin/btrfs", "/sbin/btrfs"),
          { .argv = STRV("btrfs", "check", "--readonly"),
            .quiet_prefixes = STRV("[", "Opening filesystem", "Checking filesystem on",
                                   "UUID:") } },
        { "erofs",
          STRV("/usr/bin/fsck.erofs", "/usr/sbin/fsck.erofs", "/sbin/fsck.erofs"),
          { .argv = STRV("fsck.erofs", "--extract"), .damage_prefixes = STRV("<E>") } },
        { "vfat",
          STRV("/usr/sbin/fsck.fat", "/sbin/fsck.fat"),
          { .argv = STRV("fsck.fat", "-n", "-V") } },
        { "exfat",
          STRV("/usr/sbin/fsck.exfat", "/sbin/fsck.exfat"),
          { .argv = STRV("fsck.exfat", "-n") } },
        { "ntfs3",
          STRV("/usr/bin/ntfsfix", "/usr/sbin/ntfsfix", "/sbin/ntfsfix", "/bin/ntfsfix"),
          { .argv = STRV("ntfsfix", "-n") } },
};

const FsChecker *fscheck_find(const char *fstype) {
        if (!fstype)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(checkers); i++) {
                FsCheckerEntry *e = &checkers[i];

                if (!streq(e->fstype, fstype))
                        continue;
                for (const char *const *p = e->paths; *p; p++)
                        if (access(*p, X_OK) == 0) {
                                /* Static table: the last lookup's path is as good as any. */
                                e->checker.path = *p;
                                return &e->checker;
                        }
                return NULL;
        }
        return NULL;
}

bool fscheck_available(const char *fstype) {
        return fscheck_find(fstype) != NULL;
}

/* ---- the sandbox (child side; its layers are sandbox.c) ---------------------------- */

/* What the checker gets to read: a block device's number, or an image file as a detached,
 * read-only, id-mapped bind mount of that one file (check_file_tree()). */
typedef struct CheckTarget {
        dev_t dev;
        int file_tree_fd; /* -EBADF for a block device */
} CheckTarget;

/* Runs in the sandbox's init (the clone3() child); never returns. No allocations: the
 * parent prepared argv and envp before the clone. */
_noreturn_ static void sandbox_child(const CheckTarget *t, int out_fd, int err_fd,
                                     const FsCheckSpec *spec, const FsChecker *checker,
                                     char *const *argv) {
        static char *const envp[] = { (char *) "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                      (char *) "LANG=C", NULL };
        const SandboxMounts mounts = { .block_dev = t->dev, .block_path = FSCHECK_DEVICE,
                                       .file_tree = t->file_tree_fd >= 0,
                                       .file_tree_fd = t->file_tree_fd };
        /* Files of at most 1 MiB (unlimited for xfs_repair, which refuses to run otherwise;
         * the only writable place is the 1 MiB /tmp anyway), 64 fds, 128 processes of the
         * uid. */
        const SandboxLimits limits = {
                .fsize = checker->unlimited_fsize ? RLIM_INFINITY : 1 << 20,
                .nofile = 64,
                .nproc = 128,
        };
        const char *step = "parent death signal";
        sigset_t none;
        int r;

        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        r = prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ? -errno : 0;
        if (r >= 0)
                r = sandbox_mounts(&mounts, &step);
        if (r < 0)
                sandbox_fail(err_fd, r, step);
        sandbox_exec(&(const SandboxExec) {
                .out_fd = out_fd,
                .err_fd = err_fd,
                .limits = limits,
                .uid = spec->uid,
                .gid = spec->gid,
                .path = checker->path,
                .argv = argv,
                .envp = envp,
                .exec_step = "running the checker",
        });
}

/* ---- the checker's identity -------------------------------------------------------- */

#define FSCHECK_LOCK_PREFIX "image-check-uid-"

/* The uid and gid one check runs as, and the claim that keeps them its own. */
typedef struct CheckIdentity {
        uid_t uid;
        gid_t gid;
        UidClaim claim; /* UID_CLAIM_NULL with a single uid */
} CheckIdentity;

#define CHECK_IDENTITY_NULL ((CheckIdentity) { .claim = UID_CLAIM_NULL })

static void identity_release(CheckIdentity *id) {
        uid_claim_release(&id->claim);
}

/*
 * The identity of one check. With spec->uid_count <= 1 that is spec->uid and spec->gid,
 * shared by every check. Else a uid of [uid, uid + uid_count) of its own (uidclaim.h), as
 * uid and gid, held by a lock file "image-check-uid-<uid>" in spec->lock_dir while the
 * check runs.
 */
static int identity_claim(const FsCheckSpec *spec, CheckIdentity *id, UmError *error) {
        int r;

        if (spec->uid_count <= 1) {
                id->uid = spec->uid;
                id->gid = spec->gid;
                return 0;
        }
        r = uid_claim(spec->lock_dir, FSCHECK_LOCK_PREFIX, spec->uid, spec->uid_count, 0,
                      "the image check", &id->claim, error);
        if (r < 0)
                return r;
        id->uid = id->claim.uid;
        id->gid = (gid_t) id->claim.uid;
        return 0;
}

/* ---- the parent side -------------------------------------------------------------- */

typedef struct SandboxResult {
        bool timed_out;
        siginfo_t status;
        SandboxFailure failure;  /* .error != 0 if the sandbox could not be built */
        char output[FSCHECK_OUTPUT_MAX + 1];
        size_t output_len;
} SandboxResult;


static bool read_output(int fd, SandboxResult *res) {
        return sandbox_read_output(fd, res->output, FSCHECK_OUTPUT_MAX, &res->output_len);
}

static int sandbox_wait(int pidfd, int out_fd, uint64_t timeout_usec, SandboxResult *res) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;
        bool open = true, exited = false;

        while (open || !exited) {
                struct pollfd p[2] = {
                        { .fd = open ? out_fd : -1, .events = POLLIN },
                        { .fd = exited ? -1 : pidfd, .events = POLLIN },
                };
                /* The deadline passed, or it cannot wait: killed rather than hang. */
                if (poll_until(p, ELEMENTSOF(p), deadline) <= 0) {
                        res->timed_out = true;
                        break;
                }
                if (p[0].revents)
                        open = read_output(out_fd, res);
                if (p[1].revents)
                        exited = true;
        }
        return sandbox_reap(pidfd, res->timed_out, &res->status);
}

static int sandbox_run(const CheckTarget *t, const FsCheckSpec *spec, const FsChecker *checker,
                       char *const *argv, SandboxResult *res) {
        _cleanup_close_ int out_r = -EBADF, out_w = -EBADF, err_r = -EBADF, err_w = -EBADF;
        _cleanup_close_ int pidfd = -EBADF;
        int p[2], r;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        out_r = p[0];
        out_w = p[1];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        err_r = p[0];
        err_w = p[1];

        pid = sandbox_clone(&pidfd);
        if (pid < 0)
                return -errno;
        if (pid == 0)
                sandbox_child(t, out_w, err_w, spec, checker, argv);

        out_w = safe_close(out_w);
        err_w = safe_close(err_w);
        r = sandbox_wait(pidfd, out_r, spec->timeout_usec, res);
        if (r < 0)
                return r;
        /* Every writer is gone now: a setup failure is there or nothing is. */
        sandbox_read_failure(err_r, &res->failure);
        return 0;
}

/* Whether a line of the output starts with one of the checker's damage markers. */
static bool output_shows_damage(const FsChecker *c, const SandboxResult *res) {
        for (const char *l = res->output; l && *l;) {
                const char *end = strchr(l, '\n');

                if (sandbox_line_has_prefix(l, end ? (size_t) (end - l) : strlen(l),
                                            c->damage_prefixes))
                        return true;
                l = end ? end + 1 : NULL;
        }
        return false;
}

/* The first non-chatter lines of the output, joined with "; ", escaped, into buf. */
static void output_summary(const FsChecker *c, const SandboxResult *res, char *buf, size_t n) {
        sandbox_output_summary(res->output, c->quiet_prefixes, buf, n);
}

/* Turns what happened into the verdict: 0, -EUCLEAN, -ETIMEDOUT or the setup's errno. */
static int sandbox_verdict(const FsChecker *c, const FsCheckSpec *spec, const SandboxResult *res,
                           UmError *error) {
        char summary[320], how[48];

        if (res->timed_out)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ETIMEDOUT,
                                    "The filesystem check by %s did not finish within %" PRIu64
                                    " ms and was stopped.",
                                    c->path, spec->timeout_usec / 1000);
        if (res->failure.error != 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, res->failure.error,
                                    "Could not run the filesystem check by %s (%s): %s.",
                                    c->path, res->failure.step, strerror(res->failure.error));
        if (res->status.si_code == CLD_EXITED && res->status.si_status == 0 &&
            !output_shows_damage(c, res))
                return 0;

        if (res->status.si_code == CLD_EXITED)
                snprintf(how, sizeof(how), "exit status %d", res->status.si_status);
        else
                snprintf(how, sizeof(how), "killed by signal %d", res->status.si_status);
        output_summary(c, res, summary, sizeof(summary));
        return um_error_set(error, UM_ERROR_KIND_FAILED, EUCLEAN,
                            "The filesystem check by %s found damage (%s): %s", c->path, how,
                            summary);
}

/*
 * An image file for the sandbox: a detached bind mount of that one file, read-only,
 * nosuid, nodev, noexec, id-mapped so that its owner and group appear as the checker's
 * uid and gid. The checker can then open it as its owner may, and nothing else of the
 * file's filesystem; nothing is changed on the file. -EOPNOTSUPP (with error) where that
 * cannot be done: a file on a mount of another mount namespace, or on a filesystem that
 * cannot be id-mapped.
 */
static int check_file_tree(int file_fd, const struct stat *st, uid_t uid, gid_t gid,
                           int *ret_fd, UmError *error) {
        _cleanup_close_ int tree_fd = -EBADF, userns_fd = -EBADF;
        IdMap uids, gids;
        int r;

        if (!(st->st_mode & S_IRUSR))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EOPNOTSUPP,
                                    "The image file is not readable by its owner.");
        tree_fd = open_tree(file_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (tree_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EOPNOTSUPP,
                                    "Could not give the image file to its check: %s.",
                                    strerror(errno));
        idmap_single(st->st_uid, uid, &uids);
        idmap_single(st->st_gid, gid, &gids);
        r = idmap_make_userns(&uids, &gids, &userns_fd, error);
        if (r < 0)
                return r;
        struct mount_attr attr = {
                .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                            MOUNT_ATTR_NOEXEC | MOUNT_ATTR_IDMAP,
                .userns_fd = (uint64_t) userns_fd,
        };
        if (mount_setattr(tree_fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EOPNOTSUPP,
                                    "Could not give the image file to its check: %s.",
                                    strerror(errno));
        *ret_fd = TAKE_FD(tree_fd);
        return 0;
}

/* fscheck_run_checker() on a block device, or (file_ok) on a regular file. */
static int fscheck_run_on(int fd, bool file_ok, const FsChecker *checker,
                          const FsCheckSpec *spec, UmError *error) {
        _cleanup_(identity_release) CheckIdentity id = CHECK_IDENTITY_NULL;
        _cleanup_free_ SandboxResult *res = NULL;
        _cleanup_free_ char **argv = NULL;
        _cleanup_close_ int tree_fd = -EBADF;
        FsCheckSpec run;
        struct stat st;
        size_t n = 0;
        int r;

        if (!checker || !checker->path || checker->path[0] != '/' || !checker->argv ||
            !checker->argv[0])
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "No valid filesystem checker was given.");
        if (!spec || spec->uid == 0 || spec->gid == 0 || spec->uid == (uid_t) -1 ||
            spec->gid == (gid_t) -1 || spec->timeout_usec == 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "The filesystem check needs an unprivileged uid and gid "
                                    "and a timeout.");
        if (spec->uid_count > 1 &&
            (spec->uid_count > FSCHECK_UID_COUNT_MAX || !spec->lock_dir ||
             spec->lock_dir[0] != '/' ||
             (uint64_t) spec->uid + spec->uid_count - 1 >= (uint64_t) (uid_t) -1))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "The image check's uid range needs at most %u uids below "
                                    "4294967295 and an absolute lock directory.",
                                    FSCHECK_UID_COUNT_MAX);
        if (fstat(fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not examine the device to check.");
        if (!S_ISBLK(st.st_mode) && !(file_ok && S_ISREG(st.st_mode)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, ENOTBLK,
                                    "The filesystem check needs a block device.");

        while (checker->argv[n])
                n++;
        argv = calloc(n + 2, sizeof(char *));
        res = calloc(1, sizeof(*res));
        if (!argv || !res)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "Out of memory.");
        memcpy(argv, checker->argv, n * sizeof(char *));
        argv[n] = (char *) FSCHECK_DEVICE;

        r = identity_claim(spec, &id, error);
        if (r < 0)
                return r;
        run = *spec;
        run.uid = id.uid;
        run.gid = id.gid;
        if (S_ISREG(st.st_mode)) {
                r = check_file_tree(fd, &st, run.uid, run.gid, &tree_fd, error);
                if (r < 0)
                        return r;
        }
        r = sandbox_run(&(const CheckTarget) { .dev = st.st_rdev, .file_tree_fd = tree_fd },
                        &run, checker, argv, res);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "Could not run the filesystem check by %s: %s.",
                                    checker->path, strerror(-r));
        return sandbox_verdict(checker, &run, res, error);
}

int fscheck_run_checker(int block_fd, const FsChecker *checker, const FsCheckSpec *spec,
                        UmError *error) {
        return fscheck_run_on(block_fd, false, checker, spec, error);
}

static int fscheck_run_type(int fd, bool file_ok, const char *fstype, const FsCheckSpec *spec,
                            UmError *error) {
        const FsChecker *c = fscheck_find(fstype);
        char esc[64];

        if (!c)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOENT,
                                    "No filesystem checker for %s is installed.",
                                    um_escape(fstype, esc, sizeof(esc)));
        return fscheck_run_on(fd, file_ok, c, spec, error);
}

int fscheck_run(int block_fd, const char *fstype, const FsCheckSpec *spec, UmError *error) {
        return fscheck_run_type(block_fd, false, fstype, spec, error);
}

int fscheck_run_file(int file_fd, const char *fstype, const FsCheckSpec *spec, UmError *error) {
        return fscheck_run_type(file_fd, true, fstype, spec, error);
}
