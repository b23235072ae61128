#include "topology/plan.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

const char *ml_ip_str(struct in_addr addr, char buf[16])
{
    inet_ntop(AF_INET, &addr, buf, 16);
    return buf;
}

void ml_plan_lab_hash(const char *lab, char ret_hash[9])
{
    g_autofree char *hex = ml_sha256_hex(lab, strlen(lab));
    memcpy(ret_hash, hex, 8);
    ret_hash[8] = '\0';
}

char *ml_plan_network_name(const char *lab)
{
    return g_strdup_printf(ML_OBJ_PREFIX "%s", lab);
}

char *ml_plan_pool_name(const char *lab)
{
    return g_strdup_printf(ML_OBJ_PREFIX "%s", lab);
}

char *ml_plan_host_object(const char *lab, const char *host)
{
    return host ? g_strdup_printf(ML_OBJ_PREFIX "%s.%s", lab, host)
                : g_strdup_printf(ML_OBJ_PREFIX "%s", lab);
}

char *ml_plan_host_key(const char *lab, const char *host)
{
    return host ? g_strdup_printf("%s.%s", lab, host) : g_strdup(lab);
}

void ml_plan_vxlan_prefix(const char *lab, char ret[12])
{
    char hash[9];
    ml_plan_lab_hash(lab, hash);
    snprintf(ret, 12, "mlx%s", hash);
}

const struct ml_plan_host *ml_plan_guest_host(const struct ml_plan *plan, size_t i)
{
    return &plan->hosts[plan->guests[i].host];
}

char *ml_plan_domain_prefix(const char *lab)
{
    return g_strdup_printf(ML_OBJ_PREFIX "%s.", lab);
}

static void make_run_id(char ret[40])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char stamp[20];
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    snprintf(ret, 40, "%s-%06x", stamp, g_random_int() & 0xffffff);
}

struct ml_plan *ml_plan_new(const struct ml_topology *topo, const char *run_id)
{
    struct ml_plan *plan = g_new0(struct ml_plan, 1);
    plan->topo = topo;
    if (run_id)
        g_strlcpy(plan->run_id, run_id, sizeof(plan->run_id));
    else
        make_run_id(plan->run_id);
    ml_plan_lab_hash(topo->name, plan->hash);
    plan->n_hosts = MAX(topo->n_hosts, 1);
    char vni[7];
    g_strlcpy(vni, plan->hash, sizeof(vni));
    plan->vni = (unsigned)strtoul(vni, NULL, 16) | 1; /* 24 bits, never 0 */
    for (size_t k = 0; k < plan->n_hosts; k++) {
        struct ml_plan_host *h = &plan->hosts[k];
        /* A lone host of hosts: is a one-host lab's, by the one-host names. */
        h->host = topo->n_hosts > 1 ? &topo->hosts[k] : NULL;
        const char *hname = h->host ? h->host->name : NULL;
        h->network = ml_plan_host_object(topo->name, hname);
        h->pool = ml_plan_host_object(topo->name, hname);
        g_autofree char *key = ml_plan_host_key(topo->name, hname);
        h->pool_dir = ml_lab_pool_dir(key);
        if (h->host) {
            snprintf(h->bridge, sizeof(h->bridge), "mlb%s%x", plan->hash, (unsigned)k & 0xf);
            snprintf(h->vxlan, sizeof(h->vxlan), "mlx%s%x", plan->hash, (unsigned)k & 0xf);
        } else {
            snprintf(h->bridge, sizeof(h->bridge), "mlb%s", plan->hash);
        }
        h->vxlan_port = ML_VXLAN_PORT_BASE + (unsigned)k;
    }
    plan->state_file = ml_lab_state_path(topo->name, ".json");
    plan->n_guests = topo->n_nodes;
    for (size_t i = 0; i < topo->n_nodes; i++) {
        struct ml_plan_guest *g = &plan->guests[i];
        g->node = &topo->nodes[i];
        g->host = topo->n_hosts > 1 ? topo->nodes[i].host : 0;
        /* '.' is in no lab or node name, so no two labs' guests share a name
         * (lab a + node b-c against lab a-b + node c). */
        g->domain = g_strdup_printf(ML_OBJ_PREFIX "%s.%s", topo->name, g->node->name);
        /* The lab hash in the MAC keeps two labs' guests apart in any ARP cache. */
        snprintf(g->mac, sizeof(g->mac), "52:54:00:%.2s:%.2s:%02x", plan->hash, plan->hash + 2,
                 (unsigned)i);
        snprintf(g->tap, sizeof(g->tap), "mlt%s%x", plan->hash, (unsigned)i);
        g->overlay_vol = g_strdup_printf("%s.qcow2", g->node->name);
        g->seed_vol = g_strdup_printf("%s-seed.iso", g->node->name);
    }
    return plan;
}

void ml_plan_free(struct ml_plan *plan)
{
    if (!plan)
        return;
    for (size_t i = 0; i < plan->n_guests; i++) {
        g_free(plan->guests[i].domain);
        g_free(plan->guests[i].overlay_vol);
        g_free(plan->guests[i].seed_vol);
    }
    for (size_t k = 0; k < plan->n_hosts; k++) {
        g_free(plan->hosts[k].network);
        g_free(plan->hosts[k].pool);
        g_free(plan->hosts[k].pool_dir);
    }
    g_free(plan->state_file);
    g_free(plan);
}
