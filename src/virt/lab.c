#include "virt/lab.h"

#include "core/controller.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "virt/agent.h"
#include "virt/cloudinit.h"
#include "core/leftovers.h"
#include "core/lock.h"
#include "core/rundir.h"
#include "core/spawn.h"
#include "core/util.h"
#include "results/json.h"
#include "topology/name.h"
#include "virt/hostshell.h"
#include "virt/kvm_remote.h"
#include "virt/underlay.h"
#include "virt/virt.h"
#include "virt/virt_xml.h"
#include "virt/volume.h"
#include "virt/warm.h"

#define BOOT_TIMEOUT_S 600
#define BOOT_TIMEOUT_MAX_S 86400
/* The end of a guest's console log that goes into the run directory. */
#define CONSOLE_LOG_MAX (16 * 1024 * 1024)
#define READY_CMD "systemctl is-active -q cloud-init.service && test -f /etc/meshlab/guest"

void ml_lab_phase(struct ml_lab *lab, const char *name)
{
    double now = ml_elapsed();
    double seconds = now - lab->phase_mark;
    lab->phase_mark = now;
    if (!lab->phases)
        lab->phases = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(lab->phases); i++) {
        struct json_object *p = json_object_array_get_idx(lab->phases, i);
        if (!strcmp(json_object_get_string(json_object_object_get(p, "name")), name)) {
            seconds += json_object_get_double(json_object_object_get(p, "seconds"));
            json_object_object_add(p, "seconds",
                                   json_object_new_double(round(seconds * 100) / 100));
            return;
        }
    }
    struct json_object *p = json_object_new_object();
    json_object_object_add(p, "name", json_object_new_string(name));
    json_object_object_add(p, "seconds", json_object_new_double(round(seconds * 100) / 100));
    json_object_array_add(lab->phases, p);
}

char *ml_lab_rel(const struct ml_lab *lab, const char *rel)
{
    return g_strconcat(lab->write_prefix ? lab->write_prefix : "", rel, NULL);
}

bool ml_lab_write(const struct ml_lab *lab, const char *rel, const char *data, gssize len,
                  GError **err)
{
    g_autoptr(GError) e = NULL;
    g_autofree char *under = ml_lab_rel(lab, rel);
    rel = under;
    if (!lab->run_open) {
        g_set_error(&e, ML_ERROR, ML_ERR_HOST, "no run directory is open for '%s'", rel);
    } else if (ml_rundir_write(lab->run_fd, rel, data, len, 0644, &e)) {
        return true;
    }
    if (err)
        g_propagate_error(err, g_steal_pointer(&e));
    else
        ml_warn("%s", e->message);
    return false;
}

bool ml_lab_run_parallel(struct ml_lab *lab, const bool *which, const char *const *cmds,
                         const char *const *inputs, double timeout, char **out, const char *what,
                         GError **err)
{
    long long pids[ML_MAX_NODES];
    size_t n = lab->plan->n_guests;
    for (size_t i = 0; i < n; i++)
        if ((!which || which[i]) &&
            !ml_agent_spawn(lab->dom[i], cmds[i], inputs ? inputs[i] : NULL, &pids[i], err))
            return false;
    for (size_t i = 0; i < n; i++) {
        if (which && !which[i])
            continue;
        struct ml_exec ex = {0};
        if (!ml_agent_wait(lab->dom[i], pids[i], timeout, &ex, err))
            return false;
        int code = ex.exit_code;
        if (code != 0) {
            g_autofree char *why = g_strstrip(g_strdup(*ex.err ? ex.err : ex.out));
            g_set_error(err, ML_ERROR, ML_ERR_GUEST, "%s on %s failed (status %d): %s", what,
                        lab->topo->nodes[i].name, code, why);
        } else if (out) {
            out[i] = g_steal_pointer(&ex.out);
        }
        ml_exec_clear(&ex);
        if (code != 0)
            return false;
    }
    return true;
}

bool ml_lab_wait_ping(struct ml_lab *lab, struct in_addr target, unsigned tries,
                      const char *through, GError **err)
{
    const struct ml_topology *t = lab->topo;
    char addr[16];
    ml_ip_str(target, addr);
    g_autofree char *cmd = g_strdup_printf(
        "for i in $(seq 1 %u); do %sping -n -c 1 -W 1 %s >/dev/null 2>&1 && exit 0; done; exit 1",
        tries, ml_lab_netns_prefix(lab, t->measure.client), addr);
    struct ml_exec ex = {0};
    if (!ml_agent_exec(lab->dom[t->measure.client], cmd, NULL, tries * 1.5 + 30, &ex, err))
        return false;
    int code = ex.exit_code;
    ml_exec_clear(&ex);
    if (code != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "no answer through %s from %s to %s within %u tries",
                    through, t->nodes[t->measure.client].name, addr, tries);
        return false;
    }
    return true;
}

const char *ml_lab_netns_prefix(const struct ml_lab *lab, size_t node)
{
    return lab->nat_now[node] != ML_NAT_NONE ? "ip netns exec " ML_PLAN_NETNS " " : "";
}

virDomainPtr ml_lab_dom(const struct ml_lab *lab, size_t i)
{
    return lab->dom[i];
}

/* Guest i's seed: the lab's own, after the part a caller put first (user_data_first). */
static bool render_seed(const struct ml_lab *lab, size_t i, struct ml_seed *seed, GError **err)
{
    if (!ml_seed_render(lab->plan, i, seed, err))
        return false;
    if (lab->user_data_first[i]) {
        char *both = ml_seed_multipart(lab->user_data_first[i], seed->user_data);
        g_free(seed->user_data);
        seed->user_data = both;
    }
    return true;
}

static char *console_path(const struct ml_lab *lab, size_t i)
{
    g_autofree char *file = g_strdup_printf("%s-console.log", lab->plan->guests[i].node->name);
    return g_build_filename(ml_plan_guest_host(lab->plan, i)->pool_dir, file, NULL);
}

struct ml_lab_host *ml_lab_host_of(const struct ml_lab *lab, size_t i)
{
    return (struct ml_lab_host *)&lab->hosts[lab->plan->guests[i].host];
}

const char *ml_lab_shell_uri(const struct ml_lab *lab, size_t i)
{
    const struct ml_lab_host *h = ml_lab_host_of(lab, i);
    return h->remote ? h->uri : NULL;
}

/* What the host k's connection says of it: remote or not, its URI, its pool's directory. */
static void on_host(struct ml_lab *lab, size_t k)
{
    struct ml_lab_host *h = &lab->hosts[k];
    struct ml_plan_host *ph = &lab->plan->hosts[k];
    h->remote = ml_virt_conn_remote(h->conn) == 1;
    g_free(h->uri);
    h->uri =
        ml_virt_conn_uri(h->conn, lab->topo->n_hosts ? lab->topo->hosts[k].uri : ml_virt_uri());
    g_autofree char *key = ml_plan_host_key(lab->topo->name, ph->host ? ph->host->name : NULL);
    g_free(ph->pool_dir);
    ph->pool_dir = ml_virt_lab_pool_dir(h->conn, key);
}

/* The name of host k in messages: the topology's, or its URI without credentials. */
static char *host_shown(const struct ml_lab *lab, size_t k)
{
    if (lab->topo->n_hosts)
        return g_strdup(lab->topo->hosts[k].name);
    return ml_uri_public(lab->hosts[k].uri ? lab->hosts[k].uri : ml_virt_uri());
}

/* Whether host k's URI gives a shell (hostshell.h); false with err saying why not. */
static bool host_has_shell(const struct ml_lab *lab, size_t k, const char *uri, GError **err)
{
    g_auto(GStrv) argv = ml_hostshell_argv(uri, "true", err);
    if (!argv)
        g_prefix_error(err,
                       "host %s: a lab over several hosts stitches their bridges with the host's "
                       "own tools: ",
                       lab->topo->hosts[k].name);
    return argv != NULL;
}

