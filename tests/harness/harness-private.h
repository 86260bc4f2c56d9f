/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * State and helpers shared by the harness's modules (harness.c: lifecycle and services,
 * harness-bus.c: bus and polkit, harness-caller.c: unprivileged callers, harness-image.c:
 * images and loop devices, harness-leak.c: leak counts). Not for tests.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

#include "harness.h"

#define HARNESS_PROBE_ACTION "org.freedesktop.usermount1.harness-probe"
/* The identity of the rules probe's subject (harness-only, not for tests). */
#define HARNESS_PROBE_USER "umtestprobe"
#define HARNESS_UID_PROBE 61009

typedef struct Harness {
        bool initialized;
        bool attached;       /* a g_test subprocess using its parent's environment */
        pid_t test_pid;      /* the process that owns the environment (not callers) */
        char *tmpdir;
        dev_t run_dev;       /* st_dev of the private /run tmpfs */
        char *bus_address;
        char *bus_socket;
        bool etc_overlay;
        sd_bus *bus;
        int bus_fd;          /* closed in forked callers */
        unsigned rules_generation;
        HarnessCaller *probe;  /* the unprivileged polkit subject of the rules probe */
        char *probe_name;      /* its unique bus name */
        bool udevd;            /* a systemd-udevd of the harness runs */
        int host_mntns_fd;     /* the mount namespace the harness started in (janitor) */
        int machine_fd;        /* the run's claim of the machine (claim_machine() in harness.c) */
} Harness;

extern Harness harness;

/*
 * The lists of what the harness must release however the test ends (zram disks, cgroups,
 * directories made in /dev, processes to kill; and the loop devices there were before, so
 * that the free ones made since can be removed), one file each under the
 * private /run, so that the supervisor and the janitor, separate processes, find them.
 * The janitor reads them all into memory (harness_lists_keep()) before it leaves the
 * private namespaces, and the functions below read that copy from then on.
 */
#define HARNESS_LIST_KILL "kill-at-exit"
#define HARNESS_LIST_ZRAM "zram-devices"
#define HARNESS_LIST_CGROUPS "cgroups"
#define HARNESS_LIST_DEV_DIRS "udev-dev-dirs"
#define HARNESS_LIST_LOOPS_BEFORE "loop-devices-before"

/* The list's text, or NULL (none, or no harness). g_free() it. */
char *harness_list_read(const char *name);
/* Replaces the list's text. */
int harness_list_write(const char *name, const char *contents);
/* Appends one line. */
int harness_list_append(const char *name, const char *line);
void harness_list_remove(const char *name);
void harness_lists_keep(void);

/* Logs to stderr with a "harness: " prefix. */
void harness_log(const char *format, ...) G_GNUC_PRINTF(1, 2);

/* Forks and execs argv with the current environment, stdout sent to stderr, dying with
 * this process; keep_fd (or -1) stays open across exec under its own number. */
int harness_spawn(const char *const *argv, int keep_fd, pid_t *ret_pid, int *ret_pidfd);
/* Waits for a spawned process (pidfd) to exit within timeout_ms, SIGKILL after; reaps.
 * Returns 0 if it exited by itself, 1 if killed, -errno. */
int harness_reap(pid_t pid, int pidfd, int timeout_ms, int *ret_wait_status);
/* Writes value to a kernel attribute file (sysfs, cgroupfs) in one write(), as they
 * want it: not through a temporary file and a rename. */
int harness_write_attribute(const char *path, const char *value);
/* Runs argv to completion; its output goes to stderr only when it fails. */
int harness_run_command(const char *const *argv);

int harness_bus_open(void);
/* Waits until name is owned by pid (0: by anybody); pidfd (or -1) ends the wait early
 * when that process exits (-ESRCH). */
int harness_bus_wait_for_name(const char *name, pid_t pid, int pidfd, int timeout_ms);

/* Monotonic clock in milliseconds. */
int64_t harness_now_ms(void);

/* The loop devices the harness holds open (harness-image.c), released at teardown. */
void harness_loops_release(void);
/* Unmounts everything below dir in this mount namespace, deepest first. */
int harness_umount_below(const char *dir);
/* Detaches every loop device backed by a file on the private /run (after unmounting what
 * uses it in this namespace). Returns the number detached. */
int harness_detach_leftover_loops(void);
/* Removes zram disks made by harness_zram_new() and not freed; returns how many. */
int harness_release_leftover_zrams(void);
/* Notes the loop devices there are (before the test makes any). */
int harness_loops_note_existing(void);
/* Removes the free loop devices the test run made (harness_loop_reserve(), or the kernel
 * for LOOP_CTL_GET_FREE when none was free), waiting up to timeout_ms for those still
 * being released; returns how many. */
int harness_release_new_loops(int timeout_ms);

/* harness-udev.c: makes udevd's rules and its part of /dev private (before it starts),
 * and removes what was made on the host for that (after it stopped). */
int harness_udev_prepare(void);
void harness_udev_release(void);
/* The systemd-udevd binary, or NULL (g_free()). */
char *harness_udevd_path(void);
