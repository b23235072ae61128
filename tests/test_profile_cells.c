/* The cell vocabulary beyond DIRECTION-STREAMS[-fixed]: udp-RATE, rrul and pairs-K, what they
 * become and every way to write them wrong, with the file:line:col of the offending text. */
#include "check.h"
#include "topology/topology.h"

#include <math.h>

/* A three-node lab whose only profile, full, has the matrix given; the matrix is on line 9. */
static char *lab_with(const char *matrix, const char *ping_interval)
{
    return g_strdup_printf("name: cells\n"
                           "image: {use: debian-12}\n"
                           "bridge: {subnet: 10.0.0.0/16}\n"
                           "nodes: [{name: h, address: 10.0.0.1, tunnel_address: 172.16.0.1},\n"
                           "  {name: a, address: 10.0.0.2, tunnel_address: 172.16.0.2},\n"
                           "  {name: b, address: 10.0.0.3, tunnel_address: 172.16.0.3}]\n"
                           "hub: h\nwireguard: {subnet: 172.16.0.0/24}\n"
                           "measure: {client: a, server: b, paths: [plain], profiles: {full: "
                           "{pass_s: 30, passes: 1, ping_count: 1%s, matrix: %s}}}\n",
                           ping_interval, matrix);
}

static struct ml_topology *parse(const char *matrix, const char *ping_interval, GError **err)
{
    g_autofree char *text = lab_with(matrix, ping_interval);
    return ml_topology_parse("c.yaml", text, strlen(text), err);
}

/* Column of the first `at` on the matrix line (line 9), 1-based. */
static char *where(const char *matrix, const char *ping_interval, const char *at)
{
    g_autofree char *text = lab_with(matrix, ping_interval);
    const char *line = strstr(text, "measure: ");
    const char *hit = strstr(line, at);
    g_assert(hit);
    return g_strdup_printf("c.yaml:9:%zu: ", (size_t)(hit - line) + 1);
}

static void test_new_cells(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = parse(
        "[forward-1, udp-10M, udp-500k, udp-1G, {cell: rrul, passes: 2}, udp-250000]", "", &err);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    const struct ml_profile *p = ml_topology_profile(t, "full");
    CHECK(p->n_cells == 6);
    CHECK(p->cells[0].kind == ML_CELL_TCP);
    const struct ml_cell *u = &p->cells[1];
    CHECK_STR(u->name, "udp-10M");
    CHECK(u->kind == ML_CELL_UDP && u->udp_bits_per_second == 10e6);
    CHECK(u->direction == ML_DIR_FORWARD && u->streams == 1 && !u->fixed_rate && u->passes == 1);
    CHECK_STR(p->cells[2].name, "udp-500K"); /* the unit as iperf3 writes it */
    CHECK(p->cells[2].udp_bits_per_second == 500e3);
    CHECK(p->cells[3].udp_bits_per_second == 1e9);
    const struct ml_cell *r = &p->cells[4];
    CHECK_STR(r->name, "rrul");
    CHECK(r->kind == ML_CELL_RRUL && r->direction == ML_DIR_BIDIR);
    CHECK(r->streams == ML_RRUL_STREAMS && r->passes == 2 && !r->fixed_rate);
    CHECK(p->cells[5].udp_bits_per_second == 250000);
    CHECK_STR(p->cells[5].name, "udp-250000");

    /* pairs-K: K single-stream forward flows, up to the lab's two clients. */
    g_autoptr(MlTopology) tp = parse("[forward-1, pairs-1, {cell: pairs-2, passes: 3}]", "", &err);
    CHECK(tp != NULL);
    const struct ml_profile *pp = tp ? ml_topology_profile(tp, "full") : NULL;
    CHECK(pp && pp->n_cells == 3);
    if (pp && pp->n_cells == 3) {
        const struct ml_cell *c = &pp->cells[2];
        CHECK_STR(c->name, "pairs-2");
        CHECK(c->kind == ML_CELL_PAIRS && c->pairs == 2 && c->streams == 1);
        CHECK(c->direction == ML_DIR_FORWARD && !c->fixed_rate && c->passes == 3);
        CHECK(pp->cells[1].pairs == 1 && pp->cells[0].pairs == 0);
    }

    /* rrul with the ping at 20 Hz written out, and faster. */
    g_autoptr(MlTopology) t2 = parse("[forward-1, rrul]", ", ping_interval_s: 0.01", &err);
    CHECK(t2 != NULL);
}

