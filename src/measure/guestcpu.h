/* CPU time inside a guest: its own /proc/stat and that of the daemons a dataplane runs, read
 * through the agent. The host's side is measure/hostnoise.h. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

#include "dataplanes/dataplane.h"
#include "measure/hostnoise.h"
#include "virt/lab.h"

/* The daemons whose own CPU is counted wherever they run: every dataplane's (the registry's
 * ml_daemon_at), at most this many. */
#define ML_DAEMONS_MAX 12

/* A guest's CPU counters at one moment, seconds since boot (USER_HZ ticks / 100). */
struct ml_guest_cpu {
    bool ok;
    double user_s, nice_s, system_s, idle_s, iowait_s, irq_s, softirq_s, steal_s;
    double daemon_s[ML_DAEMONS_MAX]; /* utime + stime of every process of that name; -1 none */
    long long daemon_rss_kib[ML_DAEMONS_MAX]; /* VmRSS of those processes together; -1 none */
    double vcpu_s; /* the host's view of its vCPUs (libvirt's vcpu_time), -1 unknown */
    double qemu_s; /* its QEMU process on the host, all threads (/proc/PID/stat), -1 unknown */
};

/* The command that prints what ml_guest_cpu_parse reads. */
char *ml_guest_cpu_command(void);
/* Pure: reads that command's output ("cpu ..." line of /proc/stat, then "D NAME STAT-LINE" and
 * "R NAME VmRSS: N kB" per daemon process). False when there is no cpu line. */
bool ml_guest_cpu_parse(const char *text, struct ml_guest_cpu *ret);
/* Busy seconds: user + nice + system + softirq + irq (idle, iowait and steal are not). The
 * passes' busy_s and the idle rate subtracted from it are both this. */
double ml_guest_cpu_busy_s(const struct ml_guest_cpu *c);
/* Pure: a guest's idle baseline from three readings of its busy times (ml_guest_cpu_stat): two
 * back to back, then one after a window of dt seconds. Reading a guest costs it CPU (the agent's
 * file calls: about 0.01 s under TCG); each interval between two readings holds one reading's
 * cost, the first interval nothing else. ret_cost_s: that cost, the first interval's busy seconds
 * (>= 0); ret_rate: the window's busy seconds less that cost, per second (>= 0). A pass's window
 * holds one reading's cost too, whatever its length: charged as a rate, the cost was subtracted
 * T_pass / T_idle times, and a bystander's "above idle" came out negative. */
void ml_guest_cpu_idle(double first_busy_s, double window_busy_s, double dt, double *ret_rate,
                       double *ret_cost_s);
/* Pure: a pass's busy seconds above the idle baseline: busy less rate times the seconds and
 * one reading's cost; 0 where that falls short of nothing by no more than the guest's own
 * counting could: a guest's busy time is sampled by its timer's ticks, and over a 4 s pass a
 * bystander hub idle at 0.013 s/s is 5 ticks give or take 2. That is ml_guest_cpu_noise_s of
 * what idle would have charged the pass, and of what the idle window of window_s seconds
 * counted, scaled to the pass (its rate was read from as few ticks; 0: not known, not counted),
 * the two added in quadrature. A shortfall beyond that is kept: the baseline was not the pass's
 * idle. NAN where the rate is unknown (< 0). */
double ml_guest_cpu_above_idle(double busy_s, double seconds, double rate, double cost_s,
                               double window_s);
/* Pure: the same where cost_s holds a figure measured with its own noise (the views' price,
 * cost_noise_s: what the views were charged may be off by): added in quadrature to the
 * ticks'. */
double ml_guest_cpu_above_idle_noisy(double busy_s, double seconds, double rate, double cost_s,
                                     double window_s, double cost_noise_s);
/* Pure: what one view of a path cost a guest whose busy time grew by busy_s over the dt seconds
 * it took: that less the guest's idle rate over dt and one reading's cost; 0 where that is no
 * more than the ticks' noise (ml_guest_cpu_noise_s of what was expected), which is the price's
 * own, in *ret_noise_s. -1 (and NAN) where the rate is unknown (< 0). */
double ml_guest_cpu_view_cost(double busy_s, double dt, double rate, double read_cost_s,
                              double *ret_noise_s);
/* Pure: which of n views' prices (ml_guest_cpu_view_cost) is the guest's: the median of those
 * priced (>= 0; the lower of the middle two where they are even), so that one view beside a
 * burst of the guest's own is not the price of all; the first where none is. */
