#include "topology/yaml.h"
#include "topology/name.h"
#include "core/util.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 16

bool ml_yaml_fail(struct ml_yaml *y, const yaml_node_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *rule = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(y->err, ML_ERROR, ML_ERR_INPUT, "%s:%zu:%zu: %s", y->file,
                (size_t)at->start_mark.line + 1, (size_t)at->start_mark.column + 1, rule);
    return false;
}

const char *ml_yaml_keep(struct ml_yaml *y, char *s)
{
    g_ptr_array_add(y->scratch, s);
    return s;
}

const char *ml_yaml_fmt(struct ml_yaml *y, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char *s = g_strdup_vprintf(format, ap);
    va_end(ap);
    return ml_yaml_keep(y, s);
}

/* A user's value as it may appear inside a one-line message: control characters escaped,
 * long values cut short. */
const char *ml_yaml_shown(struct ml_yaml *y, const char *s)
{
    if (y->data)
        return "(the file's text, not shown)";
    return ml_yaml_keep(y, ml_name_shown(s));
}

const char *ml_yaml_value(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

bool ml_yaml_is_null(const yaml_node_t *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    for (size_t i = 0; i < G_N_ELEMENTS(nulls); i++)
        if (strcmp(ml_yaml_value(n), nulls[i]) == 0)
            return true;
    return false;
}

/* What was found where something else was expected, for "X must be Y, not Z". */
const char *ml_yaml_found(struct ml_yaml *y, const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a sequence";
    case YAML_SCALAR_NODE:
        return ml_yaml_is_null(n) ? "an empty value"
                                  : ml_yaml_fmt(y, "'%s'", ml_yaml_shown(y, ml_yaml_value(n)));
    default:
        return "nothing";
    }
}

bool ml_yaml_has_nul(const yaml_node_t *n)
{
    return strlen(ml_yaml_value(n)) != n->data.scalar.length;
}

static const char *join_keys(struct ml_yaml *y, const struct ml_yaml_key *keys)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; keys[i].name; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", keys[i].name);
    return ml_yaml_keep(y, g_string_free(s, FALSE));
}

/* Checks a mapping against its allowed keys and hands back each key's value (or NULL),
 * in the order of keys. libyaml keeps duplicate keys, so they are caught here. */
bool ml_yaml_read_mapping(struct ml_yaml *y, yaml_node_t *node, const char *what,
                          const struct ml_yaml_key *keys, yaml_node_t **ret_values)
{
    yaml_node_t *key_at[ML_YAML_MAX_KEYS] = {0};
    const char *prefix = what ? ml_yaml_fmt(y, "%s: ", what) : "";
    size_t n_keys = 0;

    while (keys[n_keys].name)
        n_keys++;
    g_assert(n_keys <= ML_YAML_MAX_KEYS);
    if (node->type != YAML_MAPPING_NODE)
        return ml_yaml_fail(y, node, "%s must be a mapping (keys: %s), not %s",
                            what ? what : "the topology", join_keys(y, keys),
                            ml_yaml_found(y, node));

    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
        size_t i = 0;

        if (k->type != YAML_SCALAR_NODE || ml_yaml_has_nul(k))
            return ml_yaml_fail(y, k, "%skeys must be plain names, not %s", prefix,
                                ml_yaml_found(y, k));
        while (i < n_keys && strcmp(keys[i].name, ml_yaml_value(k)) != 0)
            i++;
        if (i == n_keys)
            return ml_yaml_fail(y, k, "%sunknown key '%s'; allowed keys are %s", prefix,
                                ml_yaml_shown(y, ml_yaml_value(k)), join_keys(y, keys));
        if (key_at[i])
            return ml_yaml_fail(y, k, "%skey '%s' is given twice (first at line %zu)", prefix,
                                keys[i].name, (size_t)key_at[i]->start_mark.line + 1);
        key_at[i] = k;
        ret_values[i] = yaml_document_get_node(y->doc, p->value);
    }
    for (size_t i = 0; i < n_keys; i++)
        if (keys[i].required && !key_at[i])
            return ml_yaml_fail(y, node, "%smissing required key '%s'", prefix, keys[i].name);
    return true;
}

