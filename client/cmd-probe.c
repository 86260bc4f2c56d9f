/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount probe: the partition table of a disk image or block device and what each
 * partition holds, read here with libblkid (parttable.h) with the caller's own access to
 * the file; usermountd is not asked. For choosing --partition of usermount mount.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "args.h"
#include "mount-json.h"
#include "output.h"
#include "parttable.h"
#include "table.h"
#include "cli.h"

typedef struct ProbeArgs {
        const char *source;
        bool json;
} ProbeArgs;

static void probe_help(void) {
        printf("Usage: usermount probe [OPTIONS] IMAGE|DEVICE\n"
               "\n"
               "Show the partition table (GPT or MBR) of a disk image or block device, and what\n"
               "each partition holds, to choose the partition that 'usermount mount\n"
               "--partition=' mounts. usermount reads the file itself, with your permissions;\n"
               "usermountd is not asked, and nothing is mounted.\n"
               "\n"
               "The first line names the kind of table and the size of the disk. Then the\n"
               "table has one line per partition, and these columns:\n"
               "  #       the partition's number in the table (MBR logical partitions count\n"
               "          from 5): what --partition=N takes\n"
               "  TYPE    the partition type: its name in the Discoverable Partitions\n"
               "          Specification (such as root-x86-64, usr-arm64, esp, xbootldr, swap,\n"
               "          home, srv, var, tmp, linux-generic), else the GPT type GUID or the\n"
               "          MBR type byte (such as 0x83); 'extended' marks an MBR extended\n"
               "          partition\n"
               "  NAME    the GPT partition name (GPT's partition label)\n"
               "  UUID    the GPT partition UUID (MBR: the disk id and the number)\n"
               "  FSTYPE  the filesystem (or swap, encrypted volume...) found in the\n"
               "          partition\n"
               "  LABEL   that filesystem's label\n"
               "  SIZE    the partition's size, in binary units (1K = 1024 bytes)\n"
               "A missing value is shown as '-', and characters that could control the\n"
               "terminal as \\xNN. A source without a partition table gets the one line\n"
               "\"SOURCE has no partition table.\"\n"
               "\n"
               "Options:\n"
               "      --json  Print one JSON object instead: \"source\", \"table\" (\"gpt\",\n"
               "              \"dos\" for MBR, or null without a table), \"size\" (bytes) and\n"
               "              \"partitions\", an array of objects with the keys number, start\n"
               "              and size (bytes), type, type-name, name, uuid, fstype, usage,\n"
               "              label, fs-uuid (strings; absent when empty), and extended and\n"
               "              beyond-end (booleans; a partition that reaches past the end of\n"
               "              the disk is not probed).\n"
               "  -h, --help  Show this help.\n"
               "\n"
               "Examples:\n"
               "  usermount probe disk.img\n"
               "  usermount mount --partition=2 disk.img ~/disk\n"
               "  usermount probe --json raspios.img | jq '.partitions[] | select(.fstype)'\n"
               "\n"
               "Exit status: 0 on success, 4 if the source cannot be opened or read as a\n"
               "disk, or its table has more than %u partitions; otherwise as listed in\n"
               "usermount --help.\n", PARTTABLE_MAX);
}

/* "512B", "4.0K", "8.0M", "24.0G": lsblk's units. */
static void format_size(uint64_t bytes, char *buf, size_t n) {
        static const char units[] = "KMGTPE";
        double v = (double) bytes;
        size_t u = 0;

        if (bytes < 1024) {
                snprintf(buf, n, "%" PRIu64 "B", bytes);
                return;
        }
        for (v /= 1024; v >= 1024 && u + 1 < sizeof(units) - 1; u++)
                v /= 1024;
        snprintf(buf, n, "%.1f%c", v, units[u]);
}

static const char *table_kind(const char *type) {
        if (streq(type, "gpt"))
                return "GPT";
        if (streq(type, "dos"))
                return "MBR";
        return type;
}

