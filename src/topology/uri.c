#include "topology/uri.h"

#include <arpa/inet.h>
#include <string.h>

#include "core/util.h"

#define URI_MAX 4096
#define ALIAS_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

/* RFC 3986's classes, as libxml2's uri.c spells them (ISA_UNRESERVED, ISA_SUB_DELIM, ...). */
static bool unreserved(char c)
{
    return g_ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static bool sub_delim(char c)
{
    return c && strchr("!$&'()*+,;=", c);
}

static bool pct_encoded(const char *p)
{
    return p[0] == '%' && g_ascii_isxdigit(p[1]) && g_ascii_isxdigit(p[2]);
}

/* A query's character: pchar, '/' or '?' (xmlParse3986Query). */
static bool query_char(const char *p)
{
    return unreserved(*p) || pct_encoded(p) || sub_delim(*p) || *p == ':' || *p == '@' ||
           *p == '/' || *p == '?';
}

bool ml_uri_is_alias(const char *text)
{
    return text && *text && strspn(text, ALIAS_CHARS) == strlen(text);
}

void ml_uri_free(struct ml_uri *u)
{
    if (!u)
        return;
    g_free(u->scheme);
    g_free(u->user);
    g_free(u->server);
    g_free(u->path);
    g_free(u->query);
    for (size_t i = 0; i < u->n_params; i++) {
        g_free(u->params[i].name);
        g_free(u->params[i].value);
    }
    g_free(u->params);
    g_free(u);
}

static bool fail(GError **err, const char *text, const char *at, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static bool fail(GError **err, const char *text, const char *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, ML_ERROR, ML_ERR_INPUT, "not a libvirt URI meshlab takes (at character %d): %s",
                (int)(at - text) + 1, why);
    return false;
}

/* xmlURIUnescapeString over [p, end): every %XX decoded. False when a byte decodes to a control
 * character, which libvirt would cut a C string at (%00) or pass on to a program's argv. */
static bool unescape(const char *p, const char *end, char **ret)
{
    GString *s = g_string_sized_new((gsize)(end - p));
    for (; p < end; p++) {
        char c = *p;
        if (pct_encoded(p)) {
            c = (char)(g_ascii_xdigit_value(p[1]) * 16 + g_ascii_xdigit_value(p[2]));
            p += 2;
        }
        if ((unsigned char)c < 0x20 || c == 0x7f) {
            g_string_free(s, TRUE);
            return false;
        }
        g_string_append_c(s, c);
    }
    *ret = g_string_free(s, FALSE);
    return true;
}

static void add_param(struct ml_uri *u, char *name, char *value)
{
    u->params = g_renew(struct ml_uri_param, u->params, u->n_params + 1);
    u->params[u->n_params++] = (struct ml_uri_param){name, value};
}

/* virURIParseParams: a section ends at the next '&', or, where no '&' is left, at the next ';'. A
 * section without '=' is a name with the value "". One that starts with '=' has no name: libvirt
 * ignores "=value", and reads a lone "=" as a parameter named after the whole rest of the query
 * (xmlURIUnescapeString of length 0 unescapes to the end); both are refused. */
static bool split_query(struct ml_uri *u, const char *text, const char *query, GError **err)
{
    const char *q = query;
    while (*q) {
        const char *end = strchr(q, '&');
        if (!end)
            end = strchr(q, ';');
        if (!end)
            end = q + strlen(q);
        const char *eq = memchr(q, '=', (size_t)(end - q));
        if (eq == q)
            return fail(err, text, q, "a parameter of its query has no name");
        if (end != q) {
            char *name = NULL, *value = NULL;
            if (!unescape(q, eq ? eq : end, &name) ||
                !unescape(eq ? eq + 1 : end, end, &value)) {
                g_free(name);
                return fail(err, text, q, "a parameter of its query decodes to a control character");
            }
            add_param(u, name, value);
        }
        q = *end ? end + 1 : end;
    }
    return true;
}

/* userinfo "@": the user part; no password, no percent escape, nothing that reads as an option. */
static bool parse_user(struct ml_uri *u, const char *text, const char **p, const char *auth_end,
                       GError **err)
{
    const char *at = memchr(*p, '@', (size_t)(auth_end - *p));
    if (!at)
        return true;
    for (const char *c = *p; c < at; c++)
        if (!unreserved(*c))
            return fail(err, text, c,
                        "a user name is letters, digits and '.', '_', '~', '-' (no password, no "
                        "escapes)");
    if (at == *p || **p == '-')
        return fail(err, text, *p, "the user name is empty or starts with '-'");
    u->user = g_strndup(*p, (gsize)(at - *p));
    *p = at + 1;
    return true;
}

static bool parse_port(struct ml_uri *u, const char *text, const char *p, const char *auth_end,
                       GError **err)
{
    unsigned port = 0;
    const char *c = p;
    for (; c < auth_end && g_ascii_isdigit(*c) && port <= 65535; c++)
        port = port * 10 + (unsigned)(*c - '0');
    if (c != auth_end || c == p || port == 0 || port > 65535)
        return fail(err, text, p, "the port is a number from 1 to 65535");
    u->port = port;
    return true;
}

/* authority = [user "@"] host [":" port], host an IPv6 literal in brackets or a name of
 * unreserved characters. */
static bool parse_authority(struct ml_uri *u, const char *text, const char *p, const char *auth_end,
                            GError **err)
{
    if (!parse_user(u, text, &p, auth_end, err))
        return false;
    const char *host = p;
    if (*p == '[') {
        const char *close = memchr(p, ']', (size_t)(auth_end - p));
        g_autofree char *inner = close ? g_strndup(p + 1, (gsize)(close - p - 1)) : NULL;
        struct in6_addr a6;
        if (!inner || inet_pton(AF_INET6, inner, &a6) != 1)
            return fail(err, text, p, "a bracketed host is an IPv6 address");
        u->server = g_steal_pointer(&inner);
        p = close + 1;
    } else {
        while (p < auth_end && unreserved(*p))
            p++;
        if (p != host && *host == '-')
            return fail(err, text, host, "the host name starts with '-'");
        u->server = p != host ? g_strndup(host, (gsize)(p - host)) : NULL;
    }
    if (p == auth_end)
        return true;
    if (*p != ':')
        return fail(err, text, p,
                    "a host is a name of letters, digits, '.', '_', '~', '-', or an IPv6 address "
                    "in brackets");
    if (!u->server)
        return fail(err, text, p, "a port needs a host");
    return parse_port(u, text, p + 1, auth_end, err);
}

/* scheme "://" authority path ["?" query], each part as parse_authority and split_query say. */
static bool parse_into(struct ml_uri *u, const char *text, GError **err)
{
    const char *p = text;
    if (!g_ascii_islower(*p))
        return fail(err, text, p, "a URI starts with its scheme, like qemu+ssh://");
    while (g_ascii_islower(*p) || g_ascii_isdigit(*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    if (strncmp(p, "://", 3))
        return fail(err, text, p, "the scheme (lower case) is followed by '://'");
    u->scheme = g_strndup(text, (gsize)(p - text));
    p += 3;
    const char *auth_end = p + strcspn(p, "/?#");
    if (!parse_authority(u, text, p, auth_end, err))
        return false;
    const char *path = p = auth_end;
    for (; *p && *p != '?' && *p != '#'; p++)
        if (!unreserved(*p) && *p != '/')
            return fail(err, text, p,
                        "a path is letters, digits, '/', '.', '_', '~', '-' (no escapes)");
    u->path = p != path ? g_strndup(path, (gsize)(p - path)) : NULL;
    if (*p == '?') {
        const char *query = ++p;
        for (; *p && *p != '#'; p++)
            if (!query_char(p))
                return fail(err, text, p,
                            "'%c' is not allowed in a query (libvirt would not parse the URI; a "
                            "'%%' starts an escape of two hex digits)",
                            g_ascii_isprint(*p) ? *p : '?');
        u->query = g_strndup(query, (gsize)(p - query));
        if (!split_query(u, text, u->query, err))
            return false;
    }
    if (*p == '#')
        return fail(err, text, p, "a libvirt URI has no fragment ('#')");
    return true;
}

struct ml_uri *ml_uri_parse(const char *text, GError **err)
{
    if (!text || !*text) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "the URI is empty");
        return NULL;
    }
    if (strlen(text) > URI_MAX) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "the URI is longer than %d characters", URI_MAX);
        return NULL;
    }
    struct ml_uri *u = g_new0(struct ml_uri, 1);
    if (parse_into(u, text, err))
        return u;
    ml_uri_free(u);
    return NULL;
}

