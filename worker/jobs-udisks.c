/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The jobs of the UDisks2 front (jobs-udisks.h): LOOP_SETUP, a loop device of a caller's
 * image and what is on it; DRIVE_EJECT, a drive's devices flushed and the medium ejected
 * or the drive powered off.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <scsi/sg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "buildsource.h"
#include "claim.h"

#include "fd-util.h"
#include "jobs-udisks.h"
#include "loop.h"
#include "source.h"

#ifndef BLKGETDISKSEQ
#define BLKGETDISKSEQ _IOR(0x12, 128, uint64_t)
#endif

/* The claim LOOP_SETUP took, until LOOP_CLAIM hands it over (state of the process: one
 * request per worker). */
static int loop_claim = -EBADF;

int job_loop_setup(const LoopSetupJob *job, int backing_fd, LoopSetupReply *reply,
                   UmError *error, int *ret_fd) {
        _cleanup_close_ int loop_fd = -EBADF, claim_fd = -EBADF;
        _cleanup_free_ char *device = NULL;
        char link[64];
        struct statfs sfs;
        struct stat st;
        ssize_t n;
        int r;

        /* Only here, off the daemon's main loop: the file may be on the caller's FUSE
         * server. A loop device of a device would be a second way to the same blocks. */
        if (fstat(backing_fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "Could not examine the file: %s.", strerror(errno));
        if (!S_ISREG(st.st_mode))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "A loop device is set up for a disk image file; this is "
                                    "not a regular file.");
        /* A file on FUSE reads as its server (possibly the caller) likes, from one read to
         * the next: no loop device, whose filesystem would be parsed long after any check. */
        if (fstatfs(backing_fd, &sfs) == 0 && sfs.f_type == FUSE_SUPER_MAGIC)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EPERM,
                                    "The image is on a FUSE filesystem, whose contents are its "
                                    "server's to change at any read; copy it to a local "
                                    "filesystem, or mount it with \"usermount mount\".");
        /* One writer per filesystem (claim.h): the image's claim, held with the device
         * (LOOP_CLAIM hands it to the daemon). */
        loop_claim = safe_close(loop_claim);
        r = claim_image(backing_fd, job->offset, job->size, job->read_only, job->runtime_dir,
                        &claim_fd, error);
        if (r < 0)
                return r;
        if (job->offset >= (uint64_t) st.st_size)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "The offset (%llu) is not inside the file (%llu bytes).",
                                    (unsigned long long) job->offset,
                                    (unsigned long long) st.st_size);
        r = loop_attach_range(backing_fd, job->read_only, job->offset, job->size,
                              job->runtime_dir, &loop_fd, &device, error);
        if (r < 0)
                return r;
        if (fstat(loop_fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not examine the loop device.");
        snprintf(reply->device, sizeof(reply->device), "%s", device);
        reply->devnum = (uint64_t) st.st_rdev;
        if (ioctl(loop_fd, BLKGETDISKSEQ, &reply->diskseq) < 0)
                reply->diskseq = 0;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", backing_fd);
        n = readlink(link, reply->backing_file, sizeof(reply->backing_file) - 1);
        reply->backing_file[n > 0 ? n : 0] = 0;
        /* What it holds, for the front's object (udev does not probe a marked device):
         * nothing mountable is not an error, the device is made all the same. */
        UmError ignored = {};
        if (source_probe(loop_fd, &reply->probe, &ignored) < 0)
                reply->probe = (SourceProbe) {};
        loop_claim = TAKE_FD(claim_fd);
        *ret_fd = TAKE_FD(loop_fd);
        return 0;
}

int job_loop_claim(UmError *error, int *ret_fd) {
        if (loop_claim < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "The worker holds no claim of a loop device's image.");
        *ret_fd = TAKE_FD(loop_claim);
        return 0;
}

/* ---- DRIVE_EJECT ---------------------------------------------------------------------- */

/* One SCSI command without data (SG_IO), as eject(1) and udisks2 send them. */
static int scsi_command(int fd, const unsigned char *cdb, unsigned char len) {
        unsigned char sense[32] = {};
        sg_io_hdr_t io = {
                .interface_id = 'S',
                .cmd_len = len,
                .cmdp = (unsigned char *) cdb,
                .dxfer_direction = SG_DXFER_NONE,
                .sbp = sense,
                .mx_sb_len = sizeof(sense),
                .timeout = 30000,
        };

        if (ioctl(fd, SG_IO, &io) < 0)
                return -errno;
        return io.status == 0 && io.host_status == 0 && io.driver_status == 0 ? 0 : -EIO;
}

/* dev_t's device opened exclusively (nothing may hold it: no mount, no other opener with
 * O_EXCL) and its cache written out; diskseq (0: any) must be the one polkit was asked
 * about, not a device plugged in since under the same number. */
static int flush_device(dev_t devnum, uint64_t diskseq, UmError *error) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t seq = 0;
        char node[64];

        block_device_node(devnum, -1, node, sizeof(node));
        fd = open(node, O_RDONLY | O_NONBLOCK | O_EXCL | O_CLOEXEC);
        if (fd < 0 && errno == EBUSY)
                return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY, "%s is in use.",
                                    node);
        if (fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno, "Could not open %s: %s.",
                                    node, strerror(errno));
        if (diskseq != 0 && (ioctl(fd, BLKGETDISKSEQ, &seq) < 0 || seq != diskseq))
                return um_error_set(error, UM_ERROR_KIND_FAILED, ESTALE,
                                    "%s is not the device it was: it was replaced meanwhile.",
                                    node);
        if (fsync(fd) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not flush %s: %s.", node, strerror(errno));
        return 0;
}

