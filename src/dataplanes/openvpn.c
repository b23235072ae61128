/* openvpn-hub: OpenVPN 2.6 (Debian 12's package) in server mode on the hub, the
 * two clients connecting to it over UDP with an AES-256-GCM data channel. No
 * client-to-client: a packet from client-a leaves the server's tun device into
 * the hub's kernel, which routes it back into the same device towards client-b,
 * so the hub relays every byte in userspace twice, beside wireguard-go-hub.
 *
 * Each node makes its key and a self-signed certificate inside itself; only the
 * SHA-256 fingerprint comes to the host. The server pins every client's
 * (a <peer-fingerprint> list: openvpn-examples(5), "Small OpenVPN setup with
 * peer-fingerprint", is that setup with several clients), each client pins the
 * server's. ccd-exclusive with one client-config-dir file per certificate CN
 * gives each client a fixed address by ifconfig-push and refuses any other CN.
 * Everything lives under /run (tmpfs): the key never reaches the disk. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/keys.h"
#include "core/leftovers.h"
#include "core/rundir.h"
#include "core/spawn.h"
#include "core/util.h"
#include "dataplanes/bundle.h"
#include "dataplanes/openvpn.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "dataplanes/wireguard.h"
#include "topology/plan.h"
#include "virt/agent.h"

#define DEV "ovpn0"
#define DIR "/run/openvpn-meshlab"
#define SUBNET "10.17.0." /* /24: each node keeps the last octet of its tunnel_address */
#define CIPHER "AES-256-GCM"
#define READ_GAP_S "2.5" /* between the two reads of the status file; it is rewritten each 1 s */

extern const struct ml_dataplane ml_dataplane_openvpn;

char *ml_openvpn_address(const struct ml_topology *t, size_t node, char buf[16])
{
    return ml_wg_overlay_address(t, node, SUBNET, buf);
}

static size_t ports(const struct ml_topology *t, struct ml_port *ret, size_t max)
{
    (void)t;
    if (max < 1)
        return 0;
    ret[0] = (struct ml_port){.what = "OpenVPN",
                              .proto = ML_PROTO_UDP,
                              .port = ML_OPENVPN_PORT,
                              .open = true,
                              .dataplane = ml_dataplane_openvpn.name};
    return 1;
}

/* ---- the status file (status-version 2 or 3: multi.c, multi_print_status) ---- */

static bool copy_field(char *dst, size_t size, const char *src)
{
    return g_strlcpy(dst, src, size) < size;
}

static bool number(const char *s, long long *ret)
{
    if (!*s || !g_ascii_isdigit(*s))
        return false;
    char *end = NULL;
    errno = 0;
    long long v = g_ascii_strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *ret = v;
    return true;
}

/* CLIENT_LIST,CN,Real Address,Virtual Address,Virtual IPv6 Address,Bytes Received,Bytes Sent,
 * Connected Since,Connected Since (time_t),Username,Client ID,Peer ID[,Data Channel Cipher] */
static bool client_row(char **f, guint n, struct ml_openvpn_client *c)
{
    if (n < 12 || n > 13)
        return false;
    *c = (struct ml_openvpn_client){0};
    return *f[1] && copy_field(c->name, sizeof c->name, f[1]) &&
           copy_field(c->real, sizeof c->real, f[2]) && copy_field(c->virt, sizeof c->virt, f[3]) &&
           number(f[5], &c->bytes_received) && number(f[6], &c->bytes_sent) &&
           number(f[8], &c->since) && (n < 13 || copy_field(c->cipher, sizeof c->cipher, f[12]));
}

static bool status_line(const char *line, char sep, struct ml_openvpn_status *s, bool *ret_end)
{
    char seps[2] = {sep, 0};
    g_auto(GStrv) f = g_strsplit(line, seps, -1);
    guint n = g_strv_length(f);
    if (n == 0) /* an empty line before END: g_strsplit gives no field at all */
        return false;
    if (!strcmp(f[0], "END"))
        return n == 1 && (*ret_end = true);
    if (!strcmp(f[0], "TITLE") || !strcmp(f[0], "HEADER") || !strcmp(f[0], "ROUTING_TABLE"))
        return n >= 2;
    if (!strcmp(f[0], "TIME"))
        return n == 3 && number(f[2], &s->time);
    if (!strcmp(f[0], "GLOBAL_STATS")) {
        long long v;
        if (n != 3)
            return false;
        if (strcmp(f[1], "dco_enabled") != 0)
            return true;
        if (!number(f[2], &v) || v > 1)
            return false;
        s->dco = (int)v;
        return true;
    }
    if (!strcmp(f[0], "CLIENT_LIST"))
        return s->n_clients < ML_OPENVPN_CLIENTS_MAX &&
               client_row(f, n, &s->clients[s->n_clients++]);
    return false;
}

