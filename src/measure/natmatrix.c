#include "measure/natmatrix.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "dataplanes/policy.h"
#include "dataplanes/verdict.h"
#include "guestnet/nat.h"
#include "measure/measure.h"
#include "results/natgrid.h"
#include "virt/agent.h"
#include "virt/capture.h"
#include "virt/virt.h"

/* ---- the NAT in up ---- */

struct json_object *ml_nat_observed(struct ml_lab *lab)
{
    struct json_object *s = NULL, *o = NULL;
    if (!lab->dataplanes || !json_object_object_get_ex(lab->dataplanes, "nat", &s) ||
        !json_object_object_get_ex(s, "observed", &o))
        return NULL;
    return json_object_get(o);
}

/* Puts node behind type and remembers it: the dataplanes start their daemons where it says. */
static bool put_behind(struct ml_lab *lab, size_t node, enum ml_nat_type type, GError **err)
{
    if (!ml_nat_apply(lab, node, type, err))
        return false;
    lab->nat_now[node] = type;
    return true;
}

/* Observes type behind node; fails when it does not behave as type says. */
static bool observe(struct ml_lab *lab, size_t node, enum ml_nat_type type,
                    struct json_object *observed, GError **err)
{
    const char *name = ml_nat_type_name(type);
    if (json_object_object_get_ex(observed, name, NULL))
        return true;
    ml_progress("nat", "%s behind a %s NAT: probing it from the hub (two ports, two addresses)",
                lab->topo->nodes[node].name, name);
    struct json_object *o = ml_nat_observe(lab, node, type, err);
    if (!o)
        return false;
    json_object_object_add(observed, name, o);
    const char *seen = json_object_get_string(json_object_object_get(o, "seen"));
    bool as = json_object_get_boolean(json_object_object_get(o, "as_configured"));
    ml_progress("nat", "%s: mapping %s, filtering %s, port %s: %s", name,
                json_object_get_string(json_object_object_get(o, "mapping")),
                json_object_get_string(json_object_object_get(o, "filtering")),
                json_object_get_boolean(json_object_object_get(o, "port_preserved"))
                    ? "preserved"
                    : "not preserved",
                as ? "as configured" : "NOT as configured");
    if (!as) {
        struct ml_nat_behaviour want = ml_nat_expected(type);
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "the %s NAT on %s does not behave as one: a %s NAT maps %s, filters %s and "
                    "%s the port, but the probe saw mapping %s, filtering %s (%s); the rules "
                    "in force are in the run directory under rulesets/nat/",
                    name, lab->topo->nodes[node].name, name, ml_nat_dependence_name(want.mapping),
                    ml_nat_dependence_name(want.filtering),
                    want.port_preserved ? "keeps" : "changes",
                    json_object_get_string(json_object_object_get(o, "mapping")),
                    json_object_get_string(json_object_object_get(o, "filtering")), seen);
        return false;
    }
    return true;
}

bool ml_nat_lab_up(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    if (!ml_topology_has_nat(t) && !t->nat_matrix.present)
        return true;
    struct json_object *observed = json_object_new_object();
    json_object_object_add(ml_lab_state_named(lab, "nat"), "observed", observed);
    /* Every configured type behind the node it is configured on; the matrix's other types
     * behind the client. */
    for (size_t i = 0; i < t->n_nodes; i++)
        if (t->nodes[i].nat != ML_NAT_NONE && !observe(lab, i, t->nodes[i].nat, observed, err))
            return false;
    for (size_t k = 0; k < t->nat_matrix.n_types; k++)
        if (t->nat_matrix.types[k] != ML_NAT_NONE &&
            !observe(lab, t->measure.client, t->nat_matrix.types[k], observed, err))
            return false;
    /* Then each client behind its own. */
    for (size_t i = 0; i < t->n_nodes; i++) {
        bool probed = i == t->measure.client && t->nat_matrix.present;
        if ((t->nodes[i].nat != ML_NAT_NONE || probed) && !put_behind(lab, i, t->nodes[i].nat, err))
            return false;
    }
    return true;
}

/* ---- one repeat of a cell ---- */

