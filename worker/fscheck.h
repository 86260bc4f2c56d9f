/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read-only pre-mount check of images (ImageCheck=yes): runs the filesystem's own
 * checker (e2fsck -n -f, xfs_repair -n, ...) on the loop device (or, for an erofs image
 * mounted from its file, the file), in a sandbox that holds only a read-only device node
 * for that one device (or that one file), before the kernel parses the image.
 * How the sandbox is built and why is described at the top of fscheck.c.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "um-error.h"

typedef struct FsCheckSpec {
        uid_t uid;             /* unprivileged identity the checker runs as; never 0 */
        gid_t gid;             /* its only group; never 0 */
        uint64_t timeout_usec; /* the sandbox is killed after this long; 0 is refused */
        /* 0 or 1: every check runs as uid and gid. More (at most 65536): each check runs as
         * a uid of [uid, uid + uid_count) that no other check running holds and no
         * account, group or process uses, with the same number as its gid; a check finds
         * none free -> -EBUSY. Checks claim their uid with a lock file
         * ("image-check-uid-<uid>", removed when the check ends) in lock_dir, an absolute
         * path to a directory only root may write (the daemon's runtime directory), the
         * same for every check that takes uids from the range. */
        unsigned uid_count;
        const char *lock_dir;
} FsCheckSpec;

/* The most uids a FsCheckSpec may span. */
#define FSCHECK_UID_COUNT_MAX 65536u

/*
 * One checker: an absolute program path and the arguments that come before the device
 * path, which is appended as the last argument. Output lines starting with one of
 * quiet_prefixes are progress chatter and left out of the error sentence; a line starting
 * with one of damage_prefixes means damage even when the exit status is 0 (fsck.erofs 1.5
 * exits 0 after a superblock checksum mismatch).
 */
typedef struct FsChecker {
        const char *path;
        const char *const *argv;           /* argv[0] first, NULL-terminated, no device */
        const char *const *quiet_prefixes; /* NULL-terminated, or NULL */
        const char *const *damage_prefixes; /* NULL-terminated, or NULL */
        bool unlimited_fsize;              /* xfs_repair exits 1 if it cannot lift RLIMIT_FSIZE */
} FsChecker;

/*
 * The checker installed for fstype on this system, from a static table of absolute paths
 * (/usr/sbin, /sbin, /usr/bin; never $PATH): a pointer into that table (static, never
 * freed), or NULL if fstype has no checker (squashfs, iso9660, udf, unknown types) or
 * none of its programs is installed.
 */
const FsChecker *fscheck_find(const char *fstype);

/* Whether a checker exists for fstype on this system (for logs and --check-config). */
bool fscheck_available(const char *fstype);

/*
 * Checks the filesystem of fstype on the block device block_fd (the loop device; the fd
 * stays the caller's and is not used for I/O), read-only, with the checker fscheck_find()
 * names. Returns 0: clean. -EUCLEAN: the checker found damage, crashed, or failed on the
 * image (error: UM_ERROR_KIND_FAILED, a sentence naming the checker, its exit status or
 * signal, and its first meaningful lines of output, escaped). -ETIMEDOUT: it did not finish
 * in time and was killed. -ENOENT: no checker for this type (the caller decides).
 * -EINVAL: uid or gid 0, no timeout, or an unusable uid range. -EBUSY: every uid of the
 * range is in use. -ENOTBLK: block_fd is not a block device. Other
 * -errno: the sandbox could not be built (CAP_MKNOD and CAP_SETPCAP are needed).
 * To be called in a privileged worker (jobs.c): it forks the sandbox itself, reaps it and
 * leaves no process, mount or file behind. SIGCHLD must not be set to SIG_IGN.
 */
int fscheck_run(int block_fd, const char *fstype, const FsCheckSpec *spec, UmError *error);

/*
 * fscheck_run() on a regular image file instead of a block device (an erofs image that is
 * mounted from its file, without a loop device): the sandbox holds a read-only bind mount
 * of that one file, id-mapped so that the file's owner and group appear as the checker's
 * uid and gid, where the block node would be. The same results, and -EOPNOTSUPP (error
 * set) when the file cannot be given to the sandbox that way: on a mount of another mount
 * namespace, on a filesystem that cannot be id-mapped, or not readable by its owner.
 */
int fscheck_run_file(int file_fd, const char *fstype, const FsCheckSpec *spec, UmError *error);

/*
 * Like fscheck_run() with an explicit checker: what fscheck_run() does after the table
 * lookup. Tests use it to run fake checkers in the same sandbox; nothing a D-Bus caller
 * sends can choose the checker.
 */
int fscheck_run_checker(int block_fd, const FsChecker *checker, const FsCheckSpec *spec,
                        UmError *error);
