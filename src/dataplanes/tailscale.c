#include "dataplanes/tailscale.h"

#include "virt/guest_value.h"
#include "cache/artifacts.h"
#include "dataplanes/bundle.h"
#include "dataplanes/dataplane.h"
#include "core/keys.h"
#include "core/leftovers.h"
#include "core/rundir.h"
#include "core/spawn.h"
#include "core/util.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- rendering ---------------------------------------------------------------------------- */

static bool valid_hostname(const char *s)
{
    return s && *s && strlen(s) < 254 &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") ==
               strlen(s) &&
           *s != '-' && *s != '.';
}

static bool valid_ipv4(const char *s)
{
    return s && g_hostname_is_ip_address(s) && !strchr(s, ':');
}

/* Words made only of these need no quoting in sh; anything else is quoted. */
static char *sh_word(const char *s)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                               "@%+=:,./_-";
    if (*s && strspn(s, safe) == strlen(s))
        return g_strdup(s);
    return g_shell_quote(s);
}

char *ml_headscale_config(const char *hub_ip, const char *server_url)
{
    g_return_val_if_fail(server_url, NULL);
    /* Optional in the DERP map: "it is possible to optionally add the public IPv4 ... to the
     * Derp-Map" (config-example.yaml); without it, clients reach the region by server_url's host.
     */
    g_autofree char *ipv4 = hub_ip ? g_strdup_printf("    ipv4: %s\n", hub_ip) : g_strdup("");
    return g_strdup_printf(
        "# Written by meshlab for headscale 0.29; key names follow its config-example.yaml.\n"
        "server_url: %s\n"
        "listen_addr: 0.0.0.0:%d\n"
        "metrics_listen_addr: 127.0.0.1:9090\n"
        "grpc_listen_addr: 127.0.0.1:50443\n"
        "grpc_allow_insecure: false\n"
        "noise:\n"
        "  private_key_path: /var/lib/headscale/noise_private.key\n"
        "prefixes:\n"
        "  v4: 100.64.0.0/10\n"
        "  v6: fd7a:115c:a1e0::/48\n"
        "  allocation: sequential\n"
        "# The only relay on offer is the one on the hub: with Tailscale's public DERP map left\n"
        "# in, a blocked direct path would leave the lab and come back through their relays.\n"
        "derp:\n"
        "  server:\n"
        "    enabled: true\n"
        "    region_id: %d\n"
        "    region_code: \"%s\"\n"
        "    region_name: \"meshlab hub\"\n"
        "    stun_listen_addr: \"0.0.0.0:%d\"\n"
        "    private_key_path: /var/lib/headscale/derp_server_private.key\n"
        "    automatically_add_embedded_derp_region: true\n"
        "%s"
        "  urls: []\n"
        "  paths: []\n"
        "  auto_update_enabled: false\n"
        "  update_frequency: 24h\n"
        "# The guests have no internet to check for updates on.\n"
        "disable_check_updates: true\n"
        "database:\n"
        "  type: sqlite\n"
        "  sqlite:\n"
        "    path: /var/lib/headscale/db.sqlite\n"
        "    write_ahead_log: true\n"
        "tls_letsencrypt_hostname: \"\"\n"
        "tls_cert_path: " ML_HEADSCALE_TLS_DIR "/server.crt\n"
        "tls_key_path: " ML_HEADSCALE_TLS_DIR "/server.key\n"
        "log:\n"
        "  format: text\n"
        "  level: info\n"
        "policy:\n"
        "  mode: file\n"
        "  path: " ML_HEADSCALE_POLICY_PATH "\n"
        "# MagicDNS is on as in the seed; clients run with --accept-dns=false, so the guests keep\n"
        "# resolving through the lab NIC and no nameserver is handed out.\n"
        "dns:\n"
        "  magic_dns: true\n"
        "  base_domain: tailnet.example.com\n"
        "  override_local_dns: false\n"
        "  nameservers:\n"
        "    global: []\n"
        "  search_domains: []\n"
        "  extra_records: []\n"
        "unix_socket: /var/run/headscale/headscale.sock\n"
        "unix_socket_permission: \"0770\"\n"
        "logtail:\n"
        "  enabled: false\n",
        server_url, ML_PORT_HTTPS, ML_HEADSCALE_DERP_REGION_ID, ML_HEADSCALE_DERP_REGION,
        ML_PORT_STUN, ipv4);
}

char *ml_headscale_policy(void)
{
    return g_strdup("// Written by meshlab: as in the seed, every node may reach every node on "
                    "every port.\n"
                    "{\n"
                    "  \"acls\": [\n"
                    "    { \"action\": \"accept\", \"src\": [\"*\"], \"dst\": [\"*:*\"] }\n"
                    "  ]\n"
                    "}\n");
}

char *ml_headscale_policy_relay(const char *relay_ip, const char *const *from, size_t n, bool grant)
{
    g_return_val_if_fail(relay_ip && (from || !n), NULL);
    GString *src = g_string_new(NULL);
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(src, "%s\"%s\"", i ? ", " : "", from[i]);
    /* Grants only, as Headscale 0.29's own integration test of the capability writes them
     * (integration/grant_cap_test.go): every node may reach every node, and the clients may
     * use the hub as their peer relay. Without the grant the same first rule, so the packet
     * filter is the same either way and only the capability comes and goes. */
    char *policy =
        grant ? g_strdup_printf(
                    "// Written by meshlab: every node may reach every node on every port, and "
                    "the clients\n"
                    "// may use the hub's tailscaled (%s) as their peer relay.\n"
                    "{\n"
                    "  \"grants\": [\n"
                    "    { \"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"] },\n"
                    "    { \"src\": [%s], \"dst\": [\"%s\"], \"app\": { "
                    "\"tailscale.com/cap/relay\": [{}] } }\n"
                    "  ]\n"
                    "}\n",
                    relay_ip, src->str, relay_ip)
              : g_strdup_printf("// Written by meshlab: every node may reach every node on every "
                                "port; the hub's tailscaled\n"
                                "// (%s) serves as a peer relay, but no client may use it now.\n"
                                "{\n"
                                "  \"grants\": [\n"
                                "    { \"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"] }\n"
                                "  ]\n"
                                "}\n",
                                relay_ip);
    g_string_free(src, TRUE);
    return policy;
}