/* Runs in the client's root namespace (the commands it starts enter the namespace themselves):
 * pings the server's overlay address 5 times a second from the first moment (the server pings
 * back from the same moment, back_ping_start), and polls the
 * dataplane's view every half second until the window ends or the view showed direct twice in
 * a row. Each view is kept whole (a view cut short is no view: `tailscale status --json` is
 * one JSON document); all of them together may take budget bytes as JSON text, and the watch
 * ends early, saying so in "cut", rather than print more. Prints
 * {"polls": [{"t", "out"}], "ping": "...", "cut": null or why}; t is when the view's answer
 * came, seconds after the first ping left. */
const char ml_nat_watch_py[] =
    "import json, re, shlex, subprocess, sys, time\n"
    "target, window, direct_re, prefix, view, budget = sys.argv[1], float(sys.argv[2]), "
    "sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])\n"
    "cmd = shlex.split(prefix) + ['ping', '-n', '-D', '-i', '0.2', '-W', '1', '-w', "
    "str(int(window) + 2), target]\n"
    "t0 = time.monotonic()\n"
    "ping = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, "
    "errors='replace')\n"
    "polls, streak, used, cut = [], 0, 0, None\n"
    "while time.monotonic() - t0 < window and streak < 2:\n"
    "    tick = time.monotonic()\n"
    "    try:\n"
    "        r = subprocess.run(view, shell=True, capture_output=True, text=True, "
    "errors='replace', timeout=10)\n"
    "        out = r.stdout + r.stderr\n"
    "    except subprocess.TimeoutExpired:\n"
    "        out = 'view timed out'\n"
    "    t = round(time.monotonic() - t0, 3)\n"
    "    used += len(json.dumps(out))\n"
    "    if used > budget:\n"
    "        cut = 'the watch ended %.1f s after the first ping: its views filled the %d bytes it "
    "may print' % (t, budget)\n"
    "        break\n"
    "    polls.append({'t': t, 'out': out})\n"
    "    streak = streak + 1 if re.search(direct_re, out) else 0\n"
    "    time.sleep(max(0.0, 0.5 - (time.monotonic() - tick)))\n"
    "ping.terminate()\n"
    "try:\n"
    "    pout = ping.communicate(timeout=5)[0]\n"
    "except subprocess.TimeoutExpired:\n"
    "    ping.kill()\n"
    "    pout = ping.communicate()[0]\n"
    "print(json.dumps({'polls': polls, 'ping': pout[-20000:], 'cut': cut}))\n";

char *ml_nat_watch_cmd(const char *target, unsigned window_s, const char *direct_re,
                       const char *prefix, const char *view, size_t budget)
{
    char window[16], bytes[32];
    g_snprintf(window, sizeof(window), "%u", window_s);
    g_snprintf(bytes, sizeof(bytes), "%zu", budget);
    g_autofree char *q_target = g_shell_quote(target), *q_window = g_shell_quote(window),
                    *q_re = g_shell_quote(direct_re), *q_prefix = g_shell_quote(prefix),
                    *q_view = g_shell_quote(view), *q_budget = g_shell_quote(bytes);
    return g_strdup_printf("python3 - %s %s %s %s %s %s", q_target, q_window, q_re, q_prefix,
                           q_view, q_budget);
}

/* Why the watch's JSON cannot be judged, or NULL: it comes from a guest, so every value is
 * checked before it is used. */
static char *watch_unusable(struct json_object *w)
{
    struct json_object *polls = NULL, *ping = NULL, *cut = NULL;
    if (!json_object_is_type(w, json_type_object))
        return g_strdup("it is not a JSON object");
    if (!json_object_object_get_ex(w, "polls", &polls) ||
        !json_object_is_type(polls, json_type_array))
        return g_strdup("its \"polls\" is missing or not a list");
    for (size_t i = 0; i < json_object_array_length(polls); i++) {
        struct json_object *p = json_object_array_get_idx(polls, i), *t = NULL, *out = NULL;
        if (!json_object_is_type(p, json_type_object) || !json_object_object_get_ex(p, "t", &t) ||
            !(json_object_is_type(t, json_type_double) || json_object_is_type(t, json_type_int)) ||
            !isfinite(json_object_get_double(t)) || json_object_get_double(t) < 0 ||
            !json_object_object_get_ex(p, "out", &out) ||
            !json_object_is_type(out, json_type_string))
            return g_strdup_printf("its poll %zu is not {\"t\": seconds, \"out\": text}", i + 1);
    }
    if (!json_object_object_get_ex(w, "ping", &ping) ||
        !json_object_is_type(ping, json_type_string))
        return g_strdup("its \"ping\" (the pings' output) is missing or not text");
    if (json_object_object_get_ex(w, "cut", &cut) && cut &&
        !json_object_is_type(cut, json_type_string))
        return g_strdup("its \"cut\" is neither null nor text");
    return NULL;
}

