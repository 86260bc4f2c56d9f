/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * um-fake-driver: a userspace filesystem driver that an attacker compromised, for
 * test-leash.c. The test bind-mounts it over fuse2fs in its private mount namespace, so
 * that usermountd starts it exactly as it starts fuse2fs: in the sandbox, as a uid of its
 * own, with the FUSE connection at fd 4 and the source at fd 5. It speaks the FUSE
 * protocol itself (an empty root directory owned by the caller), and misbehaves as the
 * file /etc/usermount-test/fake-driver (the harness's private /etc, which the sandbox
 * sees read-only) says:
 *
 *   normal      serves, and exits when the connection is gone (as fuse2fs does)
 *   mute        reads requests and answers none, not even INIT
 *   stall       answers INIT and the first GETATTR, then reads requests and answers none
 *   ignore-end  serves, and stays when the connection is gone (sleeps forever)
 *   move-conn   as ignore-end, serving from fd 9 (its connection moved there from fd 4)
 *   drop-conn   as ignore-end, and on SIGUSR1 closes its connection and sleeps forever
 *   slow-exit   serves, and exits 0.3 s after the connection is gone (as fuse2fs
 *               does when it has much to write back)
 *   hog-cpu     serves, and spins in a thread of its own
 *   hog-memory  serves, and maps and touches memory in a thread until that fails; then
 *               exits 3
 *   hog-tasks   serves, and starts threads until that fails; then exits 3
 *
 * The hogs start at the first LOOKUP: the caller looks into the mount once it has it.
 *
 * Not a security test of its own: what it shows is what the daemon does with such a
 * driver (test-leash.c). Single-threaded server; no libfuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define CONN_FD 4
#define MOVED_CONN_FD 9
#define MODE_FILE "/etc/usermount-test/fake-driver"

static char mode[32] = "normal";
static int conn_fd = CONN_FD;
static volatile sig_atomic_t drop;

static bool streq_mode(const char *m) {
        return strcmp(mode, m) == 0;
}

static void reply(const struct fuse_in_header *in, int error, const void *data, size_t size) {
        struct fuse_out_header out = {
                .len = (uint32_t) (sizeof(out) + (error ? 0 : size)),
                .error = error,
                .unique = in->unique,
        };
        struct iovec iov[2] = { { &out, sizeof(out) }, { (void *) data, error ? 0 : size } };

        (void) !writev(conn_fd, iov, 2);
}

static void attr_of_root(const struct fuse_in_header *in, struct fuse_attr *a) {
        *a = (struct fuse_attr) {
                .ino = FUSE_ROOT_ID,
                .mode = S_IFDIR | 0755,
                .nlink = 2,
                .uid = in->uid,
                .gid = in->gid,
                .blksize = 4096,
        };
}

static void *spin(void *unused) {
        for (volatile unsigned long i = 0;; i++)
                ;
        return NULL;
}

static void *hog_memory(void *unused) {
        for (;;) {
                char *p = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                if (p == MAP_FAILED)
                        _exit(3);
                memset(p, 1, 16 << 20);
        }
        return NULL;
}

static void *sleeper(void *unused) {
        pause();
        return NULL;
}

static void *hog_tasks(void *unused) {
        for (;;) {
                pthread_t t;

                if (pthread_create(&t, NULL, sleeper, NULL) != 0)
                        _exit(3);
        }
        return NULL;
}

static void start_misbehaving(void) {
        void *(*fn)(void *) = streq_mode("hog-cpu") ? spin :
                              streq_mode("hog-memory") ? hog_memory :
                              streq_mode("hog-tasks") ? hog_tasks : NULL;
        pthread_t t;

        if (fn)
                (void) pthread_create(&t, NULL, fn, NULL);
}

static void read_mode(void) {
        int fd = open(MODE_FILE, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return;
        n = read(fd, mode, sizeof(mode) - 1);
        close(fd);
        mode[n > 0 ? n : 0] = 0;
        mode[strcspn(mode, "\n")] = 0;
}

/* Closes the connection here, so that a read that starts after the signal fails too. */
static void on_usr1(int sig) {
        drop = 1;
        close(conn_fd);
}

int main(void) {
        static char buf[1 << 20 | 4096];
        unsigned getattrs = 0;
        bool started = false;
        /* No SA_RESTART: the signal ends the read. */
        const struct sigaction sa = { .sa_handler = on_usr1 };

        read_mode();
        if (streq_mode("move-conn")) {
                if (dup2(CONN_FD, MOVED_CONN_FD) < 0)
                        return 2;
                close(CONN_FD);
                conn_fd = MOVED_CONN_FD;
        }
        if (streq_mode("drop-conn"))
                (void) sigaction(SIGUSR1, &sa, NULL);
        for (;;) {
                ssize_t n = read(conn_fd, buf, sizeof(buf));
                const struct fuse_in_header *in = (const void *) buf;

                if (drop)
                        for (;;)
                                pause();
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 || (size_t) n < sizeof(*in)) {
                        /* ENODEV: the superblock is gone, the connection with it. */
                        if (streq_mode("ignore-end") || streq_mode("move-conn") ||
                            streq_mode("drop-conn"))
                                for (;;)
                                        pause();
                        if (streq_mode("slow-exit"))
                                usleep(300 * 1000);
                        return 0;
                }
                if (streq_mode("mute") ||
                    (streq_mode("stall") && in->opcode != FUSE_INIT && getattrs >= 1))
                        continue;
                switch (in->opcode) {
                case FUSE_INIT: {
                        struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
                                                   .minor = FUSE_KERNEL_MINOR_VERSION,
                                                   .max_readahead = 65536,
                                                   .max_background = 4,
                                                   .congestion_threshold = 3,
                                                   .max_write = 65536, .time_gran = 1 };
                        reply(in, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_GETATTR: {
                        struct fuse_attr_out o = {};

                        getattrs++;
                        attr_of_root(in, &o.attr);
                        reply(in, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_OPENDIR: {
                        struct fuse_open_out o = { .fh = 1 };

                        reply(in, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_STATFS: {
                        struct fuse_statfs_out o = { .st = { .bsize = 4096, .namelen = 255,
                                                             .frsize = 4096 } };

                        reply(in, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_READDIR:
                case FUSE_RELEASEDIR:
                case FUSE_RELEASE:
                case FUSE_FLUSH:
                case FUSE_ACCESS:
                case FUSE_FSYNCDIR:
                case FUSE_DESTROY:
                        reply(in, 0, NULL, 0);
                        break;
                case FUSE_FORGET:
                case FUSE_BATCH_FORGET:
                case FUSE_INTERRUPT:
                        break;
                case FUSE_LOOKUP:
                        /* The caller looks up a name once the mount is there: the hogs
                         * start then, not while the mount is being built. */
                        reply(in, -ENOENT, NULL, 0);
                        if (!started) {
                                started = true;
                                start_misbehaving();
                        }
                        break;
                default:
                        reply(in, -ENOSYS, NULL, 0);
                        break;
                }
        }
}
