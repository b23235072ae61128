/* nebula-direct and nebula-relay: the same nebula mesh, with the relay policy
 * forcing client traffic through the hub's nebula relay. */
#include <stdio.h>
#include <string.h>

#include "dataplanes/nebula.h"
#include "dataplanes/path.h"
#include "core/util.h"

static char *describe_direct(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("nebula, %s to %s directly (lighthouse on %s)",
                           t->nodes[t->measure.client].name,
                           ml_ip_str(ml_nebula_address(t, t->measure.server), addr),
                           t->nodes[t->wireguard.hub].name);
}

static char *describe_relay(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("nebula, %s to %s through the relay on %s (UDP between the clients "
                           "dropped)",
                           t->nodes[t->measure.client].name,
                           ml_ip_str(ml_nebula_address(t, t->measure.server), addr),
                           t->nodes[t->wireguard.hub].name);
}

static struct in_addr target(const struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    return ml_nebula_address(t, t->measure.server);
}

/* nebula's own view of the client's tunnel and the probe, as evidence; false
 * when nebula could not be asked. */
static bool observe(struct ml_lab *lab, const struct ml_probe *p, const char *hub_rule,
                    struct ml_nebula_tunnel *v, GString *ev)
{
    g_autoptr(GError) e = NULL;
    bool viewed = ml_nebula_view(lab, v, &e);
    if (!viewed)
        g_string_append_printf(ev, "cannot read nebula's view: %s; ", e->message);
    else if (!v->found)
        g_string_append(ev, "nebula has no tunnel to the server; ");
    else if (v->relayed)
        g_string_append_printf(ev, "nebula print-tunnel: currentRemote null, relayed by %s; ",
                               v->relay);
    else
        g_string_append_printf(ev, "nebula print-tunnel: currentRemote %s (direct); ", v->remote);
    g_string_append_printf(ev, "route: %s; %u/%u probe pings answered; hub NIC moved %lld bytes "
                           "for %lld probe bytes (%s)",
                           p->route ? p->route : "?", p->received, p->transmitted, p->hub_bytes,
                           p->probe_bytes, hub_rule);
    return viewed && p->route && strstr(p->route, "dev " ML_NEBULA_DEV) && p->received > 0;
}

static bool verify_direct(struct ml_lab *lab, const struct ml_probe *p, GString *ev)
{
    struct ml_nebula_tunnel v = {0};
    bool seen = observe(lab, p, "must be under 5%", &v, ev);
    char server[16];
    ml_ip_str(lab->topo->nodes[lab->topo->measure.server].address, server);
    bool direct = v.found && !v.relayed && g_str_has_prefix(v.remote, server) &&
                  v.remote[strlen(server)] == ':';
    return seen && direct && p->hub_bytes * 20 < p->probe_bytes;
}

static bool verify_relay(struct ml_lab *lab, const struct ml_probe *p, GString *ev)
{
    struct ml_nebula_tunnel v = {0};
    bool seen = observe(lab, p, "must be at least 1.5 times", &v, ev);
    char hub[16];
    ml_ip_str(ml_nebula_address(lab->topo, lab->topo->wireguard.hub), hub);
    return seen && v.found && v.relayed && !strcmp(v.relay, hub) &&
           p->hub_bytes * 2 >= p->probe_bytes * 3;
}

static bool available(const struct ml_lab *lab, char **ret_reason)
{
    (void)lab;
    (void)ret_reason;
    return true;
}

/* A restart with the policy already in place finds the new path at once;
 * otherwise nebula keeps the old tunnel until it times out. */
static bool settle(struct ml_lab *lab, GError **err)
{
    ml_progress("nebula", "restarting nebula on the clients so they pick their path afresh");
    return ml_nebula_restart_clients(lab, err);
}

const struct ml_path_ops ml_path_nebula_direct = {
    .kind = ML_PATH_NEBULA_DIRECT,
    .policy = ML_POLICY_DIRECT,
    .describe = describe_direct,
    .target = target,
    .available = available,
    .setup = ml_nebula_setup,
    .settle = settle,
    .verify = verify_direct,
};

const struct ml_path_ops ml_path_nebula_relay = {
    .kind = ML_PATH_NEBULA_RELAY,
    .policy = ML_POLICY_RELAY,
    .describe = describe_relay,
    .target = target,
    .available = available,
    .setup = ml_nebula_setup,
    .settle = settle,
    .verify = verify_relay,
};
