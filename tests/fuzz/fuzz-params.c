/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the arguments of Mount, MountFd and OpenMount as the bus edge (daemon/request-dbus.c)
 * reads them: the fuzz bytes build a real sd-bus message (method, device or fd, fstype,
 * options, and an a{sv} of any keys with variants of any type), which is sealed and read
 * back with bus_read_params() (the table-driven reader of busparams.c with the mount
 * methods' table), then the checks bus_parse_mount_call() makes on the strings
 * before it asks the bus who is calling (device_check_path(), the fstype allow-list,
 * policy_check_options_syntax()).
 *
 * The target keeps its own account of what it put in the dict and checks that the params
 * are accepted exactly when org.freedesktop.UserMount1(5) says they must be (known keys, each at
 * most once, of the right type, at most 32, "userns" only with idmap "namespace") and that the
 * parsed values are the ones sent.
 *
 * Input, bytes and NUL-terminated strings (S) in this order:
 *   method byte (% 3: OpenMount, MountFd, Mount), [S device for Mount], S fstype,
 *   S options, entry count byte (% 40), then per entry: key byte (< 0xe0: a known or
 *   almost known key, else S key), type byte (% 14, see type_sigs), the value.
 */
#include "request-dbus.h"
#include "conf.h"
#include "device.h"
#include "fuzz-bus.h"
#include "policy.h"

static const char *const keys[] = {
        "target", "read-only", "exec", "idmap", "userns", "interactive", "force", "",
};
enum { K_TARGET, K_READ_ONLY, K_EXEC, K_IDMAP, K_USERNS, K_INTERACTIVE, K_KNOWN = K_INTERACTIVE };

enum { T_BOOL, T_STRING, T_FD, T_U32, T_I32, T_U64, T_PATH, T_SIGNATURE, T_STRV, T_BYTES,
       T_VARIANT, T_STRUCT, T_DICT, T_DOUBLE, _T_MAX };
static const char *const type_sigs[_T_MAX] = {
        "b", "s", "h", "u", "i", "t", "o", "g", "as", "ay", "v", "(sb)", "a{sv}", "d",
};

/* What the dict holds, as far as the params parser cares. */
typedef struct Expect {
        bool valid;
        unsigned seen;
        const char *target;
        bool read_only, exec, interactive, userns;
        const char *idmap;
} Expect;

static int devnull = -EBADF;

static void setup(void) {
        if (devnull >= 0)
                return;
        devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        FUZZ_ASSERT(devnull >= 0);
}

static int append_value(sd_bus_message *m, FuzzInput *in, unsigned type, int *ret_bool,
                        const char **ret_string) {
        static const char *const paths[] = { "/", "/org/freedesktop/UserMount1", "/a/b" };
        static const char *const sigs[] = { "s", "a{sv}", "" };
        const char *s;
        uint64_t u;
        double d;
        int b, r;

        switch (type) {
        case T_BOOL:
                *ret_bool = b = fuzz_byte(in) & 1;
                return sd_bus_message_append_basic(m, 'b', &b);
        case T_STRING:
                *ret_string = s = fuzz_field(in);
                return sd_bus_message_append_basic(m, 's', s);
        case T_FD:
                return sd_bus_message_append_basic(m, 'h', &devnull);
        case T_U32:
        case T_I32:
                u = fuzz_number(in, 4);
                return sd_bus_message_append_basic(m, type == T_U32 ? 'u' : 'i', &u);
        case T_U64:
                u = fuzz_number(in, 8);
                return sd_bus_message_append_basic(m, 't', &u);
        case T_DOUBLE:
                u = fuzz_number(in, 8);
                memcpy(&d, &u, sizeof(d));
                return sd_bus_message_append_basic(m, 'd', &d);
        case T_PATH:
                return sd_bus_message_append_basic(m, 'o', paths[fuzz_byte(in) % 3]);
        case T_SIGNATURE:
                return sd_bus_message_append_basic(m, 'g', sigs[fuzz_byte(in) % 3]);
        case T_STRV: {
                unsigned n = fuzz_byte(in) % 4;

                r = sd_bus_message_open_container(m, 'a', "s");
                for (unsigned i = 0; r >= 0 && i < n; i++)
                        r = sd_bus_message_append_basic(m, 's', fuzz_field(in));
                return r < 0 ? r : sd_bus_message_close_container(m);
        }
        case T_BYTES: {
                unsigned n = fuzz_byte(in) % 16;
                uint8_t bytes[16];

                for (unsigned i = 0; i < n; i++)
                        bytes[i] = fuzz_byte(in);
                return sd_bus_message_append_array(m, 'y', bytes, n);
        }
        case T_VARIANT:
                return sd_bus_message_append(m, "v", "s", fuzz_field(in));
        case T_STRUCT:
                s = fuzz_field(in);
                return sd_bus_message_append(m, "(sb)", s, fuzz_byte(in) & 1);
        case T_DICT:
                r = sd_bus_message_open_container(m, 'a', "{sv}");
                if (r >= 0 && fuzz_byte(in) & 1)
                        r = sd_bus_message_append(m, "{sv}", fuzz_field(in), "b", 1);
                return r < 0 ? r : sd_bus_message_close_container(m);
        }
        return -EINVAL;
}

/* One dict entry; updates the expectation as org.freedesktop.UserMount1(5) defines the params. */
static int append_entry(sd_bus_message *m, FuzzInput *in, unsigned index, Expect *x) {
        uint8_t k = fuzz_byte(in);
        const char *key = k < 0xe0 ? keys[k % ELEMENTSOF(keys)] : fuzz_field(in);
        unsigned type = fuzz_byte(in) % _T_MAX, known = ELEMENTSOF(keys);
        const char *s = NULL;
        int b = 0, r;

        r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 's', key);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', type_sigs[type]);
        if (r >= 0)
                r = append_value(m, in, type, &b, &s);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;

        for (unsigned i = 0; i <= K_KNOWN; i++)
                if (streq(key, keys[i]))
                        known = i;
        if (index >= 32 || known > K_KNOWN || (x->seen & (1u << known))) {
                x->valid = false;
                return 0;
        }
        x->seen |= 1u << known;
        switch (known) {
        case K_TARGET:
                x->valid = x->valid && type == T_STRING;
                x->target = s;
                break;
        case K_READ_ONLY:
        case K_EXEC:
        case K_INTERACTIVE:
                x->valid = x->valid && type == T_BOOL;
                *(known == K_READ_ONLY ? &x->read_only : known == K_EXEC ? &x->exec :
                  &x->interactive) = b;
                break;
        case K_IDMAP:
                x->valid = x->valid && type == T_STRING &&
                        (streq(s, "none") || streq(s, "user") || streq(s, "namespace"));
                x->idmap = s;
                break;
        case K_USERNS:
                x->valid = x->valid && type == T_FD;
                x->userns = true;
                break;
        }
        return 0;
}