void ml_nat_repeat_judge(const struct ml_topology *topo, const struct ml_auto_ops *a,
                         struct json_object *watch, bool check_ok, const char *check_found,
                         const char *check_evidence, struct json_object *rep)
{
    g_autofree char *unusable = watch_unusable(watch);
    if (unusable) {
        g_autofree char *reason =
            g_strdup_printf("the NAT matrix's watch printed JSON meshlab cannot use: %s", unusable);
        json_object_object_add(rep, "timeline", json_object_new_array());
        json_object_object_add(rep, "seconds_to_direct", NULL);
        json_object_object_add(rep, "outcome", json_object_new_string("failed"));
        json_object_object_add(rep, "reason", json_object_new_string(reason));
        return;
    }
    struct json_object *polls = json_object_object_get(watch, "polls");
    struct json_object *timeline = json_object_new_array();
    enum ml_found shown = (enum ml_found) - 1;
    double first_direct = -1;
    for (size_t i = 0; i < json_object_array_length(polls); i++) {
        struct json_object *p = json_object_array_get_idx(polls, i);
        double t = json_object_get_double(json_object_object_get(p, "t"));
        struct ml_found_view v = {0};
        if (!a->view_parse(topo, json_object_get_string(json_object_object_get(p, "out")), &v))
            v.found = ML_FOUND_NONE;
        if (v.found == ML_FOUND_DIRECT && first_direct < 0)
            first_direct = t;
        if (v.found == shown)
            continue;
        shown = v.found;
        struct json_object *e = json_object_new_object();
        json_object_object_add(e, "t", json_object_new_double(round(t * 100) / 100));
        json_object_object_add(e, "state", json_object_new_string(ml_found_name(v.found)));
        if (v.found == ML_FOUND_DIRECT)
            json_object_object_add(e, "remote", json_object_new_string(v.remote));
        if (v.found == ML_FOUND_RELAY)
            json_object_object_add(e, "relay", json_object_new_string(v.relay));
        json_object_array_add(timeline, e);
    }
    json_object_object_add(rep, "timeline", timeline);
    json_object_object_add(rep, "seconds_to_direct",
                           first_direct >= 0 ? json_object_new_double(round(first_direct * 10) / 10)
                                             : NULL);
    const char *outcome = "failed";
    g_autofree char *reason = NULL;
    if (!check_ok) {
        reason = g_strdup_printf("the check after the window failed: %s",
                                 check_evidence ? check_evidence : "?");
    } else if (!check_found || !strcmp(check_found, "none")) {
        reason = g_strdup("the dataplane found no path");
    } else {
        /* The check's view, confirmed by the hub's counters, is what the repeat found, even if
         * the last poll before it still showed something else (a path that changed since). */
        outcome = check_found;
    }
    /* A watch that ended early says so: its timeline stops there. */
    struct json_object *cut = json_object_object_get(watch, "cut");
    if (cut) {
        char *with = g_strdup_printf("%s%s%s", reason ? reason : "", reason ? "; " : "",
                                     json_object_get_string(cut));
        g_free(reason);
        reason = with;
    }
    json_object_object_add(rep, "outcome", json_object_new_string(outcome));
    json_object_object_add(rep, "reason", reason ? json_object_new_string(reason) : NULL);
    /* A repeat that went direct and fell back is a relay: its direct moment is in the
     * timeline, not a time to direct. */
    if (strcmp(outcome, "direct") != 0)
        json_object_object_add(rep, "seconds_to_direct", NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of key over the repeats that have it (and, with only_outcome, that outcome). */
static struct json_object *median_of(struct json_object *reps, const char *key, bool as_int)
{
    size_t n = json_object_array_length(reps), k = 0;
    g_autofree double *v = g_new0(double, n + 1);
    for (size_t i = 0; i < n; i++) {
        struct json_object *x = json_object_object_get(json_object_array_get_idx(reps, i), key);
        if (x && !json_object_is_type(x, json_type_null))
            v[k++] = json_object_get_double(x);
    }
    if (k == 0)
        return NULL;
    qsort(v, k, sizeof(double), cmp_double);
    double m = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    return as_int ? json_object_new_int64((int64_t)llround(m))
                  : json_object_new_double(round(m * 10) / 10);
}

void ml_nat_cell_summarise(struct json_object *cell)
{
    struct json_object *reps = json_object_object_get(cell, "repeats");
    unsigned nd = 0, nr = 0, nf = 0;
    for (size_t i = 0; reps && i < json_object_array_length(reps); i++) {
        const char *o = json_object_get_string(
            json_object_object_get(json_object_array_get_idx(reps, i), "outcome"));
        nd += o && !strcmp(o, "direct");
        nr += o && !strcmp(o, "relay");
        nf += !o || !strcmp(o, "failed");
    }
    const char *outcome = ml_nat_majority(nd, nr, nf);
    struct json_object *counts = json_object_new_object();
    json_object_object_add(counts, "direct", json_object_new_int((int)nd));
    json_object_object_add(counts, "relay", json_object_new_int((int)nr));
    json_object_object_add(counts, "failed", json_object_new_int((int)nf));
    json_object_object_add(cell, "outcome", json_object_new_string(outcome));
    json_object_object_add(cell, "outcomes", counts);
    json_object_object_add(cell, "seconds_to_direct",
                           reps ? median_of(reps, "seconds_to_direct", false) : NULL);
    json_object_object_add(cell, "hub_bytes", reps ? median_of(reps, "hub_bytes", true) : NULL);
    /* A failed cell says why its last failed repeat failed. */
    struct json_object *why = NULL;
    for (size_t i = 0; !strcmp(outcome, "failed") && reps && i < json_object_array_length(reps);
         i++) {
        struct json_object *r = json_object_array_get_idx(reps, i);
        const char *o = json_object_get_string(json_object_object_get(r, "outcome"));
        if (!o || !strcmp(o, "failed"))
            why = json_object_object_get(r, "reason");
    }
    json_object_object_add(cell, "reason", json_object_get(why));
}

struct cellrun {
    struct ml_lab *lab;
    const struct ml_path_ops *ops;
    const struct ml_auto_ops *a;
    bool capture;
    unsigned window_s;
};

static bool run_on(struct ml_lab *lab, size_t node, const char *cmd, GError **err)
{
    g_autofree char *out = ml_agent_run(ml_lab_dom(lab, node), cmd, NULL, 60, err);
    return out != NULL;
}

static bool back_ping_start(struct cellrun *cr, GError **err);

static bool watch(struct cellrun *cr, struct json_object **ret, GError **err)
{
    struct ml_lab *lab = cr->lab;
    const struct ml_topology *t = lab->topo;
    char target[16];
    ml_ip_str(cr->ops->target(lab), target);
    g_autofree char *view = cr->a->view_cmd(lab);
    g_autofree char *cmd =
        ml_nat_watch_cmd(target, cr->window_s, cr->a->direct_re,
                         ml_lab_netns_prefix(lab, t->measure.client), view, ML_NAT_WATCH_BUDGET);
    /* The watch first, then the server's pings: both start within a moment of each other (the
     * watch's Python takes longer to start than the agent takes to start a ping). */
    virDomainPtr client = ml_lab_dom(lab, t->measure.client);
    long long pid = 0;
    if (!ml_agent_spawn(client, cmd, ml_nat_watch_py, &pid, err) || !back_ping_start(cr, err))
        return false;
    struct ml_exec ex = {0};
    if (!ml_agent_wait(client, pid, cr->window_s + 60.0, &ex, err))
        return false;
    g_autofree char *out = g_strdup(ex.out ? ex.out : "");
    int code = ex.exit_code;
    g_autofree char *why = g_strdup(ex.err ? ex.err : "");
    ml_exec_clear(&ex);
    if (code != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the NAT matrix's watch exited %d: %.300s", code,
                    why);
        return false;
    }
    *ret = json_tokener_parse(out);
    if (!*ret) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the NAT matrix's watch printed no JSON: %.200s",
                    out);
        return false;
    }
    return true;
}

