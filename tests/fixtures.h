/* What several tests build the same way: a results document from tests/data,
 * and a lab's domain in the form libvirt's test driver runs. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/spawn.h"
#include "results/json.h"
#include "topology/plan.h"
#include "virt/virt_xml.h"

/* tests/data/NAME parsed, or the test ends: nothing can be checked without it. */
static inline struct json_object *fixture_json(const char *name)
{
    g_autofree char *path = g_build_filename("tests", "data", name, NULL);
    struct json_object *o = json_object_from_file(path);
    if (!o) {
        fprintf(stderr, "cannot read %s: %s\n", path, json_util_get_last_err());
        exit(1);
    }
    return o;
}

/* The path of a results document named name; NULL when none. */
static inline struct json_object *fixture_path(struct json_object *results, const char *name)
{
    struct json_object *paths = json_object_object_get(results, "paths");
    for (size_t i = 0; i < json_object_array_length(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        if (!g_strcmp0(json_object_get_string(json_object_object_get(p, "name")), name))
            return p;
    }
    return NULL;
}

/* Guest i's domain as meshlab renders it, with type 'test': the test driver
 * only runs domains of its own type. */
static inline char *fixture_test_domain_xml(const struct ml_plan *plan, size_t i)
{
    struct ml_image img = {.base = "/nonexistent/base.qcow2",
                           .kernel = "/nonexistent/vmlinuz",
                           .initrd = "/nonexistent/initrd.img",
                           .cmdline = "console=ttyS0"};
    struct ml_domain_paths paths = {"/nonexistent/o.qcow2", "/nonexistent/s.iso",
                                    "/nonexistent/c.log", NULL};
    g_autofree char *xml = ml_xml_domain(plan, i, &img, false, &paths);
    GString *s = g_string_new(xml);
    g_string_replace(s, "<domain type='qemu'>", "<domain type='test'>", 1);
    return g_string_free(s, FALSE);
}

/* Whether `sh -n` reads text (a script an export writes) without a syntax error. */
static inline bool fixture_sh_syntax_ok(const char *text)
{
    g_autofree char *dir = g_dir_make_tmp("test-sh-n-XXXXXX", NULL);
    if (!dir)
        return false;
    g_autofree char *p = g_build_filename(dir, "s", NULL);
    bool ok = g_file_set_contents(p, text, -1, NULL);
    const char *argv[] = {"sh", "-n", p, NULL};
    ok = ok && ml_spawn(argv, NULL, NULL);
    g_unlink(p);
    g_rmdir(dir);
    return ok;
}

/* A run directory as export reads it: results.json and the hub's ruleset of each path (the
 * recorded tests/data/ruleset-hub.nft). The caller removes it. */
static inline char *fixture_export_run(struct json_object *results, const struct ml_topology *topo)
{
    char *dir = g_dir_make_tmp("test-export-run-XXXXXX", NULL);
    g_autofree char *rj = g_build_filename(dir, "results.json", NULL);
    json_object_to_file(rj, results);
    g_autofree char *ruleset = NULL;
    g_file_get_contents("tests/data/ruleset-hub.nft", &ruleset, NULL, NULL);
    struct json_object *paths = ml_j_array(results, "paths");
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        g_autofree char *d = g_build_filename(
            dir, "rulesets", ml_j_str(json_object_array_get_idx(paths, i), "name"), NULL);
        g_mkdir_with_parents(d, 0700);
        g_autofree char *f = g_strdup_printf("%s/%s.nft", d, topo->nodes[topo->hub].name);
        g_file_set_contents(f, ruleset, -1, NULL);
    }
    return dir;
}
