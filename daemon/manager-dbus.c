/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * org.freedesktop.UserMount1.Manager on the system bus (manager-dbus.h; the contract is
 * org.freedesktop.UserMount1(5)): the connection and the name, the vtable and its
 * properties, each method's entry into the request pipeline, and the subscriptions.
 */
#include <stdlib.h>

#include "caller.h"
#include "config.h"
#include "drivertable.h"
#include "log.h"
#include "manager-dbus.h"
#include "pipeline.h"
#include "procfs.h"
#include "request-dbus.h"
#include "request.h"
#include "usermount-names.h"

/* Subscribe, once the caller is known: the connection receives the signals of its own
 * mounts from now on; polkit may widen that later (everybody's, bus_reply_subscribe()). */
static int bus_subscribe(Request *req, UmError *error) {
        const Caller *caller = &req->call.caller;
        int r;

        /* Exiting after being idle: the next instance is the one to subscribe to. */
        if (req->manager->idle_exiting)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EAGAIN,
                                    "usermountd was exiting after being idle when this request "
                                    "came; send it again, and the instance that is running now "
                                    "answers it.");
        /* The connection's NameOwnerChanged comes after this call (and after the bus's
         * answer about the connection, caller.h), so it finds the subscription. */
        req->subscribed = !subscribers_has(&req->manager->subscribers,
                                           sd_bus_message_get_sender(req->call.message));
        r = subscribers_add(&req->manager->subscribers,
                            sd_bus_message_get_sender(req->call.message), caller->uid,
                            caller->uid == 0);
        if (r < 0)
                req->subscribed = false;
        if (r == -EUSERS)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EUSERS,
                                    "uid %u has %u subscriptions already, the most it may; close "
                                    "some of the connections that hold them.",
                                    (unsigned) caller->uid, SUBSCRIBERS_MAX_PER_UID);
        return r;
}

/* Answers req with error and frees it; logged, as who called is known only now. */
static void bus_refuse(Request *req, const UmError *error) {
        const char *member = sd_bus_message_get_member(req->call.message);
        const char *sender = strempty(sd_bus_message_get_sender(req->call.message));
        const Caller *caller = &req->call.caller;

        if (caller->pid > 0)
                log_request(LOG_LEVEL_INFO, caller->uid, NULL, "refuse",
                            "Refused %s of uid %u from %s: %s", member, (unsigned) caller->uid,
                            sender, error->message);
        else
                log_request(LOG_LEVEL_INFO, LOG_UID_NONE, NULL, "refuse",
                            "Refused %s from %s: %s", member, sender, error->message);
        (void) bus_reply_error(req->call.message, error);
        request_free(req);
}

/* The caller stage is done (caller.h): what needs the caller's process completes the call,
 * then the core takes the request. */
static void on_caller_known(void *userdata, int r, const UmError *caller_error) {
        Request *req = userdata;
        UmError error = {};

        if (r == -ECANCELED && !caller_error) {
                /* Never answered by the bus: usermountd is stopping (caller.h). */
                request_free(req);
                return;
        }
        if (r < 0)
                return bus_refuse(req, caller_error);
        switch (req->call.method) {
        case METHOD_OPEN_MOUNT:
        case METHOD_MOUNT_FD:
        case METHOD_MOUNT:
                r = bus_read_userns(&req->call, &error);
                /* The call is complete. The namespace is the one thing of it the request
                 * consumes (it closes it once the probe has read the maps): handed over. */
                if (r >= 0)
                        req->userns_fd = TAKE_FD(req->call.params.userns_fd);
                break;
        case METHOD_SUBSCRIBE:
                r = bus_subscribe(req, &error);
                break;
        case METHOD_UNMOUNT:
        case METHOD_LIST_MOUNTS:
        case METHOD_LOOP_SETUP: /* the UDisks2 front's, never this edge's */
        case METHOD_DRIVE_EJECT:
                break;
        }
        if (r < 0 && error.kind == UM_ERROR_KIND_NONE)
                um_error_set(&error, UM_ERROR_KIND_FAILED, -r, "Could not take the request: %s.",
                             strerror(-r));
        if (r < 0)
                return bus_refuse(req, &error);
        pipeline_start(req);
}

