#include "topology/topology.h"
#include "topology/name.h"
#include "topology/ports.h"
#include "core/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define MAX_FILE_BYTES (1024 * 1024)
/* libvirt objects are named "meshlab-<lab>-<node>"; keep them short enough to be safe as
 * domain, volume and file names everywhere. */
#define DOMAIN_NAME_MAX 64
#define MAX_KEYS 12
#define MAX_DEPTH 16

#define DEFAULT_IDLE_S 2
#define DEFAULT_PING_INTERVAL_S 0.05
#define DEFAULT_FIXED_RATE_FRACTION 0.5
#define PASSES_MAX 20

/* The profiles of a topology that gives no measure.profiles: the same as the seed lab's. */
#define FWD ML_DIR_FORWARD
#define REV ML_DIR_REVERSE
#define BID ML_DIR_BIDIR
static const struct ml_profile default_profiles[] = {
    {.name = "full",
     .pass_s = 30,
     .passes = 3,
     .ping_count = 200,
     .ping_interval_s = DEFAULT_PING_INTERVAL_S,
     .idle_s = 5,
     .fixed_rate_fraction = DEFAULT_FIXED_RATE_FRACTION,
     .n_cells = 2,
     .cells = {{"forward-1", FWD, 1, 3, false}, {"forward-1-fixed", FWD, 1, 3, true}}},
    {.name = "deep",
     .pass_s = 30,
     .passes = 3,
     .ping_count = 200,
     .ping_interval_s = DEFAULT_PING_INTERVAL_S,
     .idle_s = 5,
     .fixed_rate_fraction = DEFAULT_FIXED_RATE_FRACTION,
     .n_cells = 7,
     .cells = {{"forward-1", FWD, 1, 3, false},
               {"reverse-1", REV, 1, 3, false},
               {"bidir-1", BID, 1, 3, false},
               {"forward-8", FWD, 8, 3, false},
               {"reverse-8", REV, 8, 3, false},
               {"bidir-8", BID, 8, 3, false},
               {"forward-1-fixed", FWD, 1, 3, true}}},
    {.name = "quick",
     .pass_s = 4,
     .passes = 3,
     .ping_count = 40,
     .ping_interval_s = DEFAULT_PING_INTERVAL_S,
     .idle_s = 2,
     .fixed_rate_fraction = DEFAULT_FIXED_RATE_FRACTION,
     .n_cells = 4,
     .cells = {{"forward-1", FWD, 1, 3, false},
               {"reverse-1", REV, 1, 1, false},
               {"forward-8", FWD, 8, 1, false},
               {"forward-1-fixed", FWD, 1, 1, true}}},
};
#undef FWD
#undef REV
#undef BID

/* Bytes of `iperf3 -J` output (iperf 3.12), from the real outputs in tests/data/samples
 * (iperf3-loopback-2s.json, iperf3/forward-1-fixed.json, iperf3/reverse-1.json,
 * iperf3/bidir-2.json): "start" and "end" take at most 814 + 1254 bytes and 211 + 673 more for
 * each further socket; each interval (one a second, and a short last one) takes at most 478
 * bytes of sums and 352 per socket (streams, twice that with --bidir). Rounded up, for the
 * numbers that grow longer later in a long pass and with more sockets. */
#define IPERF_JSON_RUN 2048
#define IPERF_JSON_SOCKET 1024
#define IPERF_JSON_INTERVAL 512
#define IPERF_JSON_INTERVAL_SOCKET 384
/* ping -n prints one line a reply, 57 bytes for 127.0.0.1 with icmp_seq 1 (ping-loopback-5.txt);
 * 80 leaves room for a 15-character address, a 6-digit icmp_seq and " (DUP!)". Its header and
 * statistics take under 512. */
#define PING_LINE 80
#define PING_TEXT 512

size_t ml_iperf_json_bytes(const struct ml_cell *cell, unsigned seconds)
{
    size_t sockets = (size_t)cell->streams * (cell->direction == ML_DIR_BIDIR ? 2 : 1);
    return IPERF_JSON_RUN + IPERF_JSON_SOCKET * sockets +
           ((size_t)seconds + 1) * (IPERF_JSON_INTERVAL + IPERF_JSON_INTERVAL_SOCKET * sockets);
}

size_t ml_ping_text_bytes(unsigned count)
{
    return PING_TEXT + (size_t)PING_LINE * count;
}

unsigned ml_ping_count(unsigned seconds, double interval_s)
{
    return (unsigned)ceil(seconds / interval_s);
}

static const char *const direction_names[] = {
    [ML_DIR_FORWARD] = "forward", [ML_DIR_REVERSE] = "reverse", [ML_DIR_BIDIR] = "bidir"};

const char *ml_direction_name(enum ml_direction d)
{
    return (size_t)d < G_N_ELEMENTS(direction_names) ? direction_names[d] : "unknown";
}

const struct ml_profile *ml_topology_profile(const struct ml_topology *t, const char *name)
{
    for (size_t i = 0; name && i < t->measure.n_profiles; i++)
        if (strcmp(t->measure.profiles[i].name, name) == 0)
            return &t->measure.profiles[i];
    return NULL;
}

bool ml_topology_has_path(const struct ml_topology *topo, const char *path)
{
    for (size_t i = 0; i < topo->measure.n_paths; i++)
        if (!strcmp(topo->measure.paths[i].name, path))
            return true;
    return false;
}

int ml_topology_find_node(const struct ml_topology *topo, const char *name)
{
    for (size_t i = 0; i < topo->n_nodes; i++)
        if (strcmp(topo->nodes[i].name, name) == 0)
            return (int)i;
    return -1;
}

void ml_topology_free(struct ml_topology *topo)
{
    if (!topo)
        return;
    g_free(topo->path);
    for (size_t i = 0; i < topo->measure.n_paths; i++)
        g_free(topo->measure.paths[i].name);
    for (size_t i = 0; i < topo->nat_matrix.n_dataplanes; i++)
        g_free(topo->nat_matrix.dataplanes[i].name);
    g_free(topo);
}

struct key {
    const char *name;
    bool required;
};

struct ctx {
    const char *file;
    yaml_document_t *doc;
    GError **err;
    GPtrArray *scratch; /* message fragments, freed with the context */
    struct ml_topology *topo;
    /* Where things were written, for messages about how they relate to each other. */
    struct {
        yaml_node_t *node, *name, *address, *tunnel_address, *nat_key, *nat, *second_address;
    } at[ML_MAX_NODES];
    yaml_node_t *lab_subnet_at, *wg_subnet_at, *hub_at, *client_at, *server_at, *nat_matrix_at;
    const char *hub, *client, *server;
};

static bool fail(struct ctx *c, const yaml_node_t *at, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static bool fail(struct ctx *c, const yaml_node_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *rule = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(c->err, ML_ERROR, ML_ERR_INPUT, "%s:%zu:%zu: %s", c->file,
                (size_t)at->start_mark.line + 1, (size_t)at->start_mark.column + 1, rule);
    return false;
}

static const char *keep(struct ctx *c, char *s)
{
    g_ptr_array_add(c->scratch, s);
    return s;
}

static const char *fmt(struct ctx *c, const char *format, ...) G_GNUC_PRINTF(2, 3);
static const char *fmt(struct ctx *c, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char *s = g_strdup_vprintf(format, ap);
    va_end(ap);
    return keep(c, s);
}

/* A user's value as it may appear inside a one-line message: control characters escaped,
 * long values cut short. */
static const char *shown(struct ctx *c, const char *s)
{
    return keep(c, ml_name_shown(s));
}

static const char *value(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static bool is_null(const yaml_node_t *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    for (size_t i = 0; i < G_N_ELEMENTS(nulls); i++)
        if (strcmp(value(n), nulls[i]) == 0)
            return true;
    return false;
}

/* What was found where something else was expected, for "X must be Y, not Z". */
static const char *found(struct ctx *c, const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a sequence";
    case YAML_SCALAR_NODE:
        return is_null(n) ? "an empty value" : fmt(c, "'%s'", shown(c, value(n)));
    default:
        return "nothing";
    }
}

static bool has_nul(const yaml_node_t *n)
{
    return strlen(value(n)) != n->data.scalar.length;
}

static const char *join_keys(struct ctx *c, const struct key *keys)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; keys[i].name; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", keys[i].name);
    return keep(c, g_string_free(s, FALSE));
}

/* Checks a mapping against its allowed keys and hands back each key's value (or NULL),
 * in the order of keys. libyaml keeps duplicate keys, so they are caught here. */
