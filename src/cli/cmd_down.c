#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/controller.h"
#include "virt/lab.h"
#include "core/leftovers.h"
#include "core/lock.h"
#include "topology/name.h"
#include "topology/plan.h"
#include "topology/topology.h"
#include "core/util.h"
#include "results/json.h"
#include "virt/virt.h"
#include "virt/volume.h"
#include "virt/warm.h"

static const char down_usage[] =
    "Usage: meshlab down [--connect URI] [--purge-cache] [--foreign] NAME|FILE\n\n"
    "Removes every libvirt object that carries the lab's tag: its domains (by their\n"
    "meshlab metadata), its network, its storage pool and the volumes meshlab made in\n"
    "it (a file added there by hand is left, and down says so), and its state file.\n"
    "Nothing else is touched. Works without the topology file (give the\n"
    "lab's name), and is safe to run again: a lab that is gone is reported as such.\n"
    "It also removes what a meshlab that was killed (SIGKILL, a crash) left outside\n"
    "libvirt: the lab's pool directory, its stale lock, temporary files in $TMPDIR,\n"
    "half-built images and half-written files in the cache and state directories\n"
    "(only those whose process is gone). While another meshlab works on the lab, down\n"
    "is refused and says which process that is.\n\n"
    "Only what this controller made is removed: every domain, network, pool and VXLAN\n"
    "device a lab makes carries the controller (this machine and its state\n"
    "directory). A lab of the same name that another controller made on a shared host\n"
    "is refused, naming whose it is, and nothing is removed, unless --foreign.\n\n"
    "It works on the libvirt host the lab's up recorded in its state file, unless\n"
    "--connect URI (or MESHLAB_URI) names one; a URI other than the recorded one (the\n"
    "whole URI as libvirt reads it, its query too) is refused, and nothing is removed.\n"
    "This machine's pool directory is cleared only for a lab on this machine's libvirt\n"
    "(a URI without a host), on the connection its state file records.\n\n"
    "The lab's saved guests (the warm start: each guest saved at cloud-init's hold by\n"
    "its first up, restored by the next) stay in the cache for the next up, and so\n"
    "does another host's image pool.\n\n"
    "  --connect URI   the lab's libvirt host (default: the one its state records)\n"
    "  --foreign       also remove what another controller made under the lab's name\n"
    "                  (a lab that controller abandoned; down names whose it is)\n"
    "  --purge-cache   also drop the lab's saved guests: its next up boots cold (they\n"
    "                  are this machine's: a lab on another host keeps them); for a lab\n"
    "                  on another host, that host's image pool " ML_VOL_IMAGES_POOL " (the\n"
    "                  images its labs boot, uploaded once), unless a lab there uses it\n";

static gint sort_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void print_removed(const char *what, void *opaque)
{
    int *n = opaque;
    printf("removed %s\n", what);
    (*n)++;
}

static void print_leftover(const char *path, void *opaque)
{
    g_autofree char *what = g_strdup_printf("%s (left by a meshlab that was killed)", path);
    print_removed(what, opaque);
}

/* Removes the files meshlab makes in a pool directory (ml_name_is_pool_file), never
 * following a link; anything else, added by hand, is left, and err lists it. */
static bool clear_pool_dir(int dirfd, const char *shown, const char *lab, GError **err)
{
    int dup_fd = dup(dirfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot list '%s': %s", shown, g_strerror(errno));
        return false;
    }
    g_autoptr(GPtrArray) foreign = g_ptr_array_new_with_free_func(g_free);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (!ml_name_is_pool_file(e->d_name) || unlinkat(dirfd, e->d_name, 0) < 0)
            g_ptr_array_add(foreign, g_strdup(e->d_name));
    }
    closedir(d);
    if (foreign->len == 0)
        return true;
    g_ptr_array_sort(foreign, sort_names);
    g_ptr_array_add(foreign, NULL);
    g_autofree char *list = g_strjoinv("', '", (char **)foreign->pdata);
    g_set_error(err, ML_ERROR, ML_ERR_HOST,
                "the pool directory %s holds what meshlab did not make ('%s'): it is left alone, "
                "and so is the directory; move it away and run 'meshlab down %s' again",
                shown, list, lab);
    return false;
}

