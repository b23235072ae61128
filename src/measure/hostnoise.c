#include "measure/hostnoise.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <libvirt/virterror.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/util.h"
#include "virt/lab.h"
#include "virt/virt.h"

bool ml_hostnoise_parse_stat(const char *text, double hz, struct ml_host_cpu *ret)
{
    /* user nice system idle iowait irq softirq steal */
    unsigned long long v[8] = {0};
    if (!text || hz <= 0 ||
        sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) < 8)
        return false;
    double total = 0;
    for (int i = 0; i < 8; i++)
        total += (double)v[i];
    ret->total_s = total / hz;
    ret->idle_s = (double)(v[3] + v[4]) / hz;
    ret->softirq_s = (double)v[6] / hz;
    ret->steal_s = (double)v[7] / hz;
    return true;
}

bool ml_hostnoise_parse_forks(const char *text, double *ret)
{
    const char *p = text ? strstr(text, "\nprocesses ") : NULL;
    unsigned long long v = 0;
    if (!p || sscanf(p + 1, "processes %llu", &v) != 1)
        return false;
    *ret = (double)v;
    return true;
}

bool ml_hostnoise_parse_pid_line(const char *line, double hz, char comm[16], long *ret_ppid,
                                 double *ret_s, double *ret_children_s)
{
    const char *open = line ? strchr(line, '(') : NULL;
    const char *close = line ? strrchr(line, ')') : NULL;
    long ppid = 0;
    /* After ')': state(3) ppid(4) pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
     * utime(14) stime(15) cutime(16) cstime(17), in one scan (every process, every second) */
    unsigned long long utime = 0, stime = 0;
    long long cutime = 0, cstime = 0;
    if (!open || !close || close < open || hz <= 0 ||
        sscanf(close + 1, " %*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &ppid,
               &utime, &stime, &cutime, &cstime) != 5)
        return false;
    size_t n = MIN((size_t)(close - open - 1), (size_t)15);
    memcpy(comm, open + 1, n);
    comm[n] = '\0';
    *ret_ppid = ppid;
    *ret_s = (double)(utime + stime) / hz;
    if (ret_children_s)
        *ret_children_s = (double)MAX(0LL, cutime + cstime) / hz;
    return true;
}

char *ml_hostnoise_programs_in(const struct ml_host_cpu *r, const size_t *index, size_t k)
{
    struct by_name {
        const char *comm;
        double cpu_s;
    } by[ML_HOST_TOP * 64];
    size_t n_by = 0;
    double total = 0, forks = 0;
    for (size_t j = 0; j < k; j++) {
        const struct ml_host_cpu *a = &r[index[j] - 1], *b = &r[index[j]];
        total += b->total_s - a->total_s;
        forks += b->forks - a->forks;
        for (size_t i = 0; i < ML_HOST_TOP && b->top[i].cpu_s > 0; i++) {
            size_t at = 0;
            while (at < n_by && strcmp(by[at].comm, b->top[i].comm))
                at++;
            if (at == n_by && n_by < G_N_ELEMENTS(by))
                by[n_by++] = (struct by_name){b->top[i].comm, 0};
            if (at < n_by)
                by[at].cpu_s += b->top[i].cpu_s;
        }
    }
    GString *s = g_string_new(NULL);
    for (size_t shown = 0; shown < ML_HOST_TOP && total > 0; shown++) {
        size_t most = n_by;
        for (size_t i = 0; i < n_by; i++)
            if (by[i].cpu_s > 0 && (most == n_by || by[i].cpu_s > by[most].cpu_s))
                most = i;
        /* under 1 % of the host a program explains nothing about a busy second; naming it
         * "0 %" only made the list longer (the seconds' detail in results.json keeps it) */
        if (most == n_by || 100.0 * by[most].cpu_s / total < 1)
            break;
        g_string_append_printf(s, "%s", shown ? ", " : "");
        /* a comm is the program's to choose: only what a name is made of is printed */
        for (const char *c = by[most].comm; *c; c++)
            g_string_append_c(s, g_ascii_isgraph(*c) && *c != '|' && *c != '`' ? *c : '?');
        g_string_append_printf(s, " %.0f %%", 100.0 * by[most].cpu_s / total);
        by[most].cpu_s = 0;
    }
    if (k && isfinite(forks) && forks >= 0)
        g_string_append_printf(s, "%s%.0f fork%s", s->len ? "; " : "", forks,
                               forks == 1 ? "" : "s");
    return g_string_free(s, FALSE);
}

