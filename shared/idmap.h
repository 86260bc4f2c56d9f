/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Id-mapped mounts (org.freedesktop.UserMount1(5), params "idmap" and "userns";
 * docs/architecture.md, "Building a locked mount", step 3).
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

/* Writes the map as "first:lower:count,..." (proc false) or in /proc/PID/uid_map form
 * ("first lower count\n" per extent, proc true); -ENOBUFS. */
int idmap_format(const IdMap *map, bool proc, char *buf, size_t size);

/* Writes the map as "first:lower:count,..." (for info and the registry); -ENOBUFS. */
int idmap_to_string(const IdMap *map, char *buf, size_t size);

/*
 * Parses /etc/subuid (or subgid) text: the ranges whose first field is user or the decimal
 * uid. Malformed lines are skipped, as shadow's tools do. *ret is malloc()ed (NULL when
 * there are none).
 */
int idmap_parse_subid(const char *text, const char *user, uid_t uid, IdRange **ret,
                      size_t *ret_n);

/* Refuses fd if it is the daemon's own user namespace (the initial one): InvalidArgument
 * with refusal as the message. */
int idmap_refuse_own_userns(int fd, const char *refusal, UmError *error);

/*
 * Opens the user namespace of the process behind pidfd (PIDFD_GET_USER_NAMESPACE, or
 * /proc/PID/ns/user checked against the pidfd). -ESRCH if it exited. Refuses the daemon's
 * own (initial) user namespace with InvalidArgument.
 */
int idmap_open_userns_of(int pidfd, pid_t pid, int *ret_fd, UmError *error);

/* The id-mapping of a mount: what the probe worker read and checked, what the build applies. */
typedef struct MountIdmap {
        IdmapMode mode;
        bool mode_given;      /* the caller asked for mode (else it is the default) */
        bool own_root;        /* the root directory must appear as the caller's (below) */
        uint32_t caller_uid;  /* user: who the root directory's owner appears as */
        uint32_t caller_gid;
        IdMap uid_map;        /* namespace: the checked maps; after the build: the maps applied */
        IdMap gid_map;
} MountIdmap;