/* True when the connection here is where this machine's state file records lab (libvirt's own
 * spelling of the URI, compared whole: topology/uri.h), or when no state file records it; false,
 * with err, when it records the lab on another: down --connect to another host (another socket
 * of this machine's libvirt too) must not drop this machine's record of the lab there, nor clear
 * the pool directory of a lab still running there. */
static bool same_host(const char *lab, const char *here, GError **err)
{
    struct json_object *state = ml_lab_state_read(lab);
    g_autofree char *recorded = g_strdup(ml_j_str(state, "uri"));
    json_object_put(state);
    if (!recorded || !*recorded || ml_uri_same(recorded, here))
        return true;
    g_autofree char *path = ml_lab_state_path(lab, ".json");
    g_autofree char *shown_rec = ml_uri_public(recorded);
    g_autofree char *shown_here = ml_uri_public(here);
    bool same_shown = !g_strcmp0(shown_rec, shown_here);
    /* Only a given URI gets here: --connect, or MESHLAB_URI in the environment. */
    g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                "lab %s was brought up on %s (its state file %s says so), not on %s%s, which %s "
                "names: nothing was removed; run 'meshlab down %s' %s to remove it there, or, "
                "if that host is gone for good, remove the state file by hand",
                lab, shown_rec, path, shown_here,
                same_shown ? " with another query (another socket, key or user is another "
                             "connection)"
                           : "",
                ml_virt_uri_from_env() ? "MESHLAB_URI" : "--connect", lab,
                ml_virt_uri_from_env() ? "with MESHLAB_URI unset" : "without --connect");
    return false;
}

/* Refuses, before anything is removed, a lab whose objects on conn are another controller's
 * (core/controller.h), naming whose; with --foreign they go too. */
static bool own_lab(virConnectPtr conn, const char *lab, const char *host, GError **err)
{
    g_autoptr(GPtrArray) foreign = ml_virt_lab_foreign(conn, lab);
    if (foreign->len == 0)
        return true;
    g_ptr_array_add(foreign, NULL);
    g_autofree char *list = g_strjoinv("; ", (char **)foreign->pdata);
    g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                "lab %s on %s is not this controller's (%s): %s. Nothing was removed; if that "
                "lab is abandoned, 'meshlab down --foreign %s' removes it",
                lab, host, ml_controller_words(), list, lab);
    return false;
}

/* Clears and removes this machine's pool directory of key (LAB, or LAB.HOST) if it is there. */
static bool remove_local_pool_dir(const char *lab, const char *key, int *removed, GError **err)
{
    g_autofree char *pool_dir = ml_lab_pool_dir(key);
    int fd = pool_dir ? open(pool_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0)
        return true;
    bool cleared = clear_pool_dir(fd, pool_dir, lab, err);
    close(fd);
    if (!cleared || rmdir(pool_dir) < 0) {
        if (err && !*err)
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot remove '%s': %s", pool_dir,
                        g_strerror(errno));
        return false;
    }
    g_autofree char *what = g_strdup_printf("pool directory %s", pool_dir);
    print_removed(what, removed);
    return true;
}

/* The hosts of a lab over several, as its state file records them, else as its topology (file)
 * names them: names and URIs, whole. False when the lab is on one host. */
static bool lab_hosts(const char *lab, const struct ml_topology *topo, GPtrArray *names,
                      GPtrArray *uris)
{
    struct json_object *state = ml_lab_state_read(lab);
    struct json_object *hosts = NULL;
    if (json_object_object_get_ex(state, "hosts", &hosts) &&
        json_object_is_type(hosts, json_type_array)) {
        for (size_t k = 0; k < json_object_array_length(hosts); k++) {
            struct json_object *h = json_object_array_get_idx(hosts, k);
            const char *name = ml_j_str(h, "name"), *uri = ml_j_str(h, "uri");
            if (name && uri && ml_name_check("host name", name, false, NULL)) {
                g_ptr_array_add(names, g_strdup(name));
                g_ptr_array_add(uris, g_strdup(uri));
            }
        }
    } else if (!state && topo && topo->n_hosts > 1) {
        for (size_t k = 0; k < topo->n_hosts; k++) {
            g_ptr_array_add(names, g_strdup(topo->hosts[k].name));
            g_ptr_array_add(uris, g_strdup(topo->hosts[k].uri));
        }
    }
    json_object_put(state);
    return names->len > 0;
}

