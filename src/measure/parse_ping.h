/* Reads what `ping -c N -i 0.2 -W 1 ADDR` printed (iputils, and busybox's shorter form).
 * Nothing here runs ping. */
#pragma once

#include <glib.h>
#include <stdbool.h>

struct ml_ping_result {
    unsigned transmitted, received; /* received excludes duplicates, as ping counts it */
    unsigned errors, duplicates;    /* the "+N errors" and "+N duplicates" parts; 0 if absent */
    double min_ms, avg_ms, max_ms;  /* valid only when have_rtt */
    double mdev_ms;                 /* -1 when the tool does not print it (busybox) */
    bool have_rtt;                  /* false when nothing came back: ping prints no rtt line */
};

/* Fills ret from ping's statistics lines. Losing every packet is a result, not a failure: it
 * succeeds with received == 0 and have_rtt false. Fails (ML_ERR_MEASURE) when there is no
 * statistics line, e.g. when ping could not send at all; the message then carries ping's last
 * line. ret is untouched on failure. */
bool ml_ping_parse(const char *text, struct ml_ping_result *ret, GError **err);

/* The same over the statistics of several pings printed one after another (a shell loop of
 * `ping -c 1`): the counts add up, min and max are over all of them and avg is weighted by each
 * run's replies; mdev is -1 (not summed). Fails like ml_ping_parse when a run's lines cannot be
 * read or when there is no statistics line at all. */
bool ml_ping_parse_runs(const char *text, struct ml_ping_result *ret, GError **err);

/* The round-trip time of every reply line ("... icmp_seq=N ttl=T time=0.345 ms"), in the
 * order printed, in ms; duplicates ("(DUP!)") are left out. g_array_unref it. */
GArray *ml_ping_rtts(const char *text);

/* The pings a deadline cut off (`ping -w D` ended ping while they were in flight): the
 * unanswered ones after the last reply that were sent within two of the run's slowest round
 * trips of its last, which ping itself would have waited for without a deadline (iputils waits
 * two of its slowest round trips after its last request). `transmitted` is the statistics line's
 * count; interval_s the seconds between requests. More unanswered after the last reply than
 * that (a path that went dead before the end) are lost, not cut: the result leaves them out. 0
 * when nothing came back at all: no round trip to scale by. */
unsigned ml_ping_cut_off(const char *text, unsigned transmitted, double interval_s);
