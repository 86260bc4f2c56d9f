/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A uid of one's own from a range, for a process that parses hostile data (an image
 * check, fscheck.h; a userspace driver, fusedriver.h): the first uid of the range that no
 * other claimer holds (a lock file per uid in a root-only directory), no account, group
 * or process uses and /etc/subuid and /etc/subgid delegate to nobody, with the same number
 * as gid. Two such processes never share a uid, so a
 * compromised one cannot use up the other's per-uid limits (processes, pipe buffers,
 * inotify, keyrings), share its user keyring or signal it.
 *
 * A claim lasts as long as its lock: an image check holds it while the checker runs; a
 * driver holds it for its life (it inherits the lock's fd), so the next claim skips its
 * uid at the cost of one flock(). A driver's claim scans no processes
 * (UID_CLAIM_NO_PROCESS_SCAN): the kernel proves the uid unused when the driver starts
 * (SandboxLimits.nproc_exclusive, sandbox.h), and a uid found in use there is skipped by
 * claiming again from the next one.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "um-error.h"

/* The most uids a range may span. */
#define UID_CLAIM_COUNT_MAX 65536u

typedef struct UidClaim {
        uid_t uid;               /* the uid (and gid) claimed */
        int dir_fd;              /* the lock directory */
        int lock_fd;             /* flock()ed <dir>/<prefix><uid> */
        char lock_name[64];
} UidClaim;

#define UID_CLAIM_NULL ((UidClaim) { .dir_fd = -EBADF, .lock_fd = -EBADF })

typedef enum UidClaimFlags {
        /* No look at /proc for processes running as a uid: the claimer has the kernel
         * check that at exec instead (sandbox.h, SandboxLimits.nproc_exclusive). */
        UID_CLAIM_NO_PROCESS_SCAN = 1u << 0,
} UidClaimFlags;

/*
 * Claims a uid of [first, first + count) for prefix ("image-check-uid-", "driver-uid-"),
 * with locks in lock_dir (an absolute path to a directory only root may write). what names
 * the claimer in messages ("the image check"). The lock's fd is read-only: a process it is
 * handed to (a driver) can hold or drop the lock, and write nothing. -EBUSY when every uid
 * is in use; other -errno with error set.
 */
int uid_claim(const char *lock_dir, const char *prefix, uid_t first, unsigned count,
              UidClaimFlags flags, const char *what, UidClaim *ret, UmError *error);

/* Lets the lock go (the lock file is removed); the claim is nobody's from then on. Accepts
 * a UID_CLAIM_NULL. */
void uid_claim_release(UidClaim *c);

/* Closes this process's fds of the claim without unlinking the lock file: the lock stays
 * with the process that inherited lock_fd (a driver), for as long as it holds that. The
 * file stays too; the next claim of the uid takes it over. Accepts a UID_CLAIM_NULL. */
void uid_claim_hand_over(UidClaim *c);

/* 1 if no account, group or process uses id, 0 if something does, -errno. */
int uid_claim_id_unused(unsigned id);
