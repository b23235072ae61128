/* plain: client to server straight across the bridge, unencrypted — the ceiling. */
#include <stdio.h>
#include <string.h>

#include "dataplanes/path.h"

static char *describe(const struct ml_topology *t)
{
    return g_strdup_printf("%s to %s over the bridge, unencrypted",
                           t->nodes[t->measure.client].name, t->nodes[t->measure.server].name);
}

static struct in_addr target(const struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    return t->nodes[t->measure.server].address;
}

/* The hub is a bystander: its NIC may see a stray ARP broadcast, never the burst. */
static bool verify(struct ml_lab *lab, const struct ml_probe *p, GString *ev)
{
    bool direct = p->route && strstr(p->route, "dev eth0") && !strstr(p->route, " via ");
    bool answered = p->received > 0;
    bool hub_quiet = p->hub_bytes * 20 < p->probe_bytes;
    g_string_append_printf(ev,
                           "route: %s; %u/%u probe pings answered; hub NIC moved %lld bytes "
                           "for %lld probe bytes (must be under 5%%)",
                           p->route ? p->route : "?", p->received, p->transmitted, p->hub_bytes,
                           p->probe_bytes);
    return direct && answered && hub_quiet;
}

const struct ml_path_ops ml_path_plain = {
    .kind = ML_PATH_PLAIN,
    .describe = describe,
    .target = target,
    .setup = NULL,
    .verify = verify,
};
