#include "dataplanes/dataplane.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "topology/plan.h"

#include "virt/agent.h"
#include "core/util.h"

/* The registry: one line per dataplane, in the order they are set up, measured and listed. Each
 * dataplane's own file defines ml_dataplane_NAME (and its paths). */
#define ML_DATAPLANE_LIST(X)                                                                       \
    X(plain)                                                                                       \
    X(wireguard)                                                                                   \
    X(nebula)                                                                                      \
    X(tailscale)                                                                                   \
    X(wireguard_direct)                                                                            \
    X(wireguard_go_hub)                                                                            \
    X(ipsec)                                                                                       \
    X(openvpn)                                                                                     \
    X(tinc)

#define ML_DATAPLANE_DECLARE(n) extern const struct ml_dataplane ml_dataplane_##n;
ML_DATAPLANE_LIST(ML_DATAPLANE_DECLARE)
#define ML_DATAPLANE_ENTRY(n) &ml_dataplane_##n,
const struct ml_dataplane *const ml_dataplanes[] = {ML_DATAPLANE_LIST(ML_DATAPLANE_ENTRY) NULL};

double ml_uptime_head(const char *text)
{
    if (!text || !g_ascii_isdigit(*text))
        return NAN;
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    return end != text && (*end == '\n' || !*end) && isfinite(v) && v >= 0 ? v : NAN;
}

char *ml_path_names(void)
{
    GString *s = g_string_new(NULL);
    for (size_t d = 0; ml_dataplanes[d]; d++)
        for (size_t p = 0; ml_dataplanes[d]->paths[p]; p++)
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", ml_dataplanes[d]->paths[p]->name);
    return g_string_free(s, FALSE);
}

const struct ml_nat_traits *ml_dataplane_nat(const char *name)
{
    const struct ml_dataplane *dp = ml_dataplane_find(name);
    return dp ? dp->nat : NULL;
}

const struct ml_dataplane *ml_dataplane_find(const char *name)
{
    for (size_t i = 0; name && ml_dataplanes[i]; i++)
        if (!strcmp(ml_dataplanes[i]->name, name))
            return ml_dataplanes[i];
    return NULL;
}

/* Two sweeps over the registry: the forced paths, then the ones that emerge by themselves. */
const struct ml_path_ops *ml_path_at(size_t i)
{
    for (int emerged = 0; emerged < 2; emerged++)
        for (size_t d = 0; ml_dataplanes[d]; d++)
            for (size_t p = 0; ml_dataplanes[d]->paths[p]; p++) {
                const struct ml_path_ops *ops = ml_dataplanes[d]->paths[p];
                if ((ops->hub == ML_HUB_FOUND) == (emerged == 1) && i-- == 0)
                    return ops;
            }
    return NULL;
}

const struct ml_dp_daemon *ml_daemon_at(size_t i)
{
    for (size_t d = 0; ml_dataplanes[d]; d++)
        for (size_t k = 0; k < ML_DATAPLANE_DAEMONS_MAX && ml_dataplanes[d]->daemons[k].name; k++) {
            const struct ml_dp_daemon *dm = &ml_dataplanes[d]->daemons[k];
            bool seen = false;
            for (size_t e = 0; e < d && !seen; e++)
                for (size_t l = 0; l < ML_DATAPLANE_DAEMONS_MAX; l++)
                    seen |= ml_dataplanes[e]->daemons[l].name &&
                            !strcmp(ml_dataplanes[e]->daemons[l].name, dm->name);
            if (!seen && i-- == 0)
                return dm;
        }
    return NULL;
}

size_t ml_daemon_count(void)
{
    size_t n = 0;
    while (ml_daemon_at(n))
        n++;
    return n;
}

const struct ml_path_ops *ml_path_find(const char *name)
{
    const struct ml_path_ops *ops;
    ML_FOR_EACH_PATH(i, ops)
    if (name && !strcmp(ops->name, name))
        return ops;
    return NULL;
}

bool ml_path_runs_daemon(const struct ml_path_ops *ops, const char *daemon)
{
    for (size_t i = 0; ops && daemon && i < ML_DATAPLANE_DAEMONS_MAX; i++)
        if (ops->dataplane->daemons[i].name && !strcmp(ops->dataplane->daemons[i].name, daemon))
            return true;
    return false;
}

bool ml_dp_available(const struct ml_dataplane *dp, const struct ml_lab *lab, char **ret_reason)
{
    return !dp->available || dp->available(lab, ret_reason);
}

bool ml_dp_exports(const struct ml_dataplane *dp)
{
    return dp->export != NULL;
}

bool ml_dp_export(const struct ml_dataplane *dp, struct ml_bundle *b, GError **err)
{
    if (!dp->export) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "this meshlab exports nothing for %s: it has no export for that dataplane "
                    "yet",
                    dp->name);
        return false;
    }
    return dp->export(b, err);
}

