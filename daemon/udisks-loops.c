/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loop devices the UDisks2 front sets up (udisks-front.h): Manager.LoopSetup as a
 * request of the pipeline (a loop device within the caller's limits, polkit's mount-image,
 * made by a worker), the table of the devices made, what their objects show, and
 * Loop.Delete and Loop.SetAutoclear.
 *
 * Each device is auto-clearing and held by the front's fd: it goes when the front lets go
 * of it (Delete; the last mount's end with Autoclear) and no mount uses it, and with
 * usermountd (a device nobody mounted does not outlive the daemon, unlike udisks2's). The
 * fd is closed off the main loop: the last close of a loop device flushes its backing
 * file, which may sit on the caller's own FUSE server.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caller.h"
#include "fd-util.h"
#include "log.h"
#include "pipeline.h"
#include "request-dbus.h"
#include "udisks-front.h"

#define UDISKS_ERROR "org.freedesktop.UDisks2.Error."
#define LOOP_IFACE "org.freedesktop.UDisks2.Loop"

UDisksLoop *udisks_loops_find(UDisksFront *f, dev_t devnum) {
        for (size_t i = 0; f && i < f->n_loops; i++)
                if (f->loops[i].devnum == devnum)
                        return &f->loops[i];
        return NULL;
}

/* Closes in flight, at most LOOP_CLOSERS_MAX at once: a close that hangs (a backing file
 * on a network filesystem that does not answer) keeps its thread, never the main loop. */
#define LOOP_CLOSERS_MAX 64
static atomic_uint closers;

static void *close_thread(void *p) {
        safe_close((int) (intptr_t) p);
        atomic_fetch_sub(&closers, 1);
        return NULL;
}

/* Closes fd in a thread of its own (see above). With every closer busy, or no thread to
 * be had, the fd stays open (the device stays with it) rather than the main loop waiting:
 * logged, and let go at exit. */
static void close_off_loop(int fd) {
        pthread_attr_t attr;
        pthread_t t;

        if (fd < 0)
                return;
        if (atomic_fetch_add(&closers, 1) < LOOP_CLOSERS_MAX && pthread_attr_init(&attr) == 0) {
                (void) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                int r = pthread_create(&t, &attr, close_thread, (void *) (intptr_t) fd);
                pthread_attr_destroy(&attr);
                if (r == 0)
                        return;
        }
        atomic_fetch_sub(&closers, 1);
        log_warning("UDisks2 front: %u loop devices are being let go of already; fd %d is "
                    "kept until usermountd exits.", (unsigned) LOOP_CLOSERS_MAX, fd);
}

void udisks_loops_forget(UDisksFront *f, dev_t devnum) {
        UDisksLoop *l = udisks_loops_find(f, devnum);

        if (!l)
                return;
        close_off_loop(l->fd);
        /* A lock file of the runtime directory: its close waits on nobody. */
        safe_close(l->claim_fd);
        *l = f->loops[--f->n_loops];
}

void udisks_loops_free(UDisksFront *f) {
        for (size_t i = 0; i < f->n_loops; i++) {
                close_off_loop(f->loops[i].fd);
                safe_close(f->loops[i].claim_fd);
        }
        free(f->loops);
        f->loops = NULL;
        f->n_loops = 0;
}

static int set_string(char **s, const char *v) {
        char *n = strdup(v);

        if (!n)
                return -ENOMEM;
        free(*s);
        *s = n;
        return 0;
}

int udisks_loops_apply(UDisksFront *f, UDisksBlock *b, uint64_t diskseq) {
        UDisksLoop *l = udisks_loops_find(f, b->devnum);
        int r = 0;

        if (!l)
                return 0;
        if (diskseq != 0 && l->diskseq != 0 && diskseq != l->diskseq) {
                /* Bound anew since: someone else's now. */
                udisks_loops_forget(f, b->devnum);
                return 0;
        }
        b->setup_by_uid = l->uid;
        b->autoclear = l->autoclear;
        /* Marked as usermount's (no /dev/disk links, no probe by udev): its contents are
         * what the worker probed, and it is the user's volume, not ignored. */
        b->hint_ignore = false;
        if (isempty(b->id_type) && l->probe.fstype[0]) {
                char label[sizeof(l->probe.label)];

                um_escape(l->probe.label, label, sizeof(label));
                r = set_string(&b->id_usage, "filesystem");
                if (r >= 0)
                        r = set_string(&b->id_type, l->probe.fstype);
                if (r >= 0)
                        r = set_string(&b->id_label, label);
                if (r >= 0)
                        r = set_string(&b->id_uuid, l->probe.uuid);
                b->has_filesystem = true;
        }
        return r;
}

void udisks_loops_mounts_changed(UDisksFront *f, dev_t devnum) {
        UDisksLoop *l = udisks_loops_find(f, devnum);
        UDisksBlock *b = udisks_front_block_by_devnum(f, devnum);
        _cleanup_free_ const char **points = NULL;

        if (!l || !l->autoclear || !b)
                return;
        points = udisks_front_mount_points(f, b, true);
        if (points && !points[0])
                udisks_loops_forget(f, devnum);
}

/* ---- Manager.LoopSetup ------------------------------------------------------------------ */

void udisks_loops_set_up(Request *req, const LoopSetupReply *reply, int loop_fd,
                         int claim_fd) {
        UDisksFront *f = req->front_data;
        UDisksLoop *l;
        UDisksBlock *b;
        UDisksLoop *a = realloc(f->loops, (f->n_loops + 1) * sizeof(UDisksLoop));
        UmError e = {};
        int r;

        if (!a) {
                close_off_loop(loop_fd);
                safe_close(claim_fd);
                um_error_set(&e, UM_ERROR_KIND_FAILED, ENOMEM, "Out of memory.");
                (void) udisks_reply_error(req->call.message, &e);
                return;
        }
        f->loops = a;
        l = &f->loops[f->n_loops++];
        *l = (UDisksLoop) {
                .devnum = (dev_t) reply->devnum,
                .diskseq = reply->diskseq,
                .uid = req->call.caller.uid,
                .fd = loop_fd,
                .claim_fd = claim_fd,
                .probe = reply->probe,
        };
        /* The object first (InterfacesAdded), then the reply: udisksctl looks the path up
         * as soon as it has it. */
        r = udisks_front_refresh(f, l->devnum);
        b = udisks_front_block_by_devnum(f, (dev_t) reply->devnum);
        if (r < 0 || !b) {
                udisks_loops_forget(f, (dev_t) reply->devnum);
                um_error_set(&e, UM_ERROR_KIND_FAILED, r < 0 ? -r : ENODEV,
                             "The loop device %s went away as it was set up.", reply->device);
                (void) udisks_reply_error(req->call.message, &e);
                return;
        }
        (void) sd_bus_reply_method_return(req->call.message, "o", b->path);
}

int udisks_method_loop_setup(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UDisksFront *f = userdata;
        _cleanup_(request_freep) Request *req = NULL;
        UDisksOptions o = {};
        UmError e = {};
        int fd, r;

        r = sd_bus_message_read(m, "h", &fd);
        if (r < 0)
                return r;
        r = udisks_read_options(m, &o, &e);
        if (r < 0)
                return e.kind ? udisks_reply_error(m, &e) : r;
        req = request_new(f->manager, METHOD_LOOP_SETUP, m);
        if (!req)
                return -ENOMEM;
        r = call_set_source_fd(&req->call, fd, &e);
        if (r < 0)
                return e.kind ? udisks_reply_error(m, &e) : r;
        req->call.params.read_only = o.read_only;
        req->call.params.interactive = !o.no_interaction;
        req->call.loop_offset = o.offset;
        req->call.loop_size = o.size;
        /* "no-part-scan" is always in effect: usermount reads an image's partitions itself
         * (parttable.h), the kernel never does. */
        return udisks_start_request(f, TAKE_PTR(req));
}

/* ---- Loop.Delete, Loop.SetAutoclear -------------------------------------------------------- */

typedef struct LoopCall {
        MountCall call;
        UDisksFront *front;
        dev_t devnum;
        bool delete;
        bool autoclear;
} LoopCall;

static void loop_call_free(LoopCall *c) {
        call_done(&c->call);
        free(c);
}

static void on_loop_caller(void *userdata, int r, const UmError *error) {
        LoopCall *c = userdata;
        sd_bus_message *m = c->call.message;
        UDisksFront *f = c->front;
        _cleanup_free_ const char **points = NULL;

        /* Never answered by the bus: usermountd is stopping, the front may be gone. */
        if (r == -ECANCELED && !error)
                return loop_call_free(c);
        UDisksLoop *l = udisks_loops_find(f, c->devnum);
        UDisksBlock *b = udisks_front_block_by_devnum(f, c->devnum);
        if (r < 0) {
                (void) udisks_reply_error(m, error);
                return loop_call_free(c);
        }
        if (!l || !b) {
                (void) sd_bus_reply_method_errorf(m, UDISKS_ERROR "Failed",
                                                  "The loop device is gone.");
                return loop_call_free(c);
        }
        /* As udisks2's loop-delete-others and loop-modify-others, which need an
         * administrator: here only root may touch another user's. */
        if (c->call.caller.uid != 0 && c->call.caller.uid != l->uid) {
                (void) sd_bus_reply_method_errorf(m, UDISKS_ERROR "NotAuthorized",
                                                  "%s was set up by uid %u; only that user "
                                                  "and root may change or delete it.",
                                                  b->device, (unsigned) l->uid);
                return loop_call_free(c);
        }
        points = udisks_front_mount_points(f, b, true);
        if (c->delete && points && points[0]) {
                (void) sd_bus_reply_method_errorf(m, UDISKS_ERROR "DeviceBusy",
                                                  "%s is mounted at %s; unmount it first.",
                                                  b->device, udisks_front_mounted_where(f, b));
                return loop_call_free(c);
        }
        log_request(LOG_LEVEL_INFO, c->call.caller.uid, b->device,
                    c->delete ? "loop-delete" : "loop-autoclear",
                    c->delete ? "Let go of %s for uid %u." : "Autoclear of %s for uid %u: %s.",
                    b->device, (unsigned) c->call.caller.uid, c->autoclear ? "on" : "off");
        if (c->delete) {
                udisks_loops_forget(f, c->devnum);
        } else {
                l->autoclear = b->autoclear = c->autoclear;
                (void) sd_bus_emit_properties_changed(f->bus, b->path, LOOP_IFACE, "Autoclear",
                                                      NULL);
        }
        (void) sd_bus_reply_method_return(m, "");
        loop_call_free(c);
}

static int loop_call(sd_bus_message *m, UDisksBlock *b, bool delete, bool autoclear) {
        UDisksFront *f = udisks_front_current();
        LoopCall *c;

        if (!udisks_loops_find(f, b->devnum))
                return sd_bus_reply_method_errorf(m, UDISKS_ERROR "NotAuthorized",
                                                  "%s was not set up through this service's "
                                                  "LoopSetup; usermount does not change it.",
                                                  b->device);
        c = calloc(1, sizeof(LoopCall));
        if (!c)
                return -ENOMEM;
        call_init(&c->call, METHOD_UNMOUNT, m);
        c->front = f;
        c->devnum = b->devnum;
        c->delete = delete;
        c->autoclear = autoclear;
        caller_identify(f->manager->callers, &c->call, on_loop_caller, c);
        return 1;
}

int udisks_method_loop_delete(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UDisksOptions o = {};
        UmError e = {};
        int r = udisks_read_options(m, &o, &e);

        if (r < 0)
                return e.kind ? udisks_reply_error(m, &e) : r;
        return loop_call(m, userdata, true, false);
}

int udisks_method_loop_set_autoclear(sd_bus_message *m, void *userdata,
                                     sd_bus_error *ret_error) {
        UDisksOptions o = {};
        UmError e = {};
        int value = 0, r;

        r = sd_bus_message_read(m, "b", &value);
        if (r < 0)
                return r;
        r = udisks_read_options(m, &o, &e);
        if (r < 0)
                return e.kind ? udisks_reply_error(m, &e) : r;
        return loop_call(m, userdata, false, value);
}