#define BACK_PIDFILE "/run/meshlab-nat-ping.pid"

/* The server speaks too, from the same moment: two peers that both want to talk, as an iperf3 or
 * a TCP connection does both ways. A dataplane that can only go direct when the NATed side sends
 * first gets that chance (nebula 1.6.1, one side pinging: see docs/nat-traversal.md). */
static bool back_ping_start(struct cellrun *cr, GError **err)
{
    struct ml_lab *lab = cr->lab;
    const struct ml_topology *t = lab->topo;
    char peer[16];
    ml_ip_str(cr->a->address(lab, t->measure.client), peer);
    g_autofree char *cmd = g_strdup_printf(
        "echo $$ > " BACK_PIDFILE "; exec %sping -n -q -i 0.2 -w %u %s >/dev/null 2>&1",
        ml_lab_netns_prefix(lab, t->measure.server), cr->window_s + 5, peer);
    long long pid = 0;
    return ml_agent_spawn(ml_lab_dom(lab, t->measure.server), cmd, NULL, &pid, err);
}

static bool back_ping_stop(struct cellrun *cr, GError **err)
{
    return run_on(cr->lab, cr->lab->topo->measure.server,
                  "[ -f " BACK_PIDFILE " ] && kill $(cat " BACK_PIDFILE
                  ") 2>/dev/null; rm -f " BACK_PIDFILE "; true",
                  err);
}

