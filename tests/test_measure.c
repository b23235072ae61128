/* The arithmetic behind the reported figures, and the metrics table: a figure added as one
 * descriptor reaches results.json and report.md with no other change, and is withheld like every
 * other figure when its path failed. */
#include "check.h"
#include "fixtures.h"

#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>

#include "core/util.h"
#include "dataplanes/dataplane.h"
#include "measure/guestcpu.h"
#include "measure/measure.h"
#include "measure/metrics.h"
#include "measure/stats.h"
#include "results/json.h"
#include "results/tables.h"
#include "report/report.h"

static double num(struct json_object *o, const char *key)
{
    g_autoptr(GPtrArray) v = ml_j_values(o, key, NULL);
    struct json_object *x = v->len == 1 ? g_ptr_array_index(v, 0) : NULL;
    return json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int)
               ? json_object_get_double(x)
               : NAN;
}

static void test_median(void)
{
    double odd[] = {739.0, 696.4, 722.1};
    CHECK(ml_median(odd, 3) == 722.1); /* the seed's kernel WireGuard passes */
    double even[] = {4, 1, 3, 2};
    CHECK(ml_median(even, 4) == 2.5);
    double one[] = {42};
    CHECK(ml_median(one, 1) == 42);
    CHECK(isnan(ml_median(NULL, 0)));
}

/* Every descriptor of the table is complete and documented: the keys the e2e test reads are
 * among them, and docs/results.md names each. */
static void test_table_is_complete(void)
{
    g_autofree char *doc = NULL;
    CHECK(g_file_get_contents("docs/results.md", &doc, NULL, NULL));
    const char *e2e_keys[] = {
        "hub_bytes_per_payload_byte", "median_bits_per_second", "passes.bits_per_second",
        "rtt_loaded_p99_ms",          "rtt_idle_p99_ms",        "cv_bits_per_second_percent",
        "hub_cpu_s_per_gb",           "cells.*.cpu_s_per_gb",   "cells.*.median_bits_per_second"};
    for (size_t k = 0; k < G_N_ELEMENTS(e2e_keys); k++) {
        bool found = false;
        for (size_t i = 0; i < ml_metrics_count; i++)
            found = found || !strcmp(ml_metrics[i].name, e2e_keys[k]);
        CHECK(found);
    }
    for (size_t i = 0; i < ml_metrics_count; i++) {
        const struct ml_metric *m = &ml_metrics[i];
        CHECK(m->unit && *m->unit);
        CHECK(m->collector != NULL);
        CHECK(!m->shown_in[0] || (m->header && *m->header));
        CHECK(!m->of || m->summarise); /* `of` is what a summary reads */
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(m->name, ml_metrics[j].name) != 0);
        const char *leaf = strrchr(m->name, '.') ? strrchr(m->name, '.') + 1 : m->name;
        g_autofree char *quoted = g_strdup_printf("`%s`", leaf);
        if (!doc || !strstr(doc, quoted))
            fprintf(stderr, "docs/results.md does not describe %s\n", m->name);
        CHECK(doc && strstr(doc, quoted));
    }
}

/* Keys reach one value, one per element of an array, or one per member of an object ("*"). */
static void test_values_of_a_key(void)
{
    struct json_object *o = json_tokener_parse(
        "{\"passes\": [{\"bps\": 1}, {\"x\": 0}, {\"bps\": 3}], \"observed\": {\"hub\": "
        "{\"mib\": 180}, \"client-a\": {\"mib\": 95}}, \"one\": {\"two\": 2}}");
    bool list = true;
    g_autoptr(GPtrArray) one = ml_j_values(o, "one.two", &list);
    CHECK(one->len == 1 && !list && json_object_get_int(g_ptr_array_index(one, 0)) == 2);
    g_autoptr(GPtrArray) passes = ml_j_values(o, "passes.bps", &list);
    CHECK(passes->len == 3 && list && g_ptr_array_index(passes, 1) == NULL);
    g_autoptr(GPtrArray) guests = ml_j_values(o, "observed.*.mib", &list);
    CHECK(guests->len == 2 && list && json_object_get_int(g_ptr_array_index(guests, 0)) == 180 &&
          json_object_get_int(g_ptr_array_index(guests, 1)) == 95);
    g_autoptr(GPtrArray) none = ml_j_values(o, "missing.key", &list);
    CHECK(none->len == 1 && !list && g_ptr_array_index(none, 0) == NULL);
    json_object_put(o);
}

