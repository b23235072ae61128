#include "guestnet/nat.h"

#include <arpa/inet.h>
#include <string.h>

#include "core/util.h"
#include "topology/plan.h"
#include "topology/ports.h"
#include "virt/agent.h"

#define PROBE_TIMEOUT_S 40.0
#define APPLY_TIMEOUT_S 30.0

const char *ml_nat_dependence_name(enum ml_nat_dependence d)
{
    switch (d) {
    case ML_NAT_ENDPOINT_INDEPENDENT:
        return "endpoint-independent";
    case ML_NAT_ADDRESS_DEPENDENT:
        return "address-dependent";
    case ML_NAT_ADDRESS_AND_PORT_DEPENDENT:
        return "address-and-port-dependent";
    default:
        return "unknown";
    }
}

struct ml_nat_behaviour ml_nat_expected(enum ml_nat_type type)
{
    const enum ml_nat_dependence ei = ML_NAT_ENDPOINT_INDEPENDENT, ad = ML_NAT_ADDRESS_DEPENDENT,
                                 apd = ML_NAT_ADDRESS_AND_PORT_DEPENDENT;
    switch (type) {
    case ML_NAT_NONE:
        /* No NAT, but the guest firewall is stateful: UDP to a port it does not open (the
         * probe's, tailscaled's) gets in only as a reply. Its open ports (nebula's) filter
         * endpoint-independently. */
        return (struct ml_nat_behaviour){ei, apd, true};
    case ML_NAT_RESTRICTED_CONE:
        return (struct ml_nat_behaviour){ei, ad, true};
    case ML_NAT_PORT_RESTRICTED_CONE:
        return (struct ml_nat_behaviour){ei, apd, true};
    case ML_NAT_SYMMETRIC:
        return (struct ml_nat_behaviour){apd, apd, false};
    default: /* one-to-one, full-cone */
        return (struct ml_nat_behaviour){ei, ei, true};
    }
}

/* node's inside addresses: .1 (the root namespace's end of the veth), .2 (the namespace's). */
static void inside(const struct ml_topology *topo, size_t node, char net[16], char root_end[16],
                   char ns_end[16])
{
    struct in_addr a = ml_nat_inside_net(topo, node);
    ml_ip_str(a, net);
    a.s_addr = htonl(ntohl(a.s_addr) + 1);
    ml_ip_str(a, root_end);
    a.s_addr = htonl(ntohl(a.s_addr) + 1);
    ml_ip_str(a, ns_end);
}