static bool hub_bytes(struct ml_lab *lab, long long *ret, GError **err)
{
    size_t hub = lab->topo->hub;
    struct ml_nic_stats s;
    if (!ml_virt_nic_stats(ml_lab_dom(lab, hub), lab->plan->guests[hub].tap, &s, err))
        return false;
    *ret = s.rx_bytes + s.tx_bytes;
    return true;
}

/* "nebula-symmetric-port-restricted-cone-2": a student finds the cell they want by its name. */
static char *cell_dir(const char *dp, const char *a, const char *b, unsigned r)
{
    return g_strdup_printf("captures/nat/%s-%s-%s-%u", dp, a, b, r);
}

char *ml_nat_repeat_view(const struct ml_topology *topo, const struct ml_auto_ops *a,
                         const char *path, struct json_object *chk)
{
    struct json_object *own = json_object_object_get(chk, "own");
    struct ml_found_view v = {0};
    const char *raw =
        json_object_is_type(own, json_type_array) && json_object_array_length(own) > a->view_own
            ? json_object_get_string(json_object_array_get_idx(own, a->view_own))
            : NULL;
    return !raw || !a->view_parse(topo, raw, &v) ? NULL
           : v.found == ML_FOUND_DIRECT ? g_strdup_printf("%s: direct to %s", path, v.remote)
           : v.found == ML_FOUND_RELAY  ? g_strdup_printf("%s: relayed by %s", path, v.relay)
                                        : g_strdup_printf("%s: no tunnel", path);
}

/* What one repeat collected: the hub's bytes before and after, what the watch printed, the
 * check after it (ok: every step ran; e: why not). */
struct repeat_seen {
    bool ok, check_ok;
    long long h0, h1;
    struct json_object *w, *chk;
    GError *e;
};

/* Whether the watch's last view found the path direct. */
static bool watch_ended_direct(struct cellrun *cr, struct json_object *w)
{
    struct json_object *polls = json_object_object_get(w, "polls");
    size_t n = json_object_is_type(polls, json_type_array) ? json_object_array_length(polls) : 0;
    struct ml_found_view v = {0};
    return n > 0 &&
           cr->a->view_parse(cr->lab->topo,
                             json_object_get_string(json_object_object_get(
                                 json_object_array_get_idx(polls, n - 1), "out")),
                             &v) &&
           v.found == ML_FOUND_DIRECT;
}

