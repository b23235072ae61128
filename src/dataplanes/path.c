#include "dataplanes/path.h"

#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "topology/plan.h"

#include "virt/agent.h"
#include "core/util.h"

void ml_evidence_clear(struct ml_evidence *e)
{
    g_free(e->route);
    for (size_t i = 0; i < ML_EVIDENCE_OWN_MAX; i++)
        g_free(e->own[i]);
    g_free(e->own_error);
    memset(e, 0, sizeof(*e));
}

/* Words of `ip route get` output (iproute2's print_route), each list between
 * spaces. "via", "dev" and "src" are read; these take one value meshlab does
 * not need (a metric's value may follow "lock"): */
static const char route_valued[] =
    " from tos table proto scope metric mark uid realms nhid expires users used age ipid error "
    "iif pref mtu advmss rtt rttvar reordering window cwnd ssthresh hoplimit initcwnd initrwnd "
    "quickack congctl features rto_min fastopen_no_cookie ";
/* these are flags, as are the cache's "<local,brd>": */
static const char route_flags[] = " cache dead onlink pervasive offload trap notify linkdown "
                                  "unresolved rt_offload rt_trap rt_offload_failed ";
/* and these types come before the destination when it is not unicast. */
static const char route_types[] =
    " unicast local broadcast anycast multicast blackhole unreachable prohibit throw nat ";

static bool word_in(const char *w, const char *list)
{
    g_autofree char *padded = g_strdup_printf(" %s ", w);
    return strstr(list, padded) != NULL;
}

/* An IPv4 or IPv6 address, with a /prefix when prefix_ok. */
static bool route_address(const char *w, bool prefix_ok)
{
    g_autofree char *a = g_strdup(w);
    char *slash = strchr(a, '/');
    unsigned prefix = 0;
    if (slash) {
        char *end = NULL;
        prefix = (unsigned)g_ascii_strtoull(slash + 1, &end, 10);
        if (!prefix_ok || end == slash + 1 || *end || !g_ascii_isdigit(slash[1]))
            return false;
        *slash = '\0';
    }
    unsigned char buf[sizeof(struct in6_addr)];
    return (inet_pton(AF_INET, a, buf) == 1 && prefix <= 32) ||
           (inet_pton(AF_INET6, a, buf) == 1 && prefix <= 128);
}

/* Copies an address (or a name when !address) into dst; false when it is
 * missing, not one, already set, or does not fit. */
static bool route_take(char *dst, size_t size, const char *w, bool address)
{
    if (!w || *dst || strlen(w) >= size || (address && !route_address(w, false)))
        return false;
    memcpy(dst, w, strlen(w) + 1);
    return true;
}

bool ml_route_parse(const char *text, struct ml_route *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (!text)
        return false;
    g_auto(GStrv) split = g_strsplit_set(text, " \t\n\\", -1);
    g_autoptr(GPtrArray) words = g_ptr_array_new();
    for (char **w = split; *w; w++)
        if (**w)
            g_ptr_array_add(words, *w);
    g_ptr_array_add(words, NULL);
    char **w = (char **)words->pdata;
    if (*w && word_in(*w, route_types))
        w++;
    if (!*w || (strcmp(*w, "default") && !route_address(*w, true)))
        return false;
    struct ml_route r = {0};
    for (w++; *w; w++) {
        const char *k = *w;
        bool ok = true;
        if (!strcmp(k, "via")) {
            if (w[1] && (!strcmp(w[1], "inet") || !strcmp(w[1], "inet6")))
                w++;
            ok = route_take(r.via, sizeof(r.via), *++w, true);
        } else if (!strcmp(k, "dev")) {
            ok = route_take(r.dev, sizeof(r.dev), *++w, false);
        } else if (!strcmp(k, "src")) {
            ok = route_take(r.src, sizeof(r.src), *++w, true);
        } else if (word_in(k, route_valued)) {
            if (w[1] && !strcmp(w[1], "lock"))
                w++;
            ok = *++w != NULL;
        } else {
            ok = word_in(k, route_flags) || (k[0] == '<' && k[strlen(k) - 1] == '>');
        }
        if (!ok || !*w)
            return false;
    }
    r.parsed = true;
    *ret = r;
    return true;
}

