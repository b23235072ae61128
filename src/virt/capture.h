/* Packets to look at: tcpdump on the host, passively, on a guest's tap (the bridge still has no
 * host address: nothing is sent). Each capture goes to a ring of files in a private temporary
 * directory first (at most ML_CAPTURE_FILES × ML_CAPTURE_FILE_MB) and is copied below the run
 * directory in chunks when it stops, so no tcpdump writes into a user's tree and no capture is
 * ever held in memory. On another libvirt host, tcpdump runs there over SSH and a thread of
 * meshlab's copies what ssh prints into that directory: no more than ML_CAPTURE_MAX_BYTES,
 * whatever the host sends, and a host that does not stop is stopped. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#include "virt/lab.h"

#define ML_CAPTURE_FILE_MB 16      /* tcpdump -C: millions of bytes per file */
#define ML_CAPTURE_FILES 4         /* tcpdump -W: files in the ring */
#define ML_CAPTURE_BASE "tap.pcap" /* the ring's files: tap.pcap0, tap.pcap1, ... */
#define ML_PCAP_HEADER 24          /* a pcap file's global header */
/* The most bytes of one capture, here (the ring) or from another host. */
#define ML_CAPTURE_MAX_BYTES ((long long)ML_CAPTURE_FILES * ML_CAPTURE_FILE_MB * 1000000)
/* What the capture script on another host says on stderr once tcpdump listens. */
#define ML_CAPTURE_READY "meshlab-capture-ready"
/* Seconds ssh gets to end once its stdin closes (tcpdump on the host flushes); then its
 * process group is killed. */
#define ML_CAPTURE_STOP_S 10.0

struct ml_capture_copy;

struct ml_capture {
    pid_t pid;      /* tcpdump, or ssh, leading its own process group; 0: not running */
    int fd;         /* on another host: ssh's stdin, closed to stop it; else -1 */
    char *tmp_path; /* the private directory tcpdump writes; removed when the capture stops */
    char *rel;      /* where it goes below the run directory */
    /* On another host: the thread that copies ssh's stdout into tmp_path and reads its
     * stderr; else NULL. */
    struct ml_capture_copy *copy;
    double stop_s; /* on another host: ML_CAPTURE_STOP_S, unless lowered after the start */
};

/* Whether tcpdump can run here; false with the reason. */
bool ml_capture_available(char **ret_reason);
/* Starts tcpdump on tap; the pcap will be rel below the run directory. uri NULL: here; else
 * on that libvirt host, over the SSH its URI names (hostshell.h), streamed into the same
 * private directory through a pipe: at ML_CAPTURE_MAX_BYTES the copy stops and ssh's process
 * group is killed, and ssh's stderr is read to its end, so ssh never waits on a full pipe. */
bool ml_capture_start(struct ml_capture *c, const char *uri, const char *tap, const char *rel,
                      GError **err);
/* Pure: the script that captures on tap on another host: tcpdump into a FIFO that head -c
 * empties onto stdout (ML_CAPTURE_MAX_BYTES, which meshlab enforces again on its side),
 * stopped when stdin closes; its private directory there goes with it. */
char *ml_capture_remote_script(const char *tap);
/* tcpdump's argv for a capture on tap into the ring at path (NULL-terminated; g_strfreev it).
 * as_root: tcpdump keeps root to open the ring's next files. */
char **ml_capture_argv(const char *tcpdump, const char *tap, const char *path, bool as_root);
/* Copies the ring tcpdump wrote in dir to out_fd, oldest file first, 64 KiB at a time, as one
 * pcap (the later files' headers left out). *ret_wrapped: the ring was full, so the oldest
 * packets may be gone. */
bool ml_capture_collect(const char *dir, int out_fd, bool *ret_wrapped, GError **err);
/* Stops it and writes the pcap below lab's run directory. Here: SIGINT, then SIGKILL after
 * 5 s. On another host: ssh's stdin closes, and after stop_s s its process group is killed;
 * a capture cut at ML_CAPTURE_MAX_BYTES is kept, with a warning that says so. */
bool ml_capture_stop(struct ml_capture *c, const struct ml_lab *lab, GError **err);

/* The three taps a path crosses: the hub's, the measuring client's, the server's. */
#define ML_CAPTURE_TAPS 3
/* Starts a capture on each of them into DIR/NODE.pcap (below the run directory) and lists the
 * files in files (a JSON array). On failure the ones started are stopped. */
bool ml_capture_lab_start(const struct ml_lab *lab, struct ml_capture caps[ML_CAPTURE_TAPS],
                          const char *dir, struct json_object *files, GError **err);
/* Stops them and writes the pcaps; a capture that cannot be written is a warning. */
void ml_capture_lab_stop(const struct ml_lab *lab, struct ml_capture caps[ML_CAPTURE_TAPS]);
