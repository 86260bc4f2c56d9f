/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount automount: a per-user automounter, as udiskie is for udisks2. It watches
 * udev for block devices that get a filesystem, asks usermountd to mount each at its
 * default mount point without interaction (polkit decides), and tells the user what
 * happened: when it mounted something, could not, or when a mount went away. --once
 * mounts what is there now and exits.
 *
 * This file is the command: its help, its command line and settings, and the event loop
 * (signals, udev's monitor) that drives the automounter (automount.c).
 *
 * It never unmounts anything when it stops: the user may be using what it mounted.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "automount.h"
#include "output.h"
#include "cli.h"

static void automount_help(void) {
        printf("Usage: usermount automount [OPTIONS]\n"
               "\n"
               "Mount filesystems as they appear, like a desktop does with USB sticks: watch udev\n"
               "for block devices that get a filesystem (ID_FS_USAGE=filesystem), and ask\n"
               "usermountd to mount each at its default mount point, /run/media/USER/NAME\n"
               "(NAME is the label, else the UUID), in this mount namespace. Devices already\n"
               "mounted, partition tables, swap, encrypted (LUKS) and RAID members, usermountd's\n"
               "own loop devices and devices udev marks UDISKS_IGNORE=1 are left alone. The\n"
               "filesystems present at start are mounted too.\n"
               "\n"
               "Nobody is asked for a password: polkit decides (by default, removable media of\n"
               "the active local session are allowed). A refused device is reported once and\n"
               "not tried again until it is plugged in again or gets a new filesystem; mount it\n"
               "yourself with usermount mount DEVICE. Refusals of devices that were there at\n"
               "start (mostly the machine's own disks) are logged without a notification. A\n"
               "mount that you unmount is not mounted again. When a device is pulled,\n"
               "usermountd takes its mount down itself.\n"
               "\n"
               "What happens is logged on standard error (the journal, under systemd) and, when a\n"
               "notification server (org.freedesktop.Notifications) is on the session bus, shown\n"
               "as a desktop notification: \"Mounted STICK at /run/media/alice/STICK\",\n"
               "\"STICK was removed\", \"STICK was unmounted\", \"Could not mount STICK\n"
               "(/dev/sdb1)\" with the reason.\n"
               "\n"
               "It runs until SIGTERM or SIGINT (exit status 0), and leaves what it mounted\n"
               "mounted: you may be using it. When the system bus or usermountd is not there, or\n"
               "goes away, it says so once and tries again, every 1 to 30 seconds; while it is\n"
               "running, usermountd stays too (automount subscribes to its signals). The\n"
               "systemd user unit usermount-automount.service runs it for your session:\n"
               "  systemctl --user enable --now usermount-automount.service\n"
               "\n"
               "Options:\n"
               "      --once             Mount the filesystems present now, print what was\n"
               "                         done on standard output, and exit.\n"
               "  -r, --read-only        Mount read-only.\n"
               "      --idmap=MAPPING    'user': the owner of the filesystem's root directory\n"
               "                         appears as you, all others as nobody. 'none' (the\n"
               "                         default): ask for no mapping, and get usermountd's\n"
               "                         default, which shows owners as stored where the root\n"
               "                         directory is yours, and maps it as 'user' otherwise.\n"
               "      --ignore-label=LABEL\n"
               "                         Leave filesystems labelled LABEL alone.\n"
               "      --ignore-uuid=UUID Leave the filesystem with this UUID alone (any case).\n"
               "      --ignore-fstype=TYPE\n"
               "                         Leave filesystems of type TYPE (ext4, vfat...) alone.\n"
               "                         The --ignore options may be repeated.\n"
               "      --no-notify        No desktop notifications, only the log.\n"
               "      --config=FILE      Read the settings from FILE instead of\n"
               "                         $XDG_CONFIG_HOME/usermount/automount.conf (by default\n"
               "                         ~/.config/usermount/automount.conf); FILE must exist.\n"
               "      --no-ask-password  Accepted, and changes nothing: automount never asks.\n"
               "  -h, --help             Show this help.\n"
               "\n"
               "Configuration file:\n"
               "  Optional; the options take precedence over it, and the --ignore options add\n"
               "  to its lists. A bad file is refused with its name and line (exit status 2).\n"
               "    [Automount]\n"
               "    IgnoreLabel=Backup disk        one label a line, spaces kept\n"
               "    IgnoreUUID=1234-ABCD           UUIDs, separated by spaces\n"
               "    IgnoreFilesystemType=ntfs      types, separated by spaces\n"
               "    ReadOnly=no                    yes or no\n"
               "    IdMap=none                     none or user\n"
               "    Notify=yes                     yes or no\n"
               "\n"
               "Environment:\n"
               "  XDG_CONFIG_HOME, HOME  Where the configuration file is.\n"
               "  DBUS_SESSION_BUS_ADDRESS\n"
               "                     The session bus for notifications (default\n"
               "                     $XDG_RUNTIME_DIR/bus).\n"
               "  DBUS_SYSTEM_BUS_ADDRESS\n"
               "                     The system bus, where usermountd is.\n"
               "\n"
               "Examples:\n"
               "  usermount automount\n"
               "  usermount automount --once --read-only\n"
               "  usermount automount --ignore-fstype=ntfs --ignore-label=BACKUP --idmap=user\n"
               "\n"
               "Exit status:\n"
               "  0  Stopped by SIGTERM or SIGINT; with --once: every filesystem found was\n"
               "     mounted, ignored or already mounted (or there was none).\n"
               "  1  With --once: at least one filesystem could not be mounted (each is\n"
               "     reported on standard error). Otherwise: udev cannot be watched.\n"
               "  2  Usage error: a bad option, or a bad configuration file.\n"
               "  8  With --once: usermountd cannot be reached.\n");
}

/* ---- Running ------------------------------------------------------------------------- */

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        /* Nothing is unmounted: the user may be using what we mounted. */
        return sd_event_exit(sd_event_source_get_event(s), EXIT_STATUS_OK);
}


