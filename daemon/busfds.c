/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file descriptors that come with bus messages (see busfds.h).
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "busfds.h"
#include "log.h"
#include "macro.h"

/* How soon a message whose slots are being swapped is looked at again: at first, and
 * after each look that changed something; each look that changed nothing doubles it, up to
 * RECHECK_MAX_USEC (a swap waits for a thread while its owner's are all stuck). */
#define RECHECK_USEC (1ULL * 1000ULL)
#define RECHECK_MAX_USEC (1000ULL * 1000ULL)
/* The swap thread does one dup3(): a small stack is plenty. */
#define SWAP_THREAD_STACK (64U * 1024U)

typedef enum SlotState {
        SLOT_HELD,     /* the caller's file, in use or waiting for a thread */
        SLOT_SWAPPING, /* a thread was started to put its marker there */
        SLOT_SWAPPED,  /* the marker is there */
} SlotState;

typedef struct HeldSlot {
        int fd;
        SlotState state;
        int marker;               /* SLOT_SWAPPING: what the thread puts in the slot */
        ino_t marker_ino;
} HeldSlot;

typedef struct Held {
        sd_bus_message *m;        /* a reference */
        HeldSlot *slots;          /* as many as the message brought fds that are held */
        size_t n;
        uid_t owner;              /* whose request claimed it, or its sender's uid, or -1 */
        bool claimed;             /* a request uses the fds until busfds_release() */
        bool dispatched;          /* every handler has seen it */
        bool releasing;           /* the slots are being swapped */
} Held;

/*
 * What the swap threads share with the main loop. It outlives BusFds when threads still
 * wait at exit (a thread stuck on a FUSE server never returns): then it is left to the
 * end of the process. Threads only count down; the main thread adds owners.
 */
typedef struct Shared {
        pthread_mutex_t lock;
        size_t threads;
        struct SharedOwner {
                uid_t owner;      /* (uid_t) -1: senders of unknown uid */
                size_t n;
        } *owners;                /* the owners with closes pending */
        size_t n_owners;
} Shared;

typedef struct OpenFds {
        uint64_t *words;
        size_t n_words;
} OpenFds;

struct BusFds {
        sd_bus *bus;
        sd_event_source *io;
        sd_event_source *time;
        sd_event_source *recheck;
        uint64_t recheck_usec;
        void (*on_disconnect)(void *);
        void *userdata;
        uid_t (*owner_of)(const char *sender, void *userdata);
        void *owner_userdata;
        bool disconnected;
        int proc_fd_dir;          /* /proc/self/fd */
        dev_t nsfs_dev;           /* namespace files: closed as usual */
        OpenFds before;           /* open right before the sd_bus_process() in progress */
        bool noted;               /* before is current for the message being read */
        Held *held;
        size_t n_held;
        Shared *shared;
};

/* ---- the counts the swap threads keep --------------------------------------------------- */

static struct SharedOwner *shared_owner(Shared *s, uid_t owner) {
        for (size_t i = 0; i < s->n_owners; i++)
                if (s->owners[i].owner == owner)
                        return &s->owners[i];
        return NULL;
}

/* In the main thread, before a thread for owner starts: its count up. -EAGAIN when owner
 * has BUSFDS_MAX_THREADS_PER_OWNER waiting already, or everybody BUSFDS_MAX_THREADS. */
static int shared_take(Shared *s, uid_t owner) {
        struct SharedOwner *o;
        int r = 0;

        pthread_mutex_lock(&s->lock);
        o = shared_owner(s, owner);
        if (s->threads >= BUSFDS_MAX_THREADS || (o && o->n >= BUSFDS_MAX_THREADS_PER_OWNER))
                r = -EAGAIN;
        else if (!o) {
                struct SharedOwner *a = reallocarray(s->owners, s->n_owners + 1, sizeof(*a));

                if (!a)
                        r = -ENOMEM;
                else {
                        s->owners = a;
                        o = &s->owners[s->n_owners++];
                        *o = (struct SharedOwner) { .owner = owner };
                }
        }
        if (r == 0) {
                o->n++;
                s->threads++;
        }
        pthread_mutex_unlock(&s->lock);
        return r;
}

/* In a swap thread (or the main thread when one failed to start): owner's count down. */
static void shared_put(Shared *s, uid_t owner) {
        struct SharedOwner *o;

        pthread_mutex_lock(&s->lock);
        o = shared_owner(s, owner);
        s->threads--;
        if (o && --o->n == 0)
                *o = s->owners[--s->n_owners];
        pthread_mutex_unlock(&s->lock);
}

