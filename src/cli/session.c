#include "cli/session.h"
#include "core/controller.h"

#include <stdio.h>
#include <string.h>

#include "core/lock.h"
#include "topology/workload.h"
#include "dataplanes/policy.h"
#include "guestnet/nft.h"
#include "dataplanes/dataplane.h"
#include "measure/metrics.h"
#include "measure/natmatrix.h"
#include "core/rundir.h"
#include "report/report.h"
#include "core/util.h"
#include "virt/virt.h"

bool ml_session_args(int argc, char **argv, const struct option *options, const char *usage,
                     struct ml_session_opts *opts, int *ret_status)
{
    int opt, at = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "ho:", options, &at)) != -1) {
        switch (opt) {
        case ML_WORKLOAD_OPT:
            if (opts->n_workload == G_N_ELEMENTS(opts->workload)) {
                fprintf(stderr, "meshlab: too many workload flags (at most %zu)\n",
                        G_N_ELEMENTS(opts->workload));
                *ret_status = ML_EXIT_USAGE;
                return false;
            }
            opts->workload[opts->n_workload].flag = options[at].name;
            opts->workload[opts->n_workload++].value = optarg;
            break;
        case 'o':
            opts->out_dir = optarg;
            break;
        case 'f':
            opts->force = true;
            break;
        case 'k':
            opts->keep_on_failure = true;
            break;
        case 'q':
            opts->quick = true;
            break;
        case 'p':
            opts->profile = optarg;
            break;
        case 'K':
            opts->keep = true;
            break;
        case 'c':
            opts->capture = true;
            break;
        case 'u':
            opts->until = optarg;
            break;
        case 'A':
            opts->hub_address = optarg;
            break;
        case 'I':
            opts->hub_interface = optarg;
            break;
        case 'T':
            opts->to = optarg;
            break;
        case 'V':
            opts->verify = true;
            break;
        case 'C':
            if (opts->n_client_address == G_N_ELEMENTS(opts->client_address)) {
                fprintf(stderr, "meshlab: too many --client-address (at most %zu)\n",
                        G_N_ELEMENTS(opts->client_address));
                *ret_status = ML_EXIT_USAGE;
                return false;
            }
            opts->client_address[opts->n_client_address++] = optarg;
            break;
        default: {
            bool help = opt == 'h';
            fputs(usage, help ? stdout : stderr);
            *ret_status = help ? ML_EXIT_OK : ML_EXIT_USAGE;
            return false;
        }
        }
    }
    if (optind != argc - 1) {
        fputs(usage, stderr);
        *ret_status = ML_EXIT_USAGE;
        return false;
    }
    return true;
}

bool ml_session_open(struct ml_lab *lab, const struct ml_topology *topo,
                     const struct ml_session_opts *opts, GError **err)
{
    memset(lab, 0, sizeof(*lab));
    lab->topo = topo;
    for (size_t i = 0; i < topo->n_nodes; i++)
        lab->nat_now[i] = topo->nodes[i].nat;
    double boot_timeout;
    if (!ml_lab_boot_timeout(&boot_timeout, err))
        return false;
    /* run attaches to a lab an up left: on the host that up recorded. */
    g_autofree char *uri = ml_lab_uri(topo->name, NULL);
    lab->lock_fd = ml_lock_lab(topo->name, opts->verb ? opts->verb : "up", err);
    if (lab->lock_fd < 0)
        return false;
    lab->locked = true;
    lab->plan = ml_plan_new(topo, NULL);
    /* One run, one id: the run directory's name, results' run_id, and the tags
     * of what this run creates. */
    g_strlcpy(lab->run_id, lab->plan->run_id, sizeof(lab->run_id));
    if (opts->out_dir) {
        lab->run_dir = g_strdup(opts->out_dir);
    } else {
        g_autofree char *name = g_strdup_printf("%s-%s", topo->name, lab->plan->run_id);
        lab->run_dir = g_build_filename("runs", name, NULL);
    }
    if (!g_path_is_absolute(lab->run_dir)) {
        g_autofree char *cwd = g_get_current_dir();
        char *abs = g_build_filename(cwd, lab->run_dir, NULL);
        g_free(lab->run_dir);
        lab->run_dir = abs;
    }
    if (!ml_lab_connect(lab, uri, err))
        return false;
    for (size_t k = 0; k < lab->n_hosts; k++) {
        const struct ml_lab_host *h = &lab->hosts[k];
        g_autofree char *shown = ml_uri_public(h->uri);
        g_autofree char *name = topo->n_hosts > 1
                                    ? g_strdup_printf("host %s (%s)", topo->hosts[k].name, shown)
                                    : g_strdup(shown);
        if (h->remote)
            ml_progress("host",
                        "lab %s on %s: its images, disks and seeds travel there as storage "
                        "volumes; its pools are in %s there",
                        topo->name, name, lab->plan->hosts[k].pool_dir);
        else if (topo->n_hosts > 1)
            ml_progress("host", "lab %s on %s: this machine's libvirt", topo->name, name);
    }
    ml_lab_phase(lab, "start");
    return true;
}