static int flush_devices(const DriveEjectJob *job, UmError *error) {
        for (uint32_t i = 0; i < job->n_devices; i++) {
                int r = flush_device((dev_t) job->devices[i], job->diskseqs[i], error);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* Every block device below the USB device at usb_path (a card reader's other slots, an
 * enclosure's other bays: they lose their power too) flushed the same way. */
static int flush_usb_siblings(const char *usb_path, UmError *error) {
        _cleanup_(closedirp) DIR *d = opendir("/sys/class/block");
        struct dirent *de;
        size_t n = strlen(usb_path);

        if (!d)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not list the block devices: %s.", strerror(errno));
        while ((de = readdir(d))) {
                char link[PATH_MAX], path[PATH_MAX], devfile[PATH_MAX + 8], buf[32];
                unsigned maj, min;
                _cleanup_(fclosep) FILE *f = NULL;
                int r;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(link, sizeof(link), "/sys/class/block/%s", de->d_name);
                if (!realpath(link, path) || strncmp(path, usb_path, n) != 0 || path[n] != '/')
                        continue;
                snprintf(devfile, sizeof(devfile), "%s/dev", path);
                f = fopen(devfile, "re");
                if (!f || !fgets(buf, sizeof(buf), f) || sscanf(buf, "%u:%u", &maj, &min) != 2)
                        continue;
                r = flush_device(makedev(maj, min), 0, error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The sysfs directory of the USB device the disk hangs off (its "remove" powers the port
 * off), found by walking up from the disk, into path; -ENODEV if it is on no USB device. */
static int usb_parent(dev_t disk, char path[static PATH_MAX]) {
        char link[64];

        snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(disk), minor(disk));
        if (!realpath(link, path))
                return -errno;
        for (char *slash; (slash = strrchr(path, '/')) && slash != path; *slash = 0) {
                char uevent[PATH_MAX + 16], line[256];
                _cleanup_(fclosep) FILE *f = NULL;

                snprintf(uevent, sizeof(uevent), "%s/uevent", path);
                f = fopen(uevent, "re");
                while (f && fgets(line, sizeof(line), f))
                        if (strcmp(line, "DEVTYPE=usb_device\n") == 0)
                                return 0;
        }
        return -ENODEV;
}

int job_drive_eject(const DriveEjectJob *job, UmError *error) {
        static const unsigned char allow_removal[6] = { 0x1e, 0, 0, 0, 0, 0 };
        static const unsigned char eject[6] = { 0x1b, 0, 0, 0, 0x02, 0 }; /* LoEj, !Start */
        static const unsigned char stop[6] = { 0x1b, 0, 0, 0, 0x00, 0 };  /* !Start */
        static const unsigned char sync_cache[10] = { 0x35 };
        _cleanup_close_ int fd = -EBADF, usb = -EBADF;
        char node[64], usb_path[PATH_MAX];
        int r;

        if (job->n_devices > JOB_EJECT_MAX_DEVICES)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "The eject job the worker received is malformed.");
        r = flush_devices(job, error);
        if (r < 0)
                return r;
        block_device_node((dev_t) job->disk, -1, node, sizeof(node));
        fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno, "Could not open %s: %s.",
                                    node, strerror(errno));
        uint64_t seq = 0;
        if (job->disk_diskseq != 0 &&
            (ioctl(fd, BLKGETDISKSEQ, &seq) < 0 || seq != job->disk_diskseq))
                return um_error_set(error, UM_ERROR_KIND_FAILED, ESTALE,
                                    "%s is not the device it was: it was replaced meanwhile.",
                                    node);
        if (!job->power_off) {
                (void) scsi_command(fd, allow_removal, sizeof(allow_removal));
                r = scsi_command(fd, eject, sizeof(eject));
                if (r < 0)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                            "Error ejecting %s: %s.", node,
                                            r == -ENOTTY || r == -EINVAL
                                                    ? "it takes no SCSI commands"
                                                    : strerror(-r));
                return 0;
        }
        /* As udisks2: the cache and the stop are best effort, the port's power is not. */
        (void) scsi_command(fd, sync_cache, sizeof(sync_cache));
        (void) scsi_command(fd, stop, sizeof(stop));
        r = usb_parent((dev_t) job->disk, usb_path);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Error powering off %s: it is not on a USB port that can "
                                    "be switched off.", node);
        fd = safe_close(fd);
        r = flush_usb_siblings(usb_path, error);
        if (r < 0)
                return r;
        usb = open(usb_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (usb < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Error powering off %s: %s.", node, strerror(errno));
        _cleanup_close_ int remove_fd = openat(usb, "remove", O_WRONLY | O_CLOEXEC);
        if (remove_fd < 0 || write(remove_fd, "1", 1) != 1)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Error powering off %s: %s.", node, strerror(errno));
        return 0;
}
