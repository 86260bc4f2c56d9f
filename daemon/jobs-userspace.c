/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The BUILD job for a mount a userspace driver serves (driverpolicy.h, fusedriver.h), in
 * usermount-worker:
 *
 *   1. the re-check of what polkit was asked about (the type's prober, uuid, label); for a
 *      block device, the exclusive claim that proves nothing else holds it
 *   2. a uid of the driver's own from DriverUidRange= (uidclaim.h), held while it starts
 *   3. the FUSE mount of the worker's making and the driver started on it, sandboxed
 *      (fusedriver_mount()); the uid's lock goes once the driver runs as it
 *   4. a mount that will appear in a namespace others share must show the caller its root
 *      directory (mountbuild.c says why): checked through the driver
 *   5. the mount locked with the recipe every mount gets (mountbuild_lock_in())
 *
 * No loop device, no kernel filesystem parser: the kernel only sees the FUSE protocol.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "driverpolicy.h"
#include "fusedriver.h"
#include "jobs-worker.h"
#include "mountbuild.h"
#include "uidclaim.h"

#define DRIVER_UID_LOCK_PREFIX "driver-uid-"
#define SHIM_NAME "usermount-fuse-shim.so"

/* The drivers' preload library next to this program (usermount-worker), as installed in
 * libexecdir and as built in the build tree. */
static void shim_path(char *buf, size_t n) {
        char exe[PATH_MAX];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        char *slash;

        buf[0] = 0;
        if (k <= 0)
                return;
        exe[k] = 0;
        slash = strrchr(exe, '/');
        if (slash && (size_t) snprintf(buf, n, "%.*s/%s", (int) (slash - exe), exe,
                                       SHIM_NAME) >= n)
                buf[0] = 0;
}

/* Step 4: the root directory must appear as the caller's (check_own_root() of mountbuild.c
 * for the kernel's drivers). The caller asked for idmap none: refused when it does not. */
static int check_own_root(int mount_fd, const BuildJob *job, UmError *error) {
        const MountIdmap *m = &job->idmap;
        struct stat st;

        if (!m->own_root || job->driver.files_as_caller)
                return 0;
        if (fstat(mount_fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not learn who owns the filesystem's root directory");
        if (st.st_uid == m->caller_uid && st.st_gid == m->caller_gid)
                return 0;
        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EPERM,
                            "the filesystem's root directory belongs to uid %u (gid %u), and "
                            "with idmap 'none' it would appear as theirs in a mount namespace "
                            "others use; mount it with idmap 'user' (the default here), or with "
                            "OpenMount into a mount namespace of your own",
                            (unsigned) st.st_uid, (unsigned) st.st_gid);
}

/* Step 1. */
static int recheck(const BuildJob *job, int source_fd, UmError *error) {
        SourceProbe now = {};
        int r;

        if (job->source.type == SOURCE_BLOCK_DEVICE) {
                r = device_check_not_busy(job->source.rdev, error);
                if (r < 0)
                        return r;
        }
        return job_recheck_probe(job, source_fd, &now, error);
}

int job_build_userspace(const BuildJob *job, const MountOptions *options, int source_fd,
                        int stage_ns_fd, BuildReply *reply, UmError *error, int *ret_fd) {
        const FuseDriver *d = fusedriver_find(job->probe.fstype);
        _cleanup_close_ int mount_fd = -EBADF, pidfd = -EBADF, locked_fd = -EBADF;
        UidClaim claim = UID_CLAIM_NULL;
        char shim[PATH_MAX];
        uint64_t start = 0;
        pid_t pid = 0;
        int r;

        if (!d || !streq(d->name, job->driver.name))
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOENT,
                                    "the userspace driver %s for %s is no longer installed",
                                    job->driver.name, job->probe.fstype);
        r = recheck(job, source_fd, error);
        if (r < 0)
                return r;

        shim_path(shim, sizeof(shim));
        r = uid_claim(job->runtime_dir, DRIVER_UID_LOCK_PREFIX, job->driver.uid_first,
                      job->driver.uid_count, "a userspace driver", &claim, error);
        if (r < 0)
                return r;
        const FuseDriverSpec spec = {
                .driver = d,
                .fstype = job->probe.fstype,
                .source_fd = source_fd,
                .read_only = options->read_only,
                .attr_set = options->attr_set,
                .caller_uid = job->idmap.caller_uid,
                .caller_gid = job->idmap.caller_gid,
                .files_as_caller = job->driver.files_as_caller,
                .driver_uid = claim.uid,
                .timeout_usec = job->driver.timeout_usec,
                .shim_path = shim[0] ? shim : NULL,
        };
        r = fusedriver_mount(&spec, &mount_fd, &pid, &pidfd, &start, error);
        /* Running as the uid now, the driver keeps it its own; or nobody needs it. */
        uid_claim_release(&claim);
        if (r < 0)
                return r;

        r = check_own_root(mount_fd, job, error);
        if (r >= 0)
                r = mountbuild_lock_in(mount_fd, stage_ns_fd,
                                       stage_ns_fd >= 0 ? STAGE_DIR : job->runtime_dir,
                                       &locked_fd, error);
        if (r < 0) {
                /* Its mount goes with our fds; the kill makes sure it goes now. */
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                return r;
        }
        (void) mountbuild_mount_id(locked_fd, &reply->mount_id);
        /* An image has no device: the record names its file (request_make_record()). */
        if (job->source.type == SOURCE_IMAGE)
                snprintf(reply->backing_file, sizeof(reply->backing_file), "%s",
                         job->source_path);
        else
                block_device_node(job->source.rdev, source_fd, reply->device,
                                  sizeof(reply->device));
        reply->idmap_mode = job->driver.files_as_caller ? IDMAP_USER : job->idmap.mode;
        reply->driver_pid = (uint64_t) pid;
        reply->driver_start = start;
        reply->driver_uid = claim.uid;
        *ret_fd = TAKE_FD(locked_fd);
        return 0;
}
