/* The NAT inside a client: its rulesets and setup script against golden copies, and the
 * probe's classifier on outputs recorded from test_nat_netns's real runs (and broken ones). */
#include "check.h"

#include <arpa/inet.h>

#include "guestnet/nat.h"
#include "topology/topology.h"

#define HUB_A2 "192.0.2.20"

static struct ml_nat_behaviour parse_ok(const char *output, GString *seen)
{
    struct ml_nat_behaviour b = {ML_NAT_DEPENDENCE_UNKNOWN, ML_NAT_DEPENDENCE_UNKNOWN, false};
    g_autoptr(GError) err = NULL;
    bool ok = ml_nat_probe_parse(output, &b, seen, &err);
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "parse failed: %s\n", err->message);
    return b;
}

static bool same_behaviour(struct ml_nat_behaviour a, struct ml_nat_behaviour b)
{
    return a.mapping == b.mapping && a.filtering == b.filtering &&
           a.port_preserved == b.port_preserved;
}

/* Probe outputs recorded from tests/nat_netns.sh (client 192.0.2.11, hub 192.0.2.10 and .20). */
static const char *const recorded[ML_NAT_TYPES] = {
    [ML_NAT_NONE] =
        "{\"inside\": \"192.0.2.11\", \"map_port\": 40001, \"filt_port\": 40002, \"mapped"
        "\": [{\"to\": \"192.0.2.10:3479\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \"1"
        "92.0.2.10:3480\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \"192.0.2.20:3479\","
        " \"seen\": \"192.0.2.11:40001\"}], \"filt_seen\": \"192.0.2.11:40002\", \"receiv"
        "ed\": {\"same\": true, \"new-port\": false, \"new-address\": false}}",
    [ML_NAT_ONE_TO_ONE] =
        "{\"inside\": \"172.16.11.2\", \"map_port\": 40001, \"filt_port\": 40002, \"mappe"
        "d\": [{\"to\": \"192.0.2.10:3479\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \""
        "192.0.2.10:3480\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \"192.0.2.20:3479\""
        ", \"seen\": \"192.0.2.11:40001\"}], \"filt_seen\": \"192.0.2.11:40002\", \"recei"
        "ved\": {\"same\": true, \"new-port\": true, \"new-address\": true}}",
    [ML_NAT_FULL_CONE] =
        "{\"inside\": \"172.16.11.2\", \"map_port\": 40001, \"filt_port\": 40002, \"mappe"
        "d\": [{\"to\": \"192.0.2.10:3479\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \""
        "192.0.2.10:3480\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \"192.0.2.20:3479\""
        ", \"seen\": \"192.0.2.11:40001\"}], \"filt_seen\": \"192.0.2.11:40002\", \"recei"
        "ved\": {\"same\": true, \"new-port\": true, \"new-address\": true}}",
    [ML_NAT_RESTRICTED_CONE] =
        "{\"inside\": \"172.16.11.2\", \"map_port\": 40001, \"filt_port\": 40002, \"mappe"
        "d\": [{\"to\": \"192.0.2.10:3479\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \""
        "192.0.2.10:3480\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \"192.0.2.20:3479\""
        ", \"seen\": \"192.0.2.11:40001\"}], \"filt_seen\": \"192.0.2.11:40002\", \"recei"
        "ved\": {\"same\": true, \"new-port\": true, \"new-address\": false}}",
    [ML_NAT_PORT_RESTRICTED_CONE] =
        "{\"inside\": \"172.16.11.2\", \"map_port\": 40001, \"filt_port\": 40002, \"mappe"
        "d\": [{\"to\": \"192.0.2.10:3479\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \""
        "192.0.2.10:3480\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \"192.0.2.20:3479\""
        ", \"seen\": \"192.0.2.11:40001\"}], \"filt_seen\": \"192.0.2.11:40002\", \"recei"
        "ved\": {\"same\": true, \"new-port\": false, \"new-address\": false}}",
    [ML_NAT_SYMMETRIC] =
        "{\"inside\": \"172.16.11.2\", \"map_port\": 40001, \"filt_port\": 40002, \"mappe"
        "d\": [{\"to\": \"192.0.2.10:3479\", \"seen\": \"192.0.2.11:14704\"}, {\"to\": \""
        "192.0.2.10:3480\", \"seen\": \"192.0.2.11:61267\"}, {\"to\": \"192.0.2.20:3479\""
        ", \"seen\": \"192.0.2.11:51251\"}], \"filt_seen\": \"192.0.2.11:48058\", \"recei"
        "ved\": {\"same\": true, \"new-port\": false, \"new-address\": false}}",
};

