/* The figures of a path from its passes: a failed pass is in none of them, the cells, the
 * headline, the CPU per GB at the fixed rate, the VPS answers, the warnings, the physics. On a
 * path made here from numbers, no guest runs. */
#include "check.h"

#include <math.h>

#include "core/util.h"
#include "results/json.h"
#include "measure/metrics.h"

static struct json_object *pass(const char *cell, const char *rate, const char *status, double bps,
                                double payload, double hub_factor, double hub_cpu_s, double p99,
                                int lost)
{
    struct json_object *p = json_object_new_object();
    json_object_object_add(p, "cell", json_object_new_string(cell));
    json_object_object_add(p, "direction", json_object_new_string("forward"));
    json_object_object_add(p, "streams", json_object_new_int(1));
    json_object_object_add(p, "rate", json_object_new_string(rate));
    json_object_object_add(p, "status", json_object_new_string(status));
    json_object_object_add(p, "bits_per_second", json_object_new_double(bps));
    json_object_object_add(p, "payload_bytes", json_object_new_int64((int64_t)payload));
    json_object_object_add(p, "hub_rx_bytes",
                           json_object_new_int64((int64_t)(payload * hub_factor / 2)));
    json_object_object_add(p, "hub_tx_bytes",
                           json_object_new_int64((int64_t)(payload * hub_factor / 2)));
    /* 1368-byte segments and one ACK per 3 of them, as the review found under TCG */
    double d = ceil(payload / 1368);
    json_object_object_add(p, "hub_rx_packets", json_object_new_int64((int64_t)(d + d / 3)));
    json_object_object_add(p, "hub_bytes_per_payload_byte", json_object_new_double(hub_factor));
    /* what reached the hub and what left it: a little more in than out */
    json_object_object_add(p, "hub_rx_bytes_per_payload_byte",
                           json_object_new_double(hub_factor / 2 + 0.01));
    json_object_object_add(p, "hub_tx_bytes_per_payload_byte",
                           json_object_new_double(hub_factor / 2 - 0.01));
    json_object_object_add(p, "duration_s", json_object_new_double(4.0));
    json_object_object_add(p, "retransmits", json_object_new_int(0));
    if (!strcmp(rate, "fixed")) {
        double carried = 100.0 * bps / 100e6;
        json_object_object_add(p, "carried_percent_of_offered", json_object_new_double(carried));
        json_object_object_add(p, "below_offered_rate", json_object_new_boolean(carried < 95));
    }
    struct json_object *rtt = json_object_new_object();
    json_object_object_add(rtt, "transmitted", json_object_new_int(80));
    json_object_object_add(rtt, "received", json_object_new_int(80 - lost));
    json_object_object_add(rtt, "p50_ms", json_object_new_double(p99 / 3));
    json_object_object_add(rtt, "p99_ms", json_object_new_double(p99));
    json_object_object_add(rtt, "p99_at_least", json_object_new_boolean(lost > 0));
    json_object_object_add(p, "rtt_loaded", rtt);
    struct json_object *cpu = json_object_new_object();
    const char *guests[] = {"hub", "client-a", "client-b"};
    for (size_t i = 0; i < 3; i++) {
        struct json_object *g = json_object_new_object();
        json_object_object_add(g, "busy_s", json_object_new_double(i ? 1.0 : hub_cpu_s));
        json_object_object_add(g, "busy_above_idle_s",
                               json_object_new_double(i ? 0.9 : hub_cpu_s - 0.1));
        json_object_object_add(g, "softirq_s", json_object_new_double(i ? 0.5 : hub_cpu_s / 2));
        json_object_object_add(cpu, guests[i], g);
    }
    json_object_object_add(p, "cpu", cpu);
    struct json_object *d_cpu = json_object_new_object(), *hubd = json_object_new_object();
    json_object_object_add(hubd, "wireguard-go", json_object_new_double(hub_cpu_s / 4));
    json_object_object_add(d_cpu, "hub", hubd);
    json_object_object_add(p, "daemons_cpu_s", d_cpu);
    struct json_object *rss = json_object_new_object(), *hubr = json_object_new_object();
    json_object_object_add(hubr, "wireguard-go", json_object_new_int64(p99 > 20 ? 9000 : 8000));
    json_object_object_add(rss, "hub", hubr);
    json_object_object_add(p, "daemons_rss_kib", rss);
    struct json_object *host = json_object_new_object();
    json_object_object_add(host, "busy", json_object_new_boolean(false));
    json_object_object_add(p, "host", host);
    return p;
}