static bool read_mapping(struct ctx *c, yaml_node_t *node, const char *what, const struct key *keys,
                         yaml_node_t **ret_values)
{
    yaml_node_t *key_at[MAX_KEYS] = {0};
    const char *prefix = what ? fmt(c, "%s: ", what) : "";
    size_t n_keys = 0;

    while (keys[n_keys].name)
        n_keys++;
    g_assert(n_keys <= MAX_KEYS);
    if (node->type != YAML_MAPPING_NODE)
        return fail(c, node, "%s must be a mapping (keys: %s), not %s",
                    what ? what : "the topology", join_keys(c, keys), found(c, node));

    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        size_t i = 0;

        if (k->type != YAML_SCALAR_NODE || has_nul(k))
            return fail(c, k, "%skeys must be plain names, not %s", prefix, found(c, k));
        while (i < n_keys && strcmp(keys[i].name, value(k)) != 0)
            i++;
        if (i == n_keys)
            return fail(c, k, "%sunknown key '%s'; allowed keys are %s", prefix, shown(c, value(k)),
                        join_keys(c, keys));
        if (key_at[i])
            return fail(c, k, "%skey '%s' is given twice (first at line %zu)", prefix, keys[i].name,
                        (size_t)key_at[i]->start_mark.line + 1);
        key_at[i] = k;
        ret_values[i] = yaml_document_get_node(c->doc, p->value);
    }
    for (size_t i = 0; i < n_keys; i++)
        if (keys[i].required && !key_at[i])
            return fail(c, node, "%smissing required key '%s'", prefix, keys[i].name);
    return true;
}

static bool get_string(struct ctx *c, yaml_node_t *n, const char *what, const char **ret)
{
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return fail(c, n, "%s must be a string, not %s", what, found(c, n));
    if (has_nul(n))
        return fail(c, n, "%s must not contain NUL characters", what);
    *ret = value(n);
    return true;
}

static bool get_uint(struct ctx *c, yaml_node_t *n, const char *what, unsigned min, unsigned max,
                     unsigned *ret)
{
    const char *s, *digits;
    uint64_t v = 0;

    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return fail(c, n, "%s must be an integer, not %s", what, found(c, n));
    s = value(n);
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return fail(c, n, "%s must be an integer, not the quoted string '%s'", what, shown(c, s));
    digits = s[0] == '-' ? s + 1 : s;
    if (!*digits || strspn(digits, "0123456789") != strlen(digits) ||
        (digits[0] == '0' && digits[1]))
        return fail(c, n, "%s must be a decimal integer, not '%s'", what, shown(c, s));
    for (const char *p = digits; *p && v <= UINT32_MAX; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (s[0] == '-' || v < min || v > max)
        return fail(c, n, "%s %s is out of range %u..%u", what, shown(c, s), min, max);
    *ret = (unsigned)v;
    return true;
}

/* Names become parts of file names and libvirt object names. */
static bool check_name(struct ctx *c, yaml_node_t *n, const char *what, const char *s,
                       bool allow_dot)
{
    g_autoptr(GError) rule = NULL;
    if (!ml_name_check(what, s, allow_dot, &rule))
        return fail(c, n, "%s", rule->message);
    return true;
}

static bool get_name(struct ctx *c, yaml_node_t *n, const char *what, bool allow_dot,
                     char ret[ML_NAME_MAX])
{
    const char *s;
    if (!get_string(c, n, what, &s) || !check_name(c, n, what, s, allow_dot))
        return false;
    g_strlcpy(ret, s, ML_NAME_MAX);
    return true;
}

/* Only the canonical dotted quad: inet_pton plus a round trip rules out other spellings. */
static bool parse_ipv4(const char *s, struct in_addr *ret)
{
    char back[INET_ADDRSTRLEN];
    struct in_addr a;
    if (inet_pton(AF_INET, s, &a) != 1 || !inet_ntop(AF_INET, &a, back, sizeof(back)) ||
        strcmp(back, s) != 0)
        return false;
    *ret = a;
    return true;
}

static const char *ip_str(struct ctx *c, struct in_addr a)
{
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a, buf, sizeof(buf));
    return fmt(c, "%s", buf);
}

static const char *subnet_str(struct ctx *c, const struct ml_subnet *s)
{
    return fmt(c, "%s/%u", ip_str(c, s->net), s->prefix);
}

static uint32_t prefix_mask(unsigned prefix)
{
    return prefix ? UINT32_MAX << (32 - prefix) : 0;
}

static bool get_address(struct ctx *c, yaml_node_t *n, const char *what, struct in_addr *ret)
{
    const char *s;
    if (!get_string(c, n, what, &s))
        return false;
    if (!parse_ipv4(s, ret))
        return fail(c, n,
                    "%s '%s' is not an IPv4 address in canonical form (four decimal numbers "
                    "0-255 without leading zeros, like 192.0.2.10)",
                    what, shown(c, s));
    return true;
}

