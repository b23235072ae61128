/* Packets to look at: tcpdump on the host, passively, on a guest's tap (the bridge still has no
 * host address: nothing is sent). Each capture goes to a private temporary file first and is
 * written below the run directory when it stops, so no tcpdump writes into a user's tree. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#include "virt/lab.h"

struct ml_capture {
    pid_t pid;      /* tcpdump, leading its own process group; 0: not running */
    int fd;         /* the temporary file it writes */
    char *tmp_path; /* removed when the capture stops */
    char *rel;      /* where it goes below the run directory */
};

/* Whether tcpdump can run here; false with the reason. */
bool ml_capture_available(char **ret_reason);
/* Starts tcpdump on tap; the pcap will be rel below the run directory. */
bool ml_capture_start(struct ml_capture *c, const char *tap, const char *rel, GError **err);
/* Stops it (SIGINT, then SIGKILL after 5 s) and writes the pcap below lab's run directory. */
bool ml_capture_stop(struct ml_capture *c, const struct ml_lab *lab, GError **err);

/* The three taps a path crosses: the hub's, the measuring client's, the server's. */
#define ML_CAPTURE_TAPS 3
/* Starts a capture on each of them into DIR/NODE.pcap (below the run directory) and lists the
 * files in files (a JSON array). On failure the ones started are stopped. */
bool ml_capture_lab_start(const struct ml_lab *lab, struct ml_capture caps[ML_CAPTURE_TAPS],
                          const char *dir, struct json_object *files, GError **err);
/* Stops them and writes the pcaps; a capture that cannot be written is a warning. */
void ml_capture_lab_stop(const struct ml_lab *lab, struct ml_capture caps[ML_CAPTURE_TAPS]);
