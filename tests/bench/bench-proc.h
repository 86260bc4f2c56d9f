/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the benchmark reads about the daemon from /proc: memory, CPU time, worker
 * processes, its mount namespace. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A "Key:  N kB" line of /proc/<pid>/status (e.g. "VmRSS", "VmHWM") in KiB. -ENOENT when
 * the line is missing, -errno when the file cannot be read. */
int proc_status_kib(pid_t pid, const char *key, uint64_t *ret_kib);

/* The number of direct children of pid (its workers, for the daemon), from
 * /proc/<pid>/task/<pid>/children. */
int proc_count_children(pid_t pid, unsigned *ret_n);

/* CPU time (user + system) pid has used itself, and that of the children it has reaped
 * (for the daemon: its workers, once they exited), in ms. From /proc/<pid>/stat, in
 * clock ticks. */
int proc_cpu_ms(pid_t pid, double *ret_self_ms, double *ret_children_ms);

/* CPU time the whole machine has spent busy (not idle, not waiting for I/O), in ms,
 * summed over CPUs, from /proc/stat. */
int proc_machine_busy_ms(double *ret_ms);

/* A direct child of parent whose command name (comm) is comm: 0 and *ret_pid, -ESRCH. */
int proc_find_child(pid_t parent, const char *comm, pid_t *ret_pid);

/* The number of mounts in pid's mount namespace (lines of /proc/<pid>/mountinfo), or
 * -errno. */
int proc_count_mounts(pid_t pid);

/* 1 when pid is in this process's mount namespace, 0 when not, -errno. */
int proc_same_mount_ns(pid_t pid);

/* The running processes (not zombies) whose real uid is in [first, first + count), as
 * this process's user namespace sees them, among those of the cgroup2 directory cgroup
 * (NULL: of the whole machine): how many, and the highest pid among them. For the
 * userspace drivers of one daemon, each of which runs as a uid of DriverUidRange=. */
typedef struct ProcUidScan {
        unsigned alive;
        pid_t alive_pid;
} ProcUidScan;

int proc_scan_uids(const char *cgroup, uid_t first, unsigned count, ProcUidScan *ret);
