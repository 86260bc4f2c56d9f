/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The userspace drivers usermountd started that still run (see drivertrack.h).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "drivertrack.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "procfs.h"

static void entry_done(DriverTrackEntry *e) {
        e->watch = sd_event_source_disable_unref(e->watch);
        e->conn_watch = sd_event_source_disable_unref(e->conn_watch);
        e->grace = sd_event_source_disable_unref(e->grace);
        e->pidfd = safe_close(e->pidfd);
        /* A dead driver's connection ends with our copy: its mount answers ENOTCONN. */
        e->conn_fd = safe_close(e->conn_fd);
}

static DriverTrackEntry *entry_of_source(DriverTrack *t, sd_event_source *s) {
        for (size_t i = 0; i < t->n_entries; i++)
                if (t->entries[i].watch == s || t->entries[i].conn_watch == s ||
                    t->entries[i].grace == s)
                        return &t->entries[i];
        return NULL;
}

static int on_grace_over(sd_event_source *s, uint64_t usec, void *userdata) {
        DriverTrackEntry *e = entry_of_source(userdata, s);

        if (!e)
                return 0;
        log_info("The userspace driver %d did not exit within %llu s after its mount was gone; "
                 "killing it.", (int) e->pid,
                 (unsigned long long) (DRIVERTRACK_GRACE_USEC / 1000000));
        (void) pidfd_send_signal(e->pidfd, SIGKILL, NULL, 0);
        e->grace = sd_event_source_disable_unref(e->grace);
        return 0;
}

/* The superblock is gone: a driver ends by itself now (its FUSE connection reads fail);
 * one that does not is killed after the grace time. */
static int on_conn_gone(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        DriverTrack *t = userdata;
        DriverTrackEntry *e = entry_of_source(t, s);

        if (!e)
                return 0;
        e->conn_watch = sd_event_source_disable_unref(e->conn_watch);
        e->conn_fd = safe_close(e->conn_fd);
        if (t->event && !e->grace)
                (void) sd_event_add_time_relative(t->event, &e->grace, CLOCK_MONOTONIC,
                                                  DRIVERTRACK_GRACE_USEC, 0, on_grace_over, t);
        return 0;
}

static size_t entry_find(const DriverTrack *t, pid_t pid, uint64_t start) {
        for (size_t i = 0; i < t->n_entries; i++)
                if (t->entries[i].pid == pid && t->entries[i].start == start)
                        return i;
        return SIZE_MAX;
}

static void entry_remove(DriverTrack *t, size_t i) {
        entry_done(&t->entries[i]);
        t->entries[i] = t->entries[--t->n_entries];
}

static int on_driver_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        DriverTrack *t = userdata;

        for (size_t i = 0; i < t->n_entries; i++) {
                if (t->entries[i].watch != s)
                        continue;
                pid_t pid = t->entries[i].pid;
                uint64_t start = t->entries[i].start;

                entry_remove(t, i);
                (void) drivertrack_save(t);
                if (t->on_exit)
                        t->on_exit(t, pid, start, t->userdata);
                break;
        }
        return 0;
}

/* Remembers an entry; takes pidfd and conn_fd. Does not save. */
static int entry_add(DriverTrack *t, pid_t pid, uint64_t start, uid_t owner, uid_t uid,
                     int pidfd, int conn_fd) {
        _cleanup_close_ int fd = pidfd, conn = conn_fd;
        DriverTrackEntry *e;
        int r;

        if (t->n_entries >= DRIVERTRACK_MAX)
                return -E2BIG;
        e = reallocarray(t->entries, t->n_entries + 1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        t->entries = e;
        e = &t->entries[t->n_entries];
        *e = (DriverTrackEntry) { .pid = pid, .start = start, .owner = owner, .uid = uid,
                                  .pidfd = -EBADF, .conn_fd = -EBADF };
        if (t->event) {
                r = sd_event_add_io(t->event, &e->watch, fd, EPOLLIN, on_driver_exit, t);
                /* No EPOLLIN: a connection is readable whenever a request waits for the
                 * driver; only its error (which epoll always reports) is of interest. */
                if (r >= 0 && conn >= 0)
                        r = sd_event_add_io(t->event, &e->conn_watch, conn, 0, on_conn_gone, t);
                /* A driver that holds no connection serves no mount: it is ended after the
                 * grace time, as one whose mount is gone (not one whose fds we could not
                 * look at: conn is another -errno then). */
                else if (r >= 0 && conn == -ENOENT)
                        r = sd_event_add_time_relative(t->event, &e->grace, CLOCK_MONOTONIC,
                                                       DRIVERTRACK_GRACE_USEC, 0, on_grace_over,
                                                       t);
                if (r < 0) {
                        entry_done(e);
                        return r;
                }
        }
        e->pidfd = TAKE_FD(fd);
        e->conn_fd = TAKE_FD(conn);
        t->n_entries++;
        return 0;
}

/* Whether the driver's fd n is /dev/fuse, asked without a look into the file's filesystem
 * (statx() through the magic link without a sync: a FUSE file does not ask its server,
 * and a copy of a file never needs closing here). */
static bool driver_fd_is_fuse(pid_t pid, int n) {
        char path[64];
        struct statx stx;

        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, n);
        return statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_TYPE, &stx) == 0 &&
               S_ISCHR(stx.stx_mode) && stx.stx_rdev_major == 10 && stx.stx_rdev_minor == 229;
}

