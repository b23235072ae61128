/* The NAT matrix's words and picture (results/natgrid.h): the expected outcome of each pair from
 * the research table, the sentence a student reads, and the SVG grid's squares. */
#include <json-c/json.h>

#include "check.h"
#include "dataplanes/dataplane.h"
#include "fixtures.h"
#include "report/compare.h"
#include "results/natgrid.h"
#include "topology/ports.h"

static void expect(const char *dp, const char *a, const char *b, const char *want)
{
    const char *got = ml_nat_expected_outcome(ml_dataplane_nat(dp), a, b);
    const char *back = ml_nat_expected_outcome(ml_dataplane_nat(dp), b, a);
    if (g_strcmp0(got, want) != 0 || g_strcmp0(back, want) != 0)
        fprintf(stderr, "%s %s + %s: %s / %s, wanted %s\n", dp, a, b, got ? got : "NULL",
                back ? back : "NULL", want ? want : "NULL");
    CHECK(g_strcmp0(got, want) == 0 && g_strcmp0(back, want) == 0);
}

static void test_expected(void)
{
    /* nebula 1.6.1 */
    expect("nebula", "none", "symmetric", "direct");
    expect("nebula", "one-to-one", "symmetric", "direct");
    expect("nebula", "full-cone", "symmetric", "direct");
    expect("nebula", "full-cone", "port-restricted-cone", "direct");
    expect("nebula", "none", "none", "direct");
    expect("nebula", "port-restricted-cone", "port-restricted-cone", "race");
    expect("nebula", "restricted-cone", "port-restricted-cone", "race");
    expect("nebula", "restricted-cone", "restricted-cone", "race");
    expect("nebula", "port-restricted-cone", "symmetric", "relay");
    expect("nebula", "symmetric", "symmetric", "relay");
    /* A restricted cone lets in any port of an address it sent to, so the symmetric side's new
     * port gets in once the cone's side has sent to its address: no relay needed. nebula: its
     * punch against its relay set-up, as between two cones. */
    expect("nebula", "restricted-cone", "symmetric", "race");
    /* Tailscale */
    expect("tailscale", "full-cone", "symmetric", "direct");
    expect("tailscale", "one-to-one", "symmetric", "direct");
    expect("tailscale", "port-restricted-cone", "port-restricted-cone", "direct");
    expect("tailscale", "restricted-cone", "port-restricted-cone", "direct");
    expect("tailscale", "port-restricted-cone", "symmetric", "relay");
    expect("tailscale", "symmetric", "symmetric", "relay");
    /* disco answers a ping from an unknown address and makes it a candidate (tailscale
     * wgengine/magicsock/magicsock.go:2599 handlePingLocked at de9ec7e, :2605 at v1.102.3). */
    expect("tailscale", "restricted-cone", "symmetric", "direct");
    /* `none` is no NAT, but the guest firewall does not open tailscaled's 41641 (ports.c): only
     * replies to what the side sent get in, as through a port-restricted cone. nebula's 4242 is
     * open: its `none` lets the first packet in. */
    expect("tailscale", "none", "symmetric", "relay");
    expect("tailscale", "none", "none", "direct");
    expect("tailscale", "none", "restricted-cone", "direct");
    expect("tailscale", "none", "port-restricted-cone", "direct");
    expect("tailscale", "none", "full-cone", "direct");
    /* tinc 1.0: 655 is open, and it sends through the hub until the peer answers, no race. */
    expect("tinc", "none", "port-restricted-cone", "direct");
    expect("tinc", "port-restricted-cone", "port-restricted-cone", "direct");
    expect("tinc", "symmetric", "port-restricted-cone", "relay");
    /* What `none` is for each dataplane agrees with the guest firewall: the port table opens
     * the dataplane's peer port or not. Every dataplane the NAT matrix runs (one with a path
     * that emerges by itself) has its traits in the registry. */
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/dataplanes.yaml", &err);
    CHECK(topo != NULL);
    struct ml_port ports[ML_PORTS_MAX];
    size_t n = topo ? ml_dataplane_ports(topo, ports) : 0;
    size_t with_auto = 0;
    for (size_t d = 0; ml_dataplanes[d]; d++) {
        const struct ml_path_ops *ops = ml_path_auto(ml_dataplanes[d]->name);
        if (!ops)
            continue;
        with_auto++;
        CHECK(ml_dataplanes[d]->nat != NULL);
        const struct ml_port *p = NULL;
        for (size_t k = 0; ops && k < n; k++)
            if (ports[k].proto == ML_PROTO_UDP && ports[k].port == ops->dataplane->autop->peer_port)
                p = &ports[k];
        CHECK(p && ml_nat_none_open(ml_dataplanes[d]->nat) == p->open);
    }
    CHECK(with_auto >= 3);
    CHECK(ml_path_auto("tailscale")->dataplane->autop->peer_port == 41641);
    CHECK(!ml_nat_none_open(ml_dataplane_nat("tailscale")) &&
          ml_nat_none_open(ml_dataplane_nat("nebula")));
    CHECK(!ml_nat_none_open(ml_dataplane_nat("wireguard")) &&
          !ml_nat_none_open(ml_dataplane_nat(NULL)));
    /* unknown: no guess */
    expect("wireguard", "none", "none", NULL);
    expect(NULL, "none", "none", NULL);
    expect("nebula", "hard", "none", NULL);
    expect("nebula", NULL, "none", NULL);
}

