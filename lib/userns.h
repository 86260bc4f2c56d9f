/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether this process runs in a user namespace other than the initial one, which decides
 * whether a polkit agent can be registered for it (polkit-agent.h).
 */
#pragma once

/* 1 in a user namespace (a container, 'unshare --user'), 0 in the initial one, -errno if
 * /proc cannot tell. Only the initial user namespace maps every id onto itself, as
 * systemd's running_in_userns() reads it. */
int userns_detect(void);