bool ml_route_enters(const struct ml_route *rt, const char *dev, GString *sentence)
{
    if (!rt->parsed) {
        g_string_append_printf(sentence, "the route could not be read (must leave by %s); ", dev);
        return false;
    }
    bool ok = !strcmp(rt->dev, dev) && !rt->via[0];
    if (!ok)
        g_string_append_printf(sentence, "the route leaves by %s%s%s (must be %s, no gateway); ",
                               rt->dev[0] ? rt->dev : "no device", rt->via[0] ? " via " : "",
                               rt->via, dev);
    return ok;
}

bool ml_path_verdict(const struct ml_path_ops *ops, const struct ml_topology *topo,
                     const struct ml_evidence *ev, GString *sentence)
{
    /* A shallow copy: verify reads the parsed route, the caller's evidence stays as it was. */
    struct ml_evidence seen = *ev;
    if (!seen.rt.parsed)
        ml_route_parse(seen.route, &seen.rt);
    bool own = !ops->verify || ops->verify(topo, &seen, sentence);
    bool answered = ev->transmitted > 0 && ev->received == ev->transmitted;
    /* A path nothing forced is judged as what its dataplane says it found. */
    enum ml_hub_role role = ml_path_role(ops, topo, ev);
    if (role == ML_HUB_FOUND)
        g_string_append(sentence, "the dataplane found no path; ");
    bool quiet = role == ML_HUB_QUIET;
    long long carried = ev->hub_bytes - ev->hub_idle_bytes;
    bool hub_ok = role == ML_HUB_FOUND ? false
                  : quiet              ? carried * 20 < ev->probe_bytes
                          : carried * 2 >= ev->probe_bytes * 3 && carried <= ev->probe_bytes * 3;
    g_string_append_printf(sentence,
                           "route: %s; %u/%u probe pings answered (all must be); hub NIC moved "
                           "%lld bytes, less %lld idle (as long, just before) is %lld for %lld "
                           "probe bytes (must be %s)",
                           ev->route ? ev->route : "?", ev->received, ev->transmitted,
                           ev->hub_bytes, ev->hub_idle_bytes, carried, ev->probe_bytes,
                           quiet ? "under 5%" : "between 1.5 and 3.0 times");
    return own && answered && hub_ok;
}

/* The registry: each path file defines its ops (and its dataplane's), and
 * names them once here. */
extern const struct ml_path_ops ml_path_plain, ml_path_wireguard_hub, ml_path_tailscale_direct,
    ml_path_tailscale_relay, ml_path_nebula_direct, ml_path_nebula_relay, ml_path_wireguard_direct,
    ml_path_wireguard_go_hub, ml_path_ipsec_hub, ml_path_nebula_auto, ml_path_tailscale_auto;

const struct ml_path_ops *const ml_paths[] = {
    &ml_path_plain,
    &ml_path_wireguard_hub,
    &ml_path_tailscale_direct,
    &ml_path_tailscale_relay,
    &ml_path_nebula_direct,
    &ml_path_nebula_relay,
    &ml_path_wireguard_direct,
    &ml_path_wireguard_go_hub,
    &ml_path_ipsec_hub,
    &ml_path_nebula_auto,
    &ml_path_tailscale_auto,
    NULL,
};

const struct ml_path_ops *ml_path_find(const char *name)
{
    for (size_t i = 0; name && ml_paths[i]; i++)
        if (!strcmp(ml_paths[i]->name, name))
            return ml_paths[i];
    return NULL;
}

bool ml_path_runs_daemon(const struct ml_path_ops *ops, const char *daemon)
{
    for (size_t i = 0; ops && ops->dataplane && daemon && i < ML_DATAPLANE_DAEMONS_MAX; i++)
        if (ops->dataplane->daemons[i] && !strcmp(ops->dataplane->daemons[i], daemon))
            return true;
    return false;
}

