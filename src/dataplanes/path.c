#include "dataplanes/path.h"

#include <stdio.h>
#include <string.h>

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

bool ml_path_verdict(const struct ml_path_ops *ops, const struct ml_topology *topo,
                     const struct ml_evidence *ev, GString *sentence)
{
    bool own = ops->verify(topo, ev, sentence);
    bool answered = ev->received > 0;
    bool quiet = ops->hub == ML_HUB_QUIET;
    bool hub_ok = quiet ? ev->hub_bytes * 20 < ev->probe_bytes
                        : ev->hub_bytes * 2 >= ev->probe_bytes * 3;
    g_string_append_printf(sentence,
                           "route: %s; %u/%u probe pings answered; hub NIC moved %lld bytes "
                           "for %lld probe bytes (must be %s)",
                           ev->route ? ev->route : "?", ev->received, ev->transmitted,
                           ev->hub_bytes, ev->probe_bytes,
                           quiet ? "under 5%" : "at least 1.5 times");
    return own && answered && hub_ok;
}

const struct ml_path_ops *ml_path_ops(enum ml_path_kind kind)
{
    static const struct ml_path_ops *const all[ML_PATH_COUNT] = {
        [ML_PATH_PLAIN] = &ml_path_plain,
        [ML_PATH_WIREGUARD_HUB] = &ml_path_wireguard_hub,
        [ML_PATH_TAILSCALE_DIRECT] = &ml_path_tailscale_direct,
        [ML_PATH_TAILSCALE_RELAY] = &ml_path_tailscale_relay,
        [ML_PATH_NEBULA_DIRECT] = &ml_path_nebula_direct,
        [ML_PATH_NEBULA_RELAY] = &ml_path_nebula_relay,
    };
    return (unsigned)kind < ML_PATH_COUNT ? all[kind] : NULL;
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
    const char *path = ml_path_name(ops->kind);
    for (size_t i = 0; ok && i < n; i++) {
        g_autofree char *rel = g_strdup_printf("rulesets/%s/%s.nft", path,
                                               lab->topo->nodes[i].name);
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
    for (int k = 0; k < ML_PATH_COUNT; k++) {
        const struct ml_path_ops *ops = ml_path_ops((enum ml_path_kind)k);
        g_autofree char *why = NULL;
        if (!lab->topo->measure.paths[k] || !ops->artifacts ||
            (ops->available && !ops->available(lab, &why)))
            continue;
        GPtrArray *mine = g_ptr_array_new_with_free_func(g_free);
        ops->artifacts(lab, node, mine);
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
