/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sandbox made ahead of the program it is for (sandbox.h): a process that is the future
 * program (the same pid), already in its namespaces with its mounts made, waiting for the
 * order to run it. A worker makes one for a userspace driver while polkit is asked
 * (jobs-userspace.h), so that the start of the mount pays for the exec alone:
 *
 *   sandbox_stub_start()   sandbox_clone(); in the child a setup function (signals,
 *                          sandbox_mounts()), then it waits on a socket of its own
 *   sandbox_stub_exec()    sends a SandboxExec, its fds with it; the child runs
 *                          sandbox_exec() with it
 *   sandbox_stub_stop()    an unused stub is killed and reaped
 *
 * Until the order the stub holds no fd but its end of the socket, and it has run no code
 * but ours on no data of the request: it may be made before the request is authorized. It
 * exits at end of file on the socket (its maker gone, or the stub given up), so an unused
 * stub never outlives its maker. A setup that failed is reported once the order came, as
 * the step that failed, over the order's err_fd, like any other step.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "sandbox.h"

typedef struct SandboxStub {
        pid_t pid;
        int pidfd;    /* close-on-exec */
        int order_fd; /* the maker's end of the socket */
} SandboxStub;

#define SANDBOX_STUB_NULL ((SandboxStub) { .pidfd = -EBADF, .order_fd = -EBADF })

/* The bytes the strings of an order (path, argv, envp, exec_step) may take, NULs included. */
#define SANDBOX_STUB_STRINGS_MAX 4096

/* In the child: builds what does not depend on the request; a step that fails sets
 * *ret_step and returns -errno. */
typedef int (*SandboxSetup)(const void *userdata, const char **ret_step);

/* Starts a stub that runs setup(userdata) (which must not allocate: the child of a
 * multi-threaded process). 0 and *ret, or -errno. */
int sandbox_stub_start(SandboxSetup setup, const void *userdata, SandboxStub *ret);

/* Whether the stub still waits (it has not exited). */
bool sandbox_stub_alive(const SandboxStub *s);

/*
 * Sends x (x->keep holds at most FDPASS_MAX - 2 fds) and lets go of the socket: the
 * stub runs sandbox_exec(x) from here, and its pid and pidfd are the program's. 0 once
 * sent; -E2BIG (the strings do not fit), or -errno when the stub did not take it (it is
 * gone): the caller stops it and starts the program another way.
 */
int sandbox_stub_exec(SandboxStub *s, const SandboxExec *x);

/* Kills and reaps a stub, closes its fds. Accepts a SANDBOX_STUB_NULL. */
void sandbox_stub_stop(SandboxStub *s);