bool ml_path_wanted(const struct ml_topology *topo, const struct ml_path_ops *ops)
{
    return ml_topology_has_path(topo, ops->name);
}

const struct ml_path_ops *ml_path_auto(const char *dataplane)
{
    g_autofree char *name = g_strdup_printf("%s-auto", dataplane);
    const struct ml_path_ops *ops = ml_path_find(name);
    return ops && ops->dataplane && ops->dataplane->autop ? ops : NULL;
}

bool ml_path_needed(const struct ml_topology *topo, const struct ml_path_ops *ops)
{
    if (ml_path_wanted(topo, ops))
        return true;
    for (size_t i = 0; i < topo->nat_matrix.n_dataplanes; i++)
        if (ml_path_auto(topo->nat_matrix.dataplanes[i].name) == ops)
            return true;
    return false;
}

const char *ml_found_name(enum ml_found f)
{
    return f == ML_FOUND_DIRECT ? "direct" : f == ML_FOUND_RELAY ? "relay" : "none";
}

enum ml_hub_role ml_path_role(const struct ml_path_ops *ops, const struct ml_topology *topo,
                              const struct ml_evidence *ev)
{
    if (ops->hub != ML_HUB_FOUND)
        return ops->hub;
    const struct ml_auto_ops *a = ops->dataplane ? ops->dataplane->autop : NULL;
    struct ml_found_view v = {0};
    if (!a || ev->own_error || !ev->own[a->view_own] ||
        !a->view_parse(topo, ev->own[a->view_own], &v))
        return ML_HUB_FOUND;
    return v.found == ML_FOUND_DIRECT  ? ML_HUB_QUIET
           : v.found == ML_FOUND_RELAY ? ML_HUB_CARRIES
                                       : ML_HUB_FOUND;
}

/* Dataplanes derive their ports from wireguard.listen_port; each must be a
 * port, and no two the same: two dataplanes on one port would take each
 * other's packets, and the firewall could no longer tell their transports
 * apart. The one check of the ports, reported at listen_port, which is the
 * only one a topology chooses. */
static bool ports_distinct(const struct ml_topology *topo, GError **err)
{
    struct ml_port ports[ML_PORTS_MAX], moved[ML_PORTS_MAX];
    size_t n = ml_dataplane_ports(topo, ports);
    /* The ports that move with listen_port are the ones it makes. */
    struct ml_topology other = *topo;
    other.wireguard.listen_port = topo->wireguard.listen_port ^ 0x4000;
    g_assert(ml_dataplane_ports(&other, moved) == n);
    for (size_t i = 0; i < n; i++) {
        const struct ml_port *a = &ports[i], *b = NULL;
        for (size_t j = 0; !b && j < i; j++)
            if (ports[j].proto == a->proto && ports[j].port == a->port)
                b = &ports[j];
        if (!b && a->port >= 1 && a->port <= 65535)
            continue;
        const struct ml_port *made = b && moved[b - ports].port != b->port ? b : a;
        const struct ml_port *fixed = made == a ? b : a;
        unsigned offset = made->port - topo->wireguard.listen_port;
        g_autofree char *plus = offset ? g_strdup_printf(" (listen_port + %u)", offset) : NULL;
        g_autofree char *what =
            b ? g_strdup_printf("which %s uses already", fixed->what)
              : g_strdup_printf("beyond 65535; choose a listen_port of at most %u instead",
                                65535 - offset);
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%d:%d: wireguard.listen_port %u puts %s on %s %u%s, %s%s", topo->path,
                    topo->wireguard.listen_port_line, topo->wireguard.listen_port_column,
                    topo->wireguard.listen_port, made->what,
                    made->proto == ML_PROTO_TCP ? "TCP" : "UDP", made->port, plus ? plus : "", what,
                    b ? "; choose another listen_port" : "");
        return false;
    }
    return true;
}

