/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting a userspace filesystem driver (fuse2fs, exfat-fuse, fusefat, lowntfs-3g,
 * squashfuse) on a FUSE mount the daemon made itself: the driver parses the untrusted
 * image in the sandbox of sandbox.h instead of the kernel's parser, and only serves the
 * connection. The stages of fusedriver_mount():
 *
 *   1. check the spec; a read-only source is passed on as an O_RDONLY fd
 *   2. open /dev/fuse; fsopen("fuse"), fsconfig (fd, rootmode, user_id, group_id,
 *      default_permissions, subtype, source), FSCONFIG_CMD_CREATE, fsmount(attr_set)
 *   3. start the driver in the sandbox with the connection at fd 4 and the source at
 *      fd 5, usermount-fuse-shim.so preloaded (fuse-shim.c says why): in a stub made
 *      ahead (fusedriver_stub_start()), or in a sandbox made now
 *   4. wait until the driver answered FUSE_INIT (a statx of the mount's root, which the
 *      kernel holds until then), or it exited, or the timeout (then it is killed)
 *   5. hand back the detached mount, the driver's pid, pidfd and start time
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "drivertable.h"
#include "sandboxstub.h"
#include "um-error.h"

typedef struct FuseDriverSpec {
        const FuseDriver *driver;
        const char *fstype;
        int source_fd;          /* the caller's image file or block device, O_RDONLY or O_RDWR */
        int claim_fd;           /* the image's claim (claim.h), which the driver holds for its
                                 * life (as fd 6 or 7, after the shim), or -EBADF (not 0) */
        int uid_lock_fd;        /* the lock of driver_uid's claim (uidclaim.h), which the
                                 * driver holds for its life (after the claim), or -EBADF */
        bool read_only;
        uint64_t offset;        /* byte offset of the filesystem in the source (partitions), 0 */
        uint64_t attr_set;      /* MOUNT_ATTR_* for fsmount(): NODEV|NOSUID, NOEXEC unless exec,
                                 * RDONLY if read_only */
        uid_t caller_uid;       /* user_id=/group_id= of the mount; owner of files of ownerless
                                 * types */
        gid_t caller_gid;
        bool files_as_caller;   /* a type with owners: every file appears as the caller's
                                 * (uid=, gid=), as for ownerless types */
        uid_t driver_uid;       /* the sandbox's own uid (== gid); never 0, never the caller's */
        uint64_t timeout_usec;  /* how long the driver may take to answer FUSE_INIT */
        uint64_t memory_max;    /* its address space (RLIMIT_AS), bytes; 0: the default */
        uint32_t tasks_max;     /* its threads (RLIMIT_NPROC of its uid); 0: the default */
        uint64_t cpu_sec;       /* its CPU time (RLIMIT_CPU), seconds; 0: none */
        const char *source_name; /* the mount's source in mountinfo: the device node of a
                                  * block device (desktops bind a mount to its volume by
                                  * it), NULL for "usermount" */
        const char *shim_path;  /* the preload library; NULL: the installed one
                                 * (usermount-fuse-shim.so in libexecdir); "": none */
        SandboxStub *stub;      /* a stub of fusedriver_stub_start(driver_uid), or NULL: used
                                 * if it still waits (and then it is the driver), else
                                 * stopped; *stub is SANDBOX_STUB_NULL afterwards */
} FuseDriverSpec;

/* The sandbox of a driver that will run as driver_uid, made ahead (sandboxstub.h): its
 * namespaces and mounts; nothing of a request. To be called in a privileged worker. 0 and
 * *ret, or -errno. */
int fusedriver_stub_start(uid_t driver_uid, SandboxStub *ret);

/*
 * Makes a FUSE superblock for spec->driver and starts the driver on it in the sandbox, as
 * the stages above say. To be called in a privileged worker (root, all capabilities).
 * SIGCHLD must not be SIG_IGN. The driver outlives the caller: it is the caller's child
 * until the caller exits, then it is reparented; it exits by itself when the superblock
 * goes (the last reference to the mount dropped) and dies with ENOTCONN for the mount's
 * users when killed.
 *
 * Returns 0 and *ret_mount_fd (the detached mount, close-on-exec, not yet locked: the
 * caller locks it), *ret_pid, *ret_pidfd (close-on-exec; the caller owns both fds),
 * *ret_start_time (field 22 of /proc/PID/stat) and, unless ret_conn_fd is NULL, a copy of
 * the FUSE connection's /dev/fuse fd (close-on-exec): polled, it reports an error once
 * the connection is gone, which is when the superblock went (the last mount of it), and
 * while it is open a dead driver does not end the connection. Errors: -EINVAL (a bad spec), -EROFS (a
 * read-write mount asked of a read-only source fd, or of a driver that cannot write),
 * -EOPNOTSUPP (an offset the driver does not take), -EUSERS (another process runs as
 * driver_uid: the kernel refused the exec; claim another), -ETIMEDOUT (no answer to
 * FUSE_INIT in time: killed), -EIO (the driver exited during start; the sentence holds its first
 * meaningful output lines, escaped), other -errno (the superblock or the sandbox could not
 * be made). Leaves no process, fd or mount behind on failure.
 */
int fusedriver_mount(const FuseDriverSpec *spec, int *ret_mount_fd, pid_t *ret_pid,
                     int *ret_pidfd, uint64_t *ret_start_time, int *ret_conn_fd,
                     UmError *error);
