/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the options every method of the UDisks2 front takes, as the front reads them: the
 * fuzz bytes build a real sd-bus message with an a{sv} of the keys clients send (and
 * others) with variants of any type, which is sealed and read back with
 * udisks_read_options() (daemon/udisks-methods.c); then the mount options it returns go
 * through udisks_translate_options().
 *
 * Checked: a known key with another type than udisks gives it is InvalidArgument, every
 * other dict is read, and the values read are the ones sent; the translated options hold
 * none of the words the front takes out (rw, ro, exec, nodev, nosuid, noexec, flush), no
 * empty item, and are never longer than what came in; "ro" and "exec" set their params.
 *
 * Input: entry count byte (% 24), then per entry: key byte (< 0xe0: one of the known
 * keys or an almost known one, else a field), type byte (% 6: b, s, t, u, as, a{sv}),
 * the value (a byte, a field, 8 bytes).
 */
#include "fuzz-bus.h"
#include "udisks-front.h"

static const char *const keys[] = {
        "fstype", "options", "auth.no_user_interaction", "force", "read-only", "offset",
        "size", "fstype ", "Options",
};
static const char *const types[] = { "b", "s", "t", "u", "as", "a{sv}" };

/* The type udisks gives key, or NULL for one it ignores. */
static const char *key_type(const char *key) {
        if (streq(key, "fstype") || streq(key, "options"))
                return "s";
        if (streq(key, "auth.no_user_interaction") || streq(key, "force") ||
            streq(key, "read-only"))
                return "b";
        if (streq(key, "offset") || streq(key, "size"))
                return "t";
        return NULL;
}

/* What the last entry of each known key carried, to compare with what was read. */
typedef struct Sent {
        bool valid;
        const char *fstype, *options;
        int no_interaction, force, read_only;
        uint64_t offset, size;
} Sent;

static int append_entry(sd_bus_message *m, FuzzInput *in, Sent *x) {
        uint8_t k = fuzz_byte(in);
        const char *key = k < 0xe0 ? keys[k % ELEMENTSOF(keys)] : fuzz_field(in);
        const char *type = types[fuzz_byte(in) % ELEMENTSOF(types)];
        const char *want = key_type(key);
        int r;

        r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append_basic(m, 's', key);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', type);
        if (r < 0)
                return r;
        if (want && !streq(want, type))
                x->valid = false;
        if (streq(type, "b")) {
                int b = fuzz_byte(in) & 1;

                r = sd_bus_message_append_basic(m, 'b', &b);
                if (want && streq(want, "b"))
                        *(streq(key, "force") ? &x->force :
                          streq(key, "read-only") ? &x->read_only : &x->no_interaction) = b;
        } else if (streq(type, "s")) {
                const char *s = fuzz_field(in);

                r = sd_bus_message_append_basic(m, 's', s);
                if (want && streq(want, "s"))
                        *(streq(key, "fstype") ? &x->fstype : &x->options) = s;
        } else if (streq(type, "t")) {
                uint64_t t = fuzz_number(in, 8);

                r = sd_bus_message_append_basic(m, 't', &t);
                if (want && streq(want, "t"))
                        *(streq(key, "offset") ? &x->offset : &x->size) = t;
        } else if (streq(type, "u")) {
                uint32_t u = (uint32_t) fuzz_number(in, 4);

                r = sd_bus_message_append_basic(m, 'u', &u);
        } else if (streq(type, "as")) {
                r = sd_bus_message_append(m, "as", 2, fuzz_field(in), fuzz_field(in));
        } else {
                r = sd_bus_message_append(m, "a{sv}", 1, fuzz_field(in), "s", fuzz_field(in));
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static bool has_item(const char *list, const char *item) {
        size_t n = strlen(item);

        for (const char *p = list; p && *p;) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t) (end - p) : strlen(p);

                if (len == n && strncmp(p, item, n) == 0)
                        return true;
                p = end ? end + 1 : NULL;
        }
        return false;
}

static void check_translated(const char *in) {
        static const char *const gone[] = { "rw", "ro", "exec", "nodev", "nosuid", "noexec",
                                            "flush" };
        _cleanup_free_ char *out = NULL;
        MountParams p = { .userns_fd = -EBADF };

        FUZZ_ASSERT(udisks_translate_options(in, &p, &out) == 0);
        FUZZ_ASSERT(strlen(out) <= strlen(in));
        FUZZ_ASSERT(out[0] != ',' && !strstr(out, ",,"));
        FUZZ_ASSERT(!out[0] || out[strlen(out) - 1] != ',');
        for (size_t i = 0; i < ELEMENTSOF(gone); i++)
                FUZZ_ASSERT(!has_item(out, gone[i]));
        FUZZ_ASSERT(p.read_only == has_item(in, "ro"));
        FUZZ_ASSERT(p.exec == has_item(in, "exec"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        UDisksOptions o = {};
        Sent x = { .valid = true };
        UmError e = {};
        FuzzInput in;
        unsigned n;
        int r;

        if (size > 16384 || !fuzz_input_init(&in, data, size))
                return 0;
        r = sd_bus_message_new_method_call(fuzz_message_bus(), &m, "org.freedesktop.UDisks2",
                                           "/org/freedesktop/UDisks2/block_devices/sda1",
                                           "org.freedesktop.UDisks2.Filesystem", "Mount");
        FUZZ_ASSERT(r >= 0);
        r = sd_bus_message_open_container(m, 'a', "{sv}");
        n = fuzz_byte(&in) % 24;
        for (unsigned i = 0; r >= 0 && i < n; i++)
                r = append_entry(m, &in, &x);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                goto out; /* not a message a bus would carry (invalid UTF-8, ...) */
        FUZZ_ASSERT(sd_bus_message_seal(m, 1, 0) >= 0);
        FUZZ_ASSERT(sd_bus_message_rewind(m, true) >= 0);

        r = udisks_read_options(m, &o, &e);
        if (!x.valid) {
                FUZZ_ASSERT(r < 0 && e.kind == UM_ERROR_KIND_INVALID_ARGUMENT && e.message[0]);
                goto out;
        }
        FUZZ_ASSERT(r >= 0 && e.kind == UM_ERROR_KIND_NONE);
        FUZZ_ASSERT(streq(strempty(o.fstype), strempty(x.fstype)));
        FUZZ_ASSERT(streq(strempty(o.options), strempty(x.options)));
        FUZZ_ASSERT(o.force == !!x.force && o.read_only == !!x.read_only &&
                    o.no_interaction == !!x.no_interaction);
        FUZZ_ASSERT(o.offset == x.offset && o.size == x.size);
        check_translated(strempty(o.options));
out:
        fuzz_input_done(&in);
        return 0;
}