char *ml_nat_ruleset(const struct ml_topology *topo, size_t node, enum ml_nat_type type)
{
    char net[16], root_end[16], ns_end[16], lab[16];
    inside(topo, node, net, root_end, ns_end);
    ml_ip_str(topo->nodes[node].address, lab);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "# meshlab NAT '%s' on %s\n"
                           "table ip meshlab_nat\n"
                           "delete table ip meshlab_nat\n",
                           ml_nat_type_name(type), topo->nodes[node].name);
    if (type == ML_NAT_NONE)
        return g_string_free(s, FALSE);

    g_string_append(s, "table ip meshlab_nat {\n");
    /* Stock kernels have no full-cone target: the ports (full cone) or destination address and
     * port (restricted cone) the inside sent to are learnt after translation, and inbound UDP
     * that matches is sent in. Right only with one host behind the NAT, as here. */
    if (type == ML_NAT_FULL_CONE)
        g_string_append(s, "    set fc {\n"
                           "        type inet_service; flags dynamic,timeout; timeout 120s;\n"
                           "    }\n");
    if (type == ML_NAT_RESTRICTED_CONE)
        g_string_append(s, "    set adf {\n"
                           "        type ipv4_addr . inet_service; flags dynamic,timeout; "
                           "timeout 120s;\n"
                           "    }\n");
    g_string_append(s, "    chain prerouting {\n"
                       "        type nat hook prerouting priority dstnat; policy accept;\n");
    if (type == ML_NAT_ONE_TO_ONE)
        g_string_append_printf(
            s, "        iifname \"" ML_LAB_NIC "\" meta l4proto { tcp, udp } dnat to %s\n", ns_end);
    else if (type == ML_NAT_FULL_CONE)
        g_string_append_printf(s, "        iifname \"" ML_LAB_NIC "\" udp dport @fc dnat to %s\n",
                               ns_end);
    else if (type == ML_NAT_RESTRICTED_CONE)
        g_string_append_printf(
            s, "        iifname \"" ML_LAB_NIC "\" ip saddr . udp dport @adf dnat to %s\n", ns_end);
    g_string_append(s, "    }\n"
                       "    chain postrouting {\n"
                       "        type nat hook postrouting priority srcnat; policy accept;\n");
    /* Plain masquerade keeps the port while the tuple is unique (always, with one host behind):
     * endpoint-independent mapping. fully-random takes a new port for every destination. */
    if (type == ML_NAT_ONE_TO_ONE)
        g_string_append_printf(s, "        oifname \"" ML_LAB_NIC "\" ip saddr %s/24 snat to %s\n",
                               net, lab);
    else
        g_string_append_printf(s,
                               "        oifname \"" ML_LAB_NIC "\" ip saddr %s/24 masquerade%s\n",
                               net, type == ML_NAT_SYMMETRIC ? " fully-random" : "");
    g_string_append(s, "    }\n");
    if (type == ML_NAT_FULL_CONE || type == ML_NAT_RESTRICTED_CONE)
        g_string_append_printf(
            s,
            "    chain learn {\n"
            "        type filter hook postrouting priority srcnat + 10; policy accept;\n"
            "        oifname \"" ML_LAB_NIC "\" ct original ip saddr %s/24 update %s\n"
            "    }\n",
            net, type == ML_NAT_FULL_CONE ? "@fc { udp sport }" : "@adf { ip daddr . udp sport }");
    g_string_append(s,
                    "    chain forward {\n"
                    "        type filter hook forward priority 0; policy drop;\n"
                    "        iifname \"" ML_NAT_VETH_OUT "\" oifname \"" ML_LAB_NIC "\" accept\n"
                    "        ct state established,related accept\n"
                    "        ct status dnat accept\n"
                    "    }\n"
                    "    # Unsolicited UDP for the NAT itself: dropped silently, no ICMP to tell.\n"
                    "    chain input {\n"
                    "        type filter hook input priority 0; policy accept;\n"
                    "        iifname \"" ML_LAB_NIC "\" meta l4proto udp ct state new drop\n"
                    "    }\n"
                    "}\n");
    return g_string_free(s, FALSE);
}

char *ml_nat_setup_script_in(const struct ml_topology *topo, size_t node, const char *netns)
{
    char net[16], root_end[16], ns_end[16];
    inside(topo, node, net, root_end, ns_end);
    return g_strdup_printf("set -e\n"
                           "[ -e /run/netns/%1$s ] || ip netns add %1$s\n"
                           "ip link show " ML_NAT_VETH_OUT " >/dev/null 2>&1 ||\n"
                           "    ip link add " ML_NAT_VETH_OUT " type veth peer name " ML_NAT_VETH_IN
                           " netns %1$s\n"
                           "ip addr replace %2$s/24 dev " ML_NAT_VETH_OUT "\n"
                           "ip link set " ML_NAT_VETH_OUT " up\n"
                           "ip -n %1$s link set lo up\n"
                           "ip -n %1$s addr replace %3$s/24 dev " ML_NAT_VETH_IN "\n"
                           "ip -n %1$s link set " ML_NAT_VETH_IN " up\n"
                           "ip -n %1$s route replace default via %2$s\n"
                           "sysctl -qw net.ipv4.ip_forward=1\n",
                           netns, root_end, ns_end);
}

char *ml_nat_setup_script(const struct ml_topology *topo, size_t node)
{
    return ml_nat_setup_script_in(topo, node, ML_NAT_NETNS);
}

const char *ml_nat_exec_prefix(enum ml_nat_type type)
{
    return type == ML_NAT_NONE ? "" : "ip netns exec " ML_NAT_NETNS " ";
}

/* The probe's two halves, run with python3 (every Debian 12 guest has it) as
 * `python3 - A1 A2 P1 P2` with the script on stdin. */
