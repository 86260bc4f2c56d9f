/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The usermount benchmark (issue 6). In one run, on the same filesystem image, it measures
 * the latency of OpenMount as an unprivileged caller sees it (send to mount fd received)
 * against the raw in-process mount of that image, the throughput of 1, 4, 16 and 64
 * concurrent clients (each with its own connection and image), the daemon's memory and
 * fds, and the pieces a request is made of (fork, probe, bus and polkit round trips, the
 * daemon's own build worker). It runs in the integration harness (tests/harness): a
 * private bus, the real polkitd with rules that say yes, the real daemon with raised
 * limits, real images on real loop devices, all in a private mount namespace.
 *
 * It prints a table on stdout; exit status 0, 1 when a request failed (the error is
 * printed), 2 when the bench itself could not be set up or was called wrongly, 77 when
 * not run as root.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench-client.h"
#include "bench-proc.h"
#include "bench-raw.h"
#include "bench-stats.h"
#include "harness.h"
#include "macro.h"

#define EXIT_REQUEST_FAILED 1
#define EXIT_SETUP 2
#define EXIT_SKIP 77

#define MAX_CLIENT_RUNS 16
#define SAMPLE_INTERVAL_NS (2 * 1000 * 1000)

static const char bench_rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id == 'org.freedesktop.usermount1.mount-image' &&\n"
        "            subject.user == 'umtest1')\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

typedef struct Options {
        unsigned iterations;
        unsigned requests; /* per client in the concurrency runs */
        unsigned clients[MAX_CLIENT_RUNS];
        size_t n_clients;
        const char *fstype;
        bool quick;
} Options;

/* One latency row of the table. */
typedef struct Row {
        const char *name;
        Summary s;
} Row;

/* CPU time used, in ms: the daemon with its reaped workers, polkitd, dbus-daemon, and the
 * whole machine (which includes the clients). */
typedef struct CpuSnap {
        double daemon, polkit, bus, machine;
} CpuSnap;

typedef struct ConcurrencyRun {
        CpuSnap cpu; /* per request */
        unsigned clients;
        unsigned requests; /* succeeded */
        double per_second;
        Summary s;
} ConcurrencyRun;

typedef struct Report {
        Row raw_device, raw_image, raw_loop, raw_worker, broker;
        Row probe_worker, fork_exit, probe, find_backing, bus_ping, polkit;
        CpuSnap broker_cpu; /* per OpenMount of the single-client latency run */
        ConcurrencyRun runs[MAX_CLIENT_RUNS];
        size_t n_runs;
        uint64_t rss_idle_kib, rss_peak_kib, hwm_end_kib, rss_end_kib;
        unsigned peak_workers, peak_workers_clients;
        int fds_before, fds_after;
        bool settled;
        char error[640]; /* the first failed request */
} Report;

/* Everything the run needs, made in bench_setup(). */
typedef struct Bench {
        Options opt;
        pid_t daemon_pid, polkit_pid, bus_pid; /* 0 when not found */
        char **images;   /* one per client of the largest run; images[0] for latency */
        size_t n_images;
        char *stage_dir; /* root-only, for the reproduced build worker */
        HarnessSnapshot baseline;
        Report report;
} Bench;

/* ---------------------------------------------------------------------------------- */
/* Options                                                                            */

static void help(void) {
        printf("bench [OPTIONS]\n\n"
               "Measures usermountd's OpenMount against the raw mount of the same image, under\n"
               "1..64 concurrent clients, and the daemon's memory and fds, in the integration\n"
               "harness (private bus, real polkitd and daemon, loop devices). Needs root.\n\n"
               "  -h --help            show this help\n"
               "     --iterations=N    timed requests for the latency rows (default 200)\n"
               "     --requests=M      requests per client in the concurrency runs (default 20)\n"
               "     --clients=LIST    concurrency runs, comma-separated (default 1,4,16,64)\n"
               "     --fstype=TYPE     ext4 (default), xfs, btrfs, squashfs or erofs\n"
               "     --quick           a smoke run: --iterations=10 --requests=2, unless given\n\n"
               "Exit status: 0, 1 when a request failed, 2 on a setup or usage error, 77 when\n"
               "not run as root.\n");
}

static int parse_count(const char *s, unsigned max, unsigned *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || end == s || *end || v < 1 || v > max || *s == '-')
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int parse_clients(const char *s, Options *o) {
        g_auto(GStrv) items = g_strsplit(s, ",", -1);

        o->n_clients = 0;
        for (size_t i = 0; items[i]; i++) {
                if (o->n_clients >= MAX_CLIENT_RUNS)
                        return -E2BIG;
                if (parse_count(items[i], 512, &o->clients[o->n_clients++]) < 0)
                        return -EINVAL;
        }
        return o->n_clients > 0 ? 0 : -EINVAL;
}

/* 0 to go on, 1 after --help, -EINVAL after a message on stderr. */
static int parse_argv(int argc, char *argv[], Options *o) {
        enum { ARG_ITERATIONS = 0x100, ARG_REQUESTS, ARG_CLIENTS, ARG_FSTYPE, ARG_QUICK };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "iterations", required_argument, NULL, ARG_ITERATIONS },
                { "requests", required_argument, NULL, ARG_REQUESTS },
                { "clients", required_argument, NULL, ARG_CLIENTS },
                { "fstype", required_argument, NULL, ARG_FSTYPE },
                { "quick", no_argument, NULL, ARG_QUICK },
                {},
        };
        bool iterations_set = false, requests_set = false;
        int c;

        *o = (Options) { .iterations = 200, .requests = 20, .clients = { 1, 4, 16, 64 },
                         .n_clients = 4, .fstype = "ext4" };
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 1;
                case ARG_ITERATIONS:
                        if (parse_count(optarg, 1000000, &o->iterations) < 0)
                                goto bad;
                        iterations_set = true;
                        break;
                case ARG_REQUESTS:
                        if (parse_count(optarg, 100000, &o->requests) < 0)
                                goto bad;
                        requests_set = true;
                        break;
                case ARG_CLIENTS:
                        if (parse_clients(optarg, o) < 0)
                                goto bad;
                        break;
                case ARG_FSTYPE:
                        o->fstype = optarg;
                        break;
                case ARG_QUICK:
                        o->quick = true;
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "bench: unexpected argument '%s' (see --help).\n", argv[optind]);
                return -EINVAL;
        }
        if (o->quick && !iterations_set)
                o->iterations = 10;
        if (o->quick && !requests_set)
                o->requests = 2;
        return 0;