static int add_row(Table *t, const PartEntry *e) {
        char number[16], size[32];
        const char *type = e->extended ? "extended" :
                           !isempty(e->type_name) ? e->type_name : e->type;
        int r = 0;

        snprintf(number, sizeof(number), "%" PRIu32, e->number);
        format_size(e->size, size, sizeof(size));
        r = table_add_cell(t, number);
        if (r >= 0)
                r = table_add_cell(t, type);
        if (r >= 0)
                r = table_add_cell(t, e->name);
        if (r >= 0)
                r = table_add_cell(t, e->uuid);
        if (r >= 0)
                r = table_add_cell(t, e->beyond_end ? "(past the end)" : e->fstype);
        if (r >= 0)
                r = table_add_cell(t, e->label);
        if (r >= 0)
                r = table_add_cell(t, size);
        return r;
}

static ExitStatus print_human(const ProbeArgs *args, const PartTable *pt) {
        static const char *const headers[] = { "#", "TYPE", "NAME", "UUID", "FSTYPE", "LABEL",
                                               "SIZE" };
        _cleanup_free_ char *source = output_escape(args->source), *kind = NULL, *text = NULL;
        _cleanup_(table_freep) Table *t = NULL;
        char size[32];
        int r = 0;

        if (!source) {
                log_error_errno(ENOMEM, "%m");
                return EXIT_STATUS_FAILURE;
        }
        if (isempty(pt->type)) {
                printf("%s has no partition table.\n", source);
                return EXIT_STATUS_OK;
        }
        kind = output_escape(table_kind(pt->type));
        t = table_new(headers, ELEMENTSOF(headers));
        for (size_t i = 0; t && r >= 0 && i < pt->n_entries; i++)
                r = add_row(t, &pt->entries[i]);
        if (!t || !kind || r < 0 || table_format(t, &text) < 0) {
                log_error_errno(ENOMEM, "Cannot format the table: %m");
                return EXIT_STATUS_FAILURE;
        }
        format_size(pt->disk_size, size, sizeof(size));
        printf("%s: %s partition table, %s, %zu partition%s\n", source, kind, size,
               pt->n_entries, pt->n_entries == 1 ? "" : "s");
        if (pt->n_entries > 0)
                fputs(text, stdout);
        return EXIT_STATUS_OK;
}