bool ml_hostnoise_parse_pid_stat(const char *line, double hz, double *ret_s)
{
    const char *p = line ? strrchr(line, ')') : NULL;
    if (!p || hz <= 0)
        return false;
    /* After ')': state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
     * utime(14) stime(15). */
    unsigned long long utime = 0, stime = 0;
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) !=
        2)
        return false;
    *ret_s = (double)(utime + stime) / hz;
    return true;
}

int ml_hostnoise_comm_kind(const char *comm)
{
    /* libvirtd, or the modular daemons that replace it (virtqemud answers the agent calls),
     * virtlogd (the guests' consoles), vhost-PID (the kernel's virtio-net workers). */
    static const char *const lab[] = {"libvirtd",   "virtqemud",    "virtlogd",
                                      "virtproxyd", "virtnetworkd", "virtlockd"};
    if (!comm)
        return 0;
    if (g_str_has_prefix(comm, "ksoftirqd/"))
        return 2;
    if (g_str_has_prefix(comm, "vhost-"))
        return 1;
    for (size_t i = 0; i < G_N_ELEMENTS(lab); i++)
        if (strcmp(comm, lab[i]) == 0)
            return 1;
    return 0;
}

void ml_hostnoise_between(const struct ml_host_cpu *a, const struct ml_host_cpu *b,
                          double *ret_other_percent, double *ret_lab_percent,
                          double *ret_steal_percent)
{
    *ret_other_percent = *ret_lab_percent = *ret_steal_percent = NAN;
    double total = b->total_s - a->total_s;
    if (!a->ok || !b->ok || total <= 0)
        return;
    /* The lab's processes are summed over their whole lives: one that ended between the two
     * readings (a libvirt daemon's idle timeout) takes its history out of the later sum, and
     * the pair can say nothing of who used the CPU. Unknown, not "other". */
    if (b->qemu_s < a->qemu_s || b->daemons_s < a->daemons_s)
        return;
    double steal = b->steal_s - a->steal_s;
    double busy = total - (b->idle_s - a->idle_s) - steal;
    double kernel = MAX(b->softirq_s - a->softirq_s, b->ksoftirqd_s - a->ksoftirqd_s);
    double lab = (b->qemu_s - a->qemu_s) + (b->daemons_s - a->daemons_s) + (b->self_s - a->self_s) +
                 MAX(0.0, kernel);
    lab = CLAMP(lab, 0.0, MAX(0.0, busy));
    double other = busy - lab;
    /* Where both readings are of one table of every process: only what other programs were
     * charged with. The rest of busy less the lab's is charged to no process: on this kind of
     * host, up to a fifth of two CPUs of system time while the CPUs are partly idle (a
     * fixed-rate pass), none under full load; it is not another program's. */
    double seen = b->others_s - a->others_s;
    if (a->others_known && b->others_known && seen >= 0)
        other = MIN(other, seen);
    *ret_other_percent = MAX(0.0, 100.0 * other / total);
    *ret_lab_percent = 100.0 * lab / total;
    if (b->steal_s > 0)
        *ret_steal_percent = MAX(0.0, 100.0 * steal / total);
}

size_t ml_hostnoise_busy_seconds(const struct ml_host_cpu *r, size_t n, double start,
                                 long *ret_seconds, size_t *ret_index, double *ret_max_percent)
{
    size_t k = 0;
    *ret_max_percent = NAN;
    for (size_t i = 1; i < n; i++) {
        double other, lab, steal;
        ml_hostnoise_between(&r[i - 1], &r[i], &other, &lab, &steal);
        if (!isfinite(other) || other <= ML_HOST_BUSY_OTHER_PERCENT)
            continue;
        if (ret_index)
            ret_index[k] = i;
        ret_seconds[k++] = MAX(0L, lround(r[i].t - start));
        if (!isfinite(*ret_max_percent) || other > *ret_max_percent)
            *ret_max_percent = other;
    }
    return k;
}

char *ml_hostnoise_flag(const long *seconds, size_t n, double max_percent)
{
    if (n == 0)
        return NULL;
    GString *s = g_string_new(n == 1 ? "host busy at second " : "host busy at seconds ");
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(s, "%s%ld", i ? ", " : "", seconds[i]);
    g_string_append_printf(s, ": %.0f %% other", max_percent);
    return g_string_free(s, FALSE);
}

