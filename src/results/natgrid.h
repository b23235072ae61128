/* The NAT matrix's words: what each pair of NAT types is expected to give on each dataplane
 * (the table of docs/nat-traversal.md, from nebula 1.6.1's and Tailscale's code), a sentence
 * a student understands for what a cell gave, and the cell's picture as a self-contained SVG.
 * Pure: no I/O; the runner stores the outcome and the explanation in results.json
 * (docs/results.md, nat_matrix), the report prints the stored ones. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

/* What a dataplane's own transport does when a client sits behind nothing (the guest firewall
 * alone) or a NAT, as the NAT grid's expected outcomes and words need it (its callers look it
 * up in the dataplane registry, ml_dataplane_nat; tests/test_natgrid.c checks none_open
 * against the port table the firewall is built from). */
struct ml_nat_traits {
    /* With no NAT the guest firewall decides: true when it opens the dataplane's peer port, so
     * the other side's first packet gets in (nebula's 4242); false when only replies get in, as
     * through a port-restricted cone (tailscaled's 41641). */
    bool none_open;
    /* Whether it races its hole punch against its relay set-up (nebula 1.6.1), so a cell may
     * end either way where a punch is possible. */
    bool races;
    const char *relay_word;     /* what the report calls its relay: "relay", "relay (DERP)" */
    const char *capture_filter; /* the display filter that shows its hole punch */
    const char *capture_what;   /* what that filter shows, when it is more than one thing */
};

/* "direct", "relay" or "race" (nebula 1.6.1: its hole punch against its relay set-up) for NAT
 * types a and b (topology words: none, one-to-one, full-cone, restricted-cone,
 * port-restricted-cone, symmetric) on dataplane "nebula" or "tailscale"; the order of a and b
 * does not matter. NULL for an unknown dataplane or type. */
const char *ml_nat_expected_outcome(const struct ml_nat_traits *dataplane, const char *a,
                                    const char *b);

/* Whether, on dataplane, a client with no NAT lets the other client's first packet in: its
 * peer port is open in the guest firewall (nebula's 4242). False for tailscale, whose 41641 is
 * not opened, so `none` filters as a port-restricted cone for it, and for an unknown dataplane. */
bool ml_nat_none_open(const struct ml_nat_traits *dataplane);

/* A cell's outcome from its repeats' counts: the most frequent; on a tie direct beats relay
 * and relay beats failed; "not-run" when all are 0. */
const char *ml_nat_majority(unsigned n_direct, unsigned n_relay, unsigned n_failed);

/* One to three plain sentences on why the pair of NAT types gave outcome ("direct", "relay",
 * "failed", "not-run") over its repeats, saying so when it is not the expected one and when the
 * repeats of a race differ. g_free it. */
char *ml_nat_explain(const char *dataplane, const struct ml_nat_traits *traits, const char *a,
                     const char *b, const char *outcome, unsigned n_direct, unsigned n_relay,
                     unsigned n_failed);

/* The same for a results.json nat_matrix cell (its a_nat, b_nat, a_node, b_node, dataplane,
 * outcome, outcomes and reason): the sides named by their nodes, a failed or not-run cell
 * with its reason. g_free it. */
char *ml_nat_explain_cell(struct json_object *cell, const struct ml_nat_traits *traits);

/* The grid of results.json's nat_matrix cells of one dataplane as an SVG (no XML declaration,
 * inline-ready): one <rect class="cell"> per cell (upper triangle, rows a_nat, columns b_nat in
 * the order the types first appear), its fill the outcome's colour (ml_nat_colour), the outcome,
 * seconds to direct and repeats in the square, type names on both axes, and a legend. NULL when
 * the dataplane has no cell. g_free it. */
char *ml_nat_svg(struct json_object *matrix, const char *dataplane);

/* The fill of an outcome's square: green direct, amber relay, red failed, grey otherwise. */
const char *ml_nat_colour(const char *outcome);

/* The NAT types of one dataplane's cells in the order they first appear (a_nat before b_nat),
 * each once: a GPtrArray of const char * borrowed from matrix. */
GPtrArray *ml_nat_types_of(struct json_object *matrix, const char *dataplane);

/* The dataplanes of nat_matrix in the order they first appear: borrowed strings. */
GPtrArray *ml_nat_dataplanes_of(struct json_object *matrix);

/* The cell of dataplane for the unordered pair {a, b}, or NULL. */
struct json_object *ml_nat_cell(struct json_object *matrix, const char *dataplane, const char *a,
                                const char *b);
