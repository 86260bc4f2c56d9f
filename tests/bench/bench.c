/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The usermount benchmark (issues 6, 13 and 14). In one run, on the same filesystem image,
 * it measures the latency of OpenMount as an unprivileged caller sees it (send to mount fd
 * received) against the raw in-process mount of that image, Unmount against the raw
 * umount2, OpenMount with more mounts in the namespace (bench-mounts.c), the throughput of
 * 1, 4, 16 and 64 concurrent clients (bench-concurrency.c), the kernel's drivers against
 * the userspace ones: latency, CPU and read throughput (bench-drivers.c), the CPU each
 * process spends per request, the daemon's memory, fds and worker pool (bench-pool.c),
 * and the pieces a request is made of (fork, probe, bus and polkit round trips with both
 * subjects (bench-polkit.c), the daemon's own build worker). It runs in the integration harness
 * (tests/harness): a private bus, the real polkitd with rules that say yes, the real
 * daemon with raised limits, real images on real loop devices, all in a private mount
 * namespace. The parts share the state in bench.h; bench-report.c prints the table.
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
#include <sys/stat.h>
#include <unistd.h>

#include "bench-concurrency.h"
#include "bench-drivers.h"
#include "bench-mounts.h"
#include "bench-polkit.h"
#include "bench-pool.h"
#include "bench-proc.h"
#include "bench-raw.h"
#include "bench-report.h"
#include "bench-unmount.h"
#include "bench.h"
#include "macro.h"

#define EXIT_REQUEST_FAILED 1
#define EXIT_SETUP 2
#define EXIT_SKIP 77


static const char bench_rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id == 'org.freedesktop.usermount1.mount-image' &&\n"
        "            subject.user == 'umtest1')\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---------------------------------------------------------------------------------- */
/* Options                                                                            */

static void help(void) {
        printf("bench [OPTIONS]\n\n"
               "Measures usermountd's OpenMount and Unmount against the raw mount and unmount of\n"
               "the same image, polkit with both subjects, OpenMount with more mounts in the\n"
               "namespace and under 1..64 concurrent clients, the CPU each process spends per\n"
               "request, kernel against userspace drivers (latency, CPU, read throughput),\n"
               "and the daemon's memory, fds and worker pool, in the integration\n"
               "harness (private bus, real polkitd and daemon, loop devices); prints the\n"
               "design's targets as met or MISSED. Needs root.\n\n"
               "  -h --help            show this help\n"
               "     --iterations=N    timed requests for the latency rows (default 200)\n"
               "     --requests=M      requests per client in the concurrency runs (default 20)\n"
               "     --clients=LIST    concurrency runs, comma-separated (default 1,4,16,64)\n"
               "     --mounts=LIST     extra mounts for the OpenMount runs that grow the mount\n"
               "                       table, ascending from 0 (default 0,500,2000; 0: none)\n"
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

/* Ascending counts from 0; "0" alone turns the runs off. */
static int parse_mounts(const char *s, Options *o) {
        g_auto(GStrv) items = g_strsplit(s, ",", -1);

        o->n_mounts = 0;
        for (size_t i = 0; items[i]; i++) {
                unsigned v = 0;

                if (o->n_mounts >= MAX_MOUNT_COUNTS)
                        return -E2BIG;
                if (i > 0 && parse_count(items[i], 100000, &v) < 0)
                        return -EINVAL;
                if ((i == 0 && !streq(items[i], "0")) || (i > 0 && v <= o->mounts[i - 1]))
                        return -EINVAL;
                o->mounts[o->n_mounts++] = v;
        }
        if (o->n_mounts == 1)
                o->n_mounts = 0;
        return 0;
}

/* 0 to go on, 1 after --help, -EINVAL after a message on stderr. */
static int parse_argv(int argc, char *argv[], Options *o) {
        enum { ARG_ITERATIONS = 0x100, ARG_REQUESTS, ARG_CLIENTS, ARG_MOUNTS, ARG_FSTYPE,
               ARG_QUICK };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "iterations", required_argument, NULL, ARG_ITERATIONS },
                { "requests", required_argument, NULL, ARG_REQUESTS },
                { "clients", required_argument, NULL, ARG_CLIENTS },
                { "mounts", required_argument, NULL, ARG_MOUNTS },
                { "fstype", required_argument, NULL, ARG_FSTYPE },
                { "quick", no_argument, NULL, ARG_QUICK },
                {},
        };
        bool iterations_set = false, requests_set = false;
        int c;

        *o = (Options) { .iterations = 200, .requests = 20, .clients = { 1, 4, 16, 64 },
                         .n_clients = 4, .mounts = { 0, 500, 2000 }, .n_mounts = 3,
                         .fstype = "ext4" };
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
                case ARG_MOUNTS:
                        if (parse_mounts(optarg, o) < 0)
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

static unsigned max_clients(const Options *o) {
        unsigned m = 1;

        for (size_t i = 0; i < o->n_clients; i++)
                m = MAX(m, o->clients[i]);
        return m;
}

/* ---------------------------------------------------------------------------------- */
/* Setup                                                                              */

/* Limits far above what the largest run needs: the bench measures, it does not test
 * refusals, and every client's request must be served. */
static int write_config(const Options *o, char **ret_path) {
        unsigned n = MAX(64u, 4 * max_clients(o));
        g_autofree char *path = g_build_filename(harness_tmpdir(), "bench.conf", NULL);
        /* The kernel's drivers, which the figures are about; requests for userspace ones
         * (the driver comparison) say driver=userspace. */
        g_autofree char *text = g_strdup_printf("[General]\nDriver=kernel\n[Limits]\n"
                                                "MaxRequests=%u\nMaxRequestsPerUser=%u\n"
                                                "MaxLoopDevices=%u\nMaxLoopDevicesPerUser=%u\n"
                                                "MaxDrivers=%u\nMaxDriversPerUser=%u\n"
                                                "MaxWorkers=%u\nMaxWorkersPerUser=%u\n",
                                                n, n, n, n, n, n, n, n);
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
        b->log_start = pool_log_start();
        const char *const args[] = { conf_arg, NULL };
        r = harness_start_daemon(harness_daemon_path(), args, &b->daemon_pid);
        if (r < 0) {
                fprintf(stderr, "bench: the daemon did not start: %s\n", strerror(-r));
                return r;
        }
        /* The daemon in a cgroup of its own, and with it what it starts from now on
         * (workers, the userspace drivers they start): its CPU, exited processes included,
         * to the microsecond. Without one, that figure is left out. */
        if (harness_cgroup_new("bench-daemon") >= 0 && harness_cgroup_move(b->daemon_pid) >= 0)
                b->cgroup = harness_cgroup_unified_dir();
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

static int step_raw_device(Bench *b, void *userdata, uint64_t *ret_ns) {
        const char *device = userdata, *what = NULL;
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_mount_device(b->opt.fstype, device, &what);
        if (r < 0)
                return bench_step_failed(b, what, r);
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
                return bench_step_failed(b, what, r);
        /* The warm-up iterations come first and are overwritten by the timed ones. */
        s->loop_ns[s->i++ % b->opt.iterations] = t.loop_ns;
        *ret_ns = t.loop_ns + t.mount_ns;
        return 0;
}

int bench_step_raw_worker(Bench *b, void *userdata, uint64_t *ret_ns) {
        const int *fd = userdata;
        const char *what = NULL;
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_build_worker(b->opt.fstype, *fd, b->stage_dir, &what);
        if (r < 0)
                return bench_step_failed(b, what, r);
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
                return bench_step_failed(b, what, r);
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int step_find_backing(Bench *b, void *userdata, uint64_t *ret_ns) {
        const int *fd = userdata;
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_find_backing(*fd);
        if (r < 0)
                return bench_step_failed(b, "loop_find_backing", r);
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int step_fork(Bench *b, void *userdata, uint64_t *ret_ns) {
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_fork_exit();
        if (r < 0)
                return bench_step_failed(b, "fork", r);
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int step_probe(Bench *b, void *userdata, uint64_t *ret_ns) {
        const int *fd = userdata;
        uint64_t t0 = stats_now_ns();
        int r;

        r = raw_probe(*fd, b->opt.fstype);
        if (r < 0)
                return bench_step_failed(b, "libblkid probe", r);
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
                return bench_step_failed(b, b->images[0], -errno);

        r = harness_loop_attach(b->images[0], true, &device);
        if (r < 0)
                return bench_step_failed(b, "attaching the image", r);
        r = bench_measure(b, "raw: fsmount, loop device attached once", step_raw_device, device,
                    &rep->raw_device);
        (void) harness_loop_detach(device);
        if (r < 0)
                return r;

        ImageStep s = { .fd = fd, .loop_ns = loop_ns };
        r = bench_measure(b, "raw: fresh loop device + fsmount", step_raw_image, &s, &rep->raw_image);
        if (r < 0)
                return r;
        rep->raw_loop.name = "  of which loop attach";
        stats_summarize(loop_ns, b->opt.iterations, &rep->raw_loop.s);

        r = bench_measure(b, "raw: daemon's build worker, no bus", bench_step_raw_worker, &fd,
                    &rep->raw_worker);
        if (r < 0)
                return r;
        r = bench_measure(b, "daemon's probe worker, no bus", step_probe_worker, &fd,
                    &rep->probe_worker);
        if (r < 0)
                return r;
        r = unmount_measure_raw(b);
        if (r < 0)
                return r;
        r = bench_measure(b, "fork + exit + reap of a child", step_fork, NULL, &rep->fork_exit);
        if (r < 0)
                return r;
        r = bench_measure(b, "loop device scan (loop_find_backing)", step_find_backing, &fd,
                    &rep->find_backing);
        if (r < 0)
                return r;
        return bench_measure(b, "libblkid probe of the image", step_probe, &fd, &rep->probe);
}

/* ---------------------------------------------------------------------------------- */
/* Through the daemon                                                                 */

static int measure_daemon(Bench *b) {
        Report *rep = &b->report;
        int r;

        r = bench_run_one_client(b, CLIENT_BUS_PING, "bus round trip to the daemon (Get)",
                                 &rep->bus_ping, NULL);
        if (r < 0)
                return r;
        r = polkit_measure(b);
        if (r < 0)
                return r;
        r = bench_run_one_client(b, CLIENT_OPEN_MOUNT, "OpenMount, caller: send to fd received",
                                 &rep->broker, &rep->broker_cpu);
        if (r < 0)
                return r;
        r = unmount_measure_daemon(b);
        if (r < 0)
                return r;
        r = mounts_measure(b);
        if (r < 0)
                return r;
        for (size_t i = 0; i < b->opt.n_clients; i++) {
                r = concurrency_measure(b, b->opt.clients[i], &rep->runs[i]);
                rep->n_runs = i + 1;
                if (r < 0)
                        return r;
        }
        return drivers_measure(b);
}

/* After the runs: the daemon back where it started (fds, loop devices, mounts); then it
 * is stopped, and what it logged at exit is read. */
static void measure_after(Bench *b) {
        Report *rep = &b->report;

        rep->settled = harness_wait_snapshot(b->daemon_pid, &b->baseline, 20000) >= 0;
        rep->fds_after = harness_count_fds(b->daemon_pid);
        (void) proc_status_kib(b->daemon_pid, "VmHWM", &rep->hwm_end_kib);
        (void) proc_status_kib(b->daemon_pid, "VmRSS", &rep->rss_end_kib);
        /* The pool counts are logged at exit. */
        (void) harness_stop_daemon(b->daemon_pid, NULL);
        pool_read(b->log_start, &rep->pool);
}

/* ---------------------------------------------------------------------------------- */

static void bench_done(Bench *b) {
        g_strfreev(b->images);
        g_free(b->stage_dir);
        g_free(b->cgroup);
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
        report_print(&b);
        if (r < 0) {
                fprintf(stderr, "bench: a request failed: %s\n",
                        b.report.error[0] ? b.report.error : strerror(-r));
                printf("\nFAILED: %s\n", b.report.error[0] ? b.report.error : strerror(-r));
                return EXIT_REQUEST_FAILED;
        }
        return EXIT_SUCCESS;
}
