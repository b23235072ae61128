#include <stdio.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <sys/resource.h>

#include "cli/commands.h"
#include "measure/measure.h"
#include "measure/natmatrix.h"
#include "measure/wancheck.h"
#include "virt/capture.h"
#include "measure/hostlink.h"
#include "virt/hostshell.h"
#include "virt/lab.h"
#include "virt/virt.h"
#include "report/report.h"
#include "cli/session.h"
#include "topology/profile.h"
#include "core/util.h"
#include "results/json.h"

static const char run_usage[] =
    "Usage: meshlab run [--profile NAME | --quick] [--until PCT[,MAX]] [--out DIR]\n"
    "                   [--force] [--keep] [--keep-on-failure] [--capture] [--connect URI]\n"
    "                   [--traffic GB [--relayed-share F] [--egress-price P]\n"
    "                   [--included-tb T] [--peak-mbit M] [--currency CODE]] FILE\n\n"
    "Measures every path FILE names with one of its measure profiles. If the lab is not up,\n"
    "brings it up first and tears it down afterwards (unless --keep). For each path: a\n"
    "check that traffic takes the path its name says; idle pings at 20 Hz and a few idle\n"
    "seconds of every guest's NIC counters (the baseline); then the passes of every cell\n"
    "of the profile's matrix (direction, streams, full speed or the fixed offered rate),\n"
    "the paths of one policy interleaved in rounds, each pass counting every guest's NIC\n"
    "bytes every second beside iperf3's own intervals, pinging at 20 Hz, reading the\n"
    "dataplane's view (with its own per-peer counters, where it keeps them) every 2 s and\n"
    "every guest's CPU; and the check again. A pass with 3 s off its path's frames on the\n"
    "hub, its payload missing at the server or carried by another guest, its tunnel's own\n"
    "counters short of the payload, or a view that does not show the path, is failed and\n"
    "in no figure.\n"
    "Medians over passes carry a 95 % interval; --until repeats a cell until it is narrow\n"
    "enough. A path whose check fails is reported as failed, with the\n"
    "evidence, and no numbers. Writes results.json, report.md, report.html, plots/ and\n"
    "raw/ (iperf3 JSON, ping output, per-second series) to the run directory; `meshlab\n"
    "report DIR` renders the reports again. With nat_matrix in FILE, then runs the NAT\n"
    "matrix: every pair of its NAT types for each of its dataplanes, without rebooting\n"
    "(docs/nat-traversal.md). Exits 0 when every path was\n"
    "measured, 1 when any was not (the report says why), 2 for bad input (an unknown\n"
    "profile among it, before any lab is touched), 130 when interrupted. One meshlab at a\n"
    "time works on a lab: a second up, run or down of it is refused while this one runs.\n\n"
    "  --profile NAME       the topology's profile NAME from measure.profiles (default\n"
    "                       full; the seed lab has full, deep and quick)\n"
    "  --quick              the same as --profile quick\n"
    "  --until PCT[,MAX]    repeat each cell beyond its profile's passes until the 95 %\n"
    "                       interval of its throughput is within +-PCT % of its mean, at\n"
    "                       most MAX passes (default 10), like netperf's -I and -i;\n"
    "                       results.json says per cell whether it converged or gave up\n"
    "  --out DIR            run directory (default runs/LAB-RUNID); it must be new, empty,\n"
    "                       or an earlier run of the same lab with --force, and writable\n"
    "                       by you alone\n"
    "  --force              replace the earlier run of this lab in --out DIR\n"
    "  --keep               leave the lab up afterwards\n"
    "  --keep-on-failure    leave the lab up if anything fails\n"
    "  --connect URI        the libvirt host (default: MESHLAB_URI, else the one the lab's\n"
    "                       up recorded, else qemu:///system); on another host the images\n"
    "                       are uploaded once into its image pool (docs/remote.md)\n"
    "  --capture            keep pcaps of every path check and NAT matrix cell, taken\n"
    "                       passively on the host from the hub's and the clients' taps\n"
    "                       (captures/paths/, captures/nat/); on another host over the\n"
    "                       SSH its qemu+ssh:// URI names\n"
    "The VPS workload (over FILE's vps: section, docs/topology.md): the report then says per\n"
    "path the hub's GB in and out a month, whether it fits the plan and what the rest costs:\n"
    "  --traffic GB         the clients' payload a month, in GB\n"
    "  --relayed-share F    the share of it a mesh's relay carries, 0 to 1 (default 1; a\n"
    "                       hub path like wireguard-hub carries all of it whatever F is)\n"
    "  --egress-price P     the price of a GB the hub sends beyond the included transfer\n"
    "  --included-tb T      the plan's included transfer a month, TB (default 0)\n"
    "  --peak-mbit M        the workload's peak payload rate: the hub vCPUs it needs (KVM)\n"
    "  --currency CODE      the price's currency, for the report (default USD)\n";

