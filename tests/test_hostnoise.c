/* The host's busy time split into the lab's own work and other programs', on recorded /proc
 * texts: a quiet host running a lab (QEMU, libvirtd answering the agent, the bridge's softirq,
 * meshlab) is not flagged, and a second in which another program ran is, by its number. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/hostnoise.h"

/* /proc/stat of a 2-CPU host, one second (100 ticks a CPU) apart: user nice system idle iowait
 * irq softirq steal. Between quiet0 and quiet1: 200 ticks, 102 busy (60 user + 22 system +
 * 20 softirq), no steal since boot. */
static const char quiet0[] = "cpu  1000 0 500 8000 100 10 200 0 0 0\n"
                             "cpu0 500 0 250 4000 50 5 100 0 0 0\n"
                             "cpu1 500 0 250 4000 50 5 100 0 0 0\n"
                             "intr 12345\nctxt 999\n";
static const char quiet1[] = "cpu  1060 0 522 8098 100 10 220 0 0 0\n"
                             "cpu0 530 0 261 4049 50 5 110 0 0 0\n"
                             "cpu1 530 0 261 4049 50 5 110 0 0 0\n"
                             "intr 12399\nctxt 1999\n";
/* One second later: another program ran 76 ticks (38 % of the host); steal appears. */
static const char busy2[] = "cpu  1136 0 522 8198 100 10 240 4 0 0\n";

/* The lab's processes at quiet0 and quiet1 (utime, stime at 100 Hz): QEMU 60 ticks, libvirtd
 * 15; the comm has a space and a parenthesis, which the parser must step over. */
static const char qemu0[] = "4242 (qemu-system-x86) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
                            "3000 1000 0 0 20 0 9 0 100 0 0\n";
static const char qemu1[] = "4242 (qemu-system-x86) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
                            "3045 1015 0 0 20 0 9 0 100 0 0\n";
static const char libvirtd0[] = "777 (libvirtd) S 1 777 777 0 -1 0 0 0 0 0 200 100 0 0\n";
static const char libvirtd1[] = "777 (libvirtd) S 1 777 777 0 -1 0 0 0 0 0 210 105 0 0\n";

static void reading(const char *stat, const char *qemu, const char *daemon, double self_s, double t,
                    struct ml_host_cpu *r)
{
    *r = (struct ml_host_cpu){.ok = true, .t = t, .cpus = 2, .self_s = self_s};
    CHECK(ml_hostnoise_parse_stat(stat, 100, r));
    CHECK(ml_hostnoise_parse_pid_stat(qemu, 100, &r->qemu_s));
    CHECK(ml_hostnoise_parse_pid_stat(daemon, 100, &r->daemons_s));
}

/* The programs of the one interval between readings a and b. */
static char *one_interval(const struct ml_host_cpu *a, const struct ml_host_cpu *b)
{
    struct ml_host_cpu r[2] = {*a, *b};
    size_t end = 1;
    return ml_hostnoise_programs_in(r, &end, 1);
}

/* Who the other programs were (issue 38 item 4): a /proc/PID/stat line's comm, ppid and CPU;
 * /proc/stat's forks; a second's sentence; and on this host, a busy program that is not this
 * process's child, named with its pid and CPU by the reading after it ran. */