bool ml_lab_connect(struct ml_lab *lab, const char *uri, GError **err)
{
    const struct ml_topology *t = lab->topo;
    lab->n_hosts = lab->plan->n_hosts;
    if (t->n_hosts && ml_virt_uri_given()) {
        g_autofree char *shown = ml_uri_public(ml_virt_uri_given());
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s: the topology places its nodes on hosts (hosts: at line %d), so %s (%s) "
                    "has no lab to name; %s",
                    t->path, t->hosts[0].line, ml_virt_uri_from_env() ? "MESHLAB_URI" : "--connect",
                    shown, ml_virt_uri_from_env() ? "unset MESHLAB_URI" : "drop --connect");
        return false;
    }
    for (size_t k = 0; k < lab->n_hosts; k++) {
        const char *host_uri = t->n_hosts ? t->hosts[k].uri : uri;
        /* A host without a shell can't be stitched to the others: refused before anything is
         * made, a URI before its connection, an alias of libvirt.conf by the URI libvirt
         * resolved it to. */
        if (lab->n_hosts > 1 && ml_virt_uri_remote(host_uri) >= 0 &&
            !host_has_shell(lab, k, host_uri, err))
            return false;
        lab->hosts[k].conn = ml_virt_connect(host_uri, err);
        if (!lab->hosts[k].conn) {
            if (t->n_hosts)
                g_prefix_error(err, "host %s: ", t->hosts[k].name);
            return false;
        }
        on_host(lab, k);
        if (lab->n_hosts > 1 && !host_has_shell(lab, k, lab->hosts[k].uri, err))
            return false;
    }
    /* Each host's route to the others, before anything is made on any. */
    if (lab->n_hosts > 1 && !ml_lab_underlay_routes(lab, err))
        return false;
    size_t hub = lab->plan->guests[t->hub].host;
    lab->conn = lab->hosts[hub].conn;
    virConnectRef(lab->conn);
    lab->remote = lab->hosts[hub].remote;
    g_free(lab->uri);
    lab->uri = g_strdup(lab->hosts[hub].uri);
    return true;
}

const char *ml_lab_start(const struct ml_lab *lab)
{
    size_t warm = 0;
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        warm += lab->warm[i];
    return warm == 0 ? "cold" : warm == lab->plan->n_guests ? "warm" : "mixed";
}

bool ml_lab_state_write(const struct ml_lab *lab, GError **err)
{
    /* QEMU runs as libvirt-qemu and must pass through to the pools below the
     * state directory (each pool is its alone, 0700); the lab records beside
     * them are root's alone. */
    g_autofree char *dir = g_path_get_dirname(lab->plan->state_file);
    g_autofree char *pools = g_build_filename(ml_state_dir(), "pools", NULL);
    if (!ml_mkdir_mode(ml_state_dir(), 0755, err) || !ml_mkdir_mode(pools, 0711, err) ||
        !ml_mkdir_p(dir, 0700, err))
        return false;
    struct stat st;
    if (stat(ml_state_dir(), &st) == 0 && !(st.st_mode & S_IXOTH))
        ml_warn("the state directory %s (mode %04o) does not let QEMU's user through to the "
                "pools below it; 'chmod o+x %s' does, if you meant to keep it there",
                ml_state_dir(), (unsigned)(st.st_mode & 07777), ml_state_dir());
    struct json_object *s = json_object_new_object();
    json_object_object_add(s, "lab", json_object_new_string(lab->topo->name));
    json_object_object_add(s, "run_id", json_object_new_string(lab->plan->run_id));
    json_object_object_add(s, "topology", json_object_new_string(lab->topo->path));
    json_object_object_add(s, "run_dir", json_object_new_string(lab->run_dir));
    /* Where the lab is: down, status, exec and console find it there without --connect. */
    g_autofree char *uri =
        lab->conn ? ml_virt_conn_uri(lab->conn, ml_virt_uri()) : g_strdup(ml_virt_uri());
    json_object_object_add(s, "uri", json_object_new_string(uri));
    /* A lab over several hosts: each host's name and URI, whole, for down to find them. */
    if (lab->topo->n_hosts > 1) {
        struct json_object *hosts = json_object_new_array();
        for (size_t k = 0; k < lab->topo->n_hosts; k++) {
            struct json_object *h = json_object_new_object();
            json_object_object_add(h, "name", json_object_new_string(lab->topo->hosts[k].name));
            json_object_object_add(h, "uri",
                                   json_object_new_string(lab->hosts[k].uri
                                                              ? lab->hosts[k].uri
                                                              : lab->topo->hosts[k].uri));
            struct json_object *nodes = json_object_new_array();
            for (size_t i = 0; i < lab->topo->n_nodes; i++)
                if (lab->topo->nodes[i].host == k)
                    json_object_array_add(nodes, json_object_new_string(lab->topo->nodes[i].name));
            json_object_object_add(h, "nodes", nodes);
            json_object_array_add(hosts, h);
        }
        json_object_object_add(s, "hosts", hosts);
    }
    json_object_object_add(s, "complete", json_object_new_boolean(lab->complete));
    json_object_object_add(s, "accelerator_kvm", json_object_new_boolean(lab->accel.kvm));
    if (lab->accel.reason)
        json_object_object_add(s, "accelerator_reason", json_object_new_string(lab->accel.reason));
    json_object_object_add(s, "accelerator_source", json_object_new_int((int)lab->accel.source));
    if (lab->accel.probed_at)
        json_object_object_add(s, "accelerator_probed_at",
                               json_object_new_string(lab->accel.probed_at));
    struct json_object *img = json_object_new_object();
    const char *fields[][2] = {{"name", lab->image.name},
                               {"requested", lab->image.requested},
                               {"fallback_reason", lab->image.fallback_reason},
                               {"sha256", lab->image.sha256}};
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
        if (fields[i][1])
            json_object_object_add(img, fields[i][0], json_object_new_string(fields[i][1]));
    json_object_object_add(s, "image", img);
    if (lab->dataplanes)
        json_object_object_add(s, "dataplanes", json_object_get(lab->dataplanes));
    if (lab->phases)
        json_object_object_add(s, "phases", json_object_get(lab->phases));
    struct json_object *boot = json_object_new_array();
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        struct json_object *g = json_object_new_object();
        json_object_object_add(g, "boot_s", json_object_new_double(lab->boot_s[i]));
        json_object_object_add(g, "ready_s", json_object_new_double(lab->ready_s[i]));
        json_object_object_add(g, "cpu_s", json_object_new_double(round(lab->cpu_s[i] * 10) / 10));
        json_object_object_add(g, "start", json_object_new_string(lab->warm[i] ? "warm" : "cold"));
        if (lab->save_s[i] > 0)
            json_object_object_add(g, "save_s",
                                   json_object_new_double(round(lab->save_s[i] * 10) / 10));
        json_object_array_add(boot, g);
    }
    json_object_object_add(s, "guests", boot);
    json_object_object_add(s, "start", json_object_new_string(ml_lab_start(lab)));
    const char *text = json_object_to_json_string_ext(s, JSON_C_TO_STRING_PRETTY);
    bool ok = ml_write_file(lab->plan->state_file, text, -1, 0600, err);
    json_object_put(s);
    return ok;
}

bool ml_lab_state_exists(const char *lab_name)
{
    if (!ml_name_check("lab name", lab_name, false, NULL))
        return false;
    g_autofree char *path = ml_lab_state_path(lab_name, ".json");
    return g_file_test(path, G_FILE_TEST_EXISTS);
}

struct json_object *ml_lab_state_read(const char *lab_name)
{
    if (!ml_name_check("lab name", lab_name, false, NULL))
        return NULL;
    g_autofree char *path = ml_lab_state_path(lab_name, ".json");
    return json_object_from_file(path);
}

