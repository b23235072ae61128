#include "virt/underlay.h"

#include "core/controller.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "core/spawn.h"
#include "core/util.h"
#include "virt/hostshell.h"

/* The lab's MTU where nothing is lost to VXLAN: the guests' default. */
#define LAB_MTU_MAX 1500
#define LAB_MTU_MIN 576

char *ml_underlay_route_script(struct in_addr self, struct in_addr peer)
{
    char s[16], p[16];
    ml_ip_str(self, s);
    ml_ip_str(peer, p);
    /* An address of the host's own is one its routes call local (ip route get prints "local A
     * dev lo ..."): 127.0.0.2 is, on any Linux, without being listed on lo. */
    return g_strdup_printf("for t in ip bridge; do command -v $t >/dev/null || "
                           "{ echo \"$t (iproute2) is not installed\" >&2; exit 3; }; done; "
                           "ip -o route get %s | grep -q '^local ' || "
                           "{ echo 'underlay %s is no address of this host' >&2; exit 3; }; "
                           "r=$(ip -o route get %s from %s 2>&1) || "
                           "{ echo \"no route from %s to %s: $r\" >&2; exit 4; }; "
                           "d=$(printf '%%s\\n' \"$r\" | sed -n 's/.* dev \\([^ ]*\\).*/\\1/p'); "
                           "[ -n \"$d\" ] || { echo \"no route from %s to %s: $r\" >&2; exit 4; }; "
                           "echo \"dev $d mtu $(cat /sys/class/net/$d/mtu)\"",
                           s, s, p, s, s, p, s, p);
}

bool ml_underlay_route_parse(const char *out, const char *host, struct ml_underlay_route *ret,
                             GError **err)
{
    char dev[32];
    unsigned mtu = 0;
    if (!out || sscanf(out, "dev %31s mtu %u", dev, &mtu) != 2 || mtu < 68) {
        g_autofree char *shown = g_strescape(out ? out : "", NULL);
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "host %s: cannot read its route to the other hosts from '%s'", host, shown);
        return false;
    }
    g_strlcpy(ret->dev, dev, sizeof(ret->dev));
    ret->mtu = mtu;
    return true;
}

unsigned ml_underlay_lab_mtu(unsigned underlay_mtu)
{
    if (underlay_mtu < LAB_MTU_MIN + ML_VXLAN_OVERHEAD)
        return 0;
    return MIN(LAB_MTU_MAX, underlay_mtu - ML_VXLAN_OVERHEAD);
}

char *ml_underlay_stitch_script(const struct ml_plan *plan, size_t k, unsigned mtu)
{
    const struct ml_plan_host *h = &plan->hosts[k];
    char self[16];
    ml_ip_str(h->host->underlay, self);
    GString *s = g_string_new("set -e; ");
    g_string_append_printf(s, "ip link del %s 2>/dev/null || true; ", h->vxlan);
    g_string_append_printf(s, "ip link add %s type vxlan id %u local %s dstport %u nolearning; ",
                           h->vxlan, plan->vni, self, h->vxlan_port);
    for (size_t j = 0; j < plan->n_hosts; j++) {
        if (j == k)
            continue;
        char peer[16];
        ml_ip_str(plan->hosts[j].host->underlay, peer);
        g_string_append_printf(s, "bridge fdb append 00:00:00:00:00:00 dev %s dst %s port %u; ",
                               h->vxlan, peer, plan->hosts[j].vxlan_port);
    }
    /* The device carries the controller that made it (core/controller.h), as libvirt's objects
     * carry it in their UUIDs: unstitching leaves another controller's. */
    g_string_append_printf(s, "ip link set %s alias 'meshlab controller %s'; ", h->vxlan,
                           ml_controller_id());
    g_string_append_printf(s, "ip link set %s mtu %u master %s; ip link set %s up; ", h->vxlan, mtu,
                           h->bridge, h->vxlan);
    g_string_append_printf(s, "echo stitched %s", h->vxlan);
    return g_string_free(s, FALSE);
}

char *ml_underlay_unstitch_script(const char *lab, bool foreign)
{
    char prefix[12];
    ml_plan_vxlan_prefix(lab, prefix);
    return g_strdup_printf(
        "for d in $(ls /sys/class/net); do case $d in %s*) "
        "if %s[ \"$(cat /sys/class/net/$d/ifalias 2>/dev/null)\" = 'meshlab controller %s' ]; "
        "then ip link del \"$d\" && echo \"removed $d\" || exit 1; else echo \"foreign $d\"; fi;; "
        "esac; done; true",
        prefix, foreign ? "true || " : "", ml_controller_id());
}

bool ml_underlay_run(const char *uri, const char *shown, const char *script, double timeout_s,
                     char **ret_out, GError **err)
{
    g_auto(GStrv) argv = ml_hostshell_argv(uri, script, err);
    if (!argv) {
        g_prefix_error(err, "host %s: ", shown);
        return false;
    }
    struct ml_proc p = {0};
    if (!ml_proc_run((const char *const *)argv, timeout_s, &p, err)) {
        g_prefix_error(err, "host %s: ", shown);
        return false;
    }
    bool ok = !p.timed_out && !p.interrupted && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0;
    if (!ok) {
        g_autofree char *why = g_strstrip(g_strdup(p.err && *p.err ? p.err : p.out));
        g_autofree char *last = ml_last_lines(why, 3);
        int code = p.interrupted ? ML_ERR_INTERRUPTED : ML_ERR_HOST;
        if (p.timed_out)
            g_set_error(err, ML_ERROR, code, "host %s did not answer within %.0f s", shown,
                        timeout_s);
        else if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == 255 && argv[0] &&
                 strcmp(argv[0], "sh") != 0)
            g_set_error(err, ML_ERROR, code, "host %s is unreachable over SSH: %s", shown, last);
        else
            g_set_error(err, ML_ERROR, code, "host %s: %s", shown,
                        *last ? last : "the command failed");
    } else if (ret_out) {
        *ret_out = g_steal_pointer(&p.out);
    }
    ml_proc_clear(&p);
    return ok;
}
