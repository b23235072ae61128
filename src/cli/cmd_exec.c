#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/virterror.h>

#include "cli/commands.h"
#include "core/util.h"
#include "guestnet/nat.h"
#include "topology/name.h"
#include "topology/plan.h"
#include "virt/agent.h"
#include "virt/lab.h"
#include "virt/virt.h"

static const char exec_usage[] =
    "Usage: meshlab exec [--connect URI] LAB NODE [--netns] [--timeout S]\n"
    "                    -- COMMAND [ARGS...]\n\n"
    "Runs COMMAND in the guest NODE of the running lab LAB (see 'meshlab status')\n"
    "through the QEMU guest agent, as root, and streams its output while it runs.\n"
    "Each argument reaches the guest as it was given here, spaces and quotes included;\n"
    "write 'sh -c \"...\"' for pipes. Exits with the command's exit status (128+N when\n"
    "signal N killed it). Ctrl-C stops the command in the guest and exits 130.\n"
    "Programs that buffer their output when it is not a terminal are made to flush\n"
    "each line (stdbuf -oL). exec takes no lock: it never changes the lab, so it works\n"
    "while 'meshlab up' keeps the lab alive or 'meshlab run' measures it (a command\n"
    "that loads a guest's CPU disturbs the measurement, though).\n\n"
    "  --netns      run inside the NAT's inside namespace (" ML_NAT_NETNS "), where a NATed\n"
    "               client's daemons run\n"
    "  --timeout S  stop the command after S seconds and exit 124\n"
    "  --connect URI  the lab's libvirt host (default: the one its up recorded)\n\n"
    "Examples:\n"
    "  meshlab exec three-guest client-a -- nft list ruleset\n"
    "  meshlab exec three-guest client-a --netns -- conntrack -L\n"
    "  meshlab exec three-guest hub -- tcpdump -ni eth0 udp\n";

/* How long the guest agent may take to answer its first ping. */
#define EXEC_PING_S 5
#define EXEC_TICK_US (200 * 1000)
#define EXEC_TICK_MAX_US (1000 * 1000)
#define EXEC_CHUNK (64 * 1024)
/* At most this much of one stream per tick, so a flood on stdout does not starve stderr. */
#define EXEC_TICK_MAX (1024 * 1024)

char *cmd_exec_command_line(char *const *argv, bool netns)
{
    GString *s = g_string_new(netns ? "ip netns exec " ML_NAT_NETNS : "");
    for (size_t i = 0; argv[i]; i++) {
        g_autofree char *q = g_shell_quote(argv[i]);
        if (s->len)
            g_string_append_c(s, ' ');
        g_string_append(s, q);
    }
    return g_string_free(s, FALSE);
}

char *cmd_exec_script(const char *dir, const char *command_line)
{
    /* setsid makes the command the leader of its own process group (its pid, the one
     * guest-exec returns, since the shell qemu-ga starts is no group leader and setsid then
     * does not fork), so Ctrl-C can stop the whole group without touching qemu-ga's. */
    g_autofree char *inner = g_strdup_printf(
        "exec </dev/null >>\"$0/out\" 2>>\"$0/err\"; exec stdbuf -oL %s", command_line);
    g_autofree char *qinner = g_shell_quote(inner);
    g_autofree char *qdir = g_shell_quote(dir);
    return g_strdup_printf("exec setsid /bin/sh -c %s %s", qinner, qdir);
}

char *cmd_exec_kill_command(long long pid, const char *sig)
{
    /* `kill -TERM -- -PID` is an error in dash ("Illegal number: -"); `-s` is not. */
    return g_strdup_printf("kill -s %s -- -%lld 2>/dev/null; true", sig, pid);
}

bool cmd_exec_has_netns(const char *ip_netns_list, const char *name)
{
    g_auto(GStrv) lines = g_strsplit(ip_netns_list ? ip_netns_list : "", "\n", -1);
    for (size_t i = 0; lines[i]; i++) {
        const char *l = lines[i];
        size_t n = strlen(name);
        if (!strncmp(l, name, n) && (l[n] == '\0' || l[n] == ' '))
            return true;
    }
    return false;
}

