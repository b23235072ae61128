/* What several tests build the same way: a results document from tests/data,
 * and a lab's domain in the form libvirt's test driver runs. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

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
