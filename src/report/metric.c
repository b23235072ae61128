#include "report/metric.h"

#include <string.h>

static void walk(struct json_object *o, char **parts, GPtrArray *out, bool *list)
{
    if (!*parts) {
        g_ptr_array_add(out, o);
        return;
    }
    /* "matrix.0.cell": a number picks one element of an array */
    if (json_object_is_type(o, json_type_array) && **parts &&
        strspn(*parts, "0123456789") == strlen(*parts)) {
        walk(json_object_array_get_idx(o, (size_t)g_ascii_strtoull(*parts, NULL, 10)), parts + 1,
             out, list);
        return;
    }
    if (json_object_is_type(o, json_type_array)) {
        *list = true;
        for (size_t i = 0; i < json_object_array_length(o); i++)
            walk(json_object_array_get_idx(o, i), parts, out, list);
        return;
    }
    if (strcmp(*parts, "*") == 0 && json_object_is_type(o, json_type_object)) {
        *list = true;
        json_object_object_foreach(o, name, each)
        {
            (void)name;
            walk(each, parts + 1, out, list);
        }
        return;
    }
    struct json_object *v = NULL;
    if (json_object_is_type(o, json_type_object))
        json_object_object_get_ex(o, *parts, &v);
    walk(v, parts + 1, out, list);
}

GPtrArray *ml_metric_values(struct json_object *o, const char *key, bool *ret_list)
{
    g_auto(GStrv) parts = g_strsplit(key, ".", -1);
    GPtrArray *out = g_ptr_array_new();
    bool list = false;
    walk(o, parts, out, &list);
    if (ret_list)
        *ret_list = list;
    return out;
}