double ml_hostnoise_pid_cpu_s(long pid)
{
    double hz = (double)sysconf(_SC_CLK_TCK);
    g_autofree char *path = g_strdup_printf("/proc/%ld/stat", pid);
    g_autofree char *line = NULL;
    double s = -1;
    if (pid <= 0 || !g_file_get_contents(path, &line, NULL, NULL) ||
        !ml_hostnoise_parse_pid_stat(line, hz, &s))
        return -1;
    return s;
}

struct seen {
    double cpu_s, children_s;
    unsigned gen;
};

struct ml_host_procs {
    GHashTable *by_pid; /* pid -> struct seen */
    unsigned gen;       /* readings so far */
    double others_s;    /* every other program's CPU since the first reading */
};

struct ml_host_procs *ml_host_procs_new(void)
{
    struct ml_host_procs *p = g_new0(struct ml_host_procs, 1);
    p->by_pid = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    return p;
}

void ml_host_procs_free(struct ml_host_procs *p)
{
    if (!p)
        return;
    g_hash_table_destroy(p->by_pid);
    g_free(p);
}

static gboolean gone(gpointer key, gpointer value, gpointer gen)
{
    (void)key;
    return ((struct seen *)value)->gen != GPOINTER_TO_UINT(gen);
}

/* Keeps the ML_HOST_TOP largest in top, most first. */
static void rank(struct ml_host_proc *top, const char *comm, long pid, double cpu_s)
{
    size_t at = ML_HOST_TOP;
    while (at > 0 && !(top[at - 1].cpu_s >= cpu_s))
        at--;
    if (at == ML_HOST_TOP)
        return;
    memmove(top + at + 1, top + at, (ML_HOST_TOP - at - 1) * sizeof(*top));
    g_strlcpy(top[at].comm, comm, sizeof(top[at].comm));
    top[at].pid = pid;
    top[at].cpu_s = cpu_s;
}

/* The lab's daemons' and the ksoftirqd threads' CPU, found by their names under /proc; with
 * procs, every other program's too, and the most since procs' reading before into ret->top
 * (the lab's QEMU processes, qemu[], and meshlab's children are the lab's, not others). */
static void read_daemons(double hz, struct ml_host_procs *procs, const long *qemu, size_t n_qemu,
                         struct ml_host_cpu *ret)
{
    GDir *d = g_dir_open("/proc", 0, NULL);
    const char *name;
    long self = (long)getpid();
    bool primed = procs && procs->gen > 0;
    if (procs)
        procs->gen++;
    while (d && (name = g_dir_read_name(d))) {
        char *end = NULL;
        long pid = strtol(name, &end, 10);
        if (pid <= 0 || *end)
            continue;
        g_autofree char *path = g_strdup_printf("/proc/%ld/stat", pid);
        g_autofree char *line = NULL;
        char comm[16];
        long ppid = 0;
        double s = 0, children = 0;
        if (!g_file_get_contents(path, &line, NULL, NULL) ||
            !ml_hostnoise_parse_pid_line(line, hz, comm, &ppid, &s, &children))
            continue;
        int kind = ml_hostnoise_comm_kind(comm);
        if (kind == 1)
            ret->daemons_s += s;
        else if (kind == 2)
            ret->ksoftirqd_s += s;
        bool lab = kind != 0 || pid == self || ppid == self;
        for (size_t i = 0; !lab && i < n_qemu; i++)
            lab = qemu[i] == pid;
        if (!procs || lab)
            continue;
        struct seen *was = g_hash_table_lookup(procs->by_pid, GINT_TO_POINTER((int)pid));
        /* A program born since the reading before used all its time since; so did the children
         * a program reaped since (their CPU moves into its cutime and cstime when they end: a
         * compiler's many short processes are counted through the make that waits for them). */
        double used = was ? s - was->cpu_s : s;
        double reaped = was ? children - was->children_s : children;
        if (primed && used > 0)
            rank(ret->top, comm, pid, used);
        if (primed)
            procs->others_s += MAX(0.0, used) + MAX(0.0, reaped);
        if (!was) {
            was = g_new0(struct seen, 1);
            g_hash_table_insert(procs->by_pid, GINT_TO_POINTER((int)pid), was);
        }
        was->cpu_s = s;
        was->children_s = children;
        was->gen = procs->gen;
    }
    if (procs) {
        g_hash_table_foreach_remove(procs->by_pid, gone, GUINT_TO_POINTER(procs->gen));
        ret->others_s = procs->others_s;
        ret->others_known = true;
    }
    if (d)
        g_dir_close(d);
}