/* The daemons started afresh, the window watched, then the check. A watch that ended on a
 * direct view saw the client's side alone: the check waits until the overlay carries both ways
 * (the dataplane's wait: for Tailscale the clients' own path counters), so that its probe does
 * not catch the server's side still on the relay. CI's e2e_nat saw that: client-a's status
 * direct 0.2 s after the first ping, and the check's probe moving 47 kB through the hub, half
 * of what DERP carries both ways. */
static void repeat_watch(struct cellrun *cr, struct repeat_seen *rs)
{
    struct ml_lab *lab = cr->lab;
    rs->ok = hub_bytes(lab, &rs->h0, &rs->e) && cr->a->start(lab, &rs->e) &&
             watch(cr, &rs->w, &rs->e) && back_ping_stop(cr, &rs->e) &&
             hub_bytes(lab, &rs->h1, &rs->e) &&
             (!watch_ended_direct(cr, rs->w) || cr->a->wait(lab, &rs->e));
    if (!rs->ok) {
        g_autoptr(GError) stop = NULL;
        back_ping_stop(cr, &stop);
    }
    if (rs->ok)
        rs->chk = ml_measure_check(lab, cr->ops, "nat cell", &rs->check_ok, &rs->e);
}

/* The repeat's outcome into rep (its check moves there), the pings' output into the run
 * directory. */
static void repeat_record(struct cellrun *cr, const char *an, const char *bn, unsigned r,
                          struct repeat_seen *rs, struct json_object *rep)
{
    const struct ml_topology *t = cr->lab->topo;
    if (!rs->ok || !rs->chk) {
        /* A daemon that would not start behind these NATs, a guest command that failed: this
         * repeat failed, with why; the next one starts from scratch. */
        json_object_object_add(rep, "outcome", json_object_new_string("failed"));
        json_object_object_add(rep, "reason", json_object_new_string(rs->e ? rs->e->message : "?"));
        json_object_object_add(rep, "seconds_to_direct", NULL);
        json_object_object_add(rep, "hub_bytes", NULL);
        json_object_object_add(rep, "timeline", json_object_new_array());
        return;
    }
    json_object_object_add(rep, "hub_bytes", json_object_new_int64(rs->h1 - rs->h0));
    const char *found = json_object_get_string(json_object_object_get(rs->chk, "found"));
    const char *evidence = json_object_get_string(json_object_object_get(rs->chk, "evidence"));
    ml_nat_repeat_judge(t, cr->a, rs->w, rs->check_ok, found, evidence, rep);
    /* The dataplane's view at the check, in a few words (its own output is in check.own). */
    g_autofree char *view = ml_nat_repeat_view(t, cr->a, cr->ops->name, rs->chk);
    json_object_object_add(rep, "view", view ? json_object_new_string(view) : NULL);
    json_object_object_add(rep, "check", g_steal_pointer(&rs->chk));
    /* The pings' own output, when the watch printed it as text (the judge failed it if not). */
    struct json_object *ping =
        json_object_is_type(rs->w, json_type_object) ? json_object_object_get(rs->w, "ping") : NULL;
    if (json_object_is_type(ping, json_type_string)) {
        g_autofree char *rel =
            g_strdup_printf("raw/nat/%s-%s-%s-%u-ping.txt", cr->ops->dataplane->name, an, bn, r);
        ml_lab_write(cr->lab, rel, json_object_get_string(ping), -1, NULL);
    }
    struct json_object *std = json_object_object_get(rep, "seconds_to_direct");
    g_autofree char *after =
        std ? g_strdup_printf(", direct %.1f s after the first ping", json_object_get_double(std))
            : g_strdup("");
    ml_progress("nat", "%s %s x %s, repeat %u: %s%s", cr->ops->dataplane->name, an, bn, r,
                json_object_get_string(json_object_object_get(rep, "outcome")), after);
}

/* One repeat: the dataplane stopped, both NATs switched and conntrack flushed (on the hub
 * too), the daemons started afresh, the window watched, then the check. False only when the
 * lab broke or on Ctrl-C; a cell that found nothing is an outcome, not an error. */
