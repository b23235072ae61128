/* What up and run share: bringing a lab up with every dataplane, and tearing
 * it down again on failure or Ctrl-C unless asked to keep it. */
#pragma once

#include <getopt.h>

#include "virt/lab.h"

/* The copy of the topology in every run directory. */
#define ML_SESSION_TOPOLOGY "topology.yaml"

struct ml_session_opts {
    const char *verb;          /* "up" or "run": recorded in the lab's lock */
    const char *out_dir;       /* run directory; NULL: runs/<lab>-<run id> */
    bool force;                /* --force: replace an earlier run of the same lab in out_dir */
    bool keep_on_failure;      /* leave a failed lab for diagnosis */
    bool quick;                /* run --quick: the topology's quick profile */
    const char *profile;       /* run --profile NAME; NULL when not given */
    bool keep;                 /* run --keep: leave a lab this run brought up */
    bool capture;              /* run --capture: pcaps of the NAT matrix's cells */
    const char *until;         /* run --until PCT[,MAX]; NULL when not given */
    const char *hub_address;   /* export --hub-address ('A') */
    const char *hub_interface; /* export --hub-interface ('I') */
    const char *to;            /* export --to ('T') */
    bool verify;               /* export --verify ('V') */
    /* export --client-address NODE=ADDR ('C'), as given, in order */
    size_t n_client_address;
    const char *client_address[ML_MAX_NODES];
    bool no_dataplanes; /* up without the dataplanes: export --verify's files bring them */
    /* run's workload flags (--traffic ...: ML_WORKLOAD_OPT), in the order given */
    size_t n_workload;
    struct {
        const char *flag, *value;
    } workload[16];
};

/* The getopt value of run's workload flags, each the name of a ml_workload_set flag. */
#define ML_WORKLOAD_OPT 1000
/* The workload flags run and report take (topology/workload.h). */
// clang-format off
#define ML_WORKLOAD_LONG_OPTIONS                              \
    {"traffic", required_argument, NULL, ML_WORKLOAD_OPT},       \
    {"relayed-share", required_argument, NULL, ML_WORKLOAD_OPT}, \
    {"egress-price", required_argument, NULL, ML_WORKLOAD_OPT},  \
    {"included-tb", required_argument, NULL, ML_WORKLOAD_OPT},   \
    {"peak-mbit", required_argument, NULL, ML_WORKLOAD_OPT},     \
    {"currency", required_argument, NULL, ML_WORKLOAD_OPT}
// clang-format on

/* The long options up and run share; run adds "quick" ('q'), "profile" ('p'), "keep" ('K'),
 * "capture" ('c') and "until" ('u'). */
// clang-format off
#define ML_SESSION_LONG_OPTIONS                          \
    {"help", no_argument, NULL, 'h'},                    \
    {"out", required_argument, NULL, 'o'},               \
    {"force", no_argument, NULL, 'f'},                   \
    {"keep-on-failure", no_argument, NULL, 'k'}
// clang-format on

/* The option loop up and run share, over the verb's own table of long options. True when
 * the verb should go on with its FILE at argv[optind]; otherwise *ret_status is the exit
 * status (help printed, or usage on stderr). */
bool ml_session_args(int argc, char **argv, const struct option *options, const char *usage,
                     struct ml_session_opts *opts, int *ret_status);

/* Takes the lab's lock (held until ml_lab_clear), makes the plan with a new
 * run id and opens the connection. Creates nothing. */
bool ml_session_open(struct ml_lab *lab, const struct ml_topology *topo,
                     const struct ml_session_opts *opts, GError **err);

/* Checks and opens the run directory (see rundir.h); nothing else is created. */
bool ml_session_rundir(struct ml_lab *lab, const struct ml_session_opts *opts, GError **err);

/* On a lab opened by ml_session_open: refuses a lab that already exists,
 * opens the run directory, probes the accelerator, resolves the image, creates
 * and boots the lab and sets up every dataplane the topology's paths need. On
 * failure it collects the guests' logs and tears down what it created (unless
 * keep_on_failure); err says what went wrong. */
bool ml_session_up(struct ml_lab *lab, const struct ml_session_opts *opts, GError **err);

/* Tears down after a failure; honours keep_on_failure. */
void ml_session_fail_teardown(struct ml_lab *lab, const struct ml_session_opts *opts);

/* Writes the results document and the report into the run directory. */
bool ml_results_write(const struct ml_lab *lab, struct json_object *results, GError **err);

/* The workload results.json recorded, with opts' workload flags over it key by key, into
 * results (in memory only), marked as given to the verb (given_to_report) when a flag changed
 * it: report and export price a month of another workload from the run's own figures. */
bool ml_session_reprice(struct json_object *results, const struct ml_session_opts *opts,
                        GError **err);