static char *iso_now(void)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char buf[32];
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return g_strdup(buf);
}

/* As the topology gave it: 0.05, not json-c's 0.050000000000000003. */
static struct json_object *decimal_json(double d)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return json_object_new_double_s(d, g_ascii_formatd(buf, sizeof(buf), "%g", d));
}

static struct json_object *profile_json(const struct ml_profile *p)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(p->name));
    json_object_object_add(o, "pass_s", json_object_new_int((int)p->pass_s));
    json_object_object_add(o, "passes", json_object_new_int((int)p->passes));
    json_object_object_add(o, "ping_count", json_object_new_int((int)p->ping_count));
    json_object_object_add(o, "ping_interval_s", decimal_json(p->ping_interval_s));
    json_object_object_add(o, "idle_s", json_object_new_int((int)p->idle_s));
    json_object_object_add(o, "fixed_rate_fraction", decimal_json(p->fixed_rate_fraction));
    struct json_object *matrix = json_object_new_array();
    for (size_t i = 0; i < p->n_cells; i++) {
        const struct ml_cell *cell = &p->cells[i];
        struct json_object *c = json_object_new_object();
        json_object_object_add(c, "cell", json_object_new_string(cell->name));
        json_object_object_add(c, "direction",
                               json_object_new_string(ml_direction_name(cell->direction)));
        json_object_object_add(c, "streams", json_object_new_int((int)cell->streams));
        json_object_object_add(c, "rate",
                               json_object_new_string(cell->fixed_rate ? "fixed" : "full"));
        json_object_object_add(c, "passes", json_object_new_int((int)cell->passes));
        json_object_array_add(matrix, c);
    }
    json_object_object_add(o, "matrix", matrix);
    if (p->until_percent > 0) {
        struct json_object *u = json_object_new_object();
        json_object_object_add(u, "percent", decimal_json(p->until_percent));
        json_object_object_add(u, "max_passes", json_object_new_int((int)p->until_max));
        json_object_object_add(o, "until", u);
    }
    return o;
}

static struct json_object *guests_json(const struct ml_lab *lab)
{
    struct json_object *a = json_object_new_array();
    char addr[16];
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        struct json_object *g = json_object_new_object();
        const struct ml_node *n = lab->plan->guests[i].node;
        json_object_object_add(g, "name", json_object_new_string(n->name));
        json_object_object_add(g, "address", json_object_new_string(ml_ip_str(n->address, addr)));
        json_object_object_add(g, "vcpus", json_object_new_int((int)n->vcpus));
        json_object_object_add(g, "memory_mib", json_object_new_int((int)n->memory_mib));
        json_object_object_add(
            g, "boot_s",
            lab->boot_s[i] > 0 ? json_object_new_double(round(lab->boot_s[i] * 10) / 10) : NULL);
        json_object_object_add(
            g, "ready_s",
            lab->ready_s[i] > 0 ? json_object_new_double(round(lab->ready_s[i] * 10) / 10) : NULL);
        json_object_object_add(g, "start", json_object_new_string(lab->warm[i] ? "warm" : "cold"));
        if (lab->cpu_s[i] > 0)
            json_object_object_add(g, "cpu_s",
                                   json_object_new_double(round(lab->cpu_s[i] * 10) / 10));
        if (lab->save_s[i] > 0)
            json_object_object_add(g, "save_s",
                                   json_object_new_double(round(lab->save_s[i] * 10) / 10));
        json_object_array_add(a, g);
    }
    return a;
}

/* A lab left up by 'meshlab up' is measured as it is and left up; otherwise this run
 * brings one up (*ret_brought_up) and takes it down afterwards. */
