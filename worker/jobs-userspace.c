/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The two jobs that build a mount a userspace driver serves (driverpolicy.h,
 * fusedriver.h), in usermount-worker. START_DRIVER:
 *
 *   1. the re-check of what polkit was asked about (the type's prober, uuid, label); for a
 *      block device, the exclusive claim that proves nothing else holds it
 *   2. a uid of the driver's own from DriverUidRange= (uidclaim.h), whose lock the driver
 *      holds for its life
 *   3. the FUSE mount of the worker's making and the driver started on it, sandboxed
 *      (fusedriver_mount()); if the kernel finds the uid in use at the exec, steps 2 and
 *      3 again with the next uid (at most DRIVER_UID_ATTEMPTS times)
 *   4. its pid and its FUSE connection to the daemon, which watches it from now on (and
 *      ends it if anything below fails or does not answer in time); the worker waits
 *
 * then BUILD:
 *
 *   5. a mount that will appear in a namespace others share must show the caller its root
 *      directory (mountbuild.c says why): checked through the driver
 *   6. the mount locked with the recipe every mount gets (mountbuild_lock_in())
 *
 * Step 2 and the sandbox of step 3 are done ahead when the daemon sent PREPARE_DRIVER
 * (after its reply, while polkit is asked): the claim and a stub (sandboxstub.h) wait in
 * this worker for START_DRIVER, which then only sends the stub its order to exec.
 *
 * No loop device, no kernel filesystem parser: the kernel only sees the FUSE protocol.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/param.h>
#include <sys/pidfd.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asuser.h"
#include "claim.h"
#include "device.h"
#include "fd-util.h"
#include "fusedriver.h"
#include "loop.h"
#include "buildsource.h"
#include "jobs-userspace.h"
#include "mountbuild.h"
#include "time-util.h"
#include "uidclaim.h"

#define DRIVER_UID_LOCK_PREFIX "driver-uid-"
/* How many uids a start tries that the kernel found in use (each a process that runs as a
 * uid of the range without holding its lock: nothing of ours). */
#define DRIVER_UID_ATTEMPTS 8
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
typedef struct StatAs {
        int fd;
        struct stat st;
} StatAs;

static int fstat_fn(void *userdata) {
        StatAs *s = userdata;

        return fstat(s->fd, &s->st) < 0 ? -errno : 0;
}

static int check_own_root(int mount_fd, const BuildJob *job, UmError *error) {
        const MountIdmap *m = &job->idmap;
        StatAs s = { .fd = mount_fd };
        const struct stat *st = &s.st;
        int r;

        if (!m->own_root || job->driver.files_as_caller)
                return 0;
        /* As the caller: nobody else may look into the mount (asuser.h). */
        r = asuser_run(m->caller_uid, m->caller_gid, fstat_fn, &s);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "could not learn who owns the filesystem's root directory");
        if (st->st_uid == m->caller_uid && st->st_gid == m->caller_gid)
                return 0;
        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EPERM,
                            "the filesystem's root directory belongs to uid %u (gid %u), and "
                            "with idmap 'none' it would appear as theirs in a mount namespace "
                            "others use; mount it with idmap 'user' (the default here), or with "
                            "OpenMount into a mount namespace of your own",
                            (unsigned) st->st_uid, (unsigned) st->st_gid);
}

/*
 * The id of the locked mount. The lock leaves the worker in a user namespace of its own,
 * where the caller's uid is not mapped and the FUSE mount lets it not in: so a child forked
 * before the lock, still in the initial user namespace and running as the caller, asks.
 */
typedef struct IdHelper {
        pid_t pid;
        int sock;
} IdHelper;

_noreturn_ static void id_helper_run(int sock, uid_t uid, gid_t gid) {
        int64_t answer = -EIO;
        uint64_t id = 0;
        size_t n_fds = 0;
        int fd = -EBADF;
        char byte;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || setgroups(0, NULL) < 0 ||
            setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
                answer = -errno;
        else if (fdpass_recv(sock, &byte, 1, &fd, 1, &n_fds, 0) == 1 && n_fds == 1)
                answer = mountbuild_mount_id(fd, &id) < 0 ? -errno : (int64_t) id;
        (void) !write(sock, &answer, sizeof(answer));
        _exit(0);
}

static int id_helper_start(uid_t uid, gid_t gid, IdHelper *ret) {
        int pair[2];
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                safe_close(pair[0]);
                safe_close(pair[1]);
                return -errno;
        }
        if (pid == 0) {
                safe_close(pair[0]);
                id_helper_run(pair[1], uid, gid);
        }
        safe_close(pair[1]);
        *ret = (IdHelper) { .pid = pid, .sock = pair[0] };
        return 0;
}