static struct json_object *path(const char *name, const char *role)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, "hub", json_object_new_string("hub"));
    json_object_object_add(o, "hub_role", json_object_new_string(role));
    struct json_object *idle = json_object_new_object(), *rtt = json_object_new_object();
    json_object_object_add(rtt, "p99_ms", json_object_new_double(1.25));
    json_object_object_add(idle, "rtt", rtt);
    json_object_object_add(o, "idle", idle);
    struct json_object *ps = json_object_new_array();
    /* forward-1: 300, [a detour: 900, failed], 330, 315 Mbit/s; then the fixed cell. */
    json_object_array_add(ps, pass("forward-1", "full", "ok", 300e6, 150e6, 2.25, 3.0, 20, 0));
    json_object_array_add(ps, pass("forward-1", "full", "failed", 900e6, 450e6, 0.5, 1.0, 90, 40));
    json_object_array_add(ps, pass("forward-1", "full", "ok", 330e6, 165e6, 2.27, 3.3, 24, 0));
    json_object_array_add(ps, pass("forward-1", "full", "ok", 315e6, 157.5e6, 2.26, 3.1, 22, 0));
    json_object_array_add(ps, pass("forward-1-fixed", "fixed", "ok", 100e6, 50e6, 2.26, 0.6, 5, 0));
    json_object_object_add(o, "passes", ps);
    return o;
}

static double at(struct json_object *o, const char *key)
{
    g_autoptr(GPtrArray) v = ml_j_values(o, key, NULL);
    struct json_object *x = v->len == 1 ? g_ptr_array_index(v, 0) : NULL;
    return json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int)
               ? json_object_get_double(x)
               : NAN;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

static void test_a_failed_pass_is_in_no_figure(void)
{
    struct json_object *p = path("wireguard-go-hub", "carries");
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-go-hub", p);
    CHECK(at(p, "cells.forward-1.passes_ok") == 3 && at(p, "cells.forward-1.passes_failed") == 1);
    /* the median of 300, 330, 315, never the detour's 900 */
    CHECK(at(p, "cells.forward-1.median_bits_per_second") == 315e6);
    CHECK(at(p, "median_bits_per_second") == 315e6);
    CHECK(near(at(p, "hub_bytes_per_payload_byte"), 2.26));
    CHECK(at(p, "cells.forward-1.rtt_loaded_p99_ms") == 22 && at(p, "rtt_loaded_p99_ms") == 22);
    CHECK(at(p, "rtt_idle_p99_ms") == 1.25);
    /* the CV of 300, 330, 315 Mbit/s: 4.8 %, no warning */
    double cv = at(p, "cv_bits_per_second_percent");
    CHECK(fabs(cv - 4.76) < 0.01);
    CHECK(json_object_get_boolean(json_object_object_get(
              json_object_object_get(json_object_object_get(p, "cells"), "forward-1"),
              "cv_warning")) == false);
    CHECK_STR(json_object_get_string(json_object_object_get(p, "headline_cell")), "forward-1");
    json_object_put(p);
}

