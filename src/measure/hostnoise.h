/* The host's CPU at one moment, split into the lab's own host-side work and everything else,
 * read every second of a pass: a second in which other programs used more than
 * ML_HOST_BUSY_OTHER_PERCENT of the host marks its pass, and only such a second does.
 *
 * The lab's own work is its QEMU processes (all threads), the libvirt daemons that answer the
 * agent calls of a pass (libvirtd or virtqemud, virtlogd), vhost kernel threads, meshlab
 * itself, and the kernel's softirq time (the lab bridge forwards in softirq, in interrupt
 * context or in ksoftirqd). Counting those as "other" flagged passes of 0.8 Mbit/s on an idle
 * host as busy. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* A second with more than this share of all CPUs used by other programs marks its pass. */
#define ML_HOST_BUSY_OTHER_PERCENT 10.0
/* A pass with more steal than this, over the whole pass, is marked too. */
#define ML_HOST_BUSY_STEAL_PERCENT 5.0

/* How many other programs a reading names: those that used the most CPU since the reading
 * before it. */
#define ML_HOST_TOP 3

/* Another program than the lab's, and the CPU it used between two readings. */
struct ml_host_proc {
    char comm[16]; /* /proc/PID/stat's comm, as the kernel keeps it (15 bytes at most) */
    long pid;
    double cpu_s; /* utime + stime since the reading before; 0: no such program */
};

/* The host at one moment: /proc/stat's totals and the lab's share of them, seconds since boot
 * over all CPUs together. */
struct ml_host_cpu {
    bool ok;
    double t;                        /* when, ml_now() */
    double total_s, idle_s, steal_s; /* idle includes iowait */
    double softirq_s;                /* /proc/stat's softirq column */
    double qemu_s;                   /* the lab's QEMU processes, all threads */
    double daemons_s;                /* libvirt's daemons and vhost threads */
    double ksoftirqd_s;              /* the ksoftirqd threads */
    double self_s;                   /* meshlab itself and its waited-for children */
    double forks;                    /* /proc/stat's processes: forks since boot; NAN unknown */
    /* Every other program's CPU (not the lab's, not meshlab's children), and that of the
     * children they reaped, summed since the first reading of the table this one shared
     * (ml_host_cpu_read_procs); others_known false without a table and on a remote host. */
    bool others_known;
    double others_s;
    unsigned cpus;
    /* The other programs (not the lab's, not meshlab's children) that used the most CPU since
     * the reading before that shared its table (ml_host_cpu_read_procs), most first; empty
     * (cpu_s 0) without a table, on a remote host, and on a table's first reading. */
    struct ml_host_proc top[ML_HOST_TOP];
};

/* What a reading keeps of every process for the next: its CPU so far. One per series of
 * readings (a pass's seconds). */
struct ml_host_procs;
struct ml_host_procs *ml_host_procs_new(void);
void ml_host_procs_free(struct ml_host_procs *p);
typedef struct ml_host_procs MlHostProcs;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MlHostProcs, ml_host_procs_free)

/* Pure: reads /proc/stat's text (its "cpu" line) into total_s, idle_s, steal_s and softirq_s,
 * at hz ticks a second. False when there is no such line. */
bool ml_hostnoise_parse_stat(const char *text, double hz, struct ml_host_cpu *ret);
/* Pure: utime + stime of a /proc/PID/stat line, seconds at hz ticks a second. */
bool ml_hostnoise_parse_pid_stat(const char *line, double hz, double *ret_s);
/* Pure: what a process named comm (/proc/PID/comm, without its newline) is to the lab: 1 one
 * of the lab's host-side daemons or threads, 2 a ksoftirqd thread, 0 neither. */
int ml_hostnoise_comm_kind(const char *comm);

/* Pure: between readings a and b, the share of the host (percent of all CPUs) used by other
 * programs than the lab, the lab's own share, and the steal share. The kernel's softirq time
 * counts once: ksoftirqd's time is in the softirq column too, so the larger of the two is the
 * lab's. Other is busy less the lab's, and where both readings know the other programs'
 * CPU (others_known, one table), no more than that. NAN where unknown; steal is NAN where b shows
 * no steal at all since boot (a host that never shows any cannot tell steal from none). */
void ml_hostnoise_between(const struct ml_host_cpu *a, const struct ml_host_cpu *b,
                          double *ret_other_percent, double *ret_lab_percent,
                          double *ret_steal_percent);

/* Pure: the seconds of readings r[0..n-1] (r[0] before the transfer started at `start`, one a
 * second after) in which other programs used more than ML_HOST_BUSY_OTHER_PERCENT: each named
 * by the end of its interval, whole seconds after start, into ret_seconds (room for n), the
 * index in r of that end into ret_index (room for n; NULL: not wanted), and the most any of
 * them used into ret_max_percent (NAN when none is known). Returns how many. */
size_t ml_hostnoise_busy_seconds(const struct ml_host_cpu *r, size_t n, double start,
                                 long *ret_seconds, size_t *ret_index, double *ret_max_percent);

/* Pure: "host busy at seconds 3, 4: 38 % other" from those seconds and the most used. */
char *ml_hostnoise_flag(const long *seconds, size_t n, double max_percent);

/* Pure: who the other programs were in the k intervals that end at r[index[0..k-1]] (each
 * index 1 or more), together: "cc1 21 %, as 9 %, make 3 %; 120 forks" (each interval's end
 * reading's top summed by name, the three that used the most, each a percent of all CPUs over
 * those intervals, none under 1 %; the forks in them), or "" when none is named and the forks are
 * unknown. A pass's busy seconds are named at once, so that a program that had exited by the worst
 * second is still named. */
char *ml_hostnoise_programs_in(const struct ml_host_cpu *r, const size_t *index, size_t k);
/* Pure: parses a /proc/PID/stat line: its comm (between the first '(' and the last ')'),
 * ppid, utime + stime and (ret_children_s, or NULL) cutime + cstime, the CPU of the children
 * it waited for, at hz ticks a second. */
bool ml_hostnoise_parse_pid_line(const char *line, double hz, char comm[16], long *ret_ppid,
                                 double *ret_s, double *ret_children_s);
/* Pure: /proc/stat's "processes" line: the forks since boot; false without one. */
bool ml_hostnoise_parse_forks(const char *text, double *ret);

/* utime + stime of process pid, all its threads (/proc/PID/stat); -1 when it is gone. */
double ml_hostnoise_pid_cpu_s(long pid);

struct ml_lab;
/* Reads the host now: /proc/stat, the lab's QEMU processes, the lab's daemons by their comm
 * (/proc/PID/stat), meshlab's own rusage. ret->ok false when /proc/stat could not be read. A lab
 * on another host is read through libvirt instead: the node's CPU times and each guest's, no
 * steal, softirq or daemons (they count as other programs'), and meshlab is not on that host. */
void ml_host_cpu_read(struct ml_lab *lab, struct ml_host_cpu *ret);
/* The same, and every other program's CPU kept in procs: ret->top names those that used the most
 * since procs' reading before (none on its first). procs NULL: as ml_host_cpu_read. */
void ml_host_cpu_read_procs(struct ml_lab *lab, struct ml_host_procs *procs,
                            struct ml_host_cpu *ret);
