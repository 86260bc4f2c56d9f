/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The jobs usermount-worker runs (jobs.h), and their table for the runner
 * (runner.h). Each gets its typed input, the fds that came with it and a reply to
 * fill; nothing else of the daemon's state exists in the worker.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "idmap-userns.h"
#include "attach.h"
#include "claim.h"
#include "device.h"
#include "fscheck.h"
#include "fstypes.h"
#include "fsrefs.h"
#include "jobproto.h"
#include "buildsource.h"
#include "jobs-udisks.h"
#include "jobs-userspace.h"
#include "jobs.h"
#include "kernel-compat.h"
#include "loop.h"
#include "mountbuild.h"


static int bad_job(UmError *error, const char *what) {
        return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                            "The %s job the mount worker received is malformed.", what);
}

/*
 * idmap "namespace": the maps of the caller's user namespace as host ids, and the check
 * that they use only the caller's own uid and gid and what /etc/subuid and /etc/subgid
 * delegate to it. Runs before authorization, so polkit is asked about a mapping that
 * can be built; the build worker uses these maps, never the namespace itself.
 */
static int job_read_idmap(const JobCaller *caller, IdmapMode mode, bool userns_given,
                          int userns_fd, ProbeReply *reply, UmError *error) {
        _cleanup_free_ IdRange *uids = NULL, *gids = NULL;
        const char *user_name = caller->user_name[0] ? caller->user_name : NULL;
        size_t n_uids = 0, n_gids = 0;
        int r;

        if (mode != IDMAP_NAMESPACE)
                return 0;
        if (userns_fd < 0 || !JOB_STRING_OK(caller->user_name))
                return bad_job(error, "probe");
        if (userns_given) {
                r = idmap_check_userns_fd(userns_fd, caller->uid, error);
                if (r < 0)
                        return r;
        }
        r = idmap_read_userns(userns_fd, &reply->uid_map, &reply->gid_map, error);
        if (r < 0)
                return r;
        r = idmap_read_subid(IDMAP_SUBUID_PATH, user_name, caller->uid, &uids, &n_uids);
        if (r >= 0)
                r = idmap_read_subid(IDMAP_SUBGID_PATH, user_name, caller->uid, &gids,
                                     &n_gids);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not read %s or %s: %s.", IDMAP_SUBUID_PATH,
                                    IDMAP_SUBGID_PATH, strerror(-r));
        r = idmap_check_delegation(&reply->uid_map, caller->uid, uids, n_uids, "uid",
                                   IDMAP_SUBUID_PATH, error);
        /* A caller without a passwd entry has no group of its own: (uint32_t) -1, the
         * invalid id, is in no kernel map. */
        if (r >= 0)
                r = idmap_check_delegation(&reply->gid_map,
                                           caller->gid_known ? caller->gid : (uint32_t) -1,
                                           gids, n_gids, "gid", IDMAP_SUBGID_PATH, error);
        return r;
}

