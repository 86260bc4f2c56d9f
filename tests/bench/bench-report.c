/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The benchmark's table and its targets (see bench-report.h). */
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench-report.h"
#include "macro.h"

/* The design's targets (issue 13). */
#define TARGET_OPEN_MOUNT_RATIO 5.0 /* OpenMount p50 over the raw fresh-loop path */
#define TARGET_NON_POLKIT_MS 0.8    /* OpenMount p50 - polkit p50 - raw p50 */
#define TARGET_TAIL_RATIO 1.5       /* OpenMount p99 over p50 */
#define TARGET_MOUNTS_RATIO 1.15    /* p50 at the most extra mounts over p50 at none */
#define TARGET_CLIENTS_RATIO 1.0    /* wall time per request, most clients over one */
#define TARGET_CPU_MS 3.0           /* the machine's CPU per OpenMount */
#define TARGET_IDLE_RSS_KIB 3072    /* the daemon's main process, idle */

static void print_row(const Row *row) {
        if (!row->name)
                return;
        printf("  %-42s %6zu %8.3f %8.3f %8.3f %8.3f %8.3f\n", row->name, row->s.n,
               stats_ms(row->s.p50_ns), stats_ms(row->s.p90_ns), stats_ms(row->s.p99_ns),
               stats_ms(row->s.max_ns), stats_ms(row->s.mean_ns));
}

static const char *verdict(bool met) {
        return met ? "met" : "MISSED";
}

static double ratio(uint64_t a, uint64_t b) {
        return (double) a / (double) MAX(b, 1u);
}

static void print_header(const Bench *b) {
        struct utsname u = {};

        (void) uname(&u);
        printf("usermount benchmark: %s image, %u timed iterations (+%u warm-up), "
               "%u requests per client\n", b->opt.fstype, b->opt.iterations,
               bench_warmup(&b->opt), b->opt.requests);
        printf("machine: Linux %s, %ld CPUs; caller uid %u, polkit rule YES for mount-image\n\n",
               u.release, sysconf(_SC_NPROCESSORS_ONLN), (unsigned) HARNESS_UID_USER1);
        printf("  %-42s %6s %8s %8s %8s %8s %8s\n", "latency (ms)", "n", "p50", "p90", "p99",
               "max", "mean");
}

static void print_polkit_notes(const PolkitReport *p) {
        if (!p->process.name)
                return;
        printf("  (unix-process: {pid, start-time, uid} of the client; \"pidfd\" %s; "
               "an unknown key %s)\n",
               p->pidfd_used ? "used: polkitd found the process by the pidfd alone"
                             : "left out: polkitd needs \"pid\" and does not use a pidfd",
               p->unknown_key_ok ? "is ignored" : "makes polkitd REFUSE the subject");
}

static void print_latency(const Report *rep) {
        const Row *const rows[] = {
                &rep->raw_device, &rep->raw_image, &rep->raw_loop, &rep->raw_worker,
                &rep->broker, &rep->raw_umount, &rep->unmount,
        };
        const Row *const pieces[] = {
                &rep->probe_worker, &rep->fork_exit, &rep->find_backing, &rep->probe,
                &rep->bus_ping, &rep->polkit.bus_name, &rep->polkit.process,
        };
        const CpuSnap *c = &rep->broker_cpu;

        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                print_row(rows[i]);
        printf("  pieces of a request:\n");
        for (size_t i = 0; i < ELEMENTSOF(pieces); i++)
                print_row(pieces[i]);
        print_polkit_notes(&rep->polkit);

        if (rep->broker.name && rep->raw_image.name)
                printf("\n  OpenMount p50 over the fair raw path (fresh loop + fsmount): +%.3f ms, "
                       "%.2fx; over fsmount on a loop attached once: +%.3f ms, %.2fx\n",
                       stats_ms(rep->broker.s.p50_ns) - stats_ms(rep->raw_image.s.p50_ns),
                       ratio(rep->broker.s.p50_ns, rep->raw_image.s.p50_ns),
                       stats_ms(rep->broker.s.p50_ns) - stats_ms(rep->raw_device.s.p50_ns),
                       ratio(rep->broker.s.p50_ns, rep->raw_device.s.p50_ns));
        if (rep->unmount.name && rep->raw_umount.name)
                printf("  Unmount p50 over the raw umount2: +%.3f ms, %.2fx\n",
                       stats_ms(rep->unmount.s.p50_ns) - stats_ms(rep->raw_umount.s.p50_ns),
                       ratio(rep->unmount.s.p50_ns, rep->raw_umount.s.p50_ns));
        if (rep->broker.name)
                printf("  CPU per OpenMount (ms, 10 ms clock ticks averaged): daemon main %.2f, "
                       "its workers %.2f, polkitd %.2f, dbus-daemon %.2f, whole machine %.2f\n"
                       "  (workers: those the daemon reaped during the run; the rest of the "
                       "machine is mostly the client)\n",
                       c->daemon, c->workers, c->polkit, c->bus, c->machine);
}

