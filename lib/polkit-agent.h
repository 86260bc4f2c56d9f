/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * polkit's text authentication agent (pkttyagent) for the duration of one request, so that
 * polkit can ask the person at the terminal for a password, the way systemd's tools do.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "macro.h"

/* Always run by absolute path: PATH must not choose the program that reads passwords. */
#define POLKIT_AGENT_PATH "/usr/bin/pkttyagent"

/* How long pkttyagent may take to register with polkitd before we go on without it. */
#define POLKIT_AGENT_REGISTER_TIMEOUT_MS 25000

typedef enum PolkitAgentUse {
        POLKIT_AGENT_USEFUL,      /* start one */
        POLKIT_AGENT_NO_TERMINAL, /* standard input is not a terminal: nobody can type */
        POLKIT_AGENT_ROOT,        /* root in the initial user namespace: polkit asks nobody */
        POLKIT_AGENT_IN_USERNS,   /* polkitd refuses an agent that runs in a user namespace */
} PolkitAgentUse;

/*
 * Whether an agent can be useful to this process. Like systemd, only stdin decides
 * whether there is a terminal: the agent writes its prompt to the terminal even when
 * stdout or stderr are redirected. In a user namespace other than the initial one it
 * never is: pkttyagent names its process with the ids it has there (uid 0 in a rootless
 * container), polkitd sees the caller's real uid on the bus, and refuses to register an
 * agent whose two uids differ ("User of caller and user of subject differs"); its setuid
 * helper has no privilege there either.
 */
PolkitAgentUse polkit_agent_use(void);

/*
 * Starts path (normally POLKIT_AGENT_PATH) as "--notify-fd 3 --fallback --process PID",
 * PID being ours, with only stdin, stdout, stderr (stdout and stderr reopened on
 * /dev/tty when they are not terminals) and the notify fd, dying with us (SIGTERM), and
 * waits until it closes the notify fd, i.e. has registered with polkitd. Returns 0 with
 * *ret_pid set (the caller must polkit_agent_stop() it); -ENOENT, -EACCES, ... when it
 * cannot be executed; -ETIMEDOUT when it did not register within timeout_ms; -EPROTO
 * when it exited instead of registering. On failure nothing is left running.
 */
int polkit_agent_start(const char *path, int timeout_ms, pid_t *ret_pid);

/*
 * Sends SIGTERM to the agent pid and reaps it (pid <= 0: nothing to do). Returns 0, the
 * "no agent" value, for "pid = polkit_agent_stop(pid)".
 */
pid_t polkit_agent_stop(pid_t pid);

static inline void polkit_agent_stopp(pid_t *pid) {
        *pid = polkit_agent_stop(*pid);
}