static int job_probe(const void *input, int *fds, size_t n_fds, void *out, UmError *error,
                     int *ret_fd) {
        const ProbeJob *job = input;
        ProbeReply *reply = out;
        int source_fd = fds[0], r;

        if (n_fds < 1 || !JOB_STRING_OK(job->runtime_dir))
                return bad_job(error, "probe");
        r = source_inspect_fd(source_fd, &reply->source, error);
        if (r < 0)
                return r;
        if (reply->source.type == SOURCE_BLOCK_DEVICE) {
                /* The same checks as for device paths: an fd proves access, not that the
                 * device is of a kind usermount mounts (a loop device the caller could
                 * read is someone's image), free (swap, dm/md holders) or a single
                 * filesystem. Nothing is claimed before authorization: job_build() does. */
                r = device_check_kind(reply->source.rdev, error);
                /* A disk's partitions are block devices of their own, each claimed, checked
                 * for use and tracked by itself; a loop device over a range of the disk
                 * would be none of that (partition.h). */
                if (r >= 0 && job->partition > 0)
                        r = um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                         "Parameter 'partition' is for image files; a "
                                         "partition of a disk is a block device of its own "
                                         "(such as /dev/sdb2): pass that one instead.");
                if (r >= 0)
                        r = device_check_not_partitioned(reply->source.rdev, error);
                if (r >= 0)
                        r = device_check_not_listed_busy(reply->source.rdev, error);
        } else {
                /* First which partition, if the image has a table: another partition of
                 * the same image may be mounted meanwhile. */
                r = source_probe_image(source_fd, job->partition, &reply->probe,
                                       &reply->partition, error);
                /* Before polkit is asked: a claim that could not be had (claim.h). */
                if (r >= 0)
                        r = claim_image_check(source_fd, reply->partition.offset,
                                              reply->partition.size,
                                              job->read_only || reply->source.read_only ||
                                                      fstype_read_only(reply->probe.fstype),
                                              job->runtime_dir, error);
        }
        if (r >= 0 && reply->source.type == SOURCE_BLOCK_DEVICE)
                r = source_probe(source_fd, &reply->probe, error);
        if (r >= 0)
                r = fsrefs_check_superblock_in(source_fd, reply->partition.offset,
                                               reply->partition.size, reply->probe.fstype,
                                               error);
        if (r >= 0 && reply->source.type == SOURCE_IMAGE)
                r = fsrefs_check_names(reply->probe.fstype, reply->probe.uuid,
                                       reply->probe.label, 0, error);
        if (r >= 0)
                r = job_read_idmap(&job->caller, (IdmapMode) job->idmap, job->userns_given,
                                   n_fds > 1 ? fds[1] : -EBADF, reply, error);
        return r;
}

/*
 * ImageCheck=yes: the read-only check of an image on its new loop device (or, for an
 * erofs image mounted from its file, on the file: fscheck_run_file()), before the
 * kernel parses it. Types without a checker (squashfs, iso9660, udf) are mounted without
 * one: their drivers never write, and refusing them would make the setting unusable for
 * the most common read-only images. The loop device is read-only for read-only mounts;
 * for writable ones the caller could still change the image file after the check, so the
 * check narrows the kernel's exposure to damaged images rather than closing it.
 */
static int job_check_image(const BuildJob *job, int fd, bool file, UmError *error) {
        /* With ImageCheckUidRange= each check claims a uid of the range that no check running
         * holds (locks in the runtime directory); without, all run as ImageCheckUser=. */
        const JobImageCheck *c = &job->check;
        const bool range = c->uid_count > 0;
        const FsCheckSpec spec = {
                .uid = range ? c->uid_first : c->uid,
                .gid = range ? (gid_t) c->uid_first : c->gid,
                .timeout_usec = c->timeout_usec,
                .uid_count = range ? c->uid_count : 0,
                .lock_dir = range ? job->runtime_dir : NULL,
        };
        int r;

        if (!c->enabled)
                return 0;
        r = file ? fscheck_run_file(fd, job->probe.fstype, &spec, error)
                 : fscheck_run(fd, job->probe.fstype, &spec, error);
        if (r == -ENOENT) {
                *error = (UmError) {};
                return 0;
        }
        if (r == -ETIMEDOUT)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ETIMEDOUT,
                                    "The read-only check of the image did not finish within "
                                    "ImageCheckTimeoutSec=%llu; the image was not mounted.",
                                    (unsigned long long) (spec.timeout_usec / 1000000ULL));
        return r;
}

static int job_recheck(const BuildJob *job, int source_fd, int fd, dev_t self,
                       UmError *error) {
        SourceProbe now = {};
        struct statfs sfs;
        int r;

        r = job_recheck_probe(job, fd, &now, error);
        if (r < 0)
                return r;
        r = fsrefs_check_superblock_in(fd, job->partition.offset, job->partition.size,
                                       now.fstype, error);
        if (r >= 0 && (job->source.type == SOURCE_IMAGE || streq(now.fstype, "btrfs")))
                r = fsrefs_check_names(now.fstype, now.uuid, now.label, self, error);
        if (r < 0)
                return r;
        /*
         * A file on FUSE answers every read as its server (possibly the caller) likes, so
         * the superblock the kernel reads next need not be the one checked. Refused where
         * a superblock could make the kernel open other devices: btrfs, and ext3/4 that
         * load a journal (read-write).
         */
        if (job->source.type == SOURCE_IMAGE && fstatfs(source_fd, &sfs) == 0 &&
            sfs.f_type == FUSE_SUPER_MAGIC &&
            (streq(now.fstype, "btrfs") || (!job->options.read_only &&
                                            (streq(now.fstype, "ext3") ||
                                             streq(now.fstype, "ext4")))))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EPERM,
                                    "%s images on a FUSE filesystem are mounted read-only "
                                    "(ext3/4) or not at all (btrfs): what the kernel reads "
                                    "there is the FUSE server's choice; copy the image to a "
                                    "local filesystem", now.fstype);
        if (job->source.type == SOURCE_BLOCK_DEVICE && job->options.read_only)
                r = fsrefs_check_read_only_device(fd, now.fstype, error);
        return r;
}

