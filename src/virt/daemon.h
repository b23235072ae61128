/* Long-running programs in a guest (headscale, tailscaled, nebula), started as transient systemd
 * units with systemd-run, so their output lands in the guest's journal under the unit's name.
 * A daemon that does not come up fails the setup within seconds, with its own last log lines in
 * the error and in RUN_DIR/guests/NODE-NAME.log, instead of after a blind wait for its socket. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "virt/lab.h"

struct ml_daemon {
    const char *name;    /* "headscale": in messages and the log file's name */
    const char *unit;    /* "meshlab-headscale": the transient unit */
    const char *prepare; /* shell run first, with the caller's input on stdin (NULL: none); a
                          * config check belongs here: its failure is reported with its output */
    const char *command; /* the daemon's command line (meshlab's constants only) */
    const char *ready;   /* shell condition that holds once the daemon serves */
    unsigned timeout_s;  /* how long ready may take while the unit stays active */
    const char *netns;   /* the network namespace it runs in (systemd's NetworkNamespacePath),
                          * where ready is also evaluated; NULL: the guest's own */
};

/* Exit statuses of the start script. */
enum {
    ML_DAEMON_READY = 0,
    ML_DAEMON_STOPPED = 3, /* the unit is no longer active: the daemon exited */
    ML_DAEMON_TIMEOUT = 4, /* still active, never ready */
    ML_DAEMON_NOT_RUN = 5, /* systemd-run refused */
    ML_DAEMON_PREPARE = 6, /* prepare failed; its output is the script's output */
};

/* The guest command that stops the unit, if it runs, and forgets a failed one; exits 0. */
char *ml_daemon_stop_cmd(const struct ml_daemon *d);

/* The guest shell script: prepare, then (re)start the unit, then poll ready every half second
 * while the unit is still active (systemctl show -p ActiveState). */
char *ml_daemon_script(const struct ml_daemon *d);

/* Sets err (ML_ERR_GUEST, replacing any earlier error) to "NODE: NAME WHAT; its last log lines
 * (saved in RUN_DIR/guests/NODE-NAME.log):" and the lines, indented; writes that file below
 * the run directory's descriptor run_fd (see rundir.h) unless it is -1; run_dir names it. */
void ml_daemon_report(int run_fd, const char *run_dir, const char *node_name,
                      const struct ml_daemon *d, const char *what, const char *lines, GError **err);

/* Runs the script on node with input on stdin. On failure: the last 20 lines of the unit's
 * journal (or prepare's output) go to RUN_DIR/guests/NODE-NAME.log and into err
 * (ML_ERR_GUEST). */
bool ml_daemon_start(struct ml_lab *lab, size_t node, const struct ml_daemon *d, const char *input,
                     GError **err);

/* After a later step failed (a join, an overlay that never answers): when the daemon on node is
 * no longer active, replaces *err with the same report as ml_daemon_start's and returns false;
 * true when it is still running (err untouched). */
bool ml_daemon_alive(struct ml_lab *lab, size_t node, const struct ml_daemon *d, GError **err);