static void test_majority(void)
{
    CHECK_STR(ml_nat_majority(1, 1, 0), "direct"); /* a tie: direct */
    CHECK_STR(ml_nat_majority(1, 2, 0), "relay");
    CHECK_STR(ml_nat_majority(0, 1, 1), "relay");
    CHECK_STR(ml_nat_majority(0, 0, 2), "failed");
    CHECK_STR(ml_nat_majority(1, 0, 2), "failed");
    CHECK_STR(ml_nat_majority(0, 0, 0), "not-run");
}

static void expect_in(char *text, const char *want)
{
    if (!text || !strstr(text, want))
        fprintf(stderr, "\"%s\" not in \"%s\"\n", want, text ? text : "(null)");
    CHECK(text && strstr(text, want));
    g_free(text);
}

static void test_explain(void)
{
    expect_in(ml_nat_explain("nebula", ml_dataplane_nat("nebula"), "symmetric", "symmetric",
                             "relay", 0, 3, 0),
              "Both NATs pick a new port for every destination, so neither side can predict "
              "where to send: relay.");
    expect_in(ml_nat_explain("nebula", ml_dataplane_nat("nebula"), "port-restricted-cone", "none",
                             "direct", 2, 0, 0),
              "B has no NAT, so A's first packet to it opens the way: direct.");
    expect_in(ml_nat_explain("nebula", ml_dataplane_nat("nebula"), "full-cone", "symmetric",
                             "direct", 2, 0, 0),
              "A's full-cone NAT lets anyone in once A has sent a packet out");
    expect_in(ml_nat_explain("nebula", ml_dataplane_nat("nebula"), "port-restricted-cone",
                             "symmetric", "relay", 0, 2, 0),
              "B's symmetric NAT picks a new port for every destination");
    /* Tailscale's relay is DERP */
    expect_in(ml_nat_explain("tailscale", ml_dataplane_nat("tailscale"), "port-restricted-cone",
                             "symmetric", "relay", 0, 2, 0),
              ": relay (DERP).");
    /* a race whose repeats differ says so */
    char *race = ml_nat_explain("nebula", ml_dataplane_nat("nebula"), "port-restricted-cone",
                                "port-restricted-cone", "direct", 2, 1, 0);
    CHECK(race && strstr(race, "race between nebula's hole punch and its relay set-up"));
    expect_in(race, "the repeats differ: 2 direct, 1 relay.");
    expect_in(ml_nat_explain("nebula", ml_dataplane_nat("nebula"), "restricted-cone",
                             "port-restricted-cone", "relay", 0, 2, 0),
              "this time every repeat that worked went relay.");
    /* an outcome that is not the expected one says so */
    expect_in(ml_nat_explain("nebula", ml_dataplane_nat("nebula"), "symmetric", "symmetric",
                             "direct", 2, 0, 0),
              "so relay was expected, but this cell came out direct");
    expect_in(ml_nat_explain("nebula", ml_dataplane_nat("nebula"), "none", "symmetric", "direct", 1,
                             0, 1),
              "1 of 2 repeats failed.");
    expect_in(ml_nat_explain("wireguard", ml_dataplane_nat("wireguard"), "none", "none", "direct",
                             1, 0, 0),
              "meshlab has no expectation for this pair");
    /* Tailscale behind no NAT: the firewall filters, the text says so */
    expect_in(ml_nat_explain("tailscale", ml_dataplane_nat("tailscale"), "none", "symmetric",
                             "relay", 0, 2, 0),
              "B's symmetric NAT picks a new port for every destination, so the port the hub saw "
              "is not the one B uses towards A, and A, with no NAT but tailscale's port closed in "
              "its firewall, lets in only the exact addresses and ports it has sent to: relay "
              "(DERP).");
    expect_in(ml_nat_explain("nebula", ml_dataplane_nat("nebula"), "none", "symmetric", "direct", 2,
                             0, 0),
              "A has no NAT, so B's first packet to it opens the way: direct.");
    expect_in(ml_nat_explain("tailscale", ml_dataplane_nat("tailscale"), "none", "none", "direct",
                             2, 0, 0),
              "Neither side has a NAT, but neither firewall opens tailscale's port");
    expect_in(ml_nat_explain("tailscale", ml_dataplane_nat("tailscale"), "port-restricted-cone",
                             "none", "direct", 2, 0, 0),
              "B has no NAT but its firewall keeps tailscale's port closed, and A's NAT keeps one "
              "port for every destination");
    expect_in(ml_nat_explain("tailscale", ml_dataplane_nat("tailscale"), "restricted-cone",
                             "symmetric", "direct", 2, 0, 0),
              "B's symmetric NAT picks a new port for every destination, but A's NAT lets in any "
              "port of an address it has sent to, so once A has sent towards B, B's packets from "
              "that new port get in: direct.");

    /* a failed cell says what failed, a not-run one why */
    struct json_object *cell = json_tokener_parse(
        "{\"a_nat\": \"symmetric\", \"b_nat\": \"symmetric\", \"a_node\": \"client-a\", "
        "\"b_node\": \"client-b\", \"dataplane\": \"nebula\", \"outcome\": \"failed\", "
        "\"reason\": \"nebula on client-b did not start: exit status 1\", "
        "\"outcomes\": {\"direct\": 0, \"relay\": 0, \"failed\": 2}}");
    expect_in(ml_nat_explain_cell(cell, ml_dataplane_nat(json_object_get_string(
                                            json_object_object_get(cell, "dataplane")))),
              "No tunnel came up in 2 of 2 repeats (nebula on client-b did not start: exit "
              "status 1)");
    json_object_object_add(cell, "outcome", json_object_new_string("not-run"));
    json_object_object_add(cell, "reason", json_object_new_string("not run: artifacts missing"));
    char *nr = ml_nat_explain_cell(
        cell, ml_dataplane_nat(json_object_get_string(json_object_object_get(cell, "dataplane"))));
    CHECK_STR(nr, "Not run: artifacts missing.");
    g_free(nr);
    json_object_put(cell);
}