/*
 * An image on a fresh loop device (loop.h), marked for udev, checked (ImageCheck=yes)
 * unless checked already, and checked again right before the mount.
 */
static int job_attach_loop(const BuildJob *job, int source_fd, bool read_only, bool checked,
                           BuildReply *reply, int *ret_loop_fd, int *ret_claim_fd,
                           UmError *error) {
        _cleanup_close_ int loop_fd = -EBADF, claim_fd = -EBADF;
        _cleanup_free_ char *loop_path = NULL;
        struct stat st = {};
        int r;

        /* Held until the mount holds the loop device, which is the claim from then on. */
        r = claim_image(source_fd, job->partition.offset, job->partition.size, read_only,
                        job->runtime_dir, &claim_fd, error);
        if (r < 0)
                return r;
        /* A partition: the loop device is that byte range of the image, no more. */
        r = loop_attach_range(source_fd, read_only, job->partition.offset, job->partition.size,
                              job->runtime_dir, &loop_fd, &loop_path, error);
        if (r < 0)
                return r;
        snprintf(reply->device, sizeof(reply->device), "%s", loop_path);
        if (fstat(loop_fd, &st) >= 0) {
                uint64_t seq = 0;

                reply->loop_devnum = st.st_rdev;
                if (ioctl(loop_fd, BLKGETDISKSEQ, &seq) >= 0)
                        reply->loop_diskseq = seq;
        }
        if (!checked) {
                r = job_check_image(job, loop_fd, false, error);
                /* On the image file, not the new loop device: the same bytes (the loop
                 * device reads the file), already in the page cache. */
                if (r >= 0)
                        r = job_recheck(job, source_fd, source_fd, st.st_rdev, error);
                if (r < 0)
                        return r;
        }
        *ret_loop_fd = TAKE_FD(loop_fd);
        *ret_claim_fd = TAKE_FD(claim_fd);
        return 0;
}

/*
 * An erofs image mounted from its file, without a loop device (erofs with
 * CONFIG_EROFS_FS_BACKED_BY_FILE, Linux 6.12): the kernel opens the file itself, by the
 * path it is given. That path is this worker's /proc/self/fd link to its copy of the
 * caller's fd, which leads to the very file the fd is open on (the kernel follows the
 * link to the open file, never to a name the caller could rename or replace meanwhile).
 * The fd itself (FSCONFIG_SET_FD) would be better still; erofs refuses it on 6.18
 * ("Non-string source"). The check (ImageCheck=yes) runs on the file, and the probe's
 * checks again, before the mount. -ENOTBLK when the kernel cannot mount this file
 * (reply->file_unsupported: it cannot mount erofs from files at all), the image then
 * checked (*ret_checked) unless the check could not be given the file.
 */
static int job_build_from_file(const BuildJob *job, int source_fd, MountSpec *spec,
                               int stage_ns_fd, BuildReply *reply, bool *ret_checked,
                               int *ret_mount_fd, UmError *error) {
        bool unsupported = false;
        int r;

        r = job_check_image(job, source_fd, true, error);
        if (r == -EOPNOTSUPP) {
                /* The loop device, and the check on it, then. */
                *error = (UmError) {};
                return -ENOTBLK;
        }
        if (r >= 0)
                r = job_recheck(job, source_fd, source_fd, 0, error);
        if (r < 0)
                return r;
        *ret_checked = true;
        spec->file_unsupported = &unsupported;
        r = mountbuild_locked_in(spec, stage_ns_fd,
                                 stage_ns_fd >= 0 ? STAGE_DIR : job->runtime_dir, ret_mount_fd,
                                 error);
        spec->file_unsupported = NULL;
        if (r == -ENOTBLK)
                reply->file_unsupported = unsupported;
        else if (r >= 0)
                reply->file_backed = true;
        return r;
}

