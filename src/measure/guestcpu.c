#include "measure/guestcpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "virt/agent.h"
#include "virt/virt.h"

/* The registry's daemons (dataplane.h), the same order everywhere: daemon_s[k] is ml_daemon_at(k).
 */
/* The registry is constant: its daemons' names are walked once, not on every line a parser
 * reads (each ml_daemon_at walks the registry to drop names seen before). */
static const char *const *daemon_names(void)
{
    static const char *names[ML_DAEMONS_MAX + 1];
    static gsize done;
    if (g_once_init_enter(&done)) {
        for (size_t i = 0; i < ML_DAEMONS_MAX && ml_daemon_at(i); i++)
            names[i] = ml_daemon_at(i)->name;
        g_once_init_leave(&done, 1);
    }
    return names;
}

const char *ml_daemon_name(size_t i)
{
    return i < ML_DAEMONS_MAX ? daemon_names()[i] : NULL;
}

size_t ml_daemon_index(const char *name)
{
    for (size_t k = 0; name && k < ml_daemons_n(); k++)
        if (!strcmp(ml_daemon_name(k), name))
            return k;
    return ML_DAEMONS_MAX;
}

size_t ml_daemons_n(void)
{
    static size_t n;
    static gsize done;
    if (g_once_init_enter(&done)) {
        n = ml_daemon_count();
        g_assert(n <= ML_DAEMONS_MAX);
        g_once_init_leave(&done, 1);
    }
    return n;
}

void ml_guest_cpu_daemon_rates(const struct ml_guest_cpu *a, const struct ml_guest_cpu *b,
                               double dt, double ret[ML_DAEMONS_MAX])
{
    for (size_t k = 0; k < ML_DAEMONS_MAX; k++)
        ret[k] = a->daemon_s[k] >= 0 && b->daemon_s[k] >= 0 && dt > 0
                     ? MAX(0.0, (b->daemon_s[k] - a->daemon_s[k]) / dt)
                     : -1;
}

struct json_object *ml_guest_daemon_rates_json(const struct ml_path_ops *ops,
                                               const double rates[ML_DAEMONS_MAX])
{
    struct json_object *o = json_object_new_object();
    for (size_t k = 0; k < ml_daemons_n(); k++)
        if (rates[k] >= 0 && ml_path_runs_daemon(ops, ml_daemon_name(k)))
            json_object_object_add(o, ml_daemon_name(k), json_object_new_double(rates[k]));
    return o;
}

void ml_guest_daemons_json(const struct ml_path_ops *ops, const struct ml_guest_cpu *a,
                           const struct ml_guest_cpu *b, const double idle_s_per_s[ML_DAEMONS_MAX],
                           double seconds, double window_s, struct json_object *cpu,
                           struct json_object *above_idle, struct json_object *rss)
{
    for (size_t k = 0; k < ml_daemons_n(); k++) {
        if (!ml_path_runs_daemon(ops, ml_daemon_name(k)))
            continue;
        if (a->daemon_s[k] >= 0 && b->daemon_s[k] >= 0) {
            double s = b->daemon_s[k] - a->daemon_s[k];
            json_object_object_add(cpu, ml_daemon_name(k), json_object_new_double(s));
            /* a daemon's ticks are sampled as the guest's are */
            double above = ml_guest_cpu_above_idle(s, seconds, idle_s_per_s[k], 0, window_s);
            json_object_object_add(above_idle, ml_daemon_name(k),
                                   isfinite(above) ? json_object_new_double(above) : NULL);
        }
        if (b->daemon_rss_kib[k] >= 0)
            json_object_object_add(rss, ml_daemon_name(k),
                                   json_object_new_int64(b->daemon_rss_kib[k]));
    }
}

/* /proc/stat's first line, then each daemon process's stat line and its VmRSS line ("D NAME
 * STAT", "R NAME VmRSS: N kB"). One awk process reads them all: under TCG every process the
 * guest starts costs it a tenth of a second or more, and the shell loop this replaced (pidof,
 * cat and grep for each daemon, each in a subshell) took 3 to 7 s of a pass's single vCPU
 * twice a pass. The files are read with getline from BEGIN, never named to awk as input: a
 * process that ends before awk opens its file is skipped, where mawk (Debian's awk) stops at an
 * input file it cannot open. Only the daemons' files are read (pidof names them; the shell turns
 * the pids into paths with builtins alone): mawk's getline also stops the whole program on a
 * read error, and a process that ends between the open and the read gives one (ESRCH). With
 * every /proc/PID/stat read, a pass's ping ending at its deadline while the guests' CPU was read
 * after the transfer did exactly that in CI: "awk: read error (No such process)". comm sits
 * between the first '(' and the last ')' of a stat line (it may hold either); it is what pidof
 * matched, kernel-truncated to 15 characters, which every registry daemon's name fits. */
