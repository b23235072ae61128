/* nebula-direct and nebula-relay: the same nebula mesh, with the relay policy
 * forcing client traffic through the hub's nebula relay. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "dataplanes/nebula.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "core/util.h"

static char *describe_direct(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf(
        "nebula, %s to %s directly (lighthouse on %s)", t->nodes[t->measure.client].name,
        ml_ip_str(ml_nebula_address(t, t->measure.server), addr), t->nodes[t->hub].name);
}

static char *describe_relay(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("nebula, %s to %s through the relay on %s (UDP between the clients "
                           "dropped)",
                           t->nodes[t->measure.client].name,
                           ml_ip_str(ml_nebula_address(t, t->measure.server), addr),
                           t->nodes[t->hub].name);
}

static struct in_addr target(const struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    return ml_nebula_address(t, t->measure.server);
}

static void observe(struct ml_lab *lab, struct ml_evidence *ev)
{
    g_autoptr(GError) e = NULL;
    ev->own[0] = ml_nebula_view(lab, &e);
    if (!ev->own[0])
        ev->own_error = g_strdup_printf("cannot read nebula's view: %s", e->message);
}

/* nebula's print-tunnel, read from the evidence, as a sentence; false when it
 * shows no tunnel or the client's route does not enter the overlay. */
static bool view(const struct ml_evidence *ev, struct ml_nebula_tunnel *v, GString *sentence)
{
    g_autoptr(GError) e = NULL;
    if (ev->own_error || !ev->own[0]) {
        g_string_append_printf(sentence, "%s; ", ev->own_error ? ev->own_error : "no view");
        return false;
    }
    if (!ml_nebula_tunnel_parse(ev->own[0], v, &e)) {
        g_string_append_printf(sentence, "cannot read nebula's view: %s; ", e->message);
        return false;
    }
    if (!v->found)
        g_string_append(sentence, "nebula has no tunnel to the server; ");
    else if (v->relayed)
        g_string_append_printf(sentence,
                               "nebula print-tunnel: currentRemote null, relayed by "
                               "%s; ",
                               v->relay);
    else
        g_string_append_printf(sentence, "nebula print-tunnel: currentRemote %s (direct); ",
                               v->remote);
    return ml_route_enters(&ev->rt, ML_NEBULA_DEV, sentence);
}

/* Whether tunnel v is on the forced path: relayed by the hub, or direct to the server's address
 * on the bridge. */
static bool tunnel_on(const struct ml_topology *t, const struct ml_nebula_tunnel *v, bool relayed)
{
    char addr[16];
    if (!v->found)
        return false;
    if (relayed) {
        ml_ip_str(ml_nebula_address(t, t->hub), addr);
        return v->relayed && !strcmp(v->relay, addr);
    }
    ml_ip_str(t->nodes[t->measure.server].address, addr);
    return !v->relayed && g_str_has_prefix(v->remote, addr) && v->remote[strlen(addr)] == ':';
}

static bool verify_direct(const struct ml_topology *t, const struct ml_evidence *ev,
                          GString *sentence)
{
    struct ml_nebula_tunnel v = {0};
    bool seen = view(ev, &v, sentence);
    return seen && tunnel_on(t, &v, false);
}

static bool verify_relay(const struct ml_topology *t, const struct ml_evidence *ev,
                         GString *sentence)
{
    struct ml_nebula_tunnel v = {0};
    bool seen = view(ev, &v, sentence);
    return seen && tunnel_on(t, &v, true);
}

extern const struct ml_dataplane ml_dataplane_nebula;

/* A restart with the policy already in place finds the new path at once;
 * otherwise nebula keeps the old tunnel until it times out. A nebula that found no tunnel is
 * stopped; its next path starts it afresh (settle_forced finds no tunnel). */
static bool settle(struct ml_lab *lab, GError **err)
{
    ml_progress("nebula", "restarting nebula on the clients so they pick their path afresh");
    if (ml_nebula_restart_clients(lab, err))
        return true;
    ml_dp_stop_unsettled(&ml_dataplane_nebula, lab, err);
    return false;
}

/* Whether nebula's tunnel to the server is on the path wanted now, read from its own view
 * after the overlay answered a ping through it: relayed by the hub, or direct to the server's
 * address on the bridge. */