char *ml_tailscale_up_command(const char *login_server, const char *hostname,
                              const char *authkey_file)
{
    g_return_val_if_fail(login_server && hostname && authkey_file, NULL);
    g_autofree char *key_arg = g_strconcat("--auth-key=file:", authkey_file, NULL);
    g_autofree char *login_arg = g_strconcat("--login-server=", login_server, NULL);
    g_autofree char *host_arg = g_strconcat("--hostname=", hostname, NULL);
    g_autofree char *k = sh_word(key_arg);
    g_autofree char *l = sh_word(login_arg);
    g_autofree char *h = sh_word(host_arg);
    return g_strdup_printf("tailscale up %s %s %s --accept-dns=false", l, k, h);
}

char *ml_headscale_ca_constraints(const char *dns, const char *ip)
{
    struct in6_addr a6;
    bool v6 = ip && inet_pton(AF_INET6, ip, &a6) == 1;
    g_autofree char *ips =
        !ip  ? g_strdup("excluded;IP:0.0.0.0/0.0.0.0,excluded;IP:::/::")
        : v6 ? g_strdup_printf("permitted;IP:%s/ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ip)
             : g_strdup_printf("permitted;IP:%s/255.255.255.255", ip);
    return g_strdup_printf("nameConstraints=critical,permitted;DNS:%s,%s", dns ? dns : "invalid",
                           ips);
}

char *ml_lab_ca_hub_script(const char *hostname, const char *hub_ip)
{
    if (!valid_hostname(hostname) || !valid_ipv4(hub_ip))
        return NULL;
    g_autofree char *nc = ml_headscale_ca_constraints(hostname, hub_ip);
    return g_strdup_printf(
        "#!/bin/sh\n"
        "# Written by meshlab: a CA made for this lab only, that vouches for %s and %s\n"
        "# alone, and a certificate for them signed by it. The CA key stays here (0600, root);\n"
        "# only the CA certificate is printed.\n"
        "set -eu\n"
        "umask 077\n"
        "mkdir -p " ML_HEADSCALE_TLS_DIR "\n"
        "cd " ML_HEADSCALE_TLS_DIR "\n"
        "if [ ! -s ca.key ] || [ ! -s ca.crt ] ||\n"
        "        ! openssl x509 -in ca.crt -noout -ext nameConstraints | grep -q Permitted; then\n"
        "    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \\\n"
        "        -keyout ca.key -out ca.crt -days %d -subj '/CN=meshlab lab CA' \\\n"
        "        -addext 'basicConstraints=critical,CA:TRUE,pathlen:0' \\\n"
        "        -addext 'keyUsage=critical,keyCertSign,cRLSign' \\\n"
        "        -addext '%s'\n"
        "fi\n"
        "cat > server.ext <<'MESHLAB_EXT'\n"
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectAltName=DNS:%s,IP:%s\n"
        "MESHLAB_EXT\n"
        "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \\\n"
        "    -keyout server.key -out server.csr -subj '/CN=%s'\n"
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days %d \\\n"
        "    -extfile server.ext -out server.crt\n"
        "rm -f server.csr server.ext\n"
        "chmod 0600 ca.key server.key\n"
        "chmod 0644 ca.crt server.crt\n"
        "# The Debian package runs headscale as its own user, which must read its key.\n"
        "if id headscale >/dev/null 2>&1; then\n"
        "    chown headscale: server.key server.crt\n"
        "fi\n"
        "cat ca.crt\n",
        hostname, hub_ip, ML_LAB_CA_DAYS, nc, hostname, hub_ip, hostname, ML_LAB_CA_DAYS);
}

char *ml_lab_ca_client_script(const char *ca_pem, const char *hostname, const char *hub_ip)
{
    /* One certificate and nothing else: the text goes into a here-document. */
    if (!ml_guest_pem(ca_pem, "CERTIFICATE", 0) || !valid_hostname(hostname) || !valid_ipv4(hub_ip))
        return NULL;
    g_autofree char *pem = g_strstrip(g_strdup(ca_pem));
    g_autofree char *escaped = g_regex_escape_string(hostname, -1);
    return g_strdup_printf(
        "#!/bin/sh\n"
        "# Written by meshlab: the lab CA where tailscaled alone looks for it (its SSL_CERT_DIR;\n"
        "# the system's trust store is left alone), and %s resolved to the hub.\n"
        "set -eu\n"
        "mkdir -p " ML_HEADSCALE_CA_DIR "\n"
        "cat > " ML_LAB_CA_CLIENT_PATH " <<'MESHLAB_CA'\n"
        "%s\n"
        "MESHLAB_CA\n"
        "chmod 0644 " ML_LAB_CA_CLIENT_PATH "\n"
        "sed -i '/[[:space:]]%s$/d' /etc/hosts\n"
        "printf '%%s\\t%%s\\n' %s %s >> /etc/hosts\n",
        hostname, pem, escaped, hub_ip, hostname);
}

bool ml_tailscale_ip_parse(const char *out, char ret[INET_ADDRSTRLEN], GError **err)
{
    struct in_addr a;
    if (!ml_guest_ipv4(out, &a) || (ntohl(a.s_addr) & 0xffc00000u) != 0x64400000u) {
        g_autofree char *shown = g_strescape(out ? out : "", NULL);
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "'tailscale ip -4' printed \"%.80s\", not one address in Headscale's "
                    "100.64.0.0/10",
                    shown);
        return false;
    }
    inet_ntop(AF_INET, &a, ret, INET_ADDRSTRLEN);
    return true;
}