static void test_cpu_per_gb_and_the_vps(void)
{
    struct json_object *p = path("wireguard-go-hub", "carries");
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-go-hub", p);
    /* full speed: (3.0 + 3.3 + 3.1) s over 0.4725 GB; the detour's pass is not counted */
    CHECK(near(at(p, "cells.forward-1.cpu_s_per_gb.hub.busy_s_per_gb"), 9.4 / 0.4725));
    CHECK(near(at(p, "cells.forward-1.cpu_s_per_gb.client-a.busy_s_per_gb"), 3 / 0.4725));
    CHECK(near(at(p, "cells.forward-1.daemons_cpu_s_per_gb.hub.wireguard-go"), 2.35 / 0.4725));
    /* the fixed cell's, above the hub's idle: 0.5 s for 0.05 GB */
    CHECK(near(at(p, "cells.forward-1-fixed.cpu_s_per_gb.hub.busy_s_per_gb"), 12));
    CHECK(near(at(p, "cells.forward-1-fixed.cpu_s_per_gb.hub.busy_above_idle_s_per_gb"), 10));
    /* the comparison's hub CPU is the cell it names, forward-1's: (2.9 + 3.2 + 3.0) s above
     * idle over 0.4725 GB, never the fixed cell's 10 */
    CHECK(near(at(p, "hub_cpu_s_per_gb"), 9.1 / 0.4725));
    CHECK(near(at(p, "cells.forward-1.cpu_s_per_gb.hub.busy_above_idle_s_per_gb"), 9.1 / 0.4725));
    /* 1 TB of payload costs 2,260 GB of hub traffic: 1,140 GB in, 1,120 GB out (the medians of
     * 1.135, 1.145, 1.14 and of 1.115, 1.125, 1.12 per payload byte) */
    CHECK(near(at(p, "vps.hub_gb_per_tb_payload"), 2260));
    CHECK(near(at(p, "vps.hub_gb_in_per_tb_payload"), 1140));
    CHECK(near(at(p, "vps.hub_gb_out_per_tb_payload"), 1120));
    /* one vCPU relays what the full-speed cell relayed per busy second of the hub: 472.5 MB in
     * 9.4 busy seconds of 12, i.e. 315 Mbit/s with the hub 78 % busy, 402 Mbit/s at 100 %; never
     * the fixed rate's 8 Gbit / hub_cpu_s_per_gb */
    CHECK(near(at(p, "vps.hub_vcpu_relay_bits_per_second"), 8 * 472.5e6 / 9.4));
    CHECK(near(at(p, "vps.relay_cell_bits_per_second"), 315e6));
    CHECK(near(at(p, "vps.relay_cell_hub_busy_percent"), 100 * 9.4 / 12));
    CHECK_STR(json_object_get_string(
                  json_object_object_get(json_object_object_get(p, "vps"), "relay_cell")),
              "forward-1");
    CHECK(at(p, "vps.daemons_rss_kib.hub.wireguard-go") == 9000);
    json_object_put(p);

    /* At a low fixed rate the payload's CPU is lost in the idle work: 0.05 s above idle of 1 s
     * busy is under a tenth, and so no figure; below idle (noise) is none either. The headline's
     * hub CPU does not depend on it. */
    p = path("wireguard-go-hub", "carries");
    struct json_object *fixed = json_object_array_get_idx(json_object_object_get(p, "passes"), 4);
    struct json_object *hubcpu =
        json_object_object_get(json_object_object_get(fixed, "cpu"), "hub");
    json_object_object_add(hubcpu, "busy_s", json_object_new_double(1.0));
    json_object_object_add(hubcpu, "busy_above_idle_s", json_object_new_double(0.05));
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-go-hub", p);
    CHECK(isnan(at(p, "cells.forward-1-fixed.cpu_s_per_gb.hub.busy_above_idle_s_per_gb")));
    CHECK(near(at(p, "hub_cpu_s_per_gb"), 9.1 / 0.4725));
    CHECK(near(at(p, "cells.forward-1-fixed.cpu_s_per_gb.hub.busy_s_per_gb"), 20));
    json_object_object_add(hubcpu, "busy_above_idle_s", json_object_new_double(-0.4));
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-go-hub", p);
    CHECK(isnan(at(p, "cells.forward-1-fixed.cpu_s_per_gb.hub.busy_above_idle_s_per_gb")));
    json_object_put(p);

    /* the headline's hub lost in its idle work: no figure, whatever the fixed cell says */
    p = path("wireguard-go-hub", "carries");
    struct json_object *ps = json_object_object_get(p, "passes");
    for (size_t i = 0; i < 4; i++) {
        struct json_object *h = json_object_object_get(
            json_object_object_get(json_object_array_get_idx(ps, i), "cpu"), "hub");
        json_object_object_add(h, "busy_above_idle_s", json_object_new_double(0.01));
    }
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-go-hub", p);
    CHECK(isnan(at(p, "hub_cpu_s_per_gb")));
    CHECK(near(at(p, "cells.forward-1-fixed.cpu_s_per_gb.hub.busy_above_idle_s_per_gb"), 10));
    json_object_put(p);

    /* a direct path's hub relays nothing: no relay rate is invented for it */
    p = path("plain", "quiet");
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "plain", p);
    CHECK(isnan(at(p, "vps.hub_vcpu_relay_bits_per_second")));
    struct json_object *v = (struct json_object *)1;
    CHECK(json_object_object_get_ex(p, "expected", &v) && v == NULL);
    json_object_put(p);
}