bool ml_paths_resolve(const struct ml_topology *topo, GError **err)
{
    g_autoptr(GString) known = g_string_new(NULL);
    for (size_t i = 0; ml_paths[i]; i++)
        g_string_append_printf(known, "%s%s", i ? ", " : "", ml_paths[i]->name);
    if (topo->measure.n_paths == 0) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%d:%d: measure.paths is empty; list at "
                    "least one of %s",
                    topo->path, topo->measure.paths_line, topo->measure.paths_column, known->str);
        return false;
    }
    for (size_t i = 0; i < topo->measure.n_paths; i++) {
        const struct ml_path_ref *ref = &topo->measure.paths[i];
        if (ml_path_find(ref->name))
            continue;
        g_autofree char *shown = g_strescape(ref->name, NULL);
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%d:%d: measure.paths: unknown path '%s'; "
                    "known paths are %s",
                    topo->path, ref->line, ref->column, shown, known->str);
        return false;
    }
    for (size_t i = 0; i < topo->nat_matrix.n_dataplanes; i++) {
        const struct ml_path_ref *ref = &topo->nat_matrix.dataplanes[i];
        if (ml_path_auto(ref->name))
            continue;
        g_autofree char *shown = g_strescape(ref->name, NULL);
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%d:%d: nat_matrix.dataplanes: '%s' has no path that emerges by itself; "
                    "the NAT matrix runs nebula and tailscale",
                    topo->path, ref->line, ref->column, shown);
        return false;
    }
    /* Behind a NAT only a dataplane that finds its own way can reach the other client: a forced
     * path (plain, WireGuard to a fixed endpoint, a path made direct or relayed by dropping
     * packets) would measure the NAT's failure, not a path. */
    size_t natted = ml_topology_has_nat(topo) ? 1 : 0;
    for (size_t i = 0; natted && i < topo->measure.n_paths; i++) {
        const struct ml_path_ref *ref = &topo->measure.paths[i];
        const struct ml_path_ops *ops = ml_path_find(ref->name);
        if (ops->hub == ML_HUB_FOUND)
            continue;
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%d:%d: measure.paths: %s is forced, and a client sits behind a NAT; "
                    "measure nebula-auto or tailscale-auto there, or set the clients' nat: none",
                    topo->path, ref->line, ref->column, ops->name);
        return false;
    }
    for (size_t k = 0; ml_paths[k]; k++) {
        const struct ml_dataplane *dp = ml_paths[k]->dataplane;
        bool first = true;
        for (size_t j = 0; j < k; j++)
            first &= !(ml_paths[j]->dataplane == dp && ml_path_needed(topo, ml_paths[j]));
        if (!dp || !dp->conflict || !first || !ml_path_needed(topo, ml_paths[k]))
            continue;
        int line = topo->measure.paths_line, column = topo->measure.paths_column;
        g_autofree char *rule = dp->conflict(topo, &line, &column);
        if (rule) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s:%d:%d: %s", topo->path, line, column,
                        rule);
            return false;
        }
    }
    return ports_distinct(topo, err);
}

char *ml_subnet_conflict(const struct ml_topology *topo, const char *who, const char *net,
                         unsigned prefix, int *ret_line, int *ret_column)
{
    struct in_addr a = {0};
    inet_pton(AF_INET, net, &a);
    const struct ml_subnet *mine[] = {&topo->lab_subnet, &topo->wireguard.subnet};
    for (size_t i = 0; i < G_N_ELEMENTS(mine); i++) {
        unsigned p = MIN(prefix, mine[i]->prefix);
        uint32_t mask = p ? ~0u << (32 - p) : 0;
        if ((ntohl(a.s_addr) & mask) != (ntohl(mine[i]->net.s_addr) & mask))
            continue;
        char other[16];
        *ret_line = mine[i]->line;
        *ret_column = mine[i]->column;
        return g_strdup_printf("%s the overlay %s/%u, which overlaps %s %s/%u; move that "
                               "subnet elsewhere",
                               who, net, prefix, i == 0 ? "the lab subnet" : "wireguard.subnet",
                               ml_ip_str(mine[i]->net, other), mine[i]->prefix);
    }
    return NULL;
}

