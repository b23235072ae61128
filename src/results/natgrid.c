#include "results/natgrid.h"

#include <string.h>

#include "results/format.h"

enum filtering { FILTER_NONE, FILTER_ADDRESS, FILTER_ADDRESS_PORT };

/* RFC 4787 behaviour of each topology word (docs/topology.md, nat). "none" is no NAT: what gets
 * in is up to the guest firewall and the dataplane's port (side_of). */
static const struct nat_type {
    const char *name;
    bool open;              /* an unsolicited first packet gets in */
    bool dependent_mapping; /* a new public port per destination */
    enum filtering filtering;
} types[] = {
    {"none", true, false, FILTER_NONE},
    {"one-to-one", true, false, FILTER_NONE},
    {"full-cone", true, false, FILTER_NONE},
    {"restricted-cone", false, false, FILTER_ADDRESS},
    {"port-restricted-cone", false, false, FILTER_ADDRESS_PORT},
    {"symmetric", false, true, FILTER_ADDRESS_PORT},
};

static const struct nat_type *type_named(const char *name)
{
    for (size_t i = 0; name && i < G_N_ELEMENTS(types); i++)
        if (strcmp(types[i].name, name) == 0)
            return &types[i];
    return NULL;
}

bool ml_nat_none_open(const struct ml_nat_traits *d)
{
    return d && d->none_open;
}

/* One side of a pair as the dataplane meets it. */
struct side {
    const struct nat_type *type;
    bool open, dependent_mapping;
    enum filtering filtering;
    bool firewalled; /* no NAT, the dataplane's port closed */
};

static bool side_of(const struct ml_nat_traits *d, const char *name, struct side *ret)
{
    const struct nat_type *x = type_named(name);
    if (!x || !d)
        return false;
    *ret = (struct side){x, x->open, x->dependent_mapping, x->filtering, false};
    if (strcmp(x->name, "none") == 0 && !d->none_open) {
        ret->open = false;
        ret->filtering = FILTER_ADDRESS_PORT;
        ret->firewalled = true;
    }
    return true;
}

static bool races(const struct ml_nat_traits *d)
{
    return d && d->races;
}

const char *ml_nat_expected_outcome(const struct ml_nat_traits *dataplane, const char *a,
                                    const char *b)
{
    struct side x, y;
    if (!side_of(dataplane, a, &x) || !side_of(dataplane, b, &y))
        return NULL;
    if (x.open || y.open)
        return "direct";
    /* A symmetric side sends from a port nobody saw: only a side that lets in any port of an
     * address it has sent to takes it (Tailscale: a disco ping from an unknown address is
     * answered there and the address becomes a candidate, wgengine/magicsock/magicsock.go:2599
     * handlePingLocked, de9ec7e; 2605 at v1.102.3). */
    if ((x.dependent_mapping && (y.dependent_mapping || y.filtering == FILTER_ADDRESS_PORT)) ||
        (y.dependent_mapping && x.filtering == FILTER_ADDRESS_PORT))
        return "relay"; /* nebula's relay, Tailscale's DERP */
    /* both keep one port (or take any port of an address they sent to) and filter: nebula 1.6.1
     * races its punch against its relay set-up, Tailscale's disco pings from both sides open
     * both */
    return races(dataplane) ? "race" : "direct";
}

const char *ml_nat_majority(unsigned n_direct, unsigned n_relay, unsigned n_failed)
{
    if (n_direct + n_relay + n_failed == 0)
        return "not-run";
    if (n_direct >= n_relay && n_direct >= n_failed)
        return "direct";
    return n_relay >= n_failed ? "relay" : "failed";
}

static const char *relay_word(const struct ml_nat_traits *d)
{
    return d && d->relay_word ? d->relay_word : "relay";
}

/* Who side c (named cn) lets in, for a sentence: "client-a's NAT lets in only ...". */
static char *lets_in_only(const char *dataplane, const struct side *c, const char *cn)
{
    if (c->firewalled)
        return g_strdup_printf("%s, with no NAT but %s's port closed in its firewall, lets in "
                               "only the exact addresses and ports it has sent to",
                               cn, dataplane);
    return g_strdup_printf("%s's NAT lets in only %s it has sent to", cn,
                           c->filtering == FILTER_ADDRESS ? "the addresses"
                                                          : "the exact addresses and ports");
}

/* Why the pair gives what it is expected to give, without the conclusion: NULL when the pair
 * or dataplane is unknown. */