/*
 * Every method: parses and validates m into a new request's call (bus_parse_call()) and
 * hands the request to the caller stage, which owns it from then on; the reply comes later
 * (the call keeps a reference on the message). A refused call is answered here.
 */
static int bus_start_call(sd_bus_message *m, Manager *manager, CallMethod method) {
        _cleanup_(request_freep) Request *req = NULL;
        UmError error = {};
        int r;

        req = request_new(manager, method, m);
        if (!req)
                return -ENOMEM;
        r = bus_parse_call(&req->call, req->conf, &error);
        if (r < 0 && error.kind == UM_ERROR_KIND_NONE)
                return r;
        if (r < 0) {
                (void) bus_reply_error(m, &error);
                return 1; /* refused, and answered: the call is handled */
        }
        caller_identify(manager->callers, &req->call, on_caller_known, req);
        TAKE_PTR(req);
        return 1;
}

static int method_open_mount(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_OPEN_MOUNT);
}

static int method_mount_fd(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_MOUNT_FD);
}

static int method_mount(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_MOUNT);
}

static int method_unmount(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_UNMOUNT);
}

static int method_list_mounts(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_LIST_MOUNTS);
}

/* Subscribe(): the caller's connection receives the signals of the mounts it may see. */
static int method_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_SUBSCRIBE);
}

static int method_unsubscribe(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Manager *manager = userdata;

        (void) subscribers_remove(&manager->subscribers, sd_bus_message_get_sender(m));
        return sd_bus_reply_method_return(m, NULL);
}

/* A connection closed: its unique name lost its owner, and will never be used again.
 * Whatever was kept about it goes: a subscription, and the bus's answer about it. */
static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Manager *manager = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;
        if (name[0] == ':' && isempty(new_owner)) {
                (void) subscribers_remove(&manager->subscribers, name);
                (void) caller_cache_forget(manager->callers, name);
        }
        return 0;
}

