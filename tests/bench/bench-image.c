/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The benchmarks' test data (see bench-image.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "bench-image.h"
#include "harness.h"
#include "macro.h"

int bench_write_random_file(const char *path, uint64_t size) {
        static uint64_t buf[8192];
        _cleanup_close_ int fd = -EBADF;
        uint64_t x = 0x9e3779b97f4a7c15ull;

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        for (uint64_t done = 0; done < size; done += sizeof(buf)) {
                for (size_t i = 0; i < ELEMENTSOF(buf); i++)
                        buf[i] = bench_xorshift(&x);
                if (write(fd, buf, sizeof(buf)) != (ssize_t) sizeof(buf))
                        return -EIO;
        }
        return close(TAKE_FD(fd)) < 0 ? -errno : 0;
}

int bench_run_quiet(const char *const *argv, const char *what) {
        GError *error = NULL;
        int status;

        if (!g_spawn_sync(NULL, (char **) argv, NULL,
                          G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                          NULL, &status, &error) ||
            !g_spawn_check_wait_status(status, &error)) {
                bool missing = g_error_matches(error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);

                if (!missing)
                        fprintf(stderr, "%s: %s failed: %s\n", g_get_prgname() ?: "bench",
                                what, error->message);
                g_error_free(error);
                return missing ? -ENOENT : -EIO;
        }
        return 0;
}

int bench_make_empty_image(const char *name, const char *const *mkfs, uint64_t size,
                           char **ret_path) {
        g_autofree char *path = g_strdup_printf("%s/images/%s.img", harness_tmpdir(), name);
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) size) < 0) {
                r = -errno;
                (void) unlink(path);
                return r;
        }
        fd = safe_close(fd);
        for (size_t i = 0; mkfs[i]; i++)
                g_ptr_array_add(argv, (char *) mkfs[i]);
        g_ptr_array_add(argv, path);
        g_ptr_array_add(argv, NULL);
        r = bench_run_quiet((const char *const *) argv->pdata, mkfs[0]);
        if (r < 0) {
                (void) unlink(path);
                return r;
        }
        *ret_path = g_steal_pointer(&path);
        return 0;
}
