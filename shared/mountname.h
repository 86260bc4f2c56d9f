/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names of the mount points usermountd makes: a directory name made safe from a device
 * label, and the default place <media_root>/<user>/<name>. Pure, and shared: the worker
 * makes the directory (attach.c), the daemon names it for polkit's "target" detail
 * (authdetails.c) without linking the namespace work.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct AttachRequest {
        int pidfd;              /* the caller; its mount namespace (and root) is used */
        uid_t uid;              /* the caller's uid (the target must be owned by it) */
        gid_t gid;
        const char *target;     /* absolute path in the caller's namespace, or NULL/"" */
        const char *media_root; /* default parent, e.g. "/run/media" */
        const char *user_name;  /* <media_root>/<user_name>/<name> */
        const char *label;      /* raw probed label, may be "" or hold anything */
        const char *uuid;       /* raw probed uuid, may be "" */
} AttachRequest;

/*
 * A safe directory name from a device label: valid UTF-8 only, no '/', nothing that
 * utf8_char_unsafe() names (controls, bidi and other invisible format characters), no
 * leading '.', not "." or "..", at most 64 bytes, with runs of
 * unsafe characters turned into '_'. Returns false (and leaves buf "") when nothing
 * usable remains. Pure.
 */
bool mountname_sanitize(const char *label, char *buf, size_t n);

/* The longest name mountname_sanitize() makes, in bytes. */
#define MOUNTNAME_MAX 64

/* The parts of the default mount point: the directory of the user (the user name if it is
 * one safely, else the uid) and the mount's (label, else uuid, else "disk", made safe). */
void mountname_user_dir(const AttachRequest *req, char *buf, size_t n);
void mountname_base(const AttachRequest *req, char *buf, size_t n);

/* Where attach_mount() puts a mount without a target, unless that name is taken (then a
 * "-2", "-3"... suffix follows): <media_root>/<user>/<name>. For polkit's "target" detail.
 * Pure. */
void mountname_default(const AttachRequest *req, char *buf, size_t n);