bool ml_yaml_get_string(struct ml_yaml *y, yaml_node_t *n, const char *what, const char **ret)
{
    if (n->type != YAML_SCALAR_NODE || ml_yaml_is_null(n))
        return ml_yaml_fail(y, n, "%s must be a string, not %s", what, ml_yaml_found(y, n));
    if (ml_yaml_has_nul(n))
        return ml_yaml_fail(y, n, "%s must not contain NUL characters", what);
    *ret = ml_yaml_value(n);
    return true;
}

/* The text of an unquoted scalar, as numbers are written; kind is "an integer", "a number". */
static bool get_plain(struct ml_yaml *y, yaml_node_t *n, const char *what, const char *kind,
                      const char **ret)
{
    if (n->type != YAML_SCALAR_NODE || ml_yaml_is_null(n))
        return ml_yaml_fail(y, n, "%s must be %s, not %s", what, kind, ml_yaml_found(y, n));
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return ml_yaml_fail(y, n, "%s must be %s, not the quoted string '%s'", what, kind,
                            ml_yaml_shown(y, ml_yaml_value(n)));
    *ret = ml_yaml_value(n);
    return true;
}

bool ml_yaml_get_uint(struct ml_yaml *y, yaml_node_t *n, const char *what, unsigned min,
                      unsigned max, unsigned *ret)
{
    const char *s, *digits;
    uint64_t v = 0;

    if (!get_plain(y, n, what, "an integer", &s))
        return false;
    digits = s[0] == '-' ? s + 1 : s;
    if (!*digits || strspn(digits, "0123456789") != strlen(digits) ||
        (digits[0] == '0' && digits[1]))
        return ml_yaml_fail(y, n, "%s must be a decimal integer, not '%s'", what,
                            ml_yaml_shown(y, s));
    for (const char *p = digits; *p && v <= UINT32_MAX; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (s[0] == '-' || v < min || v > max)
        return ml_yaml_fail(y, n, "%s %s is out of range %u..%u", what, ml_yaml_shown(y, s), min,
                            max);
    *ret = (unsigned)v;
    return true;
}

/* Names become parts of file names and libvirt object names. */
static bool check_name(struct ml_yaml *y, yaml_node_t *n, const char *what, const char *s,
                       bool allow_dot)
{
    g_autoptr(GError) rule = NULL;
    if (!ml_name_check(what, s, allow_dot, &rule))
        return ml_yaml_fail(y, n, "%s", rule->message);
    return true;
}

bool ml_yaml_get_name(struct ml_yaml *y, yaml_node_t *n, const char *what, bool allow_dot,
                      char ret[ML_NAME_MAX])
{
    const char *s;
    if (!ml_yaml_get_string(y, n, what, &s) || !check_name(y, n, what, s, allow_dot))
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

const char *ml_yaml_ip_str(struct ml_yaml *y, struct in_addr a)
{
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a, buf, sizeof(buf));
    return ml_yaml_fmt(y, "%s", buf);
}

const char *ml_yaml_subnet_str(struct ml_yaml *y, const struct ml_subnet *s)
{
    return ml_yaml_fmt(y, "%s/%u", ml_yaml_ip_str(y, s->net), s->prefix);
}

uint32_t ml_prefix_mask(unsigned prefix)
{
    return prefix ? UINT32_MAX << (32 - prefix) : 0;
}

bool ml_yaml_get_address(struct ml_yaml *y, yaml_node_t *n, const char *what, struct in_addr *ret)
{
    const char *s;
    if (!ml_yaml_get_string(y, n, what, &s))
        return false;
    if (!parse_ipv4(s, ret))
        return ml_yaml_fail(
            y, n,
            "%s '%s' is not an IPv4 address in canonical form (four decimal numbers "
            "0-255 without leading zeros, like 192.0.2.10)",
            what, ml_yaml_shown(y, s));
    return true;
}

bool ml_yaml_get_subnet(struct ml_yaml *y, yaml_node_t *n, const char *what, struct ml_subnet *ret)
{
    const char *s, *slash, *prefix;
    g_autofree char *addr = NULL;
    struct in_addr a;
    uint32_t host;
    unsigned p = 0;

    if (!ml_yaml_get_string(y, n, what, &s))
        return false;
    slash = strchr(s, '/');
    prefix = slash ? slash + 1 : "";
    if (slash)
        addr = g_strndup(s, (size_t)(slash - s));
    if (!slash || !parse_ipv4(addr, &a) || !*prefix || strlen(prefix) > 2 ||
        strspn(prefix, "0123456789") != strlen(prefix) || (prefix[0] == '0' && prefix[1]))
        return ml_yaml_fail(y, n, "%s '%s' is not an IPv4 network in CIDR form, like 192.0.2.0/24",
                            what, ml_yaml_shown(y, s));
    for (const char *q = prefix; *q; q++)
        p = p * 10 + (unsigned)(*q - '0');
    if (p < 8 || p > 30)
        return ml_yaml_fail(y, n, "%s %s: prefix /%u is out of range /8../30", what,
                            ml_yaml_shown(y, s), p);
    host = ntohl(a.s_addr);
    if (host & ~ml_prefix_mask(p)) {
        struct ml_subnet net = {.net.s_addr = htonl(host & ml_prefix_mask(p)), .prefix = p};
        return ml_yaml_fail(y, n, "%s %s has host bits set; the network is %s", what,
                            ml_yaml_shown(y, s), ml_yaml_subnet_str(y, &net));
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
        if ((host & ml_prefix_mask(MIN(p, reserved[i].prefix))) ==
            (reserved[i].net & ml_prefix_mask(MIN(p, reserved[i].prefix))))
            return ml_yaml_fail(y, n,
                                "%s %s is inside %s; choose a private range (RFC 1918) "
                                "such as 192.168.0.0/16 or 10.0.0.0/8",
                                what, ml_yaml_shown(y, s), reserved[i].what);
    ret->net = a;
    ret->prefix = p;
    ret->line = (int)n->start_mark.line + 1;
    ret->column = (int)n->start_mark.column + 1;
    return true;
}

/* The key node of name in mapping n, or NULL. */
yaml_node_t *ml_yaml_find_key(struct ml_yaml *y, yaml_node_t *n, const char *name)
{
    if (n->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
        if (k->type == YAML_SCALAR_NODE && strcmp(ml_yaml_value(k), name) == 0)
            return k;
    }
    return NULL;
}

/* A decimal number as people write one: 0.05, 1, 0.5; no exponents, signs or words. */
bool ml_yaml_get_decimal(struct ml_yaml *y, yaml_node_t *n, const char *what, double *ret)
{
    const char *s;
    size_t whole;

    if (!get_plain(y, n, what, "a number", &s))
        return false;
    whole = strspn(s, "0123456789");
    if (!whole || (s[whole] && (s[whole] != '.' || !s[whole + 1] ||
                                strspn(s + whole + 1, "0123456789") != strlen(s + whole + 1))))
        return ml_yaml_fail(y, n, "%s must be a decimal number like 0.05, not '%s'", what,
                            ml_yaml_shown(y, s));
    *ret = g_ascii_strtod(s, NULL);
    return true;
}

/* Compares two decimals as get_decimal accepts them (digits, optionally '.' and digits) by
 * their text, so that a bound holds exactly: 0.0019999999999999999 is below 0.002 although
 * both are the same double. Returns <0, 0 or >0 as strcmp. */
int ml_yaml_decimal_cmp(const char *a, const char *b)
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

/* The anchor an event declares and the tag it gives its node (!!str, !x, !<...>), each NULL
 * when it has none. */
static void event_marks(const yaml_event_t *e, const unsigned char **ret_anchor,
                        const unsigned char **ret_tag)
{
    *ret_anchor = *ret_tag = NULL;
    if (e->type == YAML_SCALAR_EVENT)
        *ret_anchor = e->data.scalar.anchor, *ret_tag = e->data.scalar.tag;
    else if (e->type == YAML_SEQUENCE_START_EVENT)
        *ret_anchor = e->data.sequence_start.anchor, *ret_tag = e->data.sequence_start.tag;
    else if (e->type == YAML_MAPPING_START_EVENT)
        *ret_anchor = e->data.mapping_start.anchor, *ret_tag = e->data.mapping_start.tag;
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
        const unsigned char *anchor, *tag;
        event_marks(&event, &anchor, &tag);
        if (event.type == YAML_SEQUENCE_START_EVENT || event.type == YAML_MAPPING_START_EVENT)
            depth++;
        else if (event.type == YAML_SEQUENCE_END_EVENT || event.type == YAML_MAPPING_END_EVENT)
            depth--;
        /* A tag would give a value a type other than the one the schema reads it as (`!!str
         * 1024` is a string to YAML and 1024 to the checks), and a directive declares tags or
         * another YAML version: a topology is plain YAML 1.1 values, nothing else. */
        g_autofree char *word = NULL, *rule = NULL;
        if (event.type == YAML_DOCUMENT_START_EVENT &&
            (event.data.document_start.version_directive ||
             event.data.document_start.tag_directives.start !=
                 event.data.document_start.tag_directives.end)) {
            word = word_at(text, len, event.start_mark.index);
            rule = g_strdup_printf(
                "YAML directives ('%s') are not allowed in a topology; remove the line", word);
        } else if (tag && !anchor) {
            word = word_at(text, len, event.start_mark.index);
            rule = g_strdup_printf("YAML tags ('%s') are not allowed in a topology; remove the "
                                   "tag and write the value plainly",
                                   word);
        } else if (event.type == YAML_ALIAS_EVENT || anchor) {
            rule = g_strdup_printf("YAML %s are not allowed in a topology; write the value out",
                                   event.type == YAML_ALIAS_EVENT ? "aliases" : "anchors");
        } else if (depth > MAX_DEPTH) {
            rule = g_strdup_printf("nesting is deeper than %d levels; a topology needs at most 6",
                                   MAX_DEPTH);
        }
        if (rule) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s:%zu:%zu: %s", name,
                        (size_t)event.start_mark.line + 1, (size_t)event.start_mark.column + 1,
                        rule);
            ok = false;
        }
        done = event.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return ok;
}