bool ml_openvpn_status_parse(const char *text, struct ml_openvpn_status *ret)
{
    struct ml_openvpn_status s = {.time = -1, .dco = -1};
    *ret = (struct ml_openvpn_status){.time = -1, .dco = -1};
    if (!text || strncmp(text, "TITLE", 5) != 0 || (text[5] != ',' && text[5] != '\t'))
        return false;
    char sep = text[5];
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    bool end = false;
    for (size_t i = 0; lines[i]; i++) {
        size_t len = strlen(lines[i]); /* "\r\n" where the server writes it; not other space: */
        if (len && lines[i][len - 1] == '\r') /* a tab ends a status-version 3 field */
            lines[i][len - 1] = 0;
        if (!*lines[i] && (end || !lines[i + 1]))
            continue;
        if (end || !status_line(lines[i], sep, &s, &end))
            return false;
    }
    if (!end || s.time < 0)
        return false;
    *ret = s;
    return true;
}

const struct ml_openvpn_client *ml_openvpn_status_client(const struct ml_openvpn_status *s,
                                                         const char *name)
{
    for (size_t i = 0; i < s->n_clients; i++)
        if (!strcmp(s->clients[i].name, name))
            return &s->clients[i];
    return NULL;
}

bool ml_openvpn_fingerprint_parse(const char *text, char ret[96])
{
    const char *eq = text ? strchr(text, '=') : NULL;
    if (!eq || g_ascii_strncasecmp(text, "sha256 Fingerprint=", eq + 1 - text) != 0)
        return false;
    g_autofree char *fp = g_strstrip(g_strdup(eq + 1));
    if (strlen(fp) != 95)
        return false;
    for (size_t i = 0; i < 95; i++)
        if (i % 3 == 2 ? fp[i] != ':' : !g_ascii_isxdigit(fp[i]))
            return false;
    memcpy(ret, fp, 96);
    return true;
}

/* ---- the configurations, pure (openvpn(8) of 2.6.14, each option there) ---- */

char *ml_openvpn_keygen_command(const struct ml_topology *t, size_t node, const char *dir)
{
    g_autofree char *subj = g_strdup_printf("/CN=%s", t->nodes[node].name);
    g_autofree char *q_subj = g_shell_quote(subj);
    g_autofree char *q_dir = g_shell_quote(dir);
    return g_strdup_printf(
        "set -e; umask 077; d=%s; "
        "if [ -s \"$d/pid\" ]; then kill \"$(cat \"$d/pid\")\" 2>/dev/null && sleep 1 || true; fi; "
        "rm -rf \"$d\"; mkdir -p \"$d/ccd\"; "
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 "
        "-days 3650 -subj %s -keyout \"$d/node.key\" -out \"$d/node.crt\" 2>/dev/null; "
        "openssl x509 -fingerprint -sha256 -noout -in \"$d/node.crt\"",
        q_dir, q_subj);
}

/* Where a configuration's files are: its key and certificate (in keydir, or inline when keydir
 * is NULL: crt and key), its pid and status files (in rundir; NULL: none), the server's
 * client-config-dir (ccd). The lab keeps them all in one directory under /run; an export keeps
 * the keys in /etc and the run files under /run, where its unit makes them. */
struct files {
    const char *keydir, *crt, *key;
    const char *rundir;
    const char *ccd;
};

/* What both ends share: the cipher, no DCO (Debian 12's kernel has no ovpn-dco
 * module; said here so the claim "userspace" never depends on it), the key. */
static void common(GString *c, const struct files *f)
{
    g_string_append(c, "dev " DEV "\n"
                       "dev-type tun\n"
                       "proto udp4\n"
                       "data-ciphers " CIPHER "\n"
                       "disable-dco\n");
    if (f->keydir)
        g_string_append_printf(c, "cert %s/node.crt\nkey %s/node.key\n", f->keydir, f->keydir);
    else
        g_string_append_printf(c, "<cert>\n%s</cert>\n<key>\n%s</key>\n", f->crt, f->key);
    if (f->rundir)
        g_string_append_printf(c, "writepid %s/pid\n", f->rundir);
    g_string_append(c, "verb 3\n");
}

