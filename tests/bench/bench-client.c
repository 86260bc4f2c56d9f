/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The benchmark's clients (see bench-client.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "bench-client.h"
#include "bench-proc.h"
#include "bench-stats.h"
#include "conf.h"
#include "harness.h"
#include "macro.h"
#include "usermount-names.h"

/* Fails with what into buf: the D-Bus error's name and message, or r's. */
static int set_error(char *buf, size_t size, int r, const sd_bus_error *error, const char *what) {
        if (error && sd_bus_error_is_set(error))
                snprintf(buf, size, "%s: %s: %s", what, error->name, strempty(error->message));
        else
                snprintf(buf, size, "%s: %s", what, strerror(-r));
        return r;
}

static int client_fail(ClientJob *job, int r, const sd_bus_error *error, const char *what) {
        job->result->failed = true;
        return set_error(job->result->error, sizeof(job->result->error), r, error, what);
}

/* info["driver"] of an OpenMount reply, read past the fd; "" when it has none. */
static int read_info_driver(sd_bus_message *reply, char *buf, size_t size) {
        int r;

        buf[0] = 0;
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *key, *value;

                r = sd_bus_message_read(reply, "s", &key);
                if (r > 0 && streq(key, "driver")) {
                        r = sd_bus_message_read(reply, "v", "s", &value);
                        if (r > 0)
                                snprintf(buf, size, "%s", value);
                } else if (r > 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        return r;
}

int bench_open_mount(sd_bus *bus, int source_fd, const char *fstype, const char *options,
                     const char *driver, sd_bus_message **ret_reply, int *ret_fd,
                     uint64_t *ret_ns, char *err, size_t err_size) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        char served[32];
        uint64_t t0, t1;
        int fd, r;

        r = sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, "OpenMount");
        if (r >= 0)
                r = sd_bus_message_append(call, "hss", source_fd, fstype, strempty(options));
        if (r >= 0 && driver)
                r = sd_bus_message_append(call, "a{sv}", 1, "driver", "s", driver);
        else if (r >= 0)
                r = sd_bus_message_append(call, "a{sv}", 0);
        if (r < 0)
                return set_error(err, err_size, r, NULL, "building the OpenMount call");

        /* Every request passes the same open file, and a userspace driver reads the source
         * through a duplicate of it, sharing its offset: fusefat read()s its boot sector
         * from wherever the last one left the offset (and dies of a division by zero). */
        if (lseek(source_fd, 0, SEEK_SET) < 0)
                return set_error(err, err_size, -errno, NULL, "rewinding the source");
        t0 = stats_now_ns();
        r = sd_bus_call(bus, call, 60 * 1000000ULL, &error, &reply);
        if (r < 0)
                return set_error(err, err_size, r, &error, "OpenMount");
        t1 = stats_now_ns();
        r = sd_bus_message_read(reply, "h", &fd);
        if (r <= 0)
                return set_error(err, err_size, r < 0 ? r : -EBADMSG, NULL, "OpenMount reply");
        if (driver) {
                r = read_info_driver(reply, served, sizeof(served));
                if (r < 0)
                        return set_error(err, err_size, r, NULL, "OpenMount reply's info");
                if (!streq(served, driver)) {
                        snprintf(err, err_size,
                                 "OpenMount: asked for the %s driver, served by the %s one",
                                 driver, served[0] ? served : "(unnamed)");
                        return -EPROTO;
                }
        }
        *ret_ns = t1 - t0;
        *ret_fd = fd;
        *ret_reply = TAKE_PTR(reply);
        return 0;
}

static int call_open_mount(ClientJob *job, sd_bus *bus, int image_fd, sd_bus_message **ret_reply,
                           int *ret_fd, uint64_t *ret_ns) {
        int r;

        r = bench_open_mount(bus, image_fd, job->fstype, "", job->driver, ret_reply, ret_fd,
                             ret_ns, job->result->error, sizeof(job->result->error));
        if (r < 0)
                job->result->failed = true;
        return r;
}