/* ---- a metric that exists only in this test ---- */

static int widget_runs;
static bool widget_fails;

static bool collect_widgets(struct ml_collect_ctx *c, const struct ml_collector *self,
                            struct json_object **ret, GError **err)
{
    widget_runs++;
    if (widget_fails) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "the widget meter on %s broke", c->path);
        return false;
    }
    struct json_object *o = json_object_new_object();
    struct json_object *rates = json_object_new_array();
    const double r[] = {1250.5, 1111.25, 1500.75};
    for (size_t i = 0; i < G_N_ELEMENTS(r); i++) {
        struct json_object *x = json_object_new_object();
        json_object_object_add(x, "widgets_per_second", json_object_new_double(r[i]));
        json_object_array_add(rates, x);
    }
    json_object_object_add(o, "samples", rates);
    json_object_object_add(o, "target", json_object_new_string(c->target));
    json_object_object_add(o, "options", json_object_new_string(self->options));
    *ret = o;
    return true;
}

static const struct ml_collector widgets = {.key = "widgets",
                                            .collect = collect_widgets,
                                            .withheld = ML_WITHHELD_NULL,
                                            .options = "--fast"};

static const struct ml_report_table widget_table = {
    .title = "Widgets", .place = 15, .intro = "Counted for {profile.pass_s} s."};

/* The median of the values at `of`: a summary this test defines, as a new metric's file would. */
static struct json_object *widget_median(struct json_object *path, const struct ml_metric *m)
{
    g_autoptr(GPtrArray) v = ml_j_values(path, m->of, NULL);
    g_autofree double *x = g_new(double, v->len + 1);
    size_t n = 0;
    for (guint i = 0; i < v->len; i++)
        if (g_ptr_array_index(v, i))
            x[n++] = json_object_get_double(g_ptr_array_index(v, i));
    return n ? json_object_new_double(ml_median(x, n)) : NULL;
}

static const struct ml_metric widget_metrics[] = {
    {.name = "widgets.samples.widgets_per_second",
     .unit = "widget/s",
     .collector = &widgets,
     .shown_in = {&widget_table},
     .header = "Widget rates",
     .decimals = 2},
    {.name = "widget_median_per_second",
     .unit = "widget/s",
     .collector = &widgets,
     .summarise = widget_median,
     .of = "widgets.samples.widgets_per_second",
     .shown_in = {&ml_table_comparison, &widget_table},
     .header = "Median kwidget/s",
     .scale = 1e-3,
     .decimals = 3},
};

/* The real table with the test's metrics added at its end: no other change. */
static struct ml_metric *table_with_widgets(size_t *ret_n)
{
    *ret_n = ml_metrics_count + G_N_ELEMENTS(widget_metrics);
    struct ml_metric *t = g_new(struct ml_metric, *ret_n);
    memcpy(t, ml_metrics, ml_metrics_count * sizeof(*t));
    memcpy(t + ml_metrics_count, widget_metrics, sizeof(widget_metrics));
    return t;
}