static bool get_subnet(struct ctx *c, yaml_node_t *n, const char *what, struct ml_subnet *ret)
{
    const char *s, *slash, *prefix;
    g_autofree char *addr = NULL;
    struct in_addr a;
    uint32_t host;
    unsigned p = 0;

    if (!get_string(c, n, what, &s))
        return false;
    slash = strchr(s, '/');
    prefix = slash ? slash + 1 : "";
    if (slash)
        addr = g_strndup(s, (size_t)(slash - s));
    if (!slash || !parse_ipv4(addr, &a) || !*prefix || strlen(prefix) > 2 ||
        strspn(prefix, "0123456789") != strlen(prefix) || (prefix[0] == '0' && prefix[1]))
        return fail(c, n, "%s '%s' is not an IPv4 network in CIDR form, like 192.0.2.0/24", what,
                    shown(c, s));
    for (const char *q = prefix; *q; q++)
        p = p * 10 + (unsigned)(*q - '0');
    if (p < 8 || p > 30)
        return fail(c, n, "%s %s: prefix /%u is out of range /8../30", what, shown(c, s), p);
    host = ntohl(a.s_addr);
    if (host & ~prefix_mask(p)) {
        struct ml_subnet net = {.net.s_addr = htonl(host & prefix_mask(p)), .prefix = p};
        return fail(c, n, "%s %s has host bits set; the network is %s", what, shown(c, s),
                    subnet_str(c, &net));
    }
    /* Ranges no lab network can live in: the kernel treats their addresses as local, as
     * multicast groups or as invalid, never as hosts on a bridge. */
    static const struct {
        uint32_t net;
        unsigned prefix;
        const char *what;
    } reserved[] = {
        {0x00000000u, 8,
         "'this network' 0.0.0.0/8 (RFC 1122), which no packet may come from "
         "or go to"},
        {0x7f000000u, 8, "the loopback range 127.0.0.0/8, which never leaves a machine"},
        {0xe0000000u, 4, "the multicast range 224.0.0.0/4, which names groups, not hosts"},
        {0xf0000000u, 4,
         "the reserved range 240.0.0.0/4 (RFC 1112), with the broadcast address "
         "255.255.255.255, which Linux refuses for hosts"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(reserved); i++)
        if ((host & prefix_mask(MIN(p, reserved[i].prefix))) ==
            (reserved[i].net & prefix_mask(MIN(p, reserved[i].prefix))))
            return fail(c, n,
                        "%s %s is inside %s; choose a private range (RFC 1918) "
                        "such as 192.168.0.0/16 or 10.0.0.0/8",
                        what, shown(c, s), reserved[i].what);
    ret->net = a;
    ret->prefix = p;
    ret->line = (int)n->start_mark.line + 1;
    ret->column = (int)n->start_mark.column + 1;
    return true;
}

static bool parse_image(struct ctx *c, yaml_node_t *n)
{
    static const struct key keys[] = {{"use", true}, {"fallback", false}, {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;

    if (!read_mapping(c, n, "image", keys, v) || !get_name(c, v[0], "image.use", true, t->image))
        return false;
    if (v[1]) {
        if (!get_name(c, v[1], "image.fallback", true, t->image_fallback))
            return false;
        if (strcmp(t->image, t->image_fallback) == 0)
            return fail(c, v[1], "image.fallback '%s' is the same as image.use", t->image);
    }
    return true;
}

static bool parse_bridge(struct ctx *c, yaml_node_t *n)
{
    static const struct key keys[] = {{"subnet", true}, {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0};

    if (!read_mapping(c, n, "bridge", keys, v) ||
        !get_subnet(c, v[0], "bridge.subnet", &c->topo->lab_subnet))
        return false;
    c->lab_subnet_at = v[0];
    return true;
}

static bool parse_defaults(struct ctx *c, yaml_node_t *n, unsigned *vcpus, unsigned *memory_mib)
{
    static const struct key keys[] = {{"vcpus", false}, {"memory_mib", false}, {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0};

    if (!read_mapping(c, n, "defaults", keys, v))
        return false;
    if (v[0] && !get_uint(c, v[0], "defaults.vcpus", 1, 16, vcpus))
        return false;
    if (v[1] && !get_uint(c, v[1], "defaults.memory_mib", 256, 65536, memory_mib))
        return false;
    return true;
}

/* The key node of name in mapping n, or NULL. */
static yaml_node_t *find_key(struct ctx *c, yaml_node_t *n, const char *name)
{
    if (n->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        if (k->type == YAML_SCALAR_NODE && strcmp(value(k), name) == 0)
            return k;
    }
    return NULL;
}

/* How messages name a node: by its name when it has one that can be shown. */
static const char *node_label(struct ctx *c, yaml_node_t *n, size_t index)
{
    if (n->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
            yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
            if (k->type == YAML_SCALAR_NODE && strcmp(value(k), "name") == 0 &&
                v->type == YAML_SCALAR_NODE && !is_null(v))
                return fmt(c, "node '%s'", shown(c, value(v)));
        }
    }
    return fmt(c, "node %zu", index + 1);
}

static const char *nat_type_list(struct ctx *c)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; i < ML_NAT_TYPES; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", ml_nat_type_name((enum ml_nat_type)i));
    return keep(c, g_string_free(s, FALSE));
}

static bool get_nat_type(struct ctx *c, yaml_node_t *n, const char *what, enum ml_nat_type *ret)
{
    const char *s;
    if (!get_string(c, n, what, &s))
        return false;
    if (!ml_nat_type_parse(s, ret))
        return fail(c, n, "%s '%s' is not a NAT type; the types are %s", what, shown(c, s),
                    nat_type_list(c));
    return true;
}

static bool parse_node(struct ctx *c, yaml_node_t *n, size_t index, unsigned vcpus,
                       unsigned memory_mib)
{
    enum { NAME, ADDRESS, TUNNEL_ADDRESS, VCPUS, MEMORY_MIB, NAT, SECOND_ADDRESS };
    static const struct key keys[] = {[NAME] = {"name", true},
                                      [ADDRESS] = {"address", true},
                                      [TUNNEL_ADDRESS] = {"tunnel_address", true},
                                      [VCPUS] = {"vcpus", false},
                                      [MEMORY_MIB] = {"memory_mib", false},
                                      [NAT] = {"nat", false},
                                      [SECOND_ADDRESS] = {"second_address", false},
                                      {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0};
    struct ml_node *node = &c->topo->nodes[index];
    const char *label = node_label(c, n, index);

    if (!read_mapping(c, n, label, keys, v) ||
        !get_name(c, v[NAME], "node name", false, node->name) ||
        !get_address(c, v[ADDRESS], fmt(c, "%s: address", label), &node->address) ||
        !get_address(c, v[TUNNEL_ADDRESS], fmt(c, "%s: tunnel_address", label),
                     &node->tunnel_address))
        return false;
    node->vcpus = vcpus;
    node->memory_mib = memory_mib;
    if (v[VCPUS] && !get_uint(c, v[VCPUS], fmt(c, "%s: vcpus", label), 1, 16, &node->vcpus))
        return false;
    if (v[MEMORY_MIB] &&
        !get_uint(c, v[MEMORY_MIB], fmt(c, "%s: memory_mib", label), 256, 65536, &node->memory_mib))
        return false;
    node->nat = ML_NAT_NONE;
    if (v[NAT] && !get_nat_type(c, v[NAT], fmt(c, "%s: nat", label), &node->nat))
        return false;
    if (v[SECOND_ADDRESS] && !get_address(c, v[SECOND_ADDRESS], fmt(c, "%s: second_address", label),
                                          &node->second_address))
        return false;
    node->line = (int)n->start_mark.line + 1;
    node->column = (int)n->start_mark.column + 1;
    node->tunnel_line = (int)v[TUNNEL_ADDRESS]->start_mark.line + 1;
    node->tunnel_column = (int)v[TUNNEL_ADDRESS]->start_mark.column + 1;
    c->at[index].node = n;
    c->at[index].name = v[NAME];
    c->at[index].address = v[ADDRESS];
    c->at[index].tunnel_address = v[TUNNEL_ADDRESS];
    c->at[index].nat_key = v[NAT] ? find_key(c, n, "nat") : NULL;
    c->at[index].nat = v[NAT];
    c->at[index].second_address = v[SECOND_ADDRESS];
    return true;
}

static bool parse_nodes(struct ctx *c, yaml_node_t *n, unsigned vcpus, unsigned memory_mib)
{
    size_t count;

    if (n->type != YAML_SEQUENCE_NODE)
        return fail(c, n, "nodes must be a sequence of nodes, not %s", found(c, n));
    count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (count < 2)
        return fail(c, n, "nodes lists %zu node%s; a lab needs at least 2", count,
                    count == 1 ? "" : "s");
    if (count > ML_MAX_NODES) {
        /* At the first node too many, which is where the file has to be cut. */
        yaml_node_t *extra =
            yaml_document_get_node(c->doc, n->data.sequence.items.start[ML_MAX_NODES]);
        return fail(c, extra,
                    "nodes lists %zu nodes; a lab has one hub and at most %d clients (%d nodes), "
                    "since every guest is emulated (TCG, no KVM) on the host's 2 cores and more "
                    "would slow every boot past its waits; remove this node and those after it",
                    count, ML_MAX_CLIENTS, ML_MAX_NODES);
    }
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
        if (!parse_node(c, item, i, vcpus, memory_mib))
            return false;
        c->topo->n_nodes = i + 1;
    }
    return true;
}

static bool parse_wireguard(struct ctx *c, yaml_node_t *n)
{
    static const struct key keys[] = {{"subnet", true},
                                      {"hub", true},
                                      {"listen_port", false},
                                      {"persistent_keepalive", false},
                                      {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;

    t->wireguard.listen_port = ML_PORT_WIREGUARD_DEFAULT;
    t->wireguard.persistent_keepalive = 25;
    if (!read_mapping(c, n, "wireguard", keys, v) ||
        !get_subnet(c, v[0], "wireguard.subnet", &t->wireguard.subnet) ||
        !get_string(c, v[1], "wireguard.hub", &c->hub))
        return false;
    if (v[2] && !get_uint(c, v[2], "wireguard.listen_port", 1, 65535, &t->wireguard.listen_port))
        return false;
    /* The ports made from it (its own, +1, +2) are checked against every other port once the
     * dataplanes are known (ml_paths_resolve), and reported here. */
    t->wireguard.listen_port_line = (int)(v[2] ? v[2] : n)->start_mark.line + 1;
    t->wireguard.listen_port_column = (int)(v[2] ? v[2] : n)->start_mark.column + 1;
    if (v[3] && !get_uint(c, v[3], "wireguard.persistent_keepalive", 0, 65535,
                          &t->wireguard.persistent_keepalive))
        return false;
    c->wg_subnet_at = v[0];
    c->hub_at = v[1];
    return true;
}

/* A decimal number as people write one: 0.05, 1, 0.5; no exponents, signs or words. */
static bool get_decimal(struct ctx *c, yaml_node_t *n, const char *what, double *ret)
{
    const char *s;
    size_t whole;

    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return fail(c, n, "%s must be a number, not %s", what, found(c, n));
    s = value(n);
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return fail(c, n, "%s must be a number, not the quoted string '%s'", what, shown(c, s));
    whole = strspn(s, "0123456789");
    if (!whole || (s[whole] && (s[whole] != '.' || !s[whole + 1] ||
                                strspn(s + whole + 1, "0123456789") != strlen(s + whole + 1))))
        return fail(c, n, "%s must be a decimal number like 0.05, not '%s'", what, shown(c, s));
    *ret = g_ascii_strtod(s, NULL);
    return true;
}

/* Compares two decimals as get_decimal accepts them (digits, optionally '.' and digits) by
 * their text, so that a bound holds exactly: 0.0019999999999999999 is below 0.002 although
 * both are the same double. Returns <0, 0 or >0 as strcmp. */
static int decimal_cmp(const char *a, const char *b)
{
    while (*a == '0' && g_ascii_isdigit(a[1]))
        a++;
    while (*b == '0' && g_ascii_isdigit(b[1]))
        b++;
    size_t wa = strspn(a, "0123456789"), wb = strspn(b, "0123456789");
    if (wa != wb)
        return wa < wb ? -1 : 1;
    int c = strncmp(a, b, wa);
    if (c)
        return c;
    const char *fa = a[wa] == '.' ? a + wa + 1 : "", *fb = b[wb] == '.' ? b + wb + 1 : "";
    for (; *fa || *fb; fa += !!*fa, fb += !!*fb) {
        char da = *fa ? *fa : '0', db = *fb ? *fb : '0';
        if (da != db)
            return da < db ? -1 : 1;
    }
    return 0;
}

/* DIRECTION-STREAMS[-fixed]: forward-1, reverse-8, bidir-1, forward-1-fixed. */
static bool parse_cell_name(struct ctx *c, yaml_node_t *at, const char *what, const char *s,
                            struct ml_cell *ret)
{
    g_auto(GStrv) parts = g_strsplit(s, "-", 4);
    guint n = g_strv_length(parts);
    size_t d = 0;
    unsigned streams = 0;

    if (n < 2 || n > 3 || !*parts[1] || strlen(parts[1]) > 4 ||
        strspn(parts[1], "0123456789") != strlen(parts[1]) || (parts[1][0] == '0' && parts[1][1]))
        return fail(c, at,
                    "%s: cell '%s' is not DIRECTION-STREAMS or DIRECTION-STREAMS-fixed; write it "
                    "like forward-1, reverse-8 or forward-1-fixed",
                    what, shown(c, s));
    while (d < G_N_ELEMENTS(direction_names) && strcmp(parts[0], direction_names[d]) != 0)
        d++;
    if (d == G_N_ELEMENTS(direction_names))
        return fail(c, at,
                    "%s: cell '%s' has the unknown direction '%s'; the directions are forward, "
                    "reverse (iperf3 -R) and bidir (iperf3 --bidir)",
                    what, shown(c, s), shown(c, parts[0]));
    for (const char *p = parts[1]; *p; p++)
        streams = streams * 10 + (unsigned)(*p - '0');
    if (streams < 1 || streams > ML_STREAMS_MAX)
        return fail(c, at, "%s: cell '%s' has %u streams; streams are 1..%d (iperf3 -P)", what,
                    shown(c, s), streams, ML_STREAMS_MAX);
    if (n == 3 && strcmp(parts[2], "fixed") != 0)
        return fail(c, at,
                    "%s: cell '%s' ends in '-%s'; the only suffix is '-fixed', for the run's "
                    "fixed offered rate",
                    what, shown(c, s), shown(c, parts[2]));
    *ret = (struct ml_cell){
        .direction = (enum ml_direction)d, .streams = streams, .fixed_rate = n == 3};
    g_snprintf(ret->name, sizeof(ret->name), "%s-%u%s", direction_names[d], streams,
               n == 3 ? "-fixed" : "");
    return true;
}

/* One matrix entry: a cell name taking the profile's passes, or {cell: NAME, passes: N}. */
static bool parse_cell(struct ctx *c, yaml_node_t *n, const char *what, unsigned passes,
                       struct ml_cell *ret, yaml_node_t **ret_name_at)
{
    static const struct key keys[] = {{"cell", true}, {"passes", false}, {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0};
    const char *name;

    if (n->type == YAML_MAPPING_NODE) {
        if (!read_mapping(c, n, fmt(c, "%s entry", what), keys, v) ||
            !get_string(c, v[0], fmt(c, "%s: cell", what), &name))
            return false;
        if (v[1] && !get_uint(c, v[1], fmt(c, "%s: cell '%s': passes", what, shown(c, name)), 1,
                              PASSES_MAX, &passes))
            return false;
        *ret_name_at = v[0];
    } else {
        if (n->type != YAML_SCALAR_NODE || is_null(n) || has_nul(n))
            return fail(c, n,
                        "%s: an entry is a cell name like forward-1 or a mapping {cell: NAME, "
                        "passes: N}, not %s",
                        what, found(c, n));
        name = value(n);
        *ret_name_at = n;
    }
    if (!parse_cell_name(c, *ret_name_at, what, name, ret))
        return false;
    ret->passes = passes;
    return true;
}

static const char *megabytes(struct ctx *c, size_t bytes)
{
    return fmt(c, "%.1f MB", (double)bytes / 1e6);
}

/* iperf3 -J prints the whole pass as one document when it ends; the guest agent must carry it
 * back in one reply. */
static bool check_iperf_output(struct ctx *c, yaml_node_t *at, const char *what,
                               const struct ml_profile *p, const struct ml_cell *cell)
{
    size_t bytes = ml_iperf_json_bytes(cell, p->pass_s);
    if (bytes <= ML_GUEST_OUTPUT_MAX)
        return true;
    unsigned longest = 0, most = 0;
    while (ml_iperf_json_bytes(cell, longest + 1) <= ML_GUEST_OUTPUT_MAX)
        longest++;
    struct ml_cell fewer = *cell;
    for (fewer.streams = 1; ml_iperf_json_bytes(&fewer, p->pass_s) <= ML_GUEST_OUTPUT_MAX;
         fewer.streams++)
        most = fewer.streams;
    return fail(c, at,
                "%s: cell '%s' for pass_s %u makes iperf3 -J print about %s, more than the %s "
                "a guest command's output may be to come back whole (libvirt hands the guest "
                "agent's reply over as one string of at most 4 MiB, base64); the largest pass_s "
                "for %s is %u, or use at most %u streams for %u s",
                what, cell->name, p->pass_s, megabytes(c, bytes), megabytes(c, ML_GUEST_OUTPUT_MAX),
                cell->name, longest, most, p->pass_s);
}

/* The latency probe beside each pass prints a line a ping, returned when the pass ends. */
static bool check_ping_output(struct ctx *c, yaml_node_t *at, const char *what,
                              const struct ml_profile *p)
{
    unsigned count = ml_ping_count(p->pass_s, p->ping_interval_s);
    if (ml_ping_text_bytes(count) <= ML_GUEST_OUTPUT_MAX)
        return true;
    unsigned longest = 0, interval_ms = 2;
    while (ml_ping_text_bytes(ml_ping_count(longest + 1, p->ping_interval_s)) <=
           ML_GUEST_OUTPUT_MAX)
        longest++;
    while (ml_ping_text_bytes(ml_ping_count(p->pass_s, interval_ms / 1000.0)) > ML_GUEST_OUTPUT_MAX)
        interval_ms++;
    return fail(c, at,
                "%s: ping_interval_s %g for pass_s %u makes the latency probe beside each pass "
                "print %u lines, about %s, more than the %s a guest command's output may be to "
                "come back whole (libvirt hands the guest agent's reply over as one string of at "
                "most 4 MiB, base64); the smallest ping_interval_s for pass_s %u is %u.%03u, or "
                "the largest pass_s at %g s is %u",
                what, p->ping_interval_s, p->pass_s, count, megabytes(c, ml_ping_text_bytes(count)),
                megabytes(c, ML_GUEST_OUTPUT_MAX), p->pass_s, interval_ms / 1000,
                interval_ms % 1000, p->ping_interval_s, longest);
}

static bool parse_matrix(struct ctx *c, yaml_node_t *n, const char *what, struct ml_profile *p)
{
    yaml_node_t *at[ML_CELLS_MAX];
    yaml_node_item_t *items;
    size_t count;

    if (n->type != YAML_SEQUENCE_NODE)
        return fail(c, n, "%s must be a sequence of cells like [forward-1, reverse-1], not %s",
                    what, found(c, n));
    items = n->data.sequence.items.start;
    count = (size_t)(n->data.sequence.items.top - items);
    if (count == 0)
        return fail(c, n,
                    "%s is empty; list at least one cell, or leave matrix out for the default "
                    "[forward-1, forward-1-fixed]",
                    what);
    if (count > ML_CELLS_MAX)
        return fail(c, yaml_document_get_node(c->doc, items[ML_CELLS_MAX]),
                    "%s lists %zu cells; at most %d", what, count, ML_CELLS_MAX);
    for (size_t i = 0; i < count; i++) {
        struct ml_cell *cell = &p->cells[i];
        if (!parse_cell(c, yaml_document_get_node(c->doc, items[i]), what, p->passes, cell,
                        &at[i]) ||
            !check_iperf_output(c, at[i], what, p, cell))
            return false;
        for (size_t j = 0; j < i; j++)
            if (strcmp(p->cells[j].name, cell->name) == 0)
                return fail(c, at[i], "%s: cell '%s' is listed twice (first at line %zu)", what,
                            cell->name, (size_t)at[j]->start_mark.line + 1);
    }
    p->n_cells = count;
    if (p->cells[0].fixed_rate)
        return fail(c, at[0],
                    "%s: the first cell '%s' is the headline and must run at full speed (the "
                    "fixed rate is a fraction of the paths' headline medians); put a cell such "
                    "as forward-1 first",
                    what, p->cells[0].name);
    return true;
}

static bool parse_profile(struct ctx *c, yaml_node_t *n, const char *name, struct ml_profile *p)
{
    enum { PASS_S, PASSES, PING_COUNT, PING_INTERVAL_S, IDLE_S, FRACTION, MATRIX };
    static const struct key keys[] = {
        [PASS_S] = {"pass_s", true},         [PASSES] = {"passes", true},
        [PING_COUNT] = {"ping_count", true}, [PING_INTERVAL_S] = {"ping_interval_s", false},
        [IDLE_S] = {"idle_s", false},        [FRACTION] = {"fixed_rate_fraction", false},
        [MATRIX] = {"matrix", false},        {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0}, *gone;
    const char *what = fmt(c, "measure.profiles.%s", name);

    /* Files written for meshlab 0.1 have it; say why it went rather than "unknown key". */
    if ((gone = find_key(c, n, "transfer_s")))
        return fail(c, gone,
                    "%s.transfer_s is gone: every pass now counts the hub's bytes itself, so "
                    "there is no separate transfer; remove the key (idle_s sets the idle "
                    "baseline taken before the passes)",
                    what);
    *p = (struct ml_profile){.ping_interval_s = DEFAULT_PING_INTERVAL_S,
                             .idle_s = DEFAULT_IDLE_S,
                             .fixed_rate_fraction = DEFAULT_FIXED_RATE_FRACTION};
    g_strlcpy(p->name, name, sizeof(p->name));
    if (!read_mapping(c, n, what, keys, v) ||
        !get_uint(c, v[PASS_S], fmt(c, "%s.pass_s", what), 1, 600, &p->pass_s) ||
        !get_uint(c, v[PASSES], fmt(c, "%s.passes", what), 1, PASSES_MAX, &p->passes) ||
        !get_uint(c, v[PING_COUNT], fmt(c, "%s.ping_count", what), 1, 1000, &p->ping_count))
        return false;
    if (v[PING_INTERVAL_S]) {
        const char *key = fmt(c, "%s.ping_interval_s", what);
        if (!get_decimal(c, v[PING_INTERVAL_S], key, &p->ping_interval_s))
            return false;
        if (decimal_cmp(value(v[PING_INTERVAL_S]), "0.002") < 0 ||
            decimal_cmp(value(v[PING_INTERVAL_S]), "10") > 0)
            return fail(c, v[PING_INTERVAL_S],
                        "%s %s is out of range 0.002..10 seconds (ping allows no shorter "
                        "interval than 0.002); write a value in that range",
                        key, shown(c, value(v[PING_INTERVAL_S])));
    }
    if (!check_ping_output(c, v[PING_INTERVAL_S] ? v[PING_INTERVAL_S] : v[PASS_S], what, p))
        return false;
    if (v[IDLE_S] && !get_uint(c, v[IDLE_S], fmt(c, "%s.idle_s", what), 1, 600, &p->idle_s))
        return false;
    if (v[FRACTION]) {
        const char *key = fmt(c, "%s.fixed_rate_fraction", what);
        if (!get_decimal(c, v[FRACTION], key, &p->fixed_rate_fraction))
            return false;
        if (decimal_cmp(value(v[FRACTION]), "0") <= 0 || decimal_cmp(value(v[FRACTION]), "1") > 0)
            return fail(c, v[FRACTION],
                        "%s %s is outside (0, 1]: the fixed offered rate is this fraction of "
                        "the slowest path's median; write a fraction like 0.5",
                        key, shown(c, value(v[FRACTION])));
    }
    if (v[MATRIX])
        return parse_matrix(c, v[MATRIX], fmt(c, "%s.matrix", what), p);
    p->cells[0] = (struct ml_cell){"forward-1", ML_DIR_FORWARD, 1, p->passes, false};
    p->cells[1] = (struct ml_cell){"forward-1-fixed", ML_DIR_FORWARD, 1, 1, true};
    p->n_cells = 2;
    return true;
}

static bool parse_profiles(struct ctx *c, yaml_node_t *n)
{
    struct ml_topology *t = c->topo;
    yaml_node_pair_t *pairs;
    size_t count;

    if (n->type != YAML_MAPPING_NODE)
        return fail(c, n,
                    "measure.profiles must be a mapping of profile names to profiles, like "
                    "{full: {pass_s: 30, passes: 3, ping_count: 200}}, not %s",
                    found(c, n));
    pairs = n->data.mapping.pairs.start;
    count = (size_t)(n->data.mapping.pairs.top - pairs);
    if (count > ML_PROFILES_MAX)
        return fail(c, yaml_document_get_node(c->doc, pairs[ML_PROFILES_MAX].key),
                    "measure.profiles has %zu profiles; at most %d", count, ML_PROFILES_MAX);
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, pairs[i].key);
        char name[ML_NAME_MAX];

        if (k->type != YAML_SCALAR_NODE)
            return fail(c, k, "measure.profiles: a profile's name must be a name, not %s",
                        found(c, k));
        if (!get_name(c, k, "measure.profiles: profile name", false, name))
            return false;
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->measure.profiles[j].name, name) == 0)
                return fail(c, k,
                            "measure.profiles: profile '%s' is given twice (first at line "
                            "%zu)",
                            name,
                            (size_t)yaml_document_get_node(c->doc, pairs[j].key)->start_mark.line +
                                1);
        if (!parse_profile(c, yaml_document_get_node(c->doc, pairs[i].value), name,
                           &t->measure.profiles[i]))
            return false;
        t->measure.n_profiles = i + 1;
    }
    if (!ml_topology_profile(t, "full"))
        return fail(c, n,
                    "measure.profiles has no profile 'full'; add one: it is the profile "
                    "'meshlab run' uses unless given --profile");
    return true;
}

static bool parse_paths(struct ctx *c, yaml_node_t *n)
{
    struct ml_topology *t = c->topo;
    yaml_node_item_t *items;
    size_t count;

    t->measure.paths_line = (int)n->start_mark.line + 1;
    t->measure.paths_column = (int)n->start_mark.column + 1;
    if (n->type != YAML_SEQUENCE_NODE)
        return fail(c, n, "measure.paths must be a sequence of path names, not %s", found(c, n));
    items = n->data.sequence.items.start;
    count = (size_t)(n->data.sequence.items.top - items);
    if (count > ML_PATHS_MAX)
        return fail(c, n, "measure.paths lists %zu paths; at most %d", count, ML_PATHS_MAX);
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = yaml_document_get_node(c->doc, items[i]);
        const char *s;

        if (!get_string(c, item, "a measure.paths entry", &s))
            return false;
        if (ml_topology_has_path(t, s))
            return fail(c, item, "measure.paths: '%s' is listed twice", shown(c, s));
        t->measure.paths[t->measure.n_paths++] = (struct ml_path_ref){
            .name = g_strdup(s),
            .line = (int)item->start_mark.line + 1,
            .column = (int)item->start_mark.column + 1,
        };
    }
    return true;
}

static bool parse_measure(struct ctx *c, yaml_node_t *n)
{
    static const struct key keys[] = {
        {"client", true}, {"server", true}, {"paths", true}, {"profiles", false}, {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;

    if (!read_mapping(c, n, "measure", keys, v) ||
        !get_string(c, v[0], "measure.client", &c->client) ||
        !get_string(c, v[1], "measure.server", &c->server) || !parse_paths(c, v[2]))
        return false;
    c->client_at = v[0];
    c->server_at = v[1];
    if (v[3])
        return parse_profiles(c, v[3]);
    memcpy(t->measure.profiles, default_profiles, sizeof(default_profiles));
    t->measure.n_profiles = G_N_ELEMENTS(default_profiles);
    return true;
}

static bool subnets_overlap(const struct ml_subnet *a, const struct ml_subnet *b)
{
    uint32_t mask = prefix_mask(MIN(a->prefix, b->prefix));
    return (ntohl(a->net.s_addr) & mask) == (ntohl(b->net.s_addr) & mask);
}

/* An address must be a host of its subnet, and no other node may have it. */
static bool check_address(struct ctx *c, size_t index, bool tunnel)
{
    const struct ml_topology *t = c->topo;
    const struct ml_node *node = &t->nodes[index];
    const struct ml_subnet *net = tunnel ? &t->wireguard.subnet : &t->lab_subnet;
    const char *key = tunnel ? "tunnel_address" : "address";
    const char *net_name = tunnel ? "wireguard subnet" : "lab subnet";
    struct in_addr a = tunnel ? node->tunnel_address : node->address;
    yaml_node_t *at = tunnel ? c->at[index].tunnel_address : c->at[index].address;
    uint32_t host = ntohl(a.s_addr), mask = prefix_mask(net->prefix);

    if ((host & mask) != ntohl(net->net.s_addr))
        return fail(c, at, "node '%s': %s %s is outside the %s %s", node->name, key, ip_str(c, a),
                    net_name, subnet_str(c, net));
    if ((host & ~mask) == 0 || (host & ~mask) == ~mask)
        return fail(c, at, "node '%s': %s %s is the %s address of the %s %s", node->name, key,
                    ip_str(c, a), (host & ~mask) ? "broadcast" : "network", net_name,
                    subnet_str(c, net));
    for (size_t j = 0; j < index; j++) {
        struct in_addr b = tunnel ? t->nodes[j].tunnel_address : t->nodes[j].address;
        if (a.s_addr == b.s_addr)
            return fail(c, at, "node '%s': %s %s is already used by node '%s' (line %d)",
                        node->name, key, ip_str(c, a), t->nodes[j].name, t->nodes[j].line);
    }
    return true;
}

static bool check_nodes(struct ctx *c)
{
    const struct ml_topology *t = c->topo;

    for (size_t i = 0; i < t->n_nodes; i++) {
        const struct ml_node *node = &t->nodes[i];
        size_t domain_len = strlen("meshlab-.") + strlen(t->name) + strlen(node->name);

        for (size_t j = 0; j < i; j++)
            if (strcmp(node->name, t->nodes[j].name) == 0)
                return fail(c, c->at[i].name,
                            "node name '%s' is already used by the node at line %d", node->name,
                            t->nodes[j].line);
        if (domain_len > DOMAIN_NAME_MAX)
            return fail(c, c->at[i].name,
                        "node name '%s' makes the libvirt domain name 'meshlab-%s.%s' %zu "
                        "characters long; the limit is %d, so shorten the lab or node name",
                        node->name, t->name, node->name, domain_len, DOMAIN_NAME_MAX);
        if (!check_address(c, i, false) || !check_address(c, i, true))
            return false;
    }
    return true;
}

static const char *node_names(struct ctx *c)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < c->topo->n_nodes; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", c->topo->nodes[i].name);
    return keep(c, g_string_free(s, FALSE));
}

static bool find_role(struct ctx *c, yaml_node_t *at, const char *what, const char *name,
                      size_t *ret)
{
    int i = ml_topology_find_node(c->topo, name);
    if (i < 0)
        return fail(c, at, "%s '%s' is not a node; the nodes are %s", what, shown(c, name),
                    node_names(c));
    *ret = (size_t)i;
    return true;
}

static bool check_roles(struct ctx *c)
{
    struct ml_topology *t = c->topo;

    if (!find_role(c, c->hub_at, "wireguard.hub", c->hub, &t->wireguard.hub) ||
        !find_role(c, c->client_at, "measure.client", c->client, &t->measure.client) ||
        !find_role(c, c->server_at, "measure.server", c->server, &t->measure.server))
        return false;
    if (t->measure.server == t->measure.client)
        return fail(c, c->server_at,
                    "measure.server '%s' is the same node as measure.client; they must differ",
                    c->server);
    if (t->wireguard.hub == t->measure.client || t->wireguard.hub == t->measure.server)
        return fail(c, c->hub_at,
                    "wireguard.hub '%s' is also measure.%s; the hub must be a third node that "
                    "relays between client and server",
                    c->hub, t->wireguard.hub == t->measure.client ? "client" : "server");
    return true;
}

/* nat_matrix.types: 1..6 NAT types, none twice. */
static bool parse_nat_types(struct ctx *c, yaml_node_t *n)
{
    struct ml_topology *t = c->topo;
    yaml_node_item_t *items;
    yaml_node_t *at[ML_NAT_TYPES];
    size_t count;

    if (n->type != YAML_SEQUENCE_NODE)
        return fail(c, n,
                    "nat_matrix.types must be a sequence of NAT types like [none, symmetric], "
                    "not %s",
                    found(c, n));
    items = n->data.sequence.items.start;
    count = (size_t)(n->data.sequence.items.top - items);
    if (count == 0)
        return fail(c, n, "nat_matrix.types is empty; list at least one of %s", nat_type_list(c));
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = yaml_document_get_node(c->doc, items[i]);
        enum ml_nat_type type;

        if (!get_nat_type(c, item, "nat_matrix.types: type", &type))
            return false;
        for (size_t j = 0; j < t->nat_matrix.n_types; j++)
            if (t->nat_matrix.types[j] == type)
                return fail(c, item, "nat_matrix.types: '%s' is listed twice (first at line %zu)",
                            ml_nat_type_name(type), (size_t)at[j]->start_mark.line + 1);
        /* Six types listed once each fill the array; a seventh entry is a repeat. */
        g_assert(t->nat_matrix.n_types < ML_NAT_TYPES);
        at[t->nat_matrix.n_types] = item;
        t->nat_matrix.types[t->nat_matrix.n_types++] = type;
    }
    return true;
}

/* nat_matrix.dataplanes: 1..ML_NAT_DATAPLANES_MAX names, none twice; what they mean is the
 * dataplanes' registry's business (resolved after loading). */
static bool parse_nat_dataplanes(struct ctx *c, yaml_node_t *n)
{
    struct ml_topology *t = c->topo;
    yaml_node_item_t *items;
    size_t count;

    if (n->type != YAML_SEQUENCE_NODE)
        return fail(c, n,
                    "nat_matrix.dataplanes must be a sequence of dataplane names like [nebula, "
                    "tailscale], not %s",
                    found(c, n));
    items = n->data.sequence.items.start;
    count = (size_t)(n->data.sequence.items.top - items);
    if (count == 0)
        return fail(c, n, "nat_matrix.dataplanes is empty; list at least one, like [nebula]");
    if (count > ML_NAT_DATAPLANES_MAX)
        return fail(c, yaml_document_get_node(c->doc, items[ML_NAT_DATAPLANES_MAX]),
                    "nat_matrix.dataplanes lists %zu dataplanes; at most %d", count,
                    ML_NAT_DATAPLANES_MAX);
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = yaml_document_get_node(c->doc, items[i]);
        char name[ML_NAME_MAX];

        if (!get_name(c, item, "nat_matrix.dataplanes: dataplane", false, name))
            return false;
        for (size_t j = 0; j < t->nat_matrix.n_dataplanes; j++)
            if (strcmp(t->nat_matrix.dataplanes[j].name, name) == 0)
                return fail(c, item,
                            "nat_matrix.dataplanes: '%s' is listed twice (first at line %d)", name,
                            t->nat_matrix.dataplanes[j].line);
        t->nat_matrix.dataplanes[t->nat_matrix.n_dataplanes++] = (struct ml_path_ref){
            .name = g_strdup(name),
            .line = (int)item->start_mark.line + 1,
            .column = (int)item->start_mark.column + 1,
        };
    }
    return true;
}

static bool parse_nat_matrix(struct ctx *c, yaml_node_t *key, yaml_node_t *n)
{
    enum { TYPES, DATAPLANES, REPEATS, WINDOW_S };
    static const struct key keys[] = {[TYPES] = {"types", true},
                                      [DATAPLANES] = {"dataplanes", true},
                                      [REPEATS] = {"repeats", false},
                                      [WINDOW_S] = {"window_s", false},
                                      {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;

    t->nat_matrix.present = true;
    t->nat_matrix.repeats = 3;
    t->nat_matrix.window_s = 20;
    t->nat_matrix.line = (int)key->start_mark.line + 1;
    t->nat_matrix.column = (int)key->start_mark.column + 1;
    c->nat_matrix_at = key;
    if (!read_mapping(c, n, "nat_matrix", keys, v) || !parse_nat_types(c, v[TYPES]) ||
        !parse_nat_dataplanes(c, v[DATAPLANES]))
        return false;
    if (v[REPEATS] && !get_uint(c, v[REPEATS], "nat_matrix.repeats", 1, 20, &t->nat_matrix.repeats))
        return false;
    if (v[WINDOW_S] &&
        !get_uint(c, v[WINDOW_S], "nat_matrix.window_s", 5, 300, &t->nat_matrix.window_s))
        return false;
    return true;
}

/* Whether node i may be put behind a NAT: its own nat:, or as one of the matrix's two clients
 * when the matrix has a type other than none. */
static bool may_be_natted(const struct ml_topology *t, size_t i)
{
    if (t->nodes[i].nat != ML_NAT_NONE)
        return true;
    if (!t->nat_matrix.present || (i != t->measure.client && i != t->measure.server))
        return false;
    for (size_t k = 0; k < t->nat_matrix.n_types; k++)
        if (t->nat_matrix.types[k] != ML_NAT_NONE)
            return true;
    return false;
}

/* Whether a is a host of the lab subnet that no node has as its address. */
static bool free_lab_host(const struct ml_topology *t, uint32_t a)
{
    uint32_t mask = prefix_mask(t->lab_subnet.prefix);
    if ((a & mask) != ntohl(t->lab_subnet.net.s_addr) || !(a & ~mask) || (a & ~mask) == ~mask)
        return false;
    for (size_t i = 0; i < t->n_nodes; i++)
        if (ntohl(t->nodes[i].address.s_addr) == a)
            return false;
    return true;
}

/* An address to suggest for the hub's second_address: its address + 10, or else the first free
 * host above it, or else the first free host of the subnet; NULL when every host is taken. */
static const char *suggest_second_address(struct ctx *c)
{
    const struct ml_topology *t = c->topo;
    uint32_t hub = ntohl(t->nodes[t->wireguard.hub].address.s_addr);
    uint32_t net = ntohl(t->lab_subnet.net.s_addr), size = ~prefix_mask(t->lab_subnet.prefix);
    uint32_t candidate = hub + 10;

    for (uint32_t k = 0; !free_lab_host(t, candidate) && k <= size; k++)
        candidate = net + ((hub - net + 1 + k) & size);
    return free_lab_host(t, candidate) ? ip_str(c, (struct in_addr){htonl(candidate)}) : NULL;
}

/* The hub's second address: a free host of the lab subnet. */
static bool check_second_address(struct ctx *c)
{
    const struct ml_topology *t = c->topo;
    const struct ml_node *hub = &t->nodes[t->wireguard.hub];
    const struct ml_subnet *net = &t->lab_subnet;
    yaml_node_t *at = c->at[t->wireguard.hub].second_address;
    uint32_t a = ntohl(hub->second_address.s_addr), mask = prefix_mask(net->prefix);

    if ((a & mask) != ntohl(net->net.s_addr))
        return fail(c, at, "node '%s': second_address %s is outside the lab subnet %s", hub->name,
                    ip_str(c, hub->second_address), subnet_str(c, net));
    if ((a & ~mask) == 0 || (a & ~mask) == ~mask)
        return fail(c, at, "node '%s': second_address %s is the %s address of the lab subnet %s",
                    hub->name, ip_str(c, hub->second_address),
                    (a & ~mask) ? "broadcast" : "network", subnet_str(c, net));
    for (size_t j = 0; j < t->n_nodes; j++)
        if (t->nodes[j].address.s_addr == hub->second_address.s_addr)
            return fail(c, at,
                        "node '%s': second_address %s is already the address of node '%s' "
                        "(line %d); %s",
                        hub->name, ip_str(c, hub->second_address), t->nodes[j].name,
                        t->nodes[j].line,
                        suggest_second_address(c)
                            ? fmt(c, "choose a free address such as %s", suggest_second_address(c))
                            : fmt(c, "the lab subnet %s has no free address left; widen it",
                                  subnet_str(c, net)));
    return true;
}

/* 172.16.0.0/16 holds every NATed client's inside network (ml_nat_inside_net). */
static bool check_inside_nets(struct ctx *c, const char *cause)
{
    const struct ml_topology *t = c->topo;
    const struct ml_subnet inside = {.net.s_addr = htonl(0xac100000u), .prefix = 16};
    const struct {
        const struct ml_subnet *net;
        yaml_node_t *at;
        const char *key;
    } nets[] = {{&t->lab_subnet, c->lab_subnet_at, "bridge.subnet"},
                {&t->wireguard.subnet, c->wg_subnet_at, "wireguard.subnet"}};

    for (size_t k = 0; k < G_N_ELEMENTS(nets); k++)
        if (subnets_overlap(nets[k].net, &inside))
            return fail(c, nets[k].at,
                        "%s %s overlaps 172.16.0.0/16, where %s puts each NATed client's inside "
                        "network (172.16.<last octet of its address>.0/24); move %s elsewhere",
                        nets[k].key, subnet_str(c, nets[k].net), cause, nets[k].key);
    for (size_t i = 0; i < t->n_nodes; i++)
        for (size_t j = 0; j < i && may_be_natted(t, i); j++)
            if (may_be_natted(t, j) &&
                ml_nat_inside_net(t, i).s_addr == ml_nat_inside_net(t, j).s_addr)
                return fail(c, c->at[i].address,
                            "node '%s': address %s ends in the same number as node '%s''s %s, so "
                            "their NATs' inside networks would both be %s/24; a NATed client's "
                            "address needs its own last octet",
                            t->nodes[i].name, ip_str(c, t->nodes[i].address), t->nodes[j].name,
                            ip_str(c, t->nodes[j].address), ip_str(c, ml_nat_inside_net(t, i)));
    return true;
}

/* nat and second_address on the nodes, against the roles: only clients sit behind a NAT, only
 * the hub has a second address, and a lab with a NAT needs it. */
static bool check_nat(struct ctx *c)
{
    const struct ml_topology *t = c->topo;
    const size_t hub = t->wireguard.hub;
    yaml_node_t *cause_at = NULL;
    const char *cause = NULL; /* what asks for a NAT, as a message names it */

    for (size_t i = 0; i < t->n_nodes; i++) {
        const struct ml_node *node = &t->nodes[i];
        if (i == hub && node->nat != ML_NAT_NONE)
            return fail(c, c->at[i].nat,
                        "node '%s': nat %s on the wireguard.hub: the hub is the public server; "
                        "only clients sit behind a NAT (remove nat or set it to none)",
                        node->name, ml_nat_type_name(node->nat));
        if (i != hub && c->at[i].second_address)
            return fail(c, c->at[i].second_address,
                        "node '%s': second_address is only for the wireguard.hub '%s' (the NAT "
                        "probes' second destination); remove it here",
                        node->name, t->nodes[hub].name);
        if (node->nat != ML_NAT_NONE && !cause) {
            cause_at = c->at[i].nat_key;
            cause = fmt(c, "the nat of node '%s'", node->name);
        }
    }
    if (!cause && t->nat_matrix.present) {
        cause_at = c->nat_matrix_at;
        cause = "nat_matrix";
    }
    if (c->at[hub].second_address && !check_second_address(c))
        return false;
    if (!cause)
        return true;
    if (!c->at[hub].second_address && !suggest_second_address(c))
        return fail(c, cause_at,
                    "%s needs a second lab address on the hub for the NAT probes and a second "
                    "STUN destination, but the lab subnet %s has no free address left; widen "
                    "bridge.subnet and add `second_address:` to node '%s' (line %d)",
                    cause, subnet_str(c, &t->lab_subnet), t->nodes[hub].name, t->nodes[hub].line);
    if (!c->at[hub].second_address)
        return fail(c, cause_at,
                    "%s needs a second lab address on the hub for the NAT probes and a second "
                    "STUN destination; add `second_address: %s` to node '%s' (line %d), a free "
                    "address in %s",
                    cause, suggest_second_address(c), t->nodes[hub].name, t->nodes[hub].line,
                    subnet_str(c, &t->lab_subnet));
    return check_inside_nets(c,
                             fmt(c, "%s (line %zu)", cause, (size_t)cause_at->start_mark.line + 1));
}

static bool parse_root(struct ctx *c, yaml_node_t *root)
{
    enum { NAME, DESCRIPTION, IMAGE, BRIDGE, DEFAULTS, NODES, WIREGUARD, MEASURE, NAT_MATRIX };
    static const struct key keys[] = {[NAME] = {"name", true},
                                      [DESCRIPTION] = {"description", false},
                                      [IMAGE] = {"image", true},
                                      [BRIDGE] = {"bridge", true},
                                      [DEFAULTS] = {"defaults", false},
                                      [NODES] = {"nodes", true},
                                      [WIREGUARD] = {"wireguard", true},
                                      [MEASURE] = {"measure", true},
                                      [NAT_MATRIX] = {"nat_matrix", false},
                                      {NULL, false}};
    yaml_node_t *v[MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;
    unsigned vcpus = 1, memory_mib = 1024;
    const char *description;

    if (!read_mapping(c, root, NULL, keys, v) || !get_name(c, v[NAME], "lab name", false, t->name))
        return false;
    if (v[DESCRIPTION] && !get_string(c, v[DESCRIPTION], "description", &description))
        return false;
    if (!parse_image(c, v[IMAGE]) || !parse_bridge(c, v[BRIDGE]))
        return false;
    if (v[DEFAULTS] && !parse_defaults(c, v[DEFAULTS], &vcpus, &memory_mib))
        return false;
    if (!parse_nodes(c, v[NODES], vcpus, memory_mib) || !parse_wireguard(c, v[WIREGUARD]) ||
        !parse_measure(c, v[MEASURE]))
        return false;
    if (v[NAT_MATRIX] && !parse_nat_matrix(c, find_key(c, root, "nat_matrix"), v[NAT_MATRIX]))
        return false;
    if (subnets_overlap(&t->lab_subnet, &t->wireguard.subnet))
        return fail(c, c->wg_subnet_at, "wireguard.subnet %s overlaps the lab subnet %s",
                    subnet_str(c, &t->wireguard.subnet), subnet_str(c, &t->lab_subnet));
    return check_nodes(c) && check_roles(c) && check_nat(c);
}

static void syntax_error(const char *name, const yaml_parser_t *parser, const char *text,
                         size_t len, GError **err)
{
    size_t line = parser->problem_mark.line, column = parser->problem_mark.column;
    const char *problem = parser->problem ? parser->problem : "out of memory";

    if (parser->error == YAML_READER_ERROR) {
        line = column = 0;
        for (size_t i = 0; i < parser->problem_offset && i < len; i++) {
            column++;
            if (text[i] == '\n')
                line++, column = 0;
        }
    }
    if (parser->context)
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%zu:%zu: invalid YAML: %s (%s at line %zu, column %zu)", name, line + 1,
                    column + 1, problem, parser->context, (size_t)parser->context_mark.line + 1,
                    (size_t)parser->context_mark.column + 1);
    else
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s:%zu:%zu: invalid YAML: %s", name, line + 1,
                    column + 1, problem);
}

/* The anchor an event declares, or NULL. */
static const unsigned char *event_anchor(const yaml_event_t *e)
{
    switch (e->type) {
    case YAML_SCALAR_EVENT:
        return e->data.scalar.anchor;
    case YAML_SEQUENCE_START_EVENT:
        return e->data.sequence_start.anchor;
    case YAML_MAPPING_START_EVENT:
        return e->data.mapping_start.anchor;
    default:
        return NULL;
    }
}

/* The tag an event gives its node (!!str, !x, !<...>), or NULL. */
static const unsigned char *event_tag(const yaml_event_t *e)
{
    switch (e->type) {
    case YAML_SCALAR_EVENT:
        return e->data.scalar.tag;
    case YAML_SEQUENCE_START_EVENT:
        return e->data.sequence_start.tag;
    case YAML_MAPPING_START_EVENT:
        return e->data.mapping_start.tag;
    default:
        return NULL;
    }
}

/* The word of text that starts at offset, as a message may show it: "!!str", "%TAG". */
static char *word_at(const char *text, size_t len, size_t offset)
{
    size_t n = 0;
    while (offset + n < len && n < 40 && !g_ascii_isspace(text[offset + n]) && text[offset + n])
        n++;
    g_autofree char *word = g_strndup(text + MIN(offset, len), n);
    return g_strescape(word, NULL);
}

/* libyaml's scanner slows down with each flow level (half a megabyte of '[' takes minutes), so
 * nesting is bounded before a document is built; the schema itself needs six levels. Anchors
 * and aliases are refused here too: the loader checks each new anchor against all earlier
 * ones (a megabyte of anchors costs 20 s), and a topology has no use for them. */
static bool check_depth(const char *name, const char *text, size_t len, GError **err)
{
    yaml_parser_t parser;
    yaml_event_t event;
    unsigned depth = 0;
    bool ok = true, done = false;

    if (!yaml_parser_initialize(&parser))
        g_error("out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (ok && !done) {
        if (!yaml_parser_parse(&parser, &event)) {
            syntax_error(name, &parser, text, len, err);
            ok = false;
            break;
        }
        if (event.type == YAML_SEQUENCE_START_EVENT || event.type == YAML_MAPPING_START_EVENT)
            depth++;
        else if (event.type == YAML_SEQUENCE_END_EVENT || event.type == YAML_MAPPING_END_EVENT)
            depth--;
        /* A tag would give a value a type other than the one the schema reads it as (`!!str
         * 1024` is a string to YAML and 1024 to the checks), and a directive declares tags or
         * another YAML version: a topology is plain YAML 1.1 values, nothing else. */
        if (event.type == YAML_DOCUMENT_START_EVENT &&
            (event.data.document_start.version_directive ||
             event.data.document_start.tag_directives.start !=
                 event.data.document_start.tag_directives.end)) {
            g_autofree char *word = word_at(text, len, event.start_mark.index);
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "%s:%zu:%zu: YAML directives ('%s') are not allowed in a topology; remove "
                        "the line",
                        name, (size_t)event.start_mark.line + 1,
                        (size_t)event.start_mark.column + 1, word);
            ok = false;
        } else if (event_tag(&event) && !event_anchor(&event)) {
            g_autofree char *word = word_at(text, len, event.start_mark.index);
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "%s:%zu:%zu: YAML tags ('%s') are not allowed in a topology; remove the "
                        "tag and write the value plainly",
                        name, (size_t)event.start_mark.line + 1,
                        (size_t)event.start_mark.column + 1, word);
            ok = false;
        } else if (event.type == YAML_ALIAS_EVENT || event_anchor(&event)) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "%s:%zu:%zu: YAML %s are not allowed in a topology; write the value out",
                        name, (size_t)event.start_mark.line + 1,
                        (size_t)event.start_mark.column + 1,
                        event.type == YAML_ALIAS_EVENT ? "aliases" : "anchors");
            ok = false;
        } else if (depth > MAX_DEPTH) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "%s:%zu:%zu: nesting is deeper than %d levels; a topology needs at most 6",
                        name, (size_t)event.start_mark.line + 1,
                        (size_t)event.start_mark.column + 1, MAX_DEPTH);
            ok = false;
        }
        done = event.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return ok;
}

