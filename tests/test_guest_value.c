/* The checks that stand between one guest's output and another guest's root shell: every
 * validator accepts the real shape and refuses hostile text. */
#include "check.h"
#include "virt/guest_value.h"
#include "dataplanes/nebula.h"
#include "dataplanes/tailscale.h"
#include "core/util.h"
#include "dataplanes/wireguard.h"

#define NEBULA_PUB                                                                                 \
    "-----BEGIN NEBULA X25519 PUBLIC KEY-----\n"                                                   \
    "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=\n"                                               \
    "-----END NEBULA X25519 PUBLIC KEY-----\n"
#define NEBULA_CERT                                                                                \
    "-----BEGIN NEBULA CERTIFICATE-----\n"                                                         \
    "CmYKBG1lc2hsYWIoxN3IugYwxOSP2wc6IGKzYX0uI3B1P2hQPGs/hTiXGWL1wQo3\n"                           \
    "5BndnfDgXS8bQAESQJz3lfbVmX0Ml1W3EJwO7lkq7Tq6Xw7V0N8bTIU1PIGb2Y0l\n"                           \
    "-----END NEBULA CERTIFICATE-----\n"
#define SSH_KEY                                                                                    \
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG8U+5tLG1pASppJ+QfrWz2dVMXg+8P9vXBgeL824MFg "            \
    "root@client-a"

static void test_ipv4(void)
{
    struct in_addr a;
    CHECK(ml_guest_ipv4("100.64.0.1", &a) && a.s_addr == htonl(0x64400001u));
    CHECK(ml_guest_ipv4(" 100.64.0.1\n", NULL));
    static const char *const bad[] = {
        "100.64.0.1; rm -rf /", "100.64.0.1\n100.64.0.2", "$(reboot)", "100.64.0.01", "100.64.0",
        "0x64.64.0.1",          "fd7a:115c:a1e0::1",      "",          "100.64.0.1 x"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
        CHECK(!ml_guest_ipv4(bad[i], NULL));
    CHECK(!ml_guest_ipv4(NULL, NULL));
}

/* `tailscale ip -4` prints one address per line (tailscale cmd/tailscale/cli/ip.go, outln(ip));
 * Headscale hands them out of prefixes.v4 (config-example.yaml: v4: 100.64.0.0/10). */
static void test_tailscale_ip(void)
{
    char ip[INET_ADDRSTRLEN] = "unchanged";
    g_autoptr(GError) err = NULL;
    CHECK(ml_tailscale_ip_parse("100.64.0.2\n", ip, &err));
    CHECK_STR(ip, "100.64.0.2");
    CHECK(ml_tailscale_ip_parse("100.127.255.254", ip, NULL));
    static const char *const bad[] = {"100.64.0.1; rm -rf /",
                                      "100.64.0.1\n$(id)",
                                      "'; reboot; '",
                                      "192.0.2.11",
                                      "100.128.0.1",
                                      "100.63.255.255",
                                      "",
                                      "100.64.0.1 100.64.0.2"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) e = NULL;
        CHECK(!ml_tailscale_ip_parse(bad[i], ip, &e));
        CHECK(e && e->code == ML_ERR_GUEST && !strchr(e->message, '\n'));
    }
}

static void test_wireguard_key(void)
{
    CHECK(ml_wg_key_valid("AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="));
    static const char *const bad[] = {"AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=; rm -rf /",
                                      "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eH;A=",
                                      "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA",
                                      "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=\n[Peer]",
                                      "",
                                      "$(reboot)"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
        CHECK(!ml_wg_key_valid(bad[i]));
}

static void test_nebula(void)
{
    CHECK(ml_nebula_pubkey_valid(NEBULA_PUB));
    CHECK(ml_nebula_cert_valid(NEBULA_CERT));
    CHECK(!ml_nebula_pubkey_valid(NEBULA_CERT));
    CHECK(!ml_nebula_cert_valid(NEBULA_PUB));
    /* Two keys in one reply would shift the hub's count and sign a node for another's key. */
    CHECK(!ml_nebula_pubkey_valid(NEBULA_PUB NEBULA_PUB));
    CHECK(!ml_nebula_pubkey_valid(NEBULA_PUB "'; rm -rf /; '"));
    CHECK(!ml_nebula_pubkey_valid("x\n" NEBULA_PUB));
    CHECK(!ml_nebula_pubkey_valid("-----BEGIN NEBULA X25519 PUBLIC KEY-----\n"
                                  "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0e\n"
                                  "-----END NEBULA X25519 PUBLIC KEY-----\n"));
    CHECK(!ml_nebula_pubkey_valid("-----BEGIN NEBULA X25519 PUBLIC KEY-----\n"
                                  "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=$(reboot)\n"
                                  "-----END NEBULA X25519 PUBLIC KEY-----\n"));
    CHECK(!ml_nebula_cert_valid("-----BEGIN NEBULA CERTIFICATE-----\n@@\n"
                                "-----END NEBULA CERTIFICATE-----\n"));
    CHECK(!ml_nebula_cert_valid(""));
    CHECK(!ml_nebula_cert_valid(NULL));
}

static void test_ssh_key(void)
{
    CHECK(ml_guest_ssh_ed25519(SSH_KEY));
    CHECK(ml_guest_ssh_ed25519(SSH_KEY "\n"));
    CHECK(ml_guest_ssh_ed25519("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG8U+5tLG1pASppJ+QfrWz2dVMXg+"
                               "8P9vXBgeL824MFg"));
    /* The key lands in nebula's YAML inside "...": nothing may close the string. */
    CHECK(!ml_guest_ssh_ed25519(SSH_KEY "\"]\n    - user: root"));
    CHECK(!ml_guest_ssh_ed25519(SSH_KEY " extra"));
    CHECK(!ml_guest_ssh_ed25519("ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIG8U+5tLG1pASppJ+QfrWz2dVMXg+"
                                "8P9vXBgeL824MFg"));
    /* Right length, wrong type inside the blob. */
    CHECK(!ml_guest_ssh_ed25519("ssh-ed25519 AAAAC3NzaC1lZDI1NTE4AAAAIG8U+5tLG1pASppJ+QfrWz2dVMX"
                                "g+8P9vXBgeL824MFg"));
    CHECK(!ml_guest_ssh_ed25519("ssh-ed25519 $(reboot)"));
    CHECK(!ml_guest_ssh_ed25519(""));
}

static void test_ca_certificate(void)
{
    /* The lab CA goes into a here-document on the clients: one certificate, nothing else. */
    static const char cert[] = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n"
                               "-----END CERTIFICATE-----\n";
    g_autofree char *ok = ml_lab_ca_client_script(cert, "headscale.lab", "192.0.2.10");
    CHECK(ok != NULL);
    g_autofree char *smuggled = ml_lab_ca_client_script(
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\nMESHLAB_CA\nreboot\n"
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        "headscale.lab", "192.0.2.10");
    CHECK(smuggled == NULL);
    g_autofree char *bad_ip = ml_lab_ca_client_script(cert, "headscale.lab", "1.2.3.4; reboot");
    CHECK(bad_ip == NULL);
}

int main(void)
{
    test_ipv4();
    test_tailscale_ip();
    test_wireguard_key();
    test_nebula();
    test_ssh_key();
    test_ca_certificate();
    return check_finish();
}