/* The fixture's stored explanations are what ml_nat_explain_cell writes: the runner stores them,
 * and the fixture must not teach the report something the code would not say. */
static void test_fixture_explanations(void)
{
    struct json_object *r = fixture_json("results-v2-nat.json");
    struct json_object *matrix = json_object_object_get(r, "nat_matrix");
    CHECK(json_object_array_length(matrix) == 12);
    for (size_t i = 0; i < json_object_array_length(matrix); i++) {
        struct json_object *cell = json_object_array_get_idx(matrix, i);
        g_autofree char *made = ml_nat_explain_cell(
            cell,
            ml_dataplane_nat(json_object_get_string(json_object_object_get(cell, "dataplane"))));
        CHECK_STR(made, json_object_get_string(json_object_object_get(cell, "explanation")));
        const char *expected = json_object_get_string(json_object_object_get(cell, "expected"));
        CHECK_STR(
            ml_nat_expected_outcome(
                ml_dataplane_nat(json_object_get_string(json_object_object_get(cell, "dataplane"))),
                json_object_get_string(json_object_object_get(cell, "a_nat")),
                json_object_get_string(json_object_object_get(cell, "b_nat"))),
            expected);
    }
    json_object_put(r);
}

/* The squares of a grid, read back with GMarkup (which also proves the SVG well-formed). */
struct squares {
    GPtrArray *fills; /* of class="cell", in document order */
    size_t keys;
};

static void on_start(GMarkupParseContext *ctx, const char *element, const char **names,
                     const char **values, gpointer data, GError **err)
{
    struct squares *sq = data;
    if (strcmp(element, "rect") != 0)
        return;
    const char *cls = NULL, *fill = NULL;
    for (size_t i = 0; names[i]; i++) {
        if (strcmp(names[i], "class") == 0)
            cls = values[i];
        else if (strcmp(names[i], "fill") == 0)
            fill = values[i];
    }
    if (g_strcmp0(cls, "cell") == 0)
        g_ptr_array_add(sq->fills, g_strdup(fill));
    else if (g_strcmp0(cls, "key") == 0)
        sq->keys++;
}

static bool read_squares(const char *svg, struct squares *sq)
{
    static const GMarkupParser parser = {.start_element = on_start};
    sq->fills = g_ptr_array_new_with_free_func(g_free);
    sq->keys = 0;
    GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, sq, NULL);
    g_autoptr(GError) err = NULL;
    bool ok = g_markup_parse_context_parse(ctx, svg, -1, &err) &&
              g_markup_parse_context_end_parse(ctx, &err);
    if (!ok)
        fprintf(stderr, "the SVG is not well-formed: %s\n", err->message);
    g_markup_parse_context_free(ctx);
    return ok;
}

