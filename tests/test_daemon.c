/* The guest script that starts a daemon and waits for it: a daemon that exits is reported at
 * once (not after the whole wait), one that serves is ready, a failing configuration check
 * stops before anything starts, and the report lands in the run directory. systemd is not PID 1
 * on the build machines, so systemd-run and systemctl are small stand-ins here that start the
 * command in the background and answer ActiveState from its pid; the script under test is the
 * one meshlab sends to the guests, unchanged.
 *
 * Where the daemons' own words go when meshlab starts them with systemd-run (their stdout and
 * stderr become the unit's journal, read back with journalctl -u UNIT):
 * - headscale v0.29.2 cmd/headscale/headscale.go: log.Logger = log.Output(zerolog.ConsoleWriter{
 *   Out: os.Stderr, ...}); only log.format json switches to os.Stdout (cli/root.go). Fatal
 *   config errors (hscontrol/types/config.go deprecator.Log: log.Fatal) land there too, and
 *   `headscale configtest` (cli/configtest.go) returns them as "configuration error: ...".
 * - tailscaled (tailscale 1.103 main, logpolicy/logpolicy.go): stderrWriter writes every log
 *   line to os.Stderr; its flags --state, --socket and --port are cmd/tailscaled/tailscaled.go's.
 * - nebula logs through logrus, whose default output is stderr. */
#include "check.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <fcntl.h>
#include <unistd.h>

#include "virt/daemon.h"
#include "core/util.h"

static char *dir;

static const char systemd_run[] = "#!/bin/sh\n"
                                  "unit=${1#--unit=}; shift; shift\n"
                                  "\"$@\" >\"$STUB/$unit.log\" 2>&1 </dev/null &\n"
                                  "echo $! >\"$STUB/$unit.pid\"\n";
static const char systemctl[] =
    "#!/bin/sh\n"
    "case \"$1\" in\n"
    "show) unit=$5; if kill -0 \"$(cat \"$STUB/$unit.pid\")\" 2>/dev/null; then echo active;\n"
    "      else echo failed; fi ;;\n"
    "*) ;;\n"
    "esac\n";

static void stub(const char *name, const char *text)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    CHECK(g_file_set_contents(path, text, -1, NULL));
    CHECK(g_chmod(path, 0755) == 0);
}