/* Asks for fd's id (fd < 0: only ends the helper), and reaps the helper. */
static int id_helper_finish(IdHelper *h, int fd, uint64_t *ret_id) {
        struct iovec iov = { .iov_base = (char *) "?", .iov_len = 1 };
        int64_t answer = -EIO;
        int r = 0;

        if (h->pid <= 0)
                return -ESRCH;
        if (fd >= 0) {
                r = fdpass_send(h->sock, &iov, 1, &fd, 1);
                if (r >= 0 && read(h->sock, &answer, sizeof(answer)) != sizeof(answer))
                        r = -EIO;
                if (r >= 0 && answer < 0)
                        r = (int) answer;
                if (r >= 0)
                        *ret_id = (uint64_t) answer;
        }
        h->sock = safe_close(h->sock);
        (void) kill(h->pid, SIGKILL);
        (void) waitpid(h->pid, NULL, 0);
        h->pid = 0;
        return r;
}

/*
 * The source the driver gets: a file description of its own on the very file (reopened
 * through /proc/self/fd, which leads to the open file, never to a name), so that the
 * driver's reads move no offset the caller or another driver of the same fd shares
 * (fusefat reads its boot sector at the current offset). A block device was opened
 * read-only by the probe (a write open waits for polkit): now that polkit said yes, it is
 * reopened read-write unless the mount is read-only, and exclusively (O_EXCL): the
 * driver holds the device's claim for its life, as a mounted filesystem does (claim.h).
 * An image keeps the caller's access mode; one the worker may not reopen (on a FUSE mount
 * of the caller's, which lets root in no more than ours do) stays the caller's fd.
 * *ret_fd -EBADF: use source_fd.
 */