static size_t shared_threads(Shared *s) {
        size_t n;

        pthread_mutex_lock(&s->lock);
        n = s->threads;
        pthread_mutex_unlock(&s->lock);
        return n;
}

typedef struct SwapArgs {
        Shared *shared;
        int slot;
        int marker;
        uid_t owner;
} SwapArgs;

static void *swap_thread(void *p) {
        SwapArgs a = *(SwapArgs *) p;

        free(p);
        /* The slot holds the marker from the start of dup3(); the caller's file is closed
         * after that, here, however long its flush takes. The marker's fd is the main
         * thread's, closed by it once it saw the marker in the slot: not touched after. */
        /* dup3() onto an open slot fails only for a moment (EBUSY while another thread
         * installs an fd, EINTR): it is tried until it takes. */
        while (dup3(a.marker, a.slot, O_CLOEXEC) < 0) {
                if (errno == EBUSY || errno == EINTR)
                        continue;
                /* Never seen; the message then stays held (and the daemon busy). */
                log_error_errno(-errno, "Could not let go of fd %d of a bus message: %m",
                                a.slot);
                break;
        }
        shared_put(a.shared, a.owner);
        return NULL;
}

/*
 * A thread that puts a marker into slot: the read end of a new pipe, which no other fd of
 * the process can refer to, so that seeing it in the slot (slot_swapped()) proves that
 * this thread's dup3() took the slot. (A shared /dev/null would not: the caller may have
 * sent /dev/null itself, and the message would then be let go before the thread ran, and
 * its dup3() would land on whatever reused the number.) *ret_marker is the main thread's.
 */
static int swap_start(Shared *s, int slot, uid_t owner, int *ret_marker, ino_t *ret_ino) {
        pthread_attr_t attr;
        struct stat st;
        pthread_t t;
        SwapArgs *a;
        int pipe_fds[2], r;

        r = shared_take(s, owner);
        if (r < 0)
                return r;
        if (pipe2(pipe_fds, O_CLOEXEC) < 0) {
                r = -errno;
                shared_put(s, owner);
                return r;
        }
        safe_close(pipe_fds[1]);
        a = fstat(pipe_fds[0], &st) >= 0 ? malloc(sizeof(*a)) : NULL;
        if (!a) {
                safe_close(pipe_fds[0]);
                shared_put(s, owner);
                return -ENOMEM;
        }
        *a = (SwapArgs) { .shared = s, .slot = slot, .marker = pipe_fds[0], .owner = owner };
        r = pthread_attr_init(&attr);
        if (r == 0) {
                sigset_t all, saved;

                (void) pthread_attr_setstacksize(&attr, SWAP_THREAD_STACK);
                (void) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                /* No signal for the thread: the event loop reads them (signalfd). */
                sigfillset(&all);
                pthread_sigmask(SIG_SETMASK, &all, &saved);
                r = pthread_create(&t, &attr, swap_thread, a);
                pthread_sigmask(SIG_SETMASK, &saved, NULL);
                pthread_attr_destroy(&attr);
        }
        if (r != 0) {
                shared_put(s, owner);
                safe_close(a->marker);
                free(a);
                return -r;
        }
        *ret_marker = pipe_fds[0];
        *ret_ino = st.st_ino;
        return 0;
}

/* ---- the fds open in this process --------------------------------------------------------- */

static int open_fds_read(BusFds *b, OpenFds *f) {
        char buf[4096];

        if (f->n_words > 0)
                memset(f->words, 0, f->n_words * sizeof(uint64_t));
        if (lseek(b->proc_fd_dir, 0, SEEK_SET) < 0)
                return -errno;
        for (;;) {
                long n = syscall(SYS_getdents64, b->proc_fd_dir, buf, sizeof(buf));

                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                for (long o = 0; o < n;) {
                        struct dirent64 *de = (struct dirent64 *) (buf + o);
                        char *end;
                        long fd = strtol(de->d_name, &end, 10);

                        o += de->d_reclen;
                        if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end || fd < 0 ||
                            fd > INT32_MAX)
                                continue;
                        size_t w = (size_t) fd / 64;
                        if (w >= f->n_words) {
                                uint64_t *words = reallocarray(f->words, w + 1, sizeof(uint64_t));

                                if (!words)
                                        return -ENOMEM;
                                memset(words + f->n_words, 0,
                                       (w + 1 - f->n_words) * sizeof(uint64_t));
                                f->words = words;
                                f->n_words = w + 1;
                        }
                        f->words[w] |= UINT64_C(1) << (fd % 64);
                }
        }
}

