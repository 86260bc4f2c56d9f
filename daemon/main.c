/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermountd: command line, capabilities, signals, and the Manager's event loop.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "conf.h"
#include "config.h"
#include "log.h"
#include "manager-dbus.h"
#include "manager.h"
#include "reconcile.h"
#include "request.h"
#include "service.h"
#include "udisks-front.h"

/*
 * What mounting for others needs: mounting and namespaces (SYS_ADMIN, SYS_CHROOT for
 * setns into a mount namespace), reading other users' /proc/PID/ns (SYS_PTRACE), walking
 * directories they own (DAC_OVERRIDE, which covers reading and searching too) and giving
 * the directories it makes to root or to them (CHOWN; it changes the mode and ACL of a
 * directory only once root owns it, so it needs no FOWNER), and writing the id maps of
 * user namespaces it builds (SETUID, SETGID); and for the sandbox of the image check
 * (fscheck.c), making its one device node (MKNOD) and locking its securebits before
 * dropping every capability (SETPCAP); and ending a userspace driver or an image check
 * that stopped answering (KILL: each runs as a uid of its own, which no other process may
 * signal). Everything else is dropped at start.
 */
static const cap_value_t kept_caps[] = {
        CAP_SYS_ADMIN, CAP_SYS_CHROOT, CAP_SYS_PTRACE, CAP_DAC_OVERRIDE, CAP_CHOWN,
        CAP_SETUID,    CAP_SETGID,     CAP_MKNOD,      CAP_SETPCAP,      CAP_KILL,
};

static int drop_capabilities(void) {
        cap_t caps;
        int r = 0;

        for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
                bool keep = false;

                for (size_t i = 0; i < ELEMENTSOF(kept_caps); i++)
                        keep = keep || kept_caps[i] == c;
                if (!keep && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return -errno;
        }

        caps = cap_init();
        if (!caps)
                return -ENOMEM;
        if (cap_set_flag(caps, CAP_PERMITTED, ELEMENTSOF(kept_caps), kept_caps, CAP_SET) < 0 ||
            cap_set_flag(caps, CAP_EFFECTIVE, ELEMENTSOF(kept_caps), kept_caps, CAP_SET) < 0 ||
            cap_set_proc(caps) < 0)
                r = -errno;
        cap_free(caps);
        return r;
}

/* The soft fd limit up to the hard one (the daemon polls, never select()s): the fds that
 * callers' messages bring and whose closes wait on a FUSE server stay open until their
 * server answers (busfds.h), and one user's must not use up the daemon's table. */
static void raise_fd_limit(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

/* --idle-timeout=SEC, --watch-interval=SEC: whole seconds, 0 to a day. */
static int parse_seconds(const char *s, uint64_t *ret_usec) {
        char *end;
        unsigned long long v;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != 0 || v > 24 * 3600)
                return -ERANGE;
        *ret_usec = (uint64_t) v * 1000000ULL;
        return 0;
}

