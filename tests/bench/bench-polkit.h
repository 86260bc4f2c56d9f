/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * polkitd's answer for a connected, unprivileged client, asked as root the way the daemon
 * asks (same action, same details), with both subjects a daemon can name the caller by:
 * system-bus-name (what usermountd sends today) and unix-process {pid, start-time, uid},
 * with "pidfd" too when this polkitd identifies a process by it.
 */
#pragma once

#include "bench.h"

/* Fills b->report.polkit: the two latency rows and what polkitd made of the pidfd and of
 * an unknown key. 0, or -errno after bench_step_failed(). */
int polkit_measure(Bench *b);