int bench_find_driver(const char *cgroup, int *ret_pidfd, pid_t *ret_pid, char *err,
                      size_t err_size) {
        ProcUidScan scan;
        int r, pidfd;

        r = proc_scan_uids(cgroup, CONF_DEFAULT_DRIVER_UID_FIRST, CONF_DEFAULT_DRIVER_UID_COUNT,
                           &scan);
        if (r < 0)
                return set_error(err, err_size, r, NULL, "looking for the driver in /proc");
        if (scan.alive != 1)
                return set_error(err, err_size, -ESRCH, NULL, scan.alive == 0 ?
                                 "no userspace driver runs while its mount is held" :
                                 "more than one userspace driver runs");
        pidfd = pidfd_open(scan.alive_pid, 0);
        if (pidfd < 0)
                return set_error(err, err_size, -errno, NULL, "pidfd_open of the driver");
        *ret_pidfd = pidfd;
        if (ret_pid)
                *ret_pid = scan.alive_pid;
        return 0;
}

int bench_await_exit(int pidfd, char *err, size_t err_size) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int r;

        do
                r = poll(&p, 1, HARNESS_TIMEOUT_MS);
        while (r < 0 && errno == EINTR);
        if (r <= 0)
                return set_error(err, err_size, r < 0 ? -errno : -ETIMEDOUT, NULL,
                                 "waiting for the driver to exit after the close");
        return 0;
}

/* The one userspace driver that runs now: the one serving the mount this client holds.
 * Each cycle waits for its driver's exit, so there is no other. */
static int find_driver(ClientJob *job, int *ret_pidfd) {
        int r = bench_find_driver(job->cgroup, ret_pidfd, NULL, job->result->error,
                                  sizeof(job->result->error));

        if (r < 0)
                job->result->failed = true;
        return r;
}

/* A pidfd polls readable once its process has exited. */
static int await_exit(ClientJob *job, int pidfd) {
        int r = bench_await_exit(pidfd, job->result->error, sizeof(job->result->error));

        if (r < 0)
                job->result->failed = true;
        return r;
}

/* One OpenMount whose fd is closed at once; with cycle_ns, that close timed too, and for
 * a userspace driver the wait for its exit (finding it in /proc is not timed). */
static int open_mount_cycle(ClientJob *job, sd_bus *bus, int image_fd, uint64_t *ret_ns,
                            uint64_t *ret_cycle_ns) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        uint64_t t0;
        int fd, r;

        r = call_open_mount(job, bus, image_fd, &reply, &fd, ret_ns);
        if (r < 0 || !job->cycle_ns)
                return r;
        if (job->driver && streq(job->driver, "userspace")) {
                r = find_driver(job, &pidfd);
                if (r < 0)
                        return r;
        }
        t0 = stats_now_ns();
        /* The reply owns the only fd of the mount: the unmount happens in this close. */
        reply = sd_bus_message_unref(reply);
        if (pidfd >= 0) {
                r = await_exit(job, pidfd);
                if (r < 0)
                        return r;
        }
        *ret_cycle_ns = *ret_ns + (stats_now_ns() - t0);
        return 0;
}

/* Reads path to its end in 128 KiB steps (what cat(1) uses); the bytes read in *ret_size. */
static int read_file(const char *path, uint64_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        const size_t step = 128 * 1024;
        uint64_t total = 0;
        ssize_t n;

        buf = malloc(step);
        if (!buf)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        while ((n = read(fd, buf, step)) > 0)
                total += (uint64_t) n;
        if (n < 0)
                return -errno;
        *ret_size = total;
        return 0;
}

/* OpenMount, the mount attached at job->target in this caller's mount namespace, and
 * job->read_path read through it (timed: open to the last byte); then detached and closed. */