/* Adds s under key, escaped as on the terminal (JSON strings must be UTF-8); nothing for "". */
static int json_add_string(json_object *o, const char *key, const char *s) {
        _cleanup_free_ char *e = NULL;
        json_object *v;

        if (isempty(s))
                return 0;
        e = output_escape(s);
        v = e ? json_object_new_string(e) : NULL;
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int json_add_value(json_object *o, const char *key, json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static json_object *entry_to_json(const PartEntry *e) {
        json_object *o = json_object_new_object();

        if (!o || json_add_value(o, "number", json_object_new_int64(e->number)) < 0 ||
            json_add_value(o, "start", json_object_new_uint64(e->start)) < 0 ||
            json_add_value(o, "size", json_object_new_uint64(e->size)) < 0 ||
            json_add_string(o, "type", e->type) < 0 ||
            json_add_string(o, "type-name", e->type_name) < 0 ||
            json_add_string(o, "name", e->name) < 0 || json_add_string(o, "uuid", e->uuid) < 0 ||
            json_add_string(o, "fstype", e->fstype) < 0 ||
            json_add_string(o, "usage", e->usage) < 0 ||
            json_add_string(o, "label", e->label) < 0 ||
            json_add_string(o, "fs-uuid", e->fsuuid) < 0 ||
            json_add_value(o, "extended", json_object_new_boolean(e->extended)) < 0 ||
            json_add_value(o, "beyond-end", json_object_new_boolean(e->beyond_end)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static ExitStatus print_json(const ProbeArgs *args, const PartTable *pt) {
        _cleanup_(json_object_putp) json_object *top = json_object_new_object();
        json_object *parts = json_object_new_array();
        int r;

        r = top && parts ? json_add_string(top, "source", args->source) : -ENOMEM;
        /* No table: null (json-c's NULL object). */
        if (r >= 0 && isempty(pt->type))
                r = json_object_object_add(top, "table", NULL) < 0 ? -ENOMEM : 0;
        else if (r >= 0)
                r = json_add_string(top, "table", pt->type);
        if (r >= 0)
                r = json_add_value(top, "size", json_object_new_uint64(pt->disk_size));
        for (size_t i = 0; r >= 0 && i < pt->n_entries; i++) {
                json_object *e = entry_to_json(&pt->entries[i]);

                r = e && json_object_array_add(parts, e) >= 0 ? 0 : -ENOMEM;
                if (r < 0)
                        json_object_put(e);
        }
        if (r >= 0) {
                r = json_add_value(top, "partitions", parts);
                parts = NULL;
        }
        json_object_put(parts);
        if (r < 0) {
                log_error_errno(ENOMEM, "Cannot format the table: %m");
                return EXIT_STATUS_FAILURE;
        }
        puts(json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY |
                                                         JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
        return EXIT_STATUS_OK;
}

ExitStatus probe_read_table(const char *source, int source_fd, PartTable *ret) {
        _cleanup_free_ char *e = output_escape(source);
        _cleanup_close_ int fd = -EBADF;
        char path[64];
        struct stat st;
        int r;

        /* An fd of ours (mount): a read-only description of its own, so that libblkid
         * does not move the offset of the one usermountd gets. */
        if (source_fd >= 0) {
                snprintf(path, sizeof(path), "/proc/self/fd/%d", source_fd);
                source = path;
        }
        /* Looked at before it is opened: a FIFO must not block us. */
        if (stat(source, &st) < 0) {
                log_error_errno(errno, "Cannot open %s: %m", strempty(e));
                return EXIT_STATUS_REFUSED;
        }
        if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
                log_error("%s is neither a disk image (a regular file) nor a block device.",
                          strempty(e));
                return EXIT_STATUS_REFUSED;
        }
        fd = open(source, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                log_error_errno(errno, "Cannot open %s: %m", strempty(e));
                return EXIT_STATUS_REFUSED;
        }
        r = parttable_read(fd, ret);
        if (r == -E2BIG) {
                log_error("The partition table of %s has more than %u partitions, the most "
                          "usermount reads.", strempty(e), PARTTABLE_MAX);
                return EXIT_STATUS_REFUSED;
        }
        if (r < 0) {
                log_error_errno(-r, "Cannot read the partition table of %s: %m", strempty(e));
                return r == -ENOMEM ? EXIT_STATUS_FAILURE : EXIT_STATUS_REFUSED;
        }
        return EXIT_STATUS_OK;
}

static int probe_parse_argv(int argc, char *argv[], ProbeArgs *args) {
        int r = args_parse_json_operand(argc, argv, probe_help, &args->json, &args->source);

        if (r > 0 && isempty(args->source)) {
                log_error("Missing IMAGE or DEVICE.");
                return -EINVAL;
        }
        return r;
}

int verb_probe(int argc, char *argv[]) {
        _cleanup_free_ PartTable *pt = NULL;
        ProbeArgs args = {};
        ExitStatus status;
        int r;

        r = probe_parse_argv(argc, argv, &args);
        if (r < 0)
                return usage_hint("probe");
        if (r == 0)
                return EXIT_STATUS_OK;

        pt = calloc(1, sizeof(PartTable));
        if (!pt) {
                log_error_errno(ENOMEM, "%m");
                return EXIT_STATUS_FAILURE;
        }
        status = probe_read_table(args.source, -EBADF, pt);
        if (status != EXIT_STATUS_OK)
                return status;
        return args.json ? print_json(&args, pt) : print_human(&args, pt);
}
