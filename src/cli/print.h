/* One print path for verbs that report what they found (status, check): the
 * verb builds one json_object, then that object is written either as JSON or
 * through the verb's text renderer, which reads nothing but the object. So
 * text and JSON cannot disagree, as in iproute2's `ip -j`. Text renderers read the object
 * with results/json.h. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

enum cmd_format { CMD_TEXT, CMD_JSON };

/* Option parsing for verbs whose options are --help and --json: true when the
 * verb should go on with exactly `operands` arguments at argv[optind];
 * otherwise *ret_status is the exit status (help printed, or usage on stderr).
 * With ret_format NULL, --json is refused like any unknown option. */
bool cmd_print_args(int argc, char **argv, const char *usage, int operands,
                    enum cmd_format *ret_format, int *ret_status);

typedef void (*cmd_text_fn)(FILE *f, struct json_object *doc);

/* Writes doc to f as pretty JSON ending in a newline, or as text(f, doc). */
void cmd_print(FILE *f, enum cmd_format format, struct json_object *doc, cmd_text_fn text);