/* What a built mount replies: its id and the maps applied; the mount fd is the reply's. */
static int job_build_done(int *mount_fd, const MountIdmap *idmap, BuildReply *reply,
                          int *ret_fd) {
        (void) mountbuild_mount_id(*mount_fd, &reply->mount_id);
        reply->uid_map = idmap->uid_map;
        reply->gid_map = idmap->gid_map;
        reply->idmap_mode = idmap->mode;
        /* The superblock now holds the loop device (or the file); closing our fd of the loop
         * device arms autoclear. */
        *ret_fd = TAKE_FD(*mount_fd);
        return 0;
}

/* The strings and the partition of a BuildJob are what the daemon sends. */
static bool build_job_ok(const BuildJob *job) {
        return JOB_STRING_OK(job->source_path) && JOB_STRING_OK(job->runtime_dir) &&
               JOB_STRING_OK(job->probe.fstype) && JOB_STRING_OK(job->probe.uuid) &&
               JOB_STRING_OK(job->probe.label) && JOB_STRING_OK(job->driver.name) &&
               source_partition_check(&job->partition) >= 0 &&
               (job->partition.number == 0 || job->source.type == SOURCE_IMAGE);
}

static int job_build(const void *input, int *fds, size_t n_fds, void *out, UmError *error,
                     int *ret_fd) {
        const BuildJob *job = input;
        BuildReply *reply = out;
        _cleanup_close_ int loop_fd = -EBADF, mount_fd = -EBADF, claim_fd = -EBADF;
        _cleanup_(mount_options_done) MountOptions options = {};
        MountIdmap idmap = job->idmap;
        int source_fd = fds[0], stage_ns_fd = n_fds > 1 ? fds[1] : -EBADF;
        char file_source[64];
        MountSpec spec = {
                .fstype = job->probe.fstype,
                .source = reply->device,
                .options = &options,
                .idmap = &idmap,
        };
        bool checked = false;
        int r;

        if (n_fds < 1 || !build_job_ok(job) || job_options_unpack(&job->options, &options) < 0)
                return bad_job(error, "build");
        if (job->driver.kind == DRIVER_USERSPACE)
                return job_build_userspace(job, &options, source_fd, stage_ns_fd, reply, error,
                                           ret_fd);

        if (job->source.type == SOURCE_IMAGE) {
                snprintf(reply->backing_file, sizeof(reply->backing_file), "%s",
                         job->source_path);
                /* A partition has no file of its own to mount: a loop device of its range. */
                if (job->from_file && streq(job->probe.fstype, "erofs") &&
                    job->partition.number == 0) {
                        snprintf(file_source, sizeof(file_source), "/proc/self/fd/%d",
                                 source_fd);
                        spec.source = file_source;
                        r = job_build_from_file(job, source_fd, &spec, stage_ns_fd, reply,
                                                &checked, &mount_fd, error);
                        if (r >= 0)
                                return job_build_done(&mount_fd, &idmap, reply, ret_fd);
                        if (r != -ENOTBLK)
                                return r;
                        spec.source = reply->device;
                        if (!job->loop_allowed)
                                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED,
                                                    EMFILE,
                                                    "This image cannot be mounted without a "
                                                    "loop device (%s), and one more would "
                                                    "pass the loop device limits "
                                                    "(MaxLoopDevicesPerUser=, "
                                                    "MaxLoopDevices=).",
                                                    error->message);
                        *error = (UmError) {};
                }
                r = job_attach_loop(job, source_fd, options.read_only, checked, reply,
                                    &loop_fd, &claim_fd, error);
                if (r < 0)
                        return r;
        } else {
                /* Authorized now: the exclusive claim that proves nothing else holds the
                 * device (a superblock in another namespace, swap, a holder). */
                r = device_check_not_busy(job->source.rdev, error);
                if (r >= 0)
                        r = job_recheck(job, source_fd, source_fd, job->source.rdev, error);
                if (r < 0)
                        return r;
                block_device_node(job->source.rdev, source_fd, reply->device,
                                  sizeof(reply->device));
        }

        r = mountbuild_locked_in(&spec, stage_ns_fd,
                                 stage_ns_fd >= 0 ? STAGE_DIR : job->runtime_dir, &mount_fd,
                                 error);
        if (r < 0)
                return r;
        return job_build_done(&mount_fd, &idmap, reply, ret_fd);
}