/* The daemons above their idle rate, per GB: the sums over the passes that passed, and no figure
 * where the payload's share is under a tenth of the daemon's CPU (lost in its idle work). */
static void test_daemons_above_idle(void)
{
    struct json_object *p = path("wireguard-go-hub", "carries");
    struct json_object *ps = json_object_object_get(p, "passes");
    for (size_t i = 0; i < json_object_array_length(ps); i++) {
        struct json_object *x = json_object_array_get_idx(ps, i);
        double raw = json_object_get_double(json_object_object_get(
            json_object_object_get(json_object_object_get(x, "daemons_cpu_s"), "hub"),
            "wireguard-go"));
        struct json_object *above = json_object_new_object(), *hub = json_object_new_object();
        /* the fixed pass (the last): 0.15 s of which 0.01 above idle */
        json_object_object_add(hub, "wireguard-go",
                               json_object_new_double(i == 4 ? 0.01 : raw - 0.1));
        json_object_object_add(above, "hub", hub);
        json_object_object_add(x, "daemons_cpu_above_idle_s", above);
    }
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-go-hub", p);
    /* (0.75 + 0.825 + 0.775) s less 3 x 0.1 s idle over 0.4725 GB; the failed pass not in it */
    CHECK(near(at(p, "cells.forward-1.daemons_cpu_above_idle_s_per_gb.hub.wireguard-go"),
               2.05 / 0.4725));
    CHECK(near(at(p, "cells.forward-1.daemons_cpu_s_per_gb.hub.wireguard-go"), 2.35 / 0.4725));
    CHECK(isnan(at(p, "cells.forward-1-fixed.daemons_cpu_above_idle_s_per_gb.hub.wireguard-go")));
    json_object_put(p);
}

static void test_warnings(void)
{
    struct json_object *p = path("wireguard-go-hub", "carries");
    /* the busy host of the review: 546, 1046, 637 Mbit/s */
    struct json_object *ps = json_object_object_get(p, "passes");
    json_object_object_add(json_object_array_get_idx(ps, 0), "bits_per_second",
                           json_object_new_double(546e6));
    json_object_object_add(json_object_array_get_idx(ps, 2), "bits_per_second",
                           json_object_new_double(1046e6));
    json_object_object_add(json_object_array_get_idx(ps, 3), "bits_per_second",
                           json_object_new_double(637e6));
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-go-hub", p);
    CHECK(at(p, "cv_bits_per_second_percent") > 30);
    const char *w = json_object_to_json_string(json_object_object_get(p, "warnings"));
    CHECK(strstr(w, "forward-1: cv_bits_per_second_percent is 35.") != NULL);
    CHECK(strstr(w, "1 pass(es) failed their per-second checks") != NULL);
    CHECK(strstr(w, "lost the path") == NULL);
    CHECK(json_object_get_boolean(json_object_object_get(
        json_object_object_get(json_object_object_get(p, "cells"), "forward-1"), "cv_warning")));
    json_object_put(p);
}

/* A pass that lost its path and was run again (measure.c settle_again): the warning says so. */
static void test_warning_run_again(void)
{
    struct json_object *p = path("tailscale-peer-relay", "carries");
    struct json_object *ps = json_object_object_get(p, "passes");
    json_object_object_add(json_object_array_get_idx(ps, 1), "path_lost",
                           json_object_new_boolean(true));
    json_object_object_add(json_object_array_get_idx(ps, 1), "run_again_as",
                           json_object_new_int(9));
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "tailscale-peer-relay", p);
    const char *w = json_object_to_json_string(json_object_object_get(p, "warnings"));
    CHECK(strstr(w, "forward-1: 1 pass(es) failed their per-second checks and are left out of "
                    "every figure; 1 of them lost the path (its views or its own counters said "
                    "so) and was run again after it settled") != NULL);
    json_object_put(p);
}

/* Issue 38 item 4: a pass that passed on a busy host and was run again (measure.c repeat_busy)
 * is "repeated": in no figure and in neither count, its repeat in its place; a repeat that was
 * busy too stays in the figures, and the warnings tell the two apart. */
