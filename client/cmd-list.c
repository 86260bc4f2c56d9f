/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount list: the mounts usermountd keeps track of (ListMounts), as a table for people
 * or as JSON for scripts.
 */
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>

#include "bus-client.h"
#include "mount-info.h"
#include "mount-json.h"
#include "mount-table.h"
#include "args.h"
#include "output.h"
#include "cli.h"

typedef struct ListArgs {
        bool json;
} ListArgs;

static void list_help(void) {
        printf("Usage: usermount list [OPTIONS]\n"
               "\n"
               "List the mounts that usermountd made and keeps track of: your own, or everyone's\n"
               "if you are root or authorized to unmount other users' mounts. Mounts that\n"
               "usermount attached itself inside a namespace of your own are not listed.\n"
               "\n"
               "The table has one line per mount, and these columns:\n"
               "  MOUNT POINT  where the filesystem is mounted\n"
               "  DEVICE       the block device, or for an image the image file\n"
               "  TYPE         the filesystem type\n"
               "  LABEL        the filesystem's label\n"
               "  OWNER        the user who mounted it (the uid if it has no name)\n"
               "  CREATED      when it was mounted, in local time\n"
               "  OPTIONS      the locked mount flags (nodev, nosuid, noexec, ro, idmap), then\n"
               "               the filesystem options\n"
               "A missing value is shown as '-', and characters that could control the\n"
               "terminal as \\xNN. Without mounts, the only line is \"No mounts.\".\n"
               "\n"
               "Options:\n"
               "      --json  Print a JSON array instead, one object per mount, with the keys\n"
               "              and types of usermountd's info dict: mount-point, device,\n"
               "              backing-file, fstype, label, uuid, options (strings), attributes\n"
               "              (array of strings), idmap (string), mount-id, owner-uid and\n"
               "              created-usec (numbers; created-usec counts microseconds since\n"
               "              1970). Keys usermountd did not send are absent; keys a newer\n"
               "              usermountd adds appear too. Without mounts: [].\n"
               "  -h, --help  Show this help.\n"
               "\n"
               "Examples:\n"
               "  usermount list\n"
               "  usermount list --json | jq -r '.[].\"mount-point\"'\n"
               "\n"
               "Exit status: 0 on success, otherwise as listed in usermount --help.\n");
}

/* The user name of uid, else the uid as text, into a new string; NULL when out of memory. */
static char *owner_name(uint32_t uid) {
        struct passwd pw, *result = NULL;
        char buf[4096], *name;

        if (getpwuid_r((uid_t) uid, &pw, buf, sizeof(buf), &result) == 0 && result &&
            !isempty(result->pw_name))
                return strdup(result->pw_name);
        if (asprintf(&name, "%" PRIu32, uid) < 0)
                return NULL;
        return name;
}

static ExitStatus list_print_json(const MountList *list) {
        _cleanup_(json_object_putp) json_object *mounts = NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = mount_json_from_list(list->src, list->n, &mounts);
        if (r < 0) {
                log_error_errno(r, "usermountd sent a list of mounts this usermount cannot "
                                "read: %m");
                return EXIT_STATUS_FAILURE;
        }
        r = mount_json_format(mounts, true, &text);
        if (r < 0) {
                log_error_errno(r, "Cannot format the list of mounts: %m");
                return EXIT_STATUS_FAILURE;
        }
        puts(text);
        return EXIT_STATUS_OK;
}

/* Adds the rows of infos to t. Returns 0 or -ENOMEM. */
static int list_fill_table(Table *t, const MountInfo *infos, size_t n) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *owner = NULL;
                int r;

                if (infos[i].owner_uid != MOUNT_INFO_UID_INVALID) {
                        owner = owner_name(infos[i].owner_uid);
                        if (!owner)
                                return -ENOMEM;
                }
                r = mount_table_add(t, &infos[i], owner);
                if (r < 0)
                        return r;
        }
        return 0;
}

static ExitStatus list_print_table(const MountList *list) {
        _cleanup_(table_freep) Table *t = NULL;
        _cleanup_free_ char *text = NULL;
        const MountInfo *infos = list->infos;
        size_t n = list->n;
        int r;

        if (n == 0) {
                puts("No mounts.");
                return EXIT_STATUS_OK;
        }

        t = mount_table_new();
        r = t ? list_fill_table(t, infos, n) : -ENOMEM;
        if (r >= 0)
                r = table_format(t, &text);
        if (r < 0) {
                log_error_errno(r, "Cannot format the list of mounts: %m");
                return EXIT_STATUS_FAILURE;
        }
        fputs(text, stdout);
        return EXIT_STATUS_OK;
}

static ExitStatus list_run(const ListArgs *args) {
        _cleanup_(usermount_client_unrefp) usermount_client *client = NULL;
        _cleanup_(mount_list_done) MountList list = {};
        ExitStatus status;
        int r;

        status = client_connect(false, arg_ask_password, &client);
        if (status != EXIT_STATUS_OK)
                return status;
        r = mount_list_fetch(client, &list);
        if (r < 0)
                return client_log_error(client, r);

        return args->json ? list_print_json(&list) : list_print_table(&list);
}

int verb_list(int argc, char *argv[]) {
        ListArgs args = {};
        int r;

        r = args_parse_json_only(argc, argv, list_help, &args.json);
        if (r < 0)
                return usage_hint("list");
        if (r == 0)
                return EXIT_STATUS_OK;

        return list_run(&args);
}