size_t ml_guest_cpu_view_median(const double *price, size_t n);

/* Pure: how far a guest's busy seconds over a window of seconds may stray from expected_s by its
 * counting alone, two standard deviations: each tick of USER_HZ (10 ms, as /proc/stat counts,
 * at least the kernel's own) charged whole to busy or idle, a binomial count of busy ticks
 * (variance tick x expected x (1 - expected / seconds)), and the readings' truncation to a
 * tick. */
double ml_guest_cpu_noise_s(double expected_s, double seconds);
/* The daemons' names, in the order of daemon_s; NULL past the last. */
const char *ml_daemon_name(size_t i);
/* How many there are. */
size_t ml_daemons_n(void);
/* The index of the daemon called name in daemon_s, or ML_DAEMONS_MAX when none is. */
size_t ml_daemon_index(const char *name);

/* Pure: each daemon's CPU seconds per second between readings a and b, dt seconds apart (the
 * idle baseline); -1 where either reading has no such process. */
void ml_guest_cpu_daemon_rates(const struct ml_guest_cpu *a, const struct ml_guest_cpu *b,
                               double dt, double ret[ML_DAEMONS_MAX]);
/* Pure: {daemon: rate} of the daemons the path's dataplane runs whose rate is known (>= 0). */
struct json_object *ml_guest_daemon_rates_json(const struct ml_path_ops *ops,
                                               const double rates[ML_DAEMONS_MAX]);
/* Pure: one guest's daemons that the path's dataplane runs, between readings a and b taken
 * `seconds` apart: into cpu their CPU seconds, into above_idle the same less their idle rate
 * (idle_s_per_s over an idle window of window_s, <0 unknown: null) times the seconds
 * (ml_guest_cpu_above_idle), into rss their memory at b, KiB (each an
 * object, daemon name to value). Another dataplane's daemons, idling in the guest, are in none:
 * a path pays only for its own. */
void ml_guest_daemons_json(const struct ml_path_ops *ops, const struct ml_guest_cpu *a,
                           const struct ml_guest_cpu *b, const double idle_s_per_s[ML_DAEMONS_MAX],
                           double seconds, double window_s, struct json_object *cpu,
                           struct json_object *above_idle, struct json_object *rss);

/* Reads every guest of the lab at once (in parallel through the agent): its daemons' processes,
 * and a /proc/stat line that every caller replaces by ml_guest_cpu_stat's, read inside it with
 * the host's view of each domain (vcpu_s, qemu_s are -1 here). */
bool ml_guest_cpu_read(struct ml_lab *lab, struct ml_guest_cpu ret[ML_MAX_NODES], GError **err);

/* Reads every guest's /proc/stat through the agent's file calls, no process started, and the
 * host's view of each domain, into ret's busy times (user ... steal, vcpu_s, qemu_s); its daemons'
 * fields are left as they are. The busy times of a window are read so, inside the daemons'
 * reading (ml_guest_cpu_read before its start, after its end): that reading starts three
 * processes in each guest (sh, pidof, awk), 0.21 s of the hub's vCPU and 0.24 s of a client's
 * under TCG on the build machines, where this read costs 0.01 s; a window that held one of
 * them had 0.17-0.53 s of it subtracted as its idle's "reading cost", and the bystanders' "above
 * idle" came out as far below zero as that cost wandered. */
bool ml_guest_cpu_stat(struct ml_lab *lab, struct ml_guest_cpu ret[ML_MAX_NODES], GError **err);

/* Copies a's busy times (as ml_guest_cpu_stat sets them) into b, whose daemons' fields stay. */
void ml_guest_cpu_take_busy(struct ml_guest_cpu *b, const struct ml_guest_cpu *a);

/* The lab's guests' CPU as a pass last read it at its end, and when (ml_now): the next pass,
 * when it starts within ML_GUEST_CPU_REUSE_S, starts from it instead of reading again (the
 * reading costs every guest a process under TCG, and nothing ran between the two). */
struct ml_guest_cpu_reading {
    struct ml_guest_cpu cpu[ML_MAX_NODES];
    double t; /* when its daemons were read (its busy times are read again: ml_guest_cpu_stat) */
    bool valid;
};
#define ML_GUEST_CPU_REUSE_S 1.0