char *ml_guest_cpu_command(void)
{
    GString *names = g_string_new(NULL);
    for (size_t k = 0; k < ml_daemons_n(); k++) {
        g_assert(strlen(ml_daemon_name(k)) <= 15);
        g_string_append_printf(names, " %s", ml_daemon_name(k));
    }
    GString *c = g_string_new(NULL);
    g_string_append_printf(c,
                           "set -- $(pidof%s); n=$#; for p in \"$@\"; do "
                           "set -- \"$@\" \"/proc/$p/stat\"; done; shift $n; ",
                           names->str);
    g_string_append_printf(c, "awk 'BEGIN { n = split(\"%s", names->str);
    g_string_free(names, TRUE);
    g_string_append(
        c, "\", d, \" \"); for (i = 1; i <= n; i++) want[d[i]] = 1; "
           "if ((getline l < \"/proc/stat\") > 0) print l; "
           "for (a = 1; a < ARGC; a++) { f = ARGV[a]; if ((getline s < f) <= 0) continue; "
           "close(f); o = index(s, \"(\"); p = 0; "
           "while ((k = index(substr(s, p + 1), \")\")) > 0) p += k; "
           "if (o < 1 || p <= o) continue; comm = substr(s, o + 1, p - o - 1); "
           "if (!(comm in want)) continue; print \"D \" comm \" \" s; "
           "st = f; sub(/stat$/, \"status\", st); "
           "while ((getline t < st) > 0) if (t ~ /^VmRSS:/) { print \"R \" comm \" \" t; break } "
           "close(st) } exit }' \"$@\"");
    return g_string_free(c, FALSE);
}

/* USER_HZ is 100 on every Linux architecture meshlab boots. */
#define GUEST_HZ 100.0

/* utime + stime of a /proc/PID/stat line, read after the last ')' (comm may hold anything). */
double ml_guest_cpu_busy_s(const struct ml_guest_cpu *c)
{
    return c->user_s + c->nice_s + c->system_s + c->softirq_s + c->irq_s;
}

void ml_guest_cpu_idle(double first_busy_s, double window_busy_s, double dt, double *ret_rate,
                       double *ret_cost_s)
{
    double cost = MAX(0.0, first_busy_s);
    *ret_cost_s = cost;
    *ret_rate = MAX(0.0, (window_busy_s - cost) / MAX(dt, 0.1));
}

double ml_guest_cpu_noise_s(double expected_s, double seconds)
{
    double tick = 1 / GUEST_HZ;
    double e = MAX(0.0, expected_s);
    double f = seconds > 0 ? CLAMP(e / seconds, 0.0, 1.0) : 0;
    return 2 * sqrt(tick * e * (1 - f) + tick * tick);
}

double ml_guest_cpu_above_idle_noisy(double busy_s, double seconds, double rate, double cost_s,
                                     double window_s, double cost_noise_s)
{
    if (!(rate >= 0))
        return NAN;
    double idle = rate * seconds + MAX(0.0, cost_s);
    double above = busy_s - idle;
    double pass = ml_guest_cpu_noise_s(idle, seconds);
    double base =
        window_s > 0 ? ml_guest_cpu_noise_s(rate * window_s, window_s) * seconds / window_s : 0;
    double cost = isfinite(cost_noise_s) ? MAX(0.0, cost_noise_s) : 0;
    return above < 0 && -above <= sqrt(pass * pass + base * base + cost * cost) ? 0 : above;
}

double ml_guest_cpu_above_idle(double busy_s, double seconds, double rate, double cost_s,
                               double window_s)
{
    return ml_guest_cpu_above_idle_noisy(busy_s, seconds, rate, cost_s, window_s, 0);
}

double ml_guest_cpu_view_cost(double busy_s, double dt, double rate, double read_cost_s,
                              double *ret_noise_s)
{
    *ret_noise_s = NAN;
    if (!(rate >= 0) || !(dt > 0))
        return -1;
    double expected = rate * dt + MAX(0.0, read_cost_s);
    *ret_noise_s = ml_guest_cpu_noise_s(expected, dt);
    double over = busy_s - expected;
    return over > *ret_noise_s ? over : 0;
}

size_t ml_guest_cpu_view_median(const double *price, size_t n)
{
    /* n is a handful: for each priced view, how many priced ones sort before it (ties by
     * index), and the one with half of them before it */
    size_t priced = 0;
    for (size_t k = 0; k < n; k++)
        priced += price[k] >= 0;
    if (priced == 0)
        return 0;
    size_t want = (priced - 1) / 2;
    for (size_t k = 0; k < n; k++) {
        if (!(price[k] >= 0))
            continue;
        size_t before = 0;
        for (size_t j = 0; j < n; j++)
            before += price[j] >= 0 && (price[j] < price[k] || (price[j] == price[k] && j < k));
        if (before == want)
            return k;
    }
    return 0;
}

