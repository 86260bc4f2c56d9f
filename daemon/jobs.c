/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child side of a request's workers. Runs with a private copy of the Request (fork)
 * and only the fds the worker kept; reports through the WorkerReply.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "attach.h"
#include "device.h"
#include "fscheck.h"
#include "fsrefs.h"
#include "jobs.h"
#include "loop.h"
#include "mountbuild.h"

/* <linux/fs.h> clashes with <sys/mount.h>; the ioctl is stable ABI (Linux 5.15). */
#ifndef BLKGETDISKSEQ
#define BLKGETDISKSEQ _IOR(0x12, 128, uint64_t)
#endif

/*
 * idmap "namespace": the maps of the caller's user namespace as host ids, and the check
 * that they use only the caller's own uid and gid and what /etc/subuid and /etc/subgid
 * delegate to it. Runs before authorization, so polkit is asked about a mapping that
 * can be built; the build worker uses these maps, never the namespace itself.
 */
static int job_read_idmap(const Request *req, WorkerReply *reply) {
        _cleanup_free_ IdRange *uids = NULL, *gids = NULL;
        size_t n_uids = 0, n_gids = 0;
        int r;

        if (req->params.idmap != IDMAP_NAMESPACE)
                return 0;
        if (req->params.userns_given) {
                r = idmap_check_userns_fd(req->params.userns_fd, req->uid, &reply->error);
                if (r < 0)
                        return r;
        }
        r = idmap_read_userns(req->params.userns_fd, &reply->uid_map, &reply->gid_map,
                              &reply->error);
        if (r < 0)
                return r;
        r = idmap_read_subid(IDMAP_SUBUID_PATH, req->user_name, req->uid, &uids, &n_uids);
        if (r >= 0)
                r = idmap_read_subid(IDMAP_SUBGID_PATH, req->user_name, req->uid, &gids,
                                     &n_gids);
        if (r < 0)
                return um_error_set(&reply->error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not read %s or %s: %s.", IDMAP_SUBUID_PATH,
                                    IDMAP_SUBGID_PATH, strerror(-r));
        r = idmap_check_delegation(&reply->uid_map, req->uid, uids, n_uids, "uid",
                                   IDMAP_SUBUID_PATH, &reply->error);
        /* A caller without a passwd entry has no group of its own: (uint32_t) -1, the
         * invalid id, is in no kernel map. */
        if (r >= 0)
                r = idmap_check_delegation(&reply->gid_map,
                                           req->gid_known ? req->gid : (uint32_t) -1, gids,
                                           n_gids, "gid", IDMAP_SUBGID_PATH, &reply->error);
        return r;
}

void job_probe(void *userdata, WorkerReply *reply, int *ret_fd) {
        Request *req = userdata;
        _cleanup_free_ char *loop = NULL;
        int r;

        r = source_inspect_fd(req->source_fd, &reply->source, &reply->error);
        if (r < 0) {
                reply->r = r;
                return;
        }
        if (reply->source.type == SOURCE_BLOCK_DEVICE) {
                /* The same checks as for device paths: an fd proves access, not that the
                 * device is of a kind usermount mounts (a loop device the caller could
                 * read is someone's image), free (swap, dm/md holders) or a single
                 * filesystem. Nothing is claimed before authorization: job_build() does. */
                r = device_check_kind(reply->source.rdev, &reply->error);
                if (r >= 0)
                        r = device_check_not_partitioned(reply->source.rdev, &reply->error);
                if (r >= 0)
                        r = device_check_not_listed_busy(reply->source.rdev, &reply->error);
        } else {
                /* A mount released a moment ago lets go of its loop device asynchronously:
                 * give it up to two seconds before calling the image busy. */
                for (int i = 0; i < 40; i++) {
                        loop = mfree(loop);
                        r = loop_find_backing(req->source_fd, &loop);
                        if (r <= 0)
                                break;
                        usleep(50 * 1000);
                }
                if (r > 0)
                        r = um_error_set(&reply->error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY,
                                         "The image is already attached to %s (mounted or in "
                                         "use); a second mount of it would corrupt it.",
                                         strempty(loop));
        }
        if (r >= 0)
                r = source_probe(req->source_fd, &reply->probe, &reply->error);
        if (r >= 0)
                r = fsrefs_check_superblock(req->source_fd, reply->probe.fstype, &reply->error);
        if (r >= 0 && reply->source.type == SOURCE_IMAGE)
                r = fsrefs_check_names(reply->probe.fstype, reply->probe.uuid,
                                       reply->probe.label, 0, &reply->error);
        if (r >= 0)
                r = job_read_idmap(req, reply);
        reply->r = r;
}

