/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The helpers every part of the benchmark uses (see bench.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "bench-proc.h"
#include "bench.h"
#include "macro.h"

unsigned bench_warmup(const Options *o) {
        return MAX(3u, o->iterations / 10);
}

void *bench_shared_alloc(size_t size) {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        return p == MAP_FAILED ? NULL : p;
}

int bench_measure(Bench *b, const char *name, StepFunc step, void *userdata, Row *row) {
        unsigned n = b->opt.iterations, warm = bench_warmup(&b->opt);
        g_autofree uint64_t *ns = g_new0(uint64_t, n);
        int r;

        for (unsigned i = 0; i < warm + n; i++) {
                uint64_t t;

                r = step(b, userdata, &t);
                if (r < 0)
                        return r;
                if (i >= warm)
                        ns[i - warm] = t;
        }
        row->name = name;
        stats_summarize(ns, n, &row->s);
        return 0;
}

int bench_step_failed(Bench *b, const char *what, int r) {
        snprintf(b->report.error, sizeof(b->report.error), "%s: %s", what, strerror(-r));
        return r;
}

/* CPU time of pid itself, and of the children it reaped; 0 for a process not found. */
static double cpu_of(pid_t pid, double *ret_children) {
        double self = 0, children = 0;

        if (pid > 0)
                (void) proc_cpu_ms(pid, &self, &children);
        if (ret_children)
                *ret_children = children;
        return self;
}

void bench_cpu_snap(const Bench *b, CpuSnap *ret) {
        uint64_t usec;

        *ret = (CpuSnap) {
                .polkit = cpu_of(b->polkit_pid, NULL),
                .bus = cpu_of(b->bus_pid, NULL),
                .tree = -1,
        };
        ret->daemon = cpu_of(b->daemon_pid, &ret->workers);
        if (b->cgroup && harness_cgroup_cpu_usec(&usec) >= 0)
                ret->tree = (double) usec / 1000.0;
        (void) proc_machine_busy_ms(&ret->machine);
}

void bench_cpu_per_request(const CpuSnap *before, const CpuSnap *after, unsigned n,
                           CpuSnap *ret) {
        double d = MAX(n, 1u);

        *ret = (CpuSnap) {
                .daemon = (after->daemon - before->daemon) / d,
                .workers = (after->workers - before->workers) / d,
                .tree = before->tree < 0 || after->tree < 0 ? -1 : (after->tree - before->tree) / d,
                .polkit = (after->polkit - before->polkit) / d,
                .bus = (after->bus - before->bus) / d,
                .machine = (after->machine - before->machine) / d,
        };
}

void bench_note_client_failure(Bench *b, const ClientResult *res, int status) {
        if (b->report.error[0])
                return;
        if (res->failed)
                snprintf(b->report.error, sizeof(b->report.error), "%s", res->error);
        else
                snprintf(b->report.error, sizeof(b->report.error),
                         "a client ended with status %d (125: the harness could not set it up)",
                         status);
}

int bench_run_client(Bench *b, ClientJob *job, HarnessRunFlags flags, const char *name,
                     Row *row, Row *cycle_row, CpuSnap *ret_cpu) {
        unsigned n = job->count;
        size_t size = sizeof(ClientResult) + (cycle_row ? 2 : 1) * n * sizeof(uint64_t);
        ClientResult *res = bench_shared_alloc(size);
        CpuSnap before, after;
        int status;

        if (!res)
                return bench_step_failed(b, "mmap", -errno);
        job->result = res;
        job->latency_ns = (uint64_t *) (res + 1);
        job->cycle_ns = cycle_row ? job->latency_ns + n : NULL;
        bench_cpu_snap(b, &before);
        status = harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, flags, client_main, job,
                                NULL);
        bench_cpu_snap(b, &after);
        /* Warm-up included: the CPU counters cannot tell the requests apart. */
        if (ret_cpu)
                bench_cpu_per_request(&before, &after, n + job->warmup, ret_cpu);
        if (status != 0 || res->n_done != n) {
                bench_note_client_failure(b, res, status);
                (void) munmap(res, size);
                return -EIO;
        }
        row->name = name;
        stats_summarize(job->latency_ns, n, &row->s);
        if (cycle_row)
                stats_summarize(job->cycle_ns, n, &cycle_row->s);
        (void) munmap(res, size);
        return 0;
}

int bench_run_one_client(Bench *b, ClientMode mode, const char *name, Row *row,
                         CpuSnap *ret_cpu) {
        ClientJob job = {
                .mode = mode,
                .image = b->images[0],
                .fstype = b->opt.fstype,
                .warmup = bench_warmup(&b->opt),
                .count = b->opt.iterations,
        };

        return bench_run_client(b, &job, 0, name, row, NULL, ret_cpu);
}