static bool run_repeat(struct cellrun *cr, enum ml_nat_type ta, enum ml_nat_type tb, unsigned r,
                       struct json_object *rep, GError **err)
{
    struct ml_lab *lab = cr->lab;
    const struct ml_topology *t = lab->topo;
    const char *an = ml_nat_type_name(ta), *bn = ml_nat_type_name(tb);
    json_object_object_add(rep, "repeat", json_object_new_int((int)r));
    if (!cr->a->stop(lab, err) || !put_behind(lab, t->measure.client, ta, err) ||
        !put_behind(lab, t->measure.server, tb, err) ||
        !run_on(lab, t->hub, "conntrack -F >/dev/null 2>&1; true", err))
        return false;
    struct ml_capture caps[ML_CAPTURE_TAPS] = {0};
    g_autofree char *dir = cell_dir(cr->ops->dataplane->name, an, bn, r);
    if (cr->capture) {
        struct json_object *files = json_object_new_array();
        json_object_object_add(rep, "captures", files);
        if (!ml_capture_lab_start(lab, caps, dir, files, err))
            return false;
    }
    struct repeat_seen rs = {0};
    repeat_watch(cr, &rs);
    ml_capture_lab_stop(lab, caps);
    bool interrupted = rs.e && rs.e->code == ML_ERR_INTERRUPTED;
    if (interrupted)
        g_propagate_error(err, g_steal_pointer(&rs.e));
    else
        repeat_record(cr, an, bn, r, &rs, rep);
    g_clear_error(&rs.e);
    json_object_put(rs.w);
    json_object_put(rs.chk);
    return !interrupted;
}

/* ---- the matrix ---- */

static struct json_object *cell_new(const struct ml_topology *t, const struct ml_path_ops *ops,
                                    enum ml_nat_type ta, enum ml_nat_type tb)
{
    struct json_object *c = json_object_new_object();
    const char *dp = ops->dataplane->name;
    json_object_object_add(c, "a_nat", json_object_new_string(ml_nat_type_name(ta)));
    json_object_object_add(c, "b_nat", json_object_new_string(ml_nat_type_name(tb)));
    json_object_object_add(c, "a_node", json_object_new_string(t->nodes[t->measure.client].name));
    json_object_object_add(c, "b_node", json_object_new_string(t->nodes[t->measure.server].name));
    json_object_object_add(c, "dataplane", json_object_new_string(dp));
    json_object_object_add(c, "path", json_object_new_string(ops->name));
    const char *exp =
        ml_nat_expected_outcome(ops->dataplane->nat, ml_nat_type_name(ta), ml_nat_type_name(tb));
    json_object_object_add(c, "expected", exp ? json_object_new_string(exp) : NULL);
    return c;
}

static void cell_explain(struct json_object *c)
{
    g_autofree char *text = ml_nat_explain_cell(
        c, ml_dataplane_nat(json_object_get_string(json_object_object_get(c, "dataplane"))));
    json_object_object_add(c, "explanation", text ? json_object_new_string(text) : NULL);
}

static void cell_not_run(struct json_object *c, const char *why)
{
    json_object_object_add(c, "outcome", json_object_new_string("not-run"));
    g_autofree char *reason = g_strdup_printf("not run: %s", why);
    json_object_object_add(c, "reason", json_object_new_string(reason));
    json_object_object_add(c, "outcomes", NULL);
    json_object_object_add(c, "seconds_to_direct", NULL);
    json_object_object_add(c, "hub_bytes", NULL);
    json_object_object_add(c, "repeats", json_object_new_array());
}

/* Why the dataplane cannot take part, or NULL. */
static char *why_not(struct ml_lab *lab, const struct ml_path_ops *ops)
{
    const struct ml_dataplane *dp = ops->dataplane;
    char *reason = NULL;
    if (!ml_dp_available(dp, lab, &reason)) {
        char *r = g_strdup_printf("artifacts missing (%s)", reason);
        g_free(reason);
        return r;
    }
    struct json_object *state = ml_dataplane_state(lab, dp), *v = NULL;
    if (json_object_object_get_ex(state, "setup_failed", &v))
        return g_strdup_printf("its dataplane could not be set up: %s", json_object_get_string(v));
    return NULL;
}

