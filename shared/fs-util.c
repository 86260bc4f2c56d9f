/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Same inode, empty directory (fs-util.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "fs-util.h"
#include "macro.h"

bool stat_same_inode(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int fd_same_inode(int a, int b) {
        struct stat sa, sb;

        if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0)
                return -errno;
        return stat_same_inode(&sa, &sb);
}

int fd_path_same_inode(int fd, const char *path) {
        struct stat sa, sb;

        if (fstat(fd, &sa) < 0 || stat(path, &sb) < 0)
                return -errno;
        return stat_same_inode(&sa, &sb);
}

int dir_fd_is_empty(int fd) {
        struct dirent *de;
        DIR *d;
        int dfd, r = 1;

        /* A fresh open of the same directory: readdir() moves the offset of its own fd. */
        dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        d = fdopendir(dfd);
        if (!d) {
                r = -errno;
                close(dfd);
                return r;
        }
        errno = 0;
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..")) {
                        r = 0;
                        break;
                }
        if (r > 0 && errno != 0)
                r = -errno;
        closedir(d);
        return r;
}