static void check_params(const MountParams *p, const Expect *x) {
        static const char *const modes[] = { [IDMAP_NONE] = "none", [IDMAP_USER] = "user",
                                             [IDMAP_NAMESPACE] = "namespace" };

        FUZZ_ASSERT(streq_ptr(p->target, x->target));
        FUZZ_ASSERT(p->read_only == x->read_only && p->exec == x->exec);
        FUZZ_ASSERT(p->interactive == x->interactive);
        FUZZ_ASSERT(p->idmap == IDMAP_NONE || p->idmap == IDMAP_USER ||
                    p->idmap == IDMAP_NAMESPACE);
        FUZZ_ASSERT(streq(modes[p->idmap], x->idmap ? x->idmap : "none"));
        FUZZ_ASSERT((p->userns_fd >= 0) == x->userns && p->userns_given == x->userns);
        FUZZ_ASSERT(!x->userns || p->idmap == IDMAP_NAMESPACE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const methods[] = { "OpenMount", "MountFd", "Mount" };
        static Conf *conf;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        MountParams p = { .userns_fd = -EBADF };
        Expect x = { .valid = true };
        const char *device = NULL, *fstype, *options;
        unsigned method, n;
        UmError e = {};
        FuzzInput in;
        int r;

        if (size > 16384 || !fuzz_input_init(&in, data, size))
                return 0;
        setup();
        if (!conf)
                FUZZ_ASSERT(conf_new_default(&conf) == 0);

        method = fuzz_byte(&in) % 3;
        r = sd_bus_message_new_method_call(fuzz_message_bus(), &m, "org.freedesktop.UserMount1",
                                           "/org/freedesktop/UserMount1",
                                           "org.freedesktop.UserMount1.Manager",
                                           methods[method]);
        FUZZ_ASSERT(r >= 0);
        if (method == 2)
                r = sd_bus_message_append_basic(m, 's', fuzz_field(&in));
        else
                r = sd_bus_message_append_basic(m, 'h', &devnull);
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", fuzz_field(&in), fuzz_field(&in));
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        n = fuzz_byte(&in) % 40;
        for (unsigned i = 0; r >= 0 && i < n; i++)
                r = append_entry(m, &in, i, &x);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                goto out; /* not a message a bus would carry (invalid UTF-8, ...) */
        if (x.userns && !(x.idmap && streq(x.idmap, "namespace")))
                x.valid = false;
        FUZZ_ASSERT(sd_bus_message_seal(m, 1, 0) >= 0);
        FUZZ_ASSERT(sd_bus_message_rewind(m, true) >= 0);

        /* As bus_parse_mount_call() reads and checks them. */
        if (method == 2) {
                FUZZ_ASSERT(sd_bus_message_read(m, "sss", &device, &fstype, &options) > 0);
        } else {
                int fd;

                FUZZ_ASSERT(sd_bus_message_read(m, "hss", &fd, &fstype, &options) > 0);
                FUZZ_ASSERT(fd >= 0);
        }
        r = bus_read_params(m, &p, &e);
        if (r >= 0) {
                FUZZ_ASSERT(x.valid && e.kind == UM_ERROR_KIND_NONE);
                check_params(&p, &x);
        } else {
                FUZZ_ASSERT(!x.valid);
                FUZZ_ASSERT(e.kind == UM_ERROR_KIND_INVALID_ARGUMENT && e.message[0]);
        }
        if (device) {
                e = (UmError){};
                r = device_check_path(device, &e);
                FUZZ_ASSERT(r == 0 || (r == -EINVAL && e.kind == UM_ERROR_KIND_INVALID_ARGUMENT));
                if (r == 0)
                        FUZZ_ASSERT(strncmp(device, "/dev/", 5) == 0 && !strstr(device, "/../"));
        }
        (void) conf_fstype_allowed(conf, fstype);
        (void) fstype_allowed(fstype);
        e = (UmError){};
        r = policy_check_options_syntax(options, &e);
        FUZZ_ASSERT((r == 0) == (e.kind == UM_ERROR_KIND_NONE));
out:
        free(p.target); /* p.userns_fd is m's, borrowed: closed with m */
        fuzz_input_done(&in);
        return 0;
}