/* ---- tailscale ping ----------------------------------------------------------------------- */

/* A Go time.Duration as String() prints it ("65ms", "1.2s", "1m2.003s", "850µs", "0s"). */
static bool parse_go_duration_ms(const char *s, double *ret_ms)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"\xce\xbcs", 1e-3},
                 {"ms", 1.0},  {"s", 1e3},   {"m", 60e3},         {"h", 3600e3}};
    double total = 0;
    if (!*s)
        return false;
    while (*s) {
        char *end = NULL;
        double v = g_ascii_strtod(s, &end);
        if (end == s || v < 0)
            return false;
        s = end;
        size_t best = 0, best_len = 0;
        for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
            size_t len = strlen(units[i].unit);
            if (strncmp(s, units[i].unit, len) == 0 && len > best_len) {
                best = i;
                best_len = len;
            }
        }
        if (!best_len)
            return false;
        total += v * units[best].ms;
        s += best_len;
    }
    *ret_ms = total;
    return true;
}

/* The path of a label value, or -1 for one tailscaled does not count by. */
static int ts_path(const char *label)
{
    static const struct {
        const char *label;
        enum ml_ts_path path;
    } paths[] = {{"direct_ipv4", ML_TS_DIRECT},         {"direct_ipv6", ML_TS_DIRECT},
                 {"derp", ML_TS_DERP},                  {"peer_relay_ipv4", ML_TS_PEER_RELAY},
                 {"peer_relay_ipv6", ML_TS_PEER_RELAY}};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++)
        if (!strcmp(paths[i].label, label))
            return (int)paths[i].path;
    return -1;
}

bool ml_tailscale_metrics_parse(const char *text, struct ml_ts_path_bytes *ret, GError **err)
{
    static const char *const names[] = {"tailscaled_outbound_bytes_total{path=\"",
                                        "tailscaled_inbound_bytes_total{path=\""};
    struct ml_ts_path_bytes got = {0};
    bool seen = false;
    g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
    for (size_t i = 0; lines[i]; i++) {
        for (int dir = 0; dir < 2; dir++) {
            if (!g_str_has_prefix(lines[i], names[dir]))
                continue;
            const char *label = lines[i] + strlen(names[dir]);
            const char *close = strstr(label, "\"} ");
            g_autofree char *value = close ? g_strndup(label, (gsize)(close - label)) : NULL;
            char *end = NULL;
            long long n = close ? g_ascii_strtoll(close + 3, &end, 10) : -1;
            /* A petabyte is more than a lab sends; past it the sums could overflow. */
            if (!close || end == close + 3 || *g_strstrip(end) || n < 0 || n > 1000000000000000LL) {
                g_autofree char *shown = ml_escape_controls(lines[i]);
                g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                            "cannot read tailscaled's per-path counter '%.80s'", shown);
                return false;
            }
            int path = ts_path(value);
            if (path >= 0)
                (dir ? got.in : got.out)[path] += n;
            seen |= dir == 0;
        }
    }
    if (!seen) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    "tailscale metrics print has no tailscaled_outbound_bytes_total: this "
                    "tailscaled counts no bytes by path (Tailscale 1.80 or later does)");
        return false;
    }
    *ret = got;
    return true;
}

const char *ml_ts_path_name(enum ml_ts_path p)
{
    static const char *const names[ML_TS_PATHS] = {"direct", "derp", "peer_relay"};
    return p < ML_TS_PATHS ? names[p] : "?";
}

size_t ml_tailscale_tunnel_counts(const char *text, const char *client, enum ml_ts_path want,
                                  struct ml_tunnel_count *ret, double *ret_at)
{
    /* The uptime is the last line, printed just after the counters were read. */
    *ret_at = NAN;
    const char *end = text ? text + strlen(text) : NULL;
    while (end && end > text && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    const char *last = end;
    while (last && last > text && last[-1] != '\n')
        last--;
    if (last && last < end) {
        g_autofree char *line = g_strndup(last, (gsize)(end - last));
        *ret_at = ml_uptime_head(line);
    }
    struct ml_ts_path_bytes b;
    g_autoptr(GError) e = NULL;
    if (!text || want >= ML_TS_PATHS || !ml_tailscale_metrics_parse(text, &b, &e))
        return 0;
    size_t n = 0;
    for (int k = -1; k < ML_TS_PATHS; k++) {
        enum ml_ts_path p = k < 0 ? want : (enum ml_ts_path)k;
        if (k >= 0 && p == want)
            continue;
        g_snprintf(ret[n].who, sizeof(ret[n].who), "%s's tailscaled by %s", client,
                   ml_ts_path_name(p));
        ret[n].bytes = (double)(b.in[p] + b.out[p]);
        ret[n].excluded = k >= 0;
        ret[n].at_client = true;
        n++;
    }
    return n;
}

bool ml_tailscale_ping_parse(const char *text, struct ml_ts_ping *ret, GError **err)
{
    struct ml_ts_ping r = {0};
    g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
    for (char **p = lines; *p; p++) {
        const char *line = g_strchomp(*p);
        if (!g_str_has_prefix(line, "pong from "))
            continue;
        const char *via = strstr(line, " via ");
        const char *in = g_strrstr(line, " in ");
        if (!via || !in || in <= via + 5) {
            g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                        "cannot read the tailscale ping line '%s': expected 'pong from NAME "
                        "(IP) via PATH in TIME'",
                        line);
            return false;
        }
        g_autofree char *path = g_strndup(via + 5, (gsize)(in - via - 5));
        double ms = 0;
        if (!parse_go_duration_ms(in + 4, &ms)) {
            g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                        "cannot read the time '%s' in the tailscale ping line '%s'", in + 4, line);
            return false;
        }
        r.answered = true;
        r.pongs++;
        r.latency_ms = ms;
        r.direct = false;
        r.endpoint[0] = r.derp_region[0] = r.peer_relay[0] = '\0';
        size_t plen = strlen(path);
        if (g_str_has_prefix(path, "DERP(") && plen > 6 && path[plen - 1] == ')') {
            g_strlcpy(r.derp_region, path + 5, MIN(sizeof(r.derp_region), plen - 5));
        } else if (g_str_has_prefix(path, "peer-relay(") && plen > 12 && path[plen - 1] == ')') {
            g_strlcpy(r.peer_relay, path + 11, MIN(sizeof(r.peer_relay), plen - 11));
        } else if (strchr(path, ':') && !strchr(path, '(') && plen < sizeof(r.endpoint)) {
            r.direct = true;
            g_strlcpy(r.endpoint, path, sizeof(r.endpoint));
        }
        /* Anything else (a TSMP or ICMP ping) is answered by no path the checks name. */
    }
    *ret = r;
    return true;
}

