/* The guest firewall from a port table it is handed, not one it looks up: a dataplane that is
 * not registered yet (IPsec's UDP 4500 here) is opened and isolated from the table alone, and
 * nothing outside the table appears. Pure: no nft, no root. */
#include "check.h"

#include "guestnet/nft.h"
#include "topology/plan.h"
#include "topology/ports.h"

static const struct ml_port table[] = {
    {.what = "ssh", .proto = ML_PROTO_TCP, .port = 22, .open = true, .dataplane = NULL},
    {.what = "IKE NAT-T", .proto = ML_PROTO_UDP, .port = 4500, .open = true, .dataplane = "ipsec"},
    /* a transport nobody may open */
    {.what = "tinc", .proto = ML_PROTO_TCP, .port = 655, .open = false, .dataplane = "tinc"},
};

static void check_handed_table(void)
{
    g_autofree char *fw = ml_nft_firewall(table, G_N_ELEMENTS(table));
    CHECK(strstr(fw, "policy drop;") != NULL);
    /* Open ports are accepted on the lab NIC; a closed transport is not. */
    CHECK(strstr(fw, "tcp dport 22 accept comment \"ssh\"") != NULL);
    CHECK(strstr(fw, "udp dport 4500 accept comment \"IKE NAT-T\"") != NULL);
    CHECK(strstr(fw, "tcp dport 655 accept") == NULL);
    /* Each transport is kept off the tunnels, both ways; ssh is no transport. */
    CHECK(strstr(fw, "#   udp 4500: IKE NAT-T (ipsec)") != NULL);
    CHECK(strstr(fw, "udp dport 4500 counter drop") != NULL);
    CHECK(strstr(fw, "udp sport 4500 counter drop") != NULL);
    CHECK(strstr(fw, "tcp dport 655 counter drop") != NULL);
    CHECK(strstr(fw, "tcp sport 655 counter drop") != NULL);
    CHECK(strstr(fw, "22 counter drop") == NULL);
    CHECK(strstr(fw, "iifname != \"" ML_LAB_NIC "\" jump transport") != NULL);
    /* Nothing the table does not hold: no fixed or registered port is looked up behind it. */
    CHECK(strstr(fw, "51820") == NULL && strstr(fw, "4242") == NULL && strstr(fw, "5201") == NULL &&
          strstr(fw, "443") == NULL);

    g_autofree char *summary = ml_nft_firewall_summary(table, G_N_ELEMENTS(table));
    CHECK_STR(summary, "policy drop on " ML_LAB_NIC " except established, ICMP echo, tcp 22, "
                       "udp 4500; dataplane transports kept off the tunnels");
}

static void check_empty_table(void)
{
    g_autofree char *fw = ml_nft_firewall(table, 0);
    CHECK(strstr(fw, "policy drop;") != NULL && strstr(fw, "ct state established") != NULL);
    CHECK(strstr(fw, " accept comment") == NULL && strstr(fw, "counter drop") == NULL);
    g_autofree char *summary = ml_nft_firewall_summary(table, 0);
    CHECK_STR(summary, "policy drop on " ML_LAB_NIC
                       " except established, ICMP echo; dataplane transports kept off the tunnels");
}

int main(void)
{
    check_handed_table();
    check_empty_table();
    return check_finish();
}