static void test_a_new_descriptor_reaches_results_and_report(void)
{
    struct ml_profile prof = {.passes = 3, .pass_s = 30, .ping_count = 30};
    struct ml_collect_ctx c = {.path = "plain", .target = "192.0.2.12", .profile = &prof};

    /* Collected once for its two metrics, summarised, under its own key. */
    widget_runs = 0;
    g_autoptr(GError) err = NULL;
    struct json_object *figures =
        ml_metrics_collect(widget_metrics, G_N_ELEMENTS(widget_metrics), &c, &err);
    CHECK(figures != NULL);
    CHECK(widget_runs == 1);
    CHECK(num(figures, "widget_median_per_second") == 1250.5);
    g_autoptr(GPtrArray) rates = ml_j_values(figures, "widgets.samples.widgets_per_second", NULL);
    CHECK(rates->len == 3);
    CHECK_STR(json_object_get_string(
                  json_object_object_get(json_object_object_get(figures, "widgets"), "options")),
              "--fast");

    /* Into a measured path of a results document, and so into report.md. */
    struct json_object *r = fixture_json("results-v2-matrix.json");
    json_object_object_foreach(figures, key, value)
    {
        json_object_object_add(fixture_path(r, "plain"), key, json_object_get(value));
    }
    json_object_put(figures);
    size_t n;
    g_autofree struct ml_metric *table = table_with_widgets(&n);
    g_autofree char *md = ml_report_render_markdown(r, table, n, &err);
    CHECK(md != NULL);
    if (md) {
        if (getenv("SHOW_MD"))
            fputs(md, stderr);
        /* its own table, placed between the comparison and the passes, with its columns */
        const char *own = strstr(md, "## Widgets\n\nCounted for 4 s.\n\n"
                                     "| Path | Widget rates | Median kwidget/s |\n"
                                     "|---|---:|---:|\n"
                                     "| plain | 1,250.50, 1,111.25, 1,500.75 | 1.250 |\n"
                                     "| wireguard-hub | — | — |\n");
        CHECK(own != NULL);
        CHECK(own && strstr(md, "## Comparison") < own && own < strstr(md, "## Passes"));
        /* a column added to an existing table, after that table's own columns */
        const char *cmp = strstr(md, "## Comparison");
        const char *head = cmp ? strstr(cmp, "| Hub CPU s/GB | Median kwidget/s |\n") : NULL;
        const char *row = head ? strstr(head, "\n| plain | ") : NULL;
        const char *eol = row ? strchr(row + 1, '\n') : NULL;
        CHECK(head && row && eol && eol - row > 8 && !strncmp(eol - 8, " 1.250 |", 8));
    }
    json_object_put(r);

    /* A collector that fails yields no figures at all, not the ones before it. */
    widget_fails = true;
    g_clear_error(&err);
    figures = ml_metrics_collect(widget_metrics, G_N_ELEMENTS(widget_metrics), &c, &err);
    CHECK(figures == NULL);
    CHECK_STR(err ? err->message : NULL, "the widget meter on plain broke");
    widget_fails = false;
}

/* The trust rule covers every metric of the table, the new one too: a failed path keeps no
 * number in results.json and shows none in report.md. */
static void test_a_failed_path_has_no_numbers(void)
{
    struct json_object *r = fixture_json("results-v2-matrix.json");
    struct json_object *p = fixture_path(r, "wireguard-hub");
    json_object_object_add(p, "observed", json_object_new_object());
    struct json_object *w = json_object_new_object();
    json_object_object_add(w, "samples", json_object_new_array());
    json_object_object_add(p, "widgets", w);
    json_object_object_add(p, "widget_median_per_second", json_object_new_double(4242.0));
    size_t n;
    g_autofree struct ml_metric *table = table_with_widgets(&n);

    json_object_object_add(p, "status", json_object_new_string("failed"));
    json_object_object_add(p, "reason", json_object_new_string("the path check after failed"));
    ml_metrics_withhold(table, n, p);

    const char *nulls[] = {
        "idle",    "median_bits_per_second",  "hub_bytes_per_payload_byte", "expected", "vps",
        "widgets", "widget_median_per_second"};
    for (size_t i = 0; i < G_N_ELEMENTS(nulls); i++) {
        struct json_object *v = (struct json_object *)1;
        CHECK(json_object_object_get_ex(p, nulls[i], &v) && v == NULL);
    }
    struct json_object *passes = json_object_object_get(p, "passes");
    CHECK(json_object_is_type(passes, json_type_array) && json_object_array_length(passes) == 0);
    CHECK(!json_object_object_get_ex(p, "observed", NULL));
    CHECK(json_object_object_length(json_object_object_get(p, "cells")) == 0);

    g_autoptr(GError) err = NULL;
    g_autofree char *md = ml_report_render_markdown(r, table, n, &err);
    CHECK(md != NULL);
    if (md) {
        /* no row of its passes or cells, no widget figure, and its reason in the comparison */
        CHECK(strstr(md, "\n| wireguard-hub forward-1 |") == NULL);
        CHECK(strstr(md, "4.242") == NULL);
        CHECK(strstr(md, "| wireguard-hub | failed: the path check after failed |") != NULL);
    }
    json_object_put(r);
}