/* ---- tailscale status --json -------------------------------------------------------------- */

static const char *obj_string(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return "";
    return json_object_get_string(v);
}

static bool obj_bool(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_boolean) &&
           json_object_get_boolean(v);
}

static struct json_object *parse_json(const char *json, const char *what, int code, GError **err)
{
    enum json_tokener_error jerr = json_tokener_success;
    struct json_object *root = json_tokener_parse_verbose(json ? json : "", &jerr);
    if (!root) {
        g_set_error(err, ML_ERROR, code, "cannot read %s: %s", what,
                    jerr == json_tokener_success ? "it is null" : json_tokener_error_desc(jerr));
    }
    return root;
}

static bool dns_label_is(const char *dns_name, const char *label)
{
    size_t n = strlen(label);
    return n && g_ascii_strncasecmp(dns_name, label, n) == 0 &&
           (dns_name[n] == '.' || dns_name[n] == '\0');
}

static void fill_peer(struct json_object *p, struct ml_ts_peer *r)
{
    memset(r, 0, sizeof(*r));
    g_strlcpy(r->host_name, obj_string(p, "HostName"), sizeof(r->host_name));
    g_strlcpy(r->dns_name, obj_string(p, "DNSName"), sizeof(r->dns_name));
    g_strlcpy(r->cur_addr, obj_string(p, "CurAddr"), sizeof(r->cur_addr));
    g_strlcpy(r->relay, obj_string(p, "Relay"), sizeof(r->relay));
    g_strlcpy(r->peer_relay, obj_string(p, "PeerRelay"), sizeof(r->peer_relay));
    r->online = obj_bool(p, "Online");
    r->active = obj_bool(p, "Active");
    r->direct = r->cur_addr[0] != '\0';
    struct json_object *ips = NULL;
    if (json_object_object_get_ex(p, "TailscaleIPs", &ips) &&
        json_object_is_type(ips, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(ips); i++) {
            const char *ip = json_object_get_string(json_object_array_get_idx(ips, i));
            if (!ip)
                continue;
            if (strchr(ip, ':') && !r->ipv6[0])
                g_strlcpy(r->ipv6, ip, sizeof(r->ipv6));
            else if (!strchr(ip, ':') && !r->ipv4[0])
                g_strlcpy(r->ipv4, ip, sizeof(r->ipv4));
        }
    }
}

bool ml_tailscale_status_parse(const char *json, const char *peer_hostname, struct ml_ts_peer *ret,
                               GError **err)
{
    struct json_object *root = parse_json(json, "tailscale status --json", ML_ERR_MEASURE, err);
    if (!root)
        return false;
    struct json_object *peers = NULL;
    struct json_object *by_dns = NULL, *by_host = NULL;
    g_autoptr(GString) names = g_string_new(NULL);
    if (json_object_object_get_ex(root, "Peer", &peers) &&
        json_object_is_type(peers, json_type_object)) {
        json_object_object_foreach(peers, key, p)
        {
            (void)key;
            if (!json_object_is_type(p, json_type_object))
                continue;
            const char *host = obj_string(p, "HostName"), *dns = obj_string(p, "DNSName");
            g_string_append_printf(names, "%s%s", names->len ? ", " : "", *dns ? dns : host);
            if (!by_dns && dns_label_is(dns, peer_hostname))
                by_dns = p;
            if (!by_host && g_ascii_strcasecmp(host, peer_hostname) == 0)
                by_host = p;
        }
    }
    struct json_object *match = by_dns ? by_dns : by_host;
    if (!match) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    "tailscale status lists no peer named '%s' (peers: %s)", peer_hostname,
                    names->len ? names->str : "none");
        json_object_put(root);
        return false;
    }
    fill_peer(match, ret);
    json_object_put(root);
    return true;
}

bool ml_tailscale_netmap_endpoints(const char *json, const char *peer_hostname, unsigned *ret_n,
                                   GError **err)
{
    struct json_object *root = parse_json(json, "tailscale debug netmap", ML_ERR_MEASURE, err);
    if (!root)
        return false;
    struct json_object *peers = NULL, *match = NULL;
    if (json_object_object_get_ex(root, "Peers", &peers) &&
        json_object_is_type(peers, json_type_array)) {
        for (size_t i = 0; !match && i < json_object_array_length(peers); i++) {
            struct json_object *p = json_object_array_get_idx(peers, i), *hi = NULL;
            if (!json_object_is_type(p, json_type_object))
                continue;
            json_object_object_get_ex(p, "Hostinfo", &hi);
            if (dns_label_is(obj_string(p, "Name"), peer_hostname) ||
                (json_object_is_type(hi, json_type_object) &&
                 g_ascii_strcasecmp(obj_string(hi, "Hostname"), peer_hostname) == 0))
                match = p;
        }
    }
    if (!match) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "tailscale's netmap lists no peer named '%s'",
                    peer_hostname);
        json_object_put(root);
        return false;
    }
    struct json_object *eps = NULL;
    *ret_n = json_object_object_get_ex(match, "Endpoints", &eps) &&
                     json_object_is_type(eps, json_type_array)
                 ? (unsigned)json_object_array_length(eps)
                 : 0;
    json_object_put(root);
    return true;
}