/* A copy of the driver's fd n, which is /dev/fuse (driver_fd_is_fuse()). */
static int driver_fuse_fd(pid_t pid, int pidfd, int n) {
        struct stat st;
        int fd;

        if (!driver_fd_is_fuse(pid, n))
                return -ENOENT;
        fd = (int) syscall(SYS_pidfd_getfd, pidfd, n, 0);
        if (fd < 0)
                return -errno;
        /* Closing a copy of /dev/fuse waits on nobody. */
        if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(10, 229)) {
                safe_close(fd);
                return -ENOENT;
        }
        return fd;
}

/* The FUSE connection of a driver of the last instance, from the driver itself: the fd it
 * was given (DRIVERTRACK_CONN_FD), or another /dev/fuse fd it holds (a driver may have
 * moved it: the sandbox has no /dev/fuse to open, so any it holds is its connection).
 * -ENOENT when it holds none (it serves nothing any more); another -errno when that
 * could not be learnt (its fds are not ours to see: then it is left alone). */
static int driver_conn_fd(pid_t pid, int pidfd) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[64];
        struct dirent *de;
        int fd = driver_fuse_fd(pid, pidfd, DRIVERTRACK_CONN_FD);

        if (fd != -ENOENT)
                return fd;
        snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        d = opendir(path);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char *end;
                long n = strtol(de->d_name, &end, 10);

                if (*end != 0 || n < 0 || n > INT32_MAX || end == de->d_name ||
                    n == DRIVERTRACK_CONN_FD)
                        continue;
                fd = driver_fuse_fd(pid, pidfd, (int) n);
                if (fd != -ENOENT)
                        return fd;
        }
        return -ENOENT;
}

int drivertrack_add(DriverTrack *t, pid_t pid, uint64_t start, uid_t owner, uid_t uid,
                    int pidfd, int conn_fd) {
        int r;

        if (pid <= 0) {
                safe_close(pidfd);
                safe_close(conn_fd);
                return -EINVAL;
        }
        r = entry_add(t, pid, start, owner, uid, pidfd, conn_fd);
        if (r < 0)
                return r;
        /* Watched from now on: a table that cannot be saved loses only the next instance
         * its adoption (logged), not this driver its watch. */
        r = drivertrack_save(t);
        if (r < 0)
                log_warning_errno(r, "Failed to save the table of userspace drivers: %m");
        return 0;
}

int drivertrack_adopt(DriverTrack *t, pid_t pid, uint64_t start, uid_t owner, uid_t uid,
                      int pidfd) {
        int conn = pidfd >= 0 ? driver_conn_fd(pid, pidfd) : -EBADF;

        if (conn < 0 && conn != -ENOENT && conn != -EBADF)
                log_warning_errno(conn, "Could not find the FUSE connection of the userspace "
                                  "driver %d; it is watched, not ended with its mount: %m",
                                  (int) pid);
        return drivertrack_add(t, pid, start, owner, uid, pidfd, conn);
}