/* A guest's daemons at one moment, as the guest prints them: nebula, tailscaled and wireguard-go
 * all running (a lab of several dataplanes), USER_HZ ticks of utime + stime and VmRSS. */
static void daemons_at(struct ml_guest_cpu *ret, unsigned nebula, unsigned tailscaled,
                       unsigned wggo)
{
    g_autofree char *text = g_strdup_printf(
        "cpu  1124 117 477 656651 46 3 8335 12 0 0\n"
        "D nebula 812 (nebula) S 1 812 812 0 -1 4194560 2130 0 0 0 %u 0 0 0 20 0 9 0 5000 0 0\n"
        "R nebula VmRSS:\t   27192 kB\n"
        "D tailscaled 700 (tailscaled) S 1 700 700 0 -1 4194560 10 0 0 0 %u 0 0 0 20 0 9 0 5000 "
        "0 0\n"
        "R tailscaled VmRSS:\t   43336 kB\n"
        "D wireguard-go 900 (wireguard-go) S 1 900 900 0 -1 4194560 10 0 0 0 %u 0 0 0 20 0 9 0 "
        "5000 0 0\n"
        "R wireguard-go VmRSS:\t    9000 kB\n",
        nebula, tailscaled, wggo);
    CHECK(ml_guest_cpu_parse(text, ret));
}

/* Every daemon a dataplane names is one the guests are asked about, and the command asks for
 * it; every registered path points back at the dataplane that lists it; kernel WireGuard and
 * plain run none. */
static void test_every_dataplane_names_its_daemons(void)
{
    g_autofree char *cmd = ml_guest_cpu_command();
    for (size_t d = 0; ml_dataplanes[d]; d++) {
        const struct ml_dataplane *dp = ml_dataplanes[d];
        for (size_t k = 0; k < ML_DATAPLANE_DAEMONS_MAX && dp->daemons[k].name; k++) {
            CHECK(ml_daemon_index(dp->daemons[k].name) < ML_DAEMONS_MAX);
            g_autofree char *word = g_strdup_printf(" %s", dp->daemons[k].name);
            CHECK(strstr(cmd, word));
        }
        for (size_t p = 0; dp->paths[p]; p++)
            CHECK(dp->paths[p]->dataplane == dp &&
                  ml_path_find(dp->paths[p]->name) == dp->paths[p]);
    }
    /* ml_path_at walks every path of every dataplane once, forced ones first. */
    size_t n = 0, forced_after_emerged = 0;
    bool emerged = false;
    const struct ml_path_ops *ops;
    ML_FOR_EACH_PATH(i, ops)
    {
        n++;
        forced_after_emerged += emerged && ops->hub != ML_HUB_FOUND;
        emerged |= ops->hub == ML_HUB_FOUND;
    }
    size_t listed = 0;
    for (size_t d = 0; ml_dataplanes[d]; d++)
        for (size_t p = 0; ml_dataplanes[d]->paths[p]; p++)
            listed++;
    CHECK(n == listed && n >= 10 && forced_after_emerged == 0);
    CHECK(ml_path_runs_daemon(ml_path_find("nebula-relay"), "nebula"));
    CHECK(ml_path_runs_daemon(ml_path_find("nebula-direct"), "nebula"));
    CHECK(ml_path_runs_daemon(ml_path_find("tailscale-relay"), "headscale"));
    CHECK(ml_path_runs_daemon(ml_path_find("tailscale-direct"), "tailscaled"));
    CHECK(ml_path_runs_daemon(ml_path_find("wireguard-go-hub"), "wireguard-go"));
    CHECK(!ml_path_runs_daemon(ml_path_find("wireguard-hub"), "nebula"));
    CHECK(!ml_path_runs_daemon(ml_path_find("wireguard-hub"), "wireguard-go"));
    CHECK(!ml_path_runs_daemon(ml_path_find("plain"), "nebula"));
    CHECK(!ml_path_runs_daemon(ml_path_find("nebula-relay"), "tailscaled"));
}