static gint by_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

GPtrArray *ml_lab_state_names(void)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *dir = g_build_filename(ml_state_dir(), "labs", NULL);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *e;
    while (d && (e = g_dir_read_name(d))) {
        if (!g_str_has_suffix(e, ".json"))
            continue;
        g_autofree char *name = g_strndup(e, strlen(e) - strlen(".json"));
        if (ml_name_check("lab name", name, false, NULL))
            g_ptr_array_add(names, g_steal_pointer(&name));
    }
    g_ptr_array_sort(names, by_name);
    return names;
}

char *ml_lab_uri(const char *lab_name, bool *ret_recorded)
{
    if (ret_recorded)
        *ret_recorded = false;
    if (ml_virt_uri_given())
        return g_strdup(ml_virt_uri_given());
    struct json_object *state = ml_lab_state_read(lab_name);
    const char *recorded = ml_j_str(state, "uri");
    char *uri = g_strdup(recorded && *recorded ? recorded : ml_virt_uri());
    if (ret_recorded)
        *ret_recorded = recorded && *recorded;
    json_object_put(state);
    return uri;
}

char *ml_lab_node_uri(const char *lab_name, const char *node)
{
    struct json_object *state = ml_lab_state_read(lab_name);
    struct json_object *hosts = NULL;
    char *uri = NULL;
    if (!ml_virt_uri_given() && json_object_object_get_ex(state, "hosts", &hosts) &&
        json_object_is_type(hosts, json_type_array))
        for (size_t k = 0; !uri && k < json_object_array_length(hosts); k++) {
            struct json_object *h = json_object_array_get_idx(hosts, k), *nodes = NULL;
            if (!json_object_object_get_ex(h, "nodes", &nodes) ||
                !json_object_is_type(nodes, json_type_array))
                continue;
            for (size_t i = 0; i < json_object_array_length(nodes); i++)
                if (!g_strcmp0(json_object_get_string(json_object_array_get_idx(nodes, i)), node) &&
                    ml_j_str(h, "uri"))
                    uri = g_strdup(ml_j_str(h, "uri"));
        }
    json_object_put(state);
    return uri ? uri : ml_lab_uri(lab_name, NULL);
}

/* A directory of root's own for a file on its way into the pool (0700, the pid in its name
 * for 'meshlab down'); NULL with err. */
static char *private_dir(GError **err)
{
    g_autofree char *tmpl = ml_leftover_template("seed", "");
    char *dir = g_dir_make_tmp(tmpl, NULL);
    if (!dir)
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "cannot create a temporary directory in %s: %s; set TMPDIR to a writable "
                    "directory",
                    g_get_tmp_dir(), g_strerror(errno));
    return dir;
}

/* Binaries the guests may not download (Tailscale, Headscale) reach them on a
 * CD of their own, labelled MESHLAB, built from the host's verified cache. */
static bool artifacts_iso(struct ml_lab *lab, size_t i, char **ret_path, GError **err)
{
    const GPtrArray *files = lab->artifacts[i];
    *ret_path = NULL;
    if (!files || files->len == 0)
        return true;
    g_autofree char *name = g_strdup_printf("%s-artifacts.iso", lab->plan->guests[i].node->name);
    struct ml_lab_host *host = ml_lab_host_of(lab, i);
    g_autofree char *path =
        g_build_filename(ml_plan_guest_host(lab->plan, i)->pool_dir, name, NULL);
    /* Built in root's own directory (0700, the pid in its name for 'meshlab down'), then
     * copied into the pool, which QEMU's user can write: genisoimage would follow a link. */
    g_autofree char *dir = private_dir(err);
    if (!dir)
        return false;
    g_autofree char *iso = g_build_filename(dir, name, NULL);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    const char *head[] = {"genisoimage", "-quiet", "-V", "MESHLAB", "-r", "-J", "-o", iso};
    for (size_t k = 0; k < G_N_ELEMENTS(head); k++)
        g_ptr_array_add(argv, (gpointer)head[k]);
    for (guint k = 0; k < files->len; k++)
        g_ptr_array_add(argv, g_ptr_array_index(files, k));
    g_ptr_array_add(argv, NULL);
    bool ok = ml_spawn_timeout((const char *const *)argv->pdata, 120, NULL, err);
    if (ok && host->remote) {
        g_free(path);
        path = NULL;
        ok = ml_vol_upload(host->conn, ml_plan_guest_host(lab->plan, i)->pool, name, iso, false,
                           &path, err);
    } else if (ok) {
        ok = ml_file_place(iso, path, 0600, err);
    }
    unlink(iso);
    rmdir(dir);
    if (!ok)
        return false;
    ml_progress("define", "guest %s: artifacts CD with %u files from the cache",
                lab->plan->guests[i].node->name, files->len);
    *ret_path = g_steal_pointer(&path);
    return true;
}

void ml_lab_state_remove(const char *lab_name, void (*cb)(const char *what, void *opaque),
                         void *opaque)
{
    static const char *const suffixes[] = {".json"};
    if (!ml_name_check("lab name", lab_name, false, NULL))
        return;
    for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        g_autofree char *path = ml_lab_state_path(lab_name, suffixes[i]);
        if (unlink(path) == 0 && cb) {
            g_autofree char *what = g_strdup_printf("state %s", path);
            cb(what, opaque);
        }
    }
}

/* What guest i's artifacts CD holds, for its warm key: each file's name, size and time of
 * change, a line each; NULL when it has no CD. A file that cannot be read is its own line:
 * the CD was built from it, so it could, and the key only changes. */
