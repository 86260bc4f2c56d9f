/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel pseudo filesystems (procfs, sysfs, nsfs, pidfs, cgroups, ...), told apart by
 * their statfs magic: no file on them is a filesystem image, and no directory on them is
 * a place to mount media. One table for the source checks and the target checks.
 */
#pragma once

#include <stdint.h>

/* The kernel's name of the pseudo filesystem with this magic ("proc", "nsfs"), or NULL. */
const char *pseudofs_name(uint64_t magic);

/* The same by type name (for those that share a magic with a real one: "devtmpfs"). */
const char *pseudofs_name_by_type(const char *fstype);