static bool on_path(struct ml_lab *lab, bool relayed, GString *said)
{
    const struct ml_topology *t = lab->topo;
    g_autoptr(GError) e = NULL;
    if (!ml_lab_wait_ping(lab, ml_nebula_address(t, t->measure.server), 2, "nebula", &e))
        return false;
    g_autofree char *text = ml_nebula_view(lab, &e);
    struct ml_nebula_tunnel v = {0};
    if (!text || !ml_nebula_tunnel_parse(text, &v, &e) || !v.found)
        return false;
    g_string_append(said, v.relayed ? v.relay : v.remote);
    return tunnel_on(t, &v, relayed);
}

/* The forced paths come back to their policy once a round (the passes interleaved across the
 * policies, measure.c sweep), and a restart each time cost 5 to 10 s under TCG (54 s of a
 * full-profile run's measure phase). nebula keeps a relayed tunnel while the direct policy is
 * in force and nothing is sent through it, so the restart is made only when its view shows
 * another path, or none; every check and pass still reads the view and judges the path. */
static bool settle_forced(struct ml_lab *lab, bool relayed, GError **err)
{
    g_autoptr(GString) said = g_string_new(NULL);
    if (on_path(lab, relayed, said)) {
        ml_progress("nebula", "the tunnel is %s already (%s): no restart",
                    relayed ? "relayed by the hub" : "direct", said->str);
        return true;
    }
    return ml_check_interrupted(err) ? false : settle(lab, err);
}

/* export --verify: the exported nebula restarted under the path's policy, then given the time a
 * relay or a hole punch takes to show in its view (the check judges what it shows). */
static bool verify_settle(struct ml_lab *lab, const struct ml_path_ops *ops, GError **err)
{
    if (!ml_nebula_verify_settle(lab, err))
        return false;
    bool relayed = ops->hub == ML_HUB_CARRIES;
    for (int i = 0; i < 30; i++) {
        g_autoptr(GString) said = g_string_new(NULL);
        if (on_path(lab, relayed, said)) {
            ml_progress("nebula", "the exported nebula's tunnel is %s (%s)",
                        relayed ? "relayed by the hub" : "direct", said->str);
            return true;
        }
        if (ml_check_interrupted(err))
            return false;
        g_usleep(2 * G_USEC_PER_SEC);
    }
    return true;
}

static bool settle_relay(struct ml_lab *lab, GError **err)
{
    return settle_forced(lab, true, err);
}

static bool settle_direct(struct ml_lab *lab, GError **err)
{
    return settle_forced(lab, false, err);
}

static char *describe_auto(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("nebula, %s to %s by whatever way nebula finds (nothing forced: a hole "
                           "punched through the NATs, or the relay on %s)",
                           t->nodes[t->measure.client].name,
                           ml_ip_str(ml_nebula_address(t, t->measure.server), addr),
                           t->nodes[t->hub].name);
}

static bool view_parse(const struct ml_topology *t, const char *text, struct ml_found_view *ret)
{
    (void)t;
    memset(ret, 0, sizeof(*ret));
    struct ml_nebula_tunnel v = {0};
    g_autoptr(GError) e = NULL;
    if (!ml_nebula_tunnel_parse(text, &v, &e))
        return false;
    if (v.found && v.relayed) {
        ret->found = ML_FOUND_RELAY;
        g_strlcpy(ret->relay, v.relay, sizeof(ret->relay));
    } else if (v.found && v.remote[0]) {
        ret->found = ML_FOUND_DIRECT;
        g_strlcpy(ret->remote, v.remote, sizeof(ret->remote));
    }
    return true;
}

/* Found its own way: direct to an address on the lab bridge (the server's own, or its NAT's
 * mapping: anything else is not this lab), or relayed by the hub. */
static bool verify_auto(const struct ml_topology *t, const struct ml_evidence *ev,
                        GString *sentence)
{
    struct ml_nebula_tunnel v = {0};
    bool seen = view(ev, &v, sentence);
    if (!seen || !v.found)
        return false;
    char hub[16];
    ml_ip_str(ml_nebula_address(t, t->hub), hub);
    if (v.relayed)
        return !strcmp(v.relay, hub);
    return ml_peer_on_underlay(t, v.remote, sentence);
}