/*
 * Whether closing fd might wait on someone else (busfds.h, step 2). Asks nothing of the
 * file's filesystem: statx() without sync answers from the inode as it is (a FUSE mount
 * that does not let root in answers EACCES without asking its server: held too).
 */
static bool fd_close_may_wait(const BusFds *b, int fd) {
        struct statx stx = {};
        int flags = fcntl(fd, F_GETFL), domain = 0;
        socklen_t len = sizeof(domain);

        if (flags >= 0 && (flags & O_PATH))
                return false;
        if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &stx) < 0)
                return true;
        switch (stx.stx_mode & S_IFMT) {
        case 0:       /* an anonymous inode: eventfd, timerfd, pidfd, epoll, ... */
        case S_IFIFO:
                return false;
        case S_IFSOCK:
                if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
                        return true;
                return domain != AF_UNIX && domain != AF_NETLINK;
        case S_IFREG:
                return makedev(stx.stx_dev_major, stx.stx_dev_minor) != b->nsfs_dev;
        default:
                return true;
        }
}

/* Whether slot holds the marker pipe of inode ino (swap_start()). */
static bool slot_swapped(int slot, ino_t ino) {
        struct statx stx;

        return statx(slot, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO,
                     &stx) == 0 &&
               S_ISFIFO(stx.stx_mode) && stx.stx_ino == ino;
}

/* ---- held messages ------------------------------------------------------------------------ */

static Held *held_find(BusFds *b, sd_bus_message *m) {
        for (size_t i = 0; i < b->n_held; i++)
                if (b->held[i].m == m)
                        return &b->held[i];
        return NULL;
}

static void held_remove(BusFds *b, Held *h) {
        sd_bus_message_unref(h->m);
        free(h->slots);
        *h = b->held[--b->n_held];
}

/* Starts the swaps still to start and lets go of the messages whose slots all hold their
 * markers; looks again soon while some do not (later, the longer nothing changes). */
static void held_check(BusFds *b) {
        bool again = false, changed = false;

        for (size_t i = b->n_held; i > 0; i--) {
                Held *h = &b->held[i - 1];
                bool done = true;

                if (!h->releasing)
                        continue;
                for (size_t k = 0; k < h->n; k++) {
                        HeldSlot *sl = &h->slots[k];

                        if (sl->state == SLOT_HELD &&
                            swap_start(b->shared, sl->fd, h->owner, &sl->marker,
                                       &sl->marker_ino) >= 0) {
                                sl->state = SLOT_SWAPPING;
                                changed = true;
                        }
                        if (sl->state == SLOT_SWAPPING && slot_swapped(sl->fd, sl->marker_ino)) {
                                sl->state = SLOT_SWAPPED;
                                sl->marker = safe_close(sl->marker);
                                changed = true;
                        }
                        done = done && sl->state == SLOT_SWAPPED;
                }
                if (done)
                        held_remove(b, h);
                else
                        again = true;
        }
        if (!again)
                return;
        b->recheck_usec = changed ? RECHECK_USEC : MIN(b->recheck_usec * 2, RECHECK_MAX_USEC);
        if (sd_event_source_set_time_relative(b->recheck, b->recheck_usec) >= 0)
                (void) sd_event_source_set_enabled(b->recheck, SD_EVENT_ONESHOT);
}

/* A message no request claimed is charged to its sender's uid where the daemon knows it
 * (busfds_set_owner_lookup()). */
static void held_mark_released(BusFds *b, Held *h) {
        const char *sender = sd_bus_message_get_sender(h->m);

        if (h->owner == (uid_t) -1 && b->owner_of && sender)
                h->owner = b->owner_of(sender, b->owner_userdata);
        h->releasing = true;
}

static void held_release(BusFds *b, Held *h) {
        held_mark_released(b, h);
        held_check(b); /* may remove h, and others */
}