/* Loads the one document of the text; a second document is an error too. */
static bool load_document(const char *name, const char *text, size_t len, yaml_document_t *doc,
                          GError **err)
{
    yaml_parser_t parser;
    yaml_document_t extra;
    yaml_node_t *extra_root;
    bool ok = false;

    if (!check_depth(name, text, len, err))
        return false;
    if (!yaml_parser_initialize(&parser))
        g_error("out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, doc)) {
        syntax_error(name, &parser, text, len, err);
        goto out;
    }
    if (!yaml_parser_load(&parser, &extra)) {
        syntax_error(name, &parser, text, len, err);
        yaml_document_delete(doc);
        goto out;
    }
    extra_root = yaml_document_get_root_node(&extra);
    if (extra_root) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%zu:%zu: a second YAML document starts here; a topology file holds one",
                    name, (size_t)extra_root->start_mark.line + 1,
                    (size_t)extra_root->start_mark.column + 1);
        yaml_document_delete(doc);
    }
    yaml_document_delete(&extra);
    ok = !extra_root;
out:
    yaml_parser_delete(&parser);
    return ok;
}

struct ml_topology *ml_topology_parse(const char *name, const char *text, size_t len, GError **err)
{
    g_autoptr(MlTopology) topo = NULL;
    yaml_document_t doc;
    yaml_node_t *root;
    struct ctx c = {.file = name, .doc = &doc, .err = err};
    bool ok;