static char *why(const char *dataplane, const struct ml_nat_traits *t, const char *a, const char *b,
                 const char *an, const char *bn)
{
    struct side x, y;
    if (!side_of(t, a, &x) || !side_of(t, b, &y))
        return NULL;
    if (x.open || y.open) {
        bool b_open = y.open;
        const struct nat_type *o = b_open ? y.type : x.type;
        const char *on = b_open ? bn : an, *pn = b_open ? an : bn;
        if (strcmp(o->name, "none") == 0)
            return g_strdup_printf("%s has no NAT, so %s's first packet to it opens the way", on,
                                   pn);
        if (strcmp(o->name, "one-to-one") == 0)
            return g_strdup_printf("%s's one-to-one NAT passes every packet on to it, so %s's "
                                   "first packet opens the way",
                                   on, pn);
        return g_strdup_printf("%s's full-cone NAT lets anyone in once %s has sent a packet out, "
                               "which it did to the hub, so %s's first packet gets through",
                               on, on, pn);
    }
    if (x.dependent_mapping && y.dependent_mapping)
        return g_strdup("both NATs pick a new port for every destination, so neither side can "
                        "predict where to send");
    if (x.dependent_mapping || y.dependent_mapping) {
        bool a_sym = x.dependent_mapping;
        const char *sn = a_sym ? an : bn, *cn = a_sym ? bn : an;
        const struct side *c = a_sym ? &y : &x;
        if (c->filtering == FILTER_ADDRESS)
            return g_strdup_printf(
                "%s's symmetric NAT picks a new port for every destination, but %s's NAT lets in "
                "any port of an address it has sent to, so once %s has sent towards %s, %s's "
                "packets from that new port get in",
                sn, cn, cn, sn, sn);
        g_autofree char *only = lets_in_only(dataplane, c, cn);
        return g_strdup_printf("%s's symmetric NAT picks a new port for every destination, so the "
                               "port the hub saw is not the one %s uses towards %s, and %s",
                               sn, sn, cn, only);
    }
    if (races(t))
        return g_strdup("both NATs keep one port for every destination but let in only what "
                        "their side has sent to, so both sides must punch at about the same "
                        "time");
    if (x.firewalled && y.firewalled)
        return g_strdup_printf("neither side has a NAT, but neither firewall opens %s's port, so "
                               "each lets in only what it has sent to, and disco pings from both "
                               "sides at once open both",
                               dataplane);
    if (x.firewalled || y.firewalled)
        return g_strdup_printf("%s has no NAT but its firewall keeps %s's port closed, and %s's "
                               "NAT keeps one port for every destination, so the address the hub "
                               "saw is the one to send to, and disco pings from both sides at "
                               "once open both",
                               x.firewalled ? an : bn, dataplane, x.firewalled ? bn : an);
    return g_strdup("both NATs keep one port for every destination, so the address the hub saw "
                    "is the one to send to, and disco pings from both sides at once open both "
                    "NATs");
}

static const char *outcome_word(const struct ml_nat_traits *t, const char *outcome)
{
    return g_strcmp0(outcome, "relay") == 0 ? relay_word(t) : outcome;
}

/* text as the start of a sentence: its first letter in upper case, unless it is a node's name
 * (client-a stays client-a). */
static void put_sentence_start(GString *s, const char *text, const char *an, const char *bn)
{
    size_t at = s->len;
    g_string_append(s, text);
    if (!(an && g_str_has_prefix(text, an)) && !(bn && g_str_has_prefix(text, bn)))
        s->str[at] = g_ascii_toupper(s->str[at]);
}

static char *explain(const char *dataplane, const struct ml_nat_traits *t, const char *a,
                     const char *b, const char *an, const char *bn, const char *outcome,
                     unsigned nd, unsigned nr, unsigned nf, const char *reason)
{
    GString *s = g_string_new(NULL);
    const char *expected = ml_nat_expected_outcome(t, a, b);
    g_autofree char *because = why(dataplane, t, a, b, an, bn);
    unsigned n = nd + nr + nf;

    if (g_strcmp0(outcome, "not-run") == 0) {
        const char *r = reason && *reason ? reason : "no reason recorded";
        if (g_str_has_prefix(r, "not run"))
            put_sentence_start(s, r, NULL, NULL);
        else
            g_string_append_printf(s, "Not run: %s", r);
        g_string_append(s, g_str_has_suffix(s->str, ".") ? "" : ".");
        return g_string_free(s, false);
    }
    if (g_strcmp0(outcome, "failed") == 0) {
        g_string_append(s, "No tunnel came up");
        if (n)
            g_string_append_printf(s, " in %u of %u repeats", nf, n);
        g_string_append_printf(s, " (%s), so this cell shows nothing about the NATs.",
                               reason && *reason ? reason : "no reason recorded");
        if (because)
            g_string_append_printf(s, " Had it worked: %s: %s.", because,
                                   g_strcmp0(expected, "race") == 0 ? "a race"
                                                                    : outcome_word(t, expected));
        return g_string_free(s, false);
    }
    if (!because) {
        g_string_append_printf(s,
                               "%s and %s on %s came out %s; meshlab has no expectation for "
                               "this pair.",
                               a ? a : "?", b ? b : "?", dataplane ? dataplane : "?",
                               outcome_word(t, outcome));
        return g_string_free(s, false);
    }
    put_sentence_start(s, because, an, bn);
    if (g_strcmp0(expected, "race") == 0) {
        g_string_append_printf(s, ": %s.", outcome_word(t, outcome));
        g_string_append_printf(s,
                               " It is a race between %s's hole punch and its relay set-up (a "
                               "tunnel that comes up relayed stays relayed)",
                               dataplane);
        if (nd && nr)
            g_string_append_printf(s, ", and the repeats differ: %u direct, %u relay.", nd, nr);
        else
            g_string_append_printf(s, "; this time %s went %s.",
                                   nd + nr > 1 ? "every repeat that worked" : "it", outcome);
    } else if (g_strcmp0(expected, outcome) == 0) {
        g_string_append_printf(s, ": %s.", outcome_word(t, outcome));
    } else {
        g_string_append_printf(s,
                               ", so %s was expected, but this cell came out %s: look at its "
                               "captures and at the NAT behaviour observed.",
                               outcome_word(t, expected), outcome_word(t, outcome));
    }
    if (nf)
        g_string_append_printf(s, " %u of %u repeats failed.", nf, n);
    return g_string_free(s, false);
}