/* The filter (busfds.h, step 2): the first to see each message. */
static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        BusFds *b = userdata;
        OpenFds now = {};
        Held h = { .owner = (uid_t) -1 };
        int r;

        if (!b->noted)
                return 0; /* not read by busfds_process(): nothing to compare with */
        b->noted = false;
        r = open_fds_read(b, &now);
        for (size_t w = 0; r >= 0 && w < now.n_words; w++) {
                uint64_t fresh = now.words[w] & ~(w < b->before.n_words ? b->before.words[w] : 0);

                for (unsigned bit = 0; fresh && bit < 64; bit++) {
                        int fd = (int) (w * 64 + bit);

                        if (!(fresh & (UINT64_C(1) << bit)) || fd == b->proc_fd_dir)
                                continue;
                        if (fd_close_may_wait(b, fd)) {
                                HeldSlot *a = reallocarray(h.slots, h.n + 1, sizeof(*a));

                                if (!a) {
                                        r = -ENOMEM;
                                        break;
                                }
                                h.slots = a;
                                h.slots[h.n++] = (HeldSlot) { .fd = fd, .marker = -EBADF };
                        }
                }
        }
        free(now.words);
        if (r < 0) {
                free(h.slots);
                log_warning_errno(r, "Could not list the fds of a bus message: %m");
                return 0;
        }
        if (h.n == 0)
                return 0;
        Held *a = reallocarray(b->held, b->n_held + 1, sizeof(Held));
        if (!a) {
                free(h.slots);
                /* The fds stay in the message: closed by sd-bus, here, as before. */
                log_warning("Out of memory: the fds of a bus message are closed in the main "
                            "loop.");
                return 0;
        }
        b->held = a;
        h.m = sd_bus_message_ref(m);
        b->held[b->n_held++] = h;
        return 0;
}

/* After a message was dispatched: one no request claimed is done with. */
static void after_dispatch(BusFds *b) {
        bool release = false;

        for (size_t i = 0; i < b->n_held; i++) {
                Held *h = &b->held[i];

                if (h->dispatched)
                        continue;
                h->dispatched = true;
                if (!h->claimed) {
                        held_mark_released(b, h);
                        release = true;
                }
        }
        if (release)
                held_check(b);
}

/* One sd_bus_process() with the fds noted first; what sd_bus_process() returns. */
static int busfds_process(BusFds *b) {
        int r;

        r = open_fds_read(b, &b->before);
        b->noted = r >= 0;
        r = sd_bus_process(b->bus, NULL);
        b->noted = false;
        after_dispatch(b);
        return r;
}

void busfds_claim(BusFds *b, sd_bus_message *m, uid_t owner) {
        Held *h = b ? held_find(b, m) : NULL;

        if (!h || h->releasing)
                return;
        h->claimed = true;
        h->owner = owner;
}

void busfds_release(BusFds *b, sd_bus_message *m) {
        Held *h = b ? held_find(b, m) : NULL;

        if (h && h->dispatched && !h->releasing)
                held_release(b, h);
        else if (h)
                h->claimed = false; /* still being dispatched: released after it */
}

size_t busfds_pending(const BusFds *b, uid_t owner) {
        const struct SharedOwner *o;
        size_t n;

        if (!b)
                return 0;
        if (owner == (uid_t) -1)
                return shared_threads(b->shared);
        pthread_mutex_lock(&b->shared->lock);
        o = shared_owner(b->shared, owner);
        n = o ? o->n : 0;
        pthread_mutex_unlock(&b->shared->lock);
        return n;
}

void busfds_set_owner_lookup(BusFds *b, uid_t (*owner_of)(const char *sender, void *userdata),
                             void *userdata) {
        b->owner_of = owner_of;
        b->owner_userdata = userdata;
}

size_t busfds_held(const BusFds *b) {
        return b ? b->n_held : 0;
}

/* ---- the connection in the event loop --------------------------------------------------- */