static void help(void) {
        printf("Usage: usermountd [OPTIONS]\n"
               "\n"
               "The usermount daemon: mounts filesystems with backing store (USB sticks, disk\n"
               "images) for unprivileged users and user namespaces, on their request over the\n"
               "system bus (org.freedesktop.UserMount1), with polkit authorization and with\n"
               "nodev, nosuid and noexec locked on every mount.\n"
               "\n"
               "It is started by D-Bus activation or systemd; it must run as root.\n"
               "\n"
               "Usage: usermountd --check-config [FILE]\n"
               "\n"
               "Options:\n"
               "  -h, --help              show this help and exit\n"
               "      --version           show the version and exit\n"
               "      --config=FILE       read the configuration from FILE (default %s;\n"
               "                          without that file the built-in defaults apply)\n"
               "      --check-config      check FILE (default: the configuration file), print\n"
               "                          every error with its line number or the settings in\n"
               "                          effect, and exit: 0 valid, 1 invalid, 2 unreadable\n"
               "      --runtime-dir=DIR   root-only state directory (default %s)\n"
               "      --debug             log debug messages\n"
               "      --log-target=TARGET where to log: journal, stderr, or auto (default: the\n"
               "                          journal when stderr is connected to it)\n"
               "      --idle-timeout=SEC  exit after SEC seconds without requests, workers or\n"
               "                          registered mounts (D-Bus activation starts it again);\n"
               "                          0, the default, never exits when idle\n"
               "      --watch-interval=SEC\n"
               "                          check every SEC seconds whether registered mounts are\n"
               "                          still mounted and their devices still there (default\n"
               "                          2); 0: only on events (udev's device removals, changes\n"
               "                          of usermountd's own mount table)\n"
               "      --worker-pool=N     keep N workers (usermount-worker) started and ready,\n"
               "                          so that requests do not wait for one to start\n"
               "                          (default %u, at most %u; 0: start one per request)\n"
               "      --udisks2           also serve the UDisks2 API (org.freedesktop.UDisks2,\n"
               "                          on a connection of its own) in place of udisks2's\n"
               "                          udisksd, so that file managers and automounters mount\n"
               "                          through usermount; never exits when idle then\n"
               "\n"
               "Signals:\n"
               "  SIGHUP    read the configuration again; mounts and requests in flight are\n"
               "            kept, and a file with errors leaves the current settings in place\n"
               "  SIGTERM   exit; mounts stay, and are found again at the next start\n"
               "\n"
               "Environment:\n"
               "  DBUS_SYSTEM_BUS_ADDRESS  the system bus to serve (default: the standard one)\n"
               "  NOTIFY_SOCKET            where to report readiness and status (sd_notify)\n"
               "\n"
               "An annotated example configuration is in /usr/share/usermount/usermount.conf.\n",
               CONF_DEFAULT_PATH, USERMOUNT_RUNDIR, MANAGER_WORKER_POOL_SIZE,
               MANAGER_WORKER_POOL_MAX);
}

/* At exit: the requests in flight, then what they used. */
static void daemon_freep(Manager **m) {
        request_free_all(*m);
        if (*m)
                udisks_front_free((*m)->udisks);
        *m = manager_free(*m);
}