/* Loads the one document of the text; a second document is an error too. */
bool ml_yaml_load(const char *name, const char *text, size_t len, yaml_document_t *doc,
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

void ml_yaml_clear(struct ml_yaml *y)
{
    g_clear_pointer(&y->scratch, g_ptr_array_unref);
}

int ml_yaml_line(const yaml_node_t *n)
{
    return (int)n->start_mark.line + 1;
}

int ml_yaml_column(const yaml_node_t *n)
{
    return (int)n->start_mark.column + 1;
}

bool ml_yaml_collection(struct ml_yaml *y, yaml_node_t *n, const char *what,
                        const struct ml_yaml_shape *shape, size_t *ret_count)
{
    bool mapping = shape->type == YAML_MAPPING_NODE;
    size_t count;

    if (n->type != shape->type)
        return ml_yaml_fail(y, n, "%s must be a %s of %s, not %s", what,
                            mapping ? "mapping" : "sequence", shape->of, ml_yaml_found(y, n));
    count = mapping ? (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start)
                    : (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (count == 0 && shape->if_empty)
        return ml_yaml_fail(y, n, "%s is empty; %s", what, shape->if_empty);
    /* At the first one too many, which is where the file has to be cut. */
    if (shape->max && count > shape->max)
        return ml_yaml_fail(
            y, mapping ? ml_yaml_pair_key(y, n, shape->max) : ml_yaml_item(y, n, shape->max),
            "%s %s %zu %s; at most %zu", what, mapping ? "has" : "lists", count, shape->unit,
            shape->max);
    *ret_count = count;
    return true;
}

yaml_node_t *ml_yaml_item(struct ml_yaml *y, const yaml_node_t *n, size_t i)
{
    return yaml_document_get_node(y->doc, n->data.sequence.items.start[i]);
}

yaml_node_t *ml_yaml_pair_key(struct ml_yaml *y, const yaml_node_t *n, size_t i)
{
    return yaml_document_get_node(y->doc, n->data.mapping.pairs.start[i].key);
}

yaml_node_t *ml_yaml_pair_value(struct ml_yaml *y, const yaml_node_t *n, size_t i)
{
    return yaml_document_get_node(y->doc, n->data.mapping.pairs.start[i].value);
}
