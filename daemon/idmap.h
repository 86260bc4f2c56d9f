/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Id-mapped mounts (DBUS-API.md, params "idmap" and "userns"; ARCHITECTURE.md, "Building a
 * locked mount", step 3).
 *
 * An id-mapping is the pair of maps of a user namespace, read the way the kernel uses them
 * for MOUNT_ATTR_IDMAP: an extent (first, lower, count) makes the on-disk ids
 * first..first+count-1 appear as the host ids lower..lower+count-1; every other on-disk id
 * is unmapped (it shows as the overflow id, and files owned by it cannot be changed).
 *
 *   user        one extent per map: the owner (uid, and gid) of the filesystem's root
 *               directory appears as the caller.
 *   namespace   the maps of the caller's user namespace (or of the one it passed), as host
 *               ids: on-disk ids appear as they would inside that namespace. Every host id
 *               must be the caller's own uid (gid) or delegated to it in /etc/subuid
 *               (/etc/subgid).
 *
 * The daemon never applies a namespace it was handed: it reads the maps, checks them, and
 * builds a user namespace of its own with them (idmap_make_userns()).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "um-error.h"

/* The kernel's limit on extents in one map (UID_GID_MAP_MAX_EXTENTS). */
#define IDMAP_MAX_EXTENTS 340

#define IDMAP_SUBUID_PATH "/etc/subuid"
#define IDMAP_SUBGID_PATH "/etc/subgid"

typedef enum IdmapMode {
        IDMAP_NONE,
        IDMAP_USER,
        IDMAP_NAMESPACE,
} IdmapMode;

typedef struct IdExtent {
        uint32_t first; /* the id on disk ("inside") */
        uint32_t lower; /* the host id it appears as ("outside") */
        uint32_t count;
} IdExtent;

typedef struct IdMap {
        uint32_t n_extents;
        IdExtent extents[IDMAP_MAX_EXTENTS];
} IdMap;

/* A range of host ids delegated to a user (a line of /etc/subuid). */
typedef struct IdRange {
        uint32_t first;
        uint32_t count;
} IdRange;

/* "none", "user", "namespace". */
const char *idmap_mode_to_string(IdmapMode mode);

/*
 * Parses the text of /proc/PID/uid_map (lines "first lower count"). Refuses more than
 * IDMAP_MAX_EXTENTS extents, zero counts, ranges that wrap around, overlapping extents and
 * an empty map (-EINVAL, -E2BIG).
 */
int idmap_parse(const char *text, IdMap *ret);

/* Writes the map in /proc/PID/uid_map form ("first lower count\n" per extent); -ENOBUFS. */
int idmap_to_proc_text(const IdMap *map, char *buf, size_t size);

/* Writes the map as "first:lower:count,..." (for info and the registry); -ENOBUFS. */
int idmap_to_string(const IdMap *map, char *buf, size_t size);

/* The map of mode user: on-disk root_id appears as caller_id, nothing else is mapped. */
void idmap_single(uint32_t root_id, uint32_t caller_id, IdMap *ret);

/*
 * Parses /etc/subuid (or subgid) text: the ranges whose first field is user or the decimal
 * uid. Malformed lines are skipped, as shadow's tools do. *ret is malloc()ed (NULL when
 * there are none).
 */
int idmap_parse_subid(const char *text, const char *user, uid_t uid, IdRange **ret,
                      size_t *ret_n);

/* Reads path with idmap_parse_subid(); a missing file delegates nothing. */
int idmap_read_subid(const char *path, const char *user, uid_t uid, IdRange **ret,
                     size_t *ret_n);

/*
 * Checks that every host id the map uses is own_id or inside one of the delegated ranges
 * (adjacent ranges may be spanned). what is "uid" or "gid", file the delegation file for
 * the message. -EPERM with error (kind NOT_AUTHORIZED) naming the first id that is not
 * the caller's.
 */
int idmap_check_delegation(const IdMap *map, uint32_t own_id, const IdRange *ranges,
                           size_t n_ranges, const char *what, const char *file, UmError *error);

/*
 * Checks an fd a caller passed as params["userns"]: a user namespace (nsfs), not the
 * daemon's own (the initial one), whose owner is uid. InvalidArgument for the first two,
 * NotAuthorized for the owner. Worker only: the fd may be a file on the caller's FUSE
 * server, which answers even an ioctl (or never).
 */
int idmap_check_userns_fd(int fd, uid_t uid, UmError *error);

/*
 * Opens the user namespace of the process behind pidfd (PIDFD_GET_USER_NAMESPACE, or
 * /proc/PID/ns/user checked against the pidfd). -ESRCH if it exited. Refuses the daemon's
 * own (initial) user namespace with InvalidArgument.
 */
int idmap_open_userns_of(int pidfd, pid_t pid, int *ret_fd, UmError *error);

/*
 * Worker only. Reads the maps of the user namespace userns_fd as host ids: a child that
 * cannot be traced joins it, and the worker reads the child's /proc maps from the initial
 * user namespace.
 */
int idmap_read_userns(int userns_fd, IdMap *ret_uid_map, IdMap *ret_gid_map, UmError *error);

/*
 * Worker only. Makes a user namespace of the daemon's own with these maps (a child that
 * unshares it, the maps written from outside, the child gone again) and returns an fd of
 * it for MOUNT_ATTR_IDMAP.
 */
int idmap_make_userns(const IdMap *uid_map, const IdMap *gid_map, int *ret_fd, UmError *error);

/*
 * Applies the user namespace's mapping to a detached mount that was never attached
 * (mount_setattr MOUNT_ATTR_IDMAP). A filesystem that cannot be id-mapped gives
 * InvalidArgument naming fstype.
 */
int idmap_apply(int mount_fd, int userns_fd, const char *fstype, IdmapMode mode, UmError *error);
