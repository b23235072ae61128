/* --capture's cap: tcpdump writes a ring of files (-C/-W) and meshlab copies it below the run
 * directory in fixed chunks, as one pcap. The ring's copy is tested on files made here; the
 * whole capture on tcpdump itself, on the loopback of a network namespace of its own (skipped
 * without root, tcpdump or namespaces). A capture on another host is read through meshlab with
 * the same cap: a fake ssh (the URI's command=) stands in for a host that sends too much, that
 * fills ssh's stderr, and that never stops. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "virt/capture.h"
#include "virt/lab.h"

static void put(const char *dir, const char *name, const char *data, size_t len, long mtime)
{
    g_autofree char *p = g_build_filename(dir, name, NULL);
    CHECK(g_file_set_contents(p, data, (gssize)len, NULL));
    struct timespec t[2] = {{mtime, 0}, {mtime, 0}};
    CHECK(utimensat(AT_FDCWD, p, t, 0) == 0);
}

static char *collect(const char *dir, bool *wrapped, size_t *len)
{
    g_autofree char *out = g_build_filename(dir, "out", NULL);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    g_autoptr(GError) err = NULL;
    CHECK(ml_capture_collect(dir, fd, wrapped, &err));
    close(fd);
    char *text = NULL;
    gsize n = 0;
    CHECK(g_file_get_contents(out, &text, &n, NULL));
    unlink(out);
    *len = n;
    return text;
}

static void test_ring(void)
{
    g_autofree char *dir = g_dir_make_tmp("meshlab-test-capture-XXXXXX", NULL);
    CHECK(dir != NULL);
    /* 24-byte headers H0..H3 (the same link), then packets: the ring went round once, so file
     * 0 is the newest and file 1 the oldest. */
    char h[4][ML_PCAP_HEADER];
    for (int i = 0; i < 4; i++)
        memset(h[i], 'A' + i, sizeof(h[i]));
    g_autofree char *f0 = g_strdup_printf("%.24sp4", h[0]);
    g_autofree char *f1 = g_strdup_printf("%.24sp1", h[1]);
    g_autofree char *f2 = g_strdup_printf("%.24sp2", h[2]);
    g_autofree char *f3 = g_strdup_printf("%.24sp3", h[3]);
    put(dir, ML_CAPTURE_BASE "0", f0, strlen(f0), 4000);
    put(dir, ML_CAPTURE_BASE "1", f1, strlen(f1), 1000);
    put(dir, ML_CAPTURE_BASE "2", f2, strlen(f2), 2000);
    put(dir, ML_CAPTURE_BASE "3", f3, strlen(f3), 3000);
    put(dir, "unrelated", "x", 1, 500);
    bool wrapped = false;
    size_t len = 0;
    g_autofree char *all = collect(dir, &wrapped, &len);
    g_autofree char *want = g_strdup_printf("%.24sp1p2p3p4", h[1]);
    CHECK(wrapped);
    CHECK(all && len == strlen(want) && !memcmp(all, want, len));

    /* Not round yet: in order, not wrapped. */
    put(dir, ML_CAPTURE_BASE "0", f1, strlen(f1), 1000);
    put(dir, ML_CAPTURE_BASE "1", f2, strlen(f2), 2000);
    put(dir, ML_CAPTURE_BASE "2", f3, strlen(f3), 3000);
    put(dir, ML_CAPTURE_BASE "3", f0, strlen(f0), 4000);
    g_autofree char *again = collect(dir, &wrapped, &len);
    CHECK(!wrapped);
    CHECK(again && len == strlen(want) && !memcmp(again, want, len));
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    CHECK(system(rm) == 0);
}

static void test_argv(void)
{
    g_auto(GStrv) a = ml_capture_argv("/usr/bin/tcpdump", "mlt1", "/tmp/x/tap.pcap", true);
    g_autofree char *line = g_strjoinv(" ", a);
    CHECK_STR(
        line,
        "/usr/bin/tcpdump -p -n -U --immediate-mode -i mlt1 -w /tmp/x/tap.pcap -C 16 -W 4 -Z root");
    g_auto(GStrv) b = ml_capture_argv("tcpdump", "lo", "p", false);
    g_autofree char *line2 = g_strjoinv(" ", b);
    CHECK_STR(line2, "tcpdump -p -n -U --immediate-mode -i lo -w p -C 16 -W 4");
}

/* In a child in its own network namespace: capture lo while UDP crosses it, stop, and the run
 * directory holds one pcap with packets. uri NULL: tcpdump's ring here; else the script a lab on
 * another host runs over SSH (a URI without a host runs it in this machine's sh: the same
 * script, FIFO, head and stop by stdin, without ssh). Exit 0 passed, 1 failed, 77 skipped. */
