/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Concurrent clients (see bench-concurrency.h). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench-concurrency.h"
#include "bench-proc.h"
#include "macro.h"

#define SAMPLE_INTERVAL_NS (2 * 1000 * 1000)

static void sample_daemon(Bench *b, unsigned clients) {
        Report *rep = &b->report;
        uint64_t kib;
        unsigned n;

        if (proc_status_kib(b->daemon_pid, "VmRSS", &kib) >= 0)
                rep->rss_peak_kib = MAX(rep->rss_peak_kib, kib);
        if (proc_count_children(b->daemon_pid, &n) >= 0 && n > rep->peak_workers) {
                rep->peak_workers = n;
                rep->peak_workers_clients = clients;
        }
}

static unsigned count_done(ClientResult *const *results, unsigned n) {
        unsigned done = 0;

        for (unsigned i = 0; i < n; i++)
                done += __atomic_load_n(&results[i]->done, __ATOMIC_ACQUIRE) ? 1 : 0;
        return done;
}

/* Starts them all at once (each reported "ready"), samples the daemon until they are
 * done, reaps them. */
static int drive_clients(Bench *b, HarnessCaller **callers, ClientResult **results, unsigned n) {
        const struct timespec interval = { .tv_nsec = SAMPLE_INTERVAL_NS };
        int r = 0;

        for (unsigned i = 0; i < n; i++) {
                g_autofree char *line = NULL;

                r = harness_caller_read_line(callers[i], HARNESS_CALLER_TIMEOUT_MS, &line);
                if (r < 0 || !streq(line, "ready"))
                        break;
        }
        if (r >= 0)
                for (unsigned i = 0; i < n; i++)
                        (void) harness_caller_release(callers[i]);
        /* Sampling at a fixed interval is the point here: the peak happens while clients
         * run, and nothing signals it. */
        while (r >= 0 && count_done(results, n) < n) {
                sample_daemon(b, n);
                (void) clock_nanosleep(CLOCK_MONOTONIC, 0, &interval, NULL);
        }
        for (unsigned i = 0; i < n; i++) {
                int status = harness_caller_wait(callers[i], HARNESS_CALLER_TIMEOUT_MS, NULL);

                if (status != 0) {
                        bench_note_client_failure(b, results[i], status);
                        r = -EIO;
                }
        }
        return r < 0 ? r : 0;
}

int concurrency_measure(Bench *b, unsigned n, ConcurrencyRun *ret) {
        unsigned m = b->opt.requests;
        size_t slot = sizeof(ClientResult) + m * sizeof(uint64_t), size = slot * n;
        g_autofree HarnessCaller **callers = g_new0(HarnessCaller *, n);
        g_autofree ClientResult **results = g_new0(ClientResult *, n);
        g_autofree ClientJob *jobs = g_new0(ClientJob, n);
        g_autofree uint64_t *all = g_new0(uint64_t, (size_t) n * m);
        uint8_t *mem = bench_shared_alloc(size);
        uint64_t start = UINT64_MAX, end = 0;
        CpuSnap before, after;
        int r = 0;

        if (!mem)
                return bench_step_failed(b, "mmap", -errno);
        for (unsigned i = 0; i < n && r >= 0; i++) {
                results[i] = (ClientResult *) (mem + slot * i);
                jobs[i] = (ClientJob) {
                        .mode = CLIENT_OPEN_MOUNT,
                        .image = b->images[i],
                        .fstype = b->opt.fstype,
                        .count = m,
                        .start_on_release = true,
                        .result = results[i],
                        .latency_ns = (uint64_t *) (results[i] + 1),
                };
                r = harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, client_main,
                                         &jobs[i], &callers[i]);
                if (r < 0)
                        (void) bench_step_failed(b, "starting a client", r);
        }
        bench_cpu_snap(b, &before);
        if (r >= 0)
                r = drive_clients(b, callers, results, n);
        bench_cpu_snap(b, &after);
        for (unsigned i = 0; i < n; i++)
                harness_caller_free(callers[i]);

        *ret = (ConcurrencyRun) { .clients = n };
        for (unsigned i = 0; i < n && r >= 0; i++) {
                memcpy(all + ret->requests, results[i] + 1, results[i]->n_done * sizeof(uint64_t));
                ret->requests += results[i]->n_done;
                start = MIN(start, results[i]->start_ns);
                end = MAX(end, results[i]->end_ns);
        }
        bench_cpu_per_request(&before, &after, ret->requests, &ret->cpu);
        if (r >= 0 && end > start)
                ret->per_second = (double) ret->requests * 1e9 / (double) (end - start);
        stats_summarize(all, ret->requests, &ret->s);
        (void) munmap(mem, size);
        return r;
}
