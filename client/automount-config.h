/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The settings of usermount automount: what to leave alone (by label, UUID or filesystem
 * type), how to mount (read-only, id-mapping) and whether to send desktop notifications;
 * read from the user's automount.conf and from the command line, which wins.
 *
 * The file (automount.conf(5) in usermount(1)), ini format, one section:
 *
 *         [Automount]
 *         IgnoreLabel=Backup disk
 *         IgnoreUUID=1234-ABCD 2f6b9a4e-1d3c-4e8a-9b7f-0c5d6e7f8a91
 *         IgnoreFilesystemType=ntfs vfat
 *         ReadOnly=no
 *         IdMap=none
 *         Notify=yes
 *
 * IgnoreLabel= takes one label, as it is (spaces kept); IgnoreUUID= (any case) and
 * IgnoreFilesystemType= (types as blkid names them) take several, separated by spaces.
 * Booleans are yes/no, true/false, on/off or 1/0; IdMap= is none or user. Lines starting
 * with '#' or ';' are comments (a '#' later in a line is part of the value: labels may
 * have one). The Ignore keys may be repeated and add up; the others may be given once.
 * Anything else is an error, reported with the file's name and the line: the file is
 * never half applied.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct StrList {
        char **items; /* owned, each owned */
        size_t n;
} StrList;

typedef struct AutomountConfig {
        StrList ignore_labels;
        StrList ignore_uuids;
        StrList ignore_fstypes;
        int read_only; /* -1: not set (no), 0, 1 */
        int idmap_user; /* -1: not set (none), 0: none, 1: user */
        int notify;    /* -1: not set (yes), 0, 1 */
} AutomountConfig;

#define AUTOMOUNT_CONFIG_INIT                                                            \
        ((AutomountConfig) { .read_only = -1, .idmap_user = -1, .notify = -1 })

/* Frees what config owns and resets it to AUTOMOUNT_CONFIG_INIT. */
void automount_config_done(AutomountConfig *config);

/* Appends a copy of s to l. Returns 0 or -ENOMEM. */
int strlist_add(StrList *l, const char *s);

/* Whether config's list has s (compared with cmp, e.g. strcmp or strcasecmp). */
bool strlist_contains(const StrList *l, const char *s, int (*cmp)(const char *, const char *));


/* Parses an id-mapping ("none" or "user"): 0 or 1, -EINVAL for anything else. */
int automount_parse_idmap(const char *s);

/*
 * Reads the settings of f (name: what messages call it) into *config, which is reset
 * first. Returns 0, -EINVAL with *ret_error set to "NAME:LINE: what is wrong" (owned) for
 * the first problem, or -ENOMEM. On failure *config is left reset.
 */
int automount_config_parse(FILE *f, const char *name, AutomountConfig *config,
                           char **ret_error);

/*
 * Loads path like automount_config_parse(). -ENOENT when there is no such file, which is
 * not an error for the default path; other errors of open() as -errno.
 */
int automount_config_load(const char *path, AutomountConfig *config, char **ret_error);

/*
 * The default path: $XDG_CONFIG_HOME/usermount/automount.conf if that variable is an
 * absolute path, else $HOME/.config/usermount/automount.conf, else the home directory of
 * the passwd entry. Returns 0 or -errno (-ENXIO: no home directory); *ret owned.
 */
int automount_config_default_path(char **ret);

/*
 * Applies the command line to the file's settings: set scalars of options replace those of
 * config; the Ignore lists of options are added. Returns 0 or -ENOMEM.
 */
int automount_config_merge(AutomountConfig *config, const AutomountConfig *options);

/*
 * Why config says to leave a filesystem alone: "label", "UUID" or "filesystem type" (the
 * setting that matched), or NULL to mount it. Any argument may be NULL.
 */
const char *automount_config_ignores(const AutomountConfig *config, const char *label,
                                     const char *uuid, const char *fstype);