static bool attach_or_bring_up(struct ml_lab *lab, const struct ml_topology *topo,
                               const struct ml_session_opts *opts, bool *ret_brought_up,
                               GError **err)
{
    *ret_brought_up = false;
    if (!ml_session_open(lab, topo, opts, err))
        return false;
    if (!ml_lab_state_exists(topo->name)) {
        *ret_brought_up = ml_session_up(lab, opts, err);
        return *ret_brought_up;
    }
    if (!ml_lab_attach(lab, err) || !ml_session_rundir(lab, opts, err))
        return false;
    ml_progress("run", "lab %s is up (built by run %s); measuring it as it is, into %s", topo->name,
                lab->up_run_id, lab->run_dir);
    ml_lab_phase(lab, "attach");
    return true;
}

/* One step of a WAN sweep, or the one run on the nodes' own profiles: set[i] in force on node i
 * and proven before anything is measured through them, then the paths measured: what
 * ml_measure_paths returns, with `wan`. */
static struct json_object *measure_step(struct ml_lab *lab, const struct ml_profile *profile,
                                        const struct ml_wan_profile *set, GError **err)
{
    struct json_object *wan = ml_wan_lab_apply(lab, set, err);
    ml_lab_phase(lab, "wan");
    if (!wan)
        return NULL;
    struct json_object *paths = ml_measure_paths(lab, profile, err);
    ml_lab_phase(lab, "measure");
    if (!paths) {
        json_object_put(wan);
        return NULL;
    }
    json_object_object_add(paths, "wan", wan);
    return paths;
}

/* A step's line of wan_sweep[]: each path's status and its figures that distance moves. */
static struct json_object *sweep_entry(const struct ml_wan_step *step, struct json_object *measured,
                                       const char *file)
{
    struct json_object *e = json_object_new_object();
    json_object_object_add(e, "step", json_object_new_string(step->label));
    json_object_object_add(e, "wan", json_object_get(ml_j_get(measured, "wan")));
    json_object_object_add(e, "results", file ? json_object_new_string(file) : NULL);
    struct json_object *paths = json_object_new_array(), *all = ml_j_array(measured, "paths");
    for (size_t i = 0; i < ml_j_len(all); i++) {
        struct json_object *p = json_object_array_get_idx(all, i), *x = json_object_new_object();
        struct json_object *idle = ml_j_obj(p, "idle");
        static const char *const keys[] = {"name", "status", "reason", "median_bits_per_second",
                                           "hub_bytes_per_payload_byte"};
        for (size_t k = 0; k < G_N_ELEMENTS(keys); k++)
            json_object_object_add(x, keys[k], json_object_get(ml_j_get(p, keys[k])));
        json_object_object_add(x, "rtt_idle_p50_ms",
                               json_object_get(ml_j_get(ml_j_obj(idle, "rtt"), "p50_ms")));
        json_object_object_add(x, "rtt_wan_added_ms",
                               json_object_get(ml_j_get(idle, "rtt_wan_added_ms")));
        json_object_array_add(paths, x);
    }
    json_object_object_add(e, "paths", paths);
    return e;
}

/* The path matrix once per step of the topology's wan_sweep, or once on the nodes' own
 * profiles. The first step's measurement is the run's (its paths, the report's tables); each
 * later one's is kept whole in sweep/step-N/measured.json, its raw files beside it, and every
 * step's figures are in wan_sweep[]. A step that cannot be measured (a profile not in force, a
 * guest that stopped answering) fails the run as a single measurement's failure does; the
 * steps' files written by then stay in the run directory, the first step's measurement with
 * them (sweep/step-1/measured.json). */