static int driver_source(const BuildJob *job, int source_fd, bool read_only, int *ret_fd,
                         UmError *error) {
        const bool block = job->source.type == SOURCE_BLOCK_DEVICE;
        int flags = fcntl(source_fd, F_GETFL);
        _cleanup_close_ int fd = -EBADF;
        struct stat now, was;
        char path[64];

        *ret_fd = -EBADF;
        if (flags < 0 || fstat(source_fd, &was) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "the source cannot be inspected: %s", strerror(errno));
        snprintf(path, sizeof(path), "/proc/self/fd/%d", source_fd);
        fd = open(path, (block ? (read_only ? O_RDONLY : O_RDWR) | O_EXCL : (flags & O_ACCMODE)) |
                                O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && !block)
                return 0;
        if (fd < 0 && errno == EBUSY)
                return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY,
                                    "The device is in use (mounted, perhaps in another mount "
                                    "namespace, or held by another program).");
        if (fd < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "the device could not be opened for the driver: %s",
                                    strerror(errno));
        if (fstat(fd, &now) < 0 || now.st_dev != was.st_dev || now.st_ino != was.st_ino ||
            (block && (!S_ISBLK(now.st_mode) || now.st_rdev != job->source.rdev)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EBUSY,
                                    "the source changed while the request was being "
                                    "authorized; nothing was mounted");
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/*
 * A partition of an image: a loop device of exactly its bytes (loop.h), so that the
 * driver reads and writes the partition and nothing else, whatever the filesystem in it
 * claims; opened exclusively, so that the driver holds it as a mounted filesystem would
 * (the loop device is the partition's claim, claim.h). Its number and sequence go to the
 * daemon, which counts it with the loop devices.
 */
static int driver_partition(const BuildJob *job, int source_fd, bool read_only,
                            DriverStartReply *reply, int *ret_fd, UmError *error) {
        _cleanup_close_ int loop_fd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *loop_path = NULL;
        char path[64];
        struct stat st;
        int r;

        r = loop_attach_range(source_fd, read_only, job->partition.offset, job->partition.size,
                              job->runtime_dir, &loop_fd, &loop_path, error);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", loop_fd);
        fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_EXCL | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not claim %s for the driver: %s", loop_path,
                                    strerror(errno));
        reply->loop_devnum = st.st_rdev;
        (void) ioctl(fd, BLKGETDISKSEQ, &reply->loop_diskseq);
        *ret_fd = TAKE_FD(fd);
        return 0;
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

/*
 * What START_DRIVER leaves for BUILD in this worker process, which serves one request:
 * the driver it started and the mount the driver serves (jobproto.h). State of the process,
 * as the fds of the job before it are; nothing else in the worker keeps any.
 */
static struct {
        bool started;
        int mount_fd;
        int pidfd;
        pid_t pid;
        uint64_t start;
        uid_t uid;
        char device[64];
} started = { .mount_fd = -EBADF, .pidfd = -EBADF };

/* The driver goes (while the worker may still signal it; the daemon, which watches it
 * from its start, ends it otherwise), and its mount with our fd of it. */
static void started_stop(void) {
        if (started.pidfd >= 0)
                (void) pidfd_send_signal(started.pidfd, SIGKILL, NULL, 0);
        started.pidfd = safe_close(started.pidfd);
        started.mount_fd = safe_close(started.mount_fd);
        started.started = false;
}

/* What PREPARE_DRIVER asked for, and made for START_DRIVER: a claimed uid and a stub for
 * it. */
static struct {
        PrepareDriverJob job;
        UidClaim claim;
        SandboxStub stub;
} prepared = { .claim = UID_CLAIM_NULL, .stub = SANDBOX_STUB_NULL };

static int claim_driver_uid(const char *runtime_dir, uid_t first, unsigned count, UidClaim *ret,
                            UmError *error) {
        return uid_claim(runtime_dir, DRIVER_UID_LOCK_PREFIX, first, count,
                         UID_CLAIM_NO_PROCESS_SCAN, "a userspace driver", ret, error);
}

int job_prepare_driver(const PrepareDriverJob *job) {
        if (prepared.claim.lock_fd >= 0)
                return -EBADMSG;
        prepared.job = *job;
        return 0;
}

/* Runs only after job_prepare_driver() took the job (the runner's after_reply). */
void job_prepare_driver_after_reply(void) {
        UmError error = {};

        /* What fails here is done again, and reported, by START_DRIVER. */
        if (claim_driver_uid(prepared.job.runtime_dir, prepared.job.uid_first,
                             prepared.job.uid_count, &prepared.claim, &error) < 0)
                return;
        if (fusedriver_stub_start(prepared.claim.uid, &prepared.stub) < 0)
                prepared.stub = SANDBOX_STUB_NULL;
}

/* The prepared claim, if it is of the range job names; else a new one. */
static int driver_uid_first_claim(const BuildJob *job, UidClaim *ret, UmError *error) {
        if (prepared.claim.lock_fd >= 0 && streq(prepared.job.runtime_dir, job->runtime_dir) &&
            prepared.claim.uid >= job->driver.uid_first &&
            prepared.claim.uid - job->driver.uid_first < job->driver.uid_count) {
                *ret = prepared.claim;
                prepared.claim = UID_CLAIM_NULL;
                return 0;
        }
        uid_claim_release(&prepared.claim);
        sandbox_stub_stop(&prepared.stub);
        return claim_driver_uid(job->runtime_dir, job->driver.uid_first, job->driver.uid_count,
                                ret, error);
}

int job_start_driver(const BuildJob *job, const MountOptions *options, int source_fd,
                     DriverStartReply *reply, UmError *error, int *ret_fd) {
        const FuseDriver *d = fusedriver_find(job->probe.fstype);
        _cleanup_close_ int mount_fd = -EBADF, pidfd = -EBADF, rw_fd = -EBADF, conn_fd = -EBADF;
        _cleanup_close_ int image_claim = -EBADF, part_fd = -EBADF;
        UidClaim claim = UID_CLAIM_NULL;
        char shim[PATH_MAX], device[64] = "";
        uint64_t start = 0, now;
        pid_t pid = 0;
        int r;

        if (started.started)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "the worker started a driver already");
        if (!d || !streq(d->name, job->driver.name))
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOENT,
                                    "the userspace driver %s for %s is no longer installed",
                                    job->driver.name, job->probe.fstype);
        r = recheck(job, source_fd, error);
        if (r >= 0)
                r = driver_source(job, source_fd, options->read_only, &rw_fd, error);
        /* One writer per filesystem (claim.h): the image's bytes, for the driver's life
         * (it inherits the claim), or a partition's until its loop device holds them. */
        if (r >= 0 && job->source.type == SOURCE_IMAGE)
                r = claim_image(source_fd, job->partition.offset, job->partition.size,
                                options->read_only, job->runtime_dir, &image_claim, error);
        if (r >= 0 && job->partition.number > 0)
                r = driver_partition(job, rw_fd >= 0 ? rw_fd : source_fd, options->read_only,
                                     reply, &part_fd, error);
        if (r < 0)
                return r;
        /* While /dev and /sys are still the host's (the lock leaves them behind). */
        if (job->source.type == SOURCE_BLOCK_DEVICE)
                block_device_node(job->source.rdev, source_fd, device, sizeof(device));

        /* The source's recheck took time the driver's start does not get: it must be over
         * (the driver answered, or was killed here) before the daemon kills this worker,
         * which would leave a started driver to nobody. */
        now = now_usec(CLOCK_MONOTONIC);
        if (now >= job->driver.start_deadline)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ETIMEDOUT,
                                    "the source took the time the filesystem driver had to "
                                    "start");
        shim_path(shim, sizeof(shim));
        r = driver_uid_first_claim(job, &claim, error);
        if (r < 0)
                return r;
        FuseDriverSpec spec = {
                .driver = d,
                .fstype = job->probe.fstype,
                .source_fd = part_fd >= 0 ? part_fd : rw_fd >= 0 ? rw_fd : source_fd,
                .claim_fd = part_fd >= 0 ? -EBADF : image_claim,
                .read_only = options->read_only,
                .attr_set = options->attr_set,
                .caller_uid = job->idmap.caller_uid,
                .caller_gid = job->idmap.caller_gid,
                .files_as_caller = job->driver.files_as_caller,
                .driver_uid = claim.uid,
                .uid_lock_fd = claim.lock_fd,
                .timeout_usec = MIN(job->driver.timeout_usec, job->driver.start_deadline - now),
                .memory_max = job->driver.memory_max,
                .tasks_max = job->driver.tasks_max,
                .cpu_sec = job->driver.cpu_sec,
                .source_name = strncmp(device, "/dev/", 5) == 0 ? device : NULL,
                .shim_path = shim[0] ? shim : NULL,
                .stub = prepared.stub.pidfd >= 0 ? &prepared.stub : NULL,
        };
        for (unsigned attempt = 1;; attempt++) {
                const uid_t end = job->driver.uid_first + job->driver.uid_count;

                r = fusedriver_mount(&spec, &mount_fd, &pid, &pidfd, &start, &conn_fd, error);
                if (r != -EUSERS || attempt >= DRIVER_UID_ATTEMPTS || claim.uid + 1 >= end)
                        break;
                /* Another process runs as the uid: the next one. */
                uid_claim_release(&claim);
                *error = (UmError) {};
                r = claim_driver_uid(job->runtime_dir, spec.driver_uid + 1,
                                     (unsigned) (end - spec.driver_uid - 1), &claim, error);
                if (r < 0)
                        return r;
                spec.driver_uid = claim.uid;
                spec.uid_lock_fd = claim.lock_fd;
                spec.stub = NULL;
        }
        if (r < 0) {
                uid_claim_release(&claim);
                return r;
        }
        /* The driver holds the uid's lock from now on. */
        uid_claim_hand_over(&claim);

        started.mount_fd = TAKE_FD(mount_fd);
        started.pidfd = TAKE_FD(pidfd);
        started.pid = pid;
        started.start = start;
        started.uid = claim.uid;
        snprintf(started.device, sizeof(started.device), "%s", device);
        started.started = true;
        reply->pid = (uint64_t) pid;
        reply->start = start;
        reply->uid = claim.uid;
        *ret_fd = TAKE_FD(conn_fd);
        return 0;
}

