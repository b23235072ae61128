#include "topology/profile.h"
#include "core/util.h"

#include <math.h>
#include <string.h>

#define DEFAULT_IDLE_S 2
#define DEFAULT_PING_INTERVAL_S 0.05
#define DEFAULT_FIXED_RATE_FRACTION 0.5
#define PASSES_MAX 20

/* The profiles of a topology that gives no measure.profiles: the same as the seed lab's. */
#define FWD ML_DIR_FORWARD
#define REV ML_DIR_REVERSE
#define BID ML_DIR_BIDIR
/* What the seed's profiles share: 20 Hz pings, half the slowest median. */
#define SEED(NAME, PASS_S, PASSES, PING_COUNT, IDLE_S)                                             \
    .name = NAME, .pass_s = PASS_S, .passes = PASSES, .ping_count = PING_COUNT,                    \
    .ping_interval_s = DEFAULT_PING_INTERVAL_S, .idle_s = IDLE_S,                                  \
    .fixed_rate_fraction = DEFAULT_FIXED_RATE_FRACTION
/* A TCP cell of the defaults: name, direction, streams, passes, at the fixed rate or not. */
#define TCP(NAME, DIR, STREAMS, PASSES, FIXED)                                                     \
    {                                                                                              \
        .name = NAME, .direction = DIR, .streams = STREAMS, .passes = PASSES, .fixed_rate = FIXED, \
        .kind = ML_CELL_TCP                                                                        \
    }
static const struct ml_profile default_profiles[] = {
    {SEED("full", 30, 3, 200, 5), .n_cells = 2,
     .cells = {TCP("forward-1", FWD, 1, 3, false), TCP("forward-1-fixed", FWD, 1, 3, true)}},
    {SEED("deep", 30, 3, 200, 5), .n_cells = 7,
     .cells = {TCP("forward-1", FWD, 1, 3, false), TCP("reverse-1", REV, 1, 3, false),
               TCP("bidir-1", BID, 1, 3, false), TCP("forward-8", FWD, 8, 3, false),
               TCP("reverse-8", REV, 8, 3, false), TCP("bidir-8", BID, 8, 3, false),
               TCP("forward-1-fixed", FWD, 1, 3, true)}},
    {SEED("quick", 4, 2, 40, 2), .n_cells = 4,
     .cells = {TCP("forward-1", FWD, 1, 2, false), TCP("reverse-1", REV, 1, 1, false),
               TCP("forward-8", FWD, 8, 1, false), TCP("forward-1-fixed", FWD, 1, 1, true)}},
};
#undef SEED
#undef TCP
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
    size_t one =
        IPERF_JSON_RUN + IPERF_JSON_SOCKET * sockets +
        ((size_t)seconds + 1) * (IPERF_JSON_INTERVAL + IPERF_JSON_INTERVAL_SOCKET * sockets);
    /* With a warm-up, the server's own document comes back inside the client's
     * (--get-server-output), as long as it. */
    return ml_profile_omit_s(seconds) ? 2 * one : one;
}

size_t ml_ping_text_bytes(unsigned count)
{
    return PING_TEXT + (size_t)PING_LINE * count;
}

unsigned ml_ping_count(unsigned seconds, double interval_s)
{
    return (unsigned)ceil(seconds / interval_s);
}

/* iperf3 -O: the warm-up left out of a pass's figures (connection set-up, slow start, a tunnel's
 * first handshake) is a quarter of the pass, at most ML_OMIT_MAX_S (1 s of a 4 s pass, 2 s of a
 * 30 s one), the pass still lasting pass_s (iperf3 -t pass_s - omit -O omit). The whole
 * transfer's payload, which the hub factor divides by, adds the warm-up as its receiver counted
 * it (--get-server-output, the server under -J: ml_iperf_parse). The client's own count of a
 * warm-up it sent is bytes it wrote, and those still in its socket buffer when the warm-up ended
 * are counted there and again in end.sum_received: the seed lab's first run with -O, reading
 * that count, found a genuine wireguard-hub forward-1 pass's hub factor at 2.07 against its
 * frames' 2.18 floor (445 kB omitted, 1.03 MB sent after it and 0.89 MB received, at 2.3 Mbit/s
 * under a loaded TCG host), and failed it. */