char *ml_nat_explain(const char *dataplane, const struct ml_nat_traits *traits, const char *a,
                     const char *b, const char *outcome, unsigned n_direct, unsigned n_relay,
                     unsigned n_failed)
{
    return explain(dataplane, traits, a, b, "A", "B", outcome, n_direct, n_relay, n_failed, NULL);
}

static unsigned count_of(struct json_object *outcomes, const char *key)
{
    double v;
    return ml_j_num(outcomes, key, &v) && v > 0 ? (unsigned)v : 0;
}

char *ml_nat_explain_cell(struct json_object *cell, const struct ml_nat_traits *traits)
{
    struct json_object *o = ml_j_obj(cell, "outcomes");
    return explain(ml_j_str(cell, "dataplane"), traits, ml_j_str(cell, "a_nat"),
                   ml_j_str(cell, "b_nat"), ml_j_str_or(cell, "a_node", "A"),
                   ml_j_str_or(cell, "b_node", "B"), ml_j_str_or(cell, "outcome", "not-run"),
                   count_of(o, "direct"), count_of(o, "relay"), count_of(o, "failed"),
                   ml_j_str(cell, "reason"));
}

static bool of_dataplane(struct json_object *cell, const char *dataplane)
{
    return g_strcmp0(ml_j_str(cell, "dataplane"), dataplane) == 0;
}

static void add_once(GPtrArray *a, const char *s)
{
    if (s && !g_ptr_array_find_with_equal_func(a, s, g_str_equal, NULL))
        g_ptr_array_add(a, (gpointer)s);
}

GPtrArray *ml_nat_types_of(struct json_object *matrix, const char *dataplane)
{
    GPtrArray *t = g_ptr_array_new();
    for (size_t i = 0; i < ml_j_len(matrix); i++) {
        struct json_object *cell = json_object_array_get_idx(matrix, i);
        if (!of_dataplane(cell, dataplane))
            continue;
        add_once(t, ml_j_str(cell, "a_nat"));
        add_once(t, ml_j_str(cell, "b_nat"));
    }
    return t;
}

GPtrArray *ml_nat_dataplanes_of(struct json_object *matrix)
{
    GPtrArray *d = g_ptr_array_new();
    for (size_t i = 0; i < ml_j_len(matrix); i++)
        add_once(d, ml_j_str(json_object_array_get_idx(matrix, i), "dataplane"));
    return d;
}

struct json_object *ml_nat_cell(struct json_object *matrix, const char *dataplane, const char *a,
                                const char *b)
{
    for (size_t i = 0; i < ml_j_len(matrix); i++) {
        struct json_object *cell = json_object_array_get_idx(matrix, i);
        const char *x = ml_j_str(cell, "a_nat"), *y = ml_j_str(cell, "b_nat");
        if (of_dataplane(cell, dataplane) && ((g_strcmp0(x, a) == 0 && g_strcmp0(y, b) == 0) ||
                                              (g_strcmp0(x, b) == 0 && g_strcmp0(y, a) == 0)))
            return cell;
    }
    return NULL;
}

const char *ml_nat_colour(const char *outcome)
{
    if (g_strcmp0(outcome, "direct") == 0)
        return "#4caf50";
    if (g_strcmp0(outcome, "relay") == 0)
        return "#f0a020";
    if (g_strcmp0(outcome, "failed") == 0)
        return "#d03030";
    return "#b0b0b0";
}