static void test_busy_pass_repeated(void)
{
    struct json_object *p = path("wireguard-hub", "carries");
    struct json_object *ps = json_object_object_get(p, "passes");
    struct json_object *first = json_object_array_get_idx(ps, 0);
    json_object_object_add(first, "status", json_object_new_string("repeated"));
    json_object_object_add(first, "bits_per_second", json_object_new_double(100e6));
    json_object_object_add(first, "run_again_as", json_object_new_int(6));
    json_object_object_add(json_object_object_get(first, "host"), "busy",
                           json_object_new_boolean(true));
    struct json_object *again = pass("forward-1", "full", "ok", 320e6, 160e6, 2.26, 3.2, 21, 0);
    json_object_object_add(json_object_object_get(again, "host"), "busy",
                           json_object_new_boolean(true));
    json_object_array_add(ps, again);
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-hub", p);
    CHECK(at(p, "cells.forward-1.passes_ok") == 3 && at(p, "cells.forward-1.passes_failed") == 1 &&
          at(p, "cells.forward-1.passes_repeated") == 1);
    CHECK(isnan(at(p, "cells.forward-1-fixed.passes_repeated"))); /* absent where none */
    /* 330, 315 and the repeat's 320, never the busy pass's 100 */
    CHECK(at(p, "cells.forward-1.median_bits_per_second") == 320e6);
    const char *w = json_object_to_json_string(json_object_object_get(p, "warnings"));
    CHECK(strstr(w, "1 pass(es) ran while the host was busy with something else and was run "
                    "again: the repeat is in the figures in its place") != NULL);
    CHECK(strstr(w, "1 pass(es) in the figures ran while the host was busy with something else, "
                    "each already a repeat") != NULL);
    CHECK(strstr(w, "lost the path") == NULL); /* a busy repeat is no lost path */
    json_object_put(p);
}

/* Loss under load: pooled over a cell's passes that passed, a p99 that is a lower bound marks
 * its cell's median, a warning above 1 %; a fixed-rate pass short of its offered rate is counted
 * and named. */
static void test_loss_and_rate(void)
{
    struct json_object *p = path("wireguard-hub", "carries");
    struct json_object *ps = json_object_object_get(p, "passes");
    /* pass 3 of forward-1 lost 4 of its 80 pings; the failed pass's 40 are in no figure */
    struct json_object *rtt =
        json_object_object_get(json_object_array_get_idx(ps, 2), "rtt_loaded");
    json_object_object_add(rtt, "received", json_object_new_int(76));
    json_object_object_add(rtt, "p99_at_least", json_object_new_boolean(true));
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-hub", p);
    CHECK(near(at(p, "cells.forward-1.rtt_loaded_loss_percent"), 100.0 * 4 / 240));
    CHECK(near(at(p, "rtt_loaded_loss_percent"), 100.0 * 4 / 240));
    CHECK(at(p, "cells.forward-1-fixed.rtt_loaded_loss_percent") == 0);
    struct json_object *cells = json_object_object_get(p, "cells");
    CHECK(json_object_get_boolean(json_object_object_get(json_object_object_get(cells, "forward-1"),
                                                         "rtt_loaded_p99_at_least")));
    CHECK(json_object_get_boolean(json_object_object_get(p, "rtt_loaded_p99_at_least")));
    CHECK(!json_object_get_boolean(json_object_object_get(
        json_object_object_get(cells, "forward-1-fixed"), "rtt_loaded_p99_at_least")));
    /* a full-speed cell has no offered rate to fall short of; the fixed one carried 100 % */
    struct json_object *v = (struct json_object *)1;
    CHECK(json_object_object_get_ex(json_object_object_get(cells, "forward-1"),
                                    "passes_below_offered_rate", &v) &&
          v == NULL);
    CHECK(at(p, "cells.forward-1-fixed.passes_below_offered_rate") == 0);
    const char *w = json_object_to_json_string(json_object_object_get(p, "warnings"));
    CHECK(strstr(w, "forward-1: 1.7 % of the pings under load got no reply") != NULL);
    CHECK(strstr(w, "offered rate") == NULL);
    json_object_put(p);

    /* The same pass's 4 missing replies were cut off by its ping's deadline, not lost: the cell
     * counts them as the pass does, neither sent nor lost. */
    p = path("wireguard-hub", "carries");
    ps = json_object_object_get(p, "passes");
    rtt = json_object_object_get(json_object_array_get_idx(ps, 2), "rtt_loaded");
    json_object_object_add(rtt, "received", json_object_new_int(76));
    json_object_object_add(rtt, "cut_off", json_object_new_int(4));
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-hub", p);
    CHECK(at(p, "cells.forward-1.rtt_loaded_loss_percent") == 0);
    w = json_object_to_json_string(json_object_object_get(p, "warnings"));
    CHECK(strstr(w, "got no reply") == NULL);
    json_object_put(p);

    /* the review's nebula fixed #3: 1.79 of 2.0 Mbit/s (here 89 of 100) */
    p = path("nebula-relay", "carries");
    struct json_object *fixed = json_object_array_get_idx(json_object_object_get(p, "passes"), 4);
    json_object_object_add(fixed, "carried_percent_of_offered", json_object_new_double(89.5));
    json_object_object_add(fixed, "below_offered_rate", json_object_new_boolean(true));
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "nebula-relay", p);
    CHECK(at(p, "cells.forward-1-fixed.passes_below_offered_rate") == 1);
    w = json_object_to_json_string(json_object_object_get(p, "warnings"));
    CHECK(strstr(w, "forward-1-fixed: 1 pass(es) carried less than 95 % of the offered rate") !=
          NULL);
    json_object_put(p);
}