static char *render_server(const struct ml_topology *t, const char *title, const struct files *f,
                           char *const *fp)
{
    char hub[16];
    size_t h = t->hub;
    g_autofree char *head = ml_comment_text(title);
    GString *c = g_string_new(NULL);
    g_string_append_printf(c, "# %s: openvpn-hub server on %s\n", head, t->nodes[h].name);
    common(c, f);
    /* The server helper would take .1; these lines are what it expands to in
     * topology subnet, with the hub's own address. */
    g_string_append_printf(c,
                           "mode server\n"
                           "tls-server\n"
                           "port %u\n"
                           "topology subnet\n"
                           "ifconfig %s 255.255.255.0\n"
                           "push \"topology subnet\"\n"
                           "push \"route-gateway %s\"\n"
                           "client-config-dir %s\n"
                           "ccd-exclusive\n"
                           "dh none\n"
                           "keepalive 1 10\n"
                           "status %s/status 1\n"
                           "status-version 2\n"
                           "<peer-fingerprint>\n",
                           ML_OPENVPN_PORT, ml_openvpn_address(t, h, hub), hub, f->ccd, f->rundir);
    for (size_t i = 0; i < t->n_nodes; i++)
        if (i != h)
            g_string_append_printf(c, "%s\n", fp[i]);
    g_string_append(c, "</peer-fingerprint>\n");
    return g_string_free(c, FALSE);
}

static char *render_client(const struct ml_topology *t, size_t node, const char *title,
                           const struct files *f, const char *remote, const char *hub_fp)
{
    const struct ml_node *hub = &t->nodes[t->hub];
    g_autofree char *head = ml_comment_text(title);
    GString *c = g_string_new(NULL);
    g_string_append_printf(c, "# %s: %s, through openvpn-hub on %s\n", head, t->nodes[node].name,
                           hub->name);
    common(c, f);
    g_string_append_printf(c,
                           "client\n"
                           "nobind\n"
                           "remote %s %u\n"
                           "peer-fingerprint %s\n",
                           remote, ML_OPENVPN_PORT, hub_fp);
    return g_string_free(c, FALSE);
}

char *ml_openvpn_render_server(const struct ml_topology *t, const char *dir, char *const *fp)
{
    g_autofree char *title = g_strdup_printf("meshlab lab %s", t->name);
    g_autofree char *ccd = g_strdup_printf("%s/ccd", dir);
    const struct files f = {.keydir = dir, .rundir = dir, .ccd = ccd};
    return render_server(t, title, &f, fp);
}

char *ml_openvpn_render_client(const struct ml_topology *t, size_t node, const char *dir,
                               const char *hub_fp)
{
    char endpoint[16];
    g_autofree char *title = g_strdup_printf("meshlab lab %s", t->name);
    const struct files f = {.keydir = dir, .rundir = dir};
    return render_client(t, node, title, &f, ml_ip_str(t->nodes[t->hub].address, endpoint), hub_fp);
}

/* The hub's one fixed address per client (ccd-exclusive refuses any other CN). */
static char *ccd_line(const struct ml_topology *t, size_t node)
{
    char addr[16];
    return g_strdup_printf("ifconfig-push %s 255.255.255.0", ml_openvpn_address(t, node, addr));
}

char *ml_openvpn_start_command(const struct ml_topology *t, size_t node, const char *dir)
{
    g_autofree char *q_dir = g_shell_quote(dir);
    GString *c = g_string_new(NULL);
    g_string_append_printf(c, "set -e; umask 077; d=%s; cat > \"$d/openvpn.conf\"; ", q_dir);
    if (node == t->hub) {
        for (size_t i = 0; i < t->n_nodes; i++) {
            if (i == node)
                continue;
            g_autofree char *q_name = g_shell_quote(t->nodes[i].name);
            g_autofree char *line = ccd_line(t, i);
            g_string_append_printf(c, "echo '%s' > \"$d/ccd/\"%s; ", line, q_name);
        }
        /* Routing back out of the device a packet came in by, the kernel would
         * send the client an ICMP redirect through the tunnel: bytes on the
         * hub's NIC that are not the payload's (seen in tests/openvpn_netns.sh). */
        g_string_append(c, "sysctl -q -w net.ipv4.ip_forward=1 net.ipv4.conf.all.send_redirects=0 "
                           "net.ipv4.conf.default.send_redirects=0; ");
    }
    g_string_append(c, "openvpn --daemon openvpn-meshlab --log \"$d/log\" "
                       "--config \"$d/openvpn.conf\"");
    return g_string_free(c, FALSE);
}