/* ---- headscale -o json -------------------------------------------------------------------- */

/* headscale prints ids as JSON numbers; releases before 0.23 printed them as strings. */
static bool read_id(struct json_object *o, long *ret)
{
    struct json_object *v = NULL;
    if (!json_object_object_get_ex(o, "id", &v))
        return false;
    if (json_object_is_type(v, json_type_int)) {
        int64_t n = json_object_get_int64(v);
        if (n <= 0 || n > LONG_MAX)
            return false;
        *ret = (long)n;
        return true;
    }
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        char *end = NULL;
        long n = strtol(s, &end, 10);
        if (!*s || *end || n <= 0)
            return false;
        *ret = n;
        return true;
    }
    return false;
}

bool ml_headscale_user_id(const char *json, const char *user, long *ret_id, GError **err)
{
    struct json_object *root = parse_json(json, "headscale users list -o json", ML_ERR_GUEST, err);
    if (!root)
        return false;
    bool array = json_object_is_type(root, json_type_array);
    size_t n = array ? json_object_array_length(root) : 1;
    for (size_t i = 0; i < n; i++) {
        struct json_object *u = array ? json_object_array_get_idx(root, i) : root;
        long id = 0;
        if (json_object_is_type(u, json_type_object) && strcmp(obj_string(u, "name"), user) == 0 &&
            read_id(u, &id)) {
            *ret_id = id;
            json_object_put(root);
            return true;
        }
    }
    json_object_put(root);
    g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                "headscale users list has no user '%s' with a numeric id; was 'headscale users "
                "create %s' run?",
                user, user);
    return false;
}

char *ml_headscale_preauthkey_parse(const char *json, GError **err)
{
    /* The message must not quote the input: it holds the key. */
    struct json_object *root = json_tokener_parse(json ? json : "");
    const char *key =
        root && json_object_is_type(root, json_type_object) ? obj_string(root, "key") : "";
    /* Keys are "hskey-auth-PREFIX-SECRET" (0.28+) or hex (older): anything else is not one. */
    static const char key_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789-_";
    if (!*key || strspn(key, key_chars) != strlen(key)) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "headscale preauthkeys create printed no usable \"key\" in its JSON output");
        if (root)
            json_object_put(root);
        return NULL;
    }
    char *copy = g_strdup(key);
    json_object_put(root);
    return copy;
}

void ml_hs_node_free(struct ml_hs_node *n)
{
    if (!n)
        return;
    g_free(n->name);
    g_free(n->given_name);
    g_free(n->ipv4);
    g_free(n->ipv6);
    g_free(n);
}

static struct json_object *either(struct json_object *o, const char *snake, const char *camel)
{
    struct json_object *v = NULL;
    if (json_object_object_get_ex(o, snake, &v) || json_object_object_get_ex(o, camel, &v))
        return v;
    return NULL;
}

bool ml_headscale_nodes_parse(const char *json, GPtrArray **ret_nodes, GError **err)
{
    /* With no nodes the Go CLI marshals a nil slice: "null", not "[]". */
    g_autofree char *trimmed = g_strstrip(g_strdup(json ? json : ""));
    if (strcmp(trimmed, "null") == 0) {
        *ret_nodes = g_ptr_array_new_with_free_func((GDestroyNotify)ml_hs_node_free);
        return true;
    }
    struct json_object *root = parse_json(json, "headscale nodes list -o json", ML_ERR_GUEST, err);
    if (!root)
        return false;
    if (!json_object_is_type(root, json_type_array)) {
        json_object_put(root);
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "headscale nodes list -o json did not print a list of nodes");
        return false;
    }
    GPtrArray *nodes = g_ptr_array_new_with_free_func((GDestroyNotify)ml_hs_node_free);
    for (size_t i = 0; i < json_object_array_length(root); i++) {
        struct json_object *o = json_object_array_get_idx(root, i);
        if (!json_object_is_type(o, json_type_object))
            continue;
        struct ml_hs_node *n = g_new0(struct ml_hs_node, 1);
        n->name = g_strdup(obj_string(o, "name"));
        struct json_object *given = either(o, "given_name", "givenName");
        n->given_name = g_strdup(given && json_object_is_type(given, json_type_string)
                                     ? json_object_get_string(given)
                                     : n->name);
        n->online = obj_bool(o, "online");
        struct json_object *ips = either(o, "ip_addresses", "ipAddresses");
        if (ips && json_object_is_type(ips, json_type_array)) {
            for (size_t k = 0; k < json_object_array_length(ips); k++) {
                const char *ip = json_object_get_string(json_object_array_get_idx(ips, k));
                if (!ip)
                    continue;
                if (strchr(ip, ':') && !n->ipv6)
                    n->ipv6 = g_strdup(ip);
                else if (!strchr(ip, ':') && !n->ipv4)
                    n->ipv4 = g_strdup(ip);
            }
        }
        g_ptr_array_add(nodes, n);
    }
    json_object_put(root);
    *ret_nodes = nodes;
    return true;
}

bool ml_headscale_nodes_check(const GPtrArray *nodes, const char *name, const char *ipv4,
                              GError **err)
{
    for (guint i = 0; nodes && i < nodes->len; i++) {
        const struct ml_hs_node *n = g_ptr_array_index(nodes, i);
        if (g_strcmp0(n->name, name) != 0 && g_strcmp0(n->given_name, name) != 0)
            continue;
        if (g_strcmp0(n->ipv4, ipv4) == 0)
            return true;
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "Headscale lists %s with %s, but the node itself says %s ('tailscale ip -4')",
                    name, n->ipv4 ? n->ipv4 : "no IPv4 address", ipv4);
        return false;
    }
    g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                "'headscale nodes list' does not list %s, though it joined as %s", name, ipv4);
    return false;
}