bool ml_session_rundir(struct ml_lab *lab, const struct ml_session_opts *opts, GError **err)
{
    lab->run_fd = ml_rundir_open(lab->run_dir, lab->topo->name, lab->run_id, opts->force, err);
    lab->run_open = lab->run_fd >= 0;
    if (!lab->run_open)
        return false;
    /* The topology as it was parsed, beside the results: `export` rebuilds the configs from it.
     * Its file is not read again: what was checked is what is kept, even where the file was a
     * run directory's that its owner could swap meanwhile (export --verify). */
    return ml_lab_write(lab, ML_SESSION_TOPOLOGY, lab->topo->text, (gssize)lab->topo->text_len,
                        err);
}

void ml_session_fail_teardown(struct ml_lab *lab, const struct ml_session_opts *opts)
{
    if (!lab->created)
        return;
    ml_progress("logs", "keeping the guests' consoles and cloud-init logs in %s/guests",
                lab->run_dir);
    ml_lab_collect_logs(lab);
    ml_lab_phase(lab, "logs");
    if (opts->keep_on_failure) {
        ml_progress("down",
                    "--keep-on-failure: lab %s left as it is; remove it with "
                    "'meshlab down %s'",
                    lab->topo->name, lab->topo->name);
        return;
    }
    g_autoptr(GError) e = NULL;
    if (!ml_lab_destroy(lab, &e))
        ml_warn("teardown incomplete: %s; run 'meshlab down %s' to finish it", e->message,
                lab->topo->name);
}

/* A lab of this name here, or on one of its hosts, is refused before anything is made; the
 * refusal says whose it is (core/controller.h) and what removes it. */
static bool refuse_existing(struct ml_lab *lab, GError **err)
{
    const char *name = lab->topo->name;
    if (ml_lab_state_exists(name)) {
        g_autofree char *path = ml_lab_state_path(name, ".json");
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "lab %s already exists (this machine's state file %s records it); 'meshlab "
                    "down %s' removes it",
                    name, path, name);
        return false;
    }
    for (size_t k = 0; k < lab->n_hosts; k++) {
        g_autoptr(GPtrArray) labs = ml_virt_list_labs(lab->hosts[k].conn);
        if (!g_ptr_array_find_with_equal_func(labs, name, g_str_equal, NULL))
            continue;
        g_autofree char *host = lab->topo->n_hosts
                                    ? g_strdup_printf("host %s", lab->topo->hosts[k].name)
                                    : ml_uri_public(lab->hosts[k].uri);
        g_autoptr(GPtrArray) foreign = ml_virt_lab_foreign(lab->hosts[k].conn, name);
        if (foreign->len == 0) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST,
                        "lab %s already exists on %s, made by this controller (%s) though no "
                        "state file records it (a meshlab that was killed); 'meshlab down %s' "
                        "removes it",
                        name, host, ml_controller_words(), name);
            return false;
        }
        g_ptr_array_add(foreign, NULL);
        g_autofree char *whose = g_strjoinv("; ", (char **)foreign->pdata);
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "lab %s already exists on %s, and it is not this controller's: %s. Give this "
                    "lab another name (name: in %s); if that lab is abandoned, 'meshlab down "
                    "--foreign %s' removes it",
                    name, host, whose, lab->topo->path, name);
        return false;
    }
    return true;
}

/* The KVM probe boots the guest kernel; with a fresh cache there is none yet,
 * so the image is built first. */
static bool probe_accelerator(struct ml_lab *lab, GError **err)
{
    g_autofree char *kernel = ml_image_any_cached_kernel(ml_cache_dir());
    struct ml_image tmp = {0};
    /* Another host's /dev/kvm is its own: its probe needs a kernel whatever this one has. */
    bool elsewhere = lab->remote || lab->n_hosts > 1;
    if (!kernel && (elsewhere || g_file_test("/dev/kvm", G_FILE_TEST_EXISTS))) {
        g_autoptr(GError) ie = NULL;
        if (ml_image_debian_prepare(ml_cache_dir(), &tmp, &ie))
            kernel = g_strdup(tmp.kernel);
        else
            ml_warn("cannot build the image the KVM probe boots: %s", ie->message);
        ml_lab_phase(lab, "image");
    }
    bool ok = true;
    if (elsewhere)
        ok = ml_lab_probe_remote(lab, kernel, err);
    else
        ml_host_probe_accel(kernel, &lab->accel);
    ml_image_clear(&tmp);
    if (!ok)
        return false;
    g_autofree char *origin = ml_host_accel_origin(&lab->accel);
    ml_progress("host", "accelerator %s: %s%s%s", lab->accel.kvm ? "KVM" : "TCG", lab->accel.reason,
                origin ? "; " : "", origin ? origin : "");
    ml_lab_phase(lab, "kvm-probe");
    return true;
}

/* Each dataplane once, even when several paths share it. A dataplane that
 * cannot come up fails its own paths, not the whole run. */
