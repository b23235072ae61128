/* The QEMU guest agent: after boot it is meshlab's only way into a guest. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

struct ml_exec {
    int exit_code; /* -1 when killed by a signal */
    char *out;     /* decoded stdout (NUL-terminated) */
    char *err;     /* decoded stderr */
};
void ml_exec_clear(struct ml_exec *ex);

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