char *ml_tailscale_conflict(const struct ml_topology *topo, int *ret_line, int *ret_column)
{
    /* Headscale numbers the tailnet from prefixes.v4 (ml_headscale_config), and tailscaled
     * routes all of 100.64.0.0/10 into tailscale0: a lab or tunnel subnet there would be
     * swallowed by the tunnel it is meant to carry. */
    return ml_subnet_conflict(topo, "the tailscale paths use", "100.64.0.0", 10, ret_line,
                              ret_column);
}

/* ---- export: Headscale on the hub VPS, Tailscale on the clients ---------------------------- */

#define EXPORT_INSTALL_PATH "/usr/local/sbin/meshlab-headscale-install"
#define EXPORT_AUTHKEY_PATH ML_TS_EXPORT_AUTHKEY_SCRIPT
#define EXPORT_UNIT_PATH "/etc/systemd/system/headscale-meshlab.service"
#define EXPORT_CA_CLIENT_PATH ML_HEADSCALE_CA_DIR "/meshlab-headscale-ca.crt"
/* Where an export of an earlier meshlab put its CA: the system's trust store. */
#define EXPORT_CA_OLD_PATH "/usr/local/share/ca-certificates/meshlab-headscale-ca.crt"
/* A drop-in for the tailscaled.service that Tailscale's Debian and Ubuntu packages install
 * (cmd/tailscaled/tailscaled.service; its EnvironmentFile=/etc/default/tailscaled is the
 * user's, so the export adds its line beside it instead). */
#define EXPORT_CA_DROPIN "/etc/systemd/system/tailscaled.service.d/meshlab-headscale-ca.conf"
#define EXPORT_AUTHKEY_CLIENT ML_TS_EXPORT_AUTHKEY_FILE
#define EXPORT_USER "meshlab"
#define EXPORT_HS "/usr/local/bin/headscale -c " ML_HEADSCALE_CONFIG_PATH

/* The hub installs the headscale release binary the lab ran, checked against the release's own
 * checksums.txt (goreleaser's "HASH  FILE" lines, which sha256sum -c reads), as `meshlab fetch`
 * checks it; a binary already there at that version is kept. */
static char *export_install_script(void)
{
    const char *url = NULL, *sums = NULL, *entry = NULL;
    if (!ml_artifact_source("headscale", &url, &sums, &entry) || !entry)
        return NULL;
    return g_strdup_printf(
        "#!/bin/sh\n"
        "# meshlab export: headscale " ML_HEADSCALE_VERSION ", the release binary the lab ran,\n"
        "# checked against the release's checksums.txt before it is installed.\n"
        "set -eu\n"
        "if [ -x /usr/local/bin/headscale ] && /usr/local/bin/headscale version 2>/dev/null |\n"
        "        grep -q '" ML_HEADSCALE_VERSION "'; then\n"
        "    exit 0\n"
        "fi\n"
        "command -v curl >/dev/null 2>&1 || {\n"
        "    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y \\\n"
        "        --no-install-recommends curl ca-certificates\n"
        "}\n"
        "tmp=$(mktemp -d)\n"
        "trap 'rm -rf \"$tmp\"' EXIT\n"
        "curl -fsSL --retry 3 -o \"$tmp/%s\" '%s'\n"
        "curl -fsSL --retry 3 -o \"$tmp/checksums.txt\" '%s'\n"
        "(cd \"$tmp\" && grep '  %s$' checksums.txt | sha256sum -c -)\n"
        "install -m 0755 \"$tmp/%s\" /usr/local/bin/headscale\n",
        entry, url, sums, entry, entry);
}

/* tailscaled gets the export's CA through its environment, and only tailscaled: Go's
 * crypto/x509 on Linux reads the system bundle, then the directories SSL_CERT_DIR lists
 * (root_unix.go); tailscale's net/tlsdial verifies the control server and DERP against that pool
 * (VerifyOptions.Roots nil), then against its baked-in Let's Encrypt root. */
static const char export_ca_dropin[] = "# meshlab export: tailscaled trusts the export's CA for "
                                       "Headscale; nothing else does.\n"
                                       "[Service]\n"
                                       "Environment=SSL_CERT_DIR=" ML_HEADSCALE_CA_DIR "\n";

/* `headscale serve` under systemd; /run/headscale holds its CLI socket (unix_socket in the
 * config), and configtest refuses a config serve would refuse, with the reason in the journal. */
static const char export_unit[] =
    "[Unit]\n"
    "Description=headscale " ML_HEADSCALE_VERSION " (meshlab export)\n"
    "Wants=network-online.target\n"
    "After=network-online.target\n"
    "\n"
    "[Service]\n"
    "RuntimeDirectory=headscale\n"
    "StateDirectory=headscale\n"
    "ExecStartPre=" EXPORT_HS " configtest\n"
    "ExecStart=" EXPORT_HS " serve\n"
    "Restart=always\n"
    "\n"
    "[Install]\n"
    "WantedBy=multi-user.target\n";

/* Run on the hub: the user if it is missing, then a reusable pre-auth key for it valid for an
 * hour, printed alone. The JSON is read as the lab reads it (ml_headscale_user_id: "id" a number
 * or a string; ml_headscale_preauthkey_parse: "key"); python3 is there because cloud-init is. */