static struct json_object *measure_sweep(struct ml_lab *lab, const struct ml_profile *profile,
                                         GError **err)
{
    const struct ml_topology *topo = lab->topo;
    if (!topo->n_wan_sweep) {
        struct ml_wan_profile own[ML_MAX_NODES];
        for (size_t i = 0; i < topo->n_nodes; i++)
            own[i] = topo->nodes[i].wan;
        return measure_step(lab, profile, own, err);
    }
    struct json_object *first = NULL, *sweep = json_object_new_array();
    for (size_t s = 0; s < topo->n_wan_sweep; s++) {
        const struct ml_wan_step *step = &topo->wan_sweep[s];
        ml_progress("sweep", "step %zu of %zu: %s", s + 1, topo->n_wan_sweep, step->label);
        g_autofree char *dir = s ? g_strdup_printf("sweep/step-%zu/", s + 1) : NULL;
        lab->write_prefix = dir;
        struct json_object *m = measure_step(lab, profile, step->wan, err);
        g_autofree char *file = dir ? g_strconcat(dir, "measured.json", NULL) : NULL;
        if (m && dir &&
            !ml_lab_write(lab, "measured.json",
                          json_object_to_json_string_ext(m, JSON_C_TO_STRING_PRETTY), -1, NULL))
            g_clear_pointer(&file, g_free);
        lab->write_prefix = NULL;
        if (!m) {
            if (err && *err && (*err)->code != ML_ERR_INTERRUPTED)
                g_prefix_error(err, "WAN sweep step %zu (%s): ", s + 1, step->label);
            /* The first step's measurement would go into results.json, which a failed run does
             * not write: kept beside the later steps' so nothing measured is lost. */
            if (first) {
                lab->write_prefix = "sweep/step-1/";
                bool kept = ml_lab_write(
                    lab, "measured.json",
                    json_object_to_json_string_ext(first, JSON_C_TO_STRING_PRETTY), -1, NULL);
                lab->write_prefix = NULL;
                if (kept)
                    ml_error_append(err,
                                    "the %zu step(s) measured before it are kept in "
                                    "sweep/step-N/measured.json",
                                    s);
            }
            json_object_put(first);
            json_object_put(sweep);
            return NULL;
        }
        json_object_array_add(sweep, sweep_entry(step, m, file));
        if (s)
            json_object_put(m);
        else
            first = m;
    }
    json_object_object_add(first, "wan_sweep", sweep);
    return first;
}

static struct json_object *measure(struct ml_lab *lab, const struct ml_profile *profile,
                                   bool capture, GError **err)
{
    ml_progress("run",
                "profile %s: %zu cells, passes of %u s, %u idle pings every %g s, %u s "
                "idle baseline",
                profile->name, profile->n_cells, profile->pass_s, profile->ping_count,
                profile->ping_interval_s, profile->idle_s);
    if (profile->until_percent > 0)
        ml_progress("run",
                    "--until: each cell repeated until its throughput's 95 %% interval is within "
                    "±%g %% of its mean, at most %u passes",
                    profile->until_percent, profile->until_max);
    /* A lab over several hosts: the underlay between them first, while the guests idle. */
    struct json_object *underlay = ml_hostlink_measure(lab);
    if (underlay)
        ml_lab_phase(lab, "underlay");
    struct json_object *paths = measure_sweep(lab, profile, err);
    if (!paths) {
        json_object_put(underlay);
        return NULL;
    }
    if (underlay)
        json_object_object_add(paths, "underlay", underlay);
    struct json_object *observed = ml_nat_observed(lab);
    if (observed)
        json_object_object_add(paths, "nat_observed", observed);
    if (!lab->topo->nat_matrix.present)
        return paths;
    struct json_object *cells = ml_nat_matrix_run(lab, capture, err);
    ml_lab_phase(lab, "nat matrix");
    if (!cells) {
        json_object_put(paths);
        return NULL;
    }
    json_object_object_add(paths, "nat_matrix", cells);
    return paths;
}

/* The results document up to its paths; finish_results adds what the end of the run knows. */
static struct json_object *results_new(struct ml_lab *lab, const char *file, const char *started,
                                       const struct ml_profile *profile,
                                       struct json_object *measured)
{
    struct json_object *results = json_object_new_object();
    json_object_object_add(results, "schema", json_object_new_string(ML_RESULTS_SCHEMA));
    json_object_object_add(results, "schema_version", json_object_new_int(ML_RESULTS_VERSION));
    json_object_object_add(results, "meshlab_version", json_object_new_string(MESHLAB_VERSION));
    json_object_object_add(results, "lab", json_object_new_string(lab->topo->name));
    json_object_object_add(results, "topology", json_object_new_string(file));
    json_object_object_add(results, "run_id", json_object_new_string(lab->run_id));
    json_object_object_add(results, "lab_run_id",
                           json_object_new_string(lab->up_run_id ? lab->up_run_id : lab->run_id));
    json_object_object_add(results, "started", json_object_new_string(started));
    json_object_object_add(results, "profile", profile_json(profile));
    json_object_object_add(results, "vps_workload", ml_workload_json(&lab->topo->vps));
    json_object_object_add(results, "environment", ml_measure_environment(lab));
    json_object_object_add(results, "guests", guests_json(lab));
    json_object_object_add(results, "start", json_object_new_string(ml_lab_start(lab)));
    json_object_object_foreach(measured, key, value)
    {
        json_object_object_add(results, key, json_object_get(value));
    }
    json_object_put(measured);
    return results;
}