static char *artifacts_media(const struct ml_lab *lab, size_t i)
{
    const GPtrArray *files = lab->artifacts[i];
    if (!files || files->len == 0)
        return NULL;
    GString *s = g_string_new(NULL);
    for (guint k = 0; k < files->len; k++) {
        const char *f = g_ptr_array_index(files, k);
        g_autofree char *base = g_path_get_basename(f);
        struct stat st;
        if (stat(f, &st) == 0)
            g_string_append_printf(s, "%s %lld %lld.%09ld\n", base, (long long)st.st_size,
                                   (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
        else
            g_string_append_printf(s, "%s unreadable\n", base);
    }
    return g_string_free(s, FALSE);
}

/* The guest's overlay: the saved one when the guest can start warm, else a fresh one on
 * the base. Only an image that holds before cloud-init can be saved (see warm.h). */
static bool place_overlay(struct ml_lab *lab, size_t i, const char *overlay, GError **err)
{
    struct ml_plan *plan = lab->plan;
    const char *node = plan->guests[i].node->name;
    /* A saved guest is a file of this machine's: another host, or a lab over several, starts
     * every guest cold. */
    if (lab->image.seed_by_agent && ml_warm_enabled() && !lab->remote && lab->n_hosts == 1) {
        g_autofree char *media = artifacts_media(lab, i);
        lab->warm_key[i] = ml_warm_key(lab->conn, &lab->image, lab->accel.kvm, lab->xml[i],
                                       plan->run_id, media, err);
        if (!lab->warm_key[i])
            return false;
        lab->warm[i] = ml_warm_have(plan->topo->name, node, lab->warm_key[i]);
    }
    if (!lab->warm[i]) {
        g_autofree char *path = NULL;
        struct ml_lab_host *host = ml_lab_host_of(lab, i);
        return ml_virt_create_overlay(host->conn, plan, i, host->base, lab->base_size, &path, err);
    }
    if (!ml_warm_place_overlay(plan->topo->name, node, overlay, err))
        return false;
    /* libvirt learns of the copied volume, so that teardown finds it like any other. */
    virStoragePoolPtr pool = virStoragePoolLookupByName(lab->conn, plan->hosts[0].pool);
    if (!pool || virStoragePoolRefresh(pool, 0) < 0) {
        if (pool)
            virStoragePoolFree(pool);
        ml_virt_error(err, "cannot refresh storage pool '%s'", plan->hosts[0].pool);
        return false;
    }
    virStoragePoolFree(pool);
    return true;
}

/* The images the guests boot, where host k reads them: this machine's cache, or on another
 * host the image pool's copies, uploaded once (volume.h). */
static bool place_images(struct ml_lab *lab, size_t k, GError **err)
{
    const struct ml_image *img = &lab->image;
    struct ml_lab_host *h = &lab->hosts[k];
    if (!lab->base_size) {
        lab->base_size = ml_virt_image_size(img->base, err);
        if (!lab->base_size && err && *err)
            return false;
    }
    if (!h->remote) {
        h->base = g_strdup(img->base);
        h->kernel = g_strdup(img->kernel);
        h->initrd = g_strdup(img->initrd);
        return true;
    }
    bool up = false;
    return ml_vol_cache_file(h->conn, ML_VOL_IMAGES_POOL, img->base, img->sha256, "base", ".qcow2",
                             &h->base, &up, err) &&
           (!img->kernel || ml_vol_cache_file(h->conn, ML_VOL_IMAGES_POOL, img->kernel, NULL,
                                              "kernel", "", &h->kernel, &up, err)) &&
           (!img->initrd || ml_vol_cache_file(h->conn, ML_VOL_IMAGES_POOL, img->initrd, NULL,
                                              "initrd", "", &h->initrd, &up, err));
}

/* Guest i's seed CD into the pool: written there on this machine, uploaded to another host
 * from a private_dir. The host's path into *ret_path. */
static bool place_seed(struct ml_lab *lab, size_t i, const struct ml_seed *seed, char **ret_path,
                       GError **err)
{
    const struct ml_plan *plan = lab->plan;
    const char *vol = plan->guests[i].seed_vol;
    const struct ml_lab_host *host = ml_lab_host_of(lab, i);
    if (!host->remote) {
        *ret_path = g_build_filename(ml_plan_guest_host(plan, i)->pool_dir, vol, NULL);
        return ml_seed_write_iso(seed, *ret_path, err);
    }
    g_autofree char *dir = private_dir(err);
    if (!dir)
        return false;
    g_autofree char *iso = g_build_filename(dir, vol, NULL);
    bool ok = ml_seed_write_iso(seed, iso, err) &&
              ml_vol_upload(host->conn, ml_plan_guest_host(plan, i)->pool, vol, iso, false,
                            ret_path, err);
    unlink(iso);
    rmdir(dir);
    return ok;
}

#define UNDERLAY_TIMEOUT_S 60

/* A lab over several hosts: each host's route to every other's underlay address, before anything
 * is made there; the smallest MTU of them sets the lab's (VXLAN's 50 bytes less). */
bool ml_lab_underlay_routes(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    unsigned lab_mtu = 1500;
    /* Each host's own address and tools first, so that a wrong one is named on its host, not
     * found as a route that another host lacks. */
    for (size_t k = 0; k < lab->n_hosts; k++) {
        g_autofree char *script =
            ml_underlay_route_script(t->hosts[k].underlay, t->hosts[k].underlay);
        if (!ml_underlay_run(lab->hosts[k].uri, t->hosts[k].name, script, UNDERLAY_TIMEOUT_S, NULL,
                             err))
            return false;
    }
    for (size_t k = 0; k < lab->n_hosts; k++) {
        struct ml_lab_host *h = &lab->hosts[k];
        for (size_t j = 0; j < lab->n_hosts; j++) {
            if (j == k)
                continue;
            g_autofree char *script =
                ml_underlay_route_script(t->hosts[k].underlay, t->hosts[j].underlay);
            g_autofree char *out = NULL;
            struct ml_underlay_route r = {0};
            if (!ml_underlay_run(h->uri, t->hosts[k].name, script, UNDERLAY_TIMEOUT_S, &out, err) ||
                !ml_underlay_route_parse(out, t->hosts[k].name, &r, err))
                return false;
            if (!h->underlay_mtu || r.mtu < h->underlay_mtu) {
                h->underlay_mtu = r.mtu;
                g_strlcpy(h->underlay_dev, r.dev, sizeof(h->underlay_dev));
            }
        }
        unsigned m = ml_underlay_lab_mtu(h->underlay_mtu);
        if (!m) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST,
                        "host %s: its underlay (%s, MTU %u) cannot carry VXLAN's 50 bytes over "
                        "a lab MTU of 576; give an underlay address on a network of a larger MTU",
                        t->hosts[k].name, h->underlay_dev, h->underlay_mtu);
            return false;
        }
        lab_mtu = MIN(lab_mtu, m);
    }
    for (size_t k = 0; k < lab->n_hosts; k++) {
        lab->hosts[k].mtu = lab_mtu;
        char a[16];
        ml_progress("define", "host %s: underlay %s on %s, MTU %u; the lab's MTU is %u",
                    t->hosts[k].name, ml_ip_str(t->hosts[k].underlay, a),
                    lab->hosts[k].underlay_dev, lab->hosts[k].underlay_mtu, lab_mtu);
    }
    return true;
}

/* Each host's bridge to the others', by VXLAN (underlay.h). */
static bool stitch_hosts(struct ml_lab *lab, GError **err)
{
    for (size_t k = 0; k < lab->n_hosts; k++) {
        g_autofree char *script = ml_underlay_stitch_script(lab->plan, k, lab->hosts[k].mtu);
        if (!ml_underlay_run(lab->hosts[k].uri, lab->topo->hosts[k].name, script,
                             UNDERLAY_TIMEOUT_S, NULL, err))
            return false;
        char a[16];
        ml_progress("define",
                    "host %s: bridge %s stitched to the other hosts by %s (VXLAN %u, "
                    "%s port %u)",
                    lab->topo->hosts[k].name, lab->plan->hosts[k].bridge, lab->plan->hosts[k].vxlan,
                    lab->plan->vni, ml_ip_str(lab->topo->hosts[k].underlay, a),
                    lab->plan->hosts[k].vxlan_port);
    }
    return true;
}

static bool create_objects(struct ml_lab *lab, GError **err)
{
    struct ml_plan *plan = lab->plan;
    for (size_t k = 0; k < lab->n_hosts; k++) {
        struct ml_plan_host *ph = &plan->hosts[k];
        struct ml_lab_host *h = &lab->hosts[k];
        g_autofree char *on =
            ph->host ? g_strdup_printf(" on host %s", ph->host->name) : g_strdup("");
        ml_progress("define", "network %s%s (bridge %s, no host address, no forwarding)",
                    ph->network, on, ph->bridge);
        if (!ml_virt_define_network(h->conn, ph, h->mtu, err))
            return false;
        if (!h->pool_defined) {
            ml_progress("define", "storage pool %s in %s%s", ph->pool, ph->pool_dir, on);
            if (!ml_virt_define_pool(h->conn, ph, err))
                return false;
            h->pool_defined = true;
        }
        if (!place_images(lab, k, err))
            return false;
    }
    if (lab->n_hosts > 1 && !stitch_hosts(lab, err))
        return false;
    for (size_t i = 0; i < plan->n_guests; i++) {
        struct ml_lab_host *host = ml_lab_host_of(lab, i);
        struct ml_image host_image = lab->image; /* the same image, by the host's paths */
        host_image.base = host->base;
        host_image.kernel = host->kernel;
        host_image.initrd = host->initrd;
        if (ml_check_interrupted(err))
            return false;
        const struct ml_plan_guest *g = &plan->guests[i];
        /* Rendered now, so that a template error stops the lab before any guest runs; an
         * image that takes its seed through the agent gets it when its hold is reached. */
        struct ml_seed seed = {0};
        if (!render_seed(lab, i, &seed, err))
            return false;
        g_autofree char *seed_path = NULL;
        bool ok = lab->image.seed_by_agent || place_seed(lab, i, &seed, &seed_path, err);
        ml_seed_clear(&seed);
        if (!ok)
            return false;
        g_autofree char *console = console_path(lab, i);
        g_autofree char *artifacts = NULL;
        if (!artifacts_iso(lab, i, &artifacts, err))
            return false;
        g_autofree char *overlay =
            g_build_filename(ml_plan_guest_host(plan, i)->pool_dir, g->overlay_vol, NULL);
        struct ml_domain_paths paths = {overlay, seed_path, console, artifacts};
        lab->xml[i] = ml_xml_domain(plan, i, &host_image, lab->accel.kvm, &paths);
        if (!place_overlay(lab, i, overlay, err))
            return false;
        lab->dom[i] = ml_virt_define_domain(host->conn, g->domain, lab->xml[i], err);
        if (!lab->dom[i])
            return false;
        ml_progress("define", "guest %s: domain %s, overlay %s, seed %s", g->node->name, g->domain,
                    g->overlay_vol,
                    seed_path ? g->seed_vol : "through the guest agent at cloud-init's hold");
    }
    ml_lab_phase(lab, "define");
    return true;
}