static const char export_authkey_script[] =
    "#!/bin/sh\n"
    "# meshlab export: prints a reusable Headscale pre-auth key for the user '" EXPORT_USER "',\n"
    "# valid for one hour. Put it in " EXPORT_AUTHKEY_CLIENT " (mode 0600) on each client\n"
    "# before its `tailscale up`; it is a secret: do not paste it where others can read it.\n"
    "set -eu\n" EXPORT_HS " users create " EXPORT_USER " >/dev/null 2>&1 || true\n"
    "id=$(" EXPORT_HS " users list -o json | python3 -c '\n"
    "import json, sys\n"
    "d = json.load(sys.stdin)\n"
    "d = d if isinstance(d, list) else [d]\n"
    "print(next(str(u[\"id\"]) for u in d if u.get(\"name\") == \"" EXPORT_USER "\"))')\n" EXPORT_HS
    " preauthkeys create --user \"$id\" --reusable --expiration 1h -o json |\n"
    "    python3 -c 'import json, sys; print(json.load(sys.stdin)[\"key\"])'\n";

/* A CA made for the export and a server certificate for the hub's address signed by it (as the
 * lab's: EC P-256, serverAuth, the address as the one subjectAltName), made with openssl on this
 * host in a private directory, then checked with `openssl verify` for that address. The CA
 * vouches for that address alone (ml_headscale_ca_constraints), for ML_EXPORT_CA_DAYS: whoever
 * holds its key can impersonate the hub to the clients' tailscaled, and nothing else. The
 * server's CN is no DNS name, so openssl, which checks a CN that looks like one against the
 * constraints, takes an IP hub's certificate too. */
struct export_tls {
    char *ca_crt, *ca_key, *crt, *key;
};

static void export_tls_clear(struct export_tls *t)
{
    g_free(t->ca_crt);
    g_free(t->crt);
    if (t->ca_key)
        memset(t->ca_key, 0, strlen(t->ca_key));
    if (t->key)
        memset(t->key, 0, strlen(t->key));
    g_free(t->ca_key);
    g_free(t->key);
    memset(t, 0, sizeof(*t));
}

static bool export_tls_make(const char *host, bool is_ip, struct export_tls *ret, GError **err)
{
    g_autofree char *tmpl = ml_leftover_template("export", "");
    g_autofree char *dir = g_dir_make_tmp(tmpl, err);
    if (!dir)
        return false;
    g_autofree char *ca_key = g_build_filename(dir, "ca.key", NULL);
    g_autofree char *ca_crt = g_build_filename(dir, "ca.crt", NULL);
    g_autofree char *key = g_build_filename(dir, "server.key", NULL);
    g_autofree char *csr = g_build_filename(dir, "server.csr", NULL);
    g_autofree char *crt = g_build_filename(dir, "server.crt", NULL);
    g_autofree char *ext = g_build_filename(dir, "server.ext", NULL);
    g_autofree char *srl = g_build_filename(dir, "ca.srl", NULL);
    g_autofree char *san = g_strdup_printf("%s:%s", is_ip ? "IP" : "DNS", host);
    const char *subj = "/CN=meshlab export hub";
    g_autofree char *nc = ml_headscale_ca_constraints(is_ip ? NULL : host, is_ip ? host : NULL);
    g_autofree char *days = g_strdup_printf("%d", ML_EXPORT_CA_DAYS);
    g_autofree char *ext_text = g_strdup_printf("basicConstraints=critical,CA:FALSE\n"
                                                "keyUsage=critical,digitalSignature\n"
                                                "extendedKeyUsage=serverAuth\n"
                                                "subjectAltName=%s\n",
                                                san);
    const char *ca_ext[] = {"basicConstraints=critical,CA:TRUE,pathlen:0",
                            "keyUsage=critical,keyCertSign,cRLSign", nc, NULL};
    const char *req[] = {
        "openssl", "req",     "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes",  "-keyout", key,    "-out",    csr,  "-subj",    subj,
        NULL};
    const char *sign[] = {"openssl", "x509",   "-req",     "-in",       csr,    "-CA",
                          ca_crt,    "-CAkey", ca_key,     "-CAserial", srl,    "-CAcreateserial",
                          "-days",   days,     "-extfile", ext,         "-out", crt,
                          NULL};
    const char *verify[] = {
        "openssl", "verify", "-CAfile", ca_crt, is_ip ? "-verify_ip" : "-verify_hostname",
        host,      crt,      NULL};
    bool ok = g_file_set_contents(ext, ext_text, -1, err) &&
              ml_ec_selfsigned("/CN=meshlab export CA", ML_EXPORT_CA_DAYS, ca_ext, ca_key, ca_crt,
                               err) &&
              ml_spawn(req, NULL, err) && ml_spawn(sign, NULL, err) &&
              ml_spawn(verify, NULL, err) && g_file_get_contents(ca_crt, &ret->ca_crt, NULL, err) &&
              g_file_get_contents(ca_key, &ret->ca_key, NULL, err) &&
              g_file_get_contents(crt, &ret->crt, NULL, err) &&
              g_file_get_contents(key, &ret->key, NULL, err);
    ml_rundir_remove(dir);
    if (!ok) {
        export_tls_clear(ret);
        g_prefix_error(err, "the export's TLS certificate for Headscale: ");
    }
    return ok;
}

char *ml_headscale_export_url(const char *hub_address)
{
    struct in6_addr a6;
    bool v6 = inet_pton(AF_INET6, hub_address, &a6) == 1;
    return g_strdup_printf(v6 ? "https://[%s]:%d" : "https://%s:%d", hub_address, ML_PORT_HTTPS);
}