static int count_unmeasured(struct json_object *paths)
{
    int unmeasured = 0;
    for (size_t i = 0; i < ml_j_len(paths); i++)
        if (g_strcmp0(ml_j_str(json_object_array_get_idx(paths, i), "status"), "measured"))
            unmeasured++;
    return unmeasured;
}

/* The first error of the run is the one reported; later ones are only warned about. */
static bool keep_first_error(GError **err, GError **later)
{
    if (!*err)
        *err = g_steal_pointer(later);
    return false;
}

/* After a failed measurement the lab goes as after a failed up; after a good one, a lab
 * this run brought up goes down again unless --keep. */
static bool finish_lab(struct ml_lab *lab, const struct ml_session_opts *opts, bool measured,
                       bool brought_up, GError **err)
{
    if (!measured) {
        ml_session_fail_teardown(lab, opts);
        return false;
    }
    if (!brought_up || opts->keep)
        return true;
    ml_lab_collect_logs(lab);
    ml_lab_phase(lab, "logs");
    g_autoptr(GError) derr = NULL;
    if (ml_lab_destroy(lab, &derr))
        return true;
    ml_warn("teardown incomplete: %s; run 'meshlab down %s'", derr->message, lab->topo->name);
    return keep_first_error(err, &derr);
}

/* meshlab's own cost: the controller must stay light beside the guests it measures. */
static struct json_object *controller_json(void)
{
    struct rusage ru;
    struct json_object *o = json_object_new_object();
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return o;
    double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    double wall = ml_elapsed();
    json_object_object_add(o, "cpu_s", json_object_new_double(round(cpu * 1000) / 1000));
    json_object_object_add(o, "max_rss_kib", json_object_new_int64(ru.ru_maxrss));
    json_object_object_add(o, "wall_s", json_object_new_double(round(wall * 100) / 100));
    json_object_object_add(o, "cpu_percent_of_core",
                           json_object_new_double(wall > 0 ? round(cpu / wall * 1e4) / 100 : 0));
    return o;
}

/* Adds the end time and the phases, writes results.json and report.md, and says where. */
static bool write_results(struct ml_lab *lab, struct json_object *results, GError **err)
{
    g_autofree char *finished = iso_now();
    json_object_object_add(results, "finished", json_object_new_string(finished));
    ml_lab_phase(lab, "results");
    /* The phases are contiguous from the start of the command: they add up
     * to its wall time, which is recorded beside them. */
    json_object_object_add(results, "wall_s",
                           json_object_new_double(round(ml_elapsed() * 100) / 100));
    json_object_object_add(results, "phases", json_object_get(lab->phases));
    json_object_object_add(results, "controller", controller_json());
    if (lab->up_phases)
        json_object_object_add(results, "lab_up_phases", json_object_get(lab->up_phases));
    g_autoptr(GError) werr = NULL;
    if (!ml_results_write(lab, results, &werr))
        return keep_first_error(err, &werr);
    printf("results: %s/results.json\nreport:  %s/report.md\n         %s/report.html\n",
           lab->run_dir, lab->run_dir, lab->run_dir);
    g_autofree char *answer = ml_report_answer_text(results);
    if (answer)
        fputs(answer, stdout);
    fflush(stdout);
    return true;
}

