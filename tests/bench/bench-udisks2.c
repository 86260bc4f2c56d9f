/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The UDisks2 front against udisks2 itself (issue 24): Filesystem.Mount and Unmount of the
 * same zram disk (ext4) through usermountd --udisks2, with the kernel's driver and with
 * the userspace one, and through udisks2 2.9.4's own udisksd (the kernel's driver), in one
 * sitting, alternating rounds so that the machine's drift falls on both. Each call is
 * timed from send to reply as a client sees it (sd-bus, as root: both daemons still ask
 * polkit, which the harness's rules answer yes). Prints a table with the ratios.
 *
 * Runs in the integration harness (private bus, real polkitd with udisks2's actions
 * loaded as well, real udevd, which udisksd needs to see its mounts); udisksd runs only
 * here, on the private bus, with what it writes kept in the harness's temporary
 * directory, and is killed at the end. Exit status 0, 2 when it could not
 * be set up or a call failed, 77 when not root or udisksd is not installed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-stats.h"
#include "harness.h"
#include "macro.h"

#define UDISKSD "/usr/libexec/udisks2/udisksd"
#define UDISKS2_POLICY "/usr/share/polkit-1/actions/org.freedesktop.UDisks2.policy"
#define UDISKS_BUS "org.freedesktop.UDisks2"
#define FS_IFACE "org.freedesktop.UDisks2.Filesystem"

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') == 0 ||\n"
        "            action.id.indexOf('org.freedesktop.udisks2.') == 0)\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

typedef enum Server { SERVER_KERNEL, SERVER_USERSPACE, SERVER_UDISKSD, _SERVER_MAX } Server;

static const char *const server_names[_SERVER_MAX] = {
        [SERVER_KERNEL] = "usermount --udisks2, kernel driver",
        [SERVER_USERSPACE] = "usermount --udisks2, userspace driver (fuse2fs)",
        [SERVER_UDISKSD] = "udisks2 2.9.4 udisksd (kernel driver)",
};

static int wait_for_name(sd_bus *bus, bool present) {
        for (int i = 0; i < HARNESS_TIMEOUT_MS / 10; i++) {
                bool has = sd_bus_get_name_creds(bus, UDISKS_BUS, 0, NULL) >= 0;

                if (has == present)
                        return 0;
                g_usleep(10 * 1000);
        }
        return -ETIMEDOUT;
}

/* What udisksd writes outside /run (its record of mounts in /var/lib/udisks2, root's mount
 * points under /media) goes to the harness's temporary directory: an overlay over
 * /var/lib and a tmpfs over /media, in the harness's private mount namespace. */
static int private_state_dirs(void) {
        g_autofree char *upper = g_build_filename(harness_tmpdir(), "varlib-upper", NULL);
        g_autofree char *work = g_build_filename(harness_tmpdir(), "varlib-work", NULL);
        g_autofree char *opts = g_strdup_printf("lowerdir=/var/lib,upperdir=%s,workdir=%s",
                                                upper, work);

        if (g_mkdir_with_parents(upper, 0755) < 0 || g_mkdir_with_parents(work, 0755) < 0)
                return -errno;
        if (mount("overlay", "/var/lib", "overlay", 0, opts) < 0 ||
            mount("tmpfs", "/media", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0) {
                fprintf(stderr, "bench-udisks2: cannot keep udisksd's state private: %m\n");
                return -errno;
        }
        return 0;
}

static pid_t start_udisksd(void) {
        pid_t pid = fork();

        if (pid == 0) {
                g_setenv("DBUS_SYSTEM_BUS_ADDRESS", harness_bus_address(), TRUE);
                execl(UDISKSD, UDISKSD, "--no-debug", (char *) NULL);
                _exit(127);
        }
        if (pid > 0)
                (void) harness_kill_at_exit(pid);
        return pid;
}

static void stop(pid_t pid) {
        if (pid <= 0)
                return;
        (void) kill(pid, SIGTERM);
        (void) waitpid(pid, NULL, 0);
}

/* Until nothing holds node: a userspace driver lets go of its device a moment after its
 * mount went (it exits once the kernel closed its connection), and the next Mount of the
 * device is refused as busy until then. The wait is not timed: Mount is. */
static void wait_device_free(const char *node) {
        for (int i = 0; i < 500; i++) {
                int fd = open(node, O_RDONLY | O_EXCL | O_CLOEXEC);

                if (fd >= 0) {
                        close(fd);
                        return;
                }
                g_usleep(10 * 1000);
        }
}

/* One Mount and Unmount; the Mount's time into *ret_ns. */
static int mount_once(sd_bus *bus, const char *path, uint64_t *ret_ns) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint64_t t0 = stats_now_ns();
        int r;

        r = sd_bus_call_method(bus, UDISKS_BUS, path, FS_IFACE, "Mount", &error, &reply,
                               "a{sv}", 0);
        *ret_ns = stats_now_ns() - t0;
        if (r < 0) {
                fprintf(stderr, "bench-udisks2: Mount: %s\n", error.message ?: strerror(-r));
                return r;
        }
        r = sd_bus_call_method(bus, UDISKS_BUS, path, FS_IFACE, "Unmount", &error, NULL,
                               "a{sv}", 0);
        if (r < 0)
                fprintf(stderr, "bench-udisks2: Unmount: %s\n", error.message ?: strerror(-r));
        return r;
}

int main(int argc, char *argv[]) {
        static const char *const policies[] = { UDISKS2_POLICY, NULL };
        const HarnessOptions options = { .extra_polkit_policies = policies };
        const char *const args[] = { "--udisks2", NULL };
        unsigned rounds = 5, per_round = 20;
        uint64_t *samples[_SERVER_MAX];
        size_t n[_SERVER_MAX] = {};
        g_autofree char *node = NULL, *path = NULL, *cmd = NULL;
        Summary sum[_SERVER_MAX];
        int c;

        while ((c = getopt(argc, argv, "qh")) >= 0)
                switch (c) {
                case 'q':
                        rounds = 1, per_round = 3;
                        break;
                default:
                        printf("bench-udisks2 [-q]: Filesystem.Mount through usermountd "
                               "--udisks2 against udisks2's udisksd; -q: a quick pass\n");
                        return c == 'h' ? 0 : 2;
                }
        if (geteuid() != 0)
                return 77;
        if (access(UDISKSD, X_OK) < 0 || access(UDISKS2_POLICY, R_OK) < 0) {
                printf("bench-udisks2: udisks2 is not installed; skipped\n");
                return 77;
        }
        if (harness_init(&options) < 0 || harness_set_rules(rules) < 0 ||
            private_state_dirs() < 0)
                return 2;
        if (harness_zram_new("64M", &node) < 0)
                return 2;
        cmd = g_strdup_printf("mkfs.ext4 -q -L BENCH %s", node);
        if (system(cmd) != 0 || harness_udev_trigger(node, "change") < 0 ||
            harness_udev_settle() < 0)
                return 2;
        path = g_strdup_printf("/org/freedesktop/UDisks2/block_devices/%s",
                               node + strlen("/dev/"));
        for (Server s = 0; s < _SERVER_MAX; s++)
                samples[s] = g_new0(uint64_t, rounds * per_round);

        for (unsigned round = 0; round < rounds; round++)
                for (Server s = 0; s < _SERVER_MAX; s++) {
                        pid_t pid;
                        uint64_t ns;

                        if (s == SERVER_UDISKSD) {
                                pid = start_udisksd();
                        } else {
                                if (harness_write_etc("usermount/usermount.conf",
                                                      s == SERVER_KERNEL
                                                              ? "[General]\nDriver=kernel\n"
                                                              : "[General]\nDriver=userspace\n") < 0 ||
                                    harness_start_daemon(harness_daemon_path(), args, &pid) < 0)
                                        return 2;
                        }
                        if (pid <= 0 || wait_for_name(harness_bus(), true) < 0)
                                return 2;
                        /* One untimed call first: each daemon's first request warms it. */
                        if (mount_once(harness_bus(), path, &ns) < 0)
                                return 2;
                        for (unsigned i = 0; i < per_round; i++) {
                                wait_device_free(node);
                                if (mount_once(harness_bus(), path, &ns) < 0)
                                        return 2;
                                samples[s][n[s]++] = ns;
                        }
                        if (s == SERVER_UDISKSD)
                                stop(pid);
                        else
                                (void) harness_stop_daemon(pid, NULL);
                        if (wait_for_name(harness_bus(), false) < 0)
                                return 2;
                }

        printf("\nFilesystem.Mount of a zram disk (ext4, 64 MiB) as a client sees it, %u rounds "
               "of %u, alternating:\n\n", rounds, per_round);
        printf("%-50s %9s %9s %9s\n", "served by", "p50 ms", "p90 ms", "p99 ms");
        for (Server s = 0; s < _SERVER_MAX; s++) {
                stats_summarize(samples[s], n[s], &sum[s]);
                printf("%-50s %9.2f %9.2f %9.2f\n", server_names[s], stats_ms(sum[s].p50_ns),
                       stats_ms(sum[s].p90_ns), stats_ms(sum[s].p99_ns));
        }
        printf("\nudisks2's p50 / usermount's p50: kernel driver %.2fx, userspace driver %.2fx "
               "(above 1: usermount is faster)\n",
               (double) sum[SERVER_UDISKSD].p50_ns / (double) MAX(sum[SERVER_KERNEL].p50_ns, 1),
               (double) sum[SERVER_UDISKSD].p50_ns /
                       (double) MAX(sum[SERVER_USERSPACE].p50_ns, 1));
        /* Issue 25's target: the default path (the sandboxed userspace driver) against
         * udisks2 with the kernel's driver. */
        double x = (double) sum[SERVER_UDISKSD].p50_ns /
                   (double) MAX(sum[SERVER_USERSPACE].p50_ns, 1);
        printf("target: udisks2's Filesystem.Mount p50 >= 3x usermount's default path "
               "(userspace driver): %.2fx: %s\n", x, x >= 3.0 ? "met" : "MISSED");
        for (Server s = 0; s < _SERVER_MAX; s++)
                g_free(samples[s]);
        (void) harness_zram_free(node);
        return 0;
}
