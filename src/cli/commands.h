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
int cmd_exec_main(int argc, char **argv);
int cmd_console_main(int argc, char **argv);
int cmd_export_main(int argc, char **argv);

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

/* The running guest NODE of lab LAB, found by its tag alone (no lock, no topology file): err
 * says when there is no such lab, names the lab's nodes when it has no such node, and says
 * when the guest is not running. */
virDomainPtr cmd_find_guest(virConnectPtr conn, const char *lab, const char *node, GError **err);

/* exec's pure parts. The guest shell's command line for argv (NULL-terminated): each
 * argument single-quoted, so it arrives as given; netns prefixes `ip netns exec mlnat`. */
char *cmd_exec_command_line(char *const *argv, bool netns);
/* What guest-exec's `sh -c` runs: command_line in its own process group, stdin from
 * /dev/null, stdout and stderr appended to DIR/out and DIR/err, stdout line-buffered. */
char *cmd_exec_script(const char *dir, const char *command_line);
/* The guest shell command that sends signal sig ("TERM") to the process group pid leads. */
char *cmd_exec_kill_command(long long pid, const char *sig);
/* Whether `ip netns list` output names the namespace name. */
bool cmd_exec_has_netns(const char *ip_netns_list, const char *name);

/* How far one guest file has been read and copied out. */
struct cmd_exec_tail {
    long long offset;
};
/* Reads count bytes at offset into out (appended), *ret_count how many came. */
typedef bool (*cmd_exec_read_fn)(void *opaque, long long offset, size_t count, GByteArray *out,
                                 size_t *ret_count, GError **err);
/* Copies what is new in the file from t->offset on to sink, in reads of at most chunk bytes
 * and at most max bytes in all, and advances t->offset by exactly what was copied. A short
 * read ends it. Fails with ML_ERR_HOST when sink cannot be written. */
bool cmd_exec_drain(struct cmd_exec_tail *t, cmd_exec_read_fn read, void *opaque, size_t chunk,
                    size_t max, FILE *sink, GError **err);
