/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A cgroup tree of the test's own (see harness.h, "cgroups"). systemd-nspawn makes its
 * "payload" and "supervisor" cgroups below the cgroup it was started in and does not
 * remove them; started in a cgroup of ours, they are found and removed with it. The
 * directories are listed (HARNESS_LIST_CGROUPS), so that the supervisor or the janitor
 * removes them even when the test process dies half-way.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "harness-private.h"
#include "harness.h"
#include "macro.h"

/* The mount point of the hierarchy a /proc/self/cgroup line names, if it is one without
 * controllers: "0::" (unified) or "N:name=systemd:". */
static char *hierarchy_mount(const char *controllers, bool unified) {
        g_autofree char *info = NULL;
        g_auto(GStrv) lines = NULL;

        if (!g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL))
                return NULL;
        lines = g_strsplit(info, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
                g_auto(GStrv) halves = g_strsplit(lines[i], " - ", 2);
                g_auto(GStrv) pre = NULL, post = NULL;

                if (g_strv_length(halves) != 2)
                        continue;
                pre = g_strsplit(halves[0], " ", -1);
                post = g_strsplit(halves[1], " ", -1);
                if (g_strv_length(pre) < 5 || g_strv_length(post) < 3 || !streq(pre[3], "/"))
                        continue;
                if (unified && streq(post[0], "cgroup2"))
                        return g_strdup(pre[4]);
                if (!unified && streq(post[0], "cgroup") && strstr(post[2], controllers))
                        return g_strdup(pre[4]);
        }
        return NULL;
}

int harness_cgroup_new(const char *name) {
        g_autofree char *own = NULL;
        g_autoptr(GString) list = g_string_new(NULL);
        g_auto(GStrv) lines = NULL;

        if (!g_file_get_contents("/proc/self/cgroup", &own, NULL, NULL))
                return -errno;
        lines = g_strsplit(own, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
                g_auto(GStrv) f = g_strsplit(lines[i], ":", 3);
                g_autofree char *mount = NULL, *dir = NULL;
                bool unified;

                if (g_strv_length(f) != 3)
                        continue;
                unified = streq(f[0], "0") && isempty(f[1]);
                if (!unified && !streq(f[1], "name=systemd"))
                        continue;
                mount = hierarchy_mount(f[1], unified);
                if (!mount)
                        continue;
                dir = g_strdup_printf("%s%s/%s.%d", mount, streq(f[2], "/") ? "" : f[2], name,
                                      (int) getpid());
                if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                        int r = -errno;

                        harness_log("cannot make the cgroup %s: %s", dir, g_strerror(-r));
                        return r;
                }
                g_string_append_printf(list, "%s\n", dir);
        }
        if (list->len == 0)
                return -ENOENT;
        return harness_list_write(HARNESS_LIST_CGROUPS, list->str);
}

static char **read_list(void) {
        g_autofree char *contents = harness_list_read(HARNESS_LIST_CGROUPS);

        return contents ? g_strsplit(g_strstrip(contents), "\n", -1) : NULL;
}

int harness_cgroup_move(pid_t pid) {
        g_auto(GStrv) dirs = read_list();
        char value[32];

        snprintf(value, sizeof(value), "%d", (int) pid);
        for (size_t i = 0; dirs && dirs[i]; i++) {
                g_autofree char *procs = g_build_filename(dirs[i], "cgroup.procs", NULL);
                int r = harness_write_attribute(procs, value);

                if (r < 0)
                        return r;
        }
        return dirs ? 0 : -ENOENT;
}

int harness_cgroup_enter(void) {
        return harness_cgroup_move(0);
}

char *harness_cgroup_unified_dir(void) {
        g_auto(GStrv) dirs = read_list();

        for (size_t i = 0; dirs && dirs[i]; i++) {
                struct statfs fs;

                if (statfs(dirs[i], &fs) >= 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
                        return g_strdup(dirs[i]);
        }
        return NULL;
}

int harness_cgroup_cpu_usec(uint64_t *ret_usec) {
        g_autofree char *dir = harness_cgroup_unified_dir();
        g_autofree char *path = NULL, *contents = NULL;
        const char *line;
        uint64_t usec;

        if (!dir)
                return -ENOENT;
        path = g_build_filename(dir, "cpu.stat", NULL);
        if (!g_file_get_contents(path, &contents, NULL, NULL))
                return -EIO;
        line = g_str_has_prefix(contents, "usage_usec ") ? contents
                                                         : strstr(contents, "\nusage_usec ");
        if (!line || sscanf(line, " usage_usec %" SCNu64, &usec) != 1)
                return -EINVAL;
        *ret_usec = usec;
        return 0;
}

static int rmdir_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        if (type == FTW_DP && rmdir(path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int harness_cgroup_remove(void) {
        g_auto(GStrv) dirs = read_list();
        int r = 0;

        for (size_t i = 0; dirs && dirs[i]; i++) {
                int k;

                if (!*dirs[i] || access(dirs[i], F_OK) < 0)
                        continue;
                /* cgroupfs has no files to remove: directories only, deepest first. */
                k = nftw(dirs[i], rmdir_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
                if (k != 0 && r == 0)
                        r = k < 0 ? k : -EBUSY;
        }
        if (r == 0 && dirs)
                harness_list_remove(HARNESS_LIST_CGROUPS);
        return r;
}