bool ml_tailscale_export(struct ml_bundle *b, GError **err)
{
    const struct ml_topology *t = b->topo;
    const char *addr = b->hub_address;
    struct in_addr a4;
    struct in6_addr a6;
    bool v4 = inet_pton(AF_INET, addr, &a4) == 1, v6 = inet_pton(AF_INET6, addr, &a6) == 1;
    if (!v4 && !v6 && !valid_hostname(addr)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "--hub-address %s is neither an IP address nor a host name Headscale's "
                    "certificate can name",
                    addr);
        return false;
    }
    g_autofree char *install = export_install_script();
    if (!install) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "no release source for headscale (a meshlab bug)");
        return false;
    }
    struct export_tls tls = {0};
    if (!export_tls_make(addr, v4 || v6, &tls, err))
        return false;
    g_autofree char *url = ml_headscale_export_url(addr);
    g_autofree char *config = ml_headscale_config(v4 ? addr : NULL, url);
    g_autofree char *policy = ml_headscale_policy();
    size_t hub = t->hub;
    ml_bundle_add(b, "headscale/hub/config.yaml", g_strdup(config), 0, hub,
                  ML_HEADSCALE_CONFIG_PATH,
                  "Headscale's config: the control server and its embedded DERP relay (the only "
                  "DERP region the clients get) on :443, STUN on UDP 3478");
    ml_bundle_add(b, "headscale/hub/policy.hujson", g_strdup(policy), 0, hub,
                  ML_HEADSCALE_POLICY_PATH, "Headscale's policy: every node may reach every node");
    ml_bundle_add(b, "headscale/hub/server.crt", g_strdup(tls.crt), 0, hub,
                  ML_HEADSCALE_TLS_DIR "/server.crt", "the hub's TLS certificate, for the address");
    ml_bundle_add(b, "headscale/hub/server.key", g_strdup(tls.key), ML_BUNDLE_SECRET, hub,
                  ML_HEADSCALE_TLS_DIR "/server.key", "its private key");
    ml_bundle_add(b, "headscale/ca.crt", g_strdup(tls.ca_crt), 0, SIZE_MAX, NULL,
                  "the CA that signed it, made for this export: it vouches for the hub's address "
                  "alone, for " G_STRINGIFY(ML_EXPORT_CA_DAYS) " days");
    ml_bundle_add(b, "headscale/ca.key", g_strdup(tls.ca_key), ML_BUNDLE_SECRET, SIZE_MAX, NULL,
                  "the CA's key: keep it offline, it never goes to the VPS; with it anyone can "
                  "pose as the hub to the clients' tailscaled (docs/export.md)");
    ml_bundle_add(b, "headscale/hub/meshlab-headscale-install", g_strdup(install), 0, hub,
                  EXPORT_INSTALL_PATH,
                  "installs headscale " ML_HEADSCALE_VERSION " from its release, checked against "
                  "the release's checksums.txt");
    ml_bundle_add(b, "headscale/hub/headscale-meshlab.service", g_strdup(export_unit), 0, hub,
                  EXPORT_UNIT_PATH, "the systemd unit that runs headscale");
    ml_bundle_add(b, "headscale/hub/meshlab-headscale-authkey", g_strdup(export_authkey_script), 0,
                  hub, EXPORT_AUTHKEY_PATH,
                  "run on the hub: makes the user and prints a pre-auth key for the clients");
    g_autofree char *server_cn =
        g_strdup_printf("openssl verify against headscale/ca.crt for %s", addr);
    ml_bundle_checked(b, "headscale/hub/server.crt", server_cn);
    ml_bundle_hub_file(b, ML_HEADSCALE_CONFIG_PATH, config, 0644);
    ml_bundle_hub_file(b, ML_HEADSCALE_POLICY_PATH, policy, 0644);
    ml_bundle_hub_file(b, ML_HEADSCALE_TLS_DIR "/server.crt", tls.crt, 0644);
    ml_bundle_hub_file(b, ML_HEADSCALE_TLS_DIR "/server.key", tls.key, 0600);
    ml_bundle_hub_file(b, EXPORT_INSTALL_PATH, install, 0755);
    ml_bundle_hub_file(b, EXPORT_UNIT_PATH, export_unit, 0644);
    ml_bundle_hub_file(b, EXPORT_AUTHKEY_PATH, export_authkey_script, 0700);
    ml_bundle_hub_package(b, "python3", "python3");
    ml_bundle_hub_command(b, EXPORT_INSTALL_PATH);
    ml_bundle_hub_command(b, "systemctl daemon-reload && systemctl enable --now "
                             "headscale-meshlab.service");
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (i == hub)
            continue;
        const char *name = t->nodes[i].name;
        g_autofree char *rel = g_strdup_printf("headscale/%s/meshlab-headscale-ca.crt", name);
        ml_bundle_add(b, rel, g_strdup(tls.ca_crt), 0, i, EXPORT_CA_CLIENT_PATH,
                      "the export's CA, which tailscaled alone trusts, to reach Headscale (not "
                      "the system's trust store)");
        g_autofree char *dropin = g_strdup_printf("headscale/%s/meshlab-headscale-ca.conf", name);
        ml_bundle_add(b, dropin, g_strdup(export_ca_dropin), 0, i, EXPORT_CA_DROPIN,
                      "tailscaled's drop-in: SSL_CERT_DIR names the CA's directory, so Go's TLS "
                      "in tailscaled reads it beside the system's roots");
        ml_bundle_client_command(
            b, i,
            "command -v tailscale >/dev/null || { echo 'install Tailscale " ML_TAILSCALE_VERSION
            " (the lab ran it) first: https://tailscale.com/download/linux' >&2; exit 1; }");
        ml_bundle_client_command(b, i,
                                 "if [ -e " EXPORT_CA_OLD_PATH " ]; then rm -f " EXPORT_CA_OLD_PATH
                                 " && update-ca-certificates --fresh >/dev/null; fi");
        ml_bundle_client_command(b, i, "systemctl daemon-reload && systemctl restart tailscaled");
        ml_bundle_client_command(b, i,
                                 "[ -s " EXPORT_AUTHKEY_CLIENT
                                 " ] || { echo 'run " EXPORT_AUTHKEY_PATH
                                 " on the hub and put the key it prints in " EXPORT_AUTHKEY_CLIENT
                                 " (mode 0600)' >&2; exit 1; }");
        g_autofree char *up = ml_tailscale_up_command(url, name, EXPORT_AUTHKEY_CLIENT);
        ml_bundle_client_command(b, i, up);
    }
    export_tls_clear(&tls);
    return true;
}