/* The command the guests run, run here under both awks Debian has (the guests' is mawk): a
 * process whose comm is a registry daemon's name ("tincd", a copy of sleep) is found, its stat
 * line read whole and its VmRSS beside it, and the parser takes them; /proc/stat's line comes
 * first. A process that is gone before awk reads it is skipped, not an error. */
static void test_cpu_command_runs_under_mawk_and_gawk(void)
{
    g_autofree char *dir = g_dir_make_tmp("meshlab-cpu-XXXXXX", NULL);
    g_autofree char *fake = g_build_filename(dir, "tincd", NULL);
    g_autofree char *sleep_bin = g_find_program_in_path("sleep");
    g_autofree char *bytes = NULL;
    gsize len = 0;
    CHECK(sleep_bin && g_file_get_contents(sleep_bin, &bytes, &len, NULL) &&
          g_file_set_contents(fake, bytes, (gssize)len, NULL) && chmod(fake, 0755) == 0);
    const char *argv[] = {fake, "30", NULL};
    GPid pid = 0;
    CHECK(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &pid, NULL));
    g_usleep(200 * 1000);
    g_autofree char *cmd = ml_guest_cpu_command();
    /* pidof picks the daemons' pids; one awk reads their files. */
    const char *at = strstr(cmd, "awk '");
    CHECK(g_str_has_prefix(cmd, "set -- $(pidof ") && at && !strstr(cmd, "/proc/[0-9]"));
    if (!at)
        return;
    const char *awks[] = {"mawk", "gawk"};
    for (size_t i = 0; i < G_N_ELEMENTS(awks); i++) {
        g_autofree char *awk = g_find_program_in_path(awks[i]);
        if (!awk) {
            printf("SKIP %s: not installed here\n", awks[i]);
            continue;
        }
        g_autofree char *head = g_strndup(cmd, (gsize)(at - cmd));
        g_autofree char *with = g_strconcat(head, awks[i], at + 3, NULL);
        const char *sh[] = {"/bin/sh", "-c", with, NULL};
        g_autofree char *out = NULL;
        gint status = -1;
        CHECK(g_spawn_sync(NULL, (char **)sh, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                           &status, NULL) &&
              status == 0);
        CHECK(g_str_has_prefix(out, "cpu "));
        g_autofree char *d = g_strdup_printf("D tincd %d (tincd) ", (int)pid);
        CHECK(strstr(out, d) && strstr(out, "R tincd VmRSS:"));
        struct ml_guest_cpu c;
        CHECK(ml_guest_cpu_parse(out, &c));
        size_t k = ml_daemon_index("tincd");
        CHECK(k < ML_DAEMONS_MAX && c.daemon_s[k] >= 0 && c.daemon_rss_kib[k] > 0);
    }
    kill(pid, SIGTERM);
    g_spawn_close_pid(pid);
    g_unlink(fake);
    g_rmdir(dir);
}

/* A path counts its own dataplane's daemons above their idle rate, and no other's: the review
 * found the idle nebula of a lab in wireguard-hub's and plain's CPU and memory. */
