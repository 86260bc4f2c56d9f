/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Command-line parsing shared by the commands that take nothing but --json and --help. */
#pragma once

#include <stdbool.h>

/*
 * Parses argv of a command whose only options are -h/--help and --json. Returns 1 to go
 * on (with *json set), 0 when help was shown, -EINVAL after printing a usage error.
 */
int args_parse_json_only(int argc, char *argv[], void (*help)(void), bool *json);

/* The same, with at most one operand (*ret_operand, NULL when none was given). */
int args_parse_json_operand(int argc, char *argv[], void (*help)(void), bool *json,
                            const char **ret_operand);