/* Up to max bytes of guest i's console log: read here, or downloaded from another host. NULL
 * when there is none yet. The pool belongs to QEMU's user here: never follow a link planted
 * there. */
static char *console_read(struct ml_lab *lab, size_t i, gsize max, gsize *ret_len)
{
    g_autofree char *file = g_strdup_printf("%s-console.log", lab->plan->guests[i].node->name);
    const struct ml_lab_host *host = ml_lab_host_of(lab, i);
    const struct ml_plan_host *ph = ml_plan_guest_host(lab->plan, i);
    if (host->remote)
        return ml_vol_download(host->conn, ph->pool, file, max, ret_len, NULL);
    g_autofree char *path = g_build_filename(ph->pool_dir, file, NULL);
    return ml_file_read_nofollow(path, max, ret_len, NULL);
}

static char *console_tail(struct ml_lab *lab, size_t i, int lines)
{
    gsize len = 0;
    g_autofree char *text = console_read(lab, i, CONSOLE_LOG_MAX, &len);
    if (!text)
        return g_strdup("(no console output)");
    return ml_last_lines(text, lines);
}

bool ml_lab_boot_timeout(double *ret, GError **err)
{
    const char *env = g_getenv("MESHLAB_BOOT_TIMEOUT");
    *ret = BOOT_TIMEOUT_S;
    if (!env)
        return true;
    char *end = NULL;
    double v = g_ascii_strtod(env, &end);
    /* nan and inf parse as numbers, and either would make every wait endless. */
    if (end == env || *end || !isfinite(v) || v <= 0 || v > BOOT_TIMEOUT_MAX_S) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "MESHLAB_BOOT_TIMEOUT must be a number of seconds greater than 0 and at "
                    "most %d, not '%s'; unset it for the default of %d s",
                    BOOT_TIMEOUT_MAX_S, env, BOOT_TIMEOUT_S);
        return false;
    }
    *ret = v;
    return true;
}

/* The hold is reached once it says so (ML_SEED_GUEST_HELD); then the firewall and the seed go
 * in and the hold is released with the host's clock and randomness (ml_warm_release_line), all
 * through the agent's file calls: no process starts in the guest, where under TCG each costs a
 * tenth of a second and more of its one vCPU (a `test -p` every 250 ms took the CPU cloud-init's
 * imports wanted). False with no error while the hold is not reached yet. */
static bool release_hold(struct ml_lab *lab, size_t i, bool *released, GError **err)
{
    *released = false;
    g_autoptr(GError) not_yet = NULL;
    g_autofree char *held = ml_agent_file_get(lab->dom[i], ML_SEED_GUEST_HELD, 64, &not_yet);
    if (!held)
        return true; /* no file yet, or an agent not answering: the boot's timeout judges */
    const char *node = lab->plan->guests[i].node->name;
    if (!lab->warm[i] && lab->warm_key[i]) {
        g_autofree char *overlay =
            g_build_filename(lab->plan->hosts[0].pool_dir, lab->plan->guests[i].overlay_vol, NULL);
        if (!ml_warm_save(lab->dom[i], lab->topo->name, node, lab->warm_key[i], overlay,
                          &lab->save_s[i], err))
            return false;
        ml_progress("boot", "guest %s: saved for the next warm start in %.1f s", node,
                    lab->save_s[i]);
    }
    if (!ml_warm_agent_back(lab->dom[i], err))
        return false;
    /* The firewall goes in before cloud-init raises the network: the hold loads it. */
    if (lab->firewall && !ml_agent_file_write(lab->dom[i], ML_SEED_GUEST_FIREWALL, lab->firewall,
                                              strlen(lab->firewall), err)) {
        g_prefix_error(err, "writing the firewall on %s: ", node);
        return false;
    }
    struct ml_seed seed = {0};
    bool ok = render_seed(lab, i, &seed, err) && ml_seed_push(lab->dom[i], &seed, err);
    ml_seed_clear(&seed);
    if (!ok)
        return false;
    /* A guest that goes on from a saved image (restored, or just saved) must not draw the
     * numbers its twins drew: the host's randomness goes in with the release, before any key
     * is made. */
    char line[ML_WARM_RELEASE_LINE_MAX];
    ok = ml_warm_release_line(line, err) &&
         ml_agent_file_write(lab->dom[i], ML_SEED_GUEST_RELEASE, line, strlen(line), err);
    explicit_bzero(line, sizeof(line));
    if (!ok) {
        g_prefix_error(err, "cannot release cloud-init's hold on %s: ", node);
        return false;
    }
    *released = true;
    return true;
}

/* Ready once cloud-init has configured the guest for this run: the image's ready file
 * (read through the agent, no process) names this run, or cloud-init's init stage is
 * active and its file written. */
static bool guest_ready(struct ml_lab *lab, size_t i, GError **err)
{
    if (!lab->image.seed_by_agent) {
        struct ml_exec ex = {0};
        g_autoptr(GError) e = NULL;
        bool ok = ml_agent_exec(lab->dom[i], READY_CMD, NULL, 10, &ex, &e) && ex.exit_code == 0;
        ml_exec_clear(&ex);
        return ok;
    }
    g_autoptr(GError) e = NULL;
    g_autofree char *text = ml_agent_file_get(lab->dom[i], ML_SEED_GUEST_READY, 4096, &e);
    if (!text)
        return false;
    return ml_boot_ready_file(text, lab->plan->run_id, lab->plan->guests[i].node->name, err);
}

/* Each held guest is released by a thread of its own (saved first, reseeded, its seed
 * written, see release_hold), so that a slow save does not stop the others' boots being
 * watched. */
struct release_job {
    struct ml_lab *lab;
    size_t i;
    GThread *thread;
    gint done, cancel;
    bool released;
    double released_at;
    GError *err;
};

static gpointer release_loop(gpointer data)
{
    struct release_job *job = data;
    while (!g_atomic_int_get(&job->cancel)) {
        if (!release_hold(job->lab, job->i, &job->released, &job->err) || job->released)
            break;
        g_usleep(250 * 1000);
    }
    job->released_at = ml_now();
    g_atomic_int_set(&job->done, 1);
    return NULL;
}

static void release_jobs_stop(struct release_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!jobs[i].thread)
            continue;
        g_atomic_int_set(&jobs[i].cancel, 1);
        g_thread_join(jobs[i].thread);
        jobs[i].thread = NULL;
        g_clear_error(&jobs[i].err);
    }
}

struct start_job {
    struct ml_lab *lab;
    size_t i;
    GError *err;
};

