/* One function per verb; main.c dispatches. Each takes argv with argv[0] = the verb. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>
#include <stdio.h>

int cmd_validate_main(int argc, char **argv);
int cmd_up_main(int argc, char **argv);
int cmd_run_main(int argc, char **argv);
int cmd_down_main(int argc, char **argv);
int cmd_status_main(int argc, char **argv);
int cmd_check_main(int argc, char **argv);
int cmd_fetch_main(int argc, char **argv);
int cmd_report_main(int argc, char **argv);
int cmd_compare_main(int argc, char **argv);

/* Option parsing for verbs whose only option is --help: true when the verb
 * should go on with exactly `operands` arguments at argv[optind]; otherwise
 * *ret_status is the exit status (help printed, or usage on stderr). */
bool cmd_simple_args(int argc, char **argv, const char *usage, int operands, int *ret_status);

/* Prints "meshlab: MESSAGE" and returns the exit status that fits the error. */
int cmd_fail(const GError *err);

/* What status and check find, as one object each, and their text renderers
 * (cli/print.h): the verbs print one or the other, tests read both. */
struct json_object *cmd_status_collect(virConnectPtr conn, const char *uri);
void cmd_status_text(FILE *f, struct json_object *doc);
struct json_object *cmd_check_collect(void);
void cmd_check_text(FILE *f, struct json_object *doc);

/* Loads a topology and resolves its path names through the dataplanes'
 * registry: NULL with err set (FILE:LINE:COL: RULE) when either fails. */
struct ml_topology *cmd_load_topology(const char *path, GError **err);
