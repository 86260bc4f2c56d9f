/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount-worker: the process usermountd does a request's privileged work in (daemon/workerpool.h).
 * Started by the daemon with its socket as fd 3 and the daemon's pid as argument; warms up
 * (the libraries a job uses, touched once), then serves jobs until the daemon is done with
 * it. Not meant to be run by hand. It logs nothing: what goes wrong travels back in the
 * reply, and the daemon, which knows the request, logs it; so it needs no libsystemd
 * (and none of what that loads), which keeps its start cheap.
 */
#include "jobs.h"

int main(int argc, char *argv[]) {
        const WorkerJobType *types;
        size_t n;
        int r;

        r = worker_runner_start(argc, argv, "usermount-worker does the privileged work of "
                                "usermountd's requests; usermountd starts it, it is not "
                                "meant to be run by hand.");
        if (r != 0)
                return r;
        jobs_warm_up();
        types = jobs_worker_table(&n);
        worker_runner_run(WORKER_SOCKET_FD, types, n);
}