static const char hub_script[] =
    "# meshlab NAT probe, hub side: A1 A2 P1 P2 [LIMIT_S]. Reflects each \"map\" with the\n"
    "# source it saw; answers \"filt\" on A1:P1 from A2:P1, then A1:P2, then (0.2 s later)\n"
    "# A1:P1 itself. Ends after LIMIT_S (20) or 3 s without a datagram.\n"
    "import json, select, socket, sys, time\n"
    "a1, a2, p1, p2 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])\n"
    "limit = float(sys.argv[5]) if len(sys.argv) > 5 else 20.0\n"
    "socks = {}\n"
    "for addr in ((a1, p1), (a1, p2), (a2, p1)):\n"
    "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "    s.bind(addr)\n"
    "    socks[addr] = s\n"
    "start = time.monotonic()\n"
    "last = None\n"
    "pending = []\n"
    "served = 0\n"
    "while True:\n"
    "    now = time.monotonic()\n"
    "    if now - start > limit or (last is not None and not pending and now - last > 3.0):\n"
    "        break\n"
    "    r, _, _ = select.select(list(socks.values()), [], [], 0.05)\n"
    "    for s in r:\n"
    "        data, src = s.recvfrom(2048)\n"
    "        last = time.monotonic()\n"
    "        seen = \"%s:%d\" % src\n"
    "        if data == b\"map\":\n"
    "            s.sendto(seen.encode(), src)\n"
    "            served += 1\n"
    "        elif data == b\"filt\" and s.getsockname() == (a1, p1):\n"
    "            socks[(a2, p1)].sendto(b\"new-address\", src)\n"
    "            socks[(a1, p2)].sendto(b\"new-port\", src)\n"
    "            pending.append((last + 0.2, src, seen))\n"
    "    now = time.monotonic()\n"
    "    for item in [x for x in pending if x[0] <= now]:\n"
    "        pending.remove(item)\n"
    "        socks[(a1, p1)].sendto((\"same \" + item[2]).encode(), item[1])\n"
    "        served += 1\n"
    "print(json.dumps({\"served\": served}))\n";

