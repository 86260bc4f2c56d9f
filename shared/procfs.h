/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What /proc says about a process: its ids, umask and groups from /proc/PID/status (the
 * one reader of that file for the daemon and its workers), and its start time from
 * /proc/PID/stat. A pid can be reused: callers that need "this very process" read these
 * while they hold a pidfd of it, and check it is still alive afterwards (caller.h).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* More groups than this are cut (the rest are not used: less access, never more). */
#define PROC_STATUS_GROUPS_MAX 1024

typedef struct ProcStatus {
        uid_t uids[4];   /* real, effective, saved, file system */
        gid_t gids[4];
        bool has_umask;  /* "Umask:" is there (Linux 4.7) */
        mode_t umask;
        size_t n_groups; /* supplementary groups, at most PROC_STATUS_GROUPS_MAX */
        gid_t groups[PROC_STATUS_GROUPS_MAX];
} ProcStatus;

/* Parses the text of a /proc/PID/status file into *ret. -EBADMSG without well-formed "Uid:"
 * and "Gid:" lines; Umask and Groups are optional. Pure. */
int proc_status_parse(const char *text, ProcStatus *ret);

/* Reads and parses an open /proc/PID/status from its start (pread: fd may be read again). */
int proc_status_read_fd(int fd, ProcStatus *ret);

/* Reads and parses /proc/<pid>/status; -ENOENT/-ESRCH when the process is gone. */
int proc_status_read(pid_t pid, ProcStatus *ret);

/* Whether the running kernel has a driver for fstype (built in or loaded), from
 * /proc/filesystems; true when that cannot be read (the mount attempt then says). */
bool proc_has_filesystem(const char *fstype);

/* Whether every uid of s (real, effective, saved, file system) is uid. */
bool proc_status_has_only_uid(const ProcStatus *s, uid_t uid);

/* The start time (field 22, clock ticks after boot, as polkit wants it) in the text of a
 * /proc/PID/stat file; -EBADMSG if malformed. Pure: the command name may hold anything. */
int proc_stat_parse_start_time(const char *text, uint64_t *ret);

/* The start time of process pid, from /proc/<pid>/stat. */
int proc_start_time(pid_t pid, uint64_t *ret);