/* ---- the lab ---- */

static bool keys(struct ml_lab *lab, char **fp, GError **err)
{
    const struct ml_topology *t = lab->topo;
    char *cmds[ML_MAX_NODES] = {0};
    char *out[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        cmds[i] = ml_openvpn_keygen_command(t, i, DIR);
    bool ok = ml_lab_run_parallel(lab, NULL, (const char *const *)cmds, NULL, 60, out,
                                  "making an OpenVPN key and certificate", err);
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        if (ok) {
            fp[i] = g_malloc(96);
            if (!ml_openvpn_fingerprint_parse(out[i], fp[i])) {
                g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                            "%s returned something that is not a certificate's SHA-256 "
                            "fingerprint from openssl x509 -fingerprint: \"%s\"; see whether "
                            "the openssl package is in its image",
                            t->nodes[i].name, out[i] ? g_strstrip(out[i]) : "");
                ok = false;
            }
        }
        g_free(cmds[i]);
        g_free(out[i]);
    }
    return ok;
}

/* The hub first, so the clients' first packets find it listening. */
static bool configure(struct ml_lab *lab, char **fp, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t hub = t->hub;
    for (size_t k = 0; k < lab->plan->n_guests; k++) {
        size_t i = (hub + k) % lab->plan->n_guests;
        g_autofree char *conf = i == hub ? ml_openvpn_render_server(t, DIR, fp)
                                         : ml_openvpn_render_client(t, i, DIR, fp[hub]);
        g_autofree char *cmd = ml_openvpn_start_command(t, i, DIR);
        g_autofree char *out = ml_agent_run(lab->dom[i], cmd, conf, 60, err);
        if (!out) {
            g_prefix_error(
                err, "starting openvpn on %s (its log: " DIR "/log there): ", t->nodes[i].name);
            return false;
        }
        if (i == hub)
            ml_progress("openvpn", "hub %s: openvpn server " DEV " listening on UDP %u",
                        t->nodes[hub].name, ML_OPENVPN_PORT);
    }
    return true;
}

static bool setup(struct ml_lab *lab, struct json_object *state, GError **err)
{
    char *fp[ML_MAX_NODES] = {0};
    double t0 = ml_now();
    bool ok = keys(lab, fp, err) && configure(lab, fp, err);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_free(fp[i]);
    char target[16];
    ml_openvpn_address(lab->topo, lab->topo->measure.server, target);
    struct in_addr to;
    inet_aton(target, &to);
    if (!ok || !ml_lab_wait_ping(lab, to, 120, "OpenVPN through the hub", err))
        return false;
    double setup_s = ml_now() - t0;
    json_object_object_add(state, "setup_s", json_object_new_double(setup_s));
    ml_progress("openvpn", "%s answered through the hub %.1f s after the first key", target,
                setup_s);
    return true;
}

/* The whole status file: read again while the server is rewriting it. */
#define READ_STATUS                                                                                \
    "for i in 1 2 3 4 5; do s=$(cat " DIR "/status); case \"$s\" in *END) break;; esac; "          \
    "sleep 0.2; done; printf '%s\\n' \"$s\""

/* The hub's own view: its status file twice, READ_GAP_S apart, and its daemon. */
static void observe(struct ml_lab *lab, struct ml_evidence *ev)
{
    g_autoptr(GError) e = NULL;
    virDomainPtr hub = ml_lab_dom(lab, lab->topo->hub);
    ev->own[0] = ml_agent_run(hub, READ_STATUS, NULL, 15, &e);
    if (ev->own[0])
        ev->own[1] = ml_agent_run(hub, "sleep " READ_GAP_S "; " READ_STATUS, NULL, 15, &e);
    if (ev->own[1])
        ev->own[2] = ml_agent_run(hub, "pgrep -x openvpn || true", NULL, 15, &e);
    if (!ev->own[2])
        ev->own_error =
            g_strdup_printf("cannot read the hub's OpenVPN status: %s", ml_agent_error_text(e));
}