static const char client_script[] =
    "# meshlab NAT probe, inside side: A1 A2 P1 P2 [MAP_PORT FILT_PORT]. Prints one JSON object:\n"
    "# the source each hub socket saw for \"map\" from MAP_PORT, and which of the hub's answers "
    "to\n"
    "# \"filt\" from FILT_PORT came through the NAT.\n"
    "import json, select, socket, sys, time\n"
    "a1, a2, p1, p2 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])\n"
    "map_port = int(sys.argv[5]) if len(sys.argv) > 5 else 40001\n"
    "filt_port = int(sys.argv[6]) if len(sys.argv) > 6 else 40002\n"
    "def bound(port):\n"
    "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "    s.bind((\"0.0.0.0\", port))\n"
    "    return s\n"
    "route = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "route.connect((a1, p1))\n"
    "inside = route.getsockname()[0]\n"
    "route.close()\n"
    "s1 = bound(map_port)\n"
    "mapped = []\n"
    "for dest in ((a1, p1), (a1, p2), (a2, p1)):\n"
    "    seen = None\n"
    "    for _ in range(10):\n"
    "        s1.sendto(b\"map\", dest)\n"
    "        end = time.monotonic() + 0.3\n"
    "        while seen is None and time.monotonic() < end:\n"
    "            r, _, _ = select.select([s1], [], [], max(0.0, end - time.monotonic()))\n"
    "            if r:\n"
    "                data, src = s1.recvfrom(2048)\n"
    "                if src == dest:\n"
    "                    seen = data.decode()\n"
    "        if seen is not None:\n"
    "            break\n"
    "    mapped.append({\"to\": \"%s:%d\" % dest, \"seen\": seen})\n"
    "s2 = bound(filt_port)\n"
    "senders = {\"same\": (a1, p1), \"new-port\": (a1, p2), \"new-address\": (a2, p1)}\n"
    "got = set()\n"
    "filt_seen = None\n"
    "tries, next_send, stop = 0, 0.0, None\n"
    "while True:\n"
    "    now = time.monotonic()\n"
    "    if stop is not None and now >= stop:\n"
    "        break\n"
    "    if stop is None and now >= next_send:\n"
    "        if tries == 10:\n"
    "            break\n"
    "        s2.sendto(b\"filt\", (a1, p1))\n"
    "        tries += 1\n"
    "        next_send = now + 0.3\n"
    "    end = stop if stop is not None else next_send\n"
    "    r, _, _ = select.select([s2], [], [], max(0.0, end - time.monotonic()))\n"
    "    if r:\n"
    "        data, src = s2.recvfrom(2048)\n"
    "        word, _, rest = data.decode().partition(\" \")\n"
    "        if senders.get(word) == src:\n"
    "            got.add(word)\n"
    "            if word == \"same\" and stop is None:\n"
    "                filt_seen = rest\n"
    "                stop = time.monotonic() + 1.0\n"
    "print(json.dumps({\"inside\": inside, \"map_port\": map_port, \"filt_port\": filt_port,\n"
    "                  \"mapped\": mapped, \"filt_seen\": filt_seen,\n"
    "                  \"received\": {w: w in got for w in (\"same\", \"new-port\", "
    "\"new-address\")}}))\n";

const char *ml_nat_probe_hub_script(void)
{
    return hub_script;
}

const char *ml_nat_probe_client_script(void)
{
    return client_script;
}

char *ml_nat_probe_args(const struct ml_topology *topo)
{
    const struct ml_node *hub = &topo->nodes[topo->hub];
    char a1[16], a2[16];
    return g_strdup_printf("%s %s %u %u", ml_ip_str(hub->address, a1),
                           ml_ip_str(hub->second_address, a2), ML_PORT_NAT_PROBE,
                           ML_PORT_NAT_PROBE_ALT);
}

/* "ADDR:PORT" into its parts; false when it is not one. */
static bool endpoint_parse(const char *text, char addr[16], unsigned *port)
{
    const char *colon = text ? strrchr(text, ':') : NULL;
    if (!colon || colon - text > 15 || colon == text)
        return false;
    memcpy(addr, text, (size_t)(colon - text));
    addr[colon - text] = '\0';
    struct in_addr a;
    char *end = NULL;
    unsigned long p = strtoul(colon + 1, &end, 10);
    if (inet_pton(AF_INET, addr, &a) != 1 || !end || *end || end == colon + 1 || p == 0 ||
        p > 65535)
        return false;
    *port = (unsigned)p;
    return true;
}

static bool probe_fail(GError **err, const char *what, const char *output)
{
    g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the NAT probe %s (its output: %.300s)", what,
                output ? output : "");
    return false;
}

static bool probe_read(struct json_object *o, const char *output, struct ml_nat_behaviour *ret,
                       GString *seen, GError **err)
{
    g_autoptr(GString) text = g_string_new(NULL);
    struct json_object *v, *mapped, *received;
    const char *in = NULL;
    int map_port = 0, filt_port = 0;
    if (json_object_object_get_ex(o, "inside", &v))
        in = json_object_get_string(v);
    if (json_object_object_get_ex(o, "map_port", &v))
        map_port = json_object_get_int(v);
    if (json_object_object_get_ex(o, "filt_port", &v))
        filt_port = json_object_get_int(v);
    if (!in || map_port <= 0 || filt_port <= 0 ||
        !json_object_object_get_ex(o, "mapped", &mapped) ||
        !json_object_is_type(mapped, json_type_array) || json_object_array_length(mapped) != 3 ||
        !json_object_object_get_ex(o, "received", &received) ||
        !json_object_is_type(received, json_type_object)) {
        return probe_fail(
            err, "printed JSON without inside, map_port, filt_port, mapped[3], received", output);
    }
    /* mapped: towards A1:P1, A1:P2, A2:P1, in that order. */
    char addr[3][16];
    unsigned port[3];
    for (size_t i = 0; i < 3; i++) {
        struct json_object *m = json_object_array_get_idx(mapped, i), *to, *sv;
        const char *dest =
            json_object_object_get_ex(m, "to", &to) ? json_object_get_string(to) : NULL;
        const char *s =
            json_object_object_get_ex(m, "seen", &sv) ? json_object_get_string(sv) : NULL;
        if (!dest || !s) {
            g_autofree char *what = g_strdup_printf(
                "got no answer from the hub's %s: the NAT or the hub's firewall drops it",
                dest ? dest : "probe port");
            return probe_fail(err, what, output);
        }
        if (!endpoint_parse(s, addr[i], &port[i])) {
            return probe_fail(err, "got an answer that is no ADDRESS:PORT", output);
        }
        g_string_append_printf(text, "%smapped %s:%d to %s towards %s", i ? ", " : "", in, map_port,
                               s, dest);
    }
    bool same[3];
    const char *const words[3] = {"same", "new-port", "new-address"};
    for (size_t i = 0; i < 3; i++)
        same[i] = json_object_object_get_ex(received, words[i], &v) && json_object_get_boolean(v);
    if (!same[0]) {
        return probe_fail(
            err,
            "got no answer to its filtering test from the address and port it sent to: "
            "the NAT does not let replies in",
            output);
    }
    const char *filt_seen =
        json_object_object_get_ex(o, "filt_seen", &v) ? json_object_get_string(v) : NULL;
    char faddr[16];
    unsigned fport = 0;
    if (!endpoint_parse(filt_seen, faddr, &fport)) {
        return probe_fail(err, "got a filtering answer without the mapping the hub saw", output);
    }
    static const char *const from[3] = {"from the same address and port", "from a new port",
                                        "from a new address"};
    g_string_append_printf(text, "; mapped %s:%d to %s:%u; the hub's answer", in, filt_port, faddr,
                           fport);
    for (size_t i = 0; i < 3; i++)
        g_string_append_printf(text, "%s %s %s", i ? "," : "", from[i],
                               same[i] ? "came in" : "was dropped");

    bool a1_same = !strcmp(addr[0], addr[1]) && port[0] == port[1];
    bool a2_same = !strcmp(addr[0], addr[2]) && port[0] == port[2];
    ret->mapping = !a1_same  ? ML_NAT_ADDRESS_AND_PORT_DEPENDENT
                   : a2_same ? ML_NAT_ENDPOINT_INDEPENDENT
                             : ML_NAT_ADDRESS_DEPENDENT;
    ret->filtering = same[2]   ? ML_NAT_ENDPOINT_INDEPENDENT
                     : same[1] ? ML_NAT_ADDRESS_DEPENDENT
                               : ML_NAT_ADDRESS_AND_PORT_DEPENDENT;
    ret->port_preserved = port[0] == (unsigned)map_port && port[1] == (unsigned)map_port &&
                          port[2] == (unsigned)map_port && fport == (unsigned)filt_port;
    if (seen)
        g_string_append(seen, text->str);
    return true;
}

bool ml_nat_probe_parse(const char *output, struct ml_nat_behaviour *ret, GString *seen,
                        GError **err)
{
    struct json_object *o = output ? json_tokener_parse(output) : NULL;
    bool ok = o && json_object_is_type(o, json_type_object)
                  ? probe_read(o, output, ret, seen, err)
                  : probe_fail(err, "printed no JSON object", output);
    json_object_put(o);
    return ok;
}

bool ml_nat_apply(struct ml_lab *lab, size_t node, enum ml_nat_type type, GError **err)
{
    const struct ml_topology *topo = lab->topo;
    virDomainPtr dom = ml_lab_dom(lab, node);
    g_autofree char *ruleset = ml_nat_ruleset(topo, node, type);
    g_autofree char *out = NULL;
    if (type != ML_NAT_NONE) {
        g_autofree char *setup = ml_nat_setup_script(topo, node);
        out = ml_agent_run(dom, "sh -s", setup, APPLY_TIMEOUT_S, err);
        if (!out)
            return g_prefix_error(err,
                                  "setting up the NAT namespace on %s: ", topo->nodes[node].name),
                   false;
        g_clear_pointer(&out, g_free);
    }
    out = ml_agent_run(dom, "nft -f -", ruleset, APPLY_TIMEOUT_S, err);
    if (!out)
        return g_prefix_error(err, "loading the %s NAT on %s: ", ml_nat_type_name(type),
                              topo->nodes[node].name),
               false;
    g_clear_pointer(&out, g_free);
    /* Mappings of the type before would outlive its rules. */
    out = ml_agent_run(dom, "conntrack -F", NULL, APPLY_TIMEOUT_S, err);
    if (!out)
        return g_prefix_error(err, "flushing conntrack on %s: ", topo->nodes[node].name), false;
    g_autofree char *rel =
        g_strdup_printf("rulesets/nat/%s-%s.nft", topo->nodes[node].name, ml_nat_type_name(type));
    ml_lab_write(lab, rel, ruleset, -1, NULL);
    return true;
}

static struct json_object *behaviour_json(const struct ml_nat_behaviour *b)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "mapping",
                           json_object_new_string(ml_nat_dependence_name(b->mapping)));
    json_object_object_add(o, "filtering",
                           json_object_new_string(ml_nat_dependence_name(b->filtering)));
    json_object_object_add(o, "port_preserved", json_object_new_boolean(b->port_preserved));
    return o;
}