bool cmd_exec_drain(struct cmd_exec_tail *t, cmd_exec_read_fn read, void *opaque, size_t chunk,
                    size_t max, FILE *sink, GError **err)
{
    size_t taken = 0;
    while (taken < max) {
        g_autoptr(GByteArray) buf = g_byte_array_new();
        size_t want = MIN(chunk, max - taken), got = 0;
        if (!read(opaque, t->offset, want, buf, &got, err))
            return false;
        if (got && fwrite(buf->data, 1, got, sink) != got) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot write the command's output: %s",
                        g_strerror(errno));
            return false;
        }
        t->offset += (long long)got;
        taken += got;
        if (got < want)
            break;
    }
    if (taken && fflush(sink) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot write the command's output: %s",
                    g_strerror(errno));
        return false;
    }
    return true;
}

static void add_node(GPtrArray *nodes, const char *name, const char *prefix)
{
    if (g_str_has_prefix(name, prefix))
        g_ptr_array_add(nodes, g_strdup(name + strlen(prefix)));
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

virDomainPtr cmd_find_guest(virConnectPtr conn, const char *lab, const char *node, GError **err)
{
    g_autofree char *prefix = ml_plan_domain_prefix(lab);
    g_autoptr(GPtrArray) nodes = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *want = g_strconcat(prefix, node, NULL);
    virDomainPtr found = NULL;
    virDomainPtr *doms = NULL;
    int n = virConnectListAllDomains(conn, &doms, 0);
    for (int d = 0; d < n; d++) {
        g_autofree char *tag = NULL;
        const char *name = virDomainGetName(doms[d]);
        if (name && ml_virt_domain_tag(doms[d], &tag, NULL) && !strcmp(tag, lab)) {
            add_node(nodes, name, prefix);
            if (!found && !strcmp(name, want)) {
                found = doms[d];
                continue;
            }
        }
        virDomainFree(doms[d]);
    }
    free(doms);
    virResetLastError();
    if (nodes->len == 0) {
        g_autofree char *here = ml_virt_conn_uri(conn, ml_virt_uri());
        g_autofree char *shown = ml_uri_public(here);
        if (ml_lab_state_exists(lab))
            g_set_error(err, ML_ERROR, ML_ERR_HOST,
                        "lab %s has no guests on %s: it did not come up, or is half torn down; "
                        "'meshlab down %s' removes what is left",
                        lab, shown, lab);
        else
            g_set_error(err, ML_ERROR, ML_ERR_INPUT, "no lab %s: meshlab status lists running labs",
                        lab);
        return NULL;
    }
    if (!found) {
        g_ptr_array_sort(nodes, compare_names);
        g_ptr_array_add(nodes, NULL);
        g_autofree char *list = g_strjoinv(", ", (char **)nodes->pdata);
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "lab %s has no node '%s'; its nodes are %s", lab,
                    node, list);
        return NULL;
    }
    if (virDomainIsActive(found) != 1) {
        virResetLastError();
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "%s of lab %s is not running; 'meshlab status' shows the lab's guests, "
                    "'meshlab down %s' and 'meshlab up FILE' build it again",
                    node, lab, lab);
        virDomainFree(found);
        return NULL;
    }
    return found;
}

struct guest_file {
    virDomainPtr dom;
    long long handle;
};

static bool read_guest_file(void *opaque, long long offset, size_t count, GByteArray *out,
                            size_t *ret_count, GError **err)
{
    const struct guest_file *f = opaque;
    return ml_agent_file_read_at(f->dom, f->handle, offset, count, out, ret_count, err);
}

struct exec_run {
    virDomainPtr dom;
    char *dir;
    long long pid;
    struct guest_file file[2]; /* stdout, stderr */
    bool opened[2];
    struct cmd_exec_tail tail[2];
};

static bool drain_both(struct exec_run *r, size_t max, GError **err)
{
    FILE *sinks[2] = {stdout, stderr};
    for (int i = 0; i < 2; i++)
        if (!cmd_exec_drain(&r->tail[i], read_guest_file, &r->file[i], EXEC_CHUNK, max, sinks[i],
                            err))
            return false;
    return true;
}

/* Asks the whole process group to stop, then kills what is left of it after 2 s; waits for
 * the command to be gone. */
static bool stop_group(struct exec_run *r, struct ml_exec *ret, GError **err)
{
    static const char *const sigs[] = {"TERM", "KILL"};
    for (size_t s = 0; s < G_N_ELEMENTS(sigs); s++) {
        g_autofree char *kill = cmd_exec_kill_command(r->pid, sigs[s]);
        g_autofree char *out = ml_agent_run(r->dom, kill, NULL, 10, err);
        if (!out)
            return false;
        for (double end = ml_now() + 2; ml_now() < end;) {
            bool exited = false;
            if (!ml_agent_poll(r->dom, r->pid, &exited, ret, err))
                return false;
            if (exited)
                return true;
            g_usleep(EXEC_TICK_US / 2);
        }
    }
    g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the command (pid %lld) did not stop on SIGKILL",
                r->pid);
    return false;
}