bool ml_guest_cpu_parse(const char *text, struct ml_guest_cpu *ret)
{
    memset(ret, 0, sizeof(*ret));
    for (size_t i = 0; i < ML_DAEMONS_MAX; i++) {
        ret->daemon_s[i] = -1;
        ret->daemon_rss_kib[i] = -1;
    }
    ret->vcpu_s = ret->qemu_s = -1;
    g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
    for (char **l = lines; *l; l++) {
        unsigned long long v[8] = {0};
        if (g_str_has_prefix(*l, "cpu ") &&
            sscanf(*l, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) >= 7) {
            ret->user_s = (double)v[0] / GUEST_HZ;
            ret->nice_s = (double)v[1] / GUEST_HZ;
            ret->system_s = (double)v[2] / GUEST_HZ;
            ret->idle_s = (double)v[3] / GUEST_HZ;
            ret->iowait_s = (double)v[4] / GUEST_HZ;
            ret->irq_s = (double)v[5] / GUEST_HZ;
            ret->softirq_s = (double)v[6] / GUEST_HZ;
            ret->steal_s = (double)v[7] / GUEST_HZ;
            ret->ok = true;
            continue;
        }
        if (g_str_has_prefix(*l, "R ")) {
            for (size_t i = 0; i < ml_daemons_n(); i++) {
                const char *name = ml_daemon_name(i);
                size_t n = strlen(name);
                long long kib = 0, sum = MAX(ret->daemon_rss_kib[i], 0);
                /* A guest's figure is untrusted: a negative or overflowing sum is not added. */
                if (!strncmp(*l + 2, name, n) && (*l)[2 + n] == ' ' &&
                    sscanf(*l + 3 + n, "VmRSS: %lld kB", &kib) == 1 && kib >= 0 &&
                    !__builtin_add_overflow(sum, kib, &sum))
                    ret->daemon_rss_kib[i] = sum;
            }
            continue;
        }
        if (!g_str_has_prefix(*l, "D "))
            continue;
        for (size_t i = 0; i < ml_daemons_n(); i++) {
            const char *name = ml_daemon_name(i);
            size_t n = strlen(name);
            double s;
            if (strncmp(*l + 2, name, n) || (*l)[2 + n] != ' ' ||
                !ml_hostnoise_parse_pid_stat(*l + 3 + n, GUEST_HZ, &s))
                continue;
            ret->daemon_s[i] = (ret->daemon_s[i] < 0 ? 0 : ret->daemon_s[i]) + s;
        }
    }
    return ret->ok;
}

/* Guest i's QEMU process on its host, all its threads: what emulating the guest cost. On
 * another host, whose processes this machine cannot see, libvirt's cpuTime of the domain (each
 * guest's own host: a lab over several may have some here and some there). */
static double qemu_cpu_s(const struct ml_lab *lab, size_t i)
{
    virDomainPtr dom = ml_lab_dom(lab, i);
    if (!ml_lab_host_of(lab, i)->remote)
        return ml_hostnoise_pid_cpu_s(ml_virt_qemu_pid(dom));
    virDomainInfo di;
    return virDomainGetInfo(dom, &di) == 0 ? (double)di.cpuTime / 1e9 : -1;
}

bool ml_guest_cpu_read(struct ml_lab *lab, struct ml_guest_cpu ret[ML_MAX_NODES], GError **err)
{
    size_t n = lab->plan->n_guests;
    const char *cmds[ML_MAX_NODES] = {0};
    char *out[ML_MAX_NODES] = {0};
    g_autofree char *cmd = ml_guest_cpu_command();
    for (size_t i = 0; i < n; i++)
        cmds[i] = cmd;
    bool ok = ml_lab_run_parallel(lab, NULL, cmds, NULL, 30, out, "reading CPU time", err);
    for (size_t i = 0; i < n; i++) {
        if (ok && !ml_guest_cpu_parse(out[i], &ret[i])) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST, "guest %s printed no cpu line from /proc/stat",
                        lab->topo->nodes[i].name);
            ok = false;
        }
        g_free(out[i]);
    }
    return ok;
}

void ml_guest_cpu_take_busy(struct ml_guest_cpu *b, const struct ml_guest_cpu *a)
{
    b->ok = a->ok;
    b->user_s = a->user_s;
    b->nice_s = a->nice_s;
    b->system_s = a->system_s;
    b->idle_s = a->idle_s;
    b->iowait_s = a->iowait_s;
    b->irq_s = a->irq_s;
    b->softirq_s = a->softirq_s;
    b->steal_s = a->steal_s;
    b->vcpu_s = a->vcpu_s;
    b->qemu_s = a->qemu_s;
}

/* /proc/stat of a 1-vCPU guest is under 2 kB; its first line is all that is read of it. */
#define STAT_MAX 16384

bool ml_guest_cpu_stat(struct ml_lab *lab, struct ml_guest_cpu ret[ML_MAX_NODES], GError **err)
{
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        g_autofree char *text = ml_agent_file_get(ml_lab_dom(lab, i), "/proc/stat", STAT_MAX, err);
        struct ml_guest_cpu c;
        if (!text) {
            g_prefix_error(err, "reading CPU time of guest %s: ", lab->topo->nodes[i].name);
            return false;
        }
        if (!ml_guest_cpu_parse(text, &c)) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST, "guest %s's /proc/stat has no cpu line",
                        lab->topo->nodes[i].name);
            return false;
        }
        c.vcpu_s = ml_virt_vcpu_time_s(ml_lab_dom(lab, i));
        c.qemu_s = qemu_cpu_s(lab, i);
        ml_guest_cpu_take_busy(&ret[i], &c);
    }
    return true;
}