static char *describe(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("OpenVPN 2.6 (UDP, " CIPHER ", userspace), %s to %s through the "
                           "server on the hub (%s), routed by the hub's kernel",
                           t->nodes[t->measure.client].name,
                           ml_openvpn_address(t, t->measure.server, addr), t->nodes[t->hub].name);
}

static struct in_addr target(const struct ml_lab *lab)
{
    return ml_wg_overlay_target(lab->topo, lab->topo->measure.server, SUBNET);
}

/* One end in both reads: connected with its fixed address, the cipher claimed,
 * and bytes from it arriving between the reads. */
static bool end_ok(const struct ml_topology *t, size_t node, const struct ml_openvpn_status *a,
                   const struct ml_openvpn_status *b, GString *sentence)
{
    const char *name = t->nodes[node].name;
    char want[16];
    ml_openvpn_address(t, node, want);
    const struct ml_openvpn_client *x = ml_openvpn_status_client(a, name);
    const struct ml_openvpn_client *y = ml_openvpn_status_client(b, name);
    if (!x || !y) {
        g_string_append_printf(sentence, "%s is not connected to the hub's server; ", name);
        return false;
    }
    bool addr = !strcmp(y->virt, want);
    bool cipher = !strcmp(y->cipher, CIPHER);
    long long grew = y->bytes_received - x->bytes_received;
    g_string_append_printf(sentence, "%s connected as %s%s%s, cipher %s, %lld bytes in; ", name,
                           *y->virt ? y->virt : "(no address)", addr ? "" : " not ",
                           addr ? "" : want, *y->cipher ? y->cipher : "(none)", grew);
    return addr && cipher && grew > 0;
}

/* The hub's server lists both ends connected with their fixed addresses and the
 * cipher claimed, both sent it bytes between the two reads, it runs in userspace
 * (dco_enabled 0), an openvpn process runs on the hub, and the client's route to
 * the target enters ovpn0. */
static bool verify(const struct ml_topology *t, const struct ml_evidence *ev, GString *sentence)
{
    if (ev->own_error) {
        g_string_append_printf(sentence, "%s; ", ev->own_error);
        return false;
    }
    struct ml_openvpn_status a, b;
    if (!ev->own[0] || !ev->own[1] || !ev->own[2] || !ml_openvpn_status_parse(ev->own[0], &a) ||
        !ml_openvpn_status_parse(ev->own[1], &b)) {
        g_string_append(sentence, "the hub's OpenVPN status file is not one this reads; ");
        return false;
    }
    bool fresh = b.time > a.time;
    if (!fresh)
        g_string_append_printf(sentence,
                               "the status file was not rewritten between the reads "
                               "(TIME %lld, then %lld); ",
                               a.time, b.time);
    bool ends = end_ok(t, t->measure.client, &a, &b, sentence);
    ends = end_ok(t, t->measure.server, &a, &b, sentence) && ends;
    bool user = b.dco == 0;
    g_string_append_printf(sentence, "data channel offload %s; ",
                           b.dco == 0   ? "off (userspace)"
                           : b.dco == 1 ? "ON"
                                        : "not reported");
    g_autofree char *pids = g_strstrip(g_strdup(ev->own[2]));
    g_strdelimit(pids, "\n", ' ');
    bool daemon = *pids && g_ascii_isdigit(*pids);
    g_string_append_printf(sentence, "openvpn %s%s%s on the hub; ",
                           daemon ? "runs (pid " : "does not run", daemon ? pids : "",
                           daemon ? ")" : "");
    return ml_route_enters(&ev->rt, DEV, sentence) && fresh && ends && user && daemon;
}

static char *conflict(const struct ml_topology *t, int *ret_line, int *ret_column)
{
    return ml_wg_overlay_conflict(t, "openvpn-hub", SUBNET, NULL, ret_line, ret_column);
}

/* P_DATA_V2 with an AEAD cipher (OpenVPN's ssl_pkt.h and crypto.c openvpn_encrypt_aead;
 * the kernel's ovpn proto.h names the same layout: OVPN_OPCODE_SIZE 4,
 * OVPN_NONCE_WIRE_SIZE 4, a 16-byte AEAD tag): 1 byte opcode and key id + 3 bytes peer
 * id, the 4-byte packet id (the nonce's head), the 16-byte GCM tag; then UDP 8 and
 * IPv4 20. GCM is a stream mode: no padding. tun: no inner Ethernet. The inner MTU
 * is TCP's clamped size: mssfix's default "1492 mtu" counts the whole outer IP packet
 * (openvpn(8), --mssfix). tests/openvpn_netns.sh saw both: a keepalive is an 82-byte
 * frame (14 + 28 + 24 + its 16-byte message), a full TCP segment a 1506-byte one. */
