#include "virt/daemon.h"

#include <string.h>

#include "virt/agent.h"
#include "core/rundir.h"
#include "core/util.h"

#define LOG_LINES 20

char *ml_daemon_stop_cmd(const struct ml_daemon *d)
{
    return g_strdup_printf("systemctl stop %1$s >/dev/null 2>&1; "
                           "systemctl reset-failed %1$s >/dev/null 2>&1; true",
                           d->unit);
}

char *ml_daemon_script(const struct ml_daemon *d)
{
    /* The old unit goes first, so the check never runs beside a daemon on the same files. */
    g_autofree char *stop = ml_daemon_stop_cmd(d);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "exec 2>&1\n%s\n", stop);
    if (d->prepare)
        g_string_append_printf(s, "( %s ) || exit %d\n", d->prepare, ML_DAEMON_PREPARE);
    g_autofree char *where =
        d->netns ? g_strdup_printf("-p NetworkNamespacePath=/run/netns/%s ", d->netns)
                 : g_strdup("");
    g_autofree char *quoted = g_shell_quote(d->ready);
    g_autofree char *ready = d->netns
                                 ? g_strdup_printf("ip netns exec %s sh -c %s", d->netns, quoted)
                                 : g_strdup(d->ready);
    g_string_append_printf(
        s,
        "systemd-run --unit=%1$s --quiet %9$s%2$s </dev/null || exit %3$d\n"
        "n=0\n"
        "until %4$s; do\n"
        "    state=$(systemctl show -p ActiveState --value %1$s 2>/dev/null)\n"
        "    case \"$state\" in\n"
        "    active|activating|reloading) ;;\n"
        "    *) echo \"%1$s is ${state:-gone}\"; exit %5$d ;;\n"
        "    esac\n"
        "    n=$((n + 1))\n"
        "    if [ $n -ge %6$u ]; then echo \"%1$s not ready after %7$u s\"; exit %8$d; fi\n"
        "    sleep 0.5\n"
        "done\n",
        d->unit, d->command, ML_DAEMON_NOT_RUN, ready, ML_DAEMON_STOPPED, d->timeout_s * 2,
        d->timeout_s, ML_DAEMON_TIMEOUT, where);
    return g_string_free(s, FALSE);
}

void ml_daemon_report(int run_fd, const char *run_dir, const char *node_name,
                      const struct ml_daemon *d, const char *what, const char *lines, GError **err)
{
    g_autofree char *text = g_strstrip(g_strdup(lines && *lines ? lines : "(nothing logged)"));
    g_autofree char *saved = NULL;
    if (run_fd >= 0) {
        g_autofree char *rel = g_strdup_printf("guests/%s-%s.log", node_name, d->name);
        g_autofree char *body =
            g_strdup_printf("# %s on %s: %s\n%s\n", d->name, node_name, what, text);
        if (ml_rundir_write(run_fd, rel, body, -1, 0644, NULL))
            saved = g_build_filename(run_dir, rel, NULL);
    }
    g_auto(GStrv) split = g_strsplit(text, "\n", -1);
    g_autofree char *indented = g_strjoinv("\n    ", split);
    g_clear_error(err);
    g_set_error(err, ML_ERROR, ML_ERR_GUEST, "%s: %s %s; its last log lines%s%s%s:\n    %s",
                node_name, d->name, what, saved ? " (saved in " : "", saved ? saved : "",
                saved ? ")" : "", indented);
}

static void report(struct ml_lab *lab, size_t node, const struct ml_daemon *d, const char *what,
                   const char *lines, GError **err)
{
    ml_daemon_report(lab->run_open ? lab->run_fd : -1, lab->run_dir, lab->topo->nodes[node].name, d,
                     what, lines, err);
}

static char *journal(struct ml_lab *lab, size_t node, const struct ml_daemon *d)
{
    g_autofree char *cmd =
        g_strdup_printf("journalctl -u %s -n %d --no-pager -o cat", d->unit, LOG_LINES);
    struct ml_exec ex = {0};
    g_autoptr(GError) e = NULL;
    char *out = NULL;
    if (ml_agent_exec(ml_lab_dom(lab, node), cmd, NULL, 30, &ex, &e))
        out = g_strdup(ex.out && *ex.out ? ex.out : ex.err);
    else
        out = g_strdup_printf("(cannot read the journal: %s)", ml_agent_error_text(e));
    ml_exec_clear(&ex);
    return out;
}

/* The last LOG_LINES lines of text, each ending in a newline (the journal's lines follow). */
static char *tail(const char *text)
{
    g_autofree char *last = ml_last_lines(text, LOG_LINES);
    return *last ? g_strconcat(last, "\n", NULL) : g_strdup("");
}

bool ml_daemon_start(struct ml_lab *lab, size_t node, const struct ml_daemon *d, const char *input,
                     GError **err)
{
    g_autofree char *script = ml_daemon_script(d);
    struct ml_exec ex = {0};
    if (!ml_agent_exec(ml_lab_dom(lab, node), script, input, d->timeout_s + 60.0, &ex, err))
        return false;
    int code = ex.exit_code;
    g_autofree char *said = tail(ex.out);
    ml_exec_clear(&ex);
    if (code == ML_DAEMON_READY)
        return true;
    if (code == ML_DAEMON_PREPARE) {
        report(lab, node, d, "was not started: its configuration check failed", said, err);
        return false;
    }
    g_autofree char *lines = journal(lab, node, d);
    g_autofree char *what =
        code == ML_DAEMON_STOPPED   ? g_strdup_printf("exited before it was ready")
        : code == ML_DAEMON_TIMEOUT ? g_strdup_printf("was not ready after %u s", d->timeout_s)
        : code == ML_DAEMON_NOT_RUN ? g_strdup_printf("could not be started by systemd-run")
                                    : g_strdup_printf("start script exited with status %d", code);
    g_autofree char *both =
        code == ML_DAEMON_NOT_RUN ? g_strconcat(said, lines, NULL) : g_strdup(lines);
    report(lab, node, d, what, both, err);
    return false;
}

bool ml_daemon_alive(struct ml_lab *lab, size_t node, const struct ml_daemon *d, GError **err)
{
    g_autofree char *cmd = g_strdup_printf("systemctl is-active --quiet %s", d->unit);
    struct ml_exec ex = {0};
    g_autoptr(GError) e = NULL;
    bool asked = ml_agent_exec(ml_lab_dom(lab, node), cmd, NULL, 30, &ex, &e);
    bool alive = !asked || ex.exit_code == 0;
    ml_exec_clear(&ex);
    if (alive)
        return true;
    g_autofree char *lines = journal(lab, node, d);
    g_autofree char *first = err && *err ? g_strdup((*err)->message) : NULL;
    g_autofree char *what =
        first ? g_strdup_printf("stopped (while: %s)", first) : g_strdup("stopped");
    report(lab, node, d, what, lines, err);
    return false;
}
