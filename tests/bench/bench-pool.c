/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's worker pool counts, from its log (see bench-pool.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-pool.h"
#include "macro.h"

#define POOL_MARK "worker pool: "

off_t pool_log_start(void) {
        struct stat st;

        if (fstat(STDERR_FILENO, &st) < 0 || !S_ISREG(st.st_mode))
                return -1;
        return lseek(STDERR_FILENO, 0, SEEK_CUR);
}

void pool_read(off_t log_start, PoolReport *ret) {
        _cleanup_(fclosep) FILE *f = NULL;
        char line[1024];

        *ret = (PoolReport) { .found = -ENOTSUP };
        if (log_start < 0)
                return;
        /* Our stderr is open for writing only: open the file again to read it. */
        f = fopen("/proc/self/fd/2", "re");
        if (!f || fseeko(f, log_start, SEEK_SET) < 0) {
                ret->found = -errno;
                return;
        }
        ret->found = 0;
        while (fgets(line, sizeof(line), f)) {
                const char *p = strstr(line, POOL_MARK);
                unsigned s, h, m;

                if (p && sscanf(p + strlen(POOL_MARK), "%u spawned, %u hits, %u misses", &s, &h,
                                &m) == 3)
                        *ret = (PoolReport) { .found = 1, .spawned = s, .hits = h, .misses = m };
        }
}
