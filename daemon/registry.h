/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of attached mounts (Mount/MountFd): what was mounted, for whom, where and
 * in which mount namespace. Kept in memory and in a state file under the runtime
 * directory, written atomically (temporary file, fsync, rename) after every change, and
 * reloaded at start, so that a restarted daemon (even after kill -9) loses nothing and
 * duplicates nothing. The file is JSON (json-c); unknown fields are ignored, malformed
 * records are dropped with a note, never trusted half-way.
 *
 * The file, version 1 (written pretty-printed, with a trailing newline):
 *
 *   { "version": 1,
 *     "mounts": [ { "mount_id": 2147483690, "mntns_id": 4, "mount_point": "/run/media/u/x",
 *                   "device": "/dev/loop3", "devnum": 1795, "backing_file": "/home/u/x.img",
 *                   "owner_uid": 1000, "fstype": "ext4", "label": "x", "uuid": "...",
 *                   ("partition": 2, for a partition of a partitioned image)
 *                   "options": "errors=remount-ro", "attr_set": 14, "idmap": "none",
 *                   ("idmap_uid_map": "0:1000:1", "idmap_gid_map": "0:1000:1", for idmaps)
 *                   ("driver": "userspace", "driver_name": "fuse2fs", "driver_pid": 4242,
 *                    "driver_start": 123456, "driver_uid": 1879048448, for userspace drivers)
 *                   "created_dir": true, "created_usec": 1700000000000000,
 *                   ("file_backed": true, for an image mounted from its file: no loop
 *                   device, "device" is the image's path and "devnum" 0) }, ... ] }
 *
 * Every uint64 is a JSON integer (json-c reads them as unsigned 64-bit). Required in each
 * record: mount_id and mntns_id (non-zero), mount_point and device (absolute paths,
 * shorter than PATH_MAX), owner_uid (a valid uid, not (uid_t) -1). The rest is optional:
 * absent (or null, for strings) means 0 / NULL / false. A record is dropped when a field
 * has the wrong type, an integer is negative, fractional or out of range (json-c clamps
 * integers beyond 2^64-1 to UINT64_MAX, so that value is refused too), a string holds a
 * NUL or invalid UTF-8, or its mount_id repeats an earlier record's (the first one wins).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "um-error.h"

/* A state file larger than this is refused as a whole (-EBADMSG). */
#define REGISTRY_FILE_SIZE_MAX (16U * 1024U * 1024U)
/* At most this many records: later ones in a file are dropped, registry_add() refuses. */
#define REGISTRY_RECORDS_MAX 65536U

typedef struct MountRecord {
        uint64_t mount_id;      /* unique mount id (STATX_MNT_ID_UNIQUE) of the attached mount */
        uint64_t mntns_id;      /* mount namespace it is attached in (mountns_id_*()) */
        char *mount_point;      /* absolute path in that namespace */
        char *device;           /* block device mounted, e.g. /dev/loop3 or /dev/sdb1 */
        uint64_t devnum;        /* its dev_t (makedev), to notice when it goes away */
        char *backing_file;     /* image path (loop device or file_backed), else NULL */
        bool file_backed;       /* an erofs image mounted from its file, without a loop device:
                                 * device is backing_file's path, devnum 0 */
        uid_t owner_uid;
        char *fstype;
        char *label;            /* as probed, escaped (valid UTF-8) */
        char *uuid;
        uint32_t partition;     /* the partition of the image mounted (its number), or 0 */
        char *options;          /* filesystem options passed to the kernel */
        uint64_t attr_set;      /* MOUNT_ATTR_* set and locked */
        char *idmap;            /* "none", "user", "namespace" */
        char *idmap_uid_map;    /* the maps applied, "first:lower:count,..." (idmap.h); NULL */
        char *idmap_gid_map;    /* for idmap "none" */
        char *driver;           /* "kernel" or "userspace" (driverpolicy.h); NULL: kernel */
        char *driver_name;      /* userspace: the driver program's name, e.g. "fuse2fs" */
        uint64_t driver_pid;    /* userspace: the driver process, recognised by its pid */
        uint64_t driver_start;  /* and start time (clock ticks after boot, /proc/PID/stat) */
        uint64_t driver_uid;    /* userspace: the uid it runs as (DriverUidRange=) */
        bool created_dir;       /* the daemon made mount_point and removes it on unmount */
        bool private_ns;        /* attached in a mount namespace a user owns (one of a user
                                 * namespace of theirs, a container): its path is nobody
                                 * else's business (the UDisks2 front does not show it) */
        uint64_t created_usec;  /* CLOCK_REALTIME */
        bool detaching;         /* not saved: its device went, a lazy detach is under way */
} MountRecord;

/* Frees a record and its strings; accepts NULL, returns NULL. */
MountRecord *mount_record_free(MountRecord *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(MountRecord *, mount_record_free);

typedef struct Registry {
        char *path;             /* the state file */
        MountRecord **records;
        size_t n_records;
} Registry;

/*
 * Loads path (a missing file is an empty registry). Malformed records are skipped and
 * counted in *ret_dropped (may be NULL). A file that is not JSON at all is -EBADMSG with
 * error set; the caller decides (the daemon renames it aside and starts empty).
 * -EBADMSG also covers a file that is not a regular file (a symlink is not followed), is
 * larger than REGISTRY_FILE_SIZE_MAX, or has the wrong top level (not an object, version
 * not 1, no "mounts" array). Other failures are -errno with error set. On success *ret is
 * a new registry owned by the caller (registry_free()); on failure *ret is untouched.
 */
int registry_load(const char *path, Registry **ret, size_t *ret_dropped, UmError *error);

/*
 * Writes all records to a temporary file next to path (mkostemp "<path>.XXXXXX", mode
 * 0600), fsyncs it, renames it over path and fsyncs the directory. On failure the
 * temporary file is removed and the old file is left as it was (unless only the final
 * directory fsync failed, after the rename).
 */
int registry_save(const Registry *reg);

/*
 * Adds rec (ownership moves to the registry) and saves. On failure rec is not added, the
 * caller keeps ownership, and the registry in memory is as before: -EINVAL if rec would
 * not survive a reload (see the required fields above), -EEXIST if its mount_id is
 * already registered, -ENOSPC beyond REGISTRY_RECORDS_MAX, -ENOMEM, or the error of
 * registry_save() (after which the file is rewritten without rec, best effort).
 */
int registry_add(Registry *reg, MountRecord *rec);

/*
 * Removes and frees rec, and saves. -ENOENT (and rec untouched) if rec is not in reg.
 * rec is removed from memory and freed even when the save fails (the error is returned):
 * the file then still lists a mount that is gone, which the next successful save
 * corrects and which a reload reconciles away (the mount no longer exists).
 */
int registry_remove(Registry *reg, MountRecord *rec);

/* Lookups; NULL if none. The records stay owned by the registry. */
MountRecord *registry_find_mount_point(const Registry *reg, uint64_t mntns_id, const char *path);
MountRecord *registry_find_mount_id(const Registry *reg, uint64_t mount_id);
MountRecord *registry_find_device(const Registry *reg, uint64_t mntns_id, const char *device);
size_t registry_count_owner(const Registry *reg, uid_t uid);

/* Frees everything (does not touch the file); accepts NULL, returns NULL. */
Registry *registry_free(Registry *reg);
DEFINE_TRIVIAL_CLEANUP_FUNC(Registry *, registry_free);
