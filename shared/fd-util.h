/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * File descriptors across processes: sending and receiving one message with fds over a
 * Unix socket (SCM_RIGHTS), and closing everything a freshly started process must not
 * hold. Used by the worker protocol (daemon/workerpool.c, worker/runner.c) and by children
 * that the workers fork (worker/idmap-userns.c).
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The most fds one message carries. */
#define FDPASS_MAX 8

/*
 * Sends the iovecs as one message (a datagram on SOCK_SEQPACKET) with n_fds fds
 * (n_fds <= FDPASS_MAX), MSG_NOSIGNAL. Returns 0, -EMSGSIZE if the kernel took only part
 * of it, or -errno.
 */
int fdpass_send(int sock, const struct iovec *iov, size_t n_iov, const int *fds, size_t n_fds);

/*
 * Receives one message into buf (size bytes) and up to max_fds fds into fds[] (O_CLOEXEC;
 * *ret_n_fds says how many; fds beyond max_fds are closed). flags are recvmsg()'s (e.g.
 * MSG_DONTWAIT). Returns the bytes received, 0 at end of file, -EMSGSIZE (after closing
 * every fd it carried) when the message or its fds did not fit, or -errno (-EAGAIN).
 */
ssize_t fdpass_recv(int sock, void *buf, size_t size, int *fds, size_t max_fds,
                    size_t *ret_n_fds, int flags);

/* Closes each of fds[0..n) that is valid and sets it to -EBADF. */
void close_many(int *fds, size_t n);

/* In a child: closes every fd >= 3 that is not in keep[] (which it sorts; negative
 * entries keep nothing). */
void close_all_fds_except(int *keep, size_t n_keep);

/* Replaces the file path by one holding text, atomically: a temporary file next to it
 * (mode 0600), fsync, rename, fsync of the directory. A crash leaves the old or the new
 * file, never a mix. -errno. */
int file_write_atomic(const char *path, const char *text);