#define ML_OMIT_MAX_S 2

unsigned ml_profile_omit_s(unsigned pass_s)
{
    return MIN(pass_s / 4, ML_OMIT_MAX_S);
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

/* The cells the grammar knows, for the errors that list them. */
#define CELL_GRAMMAR                                                                               \
    "DIRECTION-STREAMS or DIRECTION-STREAMS-fixed (nor udp-RATE, rrul or pairs-K); write it "      \
    "like forward-1, reverse-8, forward-1-fixed, udp-10M, rrul or pairs-2"

/* udp-RATE: bits per second as iperf3 -b writes them, a whole number with K, M or G (x1000). */
static bool parse_udp_cell(struct ml_yaml *y, yaml_node_t *at, const char *what, const char *s,
                           const char *rate, struct ml_cell *ret)
{
    size_t digits = strspn(rate, "0123456789");
    const char *suffix = rate + digits;
    static const char units[] = "KMG";
    const char *unit = *suffix ? strchr(units, g_ascii_toupper(*suffix)) : NULL;
    if (digits == 0 || digits > 6 || rate[0] == '0' || (*suffix && (!unit || suffix[1])))
        return ml_yaml_fail(y, at,
                            "%s: cell '%s' has the rate '%s'; a UDP cell's rate is bits per "
                            "second as a whole number with an optional K, M or G (x1000), like "
                            "udp-500K, udp-10M or udp-1G",
                            what, ml_yaml_shown(y, s), ml_yaml_shown(y, rate));
    double bps = g_ascii_strtod(rate, NULL) * (unit ? pow(1000, (double)(unit - units + 1)) : 1);
    if (bps < ML_UDP_RATE_MIN || bps > ML_UDP_RATE_MAX)
        return ml_yaml_fail(y, at,
                            "%s: cell '%s' offers %.0f bit/s; a UDP cell's rate is %.0fK to %.0fG "
                            "(below it too few datagrams a second to count a loss, above it no "
                            "lab path carries it), like udp-10M",
                            what, ml_yaml_shown(y, s), bps, ML_UDP_RATE_MIN / 1e3,
                            ML_UDP_RATE_MAX / 1e9);
    *ret = (struct ml_cell){
        .direction = ML_DIR_FORWARD, .streams = 1, .kind = ML_CELL_UDP, .udp_bits_per_second = bps};
    g_snprintf(ret->name, sizeof(ret->name), "udp-%.*s%s", (int)digits, rate,
               unit ? (char[]){*unit, 0} : "");
    return true;
}

/* DIRECTION-STREAMS[-fixed]: forward-1, reverse-8, bidir-1, forward-1-fixed; udp-RATE; rrul;
 * pairs-K. */
static bool parse_cell_name(struct ml_yaml *y, yaml_node_t *at, const char *what, const char *s,
                            struct ml_cell *ret)
{
    g_auto(GStrv) parts = g_strsplit(s, "-", 4);
    guint n = g_strv_length(parts);
    size_t d = 0;
    unsigned streams = 0;

    if (strcmp(s, "rrul") == 0) {
        *ret = (struct ml_cell){
            .direction = ML_DIR_BIDIR, .streams = ML_RRUL_STREAMS, .kind = ML_CELL_RRUL};
        g_strlcpy(ret->name, "rrul", sizeof(ret->name));
        return true;
    }
    if (n >= 1 && strcmp(parts[0], "rrul") == 0)
        return ml_yaml_fail(y, at,
                            "%s: cell '%s': rrul takes nothing after it (it is always %u TCP "
                            "flows each way beside the pass's ping, as flent's RRUL); write rrul",
                            what, ml_yaml_shown(y, s), ML_RRUL_STREAMS);
    if (n >= 1 && strcmp(parts[0], "pairs") == 0) {
        const char *k = n == 2 ? parts[1] : "";
        unsigned pairs = strspn(k, "0123456789") == strlen(k) && *k && strlen(k) <= 2
                             ? (unsigned)g_ascii_strtoull(k, NULL, 10)
                             : 0;
        if (pairs < 1 || pairs > ML_PAIRS_MAX)
            return ml_yaml_fail(y, at,
                                "%s: cell '%s' is not pairs-K with K 1..%d; pairs-2 runs two "
                                "single-stream TCP flows at once through the hub, each from one "
                                "client to the next",
                                what, ml_yaml_shown(y, s), ML_PAIRS_MAX);
        *ret = (struct ml_cell){
            .direction = ML_DIR_FORWARD, .streams = 1, .kind = ML_CELL_PAIRS, .pairs = pairs};
        g_snprintf(ret->name, sizeof(ret->name), "pairs-%u", pairs);
        return true;
    }
    if (n >= 1 && strcmp(parts[0], "udp") == 0) {
        if (n != 2)
            return ml_yaml_fail(y, at,
                                "%s: cell '%s' is not udp-RATE; write it like udp-10M (one UDP "
                                "stream at 10 Mbit/s, iperf3 -u -b 10M)",
                                what, ml_yaml_shown(y, s));
        return parse_udp_cell(y, at, what, s, parts[1], ret);
    }
    if (n < 2 || n > 3 || !*parts[1] || strlen(parts[1]) > 4 ||
        strspn(parts[1], "0123456789") != strlen(parts[1]) || (parts[1][0] == '0' && parts[1][1]))
        return ml_yaml_fail(y, at, "%s: cell '%s' is not " CELL_GRAMMAR, what, ml_yaml_shown(y, s));
    while (d < G_N_ELEMENTS(direction_names) && strcmp(parts[0], direction_names[d]) != 0)
        d++;
    if (d == G_N_ELEMENTS(direction_names))
        return ml_yaml_fail(
            y, at,
            "%s: cell '%s' has the unknown direction '%s'; the directions are forward, "
            "reverse (iperf3 -R) and bidir (iperf3 --bidir), and the other cells udp-RATE, "
            "rrul and pairs-K",
            what, ml_yaml_shown(y, s), ml_yaml_shown(y, parts[0]));
    for (const char *p = parts[1]; *p; p++)
        streams = streams * 10 + (unsigned)(*p - '0');
    if (streams < 1 || streams > ML_STREAMS_MAX)
        return ml_yaml_fail(y, at, "%s: cell '%s' has %u streams; streams are 1..%d (iperf3 -P)",
                            what, ml_yaml_shown(y, s), streams, ML_STREAMS_MAX);
    if (n == 3 && strcmp(parts[2], "fixed") != 0)
        return ml_yaml_fail(
            y, at,
            "%s: cell '%s' ends in '-%s'; the only suffix is '-fixed', for the run's "
            "fixed offered rate",
            what, ml_yaml_shown(y, s), ml_yaml_shown(y, parts[2]));
    *ret = (struct ml_cell){
        .direction = (enum ml_direction)d, .streams = streams, .fixed_rate = n == 3};
    g_snprintf(ret->name, sizeof(ret->name), "%s-%u%s", direction_names[d], streams,
               n == 3 ? "-fixed" : "");
    return true;
}

/* One matrix entry: a cell name taking the profile's passes, or {cell: NAME, passes: N}. */
static bool parse_cell(struct ml_yaml *y, yaml_node_t *n, const char *what, unsigned passes,
                       struct ml_cell *ret, yaml_node_t **ret_name_at)
{
    static const struct ml_yaml_key keys[] = {{"cell", true}, {"passes", false}, {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    const char *name;

    if (n->type == YAML_MAPPING_NODE) {
        if (!ml_yaml_read_mapping(y, n, ml_yaml_fmt(y, "%s entry", what), keys, v) ||
            !ml_yaml_get_string(y, v[0], ml_yaml_fmt(y, "%s: cell", what), &name))
            return false;
        if (v[1] &&
            !ml_yaml_get_uint(y, v[1],
                              ml_yaml_fmt(y, "%s: cell '%s': passes", what, ml_yaml_shown(y, name)),
                              1, PASSES_MAX, &passes))
            return false;
        *ret_name_at = v[0];
    } else {
        if (n->type != YAML_SCALAR_NODE || ml_yaml_is_null(n) || ml_yaml_has_nul(n))
            return ml_yaml_fail(
                y, n,
                "%s: an entry is a cell name like forward-1 or a mapping {cell: NAME, "
                "passes: N}, not %s",
                what, ml_yaml_found(y, n));
        name = ml_yaml_value(n);
        *ret_name_at = n;
    }
    if (!parse_cell_name(y, *ret_name_at, what, name, ret))
        return false;
    ret->passes = passes;
    ret->line0 = (*ret_name_at)->start_mark.line;
    ret->column0 = (*ret_name_at)->start_mark.column;
    return true;
}

static const char *megabytes(struct ml_yaml *y, size_t bytes)
{
    return ml_yaml_fmt(y, "%.1f MB", (double)bytes / 1e6);
}

/* iperf3 -J prints the whole pass as one document when it ends; the guest agent must carry it
 * back in one reply. */
static bool check_iperf_output(struct ml_yaml *y, yaml_node_t *at, const char *what,
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
    return ml_yaml_fail(
        y, at,
        "%s: cell '%s' for pass_s %u makes iperf3 -J print about %s, more than the %s "
        "a guest command's output may be to come back whole (libvirt hands the guest "
        "agent's reply over as one string of at most 4 MiB, base64); the largest pass_s "
        "for %s is %u, or use at most %u streams for %u s",
        what, cell->name, p->pass_s, megabytes(y, bytes), megabytes(y, ML_GUEST_OUTPUT_MAX),
        cell->name, longest, most, p->pass_s);
}

/* The latency probe beside each pass prints a line a ping, returned when the pass ends. */
static bool check_ping_output(struct ml_yaml *y, yaml_node_t *at, const char *what,
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
    return ml_yaml_fail(
        y, at,
        "%s: ping_interval_s %g for pass_s %u makes the latency probe beside each pass "
        "print %u lines, about %s, more than the %s a guest command's output may be to "
        "come back whole (libvirt hands the guest agent's reply over as one string of at "
        "most 4 MiB, base64); the smallest ping_interval_s for pass_s %u is %u.%03u, or "
        "the largest pass_s at %g s is %u",
        what, p->ping_interval_s, p->pass_s, count, megabytes(y, ml_ping_text_bytes(count)),
        megabytes(y, ML_GUEST_OUTPUT_MAX), p->pass_s, interval_ms / 1000, interval_ms % 1000,
        p->ping_interval_s, longest);
}

static bool parse_matrix(struct ml_yaml *y, yaml_node_t *n, const char *what, struct ml_profile *p)
{
    static const struct ml_yaml_shape shape = {
        YAML_SEQUENCE_NODE, "cells like [forward-1, reverse-1]", "cells", ML_CELLS_MAX,
        "list at least one cell, or leave matrix out for the default [forward-1, forward-1-fixed]"};
    yaml_node_t *at[ML_CELLS_MAX];
    size_t count;

    if (!ml_yaml_collection(y, n, what, &shape, &count))
        return false;
    for (size_t i = 0; i < count; i++) {
        struct ml_cell *cell = &p->cells[i];
        if (!parse_cell(y, ml_yaml_item(y, n, i), what, p->passes, cell, &at[i]) ||
            !check_iperf_output(y, at[i], what, p, cell))
            return false;
        /* flent's RRUL reads latency under load from a ping at 20 Hz or faster; the pass's
         * ping runs at ping_interval_s. */
        if (cell->kind == ML_CELL_RRUL && p->ping_interval_s > ML_RRUL_PING_INTERVAL_S)
            return ml_yaml_fail(
                y, at[i],
                "%s: cell 'rrul' measures latency under load with the pass's ping, which "
                "runs every %g s in this profile; rrul needs %g s or less (20 Hz): set "
                "ping_interval_s: %g or drop rrul",
                what, p->ping_interval_s, ML_RRUL_PING_INTERVAL_S, ML_RRUL_PING_INTERVAL_S);
        for (size_t j = 0; j < i; j++)
            if (strcmp(p->cells[j].name, cell->name) == 0)
                return ml_yaml_fail(y, at[i], "%s: cell '%s' is listed twice (first at line %zu)",
                                    what, cell->name, (size_t)at[j]->start_mark.line + 1);
    }
    p->n_cells = count;
    if (p->cells[0].kind != ML_CELL_TCP || p->cells[0].fixed_rate)
        return ml_yaml_fail(
            y, at[0],
            "%s: the first cell '%s' is the headline and must %s (the fixed rate is a "
            "fraction of the paths' headline medians); put a cell such as forward-1 first",
            what, p->cells[0].name,
            p->cells[0].kind != ML_CELL_TCP ? "be a TCP cell at full speed" : "run at full speed");
    return true;
}

static bool parse_profile(struct ml_yaml *y, yaml_node_t *n, const char *name, struct ml_profile *p)
{
    enum { PASS_S, PASSES, PING_COUNT, PING_INTERVAL_S, IDLE_S, FRACTION, MATRIX };
    static const struct ml_yaml_key keys[] = {
        [PASS_S] = {"pass_s", true},         [PASSES] = {"passes", true},
        [PING_COUNT] = {"ping_count", true}, [PING_INTERVAL_S] = {"ping_interval_s", false},
        [IDLE_S] = {"idle_s", false},        [FRACTION] = {"fixed_rate_fraction", false},
        [MATRIX] = {"matrix", false},        {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0}, *gone;
    const char *what = ml_yaml_fmt(y, "measure.profiles.%s", name);

    /* Files written for meshlab 0.1 have it; say why it went rather than "unknown key". */
    if ((gone = ml_yaml_find_key(y, n, "transfer_s")))
        return ml_yaml_fail(
            y, gone,
            "%s.transfer_s is gone: every pass now counts the hub's bytes itself, so "
            "there is no separate transfer; remove the key (idle_s sets the idle "
            "baseline taken before the passes)",
            what);
    *p = (struct ml_profile){.ping_interval_s = DEFAULT_PING_INTERVAL_S,
                             .idle_s = DEFAULT_IDLE_S,
                             .fixed_rate_fraction = DEFAULT_FIXED_RATE_FRACTION};
    g_strlcpy(p->name, name, sizeof(p->name));
    if (!ml_yaml_read_mapping(y, n, what, keys, v) ||
        !ml_yaml_get_uint(y, v[PASS_S], ml_yaml_fmt(y, "%s.pass_s", what), 1, 600, &p->pass_s) ||
        !ml_yaml_get_uint(y, v[PASSES], ml_yaml_fmt(y, "%s.passes", what), 1, PASSES_MAX,
                          &p->passes) ||
        !ml_yaml_get_uint(y, v[PING_COUNT], ml_yaml_fmt(y, "%s.ping_count", what), 1, 1000,
                          &p->ping_count))
        return false;
    if (v[PING_INTERVAL_S]) {
        const char *key = ml_yaml_fmt(y, "%s.ping_interval_s", what);
        if (!ml_yaml_get_decimal(y, v[PING_INTERVAL_S], key, &p->ping_interval_s))
            return false;
        if (ml_yaml_decimal_cmp(ml_yaml_value(v[PING_INTERVAL_S]), "0.002") < 0 ||
            ml_yaml_decimal_cmp(ml_yaml_value(v[PING_INTERVAL_S]), "10") > 0)
            return ml_yaml_fail(y, v[PING_INTERVAL_S],
                                "%s %s is out of range 0.002..10 seconds (ping allows no shorter "
                                "interval than 0.002); write a value in that range",
                                key, ml_yaml_shown(y, ml_yaml_value(v[PING_INTERVAL_S])));
    }
    if (!check_ping_output(y, v[PING_INTERVAL_S] ? v[PING_INTERVAL_S] : v[PASS_S], what, p))
        return false;
    if (v[IDLE_S] &&
        !ml_yaml_get_uint(y, v[IDLE_S], ml_yaml_fmt(y, "%s.idle_s", what), 1, 600, &p->idle_s))
        return false;
    if (v[FRACTION]) {
        const char *key = ml_yaml_fmt(y, "%s.fixed_rate_fraction", what);
        if (!ml_yaml_get_decimal(y, v[FRACTION], key, &p->fixed_rate_fraction))
            return false;
        if (ml_yaml_decimal_cmp(ml_yaml_value(v[FRACTION]), "0") <= 0 ||
            ml_yaml_decimal_cmp(ml_yaml_value(v[FRACTION]), "1") > 0)
            return ml_yaml_fail(
                y, v[FRACTION],
                "%s %s is outside (0, 1]: the fixed offered rate is this fraction of "
                "the slowest path's median; write a fraction like 0.5",
                key, ml_yaml_shown(y, ml_yaml_value(v[FRACTION])));
    }
    if (v[MATRIX])
        return parse_matrix(y, v[MATRIX], ml_yaml_fmt(y, "%s.matrix", what), p);
    p->cells[0] = (struct ml_cell){.name = "forward-1",
                                   .direction = ML_DIR_FORWARD,
                                   .streams = 1,
                                   .passes = p->passes,
                                   .kind = ML_CELL_TCP};
    p->cells[1] = (struct ml_cell){.name = "forward-1-fixed",
                                   .direction = ML_DIR_FORWARD,
                                   .streams = 1,
                                   .passes = 1,
                                   .fixed_rate = true,
                                   .kind = ML_CELL_TCP};
    p->n_cells = 2;
    return true;
}

bool ml_profile_set_until(struct ml_profile *p, const char *arg, GError **err)
{
    g_auto(GStrv) parts = g_strsplit(arg, ",", 3);
    double pct = 0;
    guint64 max = ML_UNTIL_MAX_DEFAULT;
    char *end = NULL;
    bool ok = parts[0] && *parts[0];
    if (ok) {
        pct = g_ascii_strtod(parts[0], &end);
        ok = *end == '\0' && pct > 0 && pct <= 100;
    }
    if (ok && parts[1])
        ok = !parts[2] &&
             g_ascii_string_to_unsigned(parts[1], 10, 2, ML_UNTIL_MAX_LIMIT, &max, NULL);
    if (!ok) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "--until '%s' is not PCT[,MAX]: PCT the interval's half-width in %% of the "
                    "mean, above 0 and at most 100, MAX the most passes of a cell, 2 to %d "
                    "(default %d); for example --until 5,10",
                    arg, ML_UNTIL_MAX_LIMIT, ML_UNTIL_MAX_DEFAULT);
        return false;
    }
    p->until_percent = pct;
    p->until_max = (unsigned)max;
    return true;
}

bool ml_profiles_parse(struct ml_yaml *y, yaml_node_t *n, struct ml_topology *t)
{
    static const struct ml_yaml_shape shape = {
        YAML_MAPPING_NODE,
        "profile names to profiles, like {full: {pass_s: 30, passes: 3, ping_count: 200}}",
        "profiles", ML_PROFILES_MAX, NULL};
    size_t count;

    if (!ml_yaml_collection(y, n, "measure.profiles", &shape, &count))
        return false;
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *k = ml_yaml_pair_key(y, n, i);
        char name[ML_NAME_MAX];

        if (k->type != YAML_SCALAR_NODE)
            return ml_yaml_fail(y, k, "measure.profiles: a profile's name must be a name, not %s",
                                ml_yaml_found(y, k));
        if (!ml_yaml_get_name(y, k, "measure.profiles: profile name", false, name))
            return false;
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->measure.profiles[j].name, name) == 0)
                return ml_yaml_fail(y, k,
                                    "measure.profiles: profile '%s' is given twice (first at line "
                                    "%zu)",
                                    name, (size_t)ml_yaml_line(ml_yaml_pair_key(y, n, j)));
        if (!parse_profile(y, ml_yaml_pair_value(y, n, i), name, &t->measure.profiles[i]))
            return false;
        t->measure.n_profiles = i + 1;
    }
    if (!ml_topology_profile(t, "full"))
        return ml_yaml_fail(y, n,
                            "measure.profiles has no profile 'full'; add one: it is the profile "
                            "'meshlab run' uses unless given --profile");
    return true;
}

void ml_profiles_default(struct ml_topology *t)
{
    memcpy(t->measure.profiles, default_profiles, sizeof(default_profiles));
    t->measure.n_profiles = G_N_ELEMENTS(default_profiles);
}