static int capture_child(const char *run, const char *uri)
{
    if (unshare(CLONE_NEWNET) != 0 || system("ip link set lo up") != 0)
        return 77;
    struct ml_lab lab = {0};
    lab.run_fd = open(run, O_RDONLY | O_DIRECTORY);
    lab.run_open = lab.run_fd >= 0;
    struct ml_capture c;
    g_autoptr(GError) err = NULL;
    if (!ml_capture_start(&c, uri, "lo", "captures/lo.pcap", &err)) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    g_usleep(1500 * 1000); /* tcpdump opens its ring */
    if (system("python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
               "[s.sendto(b\"x\" * 100, (\"127.0.0.1\", 9)) for _ in range(10)]'") != 0)
        return 1;
    g_usleep(300 * 1000);
    if (!ml_capture_stop(&c, &lab, &err)) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    return c.tmp_path == NULL ? 0 : 1;
}

static void test_tcpdump(const char *uri)
{
    g_autofree char *bin = g_find_program_in_path("tcpdump");
    if (geteuid() != 0 || !bin) {
        printf("skipped the tcpdump capture: needs root and tcpdump\n");
        return;
    }
    g_autofree char *run = g_dir_make_tmp("meshlab-test-capture-run-XXXXXX", NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(capture_child(run, uri));
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    int code = WEXITSTATUS(status);
    if (code == 77) {
        printf("skipped the tcpdump capture: no network namespace\n");
        (void)uri;
    } else {
        CHECK(code == 0);
        g_autofree char *pcap = g_build_filename(run, "captures", "lo.pcap", NULL);
        g_autofree char *data = NULL;
        gsize len = 0;
        CHECK(g_file_get_contents(pcap, &data, &len, NULL));
        /* The pcap magic (either byte order, µs or ns), then most of the 10 UDP packets on lo. */
        static const unsigned char magic[][4] = {{0xd4, 0xc3, 0xb2, 0xa1},
                                                 {0xa1, 0xb2, 0xc3, 0xd4},
                                                 {0x4d, 0x3c, 0xb2, 0xa1},
                                                 {0xa1, 0xb2, 0x3c, 0x4d}};
        bool pcap_ok = false;
        for (size_t i = 0; data && len >= 4 && i < G_N_ELEMENTS(magic); i++)
            pcap_ok |= !memcmp(data, magic[i], 4);
        CHECK(pcap_ok);
        CHECK(len >= ML_PCAP_HEADER + 5 * (16 + 128)); /* the kernel may drop a few */
    }
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", run);
    CHECK(system(rm) == 0);
}

static void collect_warning(const struct ml_log_event *e, void *data)
{
    if (e->kind == ML_LOG_WARN)
        g_ptr_array_add(data, g_strdup(e->message));
}

static bool warned(GPtrArray *warnings, const char *part)
{
    for (guint i = 0; i < warnings->len; i++)
        if (strstr(g_ptr_array_index(warnings, i), part))
            return true;
    return false;
}

/* The host's side of a capture, as a program the URI's command= names in place of ssh: it says
 * it listens, then runs body; it ignores the signals meshlab's old stop sent and never reads
 * its stdin, so it ends only when its process group is killed. */
static char *fake_ssh(const char *dir, const char *body)
{
    g_autofree char *path = g_build_filename(dir, "fake-ssh", NULL);
    g_autofree char *text = g_strdup_printf("#!/bin/sh\ntrap '' INT TERM HUP\n"
                                            "echo " ML_CAPTURE_READY " >&2\n%s\n"
                                            "sleep 600 &\nwait\n",
                                            body);
    CHECK(g_file_set_contents(path, text, -1, NULL) && chmod(path, 0700) == 0);
    return g_strdup_printf("qemu+ssh://root@capture.invalid/system?command=%s", path);
}

/* Whether a process of group pgid still runs (a zombie waiting for init to reap it does not). */
static bool group_runs(pid_t pgid)
{
    g_autoptr(GDir) d = g_dir_open("/proc", 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *path = g_strdup_printf("/proc/%s/stat", name);
        g_autofree char *stat = NULL;
        const char *after = NULL;
        if (!g_ascii_isdigit(*name) || !g_file_get_contents(path, &stat, NULL, NULL) ||
            !(after = strrchr(stat, ')')))
            continue;
        char state = 0;
        int ppid = 0, pgrp = 0;
        if (sscanf(after + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 && pgrp == pgid &&
            state != 'Z')
            return true;
    }
    return false;
}

/* No process of the group is left, given a moment for SIGKILL to land. */
static bool group_gone(pid_t pgid)
{
    for (int i = 0; i < 20 && group_runs(pgid); i++)
        g_usleep(50 * 1000);
    return !group_runs(pgid);
}

static gint64 file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (gint64)st.st_size : -1;
}

/* A host that sends three times the cap: the file stops at the cap, ssh's group is killed
 * there, the stop is prompt and the pcap below the run directory is the capped one, with a
 * warning that says so. */
static void test_remote_flood(const char *dir, struct ml_lab *lab, GPtrArray *warnings)
{
    g_autofree char *body = g_strdup_printf("head -c %lld /dev/zero &", 3 * ML_CAPTURE_MAX_BYTES);
    g_autofree char *uri = fake_ssh(dir, body);
    struct ml_capture c;
    g_autoptr(GError) err = NULL;
    CHECK(ml_capture_start(&c, uri, "mlt-flood", "captures/flood.pcap", &err));
    if (err) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    pid_t pid = c.pid;
    g_autofree char *tmp = g_strdup_printf("%s/%s0", c.tmp_path, ML_CAPTURE_BASE);
    double end = ml_now() + 30;
    while (file_size(tmp) < ML_CAPTURE_MAX_BYTES && ml_now() < end)
        g_usleep(50 * 1000);
    g_usleep(500 * 1000); /* time to write past the cap, if anything still could */
    CHECK(file_size(tmp) == ML_CAPTURE_MAX_BYTES);
    c.stop_s = 2.0;
    double t0 = ml_now();
    CHECK(ml_capture_stop(&c, lab, &err));
    CHECK(ml_now() - t0 < c.stop_s + 1.5);
    bool gone = group_gone(pid);
    CHECK(gone);
    if (!gone)
        kill(-pid, SIGKILL);
    g_autofree char *pcap = g_build_filename(dir, "run", "captures", "flood.pcap", NULL);
    CHECK(file_size(pcap) == ML_CAPTURE_MAX_BYTES);
    g_autofree char *note = g_strdup_printf("holds only the first %lld MB",
                                            ML_CAPTURE_MAX_BYTES / 1000000);
    CHECK(warned(warnings, note) && warned(warnings, "captures/flood.pcap"));
}

/* A host that fills ssh's stderr after it listens, then sends a little and never ends: the
 * stderr is drained (so the bytes after it arrive), the stop kills it at its deadline, and
 * nothing of it is left. */
static void test_remote_stuck(const char *dir, struct ml_lab *lab, GPtrArray *warnings)
{
    g_autofree char *uri =
        fake_ssh(dir, "yes 'tcpdump: noise' | head -c 1000000 >&2; printf PCAPDATA");
    struct ml_capture c;
    g_autoptr(GError) err = NULL;
    CHECK(ml_capture_start(&c, uri, "mlt-stuck", "captures/stuck.pcap", &err));
    if (err) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    pid_t pid = c.pid;
    c.stop_s = 1.0;
    double t0 = ml_now();
    CHECK(ml_capture_stop(&c, lab, &err));
    CHECK(ml_now() - t0 < c.stop_s + 1.5);
    bool gone = group_gone(pid);
    CHECK(gone);
    if (!gone)
        kill(-pid, SIGKILL);
    g_autofree char *pcap = g_build_filename(dir, "run", "captures", "stuck.pcap", NULL);
    g_autofree char *data = NULL;
    CHECK(g_file_get_contents(pcap, &data, NULL, NULL) && !g_strcmp0(data, "PCAPDATA"));
    CHECK(warned(warnings, "the lab's host said") && warned(warnings, "tcpdump: noise"));
}

static void test_remote(void)
{
    g_autofree char *dir = g_dir_make_tmp("meshlab-test-capture-remote-XXXXXX", NULL);
    g_autofree char *run = g_build_filename(dir, "run", NULL);
    CHECK(dir && mkdir(run, 0700) == 0);
    struct ml_lab lab = {0};
    lab.run_fd = open(run, O_RDONLY | O_DIRECTORY);
    lab.run_open = lab.run_fd >= 0;
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
    struct ml_log_sink sink = {collect_warning, warnings};
    struct ml_log_sink before = ml_log_set_sink(&sink);
    test_remote_flood(dir, &lab, warnings);
    test_remote_stuck(dir, &lab, warnings);
    ml_log_set_sink(&before);
    close(lab.run_fd);
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    CHECK(system(rm) == 0);
}

int main(void)
{
    test_ring();
    test_remote();
    test_argv();
    test_tcpdump(NULL);
    test_tcpdump("qemu:///system");
    return check_finish();
}