/* --once: what is there now, then the exit status. */
static ExitStatus automount_run_once(Automount *a) {
        automount_try_connect(a);
        if (a->unavailable)
                return EXIT_STATUS_UNAVAILABLE;
        return a->n_failed > 0 ? EXIT_STATUS_FAILURE : EXIT_STATUS_OK;
}

static ExitStatus automount_run_loop(Automount *a) {
        sigset_t mask;
        int r;

        /* sd-event takes signals through a signalfd; they must not be delivered first. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
                log_error_errno(errno, "Cannot block SIGINT and SIGTERM: %m");
                return EXIT_STATUS_FAILURE;
        }
        r = sd_event_add_signal(a->event, NULL, SIGINT, on_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(a->event, NULL, SIGTERM, on_signal, NULL);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the event loop: %m");
                return EXIT_STATUS_FAILURE;
        }

        /* Watch before listing, so that nothing that comes in between is missed. */
        a->watch = (AutomountWatch) { .func = automount_on_device, .userdata = a };
        r = automount_udev_watch(a->event, &a->watch, &a->monitor);
        if (r < 0) {
                log_error_errno(r, "Cannot watch udev for block devices: %m");
                return EXIT_STATUS_FAILURE;
        }
        automount_try_connect(a);

        r = sd_event_loop(a->event);
        if (r < 0) {
                log_error_errno(r, "The event loop failed: %m");
                return EXIT_STATUS_FAILURE;
        }
        return r;
}

/* ---- The command line ---------------------------------------------------------------- */

typedef struct AutomountArgs {
        AutomountConfig options;
        const char *config_path; /* --config; NULL: the default path, which may be absent */
        bool once;
} AutomountArgs;

static int add_option_value(StrList *l, const char *option, const char *value) {
        if (isempty(value) || !output_utf8_is_valid(value)) {
                log_error("%s needs a value in UTF-8.", option);
                return -EINVAL;
        }
        return strlist_add(l, value);
}