/* down of a lab over several hosts: on every host that answers, its objects and VXLAN devices;
 * a host that does not answer is named, the state file kept, and down again finishes the job. */
static int down_hosts(const char *lab, GPtrArray *names, GPtrArray *uris, bool purge,
                      bool foreign, int lock)
{
    int removed = 0;
    g_autoptr(GString) missed = g_string_new(NULL);
    g_autoptr(GError) first = NULL;
    for (guint k = 0; k < names->len; k++) {
        const char *name = g_ptr_array_index(names, k), *uri = g_ptr_array_index(uris, k);
        g_autofree char *shown = ml_uri_public(uri);
        g_autoptr(GError) e = NULL;
        virConnectPtr conn = ml_virt_connect(uri, &e);
        bool ok =
            conn && (foreign || own_lab(conn, lab, shown, &e)) &&
            ml_lab_host_teardown(lab, name, conn, uri, true, foreign, print_removed, &removed, &e);
        if (ok && purge && ml_virt_uri_remote(uri) != 0) {
            g_autoptr(GPtrArray) others = ml_virt_list_labs(conn);
            if (others->len == 0)
                ok = ml_vol_images_purge(conn, print_removed, &removed, &e) >= 0;
            else
                printf("host %s's image pool %s is kept: other labs there still use it\n", name,
                       ML_VOL_IMAGES_POOL);
        }
        if (conn)
            virConnectClose(conn);
        if (ok && ml_virt_uri_remote(uri) == 0) {
            g_autofree char *key = ml_plan_host_key(lab, name);
            ok = remove_local_pool_dir(lab, key, &removed, &e);
        }
        if (ok)
            continue;
        fprintf(stderr, "meshlab: host %s (%s): %s\n", name, shown,
                e ? e->message : "unknown error");
        g_string_append_printf(missed, "%s%s", missed->len ? ", " : "", name);
        if (!first && e)
            first = g_steal_pointer(&e);
    }
    if (missed->len) {
        ml_lock_release(lab, lock);
        g_autoptr(GError) err = NULL;
        g_set_error(&err, ML_ERROR, first ? first->code : ML_ERR_HOST,
                    "lab %s is not removed from host(s) %s (said above); what the other hosts "
                    "held is gone, and the lab's state file is kept: run 'meshlab down %s' again "
                    "once they answer",
                    lab, missed->str, lab);
        return cmd_fail(err);
    }
    ml_lab_state_remove(lab, print_removed, &removed);
    ml_leftovers_sweep(true, print_leftover, &removed);
    ml_lock_release(lab, lock);
    if (removed == 0)
        printf("lab %s: nothing to remove\n", lab);
    return ML_EXIT_OK;
}