bad:
        fprintf(stderr, "bench: invalid value '%s' for --%s (see --help).\n", optarg,
                options[c - ARG_ITERATIONS + 1].name);
        return -EINVAL;
}

static unsigned warmup_of(const Options *o) {
        return MAX(3u, o->iterations / 10);
}

static unsigned max_clients(const Options *o) {
        unsigned m = 1;

        for (size_t i = 0; i < o->n_clients; i++)
                m = MAX(m, o->clients[i]);
        return m;
}

/* ---------------------------------------------------------------------------------- */
/* Setup                                                                              */

/* Memory the forked clients write and the bench reads; zeroed. */
static void *shared_alloc(size_t size) {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        return p == MAP_FAILED ? NULL : p;
}

/* Limits far above what the largest run needs: the bench measures, it does not test
 * refusals, and every client's request must be served. */
static int write_config(const Options *o, char **ret_path) {
        unsigned n = MAX(64u, 4 * max_clients(o));
        g_autofree char *path = g_build_filename(harness_tmpdir(), "bench.conf", NULL);
        g_autofree char *text = g_strdup_printf("[Limits]\n"
                                                "MaxRequests=%u\nMaxRequestsPerUser=%u\n"
                                                "MaxLoopDevices=%u\nMaxLoopDevicesPerUser=%u\n"
                                                "MaxWorkers=%u\nMaxWorkersPerUser=%u\n",
                                                n, n, n, n, n, n);
        GError *error = NULL;

        if (!g_file_set_contents(path, text, -1, &error)) {
                fprintf(stderr, "bench: cannot write %s: %s\n", path, error->message);
                g_error_free(error);
                return -EIO;
        }
        if (chmod(path, 0644) < 0)
                return -errno;
        *ret_path = g_steal_pointer(&path);
        return 0;
}