static bool auto_stop(struct ml_lab *lab, GError **err)
{
    bool clients[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        clients[i] = i != lab->topo->hub;
    return ml_nebula_stop(lab, clients, err);
}

static bool auto_start(struct ml_lab *lab, GError **err)
{
    return ml_nebula_restart(lab, true, NULL, err);
}

static bool auto_wait(struct ml_lab *lab, GError **err)
{
    return ml_lab_wait_ping(lab, ml_nebula_address(lab->topo, lab->topo->measure.server), 90,
                            "nebula", err);
}

/* nebula 1.6.1 print-tunnel JSON: currentRemote is "IP:PORT" (or an object) when direct. */
static struct in_addr auto_address(const struct ml_lab *lab, size_t node)
{
    return ml_nebula_address(lab->topo, node);
}

static const struct ml_auto_ops nebula_auto = {
    .address = auto_address,
    .view_cmd = ml_nebula_view_cmd,
    .view_parse = view_parse,
    .direct_re = "\"currentRemote\":\\s*(\"[0-9]|\\{)",
    .peer_port = ML_NEBULA_PORT,
    .stop = auto_stop,
    .start = auto_start,
    .wait = auto_wait,
};

static size_t ports(const struct ml_topology *t, struct ml_port *ret, size_t max)
{
    (void)t;
    if (max < 1)
        return 0;
    ret[0] = (struct ml_port){.what = "nebula",
                              .proto = ML_PROTO_UDP,
                              .port = ML_NEBULA_PORT,
                              .open = true,
                              .dataplane = "nebula"};
    return 1;
}

static char *conflict(const struct ml_topology *t, int *ret_line, int *ret_column)
{
    return ml_subnet_conflict(t, "the nebula paths use", "10.42.0.0", 24, ret_line, ret_column);
}

extern const struct ml_path_ops ml_path_nebula_direct, ml_path_nebula_relay, ml_path_nebula_auto;

/* The guest firewall opens 4242, so with no NAT the other side's first packet gets in; nebula
 * 1.6.1 races its hole punch against its relay set-up. */
static const struct ml_nat_traits nat = {
    .none_open = true,
    .races = true,
    .relay_word = "relay",
    .capture_filter = "udp.port == 4242",
};

const struct ml_dataplane ml_dataplane_nebula = {
    .nat = &nat,
    .name = "nebula",
    .daemons = {{"nebula", "nebula -version"}},
    .paths = {&ml_path_nebula_direct, &ml_path_nebula_relay, &ml_path_nebula_auto},
    .ports = ports,
    .conflict = conflict,
    .setup = ml_nebula_setup,
    .observe = observe,
    .autop = &nebula_auto,
    .export = ml_nebula_export,
    .verify_settle = verify_settle,
};

/* nebula.c's tun mtu 1300; nebula 1.6.1's 16-byte header (header.Len) and its
 * default cipher, AES-GCM with a 16-byte tag (main.go: cipher "aes"). A relayed packet is
 * the end-to-end one (header, ciphertext, tag) carried whole in the relay
 * tunnel: another header and a tag that authenticates without encrypting
 * (nebula 1.6.1 inside.go SendVia, outside.go MessageRelay), on both legs. */
static const struct ml_encap encap_relay = {
    .name = "nebula relay",
    .inner_mtu = 1300,
    .overhead = 20 + 8 + 16 + 16 + 16 + 16,
    .how = "nebula relayed: 20 IP + 8 UDP + 16 relay header + 16 header + 16 AES-GCM tag + "
           "16 relay tag = 92 bytes, no padding",
};

const struct ml_path_ops ml_path_nebula_direct = {
    .name = "nebula-direct",
    .dataplane = &ml_dataplane_nebula,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_QUIET,
    .describe = describe_direct,
    .target = target,
    .settle = settle_direct,
    .settle_changes_state = true,
    .verify = verify_direct,
};

const struct ml_path_ops ml_path_nebula_relay = {
    .name = "nebula-relay",
    .dataplane = &ml_dataplane_nebula,
    .policy = ML_POLICY_RELAY,
    .hub = ML_HUB_CARRIES,
    .encap = &encap_relay,
    .describe = describe_relay,
    .target = target,
    .settle = settle_relay,
    .settle_changes_state = true,
    .verify = verify_relay,
};

const struct ml_path_ops ml_path_nebula_auto = {
    .name = "nebula-auto",
    .dataplane = &ml_dataplane_nebula,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_FOUND,
    .encap = &encap_relay,
    .describe = describe_auto,
    .target = target,
    .settle = settle,
    .settle_changes_state = true,
    .verify = verify_auto,
};