static void cleanup(struct exec_run *r)
{
    for (int i = 0; i < 2; i++)
        if (r->opened[i])
            ml_agent_file_close(r->dom, r->file[i].handle, NULL);
    if (r->dir) {
        g_autofree char *q = g_shell_quote(r->dir);
        g_autofree char *rm = g_strdup_printf("rm -rf -- %s", q);
        g_autoptr(GError) err = NULL;
        g_autofree char *out = ml_agent_run(r->dom, rm, NULL, 10, &err);
        if (!out) {
            g_autofree char *shown = ml_escape_controls(ml_agent_error_text(err));
            fprintf(stderr, "meshlab: warning: %s was not removed from the guest: %s\n", r->dir,
                    shown);
        }
    }
    g_free(r->dir);
}

static int exit_status(const struct ml_exec *ex)
{
    if (ex->signal > 0)
        return 128 + ex->signal;
    return ex->exit_code >= 0 ? ex->exit_code : ML_EXIT_FAIL;
}

/* Runs the prepared command and streams it; returns the exit status for meshlab. */
static int stream(struct exec_run *r, const char *command_line, double timeout_s)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *script = cmd_exec_script(r->dir, command_line);
    for (int i = 0; i < 2; i++) {
        g_autofree char *path = g_build_filename(r->dir, i == 0 ? "out" : "err", NULL);
        r->file[i].dom = r->dom;
        if (!ml_agent_file_open(r->dom, path, "r", &r->file[i].handle, &err))
            return cmd_fail(err);
        r->opened[i] = true;
    }
    if (!ml_agent_spawn(r->dom, script, NULL, &r->pid, &err))
        return cmd_fail(err);
    double deadline = timeout_s > 0 ? ml_now() + timeout_s : 0;
    struct ml_exec ex = {0};
    const char *stopped = NULL;
    /* Quiet output is polled less and less often, up to once a second: under TCG every agent
     * call costs the guest CPU, and a student's tcpdump beside a measurement must not cost it
     * much. */
    gulong tick = EXEC_TICK_US;
    for (;;) {
        bool exited = false;
        if (!ml_agent_poll(r->dom, r->pid, &exited, &ex, &err))
            return cmd_fail(err);
        long long before = r->tail[0].offset + r->tail[1].offset;
        if (!drain_both(r, exited ? SIZE_MAX : EXEC_TICK_MAX, &err)) {
            if (err->code != ML_ERR_HOST) {
                ml_exec_clear(&ex);
                return cmd_fail(err);
            }
            stopped = "output";
        }
        if (exited)
            break;
        if (!stopped && ml_interrupt_count() > 0)
            stopped = "interrupt";
        if (!stopped && deadline && ml_now() > deadline)
            stopped = "timeout";
        if (stopped) {
            /* The user asked to stop: the clean-up must not give up at the same Ctrl-C. */
            ml_agent_set_interruptible(false);
            g_clear_error(&err);
            if (!stop_group(r, &ex, &err))
                return cmd_fail(err);
            break;
        }
        tick = r->tail[0].offset + r->tail[1].offset > before ? EXEC_TICK_US
                                                              : MIN(tick * 2, EXEC_TICK_MAX_US);
        g_usleep(tick);
    }
    g_clear_error(&err);
    int status = exit_status(&ex);
    ml_exec_clear(&ex);
    if (stopped && !strcmp(stopped, "output"))
        return 128 + SIGPIPE;
    if (!drain_both(r, SIZE_MAX, &err)) {
        g_autofree char *shown = ml_escape_controls(err->message); /* the guest's words */
        fprintf(stderr, "meshlab: %s\n", shown);
    }
    if (stopped && !strcmp(stopped, "interrupt"))
        return ML_EXIT_INTERRUPTED;
    if (stopped) {
        fprintf(stderr, "meshlab: the command ran longer than --timeout %g s and was stopped\n",
                timeout_s);
        return 124;
    }
    return status;
}

static bool parse_timeout(const char *s, double *ret)
{
    char *end = NULL;
    double v = g_ascii_strtod(s, &end);
    if (!*s || *end || !(v > 0) || v > 7 * 24 * 3600)
        return false;
    *ret = v;
    return true;
}