static void test_a_path_counts_only_its_own_daemons(void)
{
    struct ml_guest_cpu idle0, idle1, a, b;
    /* idle for 10 s: nebula 0.5 s, tailscaled 0.2 s, wireguard-go 0 s */
    daemons_at(&idle0, 1000, 500, 300);
    daemons_at(&idle1, 1050, 520, 300);
    double rates[ML_DAEMONS_MAX];
    ml_guest_cpu_daemon_rates(&idle0, &idle1, 10, rates);
    CHECK(fabs(rates[ml_daemon_index("nebula")] - 0.05) < 1e-9);
    CHECK(fabs(rates[ml_daemon_index("tailscaled")] - 0.02) < 1e-9);
    CHECK(rates[ml_daemon_index("headscale")] < 0); /* not running: unknown */
    struct json_object *idle = ml_guest_daemon_rates_json(ml_path_find("nebula-relay"), rates);
    CHECK(json_object_object_length(idle) == 1);
    CHECK(fabs(json_object_get_double(json_object_object_get(idle, "nebula")) - 0.05) < 1e-9);
    json_object_put(idle);

    /* a 30 s pass: nebula 6 s, tailscaled 0.6 s, wireguard-go 0 s */
    daemons_at(&a, 2000, 900, 300);
    daemons_at(&b, 2600, 960, 300);
    const char *paths[] = {"nebula-relay", "wireguard-hub", "plain"};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
        struct json_object *cpu = json_object_new_object(), *above = json_object_new_object();
        struct json_object *rss = json_object_new_object();
        ml_guest_daemons_json(ml_path_find(paths[i]), &a, &b, rates, 30, 0, cpu, above, rss);
        if (i == 0) {
            /* nebula: 6 s, less 0.05 s/s x 30 s idle = 4.5 s; its memory; nothing else */
            CHECK(json_object_object_length(cpu) == 1 && json_object_object_length(above) == 1 &&
                  json_object_object_length(rss) == 1);
            CHECK(fabs(json_object_get_double(json_object_object_get(cpu, "nebula")) - 6) < 1e-9);
            CHECK(fabs(json_object_get_double(json_object_object_get(above, "nebula")) - 4.5) <
                  1e-9);
            CHECK(json_object_get_int64(json_object_object_get(rss, "nebula")) == 27192);
        } else {
            /* kernel WireGuard and plain run no daemon: nebula's and tailscaled's are not theirs */
            CHECK(json_object_object_length(cpu) == 0 && json_object_object_length(above) == 0 &&
                  json_object_object_length(rss) == 0);
        }
        json_object_put(cpu);
        json_object_put(above);
        json_object_put(rss);
    }
    /* no idle rate measured: the figure is null, never the raw seconds */
    double unknown[ML_DAEMONS_MAX];
    for (size_t k = 0; k < ML_DAEMONS_MAX; k++)
        unknown[k] = -1;
    struct json_object *cpu = json_object_new_object(), *above = json_object_new_object();
    struct json_object *rss = json_object_new_object();
    ml_guest_daemons_json(ml_path_find("tailscale-direct"), &a, &b, unknown, 30, 0, cpu, above,
                          rss);
    CHECK(fabs(json_object_get_double(json_object_object_get(cpu, "tailscaled")) - 0.6) < 1e-9);
    struct json_object *v = (struct json_object *)1;
    CHECK(json_object_object_get_ex(above, "tailscaled", &v) && v == NULL);
    CHECK(!json_object_object_get_ex(cpu, "nebula", NULL));
    json_object_put(cpu);
    json_object_put(above);
    json_object_put(rss);
}

/* The hub is quiet before a check when it moved under 5 % of the probe's bytes in each of
 * ML_QUIET_RUN_S consecutive seconds; the first such run ends the wait. */
static void test_quiet_before_a_check(void)
{
    /* 20 pings of 1000 bytes, each an IPv4 packet of 1028 both ways: 41,120, 5 % of it. */
    CHECK(ml_check_quiet_bytes() == 2056);
    /* tinc's PMTU probes (CI's verify lab: 15,817 idle bytes in 1.5 s), then quiet. */
    long long tinc[] = {9000, 12000, 8000, 600, 2100, 500, 700, 400, 300};
    CHECK(ml_quiet_run_end(tinc, 9, 3, 2056) == 8);
    CHECK(ml_quiet_run_end(tinc, 7, 3, 2056) == 0);
    /* A second at the limit is not under it. */
    long long edge[] = {2056, 0, 0, 0};
    CHECK(ml_quiet_run_end(edge, 3, 3, 2056) == 0);
    CHECK(ml_quiet_run_end(edge, 4, 3, 2056) == 4);
    /* An unknown second (negative) breaks a run; a quiet lab ends the wait at the third. */
    long long idle[] = {500, -1, 400, 450, 380, 9000};
    CHECK(ml_quiet_run_end(idle, 6, 3, 2056) == 5);
    CHECK(ml_quiet_run_end(idle + 2, 4, 3, 2056) == 3);
}

int main(void)
{
    test_quiet_before_a_check();
    test_median();
    test_table_is_complete();
    test_values_of_a_key();
    test_a_new_descriptor_reaches_results_and_report();
    test_a_failed_path_has_no_numbers();
    test_every_dataplane_names_its_daemons();
    test_cpu_command_runs_under_mawk_and_gawk();
    test_a_path_counts_only_its_own_daemons();
    return check_finish();
}
