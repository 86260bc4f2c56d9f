/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A harmless LD_PRELOAD library for test-limits' hostile environment: it only leaves a
 * marker "preload-<uid>-<pid>" in $UM_TEST_MARKER_DIR, so the test can tell which
 * processes (and as which user) loaded it. Nothing running as root may ever load it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void um_test_preload_mark(void) __attribute__((constructor));

void um_test_preload_mark(void) {
        const char *dir = getenv("UM_TEST_MARKER_DIR");
        char path[4096];
        int fd;

        if (!dir)
                return;
        snprintf(path, sizeof(path), "%s/preload-%u-%d", dir, (unsigned) geteuid(), (int) getpid());
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
}