const char *ml_uri_param(const struct ml_uri *u, const char *name)
{
    const char *value = NULL;
    for (size_t i = 0; u && i < u->n_params; i++)
        if (!g_ascii_strcasecmp(u->params[i].name, name))
            value = u->params[i].value;
    return value;
}

const char *ml_uri_transport(const struct ml_uri *u)
{
    const char *plus = u ? strchr(u->scheme, '+') : NULL;
    return plus ? plus + 1 : NULL;
}

/* The query parameters a topology may give, per transport, and why the others are refused. */
struct param_rule {
    const char *name;
    const char *transport; /* NULL: refused; "ssh"/"tls": allowed there; "*": anywhere */
    const char *why;       /* why it is refused (or refused elsewhere) */
};

static const struct param_rule param_rules[] = {
    {"keyfile", "ssh", "is a key file of an SSH connection"},
    {"no_tty", "*", "is a flag (no terminal for ssh's questions)"},
    {"pkipath", "tls", "is the certificate directory of a TLS connection"},
    {"command", NULL, "names the program libvirt runs as ssh, as root, on this machine"},
    {"netcat", NULL, "names a program libvirt runs on the host, in a shell command line"},
    {"socket", NULL, "is pasted unquoted into the host's shell command line by libvirt"},
    {"name", NULL, "names the driver the host's libvirtd opens, which is the URI's own job"},
    {"mode", NULL, "chooses how the host's libvirtd is reached, which the URI already says"},
    {"proxy", NULL, "chooses the helper libvirt runs on the host"},
    {"no_verify", NULL, "turns off the check of the host's key or certificate"},
    {"no_sanity", NULL, "turns off libvirt's checks of the certificates"},
    {"known_hosts", NULL, "names another file of trusted host keys"},
    {"known_hosts_verify", NULL, "changes how the host's key is checked"},
    {"sshauth", NULL, "changes how SSH authenticates"},
    {"auth", NULL, "changes how libvirt authenticates"},
    {"authfile", NULL, "names another file of credentials"},
    {"tls_priority", NULL, "changes the TLS ciphers"},
};