static void test_cell_errors(void)
{
    static const struct {
        const char *matrix, *ping, *at, *rule;
    } cases[] = {
        {"[forward-1, udp]", "", "udp",
         "cell 'udp' is not udp-RATE; write it like udp-10M (one UDP stream at 10 Mbit/s, "
         "iperf3 -u -b 10M)"},
        {"[forward-1, udp-10M-fixed]", "", "udp-10M-fixed",
         "cell 'udp-10M-fixed' is not udp-RATE; write it like udp-10M (one UDP stream at 10 "
         "Mbit/s, iperf3 -u -b 10M)"},
        {"[forward-1, udp-10X]", "", "udp-10X",
         "cell 'udp-10X' has the rate '10X'; a UDP cell's rate is bits per second as a whole "
         "number with an optional K, M or G (x1000), like udp-500K, udp-10M or udp-1G"},
        {"[forward-1, udp-010M]", "", "udp-010M",
         "cell 'udp-010M' has the rate '010M'; a UDP cell's rate is bits per second as a whole "
         "number with an optional K, M or G (x1000), like udp-500K, udp-10M or udp-1G"},
        {"[forward-1, udp-1.5M]", "", "udp-1.5M",
         "cell 'udp-1.5M' has the rate '1.5M'; a UDP cell's rate is bits per second as a whole "
         "number with an optional K, M or G (x1000), like udp-500K, udp-10M or udp-1G"},
        {"[forward-1, udp-99K]", "", "udp-99K",
         "cell 'udp-99K' offers 99000 bit/s; a UDP cell's rate is 100K to 100G (below it too "
         "few datagrams a second to count a loss, above it no lab path carries it), like "
         "udp-10M"},
        {"[forward-1, udp-101G]", "", "udp-101G",
         "cell 'udp-101G' offers 101000000000 bit/s; a UDP cell's rate is 100K to 100G (below "
         "it too few datagrams a second to count a loss, above it no lab path carries it), like "
         "udp-10M"},
        {"[forward-1, rrul-8]", "", "rrul-8",
         "cell 'rrul-8': rrul takes nothing after it (it is always 4 TCP flows each way beside "
         "the pass's ping, as flent's RRUL); write rrul"},
        {"[forward-1, rrul]", ", ping_interval_s: 0.2", "rrul",
         "cell 'rrul' measures latency under load with the pass's ping, which runs every 0.2 s "
         "in this profile; rrul needs 0.05 s or less (20 Hz): set ping_interval_s: 0.05 or drop "
         "rrul"},
        {"[udp-10M, forward-1]", "", "udp-10M",
         "the first cell 'udp-10M' is the headline and must be a TCP cell at full speed (the "
         "fixed rate is a fraction of the paths' headline medians); put a cell such as "
         "forward-1 first"},
        {"[rrul]", "", "rrul",
         "the first cell 'rrul' is the headline and must be a TCP cell at full speed (the fixed "
         "rate is a fraction of the paths' headline medians); put a cell such as forward-1 "
         "first"},
        {"[forward-1, udp-10M, udp-10m]", "", "udp-10m",
         "cell 'udp-10M' is listed twice (first at line 9)"},
        {"[forward-1, sideways]", "", "sideways",
         "cell 'sideways' is not DIRECTION-STREAMS or DIRECTION-STREAMS-fixed (nor udp-RATE, "
         "rrul or pairs-K); write it like forward-1, reverse-8, forward-1-fixed, udp-10M, rrul or "
         "pairs-2"},
        /* pairs-K: K from 1 to 8, and no more than the lab's clients (here a and b) */
        {"[forward-1, pairs-0]", "", "pairs-0",
         "cell 'pairs-0' is not pairs-K with K 1..8; pairs-2 runs two single-stream TCP flows at "
         "once through the hub, each from one client to the next"},
        {"[forward-1, pairs-9]", "", "pairs-9",
         "cell 'pairs-9' is not pairs-K with K 1..8; pairs-2 runs two single-stream TCP flows at "
         "once through the hub, each from one client to the next"},
        {"[forward-1, pairs]", "", "pairs",
         "cell 'pairs' is not pairs-K with K 1..8; pairs-2 runs two single-stream TCP flows at "
         "once through the hub, each from one client to the next"},
        {"[forward-1, pairs-2x]", "", "pairs-2x",
         "cell 'pairs-2x' is not pairs-K with K 1..8; pairs-2 runs two single-stream TCP flows "
         "at once through the hub, each from one client to the next"},
        {"[forward-1, pairs-1, pairs-3]", "", "pairs-3",
         "cell 'pairs-3' runs 3 flows at once, each from one of the hub's clients to the next, "
         "and this lab has 2 clients besides the hub 'h'; add nodes or use pairs-2"},
        {"[pairs-2, forward-1]", "", "pairs-2",
         "the first cell 'pairs-2' is the headline and must be a TCP cell at full speed (the "
         "fixed rate is a fraction of the paths' headline medians); put a cell such as "
         "forward-1 first"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = parse(cases[i].matrix, cases[i].ping, &err);
        CHECK(t == NULL);
        g_autofree char *at = where(cases[i].matrix, cases[i].ping, cases[i].at);
        g_autofree char *want =
            g_strconcat(at, "measure.profiles.full.matrix: ", cases[i].rule, NULL);
        CHECK_STR(err ? err->message : NULL, want);
    }
}

int main(void)
{
    test_new_cells();
    test_cell_errors();
    return check_finish();
}
