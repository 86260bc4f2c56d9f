/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The marks for udev of usermount's loop devices: names and the sweep (loopmark.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loopmark.h"
#include "macro.h"

int loop_mark_path(const char *dir, const char *name, char *buf, size_t size) {
        if ((size_t) snprintf(buf, size, "%s/%s/%s", dir, LOOP_MARK_DIR, name) >= size)
                return -ENAMETOOLONG;
        return 0;
}

/*
 * "loopN-SEQ" is stale once loopN is unbound or bound anew (another sequence number);
 * a pending "loopN" once it is older than LOOP_MARK_PENDING_SEC (a worker died between
 * binding and renaming it, or its claim failed: worker/loop.c leaves its mark).
 */
static bool mark_stale(int dir_fd, const char *name) {
        char path[PATH_MAX], device[32];
        _cleanup_(fclosep) FILE *f = NULL;
        uint64_t mark_seq, seq;
        struct stat st;
        int n = 0;

        if (sscanf(name, "%31[a-z0-9]-%" SCNu64 "%n", device, &mark_seq, &n) != 2 ||
            name[n] != 0)
                return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                       st.st_mtime + LOOP_MARK_PENDING_SEC < time(NULL);
        snprintf(path, sizeof(path), "/sys/block/%s/loop", device);
        if (access(path, F_OK) < 0)
                return true;
        snprintf(path, sizeof(path), "/sys/block/%s/diskseq", device);
        f = fopen(path, "re");
        return !f || fscanf(f, "%" SCNu64, &seq) != 1 || seq != mark_seq;
}

void loop_sweep_marks(const char *dir) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[PATH_MAX];
        struct dirent *de;

        if (loop_mark_path(dir, "", path, sizeof(path)) < 0)
                return;
        d = opendir(path);
        if (!d)
                return;
        while ((de = readdir(d)))
                if (strncmp(de->d_name, "loop", 4) == 0 && mark_stale(dirfd(d), de->d_name))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
}