static void test_svg(void)
{
    struct json_object *r = fixture_json("results-v2-nat.json");
    struct json_object *matrix = json_object_object_get(r, "nat_matrix");
    g_autofree char *nebula = ml_nat_svg(matrix, "nebula");
    g_autofree char *again = ml_nat_svg(matrix, "nebula");
    CHECK(nebula && again && strcmp(nebula, again) == 0); /* deterministic */
    CHECK(nebula && g_str_has_prefix(nebula, "<svg "));

    struct squares sq;
    CHECK(nebula && read_squares(nebula, &sq));
    /* one square per cell, the upper triangle row by row: (none: none, prc, sym), (prc: prc,
     * sym), (sym: sym) */
    const char *want[] = {"direct", "direct", "direct", "direct", "relay", "relay"};
    CHECK(sq.fills->len == G_N_ELEMENTS(want));
    for (guint i = 0; i < sq.fills->len && i < G_N_ELEMENTS(want); i++)
        CHECK_STR(g_ptr_array_index(sq.fills, i), ml_nat_colour(want[i]));
    CHECK(sq.keys == 4); /* the legend */
    g_ptr_array_unref(sq.fills);
    CHECK(strstr(nebula, ">0.5 s</text>") != NULL); /* seconds to direct in the square */
    CHECK(strstr(nebula, ">1/2, a race</text>") != NULL);
    CHECK(strstr(nebula, ">port-restricted-cone</text>") != NULL);
    CHECK(strstr(nebula, "client-b&apos;s NAT") || strstr(nebula, "client-b's NAT"));

    g_autofree char *ts = ml_nat_svg(matrix, "tailscale");
    CHECK(ts && read_squares(ts, &sq));
    CHECK(sq.fills->len == 6);
    for (guint i = 0; i < sq.fills->len; i++)
        CHECK_STR(g_ptr_array_index(sq.fills, i), ml_nat_colour("not-run"));
    g_ptr_array_unref(sq.fills);
    CHECK(ts && strstr(ts, ">not run</text>") != NULL);

    /* a failed cell is red; an unknown dataplane draws nothing */
    json_object_object_add(json_object_array_get_idx(matrix, 5), "outcome",
                           json_object_new_string("failed"));
    g_autofree char *failed = ml_nat_svg(matrix, "nebula");
    CHECK(failed && read_squares(failed, &sq));
    CHECK(sq.fills->len == 6 &&
          strcmp(g_ptr_array_index(sq.fills, 5), ml_nat_colour("failed")) == 0);
    g_ptr_array_unref(sq.fills);
    CHECK(ml_nat_svg(matrix, "wireguard") == NULL);
    CHECK(ml_nat_svg(NULL, "nebula") == NULL);
    CHECK_STR(ml_nat_colour("direct"), "#4caf50");
    CHECK_STR(ml_nat_colour("relay"), "#f0a020");
    CHECK_STR(ml_nat_colour("failed"), "#d03030");
    json_object_put(r);
}

/* meshlab compare reads documents with a NAT matrix: a cell whose outcome changed is a warning,
 * the paths are compared as before. */
static void test_compare(void)
{
    struct json_object *a = fixture_json("results-v2-nat.json");
    struct json_object *b = fixture_json("results-v2-nat.json");
    struct json_object *plain = fixture_json("results-v2-matrix.json");
    g_autoptr(GError) err = NULL;
    struct json_object *same = ml_compare(a, "a", b, "b", &err);
    CHECK(same != NULL);
    g_autofree char *same_text = same ? ml_compare_text(same) : NULL;
    CHECK(same_text && !strstr(same_text, "NAT matrix"));

    json_object_object_add(json_object_array_get_idx(json_object_object_get(b, "nat_matrix"), 3),
                           "outcome", json_object_new_string("relay"));
    struct json_object *changed = ml_compare(a, "a", b, "b", &err);
    g_autofree char *text = changed ? ml_compare_text(changed) : NULL;
    CHECK(text && strstr(text, "NAT matrix, nebula, port-restricted-cone x port-restricted-cone: "
                               "direct in A, relay in B (a race: its repeats may go either way)"));
    /* with and without NAT keys on either side */
    struct json_object *mixed = ml_compare(plain, "plain", a, "nat", &err);
    CHECK(mixed != NULL);
    struct json_object *mixed2 = ml_compare(a, "nat", plain, "plain", &err);
    CHECK(mixed2 != NULL);
    json_object_put(same);
    json_object_put(changed);
    json_object_put(mixed);
    json_object_put(mixed2);
    json_object_put(a);
    json_object_put(b);
    json_object_put(plain);
}

int main(void)
{
    test_expected();
    test_majority();
    test_explain();
    test_fixture_explanations();
    test_svg();
    test_compare();
    return check_finish();
}
