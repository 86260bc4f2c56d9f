/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Id maps in the kernel, worker only: the caller's delegation (/etc/subuid, /etc/subgid)
 * read and checked, a caller's user namespace checked and its maps read, a user namespace
 * of the daemon's own made with checked maps, and a detached mount id-mapped with it; and
 * the maps' parsing and /proc form that only this work needs. The types are idmap.h's.
 */
#pragma once

#include "idmap.h"

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

/*
 * Parses the text of /proc/PID/uid_map (lines "first lower count"). Refuses more than
 * IDMAP_MAX_EXTENTS extents, zero counts, ranges that wrap around, overlapping extents and
 * an empty map (-EINVAL, -E2BIG).
 */
int idmap_parse(const char *text, IdMap *ret);

/* Writes the map in /proc/PID/uid_map form ("first lower count\n" per extent); -ENOBUFS. */
int idmap_to_proc_text(const IdMap *map, char *buf, size_t size);

/* The map of mode user: on-disk root_id appears as caller_id, nothing else is mapped. */
void idmap_single(uint32_t root_id, uint32_t caller_id, IdMap *ret);