static const struct param_rule *rule_of(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(param_rules); i++)
        if (!g_ascii_strcasecmp(param_rules[i].name, name))
            return &param_rules[i];
    return NULL;
}

/* A file a topology names in a URI: an absolute path of plain characters, no '..'. */
static bool plain_path(const char *v)
{
    if (v[0] != '/' || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                 "0123456789._/+-") != strlen(v))
        return false;
    g_auto(GStrv) parts = g_strsplit(v, "/", -1);
    for (size_t i = 0; parts[i]; i++)
        if (!strcmp(parts[i], ".."))
            return false;
    return true;
}

static char *param_refusal(const struct ml_uri *u, size_t i)
{
    const struct ml_uri_param *p = &u->params[i];
    g_autofree char *shown = ml_escape_controls(p->name);
    for (size_t j = 0; j < i; j++)
        if (!g_ascii_strcasecmp(u->params[j].name, p->name))
            return g_strdup_printf("the query gives '%s' twice (libvirt would take the last)",
                                   shown);
    const struct param_rule *r = rule_of(p->name);
    const char *transport = ml_uri_transport(u);
    if (!r)
        return g_strdup_printf("the query's '%s' is not a parameter meshlab knows", shown);
    if (!r->transport || (strcmp(r->transport, "*") && g_strcmp0(transport, r->transport)))
        return g_strdup_printf("the query's '%s' %s%s", shown, r->why,
                               r->transport ? ", and this URI is not of that transport" : "");
    if (!g_ascii_strcasecmp(p->name, "no_tty") ? strcmp(p->value, "0") && strcmp(p->value, "1")
                                               : !plain_path(p->value))
        return g_strdup_printf(
            "the query's '%s' has a value of another shape than %s", shown,
            !g_ascii_strcasecmp(p->name, "no_tty")
                ? "0 or 1"
                : "an absolute path of letters, digits, '.', '_', '/', '+', '-' without '..'");
    return NULL;
}

