/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount-worker: the process usermountd does a request's privileged work in (worker.h).
 * Started by the daemon with its socket as fd 3 and the daemon's pid as argument; warms up
 * (the libraries a job uses, touched once), then serves jobs until the daemon is done with
 * it. Not meant to be run by hand. It logs nothing: what goes wrong travels back in the
 * reply, and the daemon, which knows the request, logs it; so it needs no libsystemd
 * (and none of what that loads), which keeps its start cheap.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobs-worker.h"

#define WORKER_SOCKET_FD 3

static int parse_int(const char *s, int *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < 0 || v > INT32_MAX)
                return -EINVAL;
        *ret = (int) v;
        return 0;
}

int main(int argc, char *argv[]) {
        int ppid;
        const WorkerJobType *types;
        struct stat st;
        size_t n;

        if (argc != 2 || parse_int(argv[1], &ppid) < 0 || fstat(WORKER_SOCKET_FD, &st) < 0 ||
            !S_ISSOCK(st.st_mode)) {
                fprintf(stderr, "usermount-worker does the privileged work of usermountd's "
                                "requests; usermountd starts it, it is not meant to be run "
                                "by hand.\n");
                return 2;
        }
        /* Die with the daemon; if it is gone already, there is nobody to work for. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != (pid_t) ppid)
                return 1;
        /* No core dumps or ptrace of a process that holds callers' fds. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* Nothing but the socket: whatever else the daemon had is not ours. */
        (void) close_range(WORKER_SOCKET_FD + 1, ~0U, 0);

        jobs_warm_up();
        types = jobs_worker_table(&n);
        worker_runner_run(WORKER_SOCKET_FD, types, n);
}