/* Boots guest i, or restores it from its saved state. */
static gpointer start_guest(gpointer data)
{
    struct start_job *job = data;
    struct ml_lab *lab = job->lab;
    const struct ml_plan_guest *g = &lab->plan->guests[job->i];
    if (lab->warm[job->i])
        ml_warm_restore(lab->conn, lab->plan->topo->name, g->node->name, lab->xml[job->i],
                        &job->err);
    else if (virDomainCreate(lab->dom[job->i]) < 0)
        ml_virt_error(&job->err, "cannot start guest '%s'", g->domain);
    return NULL;
}

/* ---- what the guests' stages mean: pure ---- */

bool ml_boot_ready_file(char *text, const char *run_id, const char *node, GError **err)
{
    if (!g_str_has_prefix(text, "ok\n")) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "guest %s: cloud-init did not configure it: %s; its console and cloud-init "
                    "log are kept in the run directory",
                    node, g_strstrip(text));
        return false;
    }
    g_autofree char *want = g_strdup_printf("\nrun=%s\n", run_id);
    if (!strstr(text, want)) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "guest %s: cloud-init configured it for another run (%s); its seed was not "
                    "this run's",
                    node, g_strstrip(text));
        return false;
    }
    return true;
}

enum ml_boot_stage ml_boot_next(enum ml_boot_stage stage, bool seed_by_agent)
{
    switch (stage) {
    case ML_BOOT_AGENT:
        return seed_by_agent ? ML_BOOT_HOLD : ML_BOOT_CONFIG;
    case ML_BOOT_HOLD:
        return ML_BOOT_CONFIG;
    case ML_BOOT_CONFIG:
    case ML_BOOT_READY:
        break;
    }
    return ML_BOOT_READY;
}

enum ml_boot_verdict ml_boot_judge(const enum ml_boot_stage *stage, const char *const *names,
                                   size_t n, double elapsed_s, double timeout_s, GError **err)
{
    size_t ready = 0;
    for (size_t i = 0; i < n; i++)
        ready += stage[i] == ML_BOOT_READY;
    if (ready == n)
        return ML_BOOT_ALL_READY;
    if (!(elapsed_s > timeout_s))
        return ML_BOOT_WAITING;
    static const char *const why[] = {"agent silent", "cloud-init's hold not reached",
                                      "cloud-init unfinished", ""};
    GString *late = g_string_new(NULL);
    for (size_t i = 0; i < n; i++)
        if (stage[i] != ML_BOOT_READY)
            g_string_append_printf(late, "%s%s (%s)", late->len ? ", " : "", names[i],
                                   why[stage[i]]);
    g_autofree char *l = g_string_free(late, FALSE);
    g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                "guests not ready after %.0f s: %s; their consoles are kept in the run "
                "directory (raise MESHLAB_BOOT_TIMEOUT on a slow host)",
                timeout_s, l);
    return ML_BOOT_LATE;
}

/* ---- waiting for the guests ---- */

static bool wait_ready(struct ml_lab *lab, enum ml_boot_stage *stage, struct release_job *jobs,
                       double t0, GError **err);

static bool boot_guests(struct ml_lab *lab, GError **err)
{
    enum ml_boot_stage stage[ML_MAX_NODES];
    struct release_job jobs[ML_MAX_NODES] = {0};
    double t0 = ml_now();
    bool ok = wait_ready(lab, stage, jobs, t0, err);
    release_jobs_stop(jobs, lab->plan->n_guests);
    if (ok)
        ml_lab_phase(lab, "boot");
    return ok;
}

/* Starts every guest, or restores it, and says how they started. */
static bool start_guests(struct ml_lab *lab, enum ml_boot_stage *stage, GError **err)
{
    struct ml_plan *plan = lab->plan;
    size_t n_warm = 0;
    struct start_job starts[ML_MAX_NODES] = {0};
    GThread *threads[ML_MAX_NODES] = {0};
    /* All at once: a start or a restore waits for QEMU to come up (and a restore to read
     * its memory image), time each guest would otherwise wait for the one before it. */
    for (size_t i = 0; i < plan->n_guests; i++) {
        lab->boot_s[i] = lab->ready_s[i] = 0;
        stage[i] = ML_BOOT_AGENT;
        starts[i] = (struct start_job){lab, i, NULL};
        n_warm += lab->warm[i];
        threads[i] = g_thread_new("meshlab-start", start_guest, &starts[i]);
    }
    bool started = true;
    for (size_t i = 0; i < plan->n_guests; i++) {
        g_thread_join(threads[i]);
        if (starts[i].err && started) {
            g_propagate_error(err, g_steal_pointer(&starts[i].err));
            started = false;
        }
        g_clear_error(&starts[i].err);
    }
    if (!started)
        return false;
    if (n_warm == plan->n_guests)
        ml_progress("boot", "%zu guests started from their saved state under %s (warm start)",
                    n_warm, lab->accel.kvm ? "KVM" : "TCG");
    else if (n_warm)
        ml_progress("boot",
                    "%zu of %zu guests started from their saved state (warm start), the rest "
                    "booted and saved at cloud-init's hold, under %s",
                    n_warm, plan->n_guests, lab->accel.kvm ? "KVM" : "TCG");
    else
        ml_progress("boot", "%zu guests started under %s (cold start)%s", plan->n_guests,
                    lab->accel.kvm ? "KVM" : "TCG",
                    lab->warm_key[0] ? "; each is saved at cloud-init's hold for a warm start"
                                     : "");
    return true;
}

/* One look at guest i: its release thread, whether it still runs, its agent, cloud-init; its
 * stage goes on as far as what was seen allows. False with err when the guest failed. */
static bool watch_guest(struct ml_lab *lab, size_t i, enum ml_boot_stage *stage,
                        struct release_job *job, double t0, GError **err)
{
    const char *node = lab->plan->guests[i].node->name;
    if (*stage == ML_BOOT_HOLD) {
        /* Saved and restored meanwhile, a guest is briefly not running. */
        if (!g_atomic_int_get(&job->done))
            return true;
        g_thread_join(job->thread);
        job->thread = NULL;
        if (job->err) {
            g_propagate_error(err, g_steal_pointer(&job->err));
            return false;
        }
        ml_progress("boot", "guest %s: seed written, cloud-init released after %.1f s", node,
                    job->released_at - t0);
        *stage = ml_boot_next(*stage, lab->image.seed_by_agent);
    }
    if (virDomainIsActive(lab->dom[i]) != 1) {
        g_autofree char *tail = console_tail(lab, i, 5);
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "guest %s stopped while booting; the end of its console:\n%s", node, tail);
        return false;
    }
    if (*stage == ML_BOOT_AGENT) {
        if (!ml_agent_ping(lab->dom[i], 1))
            return true;
        lab->boot_s[i] = ml_now() - t0;
        ml_progress("boot", "guest %s: agent answered after %.1f s", node, lab->boot_s[i]);
        *stage = ml_boot_next(*stage, lab->image.seed_by_agent);
        if (*stage == ML_BOOT_HOLD) {
            *job = (struct release_job){.lab = lab, .i = i};
            job->thread = g_thread_new("meshlab-release", release_loop, job);
            return true;
        }
    }
    if (!guest_ready(lab, i, err))
        return !(err && *err);
    *stage = ml_boot_next(*stage, lab->image.seed_by_agent);
    lab->ready_s[i] = ml_now() - t0;
    virDomainInfo info;
    if (virDomainGetInfo(lab->dom[i], &info) == 0)
        lab->cpu_s[i] = info.cpuTime / 1e9;
    ml_progress("boot", "guest %s: ready (configured by cloud-init) after %.1f s, %.1f s of CPU",
                node, lab->ready_s[i], lab->cpu_s[i]);
    return true;
}

