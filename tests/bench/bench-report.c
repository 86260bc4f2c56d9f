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

/* The kernel's run of run's type, if it was measured (NULL for the kernel's own). */
static const DriverRun *kernel_run_of(const DriversReport *d, const DriverRun *run) {
        if (!run->userspace)
                return NULL;
        for (size_t i = 0; i < d->n_runs; i++) {
                const DriverRun *k = &d->runs[i];

                if (!k->userspace && streq(k->fstype, run->fstype) && k->open.name)
                        return k;
        }
        return NULL;
}

/* "  4.56x", or "      -" where there is nothing to compare with. */
static void print_ratio(bool have, double r) {
        if (have)
                printf(" %8.2fx", r);
        else
                printf(" %9s", "-");
}

static double mib_per_s(uint64_t bytes, uint64_t ns) {
        return (double) bytes / 1048576.0 / MAX((double) ns / 1e9, 1e-9);
}

static void print_drivers_latency(const DriversReport *d) {
        printf("\n  Kernel vs userspace drivers (OpenMount with params[\"driver\"]; ext4 and "
               "squashfs: one image, both drivers)\n");
        printf("  %-9s %-11s %9s %9s %9s %10s %10s %9s\n", "type", "driver", "open p50",
               "open p99", "x kernel", "cycle p50", "cycle p99", "x kernel");
        for (size_t i = 0; i < d->n_runs; i++) {
                const DriverRun *run = &d->runs[i], *k = kernel_run_of(d, run);

                printf("  %-9s %-11s", run->fstype, run->driver ?: "userspace");
                if (!run->open.name) {
                        printf(" not measured: %s\n", run->skipped ?: "a request failed");
                        continue;
                }
                printf(" %9.3f %9.3f", stats_ms(run->open.s.p50_ns), stats_ms(run->open.s.p99_ns));
                print_ratio(k, k ? ratio(run->open.s.p50_ns, k->open.s.p50_ns) : 0);
                printf(" %10.3f %10.3f", stats_ms(run->cycle.s.p50_ns),
                       stats_ms(run->cycle.s.p99_ns));
                print_ratio(k, k ? ratio(run->cycle.s.p50_ns, k->cycle.s.p50_ns) : 0);
                printf("\n");
        }
        printf("  (ms; open: send to mount fd received, as above; cycle: open, then the close of "
               "the mount fd and,\n   for a userspace driver, until its process exited; x kernel: "
               "p50 over the kernel driver's on the same image)\n");
}

/* The daemon's cgroup per mount (daemon, workers, driver), or what the counters of the
 * daemon's process give without one. */
static double cpu_of_mount(const CpuSnap *c) {
        return c->tree >= 0 ? c->tree : c->daemon + c->workers;
}

static void print_drivers_cost(const DriversReport *d) {
        printf("\n  %-9s %-11s %8s %8s %8s %8s %9s %10s %9s\n", "type", "driver", "daemon",
               "workers", "driver", "cpu ms", "x kernel", "read MiB/s", "x kernel");
        for (size_t i = 0; i < d->n_runs; i++) {
                const DriverRun *run = &d->runs[i], *k = kernel_run_of(d, run);
                const CpuSnap *c = &run->cpu;

                if (!run->open.name)
                        continue;
                printf("  %-9s %-11s %8.2f %8.2f", run->fstype, run->driver, c->daemon,
                       c->workers);
                if (c->tree >= 0 && run->userspace)
                        printf(" %8.2f", c->tree - c->daemon - c->workers);
                else
                        printf(" %8s", c->tree >= 0 ? "-" : "n/a");
                printf(" %8.2f", cpu_of_mount(c));
                print_ratio(k, k ? cpu_of_mount(c) / MAX(cpu_of_mount(&k->cpu), 1e-9) : 0);
                if (run->read.name) {
                        double mibs = mib_per_s(d->read_size, run->read.s.p50_ns);

                        printf(" %10.1f", mibs);
                        print_ratio(k && k->read.name,
                                    k && k->read.name ? mibs / mib_per_s(d->read_size,
                                                                         k->read.s.p50_ns)
                                                      : 0);
                } else
                        printf(" %10s %9s", "-", "-");
                printf("\n");
        }
        printf("  (CPU per mount in ms, warm-up included: the daemon's main process and its "
               "workers (10 ms clock\n   ticks averaged); cpu ms: all of the daemon's cgroup, "
               "which also holds the drivers, to the\n   microsecond; driver: the rest, nearly "
               "all of it the userspace driver's.\n   read: a %.0f MiB file "
               "by read(2) in 128 KiB steps through the mount attached in the caller's own\n"
               "   mount namespace, median of %u, each on a fresh mount: the mounted filesystem's "
               "page cache is\n   cold; the image file lives in the harness's tmpfs, in memory "
               "for both drivers, so the figures\n   are the drivers' cost, not a disk's)\n",
               (double) d->read_size / 1048576.0, d->read_repetitions);
}

static void print_drivers(const Report *rep) {
        if (rep->drivers.n_runs == 0)
                return;
        print_drivers_latency(&rep->drivers);
        print_drivers_cost(&rep->drivers);
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
        print_drivers(&b->report);
        print_daemon(&b->report);
        print_targets(&b->report);
        fflush(stdout);
}
