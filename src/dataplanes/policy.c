#include "dataplanes/policy.h"

#include "core/util.h"
#include "guestnet/nft.h"
#include "virt/agent.h"

bool ml_policy_firewall(struct ml_lab *lab, const char *fw, const char *summary, GError **err)
{
    size_t n = lab->plan->n_guests;
    const char *cmds[ML_MAX_NODES], *inputs[ML_MAX_NODES];
    for (size_t i = 0; i < n; i++) {
        cmds[i] = "nft -f -";
        inputs[i] = fw;
    }
    if (!ml_lab_run_parallel(lab, NULL, cmds, inputs, 60, NULL, "loading the firewall", err))
        return false;
    ml_progress("firewall", "guest firewall loaded on %zu guests: %s", n, summary);
    return true;
}

void ml_policy_rulesets_clear(char **in_force)
{
    for (size_t i = 0; in_force && i < ML_MAX_NODES; i++)
        g_clear_pointer(&in_force[i], g_free);
}

bool ml_policy_enter(struct ml_lab *lab, const struct ml_path_ops *ops, char **in_force,
                     GError **err)
{
    size_t n = lab->plan->n_guests;
    const char *cmds[ML_MAX_NODES] = {0};
    char *inputs[ML_MAX_NODES] = {0}, *out[ML_MAX_NODES] = {0};
    bool loaded = in_force && in_force[0];
    bool ok = true;
    if (!loaded) {
        struct ml_port ports[ML_PORTS_MAX];
        size_t n_ports = ml_dataplane_ports(lab->topo, ports);
        for (size_t i = 0; i < n; i++) {
            cmds[i] = "nft -f - && nft list ruleset";
            inputs[i] = ml_nft_policy(lab->topo, i, ops->policy, ports, n_ports);
        }
        ok = ml_lab_run_parallel(lab, NULL, cmds, (const char *const *)inputs, 60, out,
                                 "the path policy", err);
    }
    const char *path = ops->name;
    for (size_t i = 0; ok && i < n; i++) {
        const char *text = loaded ? in_force[i] : out[i];
        g_autofree char *rel =
            g_strdup_printf("rulesets/%s/%s.nft", path, lab->topo->nodes[i].name);
        ml_lab_write(lab, rel, text ? text : "", -1, NULL);
        if (!loaded && in_force)
            in_force[i] = g_strdup(out[i] ? out[i] : "");
    }
    for (size_t i = 0; i < n; i++) {
        g_free(inputs[i]);
        g_free(out[i]);
    }
    if (!ok)
        return false;
    ml_progress("policy", "%s: policy '%s' in force; rulesets saved in %s/%srulesets/%s", path,
                ml_policy_name(ops->policy), lab->run_dir,
                lab->write_prefix ? lab->write_prefix : "", path);
    if (ops->settle && !ops->settle(lab, err)) {
        if (err && *err && (*err)->code != ML_ERR_INTERRUPTED)
            g_prefix_error(err, "the dataplane did not settle after the policy change: ");
        return false;
    }
    return true;
}