int job_build_userspace(const BuildJob *job, const MountOptions *options, int source_fd,
                        int stage_ns_fd, BuildReply *reply, UmError *error, int *ret_fd) {
        _cleanup_close_ int locked_fd = -EBADF;
        IdHelper helper = {};
        int r;

        if (!started.started)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "the worker has no driver started for this mount");
        snprintf(reply->device, sizeof(reply->device), "%s", started.device);
        /* A look into the driver's mount: the daemon ends a driver that does not answer
         * (the job's time limit), which ends the look. */
        r = check_own_root(started.mount_fd, job, error);
        if (r >= 0) {
                r = id_helper_start(job->idmap.caller_uid, job->idmap.caller_gid, &helper);
                if (r < 0)
                        um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                     "could not start the helper that learns the mount's id");
        }
        if (r >= 0)
                r = mountbuild_lock_in(started.mount_fd, stage_ns_fd,
                                       stage_ns_fd >= 0 ? STAGE_DIR : job->runtime_dir,
                                       job->idmap.caller_uid, job->idmap.caller_gid,
                                       &locked_fd, error);
        if (r >= 0) {
                r = id_helper_finish(&helper, locked_fd, &reply->mount_id);
                if (r < 0)
                        um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                     "could not learn the id of the new mount");
        }
        if (r < 0) {
                (void) id_helper_finish(&helper, -EBADF, NULL);
                started_stop();
                return r;
        }
        /* An image has no device: the record names its file (request_make_record()). */
        if (job->source.type == SOURCE_IMAGE)
                snprintf(reply->backing_file, sizeof(reply->backing_file), "%s",
                         job->source_path);
        reply->idmap_mode = job->driver.files_as_caller ? IDMAP_USER : job->idmap.mode;
        reply->driver_pid = (uint64_t) started.pid;
        reply->driver_start = started.start;
        reply->driver_uid = started.uid;
        started.mount_fd = safe_close(started.mount_fd);
        started.pidfd = safe_close(started.pidfd);
        started.started = false;
        *ret_fd = TAKE_FD(locked_fd);
        return 0;
}
