/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount, the command-line client of usermountd: global options, the list of commands,
 * and dispatch to the command's own parser (cmd-*.c).
 *
 * The client is an ordinary, unprivileged program: it runs with the caller's own rights,
 * and usermountd trusts nothing it says about itself (the caller's identity comes from
 * the bus). A hostile environment therefore cannot make the daemon do anything, and the
 * client does not let the environment steer it either (docs/security.md, class 30): it
 * never reads LIBMOUNT_* (it does not use libmount at all), does nothing with PATH (the
 * one program it runs, pkttyagent, is run by absolute path), and parses its command line
 * the same way whatever POSIXLY_CORRECT says. It reads no variable itself; sd-bus finds the
 * system bus through DBUS_SYSTEM_BUS_ADDRESS, and whatever that points at can deceive only the
 * caller, and libc's localtime_r() reads TZ for the times 'usermount list' shows, which is the
 * caller's choice to make. It never calls setlocale(): the LC_* variables change nothing.
 */
#include <getopt.h>
#include <stdio.h>

#include "config.h"
#include "output.h"
#include "cli.h"

bool arg_ask_password = true;

typedef struct Verb {
        const char *name;
        int (*run)(int argc, char *argv[]);
} Verb;

static const Verb verbs[] = {
        { "mount", verb_mount },
        { "unmount", verb_unmount },
        { "list", verb_list },
        { "monitor", verb_monitor },
        { "probe", verb_probe },
        { "automount", verb_automount },
};

static void help(void) {
        printf("Usage: usermount [OPTIONS] COMMAND [ARGUMENTS...]\n"
               "\n"
               "Mount filesystems with backing store, such as disk images and USB sticks,\n"
               "without being root: usermountd, a service on the system bus, checks the request,\n"
               "asks polkit whether you may make it, and mounts with nodev, nosuid and noexec\n"
               "set and locked, so that the mount can never be used to gain privilege.\n"
               "\n"
               "Commands:\n"
               "  mount [OPTIONS] SOURCE [TARGET]\n"
               "                     Mount the block device or image file SOURCE at the\n"
               "                     directory TARGET, or under /run/media/USER. Inside a\n"
               "                     user and mount namespace of your own, usermount attaches\n"
               "                     the mount itself, and TARGET is required.\n"
               "  mount --container=PID [OPTIONS] SOURCE TARGET\n"
               "                     From the host, mount SOURCE at TARGET inside the running\n"
               "                     container of process PID (rootless podman, unshare...).\n"
               "  unmount [OPTIONS] MOUNTPOINT|DEVICE|IMAGE\n"
               "                     Unmount a filesystem that usermountd mounted (or, with\n"
               "                     --container=PID, one mounted inside that container).\n"
               "  list [--json]      List the mounts usermountd keeps track of.\n"
               "  monitor [--json]   Print mounts and unmounts as they happen.\n"
               "  probe [--json] IMAGE|DEVICE\n"
               "                     Show the partition table of a disk image or device, to\n"
               "                     choose what mount --partition mounts.\n"
               "  automount [OPTIONS]\n"
               "                     Mount filesystems as their devices appear, under\n"
               "                     /run/media/USER, and say so on the desktop.\n"
               "See usermount COMMAND --help for each command's options and output.\n"
               "\n"
               "Options:\n"
               "  -h, --help         Show this help; after a command, show that command's help.\n"
               "      --version      Show the version of usermount.\n"
               "      --no-ask-password\n"
               "                     Do not ask for a password: when polkit wants you to\n"
               "                     authenticate, fail with exit status 3. May also be given\n"
               "                     after the command.\n"
               "\n"
               "Authentication:\n"
               "  When polkit allows a request only after you authenticate, and standard input\n"
               "  is a terminal, usermount runs polkit's text agent, /usr/bin/pkttyagent,\n"
               "  for the time of the request: it shows what is asked for and whose password\n"
               "  it wants (yours, or an administrator's), and reads the password on the\n"
               "  terminal, without echo. Without a terminal, or with --no-ask-password,\n"
               "  nothing is asked and the request fails with exit status 3; run usermount on\n"
               "  a terminal, or ask the administrator for a polkit rule that allows it\n"
               "  without a password. If pkttyagent is missing or does not start, usermount\n"
               "  says why and fails the same way.\n"
               "\n"
               "Exit status:\n"
               "  0  Success.\n"
               "  1  Failure not covered below.\n"
               "  2  Usage error: the command line is wrong, or for unmount, names a device or\n"
               "     image that is mounted at several places.\n"
               "  3  Not authorized: polkit refused, or wants a password that could not be\n"
               "     asked for (see Authentication), or the system bus denied the request.\n"
               "  4  Refused: the source cannot be opened or is not an image or block device,\n"
               "     or usermountd refused its filesystem type, an option or an argument.\n"
               "  5  The device is busy (mounted elsewhere, or in use as swap, RAID or LVM), or\n"
               "     the mount to unmount is busy (see unmount --force).\n"
               "  6  The mount cannot be attached: the target is missing, not an empty\n"
               "     directory you own, or a symbolic link, or this process does not\n"
               "     administer its mount namespace.\n"
               "  7  A limit of usermountd was reached (mounts, loop devices, requests).\n"
               "  8  usermountd cannot be reached: no system bus, usermountd not running\n"
               "     or not answering, or (monitor) the bus went away.\n"
               "  9  Nothing to unmount: usermountd has no mount there, or none you may see.\n"
               " 10  Authentication failed: polkit asked for a password, and it was wrong\n"
               "     or the prompt was cancelled.\n"
               "\n"
               "Environment:\n"
               "  DBUS_SYSTEM_BUS_ADDRESS\n"
               "                     The address of the system bus; default\n"
               "                     unix:path=/run/dbus/system_bus_socket.\n"
               "  usermount reads no LIBMOUNT_* variables, does not use PATH (it runs\n"
               "  pkttyagent by absolute path), and parses its command line the same way\n"
               "  whatever POSIXLY_CORRECT says. The environment cannot change what usermountd\n"
               "  allows. TZ sets the time zone of the times usermount list shows.\n"
               "\n"
               "Examples:\n"
               "  Mount a USB stick at /run/media/$USER/LABEL, look, and unmount it:\n"
               "    usermount mount /dev/sdb1\n"
               "    usermount list\n"
               "    usermount unmount /dev/sdb1\n"
               "\n"
               "  Mount a disk image read-only at a directory of your own:\n"
               "    usermount mount --read-only disk.img ~/disk\n"
               "\n"
               "  Give a running rootless podman container a disk image at /mnt inside it:\n"
               "    usermount mount --container=$(podman inspect -f '{{.State.Pid}}' box) \\\n"
               "            disk.img /mnt\n"
               "\n"
               "  Mount a disk image in a new user and mount namespace, with a shell in it:\n"
               "    unshare --user --map-root-user --mount\n"
               "    usermount mount disk.img /mnt\n"
               "    umount /mnt\n");
}

