/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stage namespace: a mount namespace whose whole tree is one small tmpfs (root's,
 * 0700) holding the empty directory JOB_STAGE_DIR. A build stages its mount in a private
 * copy of it (mountbuild_locked_in()), so that neither of the build's namespace copies
 * costs more with 2000 mounts on the host than with none.
 */
#pragma once

#include "jobproto.h"

/*
 * Makes the stage namespace: a short-lived child unshares, mounts the tmpfs over dir (an
 * existing directory, only inside the new namespace), pivots into it and detaches the
 * host's tree; nothing changes outside. *ret_fd: the namespace (O_CLOEXEC), alive as long
 * as the fd is.
 */
int stagens_make(const char *dir, int *ret_fd);
