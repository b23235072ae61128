/* The QEMU guest agent: after boot it is meshlab's only way into a guest. */
#pragma once

#include "topology/topology.h"

#include <glib.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

struct ml_exec {
    int exit_code; /* -1 when killed by a signal */
    int signal;    /* the signal that killed it, or 0 */
    char *out;     /* decoded stdout (NUL-terminated) */
    char *err;     /* decoded stderr */
};
void ml_exec_clear(struct ml_exec *ex);

/* Larger replies are refused unread: ML_AGENT_REPLY_MAX (topology/topology.h), the 4 MiB
 * string libvirt's remote protocol carries, is the most a reply can be. */
/* The most one guest-file-read asks for: qemu-ga's count is an int and it allocates it whole. */
#define ML_AGENT_READ_MAX (1024 * 1024)

/* Pure: reads the text of the agent's reply to the command execute (len bytes, not necessarily
 * NUL-terminated): {"return": VALUE} where VALUE has type want. Returns VALUE, a new reference;
 * NULL with err (ML_ERR_GUEST) for anything else: not JSON, cut short, text after it, no
 * "return", null or a value of another type. */
struct json_object *ml_agent_reply_parse(const char *reply, size_t len, const char *execute,
                                         enum json_type want, GError **err);

/* e's message, or a sentence saying there is none: for messages that quote why a call failed. */
const char *ml_agent_error_text(const GError *e);

/* Bounds the agent commands libvirt sends on meshlab's behalf (virDomainSetTime), whose
 * default is to wait for ever, to ML_AGENT_TIMEOUT_S. Call it after each start or restore: the
 * bound lives with the running domain. A driver with no agent (test:///default) needs none. */
bool ml_agent_bound(virDomainPtr dom, GError **err);
#define ML_AGENT_TIMEOUT_S 10

/* True when the agent answers guest-ping within timeout_s. */
bool ml_agent_ping(virDomainPtr dom, int timeout_s);

/* Whether waits give up on Ctrl-C (the default). Collecting logs after an
 * interruption turns this off for a bounded moment; a second Ctrl-C still ends
 * those waits. */
void ml_agent_set_interruptible(bool interruptible);

/* Starts "sh -c CMD" in the guest with optional stdin; returns its pid. */
bool ml_agent_spawn(virDomainPtr dom, const char *cmd, const char *input, long long *ret_pid,
                    GError **err);
/* Reads a guest-exec-status reply r: *ret_exited stays false while the command
 * runs; once it exited, ret holds its status and output. Fails when the agent
 * cut stdout or stderr short (out-truncated, err-truncated). */
bool ml_agent_exec_status_parse(struct json_object *r, bool *ret_exited, struct ml_exec *ret,
                                GError **err);
/* Asks once whether a spawned command exited: *ret_exited, and then ret holds its status and
 * output. Does not wait. */
bool ml_agent_poll(virDomainPtr dom, long long pid, bool *ret_exited, struct ml_exec *ret,
                   GError **err);
/* Waits for a spawned command; fails after timeout_s or on Ctrl-C. */
bool ml_agent_wait(virDomainPtr dom, long long pid, double timeout_s, struct ml_exec *ret,
                   GError **err);
/* spawn + wait. */
bool ml_agent_exec(virDomainPtr dom, const char *cmd, const char *input, double timeout_s,
                   struct ml_exec *ret, GError **err);
/* exec that also fails when the command exits non-zero; returns its stdout. */
char *ml_agent_run(virDomainPtr dom, const char *cmd, const char *input, double timeout_s,
                   GError **err);

/* Runs n commands in one agent call, one after the other, and returns each one's stdout in
 * ret[0..n-1] (each ending in one newline when it printed anything): one round trip where n
 * calls would take n, for views read every second or two. Fails as ml_agent_run does when any
 * command exits non-zero (the ones after it do not run); ret is then all NULL. */
bool ml_agent_run_each(virDomainPtr dom, const char *const *cmds, size_t n, double timeout_s,
                       char **ret, GError **err);
/* Pure: the script ml_agent_run_each runs, and the split of what it printed into n outputs
 * (false when the output does not hold n sections). */
char *ml_agent_each_script(const char *const *cmds, size_t n);
bool ml_agent_each_split(const char *out, size_t n, char **ret);

/* Files in the guest, read while a command writes them (exec streams this way: guest-exec's
 * captured output arrives only at exit). A handle keeps its position; reads at a given offset
 * seek first, which also clears the end-of-file mark qemu-ga's stdio keeps after a short read. */
bool ml_agent_file_open(virDomainPtr dom, const char *path, const char *mode, long long *ret_handle,
                        GError **err);
/* Reads up to count bytes at offset and appends them to out; *ret_count is how many came. */
bool ml_agent_file_read_at(virDomainPtr dom, long long handle, long long offset, size_t count,
                           GByteArray *out, size_t *ret_count, GError **err);
/* Reads a guest-file-read reply r to a read of asked bytes: appends its decoded bytes to out and
 * sets *ret_count; fails when the reply's count and its data disagree, or it says more than
 * asked. */
bool ml_agent_file_read_parse(struct json_object *r, size_t asked, GByteArray *out,
                              size_t *ret_count, GError **err);
bool ml_agent_file_close(virDomainPtr dom, long long handle, GError **err);
/* Writes data to path in the guest (created or truncated) with guest-file-open/write/close:
 * no process runs in the guest. */
bool ml_agent_file_write(virDomainPtr dom, const char *path, const void *data, size_t len,
                         GError **err);
/* The first max bytes of a small guest file, as a string; NULL (and err) when it cannot
 * be opened or read, a file that does not exist yet included. */
char *ml_agent_file_get(virDomainPtr dom, const char *path, size_t max, GError **err);