/* The profile --profile or --quick names, "full" when neither is given. */
static const struct ml_profile *choose_profile(const struct ml_topology *topo,
                                               const struct ml_session_opts *opts, GError **err)
{
    const char *name = opts->profile ? opts->profile : opts->quick ? "quick" : "full";
    const struct ml_profile *p = ml_topology_profile(topo, name);
    if (p)
        return p;
    g_autoptr(GString) names = g_string_new(NULL);
    for (size_t i = 0; i < topo->measure.n_profiles; i++)
        g_string_append_printf(names, "%s%s", i ? ", " : "", topo->measure.profiles[i].name);
    g_autofree char *shown = g_strescape(name, NULL);
    g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s has no profile '%s'; its profiles are %s",
                topo->path, shown, names->str);
    return NULL;
}

int cmd_run_main(int argc, char **argv)
{
    static const struct option options[] = {ML_SESSION_LONG_OPTIONS,
                                            {"quick", no_argument, NULL, 'q'},
                                            {"profile", required_argument, NULL, 'p'},
                                            {"keep", no_argument, NULL, 'K'},
                                            {"capture", no_argument, NULL, 'c'},
                                            {"until", required_argument, NULL, 'u'},
                                            ML_WORKLOAD_LONG_OPTIONS,
                                            {0}};
    struct ml_session_opts opts = {.verb = "run"};
    int status;
    if (!ml_session_args(argc, argv, options, run_usage, &opts, &status))
        return status;
    const char *file = argv[optind];
    if (opts.quick && opts.profile && strcmp(opts.profile, "quick") != 0) {
        fprintf(stderr, "meshlab: --quick is --profile quick; it cannot go with --profile %s\n",
                opts.profile);
        return ML_EXIT_USAGE;
    }
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = cmd_load_topology(file, &err);
    if (!topo)
        return cmd_fail(err);
    /* Resolved before the lab is touched: a wrong name must not leave half a lab behind. */
    const struct ml_profile *chosen = choose_profile(topo, &opts, &err);
    if (!chosen)
        return cmd_fail(err);
    struct ml_profile until_profile = *chosen;
    if (opts.until && !ml_profile_set_until(&until_profile, opts.until, &err))
        return cmd_fail(err);
    const struct ml_profile *profile = &until_profile;
    /* The workload is checked before the lab is touched, like the profile. */
    for (size_t i = 0; i < opts.n_workload; i++)
        if (!ml_workload_set(&topo->vps, opts.workload[i].flag, opts.workload[i].value, &err))
            return cmd_fail(err);
    if (!ml_workload_complete(&topo->vps, &err))
        return cmd_fail(err);
    /* Without one given, the answer is the seed's month (issue 38: the answer first). */
    ml_workload_default_seed(&topo->vps);
    if (opts.capture) {
        g_autofree char *why = NULL;
        g_autofree char *uri = ml_lab_uri(topo->name, NULL);
        /* On another host tcpdump runs there, over the SSH its URI names: a URI of another
         * transport has no shell, and is refused before anything is made. */
        g_auto(GStrv) shell = NULL;
        if (ml_virt_uri_remote(uri) == 1 && !(shell = ml_hostshell_argv(uri, "true", &err))) {
            g_prefix_error(&err, "--capture: ");
            return cmd_fail(err);
        }
        if (!shell && !ml_capture_available(&why)) {
            g_set_error(&err, ML_ERROR, ML_ERR_INPUT, "--capture: %s", why);
            return cmd_fail(err);
        }
    }
    ml_signals_install();
    g_autofree char *started = iso_now();

    struct ml_lab lab = {0};
    bool brought_up;
    if (!attach_or_bring_up(&lab, topo, &opts, &brought_up, &err)) {
        ml_lab_clear(&lab);
        return cmd_fail(err);
    }
    lab.capture = opts.capture;
    struct json_object *measured = measure(&lab, profile, opts.capture, &err);
    struct json_object *results =
        measured ? results_new(&lab, file, started, profile, measured) : NULL;
    int unmeasured = count_unmeasured(ml_j_array(results, "paths"));
    bool ok = finish_lab(&lab, &opts, measured != NULL, brought_up, &err);
    if (results) {
        ok = write_results(&lab, results, &err) && ok;
        json_object_put(results);
    }
    ml_lab_clear(&lab);

    if (!ok)
        return cmd_fail(err);
    if (unmeasured) {
        fprintf(stderr, "meshlab: %d path(s) not measured; the report says why\n", unmeasured);
        return ML_EXIT_FAIL;
    }
    return ML_EXIT_OK;
}