static const struct ml_encap encap_openvpn = {
    .name = "OpenVPN",
    .inner_mtu = 1492 - (20 + 8 + 4 + 4 + 16),
    .overhead = 20 + 8 + 4 + 4 + 16,
    .how = "OpenVPN UDP, AES-256-GCM, P_DATA_V2: 20 IP + 8 UDP + 4 opcode/peer id + 4 "
           "packet id + 16 tag = 52 bytes, no padding, no inner Ethernet (tun)",
};

/* ---- export: the same server and clients for a VPS ---- */

#define EXPORT_DIR "/etc/openvpn/meshlab"
#define EXPORT_UNIT_PATH "/etc/systemd/system/meshlab-openvpn.service"
#define EXPORT_CLIENT_PATH "/etc/openvpn/client/meshlab.conf"

/* The server under systemd: its key and configuration in /etc, its pid and status files in the
 * run directory the unit makes, where the lab's (and export --verify's) view reads them. */
static const char export_unit[] =
    "[Unit]\n"
    "Description=OpenVPN server, openvpn-hub (meshlab export)\n"
    "Wants=network-online.target\n"
    "After=network-online.target\n"
    "\n"
    "[Service]\n"
    "RuntimeDirectory=openvpn-meshlab\n"
    "ExecStart=/usr/sbin/openvpn --config " EXPORT_DIR "/server.conf\n"
    "Restart=on-failure\n"
    "\n"
    "[Install]\n"
    "WantedBy=multi-user.target\n";

/* A key and a self-signed certificate for CN name, made with openssl on this host as the lab's
 * guests make theirs (ml_openvpn_keygen_command), and its SHA-256 fingerprint. */
static bool export_keypair(const char *name, char **ret_crt, char **ret_key, char ret_fp[96],
                           GError **err)
{
    g_autofree char *tmpl = ml_leftover_template("export", "");
    g_autofree char *dir = g_dir_make_tmp(tmpl, err);
    if (!dir)
        return false;
    g_autofree char *crt = g_build_filename(dir, "node.crt", NULL);
    g_autofree char *key = g_build_filename(dir, "node.key", NULL);
    g_autofree char *subj = g_strdup_printf("/CN=%s", name);
    const char *fpr[] = {"openssl", "x509", "-fingerprint", "-sha256", "-noout", "-in", crt, NULL};
    g_autofree char *fp_out = NULL;
    bool ok = ml_ec_selfsigned(subj, 3650, NULL, key, crt, err) && ml_spawn(fpr, &fp_out, err) &&
              g_file_get_contents(crt, ret_crt, NULL, err) &&
              g_file_get_contents(key, ret_key, NULL, err);
    if (ok && !ml_openvpn_fingerprint_parse(fp_out, ret_fp)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "openssl x509 -fingerprint printed no SHA-256 fingerprint: \"%s\"",
                    g_strstrip(fp_out));
        ok = false;
    }
    ml_rundir_remove(dir);
    return ok;
}

/* The export hook: each node's key and certificate made here, the hub's server configuration as
 * the lab's (its key files in /etc/openvpn/meshlab, a client-config-dir file per client) with
 * a unit, each client's configuration with its certificate and key inline and the hub's address,
 * for Debian's openvpn-client@ unit (and OpenVPN's apps: one .conf file). */