static int usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("meshlab: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* The usage line alone: the whole text would bury the one line that says what was wrong. */
    fprintf(stderr, "\n%.*s'meshlab exec --help' says more\n",
            (int)(strchr(exec_usage, '\n') - exec_usage + 1), exec_usage);
    return ML_EXIT_USAGE;
}

/* Everything after the guest was found: the agent, the namespace, the private directory,
 * the command. */
static int exec_in(virDomainPtr dom, const char *lab, const char *node, char *const *argv,
                   bool netns, double timeout_s)
{
    g_autoptr(GError) err = NULL;
    if (!ml_agent_ping(dom, EXEC_PING_S)) {
        g_set_error(&err, ML_ERROR, ML_ERR_GUEST,
                    "the guest agent of %s (lab %s) does not answer within %d s: the guest may "
                    "still be booting, or be stuck; 'meshlab console %s %s' shows its console",
                    node, lab, EXEC_PING_S, lab, node);
        return cmd_fail(err);
    }
    if (netns) {
        g_autofree char *list = ml_agent_run(dom, "ip netns list", NULL, 10, &err);
        if (!list)
            return cmd_fail(err);
        if (!cmd_exec_has_netns(list, ML_NAT_NETNS)) {
            g_set_error(&err, ML_ERROR, ML_ERR_INPUT,
                        "%s is not behind a NAT (it has no network namespace %s); run the "
                        "command without --netns",
                        node, ML_NAT_NETNS);
            return cmd_fail(err);
        }
    }
    /* A private directory in the guest's /run (a tmpfs): mktemp -d makes it 0700. */
    g_autofree char *dir = ml_agent_run(
        dom,
        "d=$(mktemp -d /run/meshlab-exec.XXXXXXXX) && : >\"$d/out\" && : >\"$d/err\" && "
        "echo \"$d\"",
        NULL, 10, &err);
    if (!dir)
        return cmd_fail(err);
    struct exec_run run = {.dom = dom, .dir = g_strdup(g_strstrip(dir))};
    g_autofree char *line = cmd_exec_command_line(argv, netns);
    int status = stream(&run, line, timeout_s);
    ml_agent_set_interruptible(false);
    cleanup(&run);
    return status;
}

int cmd_exec_main(int argc, char **argv)
{
    /* Options and the two operands come before `--`; the guest's command after it. */
    int dd = argc;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            dd = i;
            break;
        }
    static const struct option options[] = {{"netns", no_argument, NULL, 'n'},
                                            {"timeout", required_argument, NULL, 't'},
                                            {"help", no_argument, NULL, 'h'},
                                            {0}};
    bool netns = false;
    double timeout_s = 0;
    const char *ops[2] = {0};
    int n_ops = 0, opt;
    optind = 1;
    opterr = 0;
    /* "-": operands come back in order as 1, so options may stand before or after them. */
    while ((opt = getopt_long(dd, argv, "-:h", options, NULL)) != -1) {
        switch (opt) {
        case 1:
            if (n_ops < 2)
                ops[n_ops] = optarg;
            n_ops++;
            break;
        case 'h':
            fputs(exec_usage, stdout);
            return ML_EXIT_OK;
        case 'n':
            netns = true;
            break;
        case 't':
            if (!parse_timeout(optarg, &timeout_s))
                return usage_error("--timeout wants a number of seconds above 0, not '%s'", optarg);
            break;
        case ':':
            return usage_error("%s wants a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (dd == argc)
        return usage_error("%s", "the command must follow `--`: meshlab exec LAB NODE -- COMMAND");
    if (dd + 1 == argc)
        return usage_error("%s", "no command after `--`");
    if (n_ops != 2)
        return usage_error("%s", "exec wants the lab's name and a node's name before `--`");
    const char *lab = ops[0], *node = ops[1];
    g_autoptr(GError) bad_name = NULL;
    if (!ml_name_check_guest(lab, node, &bad_name))
        return cmd_fail(bad_name);

    ml_signals_install();
    /* A closed pipe (| head) must stop the guest's command, not kill meshlab past it. */
    signal(SIGPIPE, SIG_IGN);
    g_autoptr(GError) err = NULL;
    g_autofree char *uri = ml_lab_node_uri(lab, node);
    virConnectPtr conn = ml_virt_connect(uri, &err);
    if (!conn)
        return cmd_fail(err);
    virDomainPtr dom = cmd_find_guest(conn, lab, node, &err);
    int status = dom ? exec_in(dom, lab, node, argv + dd + 1, netns, timeout_s) : cmd_fail(err);
    if (dom)
        virDomainFree(dom);
    virConnectClose(conn);
    return status;
}