struct json_object *ml_lab_state_named(struct ml_lab *lab, const char *name)
{
    if (!lab->dataplanes)
        lab->dataplanes = json_object_new_object();
    struct json_object *state = NULL;
    if (!json_object_object_get_ex(lab->dataplanes, name, &state) ||
        !json_object_is_type(state, json_type_object)) {
        state = json_object_new_object();
        json_object_object_add(lab->dataplanes, name, state);
    }
    return state;
}

struct json_object *ml_dataplane_state(struct ml_lab *lab, const struct ml_dataplane *dp)
{
    return ml_lab_state_named(lab, dp->name);
}

size_t ml_dataplane_ports(const struct ml_topology *topo, struct ml_port ret[ML_PORTS_MAX])
{
    size_t n = ml_ports(topo, ret);
    for (size_t i = 0; ml_paths[i]; i++) {
        const struct ml_dataplane *dp = ml_paths[i]->dataplane;
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= ml_paths[j]->dataplane == dp;
        if (dp && dp->ports && !seen)
            n += dp->ports(topo, ret + n, ML_PORTS_MAX - n);
    }
    return n;
}

bool ml_policy_firewall(struct ml_lab *lab, GError **err)
{
    size_t n = lab->plan->n_guests;
    g_autofree char *fw = ml_nft_firewall(lab->topo);
    const char *cmds[ML_MAX_NODES], *inputs[ML_MAX_NODES];
    for (size_t i = 0; i < n; i++) {
        cmds[i] = "nft -f -";
        inputs[i] = fw;
    }
    if (!ml_lab_run_parallel(lab, NULL, cmds, inputs, 60, NULL, "loading the firewall", err))
        return false;
    g_autofree char *summary = ml_nft_firewall_summary(lab->topo);
    ml_progress("firewall", "guest firewall loaded on %zu guests: %s", n, summary);
    return true;
}

bool ml_policy_enter(struct ml_lab *lab, const struct ml_path_ops *ops, GError **err)
{
    size_t n = lab->plan->n_guests;
    const char *cmds[ML_MAX_NODES] = {0};
    char *inputs[ML_MAX_NODES] = {0}, *out[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < n; i++) {
        cmds[i] = "nft -f - && nft list ruleset";
        inputs[i] = ml_nft_policy(lab->topo, i, ops->policy);
    }
    bool ok = ml_lab_run_parallel(lab, NULL, cmds, (const char *const *)inputs, 60, out,
                                  "the path policy", err);
    const char *path = ops->name;
    for (size_t i = 0; ok && i < n; i++) {
        g_autofree char *rel =
            g_strdup_printf("rulesets/%s/%s.nft", path, lab->topo->nodes[i].name);
        ml_lab_write(lab, rel, out[i] ? out[i] : "", -1, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        g_free(inputs[i]);
        g_free(out[i]);
    }
    if (!ok)
        return false;
    ml_progress("policy", "%s: policy '%s' in force; rulesets saved in %s/rulesets/%s", path,
                ml_policy_name(ops->policy), lab->run_dir, path);
    if (ops->settle && !ops->settle(lab, err)) {
        if (err && *err && (*err)->code != ML_ERR_INTERRUPTED)
            g_prefix_error(err, "the dataplane did not settle after the policy change: ");
        return false;
    }
    return true;
}

GPtrArray *ml_path_artifacts(const struct ml_lab *lab, size_t node)
{
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    for (size_t k = 0; ml_paths[k]; k++) {
        const struct ml_dataplane *dp = ml_paths[k]->dataplane;
        g_autofree char *why = NULL;
        if (!ml_path_needed(lab->topo, ml_paths[k]) || !dp || !dp->artifacts ||
            (dp->available && !dp->available(lab, &why)))
            continue;
        GPtrArray *mine = g_ptr_array_new_with_free_func(g_free);
        dp->artifacts(lab, node, mine);
        for (guint i = 0; i < mine->len; i++) {
            bool dup = false;
            for (guint j = 0; j < files->len; j++)
                dup |= !strcmp(g_ptr_array_index(files, j), g_ptr_array_index(mine, i));
            if (!dup)
                g_ptr_array_add(files, g_strdup(g_ptr_array_index(mine, i)));
        }
        g_ptr_array_unref(mine);
    }
    return files;
}