    if (len > MAX_FILE_BYTES) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s: the file is larger than 1 MiB, the limit for a topology", name);
        return NULL;
    }
    if (!load_document(name, text, len, &doc, err))
        return NULL;
    root = yaml_document_get_root_node(&doc);
    if (!root) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:1:1: the file is empty; a topology is a mapping with the keys name, "
                    "image, bridge, nodes, wireguard and measure",
                    name);
        yaml_document_delete(&doc);
        return NULL;
    }
    topo = g_new0(struct ml_topology, 1);
    topo->path = g_strdup(name);
    c.topo = topo;
    c.scratch = g_ptr_array_new_with_free_func(g_free);
    ok = parse_root(&c, root);
    g_ptr_array_unref(c.scratch);
    yaml_document_delete(&doc);
    return ok ? g_steal_pointer(&topo) : NULL;
}

/* What a file that is not a regular one is, for the message that refuses it. */
static const char *file_kind(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISSOCK(mode) ? "a socket"
                            : "a special file";
}

struct ml_topology *ml_topology_load(const char *path, GError **err)
{
    g_autofree char *text = g_malloc(MAX_FILE_BYTES + 1);
    struct stat st;
    size_t len;
    int saved;

    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer, and a terminal for
     * carrier; the file's kind is known only once it is open. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        saved = errno;
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s: cannot open the topology file: %s", path,
                    g_strerror(saved));
        return NULL;
    }
    if (fstat(fd, &st) != 0) {
        saved = errno;
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s: cannot stat the topology file: %s", path,
                    g_strerror(saved));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s: the topology is %s, not a regular file; give the path of a topology file",
                    path, file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        saved = errno;
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s: cannot read the topology file: %s", path,
                    g_strerror(saved));
        close(fd);
        return NULL;
    }
    len = fread(text, 1, MAX_FILE_BYTES + 1, f);
    saved = errno;
    if (ferror(f)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s: cannot read the topology file: %s", path,
                    g_strerror(saved));
        fclose(f);
        return NULL;
    }
    fclose(f);
    return ml_topology_parse(path, text, len, err);
}