/*
 * The /dev node of a block device, found through sysfs and checked to be that very
 * device; falls back to the caller's fd through /proc, which the kernel resolves to the
 * same device, so a missing or renamed node never changes what is mounted.
 */
static void block_device_node(dev_t rdev, int fd, char *buf, size_t n) {
        char path[320], line[256];
        _cleanup_(fclosep) FILE *f = NULL;
        struct stat st;

        snprintf(buf, n, "/proc/self/fd/%d", fd);
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(rdev), minor(rdev));
        f = fopen(path, "re");
        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "DEVNAME=", 8) != 0)
                        continue;
                char *name = line + 8;

                name[strcspn(name, "\n")] = 0;
                if (strchr(name, '.') || strlen(name) > 32)
                        return;
                char node[48];

                snprintf(node, sizeof(node), "/dev/%.32s", name);
                if (stat(node, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == rdev)
                        snprintf(buf, n, "%s", node);
                return;
        }
}

/*
 * ImageCheck=yes: the read-only check of an image on its new loop device, before the
 * kernel parses it. Types without a checker (squashfs, iso9660, udf) are mounted without
 * one: their drivers never write, and refusing them would make the setting unusable for
 * the most common read-only images. The loop device is read-only for read-only mounts;
 * for writable ones the caller could still change the image file after the check, so the
 * check narrows the kernel's exposure to damaged images rather than closing it.
 */
static int job_check_image(const Request *req, int loop_fd, UmError *error) {
        /* With ImageCheckUidRange= each check claims a uid of the range that no check running
         * holds (locks in the runtime directory); without, all run as ImageCheckUser=. */
        const bool range = req->conf->image_check_uid_count > 0;
        const FsCheckSpec spec = {
                .uid = range ? req->conf->image_check_uid_first : req->conf->image_check_uid,
                .gid = range ? (gid_t) req->conf->image_check_uid_first :
                        req->conf->image_check_gid,
                .timeout_usec = req->conf->image_check_timeout_usec,
                .uid_count = range ? req->conf->image_check_uid_count : 0,
                .lock_dir = range ? req->manager->runtime_dir : NULL,
        };
        int r;

        if (!req->conf->image_check)
                return 0;
        r = fscheck_run(loop_fd, req->probe.fstype, &spec, error);
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

/*
 * The checks of the probe, again, right before the mount: the caller could rewrite its
 * image or device while polkit was asked. What polkit was asked about must still be what
 * is there, and the superblock must still name no other device. fd: the image file, bound
 * to its loop device by now, or the block device; self: the device's number.
 */
static int job_recheck(const Request *req, int fd, dev_t self, UmError *error) {
        SourceProbe now = {};
        struct statfs sfs;
        int r;

        r = source_probe(fd, &now, error);
        if (r < 0)
                return r;
        if (!streq(now.fstype, req->probe.fstype) || !streq(now.uuid, req->probe.uuid) ||
            !streq(now.label, req->probe.label))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EBUSY,
                                    "the filesystem changed while the request was being "
                                    "authorized; nothing was mounted");
        r = fsrefs_check_superblock(fd, now.fstype, error);
        if (r >= 0 && (req->source.type == SOURCE_IMAGE || streq(now.fstype, "btrfs")))
                r = fsrefs_check_names(now.fstype, now.uuid, now.label, self, error);
        if (r < 0)
                return r;
        /*
         * A file on FUSE answers every read as its server (possibly the caller) likes, so
         * the superblock the kernel reads next need not be the one checked. Refused where
         * a superblock could make the kernel open other devices: btrfs, and ext3/4 that
         * load a journal (read-write).
         */
        if (req->source.type == SOURCE_IMAGE && fstatfs(req->source_fd, &sfs) == 0 &&
            sfs.f_type == FUSE_SUPER_MAGIC &&
            (streq(now.fstype, "btrfs") || (!req->mount_options.read_only &&
                                            (streq(now.fstype, "ext3") ||
                                             streq(now.fstype, "ext4")))))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EPERM,
                                    "%s images on a FUSE filesystem are mounted read-only "
                                    "(ext3/4) or not at all (btrfs): what the kernel reads "
                                    "there is the FUSE server's choice; copy the image to a "
                                    "local filesystem", now.fstype);
        if (req->source.type == SOURCE_BLOCK_DEVICE && req->mount_options.read_only)
                r = fsrefs_check_read_only_device(fd, now.fstype, error);
        return r;
}