static bool wait_ready(struct ml_lab *lab, enum ml_boot_stage *stage, struct release_job *jobs,
                       double t0, GError **err)
{
    struct ml_plan *plan = lab->plan;
    if (!start_guests(lab, stage, err))
        return false;
    double timeout = 0;
    if (!ml_lab_boot_timeout(&timeout, err))
        return false;
    const char *names[ML_MAX_NODES];
    for (size_t i = 0; i < plan->n_guests; i++)
        names[i] = plan->guests[i].node->name;
    double last_note = ml_now();
    for (;;) {
        if (ml_check_interrupted(err))
            return false;
        for (size_t i = 0; i < plan->n_guests; i++)
            if (stage[i] != ML_BOOT_READY && !watch_guest(lab, i, &stage[i], &jobs[i], t0, err))
                return false;
        switch (ml_boot_judge(stage, names, plan->n_guests, ml_now() - t0, timeout, err)) {
        case ML_BOOT_ALL_READY:
            return true;
        case ML_BOOT_LATE:
            return false;
        case ML_BOOT_WAITING:
            break;
        }
        if (ml_now() - last_note > 15) {
            size_t ready = 0;
            for (size_t i = 0; i < plan->n_guests; i++)
                ready += stage[i] == ML_BOOT_READY;
            ml_progress("boot", "%zu of %zu guests ready", ready, plan->n_guests);
            last_note = ml_now();
        }
        g_usleep(250 * 1000);
    }
}

#define KVM_PROBE_TIMEOUT_S 20.0

bool ml_lab_probe_remote(struct ml_lab *lab, const char *kernel, GError **err)
{
    ml_host_accel_clear(&lab->accel);
    if (ml_host_accel_forced(&lab->accel))
        return true;
    if (!kernel) {
        lab->accel.reason = g_strdup("no guest kernel was at hand to prove that the host's KVM "
                                     "runs a guest; using TCG");
        return true;
    }
    /* Recorded first, so that down finds the pool, and the probe domain by its tag. */
    lab->created = true;
    if (!ml_lab_state_write(lab, err))
        return false;
    for (size_t k = 0; k < lab->n_hosts; k++) {
        struct ml_lab_host *h = &lab->hosts[k];
        const struct ml_plan_host *ph = &lab->plan->hosts[k];
        struct ml_host_accel acc = {0};
        if (!h->remote) {
            ml_host_probe_accel(kernel, &acc);
        } else {
            ml_progress("define", "storage pool %s in %s on the host", ph->pool, ph->pool_dir);
            if (!ml_virt_define_pool(h->conn, ph, err))
                return false;
            h->pool_defined = true;
            g_autofree char *host_kernel = NULL;
            bool up = false;
            if (!ml_vol_cache_file(h->conn, ML_VOL_IMAGES_POOL, kernel, NULL, "kernel", "",
                                   &host_kernel, &up, err) ||
                !ml_kvm_probe_remote(h->conn, lab->plan, k, host_kernel, KVM_PROBE_TIMEOUT_S, &acc,
                                     err)) {
                ml_host_accel_clear(&acc);
                return false;
            }
        }
        /* The lab runs under KVM only where every host has it: the first verdict stands, unless
         * a later host has no KVM; the reason says every host's. */
        char *why = lab->n_hosts > 1
                        ? g_strdup_printf("%s%shost %s: %s", k ? lab->accel.reason : "",
                                          k ? "; " : "", ph->host->name, acc.reason)
                        : NULL;
        if (k == 0 || (lab->accel.kvm && !acc.kvm)) {
            ml_host_accel_clear(&lab->accel);
            lab->accel = acc;
        } else {
            ml_host_accel_clear(&acc);
        }
        if (why) {
            g_free(lab->accel.reason);
            lab->accel.reason = why;
        }
    }
    return true;
}

bool ml_lab_create(struct ml_lab *lab, GError **err)
{
    if (!ml_image_resolve(lab->topo, !lab->accel.kvm, &lab->image, err))
        return false;
    lab->firewall_early = lab->firewall && lab->image.seed_by_agent;
    if (!lab->firewall_early)
        g_clear_pointer(&lab->firewall, g_free);
    ml_lab_phase(lab, "image");
    if (ml_check_interrupted(err))
        return false;
    /* Recorded first, so that even a crash mid-way leaves a record that down can use. */
    lab->created = true;
    if (!ml_lab_state_write(lab, err))
        return false;
    return create_objects(lab, err) && boot_guests(lab, err);
}

bool ml_lab_attach(struct ml_lab *lab, GError **err)
{
    struct json_object *state = ml_lab_state_read(lab->topo->name);
    struct json_object *v = NULL;
    if (!state || !json_object_object_get_ex(state, "run_id", &v)) {
        json_object_put(state);
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "lab %s is not up", lab->topo->name);
        return false;
    }
    /* The lab's objects carry the run id of the `up` that made them; this run
     * keeps its own id and run directory for what it measures. */
    lab->up_run_id = g_strdup(json_object_get_string(v));
    ml_plan_free(lab->plan);
    lab->plan = ml_plan_new(lab->topo, lab->up_run_id);
    for (size_t k = 0; k < lab->n_hosts; k++)
        on_host(lab, k);
    struct json_object *done = NULL;
    if (!json_object_object_get_ex(state, "complete", &done) || !json_object_get_boolean(done)) {
        json_object_put(state);
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "lab %s did not finish coming up (kept after a failure, or its meshlab was "
                    "killed); run 'meshlab down %s' and try again",
                    lab->topo->name, lab->topo->name);
        return false;
    }
    lab->complete = true;
    if (json_object_object_get_ex(state, "accelerator_kvm", &v))
        lab->accel.kvm = json_object_get_boolean(v);
    if (json_object_object_get_ex(state, "accelerator_reason", &v))
        lab->accel.reason = g_strdup(json_object_get_string(v));
    if (json_object_object_get_ex(state, "accelerator_source", &v))
        lab->accel.source = (enum ml_accel_source)json_object_get_int(v);
    if (json_object_object_get_ex(state, "accelerator_probed_at", &v))
        lab->accel.probed_at = g_strdup(json_object_get_string(v));
    struct json_object *img = NULL;
    if (json_object_object_get_ex(state, "image", &img)) {
        char **dst[] = {&lab->image.name, &lab->image.requested, &lab->image.fallback_reason,
                        &lab->image.sha256};
        const char *keys[] = {"name", "requested", "fallback_reason", "sha256"};
        for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
            if (json_object_object_get_ex(img, keys[i], &v))
                *dst[i] = g_strdup(json_object_get_string(v));
    }
    if (json_object_object_get_ex(state, "dataplanes", &v) &&
        json_object_is_type(v, json_type_object))
        lab->dataplanes = json_object_get(v);
    if (json_object_object_get_ex(state, "phases", &v))
        lab->up_phases = json_object_get(v);
    struct json_object *guests = NULL;
    if (json_object_object_get_ex(state, "guests", &guests))
        for (size_t i = 0; i < lab->plan->n_guests && i < json_object_array_length(guests); i++) {
            struct json_object *g = json_object_array_get_idx(guests, i), *b = NULL;
            if (json_object_object_get_ex(g, "boot_s", &b))
                lab->boot_s[i] = json_object_get_double(b);
            if (json_object_object_get_ex(g, "ready_s", &b))
                lab->ready_s[i] = json_object_get_double(b);
            if (json_object_object_get_ex(g, "cpu_s", &b))
                lab->cpu_s[i] = json_object_get_double(b);
            if (json_object_object_get_ex(g, "save_s", &b))
                lab->save_s[i] = json_object_get_double(b);
            if (json_object_object_get_ex(g, "start", &b))
                lab->warm[i] = !strcmp(json_object_get_string(b), "warm");
        }
    json_object_put(state);
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        lab->dom[i] =
            virDomainLookupByName(ml_lab_host_of(lab, i)->conn, lab->plan->guests[i].domain);
        if (!lab->dom[i] || virDomainIsActive(lab->dom[i]) != 1) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST,
                        "lab %s is recorded as up but guest %s is not running; run "
                        "'meshlab down %s' and try again",
                        lab->topo->name, lab->plan->guests[i].domain, lab->topo->name);
            return false;
        }
    }
    return true;
}