/* START_DRIVER: the same BuildJob as BUILD, for a userspace driver (jobs-userspace.c). */
static int job_start(const void *input, int *fds, size_t n_fds, void *out, UmError *error,
                     int *ret_fd) {
        const BuildJob *job = input;
        _cleanup_(mount_options_done) MountOptions options = {};

        if (n_fds < 1 || !build_job_ok(job) || job->driver.kind != DRIVER_USERSPACE ||
            job_options_unpack(&job->options, &options) < 0)
                return bad_job(error, "start-driver");
        return job_start_driver(job, &options, fds[0], out, error, ret_fd);
}

static int job_prepare(const void *input, int *fds, size_t n_fds, void *out, UmError *error,
                       int *ret_fd) {
        const PrepareDriverJob *job = input;

        if (!JOB_STRING_OK(job->runtime_dir) || job->uid_first == 0 || job->uid_count == 0 ||
            job_prepare_driver(job) < 0)
                return bad_job(error, "prepare-driver");
        return 0;
}

static int job_loop(const void *input, int *fds, size_t n_fds, void *out, UmError *error,
                    int *ret_fd) {
        const LoopSetupJob *job = input;

        if (n_fds < 1 || !JOB_STRING_OK(job->runtime_dir))
                return bad_job(error, "loop-setup");
        return job_loop_setup(job, fds[0], out, error, ret_fd);
}

static int job_claim(const void *input, int *fds, size_t n_fds, void *out, UmError *error,
                     int *ret_fd) {
        return job_loop_claim(error, ret_fd);
}

static int job_eject(const void *input, int *fds, size_t n_fds, void *out, UmError *error,
                     int *ret_fd) {
        return job_drive_eject(input, error);
}