static void check_parser(void)
{
    for (int t = ML_NAT_NONE; t < ML_NAT_TYPES; t++) {
        g_autoptr(GString) seen = g_string_new(NULL);
        struct ml_nat_behaviour b = parse_ok(recorded[t], seen);
        CHECK(same_behaviour(b, ml_nat_expected(t)));
        CHECK(strstr(seen->str, "towards 192.0.2.20:3479") != NULL);
    }
    g_autoptr(GString) seen = g_string_new(NULL);
    parse_ok(recorded[ML_NAT_SYMMETRIC], seen);
    CHECK(g_str_has_prefix(seen->str, "mapped 172.16.11.2:40001 to 192.0.2.11:"));
    CHECK(strstr(seen->str, "from a new port was dropped, from a new address was dropped") != NULL);

    /* Address-dependent mapping: the same port for both hub ports, another for A2. */
    GString *ad = g_string_new(recorded[ML_NAT_PORT_RESTRICTED_CONE]);
    g_string_replace(ad, "\"seen\": \"192.0.2.11:40001\"}]", "\"seen\": \"192.0.2.11:555\"}]", 1);
    struct ml_nat_behaviour b = parse_ok(ad->str, NULL);
    CHECK(b.mapping == ML_NAT_ADDRESS_DEPENDENT && !b.port_preserved);
    g_string_free(ad, TRUE);

    const char *const broken[] = {
        "",
        "not json",
        "[1, 2]",
        "{\"inside\": \"172.16.11.2\"}",
        /* no answer from A2:P1 */
        "{\"inside\": \"172.16.11.2\", \"map_port\": 40001, \"filt_port\": 40002, \"mapped\": "
        "[{\"to\": \"192.0.2.10:3479\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": "
        "\"192.0.2.10:3480\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \"192.0.2.20:3479\", "
        "\"seen\": null}], \"filt_seen\": \"192.0.2.11:40002\", \"received\": {\"same\": true}}",
        /* a reflected source that is no ADDRESS:PORT */
        "{\"inside\": \"172.16.11.2\", \"map_port\": 40001, \"filt_port\": 40002, \"mapped\": "
        "[{\"to\": \"192.0.2.10:3479\", \"seen\": \"192.0.2.11\"}, {\"to\": "
        "\"192.0.2.10:3480\", \"seen\": \"192.0.2.11:40001\"}, {\"to\": \"192.0.2.20:3479\", "
        "\"seen\": \"192.0.2.11:40001\"}], \"filt_seen\": \"192.0.2.11:40002\", \"received\": "
        "{\"same\": true}}",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(broken); i++) {
        g_autoptr(GError) err = NULL;
        struct ml_nat_behaviour x;
        CHECK(!ml_nat_probe_parse(broken[i], &x, NULL, &err) && err);
    }
    /* "same" missing: the NAT lets no reply in, which is broken, not a filtering type. */
    GString *nosame = g_string_new(recorded[ML_NAT_FULL_CONE]);
    g_string_replace(nosame, "\"same\": true", "\"same\": false", 1);
    g_autoptr(GError) err = NULL;
    struct ml_nat_behaviour x;
    CHECK(!ml_nat_probe_parse(nosame->str, &x, NULL, &err));
    CHECK(err && strstr(err->message, "does not let replies in") != NULL);
    g_string_free(nosame, TRUE);
    CHECK(ml_nat_probe_parse(NULL, &x, NULL, NULL) == false);
}

static void check_golden_rulesets(const struct ml_topology *topo)
{
    for (int t = 0; t < ML_NAT_TYPES; t++) {
        g_autofree char *rules = ml_nat_ruleset(topo, 1, t);
        g_autofree char *name = g_strdup_printf("nat-client-a-%s.nft", ml_nat_type_name(t));
        check_golden(name, rules);
        CHECK(g_str_has_prefix(strchr(rules, '\n') + 1,
                               "table ip meshlab_nat\ndelete table ip meshlab_nat\n"));
    }
    g_autofree char *none = ml_nat_ruleset(topo, 1, ML_NAT_NONE);
    CHECK(strstr(none, "{") == NULL);
    g_autofree char *setup = ml_nat_setup_script(topo, 1);
    check_golden("nat-setup-client-a.sh", setup);
    /* client-b's inside network is its own. */
    g_autofree char *setup_b = ml_nat_setup_script(topo, 2);
    CHECK(strstr(setup_b, "172.16.12.2/24") != NULL);
    CHECK_STR(ml_nat_exec_prefix(ML_NAT_NONE), "");
    CHECK_STR(ml_nat_exec_prefix(ML_NAT_SYMMETRIC), "ip netns exec mlnat ");
    g_autofree char *args = ml_nat_probe_args(topo);
    CHECK_STR(args, "192.0.2.10 " HUB_A2 " 3479 3480");
    CHECK_STR(ml_nat_dependence_name(ML_NAT_ADDRESS_AND_PORT_DEPENDENT),
              "address-and-port-dependent");
}

int main(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/dataplanes.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return check_finish();
    inet_pton(AF_INET, HUB_A2, &topo->nodes[topo->hub].second_address);

    check_golden_rulesets(topo);
    check_parser();
    return check_finish();
}
