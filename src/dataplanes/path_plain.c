/* plain: client to server straight across the bridge, unencrypted — the ceiling. */
#include <stdio.h>
#include <string.h>

#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "topology/plan.h"

static char *describe(const struct ml_topology *t)
{
    return g_strdup_printf("%s to %s over the bridge, unencrypted",
                           t->nodes[t->measure.client].name, t->nodes[t->measure.server].name);
}

static struct in_addr target_of(const struct ml_lab *lab, size_t node)
{
    return lab->topo->nodes[node].address;
}

static struct in_addr target(const struct ml_lab *lab)
{
    return target_of(lab, lab->topo->measure.server);
}

/* Straight across the bridge: the route leaves by the lab NIC to the server
 * itself, no gateway. The hub is a bystander: its NIC may see a stray ARP
 * broadcast, never the burst. */
static bool verify(const struct ml_topology *t, const struct ml_evidence *ev, GString *sentence)
{
    (void)t;
    return ml_route_enters(&ev->rt, ML_LAB_NIC, sentence);
}

extern const struct ml_path_ops ml_path_plain;

/* No dataplane: the bridge itself, every hook its default. */
/* The bare network needs nothing deployed: exported, with no file of its own. */
static bool export_nothing(struct ml_bundle *b, GError **err)
{
    (void)b;
    (void)err;
    return true;
}

const struct ml_dataplane ml_dataplane_plain = {
    .name = "plain",
    .paths = {&ml_path_plain},
    .export = export_nothing,
};

const struct ml_path_ops ml_path_plain = {
    .name = "plain",
    .dataplane = &ml_dataplane_plain,
    .hub = ML_HUB_QUIET,
    .describe = describe,
    .target = target,
    .target_of = target_of,
    .verify = verify,
};