/* The physics beside the number: a factor at ~3 segments per ACK is what the model expects, not
 * flagged; a factor far from it is. Every cell is compared, not only the headline. */
static void test_expected(void)
{
    struct json_object *p = path("wireguard-hub", "carries");
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-hub", p);
    double e = at(p, "expected.hub_bytes_per_payload_byte");
    CHECK(e > 2.2 && e < 2.3);
    CHECK(near(at(p, "expected.ack_ratio"), 3) || fabs(at(p, "expected.ack_ratio") - 3) < 0.01);
    CHECK(json_object_get_boolean(
              json_object_object_get(json_object_object_get(p, "expected"), "flag")) == false);
    /* the fixed cell has its own comparison, from its own pass */
    double f = at(p, "cells.forward-1-fixed.expected.hub_bytes_per_payload_byte");
    CHECK(f > 2.2 && f < 2.3);
    CHECK(near(at(p, "cells.forward-1-fixed.expected.measured_hub_bytes_per_payload_byte"), 2.26) ||
          fabs(at(p, "cells.forward-1-fixed.expected.measured_hub_bytes_per_payload_byte") - 2.26) <
              1e-4);
    CHECK(near(at(p, "cells.forward-1.expected.hub_bytes_per_payload_byte"),
               at(p, "expected.hub_bytes_per_payload_byte")));
    CHECK(fabs(at(p, "expected.floor_hub_bytes_per_payload_byte") - 2.1842) < 0.001);
    /* the ceiling is an ACK per segment, the per-second judge's */
    CHECK(fabs(at(p, "expected.ceiling_hub_bytes_per_payload_byte") - 2.3860) < 0.001);
    json_object_put(p);

    /* the probe's bytes are not the payload's: a pass's probe_hub_bytes are taken out of the
     * measured factor, its probe packets and retransmits out of the ACKs */
    p = path("wireguard-hub", "carries");
    struct json_object *ps = json_object_object_get(p, "passes");
    struct json_object *fx = json_object_array_get_idx(ps, 4);
    int64_t payload = json_object_get_int64(json_object_object_get(fx, "payload_bytes"));
    int64_t rx = json_object_get_int64(json_object_object_get(fx, "hub_rx_packets"));
    json_object_object_add(fx, "probe_hub_bytes", json_object_new_int64(payload / 100));
    json_object_object_add(fx, "probe_hub_rx_packets", json_object_new_int64(1000));
    json_object_object_add(fx, "retransmits", json_object_new_int64(500));
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-hub", p);
    CHECK(fabs(at(p, "cells.forward-1-fixed.expected.measured_hub_bytes_per_payload_byte") - 2.25) <
          1e-4);
    CHECK(at(p, "cells.forward-1-fixed.expected.ack_packets") ==
          (double)rx - ceil(payload / 1368.0) - 1500);
    CHECK(at(p, "cells.forward-1-fixed.expected.probe_packets") == 1000);
    json_object_put(p);
    p = path("wireguard-hub", "carries");
    ps = json_object_object_get(p, "passes");
    for (size_t i = 0; i < json_object_array_length(ps); i++) {
        struct json_object *x = json_object_array_get_idx(ps, i);
        json_object_object_add(
            x, "hub_rx_bytes",
            json_object_new_int64(
                json_object_get_int64(json_object_object_get(x, "payload_bytes")) * 14 / 10));
    }
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-hub", p);
    CHECK(json_object_get_boolean(
        json_object_object_get(json_object_object_get(p, "expected"), "flag")));
    json_object_put(p);
}