/* Returns 1 to go on, 0 when help was shown, -EINVAL after a usage error, -ENOMEM. */
static int automount_parse_argv(int argc, char *argv[], AutomountArgs *args) {
        enum {
                ARG_ONCE = 0x100,
                ARG_IDMAP,
                ARG_IGNORE_LABEL,
                ARG_IGNORE_UUID,
                ARG_IGNORE_FSTYPE,
                ARG_NO_NOTIFY,
                ARG_CONFIG,
                ARG_NO_ASK_PASSWORD,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "once", no_argument, NULL, ARG_ONCE },
                { "read-only", no_argument, NULL, 'r' },
                { "idmap", required_argument, NULL, ARG_IDMAP },
                { "ignore-label", required_argument, NULL, ARG_IGNORE_LABEL },
                { "ignore-uuid", required_argument, NULL, ARG_IGNORE_UUID },
                { "ignore-fstype", required_argument, NULL, ARG_IGNORE_FSTYPE },
                { "no-notify", no_argument, NULL, ARG_NO_NOTIFY },
                { "config", required_argument, NULL, ARG_CONFIG },
                /* Accepted for symmetry with the other commands: automount never asks. */
                { "no-ask-password", no_argument, NULL, ARG_NO_ASK_PASSWORD },
                {}
        };
        AutomountConfig *o = &args->options;
        _cleanup_free_ char *e = NULL;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "-hr", options, NULL)) >= 0) {
                r = 0;
                switch (c) {
                case 'h':
                        automount_help();
                        return 0;
                case ARG_ONCE:
                        args->once = true;
                        break;
                case 'r':
                        o->read_only = 1;
                        break;
                case ARG_IDMAP:
                        o->idmap_user = automount_parse_idmap(optarg);
                        if (o->idmap_user < 0) {
                                e = output_escape(optarg);
                                log_error("--idmap needs 'none' or 'user', not '%s'.", strempty(e));
                                return -EINVAL;
                        }
                        break;
                case ARG_IGNORE_LABEL:
                        r = add_option_value(&o->ignore_labels, "--ignore-label", optarg);
                        break;
                case ARG_IGNORE_UUID:
                        r = add_option_value(&o->ignore_uuids, "--ignore-uuid", optarg);
                        break;
                case ARG_IGNORE_FSTYPE:
                        r = add_option_value(&o->ignore_fstypes, "--ignore-fstype", optarg);
                        break;
                case ARG_NO_NOTIFY:
                        o->notify = 0;
                        break;
                case ARG_CONFIG:
                        if (isempty(optarg)) {
                                log_error("--config needs a FILE.");
                                return -EINVAL;
                        }
                        args->config_path = optarg;
                        break;
                case ARG_NO_ASK_PASSWORD:
                        break;
                case 1:
                        e = output_escape(optarg);
                        log_error("automount takes no arguments, but '%s' was given.", strempty(e));
                        return -EINVAL;
                default:
                        return -EINVAL;
                }
                if (r < 0)
                        return r;
        }
        if (optind < argc) {
                e = output_escape(argv[optind]);
                log_error("automount takes no arguments, but '%s' was given.", strempty(e));
                return -EINVAL;
        }
        return 1;
}

/*
 * The settings in effect: the file (--config, or the default one if it exists) with the
 * options over it. Prints what is wrong; EXIT_STATUS_USAGE for a bad file.
 */
static ExitStatus automount_load_config(const AutomountArgs *args, AutomountConfig *ret) {
        _cleanup_free_ char *path = NULL, *error = NULL, *e = NULL;
        int r;

        if (args->config_path) {
                path = strdup(args->config_path);
                if (!path)
                        return log_error_errno(ENOMEM, "%m"), EXIT_STATUS_FAILURE;
        } else {
                r = automount_config_default_path(&path);
                if (r == -ENXIO)
                        path = NULL; /* no home: no file */
                else if (r < 0)
                        return log_error_errno(r, "Cannot find the configuration: %m"),
                               EXIT_STATUS_FAILURE;
        }
        if (path) {
                r = automount_config_load(path, ret, &error);
                e = output_escape(path);
                if (r == -EINVAL) {
                        /* error is escaped already. */
                        log_error("Bad configuration: %s", error);
                        return EXIT_STATUS_USAGE;
                }
                if (r == -ENOENT && !args->config_path)
                        r = 0;
                if (r < 0) {
                        log_error_errno(r, "Cannot read the configuration %s: %m", strempty(e));
                        return args->config_path ? EXIT_STATUS_USAGE : EXIT_STATUS_FAILURE;
                }
        }
        r = automount_config_merge(ret, &args->options);
        if (r < 0) {
                log_error_errno(r, "%m");
                return EXIT_STATUS_FAILURE;
        }
        return EXIT_STATUS_OK;
}

int verb_automount(int argc, char *argv[]) {
        AutomountArgs args = { .options = AUTOMOUNT_CONFIG_INIT };
        Automount a = { .config = AUTOMOUNT_CONFIG_INIT };
        ExitStatus status;
        int r;

        r = automount_parse_argv(argc, argv, &args);
        if (r == -ENOMEM)
                log_error_errno(ENOMEM, "%m");
        if (r < 0) {
                automount_config_done(&args.options);
                return r == -ENOMEM ? EXIT_STATUS_FAILURE : usage_hint("automount");
        }
        if (r == 0) {
                automount_config_done(&args.options);
                return EXIT_STATUS_OK;
        }

        status = automount_load_config(&args, &a.config);
        automount_config_done(&args.options);
        if (status != EXIT_STATUS_OK) {
                automount_done(&a);
                return status;
        }
        a.once = args.once;
        a.notifier.enabled = a.config.notify != 0;

        r = sd_event_new(&a.event);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the event loop: %m");
                automount_done(&a);
                return EXIT_STATUS_FAILURE;
        }
        status = a.once ? automount_run_once(&a) : automount_run_loop(&a);
        automount_done(&a);
        return status;
}
