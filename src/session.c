#include "session.h"

#include <stdio.h>
#include <string.h>

#include "path.h"
#include "report.h"
#include "util.h"
#include "virt.h"

bool ml_session_open(struct ml_lab *lab, const struct ml_topology *topo,
                     const struct ml_session_opts *opts, GError **err)
{
    memset(lab, 0, sizeof(*lab));
    lab->topo = topo;
    lab->plan = ml_plan_new(topo, NULL);
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
    lab->conn = ml_virt_connect(ml_virt_uri(), err);
    return lab->conn != NULL;
}

void ml_session_fail_teardown(struct ml_lab *lab, const struct ml_session_opts *opts)
{
    if (!lab->created)
        return;
    ml_progress("logs", "keeping the guests' consoles and cloud-init logs in %s/guests",
                lab->run_dir);
    ml_lab_collect_logs(lab);
    if (opts->keep_on_failure) {
        ml_progress("down", "--keep-on-failure: lab %s left as it is; remove it with "
                    "'meshlab down %s'", lab->topo->name, lab->topo->name);
        return;
    }
    g_autoptr(GError) e = NULL;
    if (!ml_lab_destroy(lab, &e))
        ml_warn("teardown incomplete: %s; run 'meshlab down %s' to finish it", e->message,
                lab->topo->name);
}

bool ml_session_up(struct ml_lab *lab, const struct ml_topology *topo,
                   const struct ml_session_opts *opts, GError **err)
{
    double boot_timeout;
    /* Every input is checked before anything is created. */
    if (!ml_lab_boot_timeout(&boot_timeout, err) || !ml_session_open(lab, topo, opts, err))
        return false;
    struct json_object *existing = ml_lab_state_read(topo->name);
    g_autoptr(GPtrArray) labs = ml_virt_list_labs(lab->conn);
    bool exists = existing != NULL;
    for (guint i = 0; i < labs->len; i++)
        if (!strcmp(g_ptr_array_index(labs, i), topo->name))
            exists = true;
    json_object_put(existing);
    if (exists) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "lab %s already exists on this host; 'meshlab down %s' removes it", topo->name,
                    topo->name);
        return false;
    }
    if (!ml_mkdir_p(lab->run_dir, 0755, err))
        return false;
    ml_progress("up", "lab %s, run %s, results in %s", topo->name, lab->plan->run_id,
                lab->run_dir);

    g_autofree char *kernel = ml_image_any_cached_kernel(ml_cache_dir());
    ml_host_probe_accel(kernel, &lab->accel);
    ml_progress("host", "accelerator %s: %s", lab->accel.kvm ? "KVM" : "TCG", lab->accel.reason);
    if (!kernel && !lab->accel.kvm && g_file_test("/dev/kvm", G_FILE_TEST_EXISTS)) {
        /* The probe needs a kernel; with a fresh cache, build the image and probe again. */
        g_autoptr(GError) ie = NULL;
        struct ml_image tmp = {0};
        if (ml_image_debian_prepare(ml_cache_dir(), &tmp, &ie)) {
            ml_host_accel_clear(&lab->accel);
            ml_host_probe_accel(tmp.kernel, &lab->accel);
            ml_progress("host", "accelerator %s: %s", lab->accel.kvm ? "KVM" : "TCG",
                        lab->accel.reason);
        }
        ml_image_clear(&tmp);
    }

    bool ok = ml_lab_create(lab, err) && ml_policy_firewall(lab, err);
    /* Each dataplane once, even when several paths share it. */
    bool (*done[ML_PATH_COUNT])(struct ml_lab *, GError **) = {0};
    size_t n_done = 0;
    for (int k = 0; ok && k < ML_PATH_COUNT; k++) {
        const struct ml_path_ops *ops = ml_path_ops((enum ml_path_kind)k);
        g_autofree char *why_not = NULL;
        if (!topo->measure.paths[k] || !ops->setup)
            continue;
        if (ops->available && !ops->available(lab, &why_not)) {
            ml_progress("up", "%s: %s", ml_path_name(ops->kind), why_not);
            continue;
        }
        bool already = false;
        for (size_t d = 0; d < n_done; d++)
            already |= done[d] == ops->setup;
        if (already)
            continue;
        done[n_done++] = ops->setup;
        if (ml_check_interrupted(err)) {
            ok = false;
            break;
        }
        /* A dataplane that cannot come up fails its own paths, not the whole run. */
        g_autoptr(GError) serr = NULL;
        if (ops->setup(lab, &serr))
            continue;
        if (!serr)
            g_set_error(&serr, ML_ERROR, ML_ERR_GUEST, "unknown error");
        if (serr->code == ML_ERR_INTERRUPTED) {
            g_propagate_error(err, g_steal_pointer(&serr));
            ok = false;
            break;
        }
        ml_warn("%s could not be set up: %s", ml_path_name(ops->kind), serr->message);
        for (int j = 0; j < ML_PATH_COUNT; j++)
            if (topo->measure.paths[j] && ml_path_ops((enum ml_path_kind)j)->setup == ops->setup)
                lab->setup_failed[j] = g_strdup_printf("its dataplane could not be set up: %s",
                                                       serr->message);
    }
    if (ok && ml_interrupted())
        ok = !ml_check_interrupted(err);
    if (ok) {
        lab->complete = true;
        ok = ml_lab_state_write(lab, err);
    }
    if (!ok) {
        ml_session_fail_teardown(lab, opts);
        return false;
    }
    double total = 0;
    for (size_t i = 0; i < json_object_array_length(lab->phases); i++)
        total += json_object_get_double(
            json_object_object_get(json_object_array_get_idx(lab->phases, i), "seconds"));
    ml_progress("up", "lab %s is up (%.0f s)", topo->name, total);
    return true;
}

bool ml_results_write(const char *run_dir, struct json_object *results, GError **err)
{
    if (!ml_mkdir_p(run_dir, 0755, err))
        return false;
    g_autofree char *json_path = g_build_filename(run_dir, "results.json", NULL);
    g_autofree char *md_path = g_build_filename(run_dir, "report.md", NULL);
    const char *text =
        json_object_to_json_string_ext(results, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
    g_autofree char *with_nl = g_strdup_printf("%s\n", text);
    if (!ml_write_file(json_path, with_nl, -1, 0644, err))
        return false;
    g_autofree char *md = ml_report_render_markdown(results, err);
    if (!md)
        return false;
    return ml_write_file(md_path, md, -1, 0644, err);
}
