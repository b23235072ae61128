/* What up and run share: bringing a lab up with every dataplane, and tearing
 * it down again on failure or Ctrl-C unless asked to keep it. */
#pragma once

#include "lab.h"

struct ml_session_opts {
    const char *out_dir;      /* run directory; NULL: runs/<lab>-<run id> */
    bool keep_on_failure;     /* leave a failed lab for diagnosis */
};

/* Connects, probes the accelerator, resolves the image, creates and boots the
 * lab and sets up every dataplane the topology's paths need. On failure it
 * collects the guests' logs and tears down what it created (unless
 * keep_on_failure); err says what went wrong. */
bool ml_session_up(struct ml_lab *lab, const struct ml_topology *topo,
                   const struct ml_session_opts *opts, GError **err);

/* Opens the connection and fills the lab's plan without creating anything. */
bool ml_session_open(struct ml_lab *lab, const struct ml_topology *topo,
                     const struct ml_session_opts *opts, GError **err);

/* Tears down after a failure; honours keep_on_failure. */
void ml_session_fail_teardown(struct ml_lab *lab, const struct ml_session_opts *opts);

/* Writes the results document and the report into the run directory. */
bool ml_results_write(const char *run_dir, struct json_object *results, GError **err);