int cmd_down_main(int argc, char **argv)
{
    static const struct option options[] = {{"purge-cache", no_argument, NULL, 'p'},
                                            {"foreign", no_argument, NULL, 'f'},
                                            {"help", no_argument, NULL, 'h'},
                                            {0}};
    bool purge = false, foreign = false;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (opt == 'p' || opt == 'f') {
            *(opt == 'p' ? &purge : &foreign) = true;
            continue;
        }
        fputs(down_usage, opt == 'h' ? stdout : stderr);
        return opt == 'h' ? ML_EXIT_OK : ML_EXIT_USAGE;
    }
    if (argc - optind != 1) {
        fputs(down_usage, stderr);
        return ML_EXIT_USAGE;
    }
    const char *arg = argv[optind];
    g_autoptr(GError) err = NULL;
    g_autofree char *lab = NULL;
    g_autoptr(MlTopology) topo = NULL;
    if (g_file_test(arg, G_FILE_TEST_IS_REGULAR)) {
        topo = ml_topology_load(arg, &err);
        if (!topo)
            return cmd_fail(err);
        lab = g_strdup(topo->name);
    } else if (!ml_name_check("lab name", arg, false, &err)) {
        /* Before the lock and before any path is built: "", "." and ".." would name the
         * directories that hold every lab's pools and saves. */
        g_autofree char *shown = ml_name_shown(arg);
        fprintf(stderr,
                "meshlab: '%s' is not a file, and %s; give the lab's name ('meshlab status' "
                "lists them) or its topology file\n",
                shown, err->message);
        return ML_EXIT_USAGE;
    } else {
        lab = g_strdup(arg);
    }
    int lock = ml_lock_lab(lab, "down", &err);
    if (lock < 0)
        return cmd_fail(err);
    g_autoptr(GPtrArray) host_names = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) host_uris = g_ptr_array_new_with_free_func(g_free);
    if (lab_hosts(lab, topo, host_names, host_uris)) {
        if (ml_virt_uri_given()) {
            ml_lock_release(lab, lock);
            g_set_error(&err, ML_ERROR, ML_ERR_INPUT,
                        "lab %s is spread over hosts (its state says which); down removes it "
                        "from each of them: drop %s",
                        lab, ml_virt_uri_from_env() ? "MESHLAB_URI" : "--connect");
            return cmd_fail(err);
        }
        return down_hosts(lab, host_names, host_uris, purge, foreign, lock);
    }
    g_autofree char *uri = ml_lab_uri(lab, NULL);
    /* A topology of one host (hosts: with one) names it, where no state file does. */
    if (topo && topo->n_hosts == 1 && !ml_virt_uri_given() && !ml_lab_state_exists(lab)) {
        g_free(uri);
        uri = g_strdup(topo->hosts[0].uri);
    }
    virConnectPtr conn = ml_virt_connect(uri, &err);
    if (!conn) {
        ml_lock_release(lab, lock);
        return cmd_fail(err);
    }
    g_autofree char *here = ml_virt_conn_uri(conn, uri);
    g_autofree char *shown_here = ml_uri_public(here);
    if (!same_host(lab, here, &err) ||
        (!foreign && !own_lab(conn, lab, shown_here, &err))) {
        virConnectClose(conn);
        ml_lock_release(lab, lock);
        return cmd_fail(err);
    }
    /* This machine's pool directory and saved guests are the lab's only when the lab is on
     * this machine's libvirt: elsewhere, those of that name are another lab's. */
    bool local = ml_virt_uri_remote(here) == 0;
    int removed = 0;
    int n = foreign ? ml_virt_teardown_foreign(conn, lab, print_removed, &removed, &err)
                    : ml_virt_teardown(conn, lab, print_removed, &removed, &err);
    /* Another host's image cache goes with --purge-cache, unless a lab there still boots from
     * it. */
    if (n >= 0 && purge && !local) {
        g_autoptr(GPtrArray) others = ml_virt_list_labs(conn);
        if (others->len) {
            g_autoptr(GString) names = g_string_new(NULL);
            for (guint i = 0; i < others->len; i++)
                g_string_append_printf(names, "%s%s", i ? ", " : "",
                                       (const char *)g_ptr_array_index(others, i));
            printf("the host's image pool %s is kept: lab(s) %s there still use it\n",
                   ML_VOL_IMAGES_POOL, names->str);
        } else if (ml_vol_images_purge(conn, print_removed, &removed, &err) < 0) {
            n = -1;
        }
    }
    virConnectClose(conn);
    if (n >= 0) {
        /* A meshlab killed before libvirt knew the pool leaves its directory; the record goes
         * after it, so that a directory that cannot be cleared keeps the lab findable. */
        if (local && !remove_local_pool_dir(lab, lab, &removed, &err)) {
            ml_lock_release(lab, lock);
            return cmd_fail(err);
        }
        ml_lab_state_remove(lab, print_removed, &removed);
        ml_leftovers_sweep(true, print_leftover, &removed);
        if (purge && !local)
            printf("lab %s is on another host: this machine's saved guests of that name are "
                   "not its, and are kept ('meshlab down --purge-cache %s' without --connect "
                   "drops them)\n",
                   lab, lab);
        else if (purge && !ml_warm_purge(lab, print_removed, &removed, &err)) {
            ml_lock_release(lab, lock);
            return cmd_fail(err);
        }
    }
    ml_lock_release(lab, lock);
    if (n < 0)
        return cmd_fail(err);
    if (removed == 0)
        printf("lab %s: nothing to remove\n", lab);
    return ML_EXIT_OK;
}