static void disconnected(BusFds *b, int r) {
        if (b->disconnected)
                return;
        b->disconnected = true;
        log_error_errno(r, "The connection to the system bus failed: %m");
        (void) sd_event_source_set_enabled(b->io, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(b->time, SD_EVENT_OFF);
        if (b->on_disconnect)
                b->on_disconnect(b->userdata);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        BusFds *b = userdata;
        int r = busfds_process(b);

        if (r < 0)
                disconnected(b, r);
        return 0;
}

static int on_time(sd_event_source *s, uint64_t usec, void *userdata) {
        return on_io(s, -1, 0, userdata);
}

/* As sd_bus_attach_event() does: poll for what the connection waits for, wake up for its
 * timeouts (method calls to polkitd and systemd). */
static int on_prepare(sd_event_source *s, void *userdata) {
        BusFds *b = userdata;
        uint64_t until = 0;
        int events, r;

        events = sd_bus_get_events(b->bus);
        if (events < 0)
                return 0;
        (void) sd_event_source_set_io_events(b->io, (uint32_t) events);
        r = sd_bus_get_timeout(b->bus, &until);
        if (r > 0 && until != UINT64_MAX && sd_event_source_set_time(b->time, until) >= 0)
                (void) sd_event_source_set_enabled(b->time, SD_EVENT_ONESHOT);
        else
                (void) sd_event_source_set_enabled(b->time, SD_EVENT_OFF);
        return 0;
}

static int on_recheck(sd_event_source *s, uint64_t usec, void *userdata) {
        held_check(userdata);
        return 0;
}

int busfds_new(sd_bus *bus, sd_event *event, int64_t priority, void (*on_disconnect)(void *),
               void *userdata, BusFds **ret) {
        _cleanup_(busfds_freep) BusFds *b = NULL;
        struct stat ns;
        int fd, r;

        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->bus = sd_bus_ref(bus);
        b->on_disconnect = on_disconnect;
        b->userdata = userdata;
        b->proc_fd_dir = -EBADF;
        b->recheck_usec = RECHECK_USEC;
        b->shared = calloc(1, sizeof(Shared));
        if (!b->shared)
                return -ENOMEM;
        pthread_mutex_init(&b->shared->lock, NULL);
        b->proc_fd_dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b->proc_fd_dir < 0)
                return -errno;
        if (stat("/proc/self/ns/mnt", &ns) >= 0)
                b->nsfs_dev = ns.st_dev;

        r = sd_bus_add_filter(bus, NULL, on_message, b);
        if (r < 0)
                return r;
        fd = sd_bus_get_fd(bus);
        if (fd < 0)
                return fd;
        r = sd_event_add_io(event, &b->io, fd, 0, on_io, b);
        if (r >= 0)
                r = sd_event_source_set_priority(b->io, priority);
        if (r >= 0)
                r = sd_event_source_set_prepare(b->io, on_prepare);
        if (r >= 0)
                r = sd_event_add_time(event, &b->time, CLOCK_MONOTONIC, 0, 0, on_time, b);
        if (r >= 0)
                r = sd_event_source_set_priority(b->time, priority);
        if (r >= 0)
                r = sd_event_source_set_enabled(b->time, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_time_relative(event, &b->recheck, CLOCK_MONOTONIC, RECHECK_USEC,
                                               0, on_recheck, b);
        if (r >= 0)
                r = sd_event_source_set_enabled(b->recheck, SD_EVENT_OFF);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(b);
        return 0;
}

/* The messages busfds_free() could not let go of; never freed (the process is ending). */
static sd_bus_message **left_at_exit;
static size_t n_left_at_exit;

static void leave_at_exit(sd_bus_message *m) {
        sd_bus_message **a = reallocarray(left_at_exit, n_left_at_exit + 1, sizeof(*a));

        if (a) {
                left_at_exit = a;
                left_at_exit[n_left_at_exit++] = m;
        }
}

BusFds *busfds_free(BusFds *b) {
        if (!b)
                return NULL;
        sd_event_source_disable_unref(b->io);
        sd_event_source_disable_unref(b->time);
        sd_event_source_disable_unref(b->recheck);
        /* At exit: what no thread swapped yet still holds a caller's file, whose close
         * could hang; those messages are left to the end of the process, kept in
         * left_at_exit (still reachable, so not a leak to a leak checker). */
        for (size_t i = 0; i < b->n_held; i++) {
                Held *h = &b->held[i];
                bool swapped = true;

                for (size_t k = 0; k < h->n; k++)
                        swapped = swapped && h->slots[k].state == SLOT_SWAPPED;
                if (swapped)
                        sd_bus_message_unref(h->m);
                else
                        leave_at_exit(h->m);
                free(h->slots);
        }
        free(b->held);
        free(b->before.words);
        safe_close(b->proc_fd_dir);
        if (b->shared && shared_threads(b->shared) == 0) {
                pthread_mutex_destroy(&b->shared->lock);
                free(b->shared->owners);
                free(b->shared);
        }
        sd_bus_unref(b->bus);
        free(b);
        return NULL;
}
