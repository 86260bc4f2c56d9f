/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small questions about files that every program asks: whether two fds (or an fd and a
 * path, or two stats) are the same inode, and whether a directory is empty. Plain libc;
 * compiled into the daemon, the worker and the client alike.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

/* Same st_dev and st_ino. */
bool stat_same_inode(const struct stat *a, const struct stat *b);

/* 1 if fds a and b are the same inode, 0 if not, -errno if either cannot be fstat()ed. */
int fd_same_inode(int a, int b);

/* 1 if fd and path (followed) are the same inode, 0 if not, -errno on failure. */
int fd_path_same_inode(int fd, const char *path);

/* 1 if the directory behind fd has no entry but "." and "..", 0 if it has one, -errno on
 * failure. fd is left as it was (its own offset is not moved). */
int dir_fd_is_empty(int fd);