/* Runs d's script; returns its exit status, its output in *ret_out, seconds in *ret_s. */
static int run_script(const struct ml_daemon *d, char **ret_out, double *ret_s)
{
    g_autofree char *script = ml_daemon_script(d);
    g_autofree char *path = g_strdup_printf("%s:%s", dir, g_getenv("PATH"));
    g_autofree char *stub_env = g_strdup_printf("STUB=%s", dir);
    g_autofree char *path_env = g_strdup_printf("PATH=%s", path);
    const char *argv[] = {"sh", "-c", script, NULL};
    const char *envp[] = {path_env, stub_env, NULL};
    int status = -1;
    double t0 = ml_now();
    g_autoptr(GError) e = NULL;
    CHECK(g_spawn_sync(NULL, (char **)argv, (char **)envp, G_SPAWN_SEARCH_PATH_FROM_ENVP, NULL,
                       NULL, ret_out, NULL, &status, &e));
    *ret_s = ml_now() - t0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void kill_unit(const char *unit)
{
    g_autofree char *name = g_strdup_printf("%s.pid", unit);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autofree char *pid = NULL;
    if (g_file_get_contents(path, &pid, NULL, NULL))
        kill((pid_t)atoi(pid), SIGKILL);
}

static void test_script(void)
{
    g_autofree char *out = NULL;
    double s = 0;

    /* headscale 0.29 refusing its config exits at once: reported in seconds, not after 60. */
    const struct ml_daemon dies = {"headscale", "meshlab-test-dies",
                                   NULL,        "sh -c 'echo fatal config >&2; exit 1'",
                                   "false",     60,
                                   NULL};
    CHECK(run_script(&dies, &out, &s) == ML_DAEMON_STOPPED);
    CHECK(s < 20);
    CHECK(strstr(out, "meshlab-test-dies is failed") != NULL);
    g_clear_pointer(&out, g_free);

    g_autofree char *ready_cmd = g_strdup_printf("sh -c 'sleep 1; touch %s/ready; sleep 30'", dir);
    g_autofree char *ready_cond = g_strdup_printf("[ -e %s/ready ]", dir);
    const struct ml_daemon serves = {
        "tailscaled", "meshlab-test-serves", "true", ready_cmd, ready_cond, 60, NULL};
    CHECK(run_script(&serves, &out, &s) == ML_DAEMON_READY);
    kill_unit("meshlab-test-serves");
    g_clear_pointer(&out, g_free);

    const struct ml_daemon slow = {"nebula", "meshlab-test-slow", NULL, "sleep 30", "false", 1,
                                   NULL};
    CHECK(run_script(&slow, &out, &s) == ML_DAEMON_TIMEOUT);
    CHECK(strstr(out, "not ready after 1 s") != NULL);
    kill_unit("meshlab-test-slow");
    g_clear_pointer(&out, g_free);

    /* A failed configuration check: nothing is started, its own words come back. */
    const struct ml_daemon refused = {
        "headscale",
        "meshlab-test-refused",
        "echo 'The \"randomize_client_port\" configuration key has been removed.'; exit 1",
        "sleep 30",
        "true",
        60,
        NULL};
    CHECK(run_script(&refused, &out, &s) == ML_DAEMON_PREPARE);
    CHECK(strstr(out, "randomize_client_port") != NULL);
    g_autofree char *never = g_build_filename(dir, "meshlab-test-refused.pid", NULL);
    CHECK(!g_file_test(never, G_FILE_TEST_EXISTS));
}

/* Behind a NAT the unit starts in the namespace and readiness is judged there too: a ready
 * check run in the guest's own namespace would never see nebula's tun device. */
static void test_netns(void)
{
    const struct ml_daemon d = {"nebula",
                                "meshlab-nebula",
                                NULL,
                                "nebula -config x",
                                "ip link show nebula1 >/dev/null 2>&1",
                                30,
                                "mlnat"};
    g_autofree char *script = ml_daemon_script(&d);
    CHECK(strstr(script, "systemd-run --unit=meshlab-nebula --quiet "
                         "-p NetworkNamespacePath=/run/netns/mlnat nebula -config x") != NULL);
    CHECK(strstr(script, "until ip netns exec mlnat sh -c 'ip link show nebula1 >/dev/null "
                         "2>&1'; do") != NULL);
    const struct ml_daemon plain = {
        "nebula", "meshlab-nebula", NULL, "nebula -config x", "ip link show nebula1", 30, NULL};
    g_autofree char *own = ml_daemon_script(&plain);
    CHECK(strstr(own, "NetworkNamespacePath") == NULL);
    CHECK(strstr(own, "until ip link show nebula1; do") != NULL);
}

static void test_report(void)
{
    const struct ml_daemon d = {"headscale", "meshlab-headscale", NULL, "x", "true", 1, NULL};
    g_autoptr(GError) err = NULL;
    g_set_error(&err, ML_ERROR, ML_ERR_GUEST, "an earlier error");
    int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(dir_fd >= 0);
    ml_daemon_report(dir_fd, dir, "hub", &d, "exited before it was ready",
                     "line 1\nFTL The \"randomize_client_port\" configuration key has been "
                     "removed.\n",
                     &err);
    g_autofree char *log = g_build_filename(dir, "guests", "hub-headscale.log", NULL);
    g_autofree char *want = g_strdup_printf(
        "hub: headscale exited before it was ready; its last log lines (saved in %s):\n"
        "    line 1\n"
        "    FTL The \"randomize_client_port\" configuration key has been removed.",
        log);
    CHECK_STR(err ? err->message : NULL, want);
    CHECK(err && err->code == ML_ERR_GUEST);
    g_autofree char *saved = NULL;
    CHECK(g_file_get_contents(log, &saved, NULL, NULL));
    CHECK(saved && strstr(saved, "randomize_client_port") != NULL);
    if (dir_fd >= 0)
        close(dir_fd);
}

int main(void)
{
    dir = g_dir_make_tmp("meshlab-daemon-XXXXXX", NULL);
    CHECK(dir != NULL);
    if (!dir)
        return check_finish();
    stub("systemd-run", systemd_run);
    stub("systemctl", systemctl);
    test_script();
    test_report();
    test_netns();
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    g_free(dir);
    return check_finish();
}
