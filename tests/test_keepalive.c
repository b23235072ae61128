/* A libvirtd that stops answering must not hang meshlab: a private libvirtd (as nobody, its
 * sockets in a temporary directory, serving only the test driver's own objects) is frozen
 * with SIGSTOP, and a call on meshlab's connection must fail within the keepalive's
 * 5 s × (3 + 1), naming the keepalive. Skipped without root or libvirtd. */
#include "check.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "virt/virt.h"

#define DAEMON "/usr/sbin/libvirtd"

struct call {
    virConnectPtr conn;
    int rc;
    gint done;
};

static gpointer count_domains(gpointer data)
{
    struct call *c = data;
    c->rc = virConnectNumOfDomains(c->conn);
    g_atomic_int_set(&c->done, 1);
    return NULL;
}

int main(void)
{
    if (geteuid() != 0 || access(DAEMON, X_OK) != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
        printf("skipped: needs root, setpriv and " DAEMON "\n");
        return 77;
    }
    g_autofree char *dir = g_dir_make_tmp("meshlab-test-keepalive-XXXXXX", NULL);
    CHECK(dir && chmod(dir, 0777) == 0);
    g_autofree char *sock = g_build_filename(dir, "libvirt", "libvirt-sock", NULL);
    pid_t pid = fork();
    if (pid == 0) {
        g_autofree char *home = g_strdup_printf("HOME=%s", dir);
        g_autofree char *run = g_strdup_printf("XDG_RUNTIME_DIR=%s", dir);
        g_autofree char *cfg = g_strdup_printf("XDG_CONFIG_HOME=%s/cfg", dir);
        g_autofree char *cache = g_strdup_printf("XDG_CACHE_HOME=%s/cache", dir);
        g_autofree char *log = g_build_filename(dir, "log", NULL);
        freopen(log, "w", stderr);
        freopen("/dev/null", "w", stdout);
        execl("/usr/bin/setpriv", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
              "env", "-i", home, run, cfg, cache, DAEMON, "--timeout", "120", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && access(sock, F_OK) != 0; i++)
        g_usleep(100 * 1000);
    g_usleep(500 * 1000);
    g_autofree char *uri = g_strdup_printf("test+unix:///default?socket=%s", sock);
    g_autoptr(GError) err = NULL;
    virConnectPtr conn = ml_virt_connect(uri, &err);
    if (!conn) {
        printf("skipped: the private libvirtd did not answer: %s\n", err->message);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return 77;
    }
    CHECK(virConnectNumOfDomains(conn) == 1);
    CHECK(ml_virt_closed_why() == NULL);

    /* setpriv execs libvirtd in place: pid is the daemon. */
    CHECK(kill(pid, SIGSTOP) == 0);
    struct call c = {conn, 0, 0};
    double t0 = ml_now();
    GThread *t = g_thread_new("count", count_domains, &c);
    while (!g_atomic_int_get(&c.done) && ml_now() - t0 < 45)
        g_usleep(100 * 1000);
    double took = ml_now() - t0;
    bool ended = g_atomic_int_get(&c.done);
    printf("the call on a frozen libvirtd %s after %.1f s\n", ended ? "failed" : "still hung",
           took);
    CHECK(ended);
    CHECK(ended && c.rc < 0);
    const char *why = ml_virt_closed_why();
    CHECK(why && strstr(why, "keepalive"));
    kill(pid, SIGKILL);
    kill(pid, SIGCONT);
    waitpid(pid, NULL, 0);
    if (ended) {
        g_thread_join(t);
        virConnectClose(conn);
    }
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    CHECK(system(rm) == 0);
    if (!ended) {
        /* The thread is stuck in libvirt for good; leave without running exit handlers. */
        fflush(stdout);
        _exit(check_finish());
    }
    return check_finish();
}