void ml_lab_collect_logs(struct ml_lab *lab)
{
    static const char cmd[] =
        "cloud-init status --long 2>&1; echo; echo '--- cloud-init.log'; "
        "tail -n 300 /var/log/cloud-init.log 2>&1; echo '--- cloud-init-output.log'; "
        "tail -n 200 /var/log/cloud-init-output.log 2>&1; echo '--- journal'; "
        "journalctl -b --no-pager -n 200 2>&1";
    if (!lab->plan || !lab->run_open)
        return;
    /* After a Ctrl-C the logs matter most; the reads run on every guest at once, all within
     * one timeout, and a second Ctrl-C skips what is left of them. */
    ml_agent_set_interruptible(false);
    long long pids[ML_MAX_NODES];
    bool started[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        const char *node = lab->plan->guests[i].node->name;
        gsize len = 0;
        g_autofree char *text = console_read(lab, i, CONSOLE_LOG_MAX, &len);
        if (text) {
            g_autofree char *f = g_strdup_printf("guests/%s-console.log", node);
            ml_lab_write(lab, f, text, (gssize)len, NULL);
        }
        if (ml_interrupt_count() < 2 && lab->dom[i] && virDomainIsActive(lab->dom[i]) == 1 &&
            ml_agent_ping(lab->dom[i], 2))
            started[i] = ml_agent_spawn(lab->dom[i], cmd, NULL, &pids[i], NULL);
    }
    bool skipped = false;
    double deadline = ml_now() + 30; /* for all of them together: they run at once */
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        if (!started[i])
            continue;
        const char *node = lab->plan->guests[i].node->name;
        if (ml_interrupt_count() >= 2) {
            if (!skipped)
                ml_progress("logs",
                            "interrupted again: cloud-init logs skipped from guest %s "
                            "on; tearing down",
                            node);
            skipped = true;
            continue;
        }
        struct ml_exec ex = {0};
        if (ml_agent_wait(lab->dom[i], pids[i], MAX(1.0, deadline - ml_now()), &ex, NULL)) {
            g_autofree char *f = g_strdup_printf("guests/%s-cloud-init.log", node);
            ml_lab_write(lab, f, ex.out ? ex.out : "", -1, NULL);
        }
        ml_exec_clear(&ex);
    }
    ml_agent_set_interruptible(true);
}

char *ml_lab_save_journals(struct ml_lab *lab, const char *tag, unsigned seconds)
{
    if (!lab->plan || !lab->run_open)
        return NULL;
    g_autofree char *cmd = g_strdup_printf(
        "journalctl --no-pager -o short-monotonic --since=-%us 2>&1 | tail -n 2000", seconds);
    const char *cmds[ML_MAX_NODES];
    char *out[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        cmds[i] = cmd;
    g_autoptr(GError) e = NULL;
    /* What was read before a guest that could not be is kept. */
    (void)ml_lab_run_parallel(lab, NULL, cmds, NULL, 60, out, "reading the journals", &e);
    size_t saved = 0;
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        if (!out[i])
            continue;
        g_autofree char *f =
            g_strdup_printf("guests/%s-%s-journal.log", lab->plan->guests[i].node->name, tag);
        saved += ml_lab_write(lab, f, out[i], -1, NULL);
        g_free(out[i]);
    }
    if (!saved)
        return NULL;
    g_autofree char *pattern = g_strdup_printf("guests/*-%s-journal.log", tag);
    return ml_lab_rel(lab, pattern);
}

static void print_removed(const char *what, void *opaque)
{
    (void)opaque;
    ml_progress("down", "removed %s", what);
}

bool ml_lab_host_teardown(const char *lab, const char *name, virConnectPtr conn, const char *uri,
                          bool several, bool foreign, ml_teardown_cb cb, void *opaque,
                          GError **err)
{
    bool ok = (foreign ? ml_virt_teardown_foreign(conn, lab, cb, opaque, err)
                       : ml_virt_teardown(conn, lab, cb, opaque, err)) >= 0;
    if (!several)
        return ok;
    g_autofree char *script = ml_underlay_unstitch_script(lab, foreign);
    g_autofree char *out = NULL;
    g_autoptr(GError) e = NULL;
    if (!ml_underlay_run(uri, name, script, UNDERLAY_TIMEOUT_S, &out, &e)) {
        if (ok)
            g_propagate_error(err, g_steal_pointer(&e));
        return false;
    }
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    for (size_t i = 0; lines[i]; i++)
        if (g_str_has_prefix(lines[i], "removed ")) {
            g_autofree char *what =
                g_strdup_printf("VXLAN device %s on host %s", lines[i] + strlen("removed "), name);
            cb(what, opaque);
        } else if (g_str_has_prefix(lines[i], "foreign ") && ok) {
            g_autofree char *dev = ml_escape_controls(lines[i] + strlen("foreign "));
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "VXLAN device %s on host %s is not this controller's (%s): it is left "
                        "alone; if that lab is abandoned, 'meshlab down --foreign %s' removes it",
                        dev, name, ml_controller_words(), lab);
            ok = false;
        }
    return ok;
}

bool ml_lab_destroy(struct ml_lab *lab, GError **err)
{
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_clear_pointer(&lab->dom[i], virDomainFree);
    bool ok = true;
    for (size_t k = 0; k < MAX(lab->n_hosts, 1); k++) {
        g_autofree char *shown = host_shown(lab, k);
        virConnectPtr conn = lab->hosts[k].conn ? lab->hosts[k].conn : lab->conn;
        if (!conn)
            continue;
        g_autoptr(GError) e = NULL;
        if (!ml_lab_host_teardown(lab->topo->name, shown, conn, lab->hosts[k].uri, lab->n_hosts > 1,
                                  false, print_removed, NULL, &e)) {
            if (ok)
                g_propagate_error(err, g_steal_pointer(&e));
            ok = false;
        }
    }
    if (!ok)
        return false;
    ml_lab_state_remove(lab->topo->name, print_removed, NULL);
    ml_lab_phase(lab, "teardown");
    return true;
}

void ml_lab_clear(struct ml_lab *lab)
{
    for (size_t i = 0; i < ML_MAX_NODES; i++) {
        g_clear_pointer(&lab->dom[i], virDomainFree);
        g_free(lab->warm_key[i]);
        g_free(lab->xml[i]);
        g_free(lab->user_data_first[i]);
    }
    g_free(lab->firewall);
    g_free(lab->uri);
    for (size_t k = 0; k < ML_HOSTS_MAX; k++) {
        struct ml_lab_host *h = &lab->hosts[k];
        g_free(h->uri);
        g_free(h->base);
        g_free(h->kernel);
        g_free(h->initrd);
        if (h->conn)
            virConnectClose(h->conn);
    }
    ml_plan_free(lab->plan);
    ml_image_clear(&lab->image);
    ml_host_accel_clear(&lab->accel);
    g_free(lab->run_dir);
    json_object_put(lab->phases);
    json_object_put(lab->up_phases);
    json_object_put(lab->dataplanes);
    if (lab->run_open)
        close(lab->run_fd);
    if (lab->locked)
        ml_lock_release(lab->topo ? lab->topo->name : "", lab->lock_fd);
    g_free(lab->up_run_id);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        if (lab->artifacts[i])
            g_ptr_array_unref(lab->artifacts[i]);
    if (lab->conn)
        virConnectClose(lab->conn);
    memset(lab, 0, sizeof(*lab));
}