int usage_hint(const char *verb) {
        if (verb)
                fprintf(stderr, "See 'usermount %s --help'.\n", verb);
        else
                fputs("See 'usermount --help'.\n", stderr);
        return EXIT_STATUS_USAGE;
}

/*
 * Parses the options before the command. Returns 1 to run the command at argv[optind],
 * 0 when done (help or version shown), -EINVAL after printing a usage error.
 */
static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_NO_ASK_PASSWORD,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "no-ask-password", no_argument, NULL, ARG_NO_ASK_PASSWORD },
                {}
        };
        int c;

        /* '+': stop at the command, whose options are its own, whatever the environment. */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("usermount %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_NO_ASK_PASSWORD:
                        arg_ask_password = false;
                        break;
                default:
                        /* '?': getopt has said what was wrong. */
                        return -EINVAL;
                }
        }

        if (optind >= argc) {
                log_error("Missing command.");
                return -EINVAL;
        }
        return 1;
}

static const Verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

/* Flushes stdout; a help text or a result that could not be written is a failure. */
static int flush_stdout(int status) {
        if (fflush(stdout) != 0 || ferror(stdout)) {
                log_error_errno(errno ?: EIO, "Cannot write to standard output: %m");
                return status == EXIT_STATUS_OK ? EXIT_STATUS_FAILURE : status;
        }
        return status;
}

int main(int argc, char *argv[]) {
        const Verb *verb;
        int r;

        /* getopt prefixes its messages with argv[0]; make that the program's name. */
        if (argc > 0)
                argv[0] = (char *) "usermount";

        r = parse_argv(argc, argv);
        if (r < 0)
                return usage_hint(NULL);
        if (r == 0)
                return flush_stdout(EXIT_STATUS_OK);

        verb = find_verb(argv[optind]);
        if (!verb) {
                _cleanup_free_ char *e = output_escape(argv[optind]);

                log_error("Unknown command '%s'.", strempty(e));
                return usage_hint(NULL);
        }

        /*
         * The command sees its own argv; argv[0] is what getopt puts before its messages,
         * and stays the program's name like in ours.
         */
        argv[optind] = argv[0];
        return flush_stdout(verb->run(argc - optind, argv + optind));
}