static int bus_watch_subscribers(Manager *m) {
        /* Only names that lost their owner (arg2 empty): not every connection's coming. */
        return sd_bus_add_match_async(m->bus, &m->name_owner_slot,
                                      "type='signal',sender='org.freedesktop.DBus',"
                                      "path='/org/freedesktop/DBus',"
                                      "interface='org.freedesktop.DBus',"
                                      "member='NameOwnerChanged',arg2=''",
                                      on_name_owner_changed, NULL, m);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *ret_error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static int property_get_supported_filesystems(sd_bus *bus, const char *path,
                                              const char *interface, const char *property,
                                              sd_bus_message *reply, void *userdata,
                                              sd_bus_error *ret_error) {
        return bus_append_supported_filesystems(reply, userdata);
}

int bus_append_supported_filesystems(sd_bus_message *reply, Manager *m) {
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        for (const char *const *t = fstype_names(); *t; t++) {
                /* Either driver: the kernel's, or a userspace one (fusedriver.h). */
                if (!conf_fstype_allowed(m->conf, *t) ||
                    (!proc_has_filesystem(*t) &&
                     (!fusedriver_fuse_present() || !fusedriver_find(*t))))
                        continue;
                r = sd_bus_message_append(reply, "s", *t);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("SupportedFilesystems", "as", property_get_supported_filesystems, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        /* UNPRIVILEGED: any user may call; polkit decides what they may do. */
        SD_BUS_METHOD_WITH_NAMES("Mount", "sssa{sv}",
                                 SD_BUS_PARAM(device) SD_BUS_PARAM(fstype) SD_BUS_PARAM(options)
                                 SD_BUS_PARAM(params),
                                 "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info),
                                 method_mount, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("MountFd", "hssa{sv}",
                                 SD_BUS_PARAM(source) SD_BUS_PARAM(fstype) SD_BUS_PARAM(options)
                                 SD_BUS_PARAM(params),
                                 "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info),
                                 method_mount_fd, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("OpenMount", "hssa{sv}",
                                 SD_BUS_PARAM(source) SD_BUS_PARAM(fstype) SD_BUS_PARAM(options)
                                 SD_BUS_PARAM(params),
                                 "ha{sv}", SD_BUS_PARAM(mount) SD_BUS_PARAM(info),
                                 method_open_mount, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Unmount", "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(params),
                                 "", "", method_unmount, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ListMounts", "a{sv}", SD_BUS_PARAM(params),
                                 "aa{sv}", SD_BUS_PARAM(mounts),
                                 method_list_mounts, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Subscribe", "", "", method_subscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Unsubscribe", "", "", method_unsubscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_NAMES("MountAdded", "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info), 0),
        SD_BUS_SIGNAL_WITH_NAMES("MountRemoved", "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info), 0),
        SD_BUS_VTABLE_END,
};

/* Without the bus nobody can reach the daemon, and nobody can be told: exit, and let the
 * service manager or the next call start it again. */
static void on_bus_disconnect(void *userdata) {
        Manager *m = userdata;

        (void) sd_event_exit(m->event, EXIT_FAILURE);
}

/* The answer to RequestName: ready, or (the name is another's) an exit with failure. */
static int on_name_acquired(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        uint32_t result = 0;

        if (!e && sd_bus_message_read(reply, "u", &result) >= 0 &&
            (result == 1 || result == 4)) /* primary owner, or already it */ {
                log_info("usermountd %s ready on the system bus as %s; security labels on "
                         "mounts: %s.", PACKAGE_VERSION, UM_BUS_NAME,
                         m->lsm == LABEL_LSM_NONE ? "none (no labelling LSM)"
                                                  : label_lsm_to_string(m->lsm));
                return 0;
        }
        if (e)
                log_error("Failed to acquire %s on the system bus: %s", UM_BUS_NAME,
                          e->message ?: e->name);
        else
                log_error("Failed to acquire %s on the system bus: another process owns it.",
                          UM_BUS_NAME);
        (void) sd_event_exit(m->event, EXIT_FAILURE);
        return 0;
}

/* Who a bus name's messages are charged to (busfds.h): the user of the uid the daemon
 * learnt for it, or nobody known. */
static uid_t manager_owner_of_sender(const char *sender, void *userdata) {
        Manager *m = userdata;
        const CallerCreds *creds = m->callers ? caller_cache_get(m->callers, sender) : NULL;

        return creds ? owner_map_lookup(&m->owners, creds->uid) : (uid_t) -1;
}

int manager_connect_bus(Manager *m) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        /* Every fd the daemon keeps is open before it takes its name (the signals' too,
         * service_watch_signals()): once the name is on the bus, clients may rely on it.
         * (sd-event still opens and closes one fd in the first loop iteration; the test
         * suite counts fds once the daemon answered a call.) */
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the system bus: %m");
        return manager_attach_bus(m, TAKE_PTR(bus));
}

int manager_attach_bus(Manager *m, sd_bus *bus) {
        int r;

        m->bus = bus;
        r = caller_cache_new(m->bus, m->event, &m->users, &m->callers);
        if (r < 0)
                return log_error_errno(r, "Failed to make the cache of callers: %m");
        r = sd_bus_add_object_vtable(m->bus, &m->object_slot, UM_OBJECT_PATH,
                                     UM_MANAGER_INTERFACE, manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to export %s: %m", UM_OBJECT_PATH);
        /* Not sd_bus_attach_event(): the fds callers attach to messages are kept off the
         * main loop's close() (busfds.h). */
        r = busfds_new(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL, on_bus_disconnect, m,
                       &m->busfds);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        busfds_set_owner_lookup(m->busfds, manager_owner_of_sender, m);
        r = bus_watch_subscribers(m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the bus for closed connections: %m");
        /* Asynchronously, as every other call of ours: a synchronous call reads what
         * arrives meanwhile (the calls the bus queued while it activated us come before the
         * answer) past busfds, which would let sd-bus close their fds on the main loop. */
        r = sd_bus_request_name_async(m->bus, NULL, UM_BUS_NAME, 0, on_name_acquired, m);
        if (r < 0)
                return log_error_errno(r, "Failed to ask for %s on the system bus: %m",
                                       UM_BUS_NAME);
        return 0;
}