struct json_object *ml_nat_observe(struct ml_lab *lab, size_t node, enum ml_nat_type type,
                                   GError **err)
{
    const struct ml_topology *topo = lab->topo;
    size_t hub = topo->hub;
    if (!topo->nodes[hub].second_address.s_addr) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "probing the NAT on %s needs a second address on the hub %s "
                    "(second_address in the topology)",
                    topo->nodes[node].name, topo->nodes[hub].name);
        return NULL;
    }
    if (!ml_nat_apply(lab, node, type, err))
        return NULL;
    g_autofree char *args = ml_nat_probe_args(topo);
    g_autofree char *hub_cmd = g_strdup_printf("python3 - %s", args);
    g_autofree char *client_cmd = g_strdup_printf("%spython3 - %s", ml_nat_exec_prefix(type), args);
    long long pid = 0;
    if (!ml_agent_spawn(ml_lab_dom(lab, hub), hub_cmd, hub_script, &pid, err))
        return g_prefix_error(err, "starting the NAT probe on %s: ", topo->nodes[hub].name), NULL;
    g_autoptr(GError) client_err = NULL;
    g_autofree char *out = ml_agent_run(ml_lab_dom(lab, node), client_cmd, client_script,
                                        PROBE_TIMEOUT_S, &client_err);
    /* The hub's half ends by itself once idle; wait for it so none is left behind. */
    struct ml_exec hub_ex = {0};
    g_autoptr(GError) hub_err = NULL;
    bool hub_ok = ml_agent_wait(ml_lab_dom(lab, hub), pid, PROBE_TIMEOUT_S, &hub_ex, &hub_err);
    if (hub_ok && hub_ex.exit_code != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the NAT probe on %s failed (exit %d): %.300s",
                    topo->nodes[hub].name, hub_ex.exit_code, hub_ex.err ? hub_ex.err : "");
        ml_exec_clear(&hub_ex);
        return NULL;
    }
    ml_exec_clear(&hub_ex);
    if (!out) {
        g_propagate_prefixed_error(err, g_steal_pointer(&client_err),
                                   "the NAT probe on %s: ", topo->nodes[node].name);
        return NULL;
    }
    struct ml_nat_behaviour seen_b;
    g_autoptr(GString) seen = g_string_new(NULL);
    if (!ml_nat_probe_parse(out, &seen_b, seen, err))
        return g_prefix_error(err, "%s behind %s: ", topo->nodes[node].name,
                              ml_nat_type_name(type)),
               NULL;
    struct ml_nat_behaviour want = ml_nat_expected(type);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "node", json_object_new_string(topo->nodes[node].name));
    json_object_object_add(o, "type", json_object_new_string(ml_nat_type_name(type)));
    json_object_object_add(o, "mapping",
                           json_object_new_string(ml_nat_dependence_name(seen_b.mapping)));
    json_object_object_add(o, "filtering",
                           json_object_new_string(ml_nat_dependence_name(seen_b.filtering)));
    json_object_object_add(o, "port_preserved", json_object_new_boolean(seen_b.port_preserved));
    json_object_object_add(o, "expected", behaviour_json(&want));
    json_object_object_add(o, "as_configured",
                           json_object_new_boolean(seen_b.mapping == want.mapping &&
                                                   seen_b.filtering == want.filtering &&
                                                   seen_b.port_preserved == want.port_preserved));
    json_object_object_add(o, "seen", json_object_new_string(seen->str));
    return o;
}