static const char *const nat_names[ML_NAT_TYPES] = {
    [ML_NAT_NONE] = "none",
    [ML_NAT_ONE_TO_ONE] = "one-to-one",
    [ML_NAT_FULL_CONE] = "full-cone",
    [ML_NAT_RESTRICTED_CONE] = "restricted-cone",
    [ML_NAT_PORT_RESTRICTED_CONE] = "port-restricted-cone",
    [ML_NAT_SYMMETRIC] = "symmetric",
};

const char *ml_nat_type_name(enum ml_nat_type t)
{
    return (unsigned)t < ML_NAT_TYPES ? nat_names[t] : NULL;
}

bool ml_nat_type_parse(const char *name, enum ml_nat_type *ret)
{
    for (unsigned i = 0; name && i < ML_NAT_TYPES; i++)
        if (!strcmp(name, nat_names[i])) {
            *ret = (enum ml_nat_type)i;
            return true;
        }
    return false;
}

bool ml_topology_has_nat(const struct ml_topology *topo)
{
    for (size_t i = 0; i < topo->n_nodes; i++)
        if (topo->nodes[i].nat != ML_NAT_NONE)
            return true;
    return false;
}

struct in_addr ml_nat_inside_net(const struct ml_topology *topo, size_t node)
{
    uint32_t last = ntohl(topo->nodes[node].address.s_addr) & 0xff;
    struct in_addr a = {htonl((172u << 24) | (16u << 16) | (last << 8))};
    return a;
}
