/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which namespaces this process is in, asked to choose how a mount reaches it: attached by
 * usermount itself in a mount namespace it administers, or by usermountd.
 */
#pragma once

#include <stdbool.h>

/*
 * Returns 1 if this process administers its mount namespace (holds CAP_SYS_ADMIN in the
 * user namespace that owns it, which is what move_mount() requires), 0 if it certainly
 * does not, and -errno if that cannot be decided here (e.g. no /proc, or the namespace is
 * owned by a nested user namespace); then only move_mount() itself can tell.
 */
int namespace_can_attach_mounts(void);