/* A path that failed keeps no figure: every key of the table is withheld. */
static void test_withheld(void)
{
    struct json_object *p = path("wireguard-hub", "carries");
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-hub", p);
    ml_metrics_withhold(ml_metrics, ml_metrics_count, p);
    CHECK(json_object_array_length(json_object_object_get(p, "passes")) == 0);
    CHECK(json_object_object_length(json_object_object_get(p, "cells")) == 0);
    const char *nulls[] = {"idle",
                           "median_bits_per_second",
                           "hub_bytes_per_payload_byte",
                           "hub_cpu_s_per_gb",
                           "rtt_loaded_p99_ms",
                           "expected",
                           "vps",
                           "idle_fixed",
                           "rtt_loaded_loss_percent",
                           "rtt_loaded_p99_at_least"};
    for (size_t i = 0; i < G_N_ELEMENTS(nulls); i++) {
        struct json_object *v = (struct json_object *)1;
        CHECK(json_object_object_get_ex(p, nulls[i], &v) && v == NULL);
    }
    json_object_put(p);
}

/* A cell's pooled round trips (issue 38 item 3): every ping of its passes that passed, the
 * failed pass's out; the lost above every reply; p50 and p99 by rank with order-statistic
 * intervals; none from results without replies. */
static void test_pooled_rtt(void)
{
    struct json_object *p = path("wireguard-hub", "carries");
    struct json_object *ps = json_object_object_get(p, "passes");
    /* the three ok forward-1 passes: 200 replies each, 1..200 ms plus the pass's offset, and
     * one lost in the second; the failed pass 1,000 replies of 5,000 ms, which must not count */
    for (size_t k = 0; k < 4; k++) {
        struct json_object *rtt =
            json_object_object_get(json_object_array_get_idx(ps, k), "rtt_loaded");
        struct json_object *r = json_object_new_array();
        size_t n = k == 1 ? 1000 : 200;
        for (size_t i = 0; i < n; i++)
            json_object_array_add(r, json_object_new_double(k == 1 ? 5000 : (double)(i + 1)));
        json_object_object_add(rtt, "replies_ms", r);
        json_object_object_add(rtt, "lost", json_object_new_int(k == 2 ? 1 : 0));
    }
    ml_metrics_summarise(ml_metrics, ml_metrics_count, "wireguard-hub", p);
    struct json_object *pooled = json_object_object_get(
        json_object_object_get(json_object_object_get(p, "cells"), "forward-1"),
        "rtt_loaded_pooled");
    CHECK(pooled != NULL);
    CHECK(at(pooled, "passes") == 3 && at(pooled, "n") == 601 && at(pooled, "lost") == 1);
    /* 601 pings: p50 is rank 301 (each value 1..200 three times: rank 301 is 101), p99 rank 595
     * (199); p99's interval: 601 pings hold one, its top rank a reply below the lost one */
    CHECK(at(pooled, "p50_ms") == 101 && at(pooled, "p99_ms") == 199);
    CHECK(!json_object_get_boolean(json_object_object_get(pooled, "p99_lost")));
    struct json_object *ci = json_object_object_get(pooled, "p50_ci95");
    CHECK(at(ci, "low") <= 101 && at(ci, "high") >= 101 && at(ci, "rank_low") < 301 &&
          at(ci, "rank_high") > 301);
    struct json_object *ci99 = json_object_object_get(pooled, "p99_ci95");
    CHECK(at(ci99, "rank_high") > 595 && at(ci99, "rank_high") <= 601);
    /* the fixed cell's pass kept no replies: no pooled figure */
    CHECK(json_object_object_get(
              json_object_object_get(json_object_object_get(p, "cells"), "forward-1-fixed"),
              "rtt_loaded_pooled") == NULL);
    json_object_put(p);
}

int main(void)
{
    test_a_failed_pass_is_in_no_figure();
    test_cpu_per_gb_and_the_vps();
    test_daemons_above_idle();
    test_warnings();
    test_warning_run_again();
    test_busy_pass_repeated();
    test_loss_and_rate();
    test_expected();
    test_withheld();
    test_pooled_rtt();
    return check_finish();
}