char *ml_uri_topology_refusal(const char *text)
{
    if (ml_uri_is_alias(text))
        return NULL;
    g_autoptr(GError) e = NULL;
    g_autoptr(MlUri) u = ml_uri_parse(text, &e);
    if (!u)
        return g_strdup(e->message);
    if (strchr(text, '%'))
        return g_strdup("a topology's URI holds no percent escape");
    bool test = !strcmp(u->scheme, "test");
    if (!test && strcmp(u->scheme, "qemu") && strcmp(u->scheme, "qemu+ssh") &&
        strcmp(u->scheme, "qemu+tls"))
        return g_strdup_printf("the transport '%s' is not one a lab uses (qemu:///system, "
                               "qemu+ssh://USER@HOST/system, qemu+tls://HOST/system)",
                               u->scheme);
    if (g_strcmp0(u->path, test ? "/default" : "/system"))
        return g_strdup_printf("the path is %s, not %s", u->path ? u->path : "empty",
                               test ? "/default (libvirt's test driver)"
                                    : "/system (the system libvirtd, which meshlab needs)");
    if (!strcmp(u->scheme, "qemu+ssh") && !u->server)
        return g_strdup("qemu+ssh:// names the host it reaches: qemu+ssh://USER@HOST/system");
    if ((test || !strcmp(u->scheme, "qemu")) && (u->server || u->user || u->port))
        return g_strdup_printf("%s:// has no host; qemu+ssh://USER@HOST/system reaches another",
                               u->scheme);
    for (size_t i = 0; i < u->n_params; i++) {
        char *why = param_refusal(u, i);
        if (why)
            return why;
    }
    return NULL;
}

/* The parameters as the remote driver takes them: the last value of each name, by lower-case
 * name. */
static GHashTable *param_table(const struct ml_uri *u)
{
    GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (size_t i = 0; i < u->n_params; i++)
        g_hash_table_insert(t, g_ascii_strdown(u->params[i].name, -1), u->params[i].value);
    return t;
}

static bool same_params(const struct ml_uri *a, const struct ml_uri *b)
{
    g_autoptr(GHashTable) ta = param_table(a);
    g_autoptr(GHashTable) tb = param_table(b);
    if (g_hash_table_size(ta) != g_hash_table_size(tb))
        return false;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, ta);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (g_strcmp0(v, g_hash_table_lookup(tb, k)))
            return false;
    return true;
}

bool ml_uri_same(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    if (!strcmp(a, b))
        return true;
    g_autoptr(MlUri) ua = ml_uri_parse(a, NULL);
    g_autoptr(MlUri) ub = ml_uri_parse(b, NULL);
    return ua && ub && !strcmp(ua->scheme, ub->scheme) && !g_strcmp0(ua->user, ub->user) &&
           !g_ascii_strcasecmp(ua->server ? ua->server : "", ub->server ? ub->server : "") &&
           ua->port == ub->port && !strcmp(ua->path ? ua->path : "", ub->path ? ub->path : "") &&
           same_params(ua, ub);
}

char *ml_uri_public(const char *text)
{
    if (!text)
        return NULL;
    g_autoptr(MlUri) u = ml_uri_parse(text, NULL);
    if (!u) {
        g_autofree char *head = g_strndup(text, strcspn(text, "?#"));
        const char *at = strrchr(head, '@');
        const char *scheme_end = strstr(head, "://");
        if (at && scheme_end && at > scheme_end)
            return g_strdup_printf("%.*s%s", (int)(scheme_end + 3 - head), head, at + 1);
        return g_steal_pointer(&head);
    }
    GString *s = g_string_new(u->scheme);
    g_string_append(s, "://");
    if (u->user)
        g_string_append_printf(s, "%s@", u->user);
    if (u->server)
        g_string_append_printf(s, strchr(u->server, ':') ? "[%s]" : "%s", u->server);
    if (u->port)
        g_string_append_printf(s, ":%u", u->port);
    if (u->path)
        g_string_append(s, u->path);
    return g_string_free(s, FALSE);
}
