/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the commands of the usermount client share: the exit statuses (documented in
 * --help and stable, so that scripts can rely on them), the global arguments and the
 * entry point of each command.
 */
#pragma once

#include <stdbool.h>

typedef enum ExitStatus {
        EXIT_STATUS_OK = 0,
        EXIT_STATUS_FAILURE = 1,        /* anything not covered below */
        EXIT_STATUS_USAGE = 2,          /* bad command line */
        EXIT_STATUS_NOT_AUTHORIZED = 3, /* polkit or the bus said no */
        EXIT_STATUS_REFUSED = 4,        /* source, filesystem type, option or argument */
        EXIT_STATUS_BUSY = 5,           /* the device is in use */
        EXIT_STATUS_TARGET = 6,         /* the mount cannot be attached at the target */
        EXIT_STATUS_LIMIT = 7,          /* a limit of usermountd was reached */
        EXIT_STATUS_UNAVAILABLE = 8,    /* no system bus, or no usermountd on it */
        EXIT_STATUS_NOT_MOUNTED = 9,    /* unmount: nothing usermountd mounted is there */
        EXIT_STATUS_AUTH_FAILED = 10,   /* polkit asked for a password; authentication failed */
} ExitStatus;

/*
 * Whether polkit may ask for a password (params "interactive", org.freedesktop.UserMount1(5))
 * through pkttyagent on our terminal (auth-call.h); --no-ask-password clears it.
 */
extern bool arg_ask_password;

/*
 * Each command gets its own argv, argv[0] being the command's name, and returns an
 * ExitStatus after printing what went wrong (once, on stderr).
 */
int verb_mount(int argc, char *argv[]);
int verb_unmount(int argc, char *argv[]);
int verb_list(int argc, char *argv[]);
int verb_monitor(int argc, char *argv[]);
int verb_probe(int argc, char *argv[]);
int verb_automount(int argc, char *argv[]);

/*
 * The partition table of source (for messages), read from source_fd if >= 0 (through a
 * description of its own: its offset does not move), else from the file source names,
 * into *ret (parttable_read()). Prints what went wrong: EXIT_STATUS_REFUSED when the
 * source cannot be opened or read as a disk or has too many partitions.
 */
typedef struct PartTable PartTable;
ExitStatus probe_read_table(const char *source, int source_fd, PartTable *ret);

/* Prints "See 'usermount [COMMAND ]--help'." after a usage error; returns EXIT_STATUS_USAGE. */
int usage_hint(const char *verb);
