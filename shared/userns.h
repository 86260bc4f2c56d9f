/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether this process runs in a user namespace other than the initial one: the client
 * library asks it to decide whether a polkit agent can be registered (polkit-agent.h), the
 * CLI to choose how a mount reaches it (route.h).
 */
#pragma once

#include <stdbool.h>

/*
 * true if contents, the text of /proc/PID/uid_map, is the initial user namespace's
 * identity mapping of all ids ("0 0 4294967295" on one line, as systemd's
 * running_in_userns() reads it). Pure; exposed for the unit tests.
 */
bool userns_uid_map_is_initial(const char *contents);

/* 1 in a user namespace (a container, 'unshare --user'), 0 in the initial one, -errno if
 * /proc cannot tell. */
int userns_detect(void);