static void print_mounts(const Report *rep) {
        const MountsRun *first = &rep->mounts[0];

        if (rep->mounts_skipped) {
                printf("\n  latency with extra mounts: not measured: %s\n", rep->mounts_skipped);
                return;
        }
        if (rep->n_mounts == 0)
                return;
        printf("\n  %-14s %12s %9s %9s %9s %9s %12s %9s\n", "extra mounts", "daemon sees",
               "p50 ms", "p90 ms", "p99 ms", "p50 x0", "raw wkr p50", "x0");
        for (size_t i = 0; i < rep->n_mounts; i++) {
                const MountsRun *m = &rep->mounts[i];

                printf("  %-14u %12d %9.3f %9.3f %9.3f %8.2fx %12.3f %8.2fx\n", m->extra, m->seen,
                       stats_ms(m->row.s.p50_ns), stats_ms(m->row.s.p90_ns),
                       stats_ms(m->row.s.p99_ns), ratio(m->row.s.p50_ns, first->row.s.p50_ns),
                       stats_ms(m->raw_worker.s.p50_ns),
                       ratio(m->raw_worker.s.p50_ns, first->raw_worker.s.p50_ns));
        }
        printf("  (OpenMount with that many more mounts in the namespace the daemon shares: "
               "one tmpfs and bind mounts;\n   raw wkr: the daemon's build worker in process, "
               "whose two unshares copy the mount table)\n");
}

/* "Per request" two ways: the latency a client sees, and the machine's time per request
 * (the run's wall time over the requests served, 1 / throughput). With more clients than
 * CPUs the first grows with the queue by necessity; the second says whether the daemon
 * gets slower per request when busy, which is what the design's target is about. */
static void print_concurrency(const Report *rep) {
        const ConcurrencyRun *first = &rep->runs[0];

        if (rep->n_runs == 0)
                return;
        printf("\n  %-8s %9s %9s %9s %9s %9s %9s %10s %10s %8s\n", "clients", "requests",
               "req/s", "ms/req", "mean ms", "p50 ms", "p99 ms", "ms/req x1", "mean x1",
               "cpu ms");
        for (size_t i = 0; i < rep->n_runs; i++) {
                const ConcurrencyRun *c = &rep->runs[i];

                printf("  %-8u %9u %9.1f %9.3f %9.3f %9.3f %9.3f %9.2fx %9.2fx %8.2f\n", c->clients,
                       c->requests, c->per_second, 1000.0 / MAX(c->per_second, 1e-9),
                       stats_ms(c->s.mean_ns), stats_ms(c->s.p50_ns), stats_ms(c->s.p99_ns),
                       first->per_second / MAX(c->per_second, 1e-9),
                       ratio(c->s.mean_ns, first->s.mean_ns), c->cpu.machine);
        }
        printf("  (cpu ms: the whole machine's busy CPU time per request, clients included; "
               "the latency a client sees grows with the queue)\n");
}

static void print_daemon(const Report *rep) {
        printf("\n  daemon (main process)\n");
        printf("  %-42s %8.2f MiB\n", "RSS idle after start", (double) rep->rss_idle_kib / 1024.0);
        printf("  %-42s %8.2f MiB\n", "RSS peak sampled during the runs",
               (double) rep->rss_peak_kib / 1024.0);
        printf("  %-42s %8.2f MiB\n", "VmHWM at the end", (double) rep->hwm_end_kib / 1024.0);
        printf("  %-42s %8.2f MiB\n", "RSS at the end", (double) rep->rss_end_kib / 1024.0);
        printf("  %-42s %8u (with %u clients)\n", "workers at once, peak sampled",
               rep->peak_workers, rep->peak_workers_clients);
        printf("  %-42s %8d / %d%s\n", "fds before / after", rep->fds_before, rep->fds_after,
               rep->settled ? "" : "  (NOT back to the start: fds, loop devices or mounts left)");
        if (rep->pool.found > 0)
                printf("  %-42s %u spawned, %u hits, %u misses\n", "worker pool (logged at exit)",
                       rep->pool.spawned, rep->pool.hits, rep->pool.misses);
        else if (rep->pool.found == 0)
                printf("  %-42s n/a (the daemon does not report a pool)\n", "worker pool");
        else
                printf("  %-42s n/a (stderr is not a file the bench can read back)\n",
                       "worker pool");
}

