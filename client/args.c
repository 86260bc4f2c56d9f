/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Command-line parsing shared by several commands (see args.h). */
#include <errno.h>
#include <getopt.h>

#include "args.h"
#include "macro.h"
#include "output.h"

static int unexpected(const char *arg) {
        _cleanup_free_ char *e = output_escape(arg);

        log_error("Unexpected argument '%s'.", strempty(e));
        return -EINVAL;
}

int args_parse_json_operand(int argc, char *argv[], void (*help)(void), bool *json,
                            const char **ret_operand) {
        enum {
                ARG_JSON = 0x100,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, ARG_JSON },
                {}
        };
        const char *operand = NULL;
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "-h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_JSON:
                        *json = true;
                        break;
                case 1:
                        if (!ret_operand || operand)
                                return unexpected(optarg);
                        operand = optarg;
                        break;
                default:
                        /* '?': getopt has said what was wrong. */
                        return -EINVAL;
                }
        }
        /* Operands after "--". */
        for (; optind < argc; optind++) {
                if (!ret_operand || operand)
                        return unexpected(argv[optind]);
                operand = argv[optind];
        }
        if (ret_operand)
                *ret_operand = operand;
        return 1;
}

int args_parse_json_only(int argc, char *argv[], void (*help)(void), bool *json) {
        return args_parse_json_operand(argc, argv, help, json, NULL);
}
