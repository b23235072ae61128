/* --capture's cap: tcpdump writes a ring of files (-C/-W) and meshlab copies it below the run
 * directory in fixed chunks, as one pcap. The ring's copy is tested on files made here; the
 * whole capture on tcpdump itself, on the loopback of a network namespace of its own (skipped
 * without root, tcpdump or namespaces). */
#include "check.h"

#include <fcntl.h>
#include <sched.h>
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

int main(void)
{
    test_ring();
    test_argv();
    test_tcpdump(NULL);
    test_tcpdump("qemu:///system");
    return check_finish();
}