static bool setup_dataplanes(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *topo = lab->topo;
    for (size_t d = 0; ml_dataplanes[d]; d++) {
        const struct ml_dataplane *dp = ml_dataplanes[d];
        g_autofree char *why_not = NULL;
        if (!dp->setup || !ml_dp_needed(dp, topo))
            continue;
        if (!ml_dp_available(dp, lab, &why_not)) {
            ml_progress("up", "%s: %s", dp->name, why_not);
            continue;
        }
        if (ml_check_interrupted(err))
            return false;
        g_autoptr(GError) serr = NULL;
        struct json_object *state = ml_dataplane_state(lab, dp);
        bool ok = ml_dp_setup(dp, lab, state, &serr);
        g_autofree char *phase = g_strdup_printf("setup %s", dp->name);
        ml_lab_phase(lab, phase);
        if (ok)
            continue;
        if (!serr)
            g_set_error(&serr, ML_ERROR, ML_ERR_GUEST, "unknown error");
        if (serr->code == ML_ERR_INTERRUPTED) {
            g_propagate_error(err, g_steal_pointer(&serr));
            return false;
        }
        ml_warn("%s could not be set up: %s", dp->name, serr->message);
        json_object_object_add(state, "setup_failed", json_object_new_string(serr->message));
    }
    return !ml_check_interrupted(err);
}

bool ml_session_up(struct ml_lab *lab, const struct ml_session_opts *opts, GError **err)
{
    const struct ml_topology *topo = lab->topo;
    /* Every input is checked before anything is created. */
    if (!refuse_existing(lab, err) || !ml_session_rundir(lab, opts, err))
        return false;
    ml_progress("up", "lab %s, run %s, results in %s", topo->name, lab->run_id, lab->run_dir);
    if (!probe_accelerator(lab, err)) {
        ml_session_fail_teardown(lab, opts);
        return false;
    }

    /* What each guest's artifacts CD carries is the dataplanes' business; the lab
     * only burns it. */
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        lab->artifacts[i] = ml_path_artifacts(lab, i);
    /* The firewall is built once, from the one port table: the lab loads it at cloud-init's
     * hold where the image allows, else it is loaded once the guests are up. */
    struct ml_port ports[ML_PORTS_MAX];
    size_t n_ports = ml_dataplane_ports(topo, ports);
    g_autofree char *fw = ml_nft_firewall(ports, n_ports);
    g_autofree char *summary = ml_nft_firewall_summary(ports, n_ports);
    lab->firewall = g_strdup(fw);
    bool ok = ml_lab_create(lab, err);
    if (ok && lab->firewall_early) {
        ml_progress("firewall",
                    "guest firewall loaded on %zu guests at cloud-init's hold, before their "
                    "network came up: %s",
                    lab->plan->n_guests, summary);
    } else if (ok) {
        ok = ml_policy_firewall(lab, fw, summary, err);
        ml_lab_phase(lab, "firewall");
    }
    /* The NATs are built and observed before any dataplane runs behind them. */
    if (ok && (ml_topology_has_nat(topo) || topo->nat_matrix.present)) {
        ok = ml_nat_lab_up(lab, err);
        ml_lab_phase(lab, "nat");
    }
    ok = ok && (opts->no_dataplanes || setup_dataplanes(lab, err));
    if (ok) {
        lab->complete = true;
        ok = ml_lab_state_write(lab, err);
    }
    if (!ok) {
        ml_session_fail_teardown(lab, opts);
        return false;
    }
    ml_progress("up", "lab %s is up (%.0f s)", topo->name, ml_elapsed());
    return true;
}

bool ml_results_write(const struct ml_lab *lab, struct json_object *results, GError **err)
{
    const char *text =
        json_object_to_json_string_ext(results, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
    g_autofree char *with_nl = g_strdup_printf("%s\n", text);
    if (!ml_lab_write(lab, "results.json", with_nl, -1, err))
        return false;
    /* report.md, report.html and plots/, from the document alone (as `meshlab report` does). */
    size_t drawn = 0;
    if (!lab->run_open ||
        !ml_report_write(lab->run_fd, results, ml_metrics, ml_metrics_count, NULL, &drawn, err))
        return false;
    ml_progress("results", "report.md and report.html written, %zu picture(s) drawn", drawn);
    return true;
}

bool ml_session_reprice(struct json_object *results, const struct ml_session_opts *opts,
                        GError **err)
{
    if (!opts->n_workload)
        return true;
    struct ml_workload w;
    ml_workload_from_json(&w, json_object_object_get(results, "vps_workload"));
    for (size_t i = 0; i < opts->n_workload; i++)
        if (!ml_workload_set(&w, opts->workload[i].flag, opts->workload[i].value, err))
            return false;
    if (!ml_workload_complete(&w, err))
        return false;
    struct json_object *o = ml_workload_json(&w);
    json_object_object_add(o, "given_to_report", json_object_new_boolean(true));
    json_object_object_add(results, "vps_workload", o);
    return true;
}