static void print_targets(const Report *rep) {
        const Summary *om = &rep->broker.s, *raw = &rep->raw_image.s;
        const ConcurrencyRun *one = &rep->runs[0], *most = &rep->runs[MAX(rep->n_runs, 1u) - 1];
        const MountsRun *none = &rep->mounts[0], *full = &rep->mounts[MAX(rep->n_mounts, 1u) - 1];

        printf("\n  targets\n");
        if (rep->broker.name && rep->raw_image.name) {
                double r = ratio(om->p50_ns, raw->p50_ns);

                printf("  OpenMount p50 <= %.0fx the raw fresh-loop path: %.3f / %.3f ms = %.2fx: "
                       "%s\n", TARGET_OPEN_MOUNT_RATIO, stats_ms(om->p50_ns),
                       stats_ms(raw->p50_ns), r, verdict(r <= TARGET_OPEN_MOUNT_RATIO));
        }
        if (rep->broker.name && rep->raw_image.name && rep->polkit.process.name) {
                double pk = stats_ms(rep->polkit.process.s.p50_ns);
                double rest = stats_ms(om->p50_ns) - pk - stats_ms(raw->p50_ns);

                printf("  everything but polkit <= %.1f ms above raw: %.3f - %.3f (polkit, "
                       "unix-process: the subject the daemon will use) - %.3f = %.3f ms: %s\n",
                       TARGET_NON_POLKIT_MS, stats_ms(om->p50_ns), pk, stats_ms(raw->p50_ns),
                       rest, verdict(rest <= TARGET_NON_POLKIT_MS));
        }
        if (rep->broker.name) {
                double r = ratio(om->p99_ns, om->p50_ns);

                printf("  OpenMount p99 <= %.1fx p50: %.3f / %.3f ms = %.2fx: %s\n",
                       TARGET_TAIL_RATIO, stats_ms(om->p99_ns), stats_ms(om->p50_ns), r,
                       verdict(r <= TARGET_TAIL_RATIO));
        }
        if (rep->n_mounts > 1) {
                double r = ratio(full->row.s.p50_ns, none->row.s.p50_ns);

                printf("  OpenMount p50 at %u extra mounts <= %.2fx at %u: %.3f / %.3f ms = "
                       "%.2fx: %s\n", full->extra, TARGET_MOUNTS_RATIO, none->extra,
                       stats_ms(full->row.s.p50_ns), stats_ms(none->row.s.p50_ns), r,
                       verdict(r <= TARGET_MOUNTS_RATIO));
        }
        if (rep->n_runs > 1) {
                double r = one->per_second / MAX(most->per_second, 1e-9);

                printf("  %u clients: wall time per request <= %.0fx %u client's: %.3f / %.3f ms "
                       "= %.2fx: %s\n", most->clients, TARGET_CLIENTS_RATIO, one->clients,
                       1000.0 / MAX(most->per_second, 1e-9), 1000.0 / MAX(one->per_second, 1e-9),
                       r, verdict(r <= TARGET_CLIENTS_RATIO));
        }
        if (rep->broker.name)
                printf("  machine CPU per OpenMount <= %.0f ms: %.2f ms: %s\n", TARGET_CPU_MS,
                       rep->broker_cpu.machine, verdict(rep->broker_cpu.machine <= TARGET_CPU_MS));
        printf("  daemon main process idle RSS <= %u MiB: %.2f MiB: %s\n",
               TARGET_IDLE_RSS_KIB / 1024, (double) rep->rss_idle_kib / 1024.0,
               verdict(rep->rss_idle_kib <= TARGET_IDLE_RSS_KIB));
}

void report_print(const Bench *b) {
        print_header(b);
        print_latency(&b->report);
        print_mounts(&b->report);
        print_concurrency(&b->report);
        print_daemon(&b->report);
        print_targets(&b->report);
        fflush(stdout);
}