int drivertrack_kill(DriverTrack *t, pid_t pid, uint64_t start) {
        size_t i = entry_find(t, pid, start);

        if (i == SIZE_MAX)
                return -ESRCH;
        if (pidfd_send_signal(t->entries[i].pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
                return -errno;
        return 0;
}


size_t drivertrack_count(const DriverTrack *t, uid_t owner) {
        size_t n = 0;

        for (size_t i = 0; i < t->n_entries; i++)
                if (owner == (uid_t) -1 || t->entries[i].owner == owner)
                        n++;
        return n;
}

/* A pidfd of pid if it is still the process that started at start and has not exited;
 * -ESRCH otherwise. */
static int driver_pidfd(pid_t pid, uint64_t start) {
        _cleanup_close_ int fd = pidfd_open(pid, 0);
        struct pollfd p;
        uint64_t now;

        if (fd < 0)
                return -errno;
        /* Read while the pidfd pins the pid: the start time is this process's. */
        if (proc_start_time(pid, &now) < 0 || now != start)
                return -ESRCH;
        /* An exited driver nobody reaped yet (a zombie) still has both: its pidfd says. */
        p = (struct pollfd) { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 0) != 0)
                return -ESRCH;
        return TAKE_FD(fd);
}

size_t drivertrack_prune(DriverTrack *t) {
        size_t n = 0;

        for (size_t i = t->n_entries; i > 0; i--) {
                struct pollfd p = { .fd = t->entries[i - 1].pidfd, .events = POLLIN };

                if (poll(&p, 1, 0) > 0) {
                        entry_remove(t, i - 1);
                        n++;
                }
        }
        if (n > 0)
                (void) drivertrack_save(t);
        return n;
}

bool drivertrack_has(const DriverTrack *t, pid_t pid, uint64_t start) {
        return entry_find(t, pid, start) != SIZE_MAX;
}

bool drivertrack_alive(pid_t pid, uint64_t start) {
        _cleanup_close_ int fd = -EBADF;

        if (pid <= 0)
                return false;
        fd = driver_pidfd(pid, start);
        return fd >= 0;
}

/* One line "PID START OWNER UID"; false when malformed. */
static bool parse_line(const char *line, pid_t *pid, uint64_t *start, uid_t *owner, uid_t *uid) {
        unsigned long long p, s, o, u;
        int n = 0;

        if (sscanf(line, "%llu %llu %llu %llu%n", &p, &s, &o, &u, &n) != 4 ||
            (line[n] != '\n' && line[n] != 0) || p == 0 || p > INT32_MAX ||
            o >= UINT32_MAX || u == 0 || u >= UINT32_MAX)
                return false;
        *pid = (pid_t) p;
        *start = s;
        *owner = (uid_t) o;
        *uid = (uid_t) u;
        return true;
}

int drivertrack_load(DriverTrack *t, size_t *ret_dropped) {
        _cleanup_(fclosep) FILE *f = NULL;
        char line[128];
        size_t dropped = 0, n = 0;

        if (!t->path)
                return 0;
        f = fopen(t->path, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (fgets(line, sizeof(line), f)) {
                pid_t pid;
                uint64_t start;
                uid_t owner, uid;
                int fd;

                if (++n > DRIVERTRACK_MAX || !parse_line(line, &pid, &start, &owner, &uid)) {
                        dropped++;
                        continue;
                }
                if (entry_find(t, pid, start) != SIZE_MAX)
                        continue;
                fd = driver_pidfd(pid, start);
                if (fd < 0) {
                        dropped++; /* exited while no instance watched */
                        continue;
                }
                int conn = driver_conn_fd(pid, fd);

                if (conn < 0 && conn != -ENOENT)
                        log_warning_errno(conn, "Could not find the FUSE connection of the "
                                          "userspace driver %d; it is watched, not ended with "
                                          "its mount: %m", (int) pid);
                if (entry_add(t, pid, start, owner, uid, fd, conn) < 0)
                        dropped++;
        }
        if (ret_dropped)
                *ret_dropped = dropped;
        return drivertrack_save(t);
}

int drivertrack_save(const DriverTrack *t) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;

        if (!t->path)
                return 0;
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_entries; i++)
                fprintf(f, "%d %" PRIu64 " %u %u\n", (int) t->entries[i].pid,
                        t->entries[i].start, (unsigned) t->entries[i].owner,
                        (unsigned) t->entries[i].uid);
        if (fclose(f) != 0 || !text)
                return -ENOMEM;
        return file_write_atomic(t->path, text);
}

void drivertrack_done(DriverTrack *t) {
        for (size_t i = 0; i < t->n_entries; i++)
                entry_done(&t->entries[i]);
        free(t->entries);
        t->entries = NULL;
        t->n_entries = 0;
        free(t->path);
        t->path = NULL;
}