void job_build(void *userdata, WorkerReply *reply, int *ret_fd) {
        Request *req = userdata;
        _cleanup_close_ int loop_fd = -EBADF, mount_fd = -EBADF;
        _cleanup_free_ char *loop_path = NULL;
        MountSpec spec = {
                .fstype = req->probe.fstype,
                .source = reply->device,
                .options = &req->mount_options,
                .idmap = &req->idmap,
        };
        struct stat st = {};
        int r;

        if (req->source.type == SOURCE_IMAGE) {
                r = loop_attach_marked(req->source_fd, req->mount_options.read_only,
                                       req->manager->runtime_dir, &loop_fd, &loop_path,
                                       &reply->error);
                if (r < 0) {
                        reply->r = r;
                        return;
                }
                snprintf(reply->device, sizeof(reply->device), "%s", loop_path);
                if (fstat(loop_fd, &st) >= 0) {
                        uint64_t seq = 0;

                        reply->loop_devnum = st.st_rdev;
                        if (ioctl(loop_fd, BLKGETDISKSEQ, &seq) >= 0)
                                reply->loop_diskseq = seq;
                }
                snprintf(reply->backing_file, sizeof(reply->backing_file), "%s",
                         strempty(req->source_path));
                r = job_check_image(req, loop_fd, &reply->error);
                /* On the image file, not the new loop device: the same bytes (the loop
                 * device reads the file), already in the page cache. */
                if (r >= 0)
                        r = job_recheck(req, req->source_fd, st.st_rdev, &reply->error);
                if (r < 0) {
                        reply->r = r;
                        return;
                }
        } else {
                /* Authorized now: the exclusive claim that proves nothing else holds the
                 * device (a superblock in another namespace, swap, a holder). */
                r = device_check_not_busy(req->source.rdev, &reply->error);
                if (r >= 0)
                        r = job_recheck(req, req->source_fd, req->source.rdev, &reply->error);
                if (r < 0) {
                        reply->r = r;
                        return;
                }
                block_device_node(req->source.rdev, req->source_fd, reply->device,
                                  sizeof(reply->device));
        }

        r = mountbuild_locked(&spec, req->manager->runtime_dir, &mount_fd, &reply->error);
        if (r < 0) {
                reply->r = r;
                return;
        }
        (void) mountbuild_mount_id(mount_fd, &reply->mount_id);
        reply->uid_map = req->idmap.uid_map;
        reply->gid_map = req->idmap.gid_map;
        reply->idmap_mode = req->idmap.mode;
        /* The superblock now holds the loop device; closing our fd arms autoclear. */
        reply->r = 0;
        *ret_fd = TAKE_FD(mount_fd);
}

void job_open_device(void *userdata, WorkerReply *reply, int *ret_fd) {
        Request *req = userdata;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *node = NULL;
        struct stat st;
        int r;

        /* Read-only until polkit said yes: a write open of a block device makes udevd
         * synthesize change events (and re-read partitions) on close, for any caller. The
         * mount itself opens the device for writing, by its node, after authorization. */
        r = device_open(req->device_path, true, &fd, &node, &reply->error);
        if (r < 0) {
                reply->r = r;
                return;
        }
        /* A write-protected medium: mount it read-only rather than not at all. */
        reply->read_only = device_is_read_only(fd);
        if (fstat(fd, &st) < 0) {
                reply->r = um_error_set(&reply->error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                        "Could not examine the device.");
                return;
        }
        r = device_check_not_partitioned(st.st_rdev, &reply->error);
        if (r >= 0)
                r = device_check_not_listed_busy(st.st_rdev, &reply->error);
        if (r >= 0)
                r = source_probe(fd, &reply->probe, &reply->error);
        if (r >= 0)
                r = fsrefs_check_superblock(fd, reply->probe.fstype, &reply->error);
        if (r >= 0)
                r = job_read_idmap(req, reply);
        if (r < 0) {
                reply->r = r;
                return;
        }
        snprintf(reply->device, sizeof(reply->device), "%s", node);
        reply->r = 0;
        *ret_fd = TAKE_FD(fd);
}

void job_attach(void *userdata, WorkerReply *reply, int *ret_fd) {
        Request *req = userdata;
        const AttachRequest a = {
                .pidfd = req->caller_pidfd,
                .uid = req->uid,
                .gid = req->gid,
                .target = req->params.target,
                .media_root = req->conf->media_root,
                .user_name = req->user_name,
                .label = req->probe.label,
                .uuid = req->probe.uuid,
        };

        reply->r = attach_mount(req->mount_fd, &a, &reply->attach, &reply->error);
}

void job_detach(void *userdata, WorkerReply *reply, int *ret_fd) {
        DetachJob *job = userdata;

        reply->r = attach_detach(job->pidfd, job->mount_point, job->mount_id, job->force,
                                 job->remove_dir, &reply->error);
}