static int make_images(Bench *b) {
        static const HarnessEntry entries[] = {
                { HARNESS_ENTRY_FILE, "hello.txt", "hello bench\n" },
                {},
        };
        const HarnessImageSpec spec = { .label = streq(b->opt.fstype, "squashfs") ? NULL : "bench",
                                        .entries = entries };
        int r;

        b->n_images = max_clients(&b->opt);
        b->images = g_new0(char *, b->n_images + 1);
        for (size_t i = 0; i < b->n_images; i++) {
                r = harness_make_image(b->opt.fstype, &spec, &b->images[i]);
                if (r < 0) {
                        fprintf(stderr, "bench: cannot make a %s image: %s\n", b->opt.fstype,
                                strerror(-r));
                        return r;
                }
        }
        return 0;
}

static int bench_setup(Bench *b) {
        g_autofree char *conf = NULL, *conf_arg = NULL;
        int r;

        r = harness_set_rules(bench_rules);
        if (r < 0) {
                fprintf(stderr, "bench: polkit did not load the rules: %s\n", strerror(-r));
                return r;
        }
        r = write_config(&b->opt, &conf);
        if (r < 0)
                return r;
        r = make_images(b);
        if (r < 0)
                return r;
        b->stage_dir = g_build_filename(harness_tmpdir(), "bench-stage", NULL);
        if (mkdir(b->stage_dir, 0700) < 0)
                return -errno;

        if (!harness_daemon_path()) {
                fprintf(stderr, "bench: no daemon to run: set UM_USERMOUNTD.\n");
                return -ENOENT;
        }
        conf_arg = g_strconcat("--config=", conf, NULL);
        const char *const args[] = { conf_arg, NULL };
        r = harness_start_daemon(harness_daemon_path(), args, &b->daemon_pid);
        if (r < 0) {
                fprintf(stderr, "bench: the daemon did not start: %s\n", strerror(-r));
                return r;
        }
        /* The harness's services are children of this process; for CPU accounting only. */
        (void) proc_find_child(getpid(), "polkitd", &b->polkit_pid);
        (void) proc_find_child(getpid(), "dbus-daemon", &b->bus_pid);
        r = harness_snapshot(b->daemon_pid, &b->baseline);
        if (r < 0)
                return r;
        b->report.fds_before = b->baseline.daemon_fds;
        return proc_status_kib(b->daemon_pid, "VmRSS", &b->report.rss_idle_kib);
}

/* ---------------------------------------------------------------------------------- */
/* In-process measurements (as root, no bus)                                          */

typedef int (*StepFunc)(Bench *b, void *userdata, uint64_t *ret_ns);