/* Back to the topology's own NATs, the dataplane running there, the overlay answering. */
static bool restore(struct cellrun *cr, GError **err)
{
    struct ml_lab *lab = cr->lab;
    const struct ml_topology *t = lab->topo;
    ml_progress("nat", "%s: back to the topology's NATs", cr->ops->dataplane->name);
    return cr->a->stop(lab, err) &&
           put_behind(lab, t->measure.client, t->nodes[t->measure.client].nat, err) &&
           put_behind(lab, t->measure.server, t->nodes[t->measure.server].nat, err) &&
           cr->a->start(lab, err) && cr->a->wait(lab, err);
}

/* No settle: each repeat starts its dataplane afresh. */
const struct ml_path_ops ml_nat_matrix_policy = {
    .name = "nat-matrix",
    .policy = ML_POLICY_DIRECT,
};

struct json_object *ml_nat_matrix_run(struct ml_lab *lab, bool capture, GError **err)
{
    const struct ml_topology *t = lab->topo;
    if (capture && !lab->remote) {
        g_autofree char *why = NULL;
        if (!ml_capture_available(&why)) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "--capture: %s", why);
            return NULL;
        }
    }
    /* The last measured path's policy is still in force: after a relay path's, every cell
     * would be forced onto the relay. */
    if (!ml_policy_enter(lab, &ml_nat_matrix_policy, NULL, err))
        return NULL;
    struct json_object *cells = json_object_new_array();
    size_t total =
               t->nat_matrix.n_types * (t->nat_matrix.n_types + 1) / 2 * t->nat_matrix.n_dataplanes,
           done = 0;
    for (size_t d = 0; d < t->nat_matrix.n_dataplanes; d++) {
        const struct ml_path_ops *ops = ml_path_auto(t->nat_matrix.dataplanes[d].name);
        struct cellrun cr = {.lab = lab,
                             .ops = ops,
                             .a = ops->dataplane->autop,
                             .capture = capture,
                             .window_s = t->nat_matrix.window_s};
        g_autofree char *skip = why_not(lab, ops);
        bool ran = false;
        for (size_t i = 0; i < t->nat_matrix.n_types; i++) {
            for (size_t j = i; j < t->nat_matrix.n_types; j++) {
                struct json_object *c =
                    cell_new(t, ops, t->nat_matrix.types[i], t->nat_matrix.types[j]);
                json_object_array_add(cells, c);
                done++;
                if (skip) {
                    cell_not_run(c, skip);
                    cell_explain(c);
                    continue;
                }
                ml_progress("nat", "cell %zu of %zu: %s, %s behind %s, %s behind %s, %u repeat(s)",
                            done, total, ops->dataplane->name, t->nodes[t->measure.client].name,
                            ml_nat_type_name(t->nat_matrix.types[i]),
                            t->nodes[t->measure.server].name,
                            ml_nat_type_name(t->nat_matrix.types[j]), t->nat_matrix.repeats);
                struct json_object *reps = json_object_new_array();
                json_object_object_add(c, "repeats", reps);
                ran = true;
                for (unsigned r = 1; r <= t->nat_matrix.repeats; r++) {
                    struct json_object *rep = json_object_new_object();
                    json_object_array_add(reps, rep);
                    if (!run_repeat(&cr, t->nat_matrix.types[i], t->nat_matrix.types[j], r, rep,
                                    err)) {
                        json_object_put(cells);
                        return NULL;
                    }
                }
                ml_nat_cell_summarise(c);
                cell_explain(c);
            }
        }
        if (ran) {
            g_autoptr(GError) e = NULL;
            if (!restore(&cr, &e)) {
                if (e->code == ML_ERR_INTERRUPTED) {
                    g_propagate_error(err, g_steal_pointer(&e));
                    json_object_put(cells);
                    return NULL;
                }
                ml_warn("%s did not come back behind the topology's NATs: %s", ops->dataplane->name,
                        e->message);
            }
        }
    }
    return cells;
}