int main(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_RUNTIME_DIR,
                ARG_DEBUG,
                ARG_CONFIG,
                ARG_CHECK_CONFIG,
                ARG_LOG_TARGET,
                ARG_IDLE_TIMEOUT,
                ARG_WATCH_INTERVAL,
                ARG_WORKER_POOL,
                ARG_UDISKS2,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "runtime-dir", required_argument, NULL, ARG_RUNTIME_DIR },
                { "debug", no_argument, NULL, ARG_DEBUG },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
                { "log-target", required_argument, NULL, ARG_LOG_TARGET },
                { "idle-timeout", required_argument, NULL, ARG_IDLE_TIMEOUT },
                { "watch-interval", required_argument, NULL, ARG_WATCH_INTERVAL },
                { "worker-pool", required_argument, NULL, ARG_WORKER_POOL },
                { "udisks2", no_argument, NULL, ARG_UDISKS2 },
                {},
        };
        _cleanup_(daemon_freep) Manager *m = NULL;
        const char *runtime_dir = NULL, *conf_path = NULL;
        bool check_config = false, udisks2 = false;
        UDisksFront *udisks = NULL;
        uint64_t idle_timeout_usec = 0, watch_interval_usec = MANAGER_WATCH_INTERVAL_USEC;
        unsigned worker_pool = MANAGER_WORKER_POOL_SIZE;
        sigset_t mask;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return EXIT_SUCCESS;
                case ARG_VERSION:
                        printf("usermountd %s\n", PACKAGE_VERSION);
                        return EXIT_SUCCESS;
                case ARG_RUNTIME_DIR:
                        if (optarg[0] != '/') {
                                fprintf(stderr, "usermountd: --runtime-dir needs an absolute path.\n");
                                return 2;
                        }
                        runtime_dir = optarg;
                        break;
                case ARG_DEBUG:
                        log_set_max_level(LOG_LEVEL_DEBUG);
                        break;
                case ARG_CONFIG:
                        if (isempty(optarg)) {
                                fprintf(stderr, "usermountd: --config needs a file name.\n");
                                return 2;
                        }
                        conf_path = optarg;
                        break;
                case ARG_CHECK_CONFIG:
                        check_config = true;
                        break;
                case ARG_LOG_TARGET:
                        r = log_target_from_string(optarg);
                        if (r < 0) {
                                fprintf(stderr, "usermountd: --log-target takes journal, stderr "
                                                "or auto.\n");
                                return 2;
                        }
                        log_set_target(r);
                        break;
                case ARG_IDLE_TIMEOUT:
                        if (parse_seconds(optarg, &idle_timeout_usec) < 0) {
                                fprintf(stderr, "usermountd: --idle-timeout takes whole seconds, "
                                                "0 to 86400.\n");
                                return 2;
                        }
                        break;
                case ARG_WATCH_INTERVAL:
                        if (parse_seconds(optarg, &watch_interval_usec) < 0) {
                                fprintf(stderr, "usermountd: --watch-interval takes whole seconds, "
                                                "0 to 86400.\n");
                                return 2;
                        }
                        break;
                case ARG_WORKER_POOL: {
                        char *end;
                        unsigned long v;

                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno || end == optarg || *end || optarg[0] == '-' ||
                            v > MANAGER_WORKER_POOL_MAX) {
                                fprintf(stderr, "usermountd: --worker-pool takes a number of "
                                                "workers, 0 to %u.\n", MANAGER_WORKER_POOL_MAX);
                                return 2;
                        }
                        worker_pool = (unsigned) v;
                        break;
                }
                case ARG_UDISKS2:
                        udisks2 = true;
                        break;
                default:
                        fprintf(stderr, "Try 'usermountd --help'.\n");
                        return 2;
                }
        }
        if (check_config) {
                if (optind + 1 < argc) {
                        fprintf(stderr, "usermountd: --check-config takes one file. Try "
                                        "'usermountd --help'.\n");
                        return 2;
                }
                r = conf_check(optind < argc ? argv[optind] : conf_path, stdout);
                return r < 0 ? 2 : r;
        }
        if (optind < argc) {
                fprintf(stderr, "usermountd: unexpected argument '%s'. Try 'usermountd --help'.\n",
                        argv[optind]);
                return 2;
        }
        if (geteuid() != 0) {
                fprintf(stderr, "usermountd: must run as root (it mounts for other users).\n");
                return EXIT_FAILURE;
        }

        /* Workers are reaped by sd-event, and signals become events. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);

        r = drop_capabilities();
        if (r < 0) {
                log_error_errno(r, "Failed to drop capabilities: %m");
                return EXIT_FAILURE;
        }
        raise_fd_limit();

        r = manager_new(&m);
        if (r < 0) {
                log_error_errno(r, "Failed to set up: %m");
                return EXIT_FAILURE;
        }
        m->idle_timeout_usec = idle_timeout_usec;
        m->watch_interval_usec = watch_interval_usec;
        m->worker_pool_size = worker_pool;
        /* The default file may be absent (built-in defaults); one named on the command line
         * must exist. */
        r = manager_load_conf(m, conf_path ?: CONF_DEFAULT_PATH, !conf_path);
        if (r < 0)
                return EXIT_FAILURE;
        if (runtime_dir) {
                free(m->runtime_dir);
                m->runtime_dir = strdup(runtime_dir);
                if (!m->runtime_dir)
                        return EXIT_FAILURE;
        }
        r = manager_prepare_runtime_dir(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_start_workers(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_load_registry(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = reconcile_watch(m);
        if (r < 0) {
                log_error_errno(r, "Failed to watch the registered mounts: %m");
                return EXIT_FAILURE;
        }
        r = service_watch_signals(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_connect_bus(m);
        if (r < 0)
                return EXIT_FAILURE;
        if (udisks2) {
                /* Desktops watch the UDisks2 objects for as long as they run. */
                m->idle_timeout_usec = 0;
                r = udisks_front_start(m, &udisks);
                if (r < 0)
                        return EXIT_FAILURE;
        }
        r = service_run(m);
        return r < 0 ? EXIT_FAILURE : r;
}