bool ml_dp_verify_settle(const struct ml_dataplane *dp, struct ml_lab *lab,
                         const struct ml_path_ops *ops, GError **err)
{
    return !dp->verify_settle || dp->verify_settle(lab, ops, err);
}

bool ml_dp_verify_install(const struct ml_dataplane *dp, struct ml_lab *lab, size_t node,
                          GError **err)
{
    return !dp->verify_install || dp->verify_install(lab, node, err);
}

bool ml_dp_setup(const struct ml_dataplane *dp, struct ml_lab *lab, struct json_object *state,
                 GError **err)
{
    return !dp->setup || dp->setup(lab, state, err);
}

void ml_dp_observe(const struct ml_dataplane *dp, struct ml_lab *lab, struct ml_evidence *ev)
{
    if (dp->observe)
        dp->observe(lab, ev);
}

char *ml_dp_conflict(const struct ml_dataplane *dp, const struct ml_topology *topo, int *ret_line,
                     int *ret_column)
{
    return dp->conflict ? dp->conflict(topo, ret_line, ret_column) : NULL;
}

bool ml_dp_needed(const struct ml_dataplane *dp, const struct ml_topology *topo)
{
    for (size_t p = 0; dp->paths[p]; p++)
        if (ml_path_needed(topo, dp->paths[p]))
            return true;
    return false;
}

bool ml_path_settle(const struct ml_path_ops *ops, struct ml_lab *lab, GError **err)
{
    return !ops->settle || ops->settle(lab, err);
}

void ml_dp_stop_unsettled(const struct ml_dataplane *dp, struct ml_lab *lab, GError **err)
{
    if (!err || !*err || (*err)->code == ML_ERR_INTERRUPTED || !dp->autop || !dp->autop->stop)
        return;
    g_autoptr(GError) e = NULL;
    if (dp->autop->stop(lab, &e))
        ml_error_append(err, "%s stopped on the clients so it disturbs no other path",
                        dp->daemons[0].name ? dp->daemons[0].name : dp->name);
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
    g_autofree char *known = ml_path_names();
    g_autofree char *emerging = NULL, *emerging_paths = NULL;
    /* The dataplanes whose paths emerge by themselves, and those paths. */
    g_autoptr(GPtrArray) auto_dps = g_ptr_array_new(), auto_paths = g_ptr_array_new();
    const struct ml_path_ops *p;
    ML_FOR_EACH_PATH(i, p)
    {
        if (p->hub == ML_HUB_FOUND && ml_path_auto(p->dataplane->name) == p) {
            g_ptr_array_add(auto_dps, (char *)p->dataplane->name);
            g_ptr_array_add(auto_paths, (char *)p->name);
        }
    }
    if (topo->measure.n_paths == 0) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%d:%d: measure.paths is empty; list at "
                    "least one of %s",
                    topo->path, topo->measure.paths_line, topo->measure.paths_column, known);
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
                    topo->path, ref->line, ref->column, shown, known);
        return false;
    }
    for (size_t i = 0; i < topo->nat_matrix.n_dataplanes; i++) {
        const struct ml_path_ref *ref = &topo->nat_matrix.dataplanes[i];
        if (ml_path_auto(ref->name))
            continue;
        g_autofree char *shown = g_strescape(ref->name, NULL);
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%d:%d: nat_matrix.dataplanes: '%s' has no path that emerges by itself; "
                    "the NAT matrix runs %s",
                    topo->path, ref->line, ref->column, shown,
                    emerging = ml_words_joined(auto_dps, "and"));
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
                    "measure %s there, or set the clients' nat: none",
                    topo->path, ref->line, ref->column, ops->name,
                    emerging_paths = ml_words_joined(auto_paths, "or"));
        return false;
    }
    for (size_t d = 0; ml_dataplanes[d]; d++) {
        const struct ml_dataplane *dp = ml_dataplanes[d];
        if (!ml_dp_needed(dp, topo))
            continue;
        int line = topo->measure.paths_line, column = topo->measure.paths_column;
        g_autofree char *rule = ml_dp_conflict(dp, topo, &line, &column);
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
    for (size_t d = 0; ml_dataplanes[d]; d++)
        if (ml_dataplanes[d]->ports)
            n += ml_dataplanes[d]->ports(topo, ret + n, ML_PORTS_MAX - n);
    return n;
}

GPtrArray *ml_path_artifacts(const struct ml_lab *lab, size_t node)
{
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    for (size_t d = 0; ml_dataplanes[d]; d++) {
        const struct ml_dataplane *dp = ml_dataplanes[d];
        g_autofree char *why = NULL;
        if (!dp->artifacts || !ml_dp_needed(dp, lab->topo) || !ml_dp_available(dp, lab, &why))
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