static double rusage_s(int who)
{
    struct rusage ru;
    if (getrusage(who, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Another host's CPU, from libvirt (virNodeGetCPUStats: kernel, user, idle and iowait, ns, all
 * CPUs together) and each guest's QEMU (virDomainGetInfo's cpuTime). The host's steal,
 * softirq and libvirt daemons are not in libvirt's figures: they count as other programs'. */
static void host_cpu_remote(struct ml_lab *lab, struct ml_host_cpu *ret)
{
    virNodeInfo ni;
    ret->cpus = virNodeGetInfo(lab->conn, &ni) == 0 ? MAX(1u, ni.cpus) : 1;
    int n = 0;
    if (virNodeGetCPUStats(lab->conn, VIR_NODE_CPU_STATS_ALL_CPUS, NULL, &n, 0) < 0 || n <= 0)
        return;
    g_autofree virNodeCPUStatsPtr p = g_new0(virNodeCPUStats, n);
    if (virNodeGetCPUStats(lab->conn, VIR_NODE_CPU_STATS_ALL_CPUS, p, &n, 0) < 0)
        return;
    for (int k = 0; k < n; k++) {
        double v = (double)p[k].value / 1e9;
        if (!strcmp(p[k].field, VIR_NODE_CPU_STATS_IDLE) ||
            !strcmp(p[k].field, VIR_NODE_CPU_STATS_IOWAIT))
            ret->idle_s += v;
        if (!strcmp(p[k].field, VIR_NODE_CPU_STATS_IDLE) ||
            !strcmp(p[k].field, VIR_NODE_CPU_STATS_IOWAIT) ||
            !strcmp(p[k].field, VIR_NODE_CPU_STATS_KERNEL) ||
            !strcmp(p[k].field, VIR_NODE_CPU_STATS_USER))
            ret->total_s += v;
    }
    ret->ok = ret->total_s > 0;
    /* Only the guests of this host (the hub's): a lab over several hosts has others elsewhere,
     * whose time is not this host's. */
    size_t here = lab->plan->guests[lab->topo->hub].host;
    for (size_t i = 0; ret->ok && i < lab->plan->n_guests; i++) {
        virDomainInfo di;
        if (lab->plan->guests[i].host == here && ml_lab_dom(lab, i) &&
            virDomainGetInfo(ml_lab_dom(lab, i), &di) == 0)
            ret->qemu_s += (double)di.cpuTime / 1e9;
    }
    virResetLastError();
}

void ml_host_cpu_read_procs(struct ml_lab *lab, struct ml_host_procs *procs,
                            struct ml_host_cpu *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->forks = NAN;
    if (lab && lab->remote) {
        ret->t = ml_now();
        host_cpu_remote(lab, ret);
        return;
    }
    double hz = (double)sysconf(_SC_CLK_TCK);
    ret->t = ml_now();
    ret->cpus = (unsigned)MAX(1, sysconf(_SC_NPROCESSORS_ONLN));
    g_autofree char *text = NULL;
    ret->ok = g_file_get_contents("/proc/stat", &text, NULL, NULL) &&
              ml_hostnoise_parse_stat(text, hz, ret);
    if (ret->ok && !ml_hostnoise_parse_forks(text, &ret->forks))
        ret->forks = NAN;
    long qemu[ML_MAX_NODES] = {0};
    size_t n_qemu = 0;
    for (size_t i = 0; ret->ok && lab && i < lab->plan->n_guests && n_qemu < ML_MAX_NODES; i++) {
        long pid = ml_virt_qemu_pid(ml_lab_dom(lab, i));
        double s = ml_hostnoise_pid_cpu_s(pid); /* not inside MAX: it evaluates twice */
        qemu[n_qemu++] = pid;
        ret->qemu_s += MAX(0.0, s);
    }
    if (ret->ok)
        read_daemons(hz, procs, qemu, n_qemu, ret);
    ret->self_s = rusage_s(RUSAGE_SELF) + rusage_s(RUSAGE_CHILDREN);
}

void ml_host_cpu_read(struct ml_lab *lab, struct ml_host_cpu *ret)
{
    ml_host_cpu_read_procs(lab, NULL, ret);
}
