/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of attached mounts (Mount/MountFd): what was mounted, for whom, where and
 * in which mount namespace. Kept in memory and in a state file under the runtime
 * directory, written atomically (temporary file, fsync, rename) after every change, and
 * reloaded at start, so that a restarted daemon (even after kill -9) loses nothing and
 * duplicates nothing. The file is JSON (json-c); unknown fields are ignored, malformed
 * records are dropped with a note, never trusted half-way.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "um-error.h"

typedef struct MountRecord {
        uint64_t mount_id;      /* unique mount id (STATX_MNT_ID_UNIQUE) of the attached mount */
        uint64_t mntns_id;      /* mount namespace it is attached in (mountns_id_*()) */
        char *mount_point;      /* absolute path in that namespace */
        char *device;           /* block device mounted, e.g. /dev/loop3 or /dev/sdb1 */
        uint64_t devnum;        /* its dev_t (makedev), to notice when it goes away */
        char *backing_file;     /* image path for loop devices, else NULL */
        uid_t owner_uid;
        char *fstype;
        char *label;            /* as probed, escaped (valid UTF-8) */
        char *uuid;
        char *options;          /* filesystem options passed to the kernel */
        uint64_t attr_set;      /* MOUNT_ATTR_* set and locked */
        char *idmap;            /* "none", "user", "namespace" */
        bool created_dir;       /* the daemon made mount_point and removes it on unmount */
        uint64_t created_usec;  /* CLOCK_REALTIME */
} MountRecord;

/* Frees a record and its strings; accepts NULL, returns NULL. */
MountRecord *mount_record_free(MountRecord *r);

typedef struct Registry {
        char *path;             /* the state file */
        MountRecord **records;
        size_t n_records;
} Registry;

/*
 * Loads path (a missing file is an empty registry). Malformed records are skipped and
 * counted in *ret_dropped (may be NULL). A file that is not JSON at all is -EBADMSG with
 * error set; the caller decides (the daemon renames it aside and starts empty).
 */
int registry_load(const char *path, Registry **ret, size_t *ret_dropped, UmError *error);

/* Writes all records to a temporary file next to path, fsyncs it and renames it over path. */
int registry_save(const Registry *reg);

/* Adds rec (ownership moves to the registry) and saves. On failure rec is not added. */
int registry_add(Registry *reg, MountRecord *rec);

/* Removes and frees rec, and saves. */
int registry_remove(Registry *reg, MountRecord *rec);

/* Lookups; NULL if none. */
MountRecord *registry_find_mount_point(const Registry *reg, uint64_t mntns_id, const char *path);
MountRecord *registry_find_mount_id(const Registry *reg, uint64_t mount_id);
MountRecord *registry_find_device(const Registry *reg, uint64_t mntns_id, const char *device);
size_t registry_count_owner(const Registry *reg, uid_t uid);

/* Frees everything (does not touch the file); accepts NULL, returns NULL. */
Registry *registry_free(Registry *reg);