static void test_programs(void)
{
    char comm[16];
    long ppid = 0;
    double cpu = 0, children = -1;
    /* a comm with a space and a parenthesis: the last ')' ends it; cutime 30 and cstime 20
     * are the children it reaped */
    CHECK(ml_hostnoise_parse_pid_line("4242 (cc1 (x)) R 4000 4242 4000 0 -1 4194304 100 0 0 0 "
                                      "150 50 30 20 20 0 1 0 1000 1000000 100\n",
                                      100, comm, &ppid, &cpu, &children));
    CHECK_STR(comm, "cc1 (x)");
    CHECK(ppid == 4000 && fabs(cpu - 2.0) < 1e-9 && fabs(children - 0.5) < 1e-9);
    CHECK(!ml_hostnoise_parse_pid_line("4242 cc1 R", 100, comm, &ppid, &cpu, NULL));
    double forks = 0;
    CHECK(ml_hostnoise_parse_forks("cpu  1 2 3 4 5 6 7 8\nctxt 9\nprocesses 123456\n", &forks));
    CHECK(forks == 123456);
    CHECK(!ml_hostnoise_parse_forks("cpu  1 2 3 4 5 6 7 8\n", &forks));

    struct ml_host_cpu a = {.ok = true, .total_s = 100, .forks = 1000};
    struct ml_host_cpu b = {.ok = true, .total_s = 102, .forks = 1120};
    g_strlcpy(b.top[0].comm, "cc1", sizeof(b.top[0].comm));
    b.top[0].cpu_s = 0.42;
    g_strlcpy(b.top[1].comm, "as|`x", sizeof(b.top[1].comm));
    b.top[1].cpu_s = 0.18;
    char *s = one_interval(&a, &b);
    CHECK_STR(s, "cc1 21 %, as??x 9 %; 120 forks");
    free(s);
    /* two processes of one name are one program */
    g_strlcpy(b.top[2].comm, "cc1", sizeof(b.top[2].comm));
    b.top[2].cpu_s = 0.1;
    s = one_interval(&a, &b);
    CHECK_STR(s, "cc1 26 %, as??x 9 %; 120 forks");
    free(s);
    /* one that used under 1 % of the host in those seconds is not named */
    b.top[1].cpu_s = 0.019;
    s = one_interval(&a, &b);
    CHECK_STR(s, "cc1 26 %; 120 forks");
    free(s);
    b.top[1].cpu_s = 0.18;

    /* A pass's busy seconds together (the intervals ending at r[1] and r[3]): a loop that ran
     * in the first and had exited by the second, the worse one, is still named, its CPU summed
     * over both seconds; r[2] (a quiet second between them) does not count. */
    struct ml_host_cpu r[4] = {
        {.ok = true, .total_s = 100, .forks = 10},
        {.ok = true, .total_s = 102, .forks = 12},
        {.ok = true, .total_s = 104, .forks = 40},
        {.ok = true, .total_s = 106, .forks = 43},
    };
    g_strlcpy(r[1].top[0].comm, "sh", sizeof(r[1].top[0].comm));
    r[1].top[0].cpu_s = 0.8;
    g_strlcpy(r[2].top[0].comm, "quiet", sizeof(r[2].top[0].comm));
    r[2].top[0].cpu_s = 1.9;
    g_strlcpy(r[3].top[0].comm, "gzip", sizeof(r[3].top[0].comm));
    r[3].top[0].cpu_s = 0.92;
    g_strlcpy(r[3].top[1].comm, "sh", sizeof(r[3].top[1].comm));
    r[3].top[1].cpu_s = 0.2;
    size_t busy[] = {1, 3};
    s = ml_hostnoise_programs_in(r, busy, 2);
    CHECK_STR(s, "sh 25 %, gzip 23 %; 5 forks");
    free(s);

    b.forks = NAN;
    memset(b.top, 0, sizeof(b.top));
    s = one_interval(&a, &b);
    CHECK_STR(s, "");
    free(s);

    /* A real reading: a shell loop under a shell (a grandchild: this process's children are
     * counted as meshlab's own) busy for about 0.6 s between two readings of one table. */
    g_autoptr(MlHostProcs) procs = ml_host_procs_new();
    struct ml_host_cpu r0, r1;
    ml_host_cpu_read_procs(NULL, procs, &r0);
    CHECK(r0.ok && r0.top[0].cpu_s == 0); /* the first reading of a table names nobody */
    CHECK(isfinite(r0.forks) && r0.forks > 0);
    int rc = system("sh -c 'sh -c \"while :; do :; done\" & p=$!; sleep 0.6; kill $p'");
    CHECK(rc == 0);
    ml_host_cpu_read_procs(NULL, procs, &r1);
    CHECK(r1.ok && r1.forks > r0.forks);
    /* the loop's CPU is other programs' even where no process of it is left by now: the table
     * counts whatever it saw, the CPU of exited children through whoever reaped them */
    CHECK(r0.others_known && r1.others_known && r1.others_s - r0.others_s >= 0.2);
    bool named = false;
    for (size_t i = 0; i < ML_HOST_TOP; i++)
        named |= !strcmp(r1.top[i].comm, "sh") && r1.top[i].pid > 0 && r1.top[i].cpu_s > 0.2;
    if (!named)
        fprintf(stderr, "top: %s %.2f, %s %.2f, %s %.2f\n", r1.top[0].comm, r1.top[0].cpu_s,
                r1.top[1].comm, r1.top[1].cpu_s, r1.top[2].comm, r1.top[2].cpu_s);
    CHECK(named);
    CHECK(r1.top[0].cpu_s >= r1.top[1].cpu_s && r1.top[1].cpu_s >= r1.top[2].cpu_s);
}