static int open_mount_read(ClientJob *job, sd_bus *bus, int image_fd, uint64_t *ret_ns) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *path = NULL;
        uint64_t open_ns, size = 0, t0;
        int fd, r;

        r = call_open_mount(job, bus, image_fd, &reply, &fd, &open_ns);
        if (r < 0)
                return r;
        if (move_mount(fd, "", AT_FDCWD, job->target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return client_fail(job, -errno, NULL, "attaching the mount (move_mount)");
        if (asprintf(&path, "%s/%s", job->target, job->read_path) < 0)
                return client_fail(job, -ENOMEM, NULL, "the file's path");
        t0 = stats_now_ns();
        r = read_file(path, &size);
        *ret_ns = stats_now_ns() - t0;
        (void) umount2(job->target, MNT_DETACH);
        if (r < 0)
                return client_fail(job, r, NULL, "reading the file through the mount");
        if (size != job->read_size)
                return client_fail(job, -EIO, NULL, "reading the file: it is shorter than written");
        return 0;
}

/* MountFd of the image at the default place (<media_root>/<user>/<label>), untimed, then
 * Unmount of the mount point it returned: the Unmount is timed. */
static int call_mount_unmount(ClientJob *job, sd_bus *bus, int image_fd, uint64_t *ret_ns) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *mount_point = NULL;
        const char *mp;
        uint64_t t0;
        int r;

        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "MountFd",
                               &error, &reply, "hssa{sv}", image_fd, job->fstype, "", 0);
        if (r < 0)
                return client_fail(job, r, &error, "MountFd");
        r = sd_bus_message_read(reply, "s", &mp);
        if (r <= 0)
                return client_fail(job, r < 0 ? r : -EBADMSG, NULL, "MountFd reply");
        mount_point = strdup(mp);
        if (!mount_point)
                return client_fail(job, -ENOMEM, NULL, "MountFd reply");
        reply = sd_bus_message_unref(reply);

        t0 = stats_now_ns();
        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "Unmount",
                               &error, NULL, "sa{sv}", mount_point, 0);
        if (r < 0)
                return client_fail(job, r, &error, "Unmount");
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int call_ping(ClientJob *job, sd_bus *bus, uint64_t *ret_ns) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *version = NULL;
        uint64_t t0 = stats_now_ns();
        int r;

        r = sd_bus_get_property_string(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                       "Version", &error, &version);
        if (r < 0)
                return client_fail(job, r, &error, "Get Version");
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int client_loop(ClientJob *job, sd_bus *bus, int image_fd) {
        ClientResult *res = job->result;
        uint64_t ns = 0, cycle = 0;
        int r;

        for (unsigned i = 0; i < job->warmup + job->count; i++) {
                if (i == job->warmup)
                        res->start_ns = stats_now_ns();
                if (job->mode == CLIENT_OPEN_MOUNT)
                        r = open_mount_cycle(job, bus, image_fd, &ns, &cycle);
                else if (job->mode == CLIENT_OPEN_READ)
                        r = open_mount_read(job, bus, image_fd, &ns);
                else if (job->mode == CLIENT_MOUNT_UNMOUNT)
                        r = call_mount_unmount(job, bus, image_fd, &ns);
                else
                        r = call_ping(job, bus, &ns);
                if (r < 0)
                        return r;
                if (i < job->warmup)
                        continue;
                if (job->cycle_ns)
                        job->cycle_ns[res->n_done] = cycle;
                job->latency_ns[res->n_done++] = ns;
        }
        res->end_ns = stats_now_ns();
        return 0;
}

static int client_run(ClientJob *job) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int image_fd = -EBADF;
        const char *name = NULL;
        int r;

        r = harness_sd_bus_connect(&bus);
        if (r < 0)
                return client_fail(job, r, NULL, "connecting to the bus");
        if (job->image) {
                image_fd = open(job->image, O_RDONLY | O_CLOEXEC);
                if (image_fd < 0)
                        return client_fail(job, -errno, NULL, job->image);
        }
        if (job->mode == CLIENT_HOLD) {
                r = sd_bus_get_unique_name(bus, &name);
                if (r < 0)
                        return client_fail(job, r, NULL, "the unique name");
                harness_report("name=%s", name);
                (void) harness_await_release();
                return 0;
        }
        if (job->start_on_release) {
                harness_report("ready");
                r = harness_await_release();
                if (r < 0)
                        return client_fail(job, r, NULL, "waiting for the start");
        }
        return client_loop(job, bus, image_fd);
}

int client_main(void *userdata) {
        ClientJob *job = userdata;
        int r;

        r = client_run(job);
        __atomic_store_n(&job->result->done, 1, __ATOMIC_RELEASE);
        return r < 0 ? 1 : 0;
}