static int job_open_device(const void *input, int *fds, size_t n_fds, void *out,
                           UmError *error, int *ret_fd) {
        const OpenDeviceJob *job = input;
        ProbeReply *reply = out;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *node = NULL;
        struct stat st;
        int r;

        if (!JOB_STRING_OK(job->device_path))
                return bad_job(error, "open-device");
        /* Read-only until polkit said yes: a write open of a block device makes udevd
         * synthesize change events (and re-read partitions) on close, for any caller. The
         * mount itself opens the device for writing, by its node, after authorization. */
        r = device_open_loop(job->device_path, true, job->loop_diskseq, &fd, &node, error);
        if (r < 0)
                return r;
        /* A write-protected medium: mount it read-only rather than not at all. */
        reply->read_only = device_is_read_only(fd);
        if (fstat(fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "Could not examine the device.");
        r = device_check_not_partitioned(st.st_rdev, error);
        if (r >= 0)
                r = device_check_not_listed_busy(st.st_rdev, error);
        if (r >= 0)
                r = source_probe(fd, &reply->probe, error);
        if (r >= 0)
                r = fsrefs_check_superblock(fd, reply->probe.fstype, error);
        if (r >= 0)
                r = job_read_idmap(&job->caller, (IdmapMode) job->idmap, job->userns_given,
                                   n_fds > 0 ? fds[0] : -EBADF, reply, error);
        if (r < 0)
                return r;
        snprintf(reply->device, sizeof(reply->device), "%s", node);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int job_attach(const void *input, int *fds, size_t n_fds, void *out, UmError *error,
                      int *ret_fd) {
        const AttachJob *job = input;

        if (n_fds < 2 || !JOB_STRING_OK(job->target) || !JOB_STRING_OK(job->media_root) ||
            !JOB_STRING_OK(job->user_name) || !JOB_STRING_OK(job->label) ||
            !JOB_STRING_OK(job->uuid))
                return bad_job(error, "attach");

        const AttachRequest a = {
                .pidfd = fds[1],
                .uid = job->uid,
                .gid = job->gid,
                .target = job->target[0] ? job->target : NULL,
                .media_root = job->media_root,
                .user_name = job->user_name[0] ? job->user_name : NULL,
                .label = job->label,
                .uuid = job->uuid,
        };

        return attach_mount(fds[0], &a, out, error);
}

static int job_detach(const void *input, int *fds, size_t n_fds, void *out, UmError *error,
                      int *ret_fd) {
        const DetachJob *job = input;

        if (n_fds < 1 || !JOB_STRING_OK(job->mount_point))
                return bad_job(error, "detach");
        return attach_detach(fds[0], job->mount_point, job->mount_id, job->force,
                             job->remove_dir, error);
}

static int memfd_with(const char *text) {
        int fd = memfd_create("usermount-warm-up", MFD_CLOEXEC);

        if (fd >= 0 && write(fd, text, strlen(text)) != (ssize_t) strlen(text))
                fd = safe_close(fd);
        return fd;
}

static void warm_up_names(void) {
        _cleanup_close_ int fstab = memfd_with("UUID=\"a\" / ext4 defaults 0 1\n"
                                               "LABEL=b /home ext4 defaults 0 2\n");
        _cleanup_close_ int crypttab = memfd_with("c UUID=d none luks\n");
        char fstab_path[64], crypttab_path[64];
        UmError error;

        if (fstab < 0 || crypttab < 0)
                return;
        snprintf(fstab_path, sizeof(fstab_path), "/proc/self/fd/%d", fstab);
        snprintf(crypttab_path, sizeof(crypttab_path), "/proc/self/fd/%d", crypttab);
        (void) fsrefs_check_names_in(fstab_path, crypttab_path, NULL, "ext4", "e", "f", 0,
                                     &error);
}

void jobs_warm_up(void) {
        _cleanup_close_ int fd = memfd_create("usermount-warm-up", MFD_CLOEXEC);
        SourceProbe probe;
        UmError error;

        /* Every superblock prober of libblkid, on 1 MiB of zeros that none recognises. */
        if (fd >= 0 && ftruncate(fd, 1024 * 1024) >= 0)
                (void) source_probe(fd, &probe, &error);
        /* libmount's fstab parser and the crypttab reader, on tables of their own: a worker
         * that opened /etc/fstab while it warms up would keep a bind mount over it busy. */
        warm_up_names();
        safe_close(open("/dev/loop-control", O_RDWR | O_CLOEXEC));
}

static const WorkerJobType job_types[] = {
        { .layout = { JOB_PROBE }, .name = "probe", .run = job_probe },
        { .layout = { JOB_OPEN_DEVICE }, .name = "open-device", .run = job_open_device },
        { .layout = { JOB_BUILD }, .name = "build", .run = job_build },
        { .layout = { JOB_ATTACH }, .name = "attach", .run = job_attach },
        { .layout = { JOB_DETACH }, .name = "detach", .run = job_detach },
        { .layout = { JOB_START_DRIVER }, .name = "start-driver", .run = job_start },
        { .layout = { JOB_LOOP_SETUP }, .name = "loop-setup", .run = job_loop },
        { .layout = { JOB_DRIVE_EJECT }, .name = "drive-eject", .run = job_eject },
        { .layout = { JOB_LOOP_CLAIM }, .name = "loop-claim", .run = job_claim },
        { .layout = { JOB_PREPARE_DRIVER }, .name = "prepare-driver", .run = job_prepare,
          .after_reply = job_prepare_driver_after_reply },
};

const WorkerJobType *jobs_worker_table(size_t *ret_n) {
        static WorkerJobType table[ELEMENTSOF(job_types)];

        /* The sizes come from the one layout table both sides share (jobproto.c). */
        for (size_t i = 0; i < ELEMENTSOF(job_types); i++) {
                table[i] = job_types[i];
                table[i].layout = *job_layout((JobType) job_types[i].layout.type);
        }
        *ret_n = ELEMENTSOF(table);
        return table;
}