int main(void)
{
    struct ml_host_cpu a, b, c;
    reading(quiet0, qemu0, libvirtd0, 10.0, 100.0, &a);
    reading(quiet1, qemu1, libvirtd1, 10.02, 101.0, &b);
    CHECK(fabs(a.total_s - 98.1) < 1e-9);
    CHECK(fabs(b.softirq_s - 2.2) < 1e-9);
    CHECK(fabs(b.qemu_s - 40.6) < 1e-9);

    /* Quiet: 102 busy ticks = QEMU 60 + libvirtd 15 + softirq 20 + meshlab 2, other 5 (2.5 %).
     * The old attribution (QEMU and meshlab only) called 40 of them other: 20 %, "busy". */
    double other, lab, steal;
    ml_hostnoise_between(&a, &b, &other, &lab, &steal);
    CHECK(fabs(other - 2.5) < 1e-6);
    CHECK(fabs(lab - 48.5) < 1e-6);
    CHECK(isnan(steal)); /* no steal since boot: unknown, not 0 */
    CHECK(other < ML_HOST_BUSY_OTHER_PERCENT);

    /* Busy: the next second another program used 76 of 200 ticks; the lab's counters moved
     * by nothing, except 4 ticks of steal, which the host now shows. */
    c = b;
    c.t = 102.0;
    CHECK(ml_hostnoise_parse_stat(busy2, 100, &c));
    ml_hostnoise_between(&b, &c, &other, &lab, &steal);
    CHECK(fabs(other - 38.0) < 1e-6);
    CHECK(fabs(lab - 10.0) < 1e-6); /* the softirq column's 20 ticks */
    CHECK(fabs(steal - 2.0) < 1e-6);
    /* The same second where one table read every process: the programs were charged with 0.1
     * s of it (5 % of two CPUs); the rest of the 76 ticks is no program's (system time the
     * kernel charged to none, as a partly idle host shows) and not another program's. */
    {
        struct ml_host_cpu b2 = b, c2 = c;
        b2.others_known = c2.others_known = true;
        b2.others_s = 10.0;
        c2.others_s = 10.1;
        double o2, l2, s2;
        ml_hostnoise_between(&b2, &c2, &o2, &l2, &s2);
        CHECK(fabs(o2 - 5.0) < 1e-6 && fabs(l2 - 10.0) < 1e-6);
        /* programs charged with more than busy less the lab's: busy less the lab's bounds it */
        c2.others_s = 12.0;
        ml_hostnoise_between(&b2, &c2, &o2, &l2, &s2);
        CHECK(fabs(o2 - 38.0) < 1e-6);
        /* one reading without the table: busy less the lab's, as before */
        c2.others_known = false;
        c2.others_s = 10.1;
        ml_hostnoise_between(&b2, &c2, &o2, &l2, &s2);
        CHECK(fabs(o2 - 38.0) < 1e-6);
    }

    /* The seconds of a pass that started at t = 100.2: only the second ending at 102 is busy. */
    struct ml_host_cpu r[] = {a, b, c};
    r[0].t = 99.9;
    long seconds[3];
    size_t index[3];
    double worst = 0;
    size_t n = ml_hostnoise_busy_seconds(r, 3, 100.2, seconds, index, &worst);
    CHECK(n == 1);
    CHECK(seconds[0] == 2 && index[0] == 2);
    CHECK(fabs(worst - 38.0) < 1e-6);
    char *flag = ml_hostnoise_flag(seconds, n, worst);
    CHECK_STR(flag, "host busy at second 2: 38 % other");
    free(flag);
    long two[] = {3, 4};
    flag = ml_hostnoise_flag(two, 2, 38.4);
    CHECK_STR(flag, "host busy at seconds 3, 4: 38 % other");
    free(flag);
    CHECK(ml_hostnoise_flag(seconds, 0, NAN) == NULL);
    /* A quiet pass: no second is named. */
    CHECK(ml_hostnoise_busy_seconds(r, 2, 100.2, seconds, NULL, &worst) == 0);
    CHECK(isnan(worst));

    /* ksoftirqd's time is in the softirq column too: it counts once, as the larger. */
    struct ml_host_cpu k = b;
    k.ksoftirqd_s = a.ksoftirqd_s + 0.15;
    ml_hostnoise_between(&a, &k, &other, &lab, &steal);
    CHECK(fabs(other - 2.5) < 1e-6);
    k.ksoftirqd_s = a.ksoftirqd_s + 0.30; /* 30 ticks: 10 more than the column */
    ml_hostnoise_between(&a, &k, &other, &lab, &steal);
    CHECK(fabs(other - 0.0) < 1e-6);

    /* A lab daemon that ended between the readings took its whole history out of the later
     * sum: the pair is unknown, never a busy second of "other". */
    struct ml_host_cpu gone = b;
    gone.daemons_s = a.daemons_s - 1.0;
    ml_hostnoise_between(&a, &gone, &other, &lab, &steal);
    CHECK(isnan(other) && isnan(lab));

    /* Unknown readings give unknown shares, not 0. */
    struct ml_host_cpu bad = b;
    bad.ok = false;
    ml_hostnoise_between(&a, &bad, &other, &lab, &steal);
    CHECK(isnan(other) && isnan(lab));
    CHECK(!ml_hostnoise_parse_stat("intr 1\n", 100, &bad));
    CHECK(!ml_hostnoise_parse_pid_stat("no parenthesis", 100, &bad.qemu_s));

    /* Who is the lab's. */
    CHECK(ml_hostnoise_comm_kind("libvirtd") == 1);
    CHECK(ml_hostnoise_comm_kind("virtqemud") == 1);
    CHECK(ml_hostnoise_comm_kind("virtlogd") == 1);
    CHECK(ml_hostnoise_comm_kind("vhost-4242") == 1);
    CHECK(ml_hostnoise_comm_kind("ksoftirqd/1") == 2);
    CHECK(ml_hostnoise_comm_kind("firefox") == 0);
    CHECK(ml_hostnoise_comm_kind("libvirtd2") == 0);
    test_programs();
    return check_finish();
}