static bool export_openvpn(struct ml_bundle *b, GError **err)
{
    const struct ml_topology *t = b->topo;
    if (strchr(b->hub_address, ':')) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "the lab ran OpenVPN over IPv4 (proto udp4), and --hub-address %s is an IPv6 "
                    "address; give the hub's IPv4 address or a name that resolves to it",
                    b->hub_address);
        return false;
    }
    char *crt[ML_MAX_NODES] = {0}, *key[ML_MAX_NODES] = {0}, *fp[ML_MAX_NODES] = {0};
    bool ok = true;
    for (size_t i = 0; i < t->n_nodes && ok; i++) {
        fp[i] = g_malloc0(96);
        ok = export_keypair(t->nodes[i].name, &crt[i], &key[i], fp[i], err);
    }
    if (ok) {
        size_t h = t->hub;
        const struct files sf = {
            .keydir = EXPORT_DIR, .rundir = "/run/openvpn-meshlab", .ccd = EXPORT_DIR "/ccd"};
        char *server = render_server(t, b->label, &sf, fp);
        ml_bundle_hub_file(b, EXPORT_DIR "/server.conf", server, 0600);
        ml_bundle_hub_file(b, EXPORT_DIR "/node.crt", crt[h], 0644);
        ml_bundle_hub_file(b, EXPORT_DIR "/node.key", key[h], 0600);
        ml_bundle_hub_file(b, EXPORT_UNIT_PATH, export_unit, 0644);
        ml_bundle_add(b, "openvpn/hub/server.conf", server, 0, h, EXPORT_DIR "/server.conf",
                      "the hub's OpenVPN server: UDP " G_STRINGIFY(
                          ML_OPENVPN_PORT) ", " CIPHER
                                           ", each client pinned by its certificate's fingerprint");
        ml_bundle_add(b, "openvpn/hub/node.crt", g_strdup(crt[h]), 0, h, EXPORT_DIR "/node.crt",
                      "the hub's certificate");
        ml_bundle_add(b, "openvpn/hub/node.key", g_strdup(key[h]), ML_BUNDLE_SECRET, h,
                      EXPORT_DIR "/node.key", "its private key");
        ml_bundle_add(b, "openvpn/hub/meshlab-openvpn.service", g_strdup(export_unit), 0, h,
                      EXPORT_UNIT_PATH, "the systemd unit that runs the server");
        for (size_t i = 0; i < t->n_nodes; i++) {
            if (i == h)
                continue;
            const char *name = t->nodes[i].name;
            g_autofree char *ccd_path = g_strdup_printf(EXPORT_DIR "/ccd/%s", name);
            g_autofree char *line = ccd_line(t, i);
            g_autofree char *ccd = g_strdup_printf("%s\n", line);
            ml_bundle_hub_file(b, ccd_path, ccd, 0644);
            g_autofree char *ccd_rel = g_strdup_printf("openvpn/hub/ccd/%s", name);
            g_autofree char *ccd_what = g_strdup_printf("%s's fixed address on the hub", name);
            ml_bundle_add(b, ccd_rel, g_strdup(ccd), 0, h, ccd_path, ccd_what);
            const struct files cf = {.crt = crt[i], .key = key[i]};
            char *client = render_client(t, i, b->label, &cf, b->hub_address, fp[h]);
            g_autofree char *rel = g_strdup_printf("openvpn/%s/meshlab.conf", name);
            g_autofree char *what =
                g_strdup_printf("%s's OpenVPN client, its certificate and key inline (also "
                                "what OpenVPN's apps import)",
                                name);
            ml_bundle_add(b, rel, client, ML_BUNDLE_SECRET, i, EXPORT_CLIENT_PATH, what);
            ml_bundle_client_command(b, i, "systemctl enable --now openvpn-client@meshlab");
        }
        ml_bundle_hub_package(b, "openvpn", "openvpn");
        ml_bundle_hub_sysctl(b, "net.ipv4.ip_forward", "1");
        /* Routing back out of ovpn0, the kernel would send ICMP redirects through the tunnel
         * (the lab's start command turns them off for the same reason). */
        ml_bundle_hub_sysctl(b, "net.ipv4.conf.all.send_redirects", "0");
        ml_bundle_hub_sysctl(b, "net.ipv4.conf.default.send_redirects", "0");
        ml_bundle_hub_command(b, "systemctl daemon-reload && systemctl enable --now "
                                 "meshlab-openvpn.service");
    }
    ml_bundle_keys_free(key, crt);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_free(fp[i]);
    return ok;
}

extern const struct ml_path_ops ml_path_openvpn_hub;

const struct ml_dataplane ml_dataplane_openvpn = {
    .name = "openvpn",
    .paths = {&ml_path_openvpn_hub},
    .daemons = {{"openvpn", "openvpn --version"}},
    .ports = ports,
    .conflict = conflict,
    .setup = setup,
    .observe = observe,
    .export = export_openvpn,
};

const struct ml_path_ops ml_path_openvpn_hub = {
    .name = "openvpn-hub",
    .dataplane = &ml_dataplane_openvpn,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_CARRIES,
    .encap = &encap_openvpn,
    .describe = describe,
    .target = target,
    .verify = verify,
};
