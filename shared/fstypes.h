/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The filesystem types usermount mounts at all (the built-in allow-list), and which of
 * them are read-only media. The daemon's option policy (policy.h) has a section for each;
 * the worker picks partitions by them and marks a probed read-only type.
 */
#pragma once

#include <stdbool.h>

/* true if fstype is on the built-in allow-list. */
bool fstype_allowed(const char *fstype);

/* Whether fstype is always mounted read-only (its drivers never write: squashfs, erofs,
 * iso9660). */
bool fstype_read_only(const char *fstype);

/*
 * The allow-listed types, NULL-terminated, in a stable order (for the
 * SupportedFilesystems property, filtered against /proc/filesystems by the caller).
 */
const char *const *fstype_names(void);