/* warm-up + iterations of step; samples summarized into row. */
static int measure(Bench *b, const char *name, StepFunc step, void *userdata, Row *row) {
        unsigned n = b->opt.iterations, warm = warmup_of(&b->opt);
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

static int step_failed(Bench *b, const char *what, int r) {
        snprintf(b->report.error, sizeof(b->report.error), "%s: %s", what, strerror(-r));
        return r;
}

static int step_raw_device(Bench *b, void *userdata, uint64_t *ret_ns) {
        const char *device = userdata, *what = NULL;
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_mount_device(b->opt.fstype, device, &what);
        if (r < 0)
                return step_failed(b, what, r);
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

typedef struct ImageStep {
        int fd;
        uint64_t *loop_ns; /* per timed iteration, for the loop attach row */
        unsigned i;
} ImageStep;

static int step_raw_image(Bench *b, void *userdata, uint64_t *ret_ns) {
        ImageStep *s = userdata;
        const char *what = NULL;
        RawTimes t;
        int r;

        r = raw_mount_image(b->opt.fstype, s->fd, &t, &what);
        if (r < 0)
                return step_failed(b, what, r);
        /* The warm-up iterations come first and are overwritten by the timed ones. */
        s->loop_ns[s->i++ % b->opt.iterations] = t.loop_ns;
        *ret_ns = t.loop_ns + t.mount_ns;
        return 0;
}

static int step_raw_worker(Bench *b, void *userdata, uint64_t *ret_ns) {
        const int *fd = userdata;
        const char *what = NULL;
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_build_worker(b->opt.fstype, *fd, b->stage_dir, &what);
        if (r < 0)
                return step_failed(b, what, r);
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int step_probe_worker(Bench *b, void *userdata, uint64_t *ret_ns) {
        const int *fd = userdata;
        const char *what = NULL;
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_probe_worker(b->opt.fstype, *fd, &what);
        if (r < 0)
                return step_failed(b, what, r);
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int step_find_backing(Bench *b, void *userdata, uint64_t *ret_ns) {
        const int *fd = userdata;
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_find_backing(*fd);
        if (r < 0)
                return step_failed(b, "loop_find_backing", r);
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int step_fork(Bench *b, void *userdata, uint64_t *ret_ns) {
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_fork_exit();
        if (r < 0)
                return step_failed(b, "fork", r);
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int step_probe(Bench *b, void *userdata, uint64_t *ret_ns) {
        const int *fd = userdata;
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_probe(*fd, b->opt.fstype);
        if (r < 0)
                return step_failed(b, "libblkid probe", r);
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int measure_raw(Bench *b) {
        Report *rep = &b->report;
        g_autofree uint64_t *loop_ns = g_new0(uint64_t, b->opt.iterations);
        g_autofree char *device = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = open(b->images[0], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return step_failed(b, b->images[0], -errno);

        r = harness_loop_attach(b->images[0], true, &device);
        if (r < 0)
                return step_failed(b, "attaching the image", r);
        r = measure(b, "raw: fsmount, loop device attached once", step_raw_device, device,
                    &rep->raw_device);
        (void) harness_loop_detach(device);
        if (r < 0)
                return r;

        ImageStep s = { .fd = fd, .loop_ns = loop_ns };
        r = measure(b, "raw: fresh loop device + fsmount", step_raw_image, &s, &rep->raw_image);
        if (r < 0)
                return r;
        rep->raw_loop.name = "  of which loop attach";
        stats_summarize(loop_ns, b->opt.iterations, &rep->raw_loop.s);

        r = measure(b, "raw: daemon's build worker, no bus", step_raw_worker, &fd,
                    &rep->raw_worker);
        if (r < 0)
                return r;
        r = measure(b, "daemon's probe worker, no bus", step_probe_worker, &fd,
                    &rep->probe_worker);
        if (r < 0)
                return r;
        r = measure(b, "fork + exit + reap of a child", step_fork, NULL, &rep->fork_exit);
        if (r < 0)
                return r;
        r = measure(b, "loop device scan (loop_find_backing)", step_find_backing, &fd,
                    &rep->find_backing);
        if (r < 0)
                return r;
        return measure(b, "libblkid probe of the image", step_probe, &fd, &rep->probe);
}

/* ---------------------------------------------------------------------------------- */
/* Through the daemon                                                                 */

static double cpu_of(pid_t pid, bool children) {
        double ms = 0;

        if (pid > 0)
                (void) proc_cpu_ms(pid, children, &ms);
        return ms;
}

static void cpu_snap(const Bench *b, CpuSnap *ret) {
        *ret = (CpuSnap) {
                .daemon = cpu_of(b->daemon_pid, true),
                .polkit = cpu_of(b->polkit_pid, false),
                .bus = cpu_of(b->bus_pid, false),
        };
        (void) proc_machine_busy_ms(&ret->machine);
}

/* (after - before) / n into *ret. */
static void cpu_per_request(const CpuSnap *before, const CpuSnap *after, unsigned n,
                            CpuSnap *ret) {
        double d = MAX(n, 1u);

        *ret = (CpuSnap) {
                .daemon = (after->daemon - before->daemon) / d,
                .polkit = (after->polkit - before->polkit) / d,
                .bus = (after->bus - before->bus) / d,
                .machine = (after->machine - before->machine) / d,
        };
}

static void note_client_failure(Bench *b, const ClientResult *res, int status) {
        if (b->report.error[0])
                return;
        if (res->failed)
                snprintf(b->report.error, sizeof(b->report.error), "%s", res->error);
        else
                snprintf(b->report.error, sizeof(b->report.error),
                         "a client ended with status %d (125: the harness could not set it up)",
                         status);
}

/* One unprivileged client doing job from start to end: its latencies in row. */
static int run_one_client(Bench *b, ClientMode mode, const char *name, Row *row,
                          CpuSnap *ret_cpu) {
        unsigned n = b->opt.iterations;
        ClientResult *res = shared_alloc(sizeof(ClientResult) + n * sizeof(uint64_t));
        ClientJob job = {
                .mode = mode,
                .image = b->images[0],
                .fstype = b->opt.fstype,
                .warmup = warmup_of(&b->opt),
                .count = n,
        };
        CpuSnap before, after;
        int status;

        if (!res)
                return step_failed(b, "mmap", -errno);
        job.result = res;
        job.latency_ns = (uint64_t *) (res + 1);
        cpu_snap(b, &before);
        status = harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, client_main, &job, NULL);
        cpu_snap(b, &after);
        /* Warm-up included: the CPU counters cannot tell the requests apart. */
        if (ret_cpu)
                cpu_per_request(&before, &after, n + job.warmup, ret_cpu);
        if (status != 0 || res->n_done != n) {
                note_client_failure(b, res, status);
                (void) munmap(res, sizeof(ClientResult) + n * sizeof(uint64_t));
                return -EIO;
        }
        row->name = name;
        stats_summarize(job.latency_ns, n, &row->s);
        (void) munmap(res, sizeof(ClientResult) + n * sizeof(uint64_t));
        return 0;
}

/* polkitd's answer for a connected, unprivileged client, asked as the daemon asks. */
static int measure_polkit(Bench *b) {
        g_autoptr(HarnessCaller) caller = NULL;
        g_autofree char *line = NULL;
        g_autofree uint64_t *ns = g_new0(uint64_t, b->opt.iterations);
        ClientResult *res = shared_alloc(sizeof(ClientResult));
        ClientJob job = { .mode = CLIENT_HOLD, .result = res };
        const char *const details[] = {
                "device", b->images[0], "fstype", b->opt.fstype, "label", "bench", "uuid", "",
                "read-only", "true", "exec", "false", "idmap", "none", "target", "",
                "options", "", NULL,
        };
        unsigned warm = warmup_of(&b->opt);
        int r;

        if (!res)
                return step_failed(b, "mmap", -errno);
        r = harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, client_main, &job,
                                 &caller);
        if (r >= 0)
                r = harness_caller_read_line(caller, HARNESS_TIMEOUT_MS, &line);
        if (r < 0 || !g_str_has_prefix(line, "name=")) {
                (void) munmap(res, sizeof(ClientResult));
                return step_failed(b, "starting the polkit subject", r < 0 ? r : -EPROTO);
        }
        for (unsigned i = 0; i < warm + b->opt.iterations; i++) {
                HarnessAuthorization auth = {};
                uint64_t t0 = stats_now_ns();

                r = harness_polkit_check(line + 5, "org.freedesktop.usermount1.mount-image",
                                         details, false, &auth);
                if (r >= 0 && !auth.is_authorized)
                        r = -EACCES;
                if (r < 0)
                        break;
                if (i >= warm)
                        ns[i - warm] = stats_now_ns() - t0;
        }
        (void) harness_caller_release(caller);
        (void) harness_caller_wait(caller, HARNESS_TIMEOUT_MS, NULL);
        (void) munmap(res, sizeof(ClientResult));
        if (r < 0)
                return step_failed(b, "polkit CheckAuthorization", r);
        b->report.polkit.name = "polkit CheckAuthorization (rule: YES)";
        stats_summarize(ns, b->opt.iterations, &b->report.polkit.s);
        return 0;
}

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
                        note_client_failure(b, results[i], status);
                        r = -EIO;
                }
        }
        return r < 0 ? r : 0;
}

static int measure_concurrency(Bench *b, unsigned n, ConcurrencyRun *ret) {
        unsigned m = b->opt.requests;
        size_t slot = sizeof(ClientResult) + m * sizeof(uint64_t), size = slot * n;
        g_autofree HarnessCaller **callers = g_new0(HarnessCaller *, n);
        g_autofree ClientResult **results = g_new0(ClientResult *, n);
        g_autofree ClientJob *jobs = g_new0(ClientJob, n);
        g_autofree uint64_t *all = g_new0(uint64_t, (size_t) n * m);
        uint8_t *mem = shared_alloc(size);
        uint64_t start = UINT64_MAX, end = 0;
        CpuSnap before, after;
        int r = 0;

        if (!mem)
                return step_failed(b, "mmap", -errno);
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
                        (void) step_failed(b, "starting a client", r);
        }
        cpu_snap(b, &before);
        if (r >= 0)
                r = drive_clients(b, callers, results, n);
        cpu_snap(b, &after);
        for (unsigned i = 0; i < n; i++)
                harness_caller_free(callers[i]);

        *ret = (ConcurrencyRun) { .clients = n };
        for (unsigned i = 0; i < n && r >= 0; i++) {
                memcpy(all + ret->requests, results[i] + 1, results[i]->n_done * sizeof(uint64_t));
                ret->requests += results[i]->n_done;
                start = MIN(start, results[i]->start_ns);
                end = MAX(end, results[i]->end_ns);
        }
        cpu_per_request(&before, &after, ret->requests, &ret->cpu);
        if (r >= 0 && end > start)
                ret->per_second = (double) ret->requests * 1e9 / (double) (end - start);
        stats_summarize(all, ret->requests, &ret->s);
        (void) munmap(mem, size);
        return r;
}

static int measure_daemon(Bench *b) {
        Report *rep = &b->report;
        int r;

        r = run_one_client(b, CLIENT_BUS_PING, "bus round trip to the daemon (Get)",
                           &rep->bus_ping, NULL);
        if (r < 0)
                return r;
        r = measure_polkit(b);
        if (r < 0)
                return r;
        r = run_one_client(b, CLIENT_OPEN_MOUNT, "OpenMount, caller: send to fd received",
                           &rep->broker, &rep->broker_cpu);
        if (r < 0)
                return r;
        for (size_t i = 0; i < b->opt.n_clients; i++) {
                r = measure_concurrency(b, b->opt.clients[i], &rep->runs[i]);
                rep->n_runs = i + 1;
                if (r < 0)
                        return r;
        }
        return 0;
}

/* After the runs: the daemon back where it started (fds, loop devices, mounts). */
static void measure_after(Bench *b) {
        Report *rep = &b->report;

        rep->settled = harness_wait_snapshot(b->daemon_pid, &b->baseline, 20000) >= 0;
        rep->fds_after = harness_count_fds(b->daemon_pid);
        (void) proc_status_kib(b->daemon_pid, "VmHWM", &rep->hwm_end_kib);
        (void) proc_status_kib(b->daemon_pid, "VmRSS", &rep->rss_end_kib);
}

/* ---------------------------------------------------------------------------------- */
/* The table                                                                          */

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

static void print_header(const Bench *b) {
        struct utsname u = {};

        (void) uname(&u);
        printf("usermount benchmark: %s image, %u timed iterations (+%u warm-up), "
               "%u requests per client\n", b->opt.fstype, b->opt.iterations, warmup_of(&b->opt),
               b->opt.requests);
        printf("machine: Linux %s, %ld CPUs; caller uid %u, polkit rule YES for mount-image\n\n",
               u.release, sysconf(_SC_NPROCESSORS_ONLN), (unsigned) HARNESS_UID_USER1);
        printf("  %-42s %6s %8s %8s %8s %8s %8s\n", "latency (ms)", "n", "p50", "p90", "p99",
               "max", "mean");
}

static void print_latency(const Report *rep) {
        const Row *const rows[] = {
                &rep->raw_device, &rep->raw_image, &rep->raw_loop, &rep->raw_worker,
                &rep->broker,
        };
        const Row *const pieces[] = {
                &rep->probe_worker, &rep->fork_exit, &rep->find_backing, &rep->probe,
                &rep->bus_ping, &rep->polkit,
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                print_row(rows[i]);
        printf("  pieces of a request:\n");
        for (size_t i = 0; i < ELEMENTSOF(pieces); i++)
                print_row(pieces[i]);
        if (!rep->broker.name || !rep->raw_image.name)
                return;

        double ovh = stats_ms(rep->broker.s.p50_ns) - stats_ms(rep->raw_image.s.p50_ns);
        double ovh_dev = stats_ms(rep->broker.s.p50_ns) - stats_ms(rep->raw_device.s.p50_ns);
        double tail = (double) rep->broker.s.p99_ns / (double) MAX(rep->broker.s.p50_ns, 1);

        printf("\n  broker overhead at p50 over the fair raw path (fresh loop + fsmount): "
               "%.3f ms, ratio %.2fx\n", ovh,
               (double) rep->broker.s.p50_ns / (double) MAX(rep->raw_image.s.p50_ns, 1));
        printf("  broker overhead at p50 over fsmount on a loop attached once: %.3f ms, "
               "ratio %.2fx\n", ovh_dev,
               (double) rep->broker.s.p50_ns / (double) MAX(rep->raw_device.s.p50_ns, 1));
        printf("  target overhead < 2 ms: %s; target p99 < 3x p50 (%.2fx): %s\n",
               verdict(ovh < 2.0), tail, verdict(tail < 3.0));
        printf("  CPU per OpenMount (ms, 10 ms clock ticks averaged): daemon + workers %.2f, "
               "polkitd %.2f, dbus-daemon %.2f, whole machine %.2f\n", rep->broker_cpu.daemon,
               rep->broker_cpu.polkit, rep->broker_cpu.bus, rep->broker_cpu.machine);
}

/* "Per request" two ways: the latency a client sees, and the machine's time per request
 * (the run's wall time over the requests served, 1 / throughput). With more clients than
 * CPUs the first grows with the queue by necessity; the second says whether the daemon
 * gets slower per request when busy, which is what the design's target is about. */
static void print_concurrency(const Report *rep) {
        const ConcurrencyRun *first = &rep->runs[0], *last;
        double wall_ratio, lat_ratio;

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
                       (double) c->s.mean_ns / (double) MAX(first->s.mean_ns, 1),
                       c->cpu.machine);
        }
        printf("  (cpu ms: the whole machine's busy CPU time per request, clients included)\n");
        last = &rep->runs[rep->n_runs - 1];
        wall_ratio = first->per_second / MAX(last->per_second, 1e-9);
        lat_ratio = (double) last->s.mean_ns / (double) MAX(first->s.mean_ns, 1);
        printf("  target %u clients not slower per request than 2x %u: ms/req %.2fx: %s; "
               "latency a client sees %.2fx: %s\n", last->clients, first->clients, wall_ratio,
               verdict(wall_ratio < 2.0), lat_ratio, verdict(lat_ratio < 2.0));
}

static void print_daemon(const Report *rep) {
        printf("\n  daemon (main process)\n");
        printf("  %-42s %8.2f MiB (target < 4 MiB: %s)\n", "RSS idle after start",
               (double) rep->rss_idle_kib / 1024.0, verdict(rep->rss_idle_kib < 4096));
        printf("  %-42s %8.2f MiB\n", "RSS peak sampled during the runs",
               (double) rep->rss_peak_kib / 1024.0);
        printf("  %-42s %8.2f MiB\n", "VmHWM at the end", (double) rep->hwm_end_kib / 1024.0);
        printf("  %-42s %8.2f MiB\n", "RSS at the end", (double) rep->rss_end_kib / 1024.0);
        printf("  %-42s %8u (with %u clients)\n", "workers at once, peak sampled",
               rep->peak_workers, rep->peak_workers_clients);
        printf("  %-42s %8d / %d%s\n", "fds before / after", rep->fds_before, rep->fds_after,
               rep->settled ? "" : "  (NOT back to the start: fds, loop devices or mounts left)");
}

static void print_report(const Bench *b) {
        print_header(b);
        print_latency(&b->report);
        print_concurrency(&b->report);
        print_daemon(&b->report);
        fflush(stdout);
}

/* ---------------------------------------------------------------------------------- */

static void bench_done(Bench *b) {
        g_strfreev(b->images);
        g_free(b->stage_dir);
}

int main(int argc, char *argv[]) {
        /* The figures are the daemon's: udevd probing each new loop device would add its
         * own work to both sides, differently from run to run. */
        static const HarnessOptions harness_options = { .without_udevd = true };
        _cleanup_(bench_done) Bench b = {};
        int r;

        r = parse_argv(argc, argv, &b.opt);
        if (r != 0)
                return r > 0 ? EXIT_SUCCESS : EXIT_SETUP;

        r = harness_init(&harness_options);
        if (r == -EPERM) {
                fprintf(stderr, "bench: mounts real filesystems and needs root.\n");
                return EXIT_SKIP;
        }
        if (r < 0) {
                fprintf(stderr, "bench: the harness failed: %s\n", strerror(-r));
                return EXIT_SETUP;
        }
        if (bench_setup(&b) < 0)
                return EXIT_SETUP;

        r = measure_raw(&b);
        if (r >= 0)
                r = measure_daemon(&b);
        measure_after(&b);
        print_report(&b);
        if (r < 0) {
                fprintf(stderr, "bench: a request failed: %s\n",
                        b.report.error[0] ? b.report.error : strerror(-r));
                printf("\nFAILED: %s\n", b.report.error[0] ? b.report.error : strerror(-r));
                return EXIT_REQUEST_FAILED;
        }
        return EXIT_SUCCESS;
}
