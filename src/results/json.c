#include "results/json.h"

#include <math.h>
#include <string.h>

struct json_object *ml_j_get(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;
    if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
        return NULL;
    return v; /* NULL for a JSON null too */
}

bool ml_j_has(struct json_object *o, const char *key)
{
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, NULL);
}

struct json_object *ml_j_obj(struct json_object *o, const char *key)
{
    struct json_object *v = ml_j_get(o, key);
    return json_object_is_type(v, json_type_object) ? v : NULL;
}

struct json_object *ml_j_array(struct json_object *o, const char *key)
{
    struct json_object *v = ml_j_get(o, key);
    return json_object_is_type(v, json_type_array) ? v : NULL;
}

const char *ml_j_str(struct json_object *o, const char *key)
{
    struct json_object *v = ml_j_get(o, key);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

const char *ml_j_str_or(struct json_object *o, const char *key, const char *fallback)
{
    const char *s = ml_j_str(o, key);
    return s && *s ? s : fallback;
}

bool ml_j_value_num(struct json_object *v, double *ret)
{
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
        return false;
    double x = json_object_get_double(v);
    if (!isfinite(x))
        return false;
    *ret = x;
    return true;
}

bool ml_j_num(struct json_object *o, const char *key, double *ret)
{
    return ml_j_value_num(ml_j_get(o, key), ret);
}

bool ml_j_bool(struct json_object *o, const char *key)
{
    struct json_object *v = ml_j_get(o, key);
    return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

int64_t ml_j_int(struct json_object *o, const char *key)
{
    return json_object_get_int64(ml_j_get(o, key));
}

size_t ml_j_len(struct json_object *array)
{
    return json_object_is_type(array, json_type_array) ? json_object_array_length(array) : 0;
}

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

GPtrArray *ml_j_values(struct json_object *o, const char *key, bool *ret_list)
{
    g_auto(GStrv) parts = g_strsplit(key, ".", -1);
    GPtrArray *out = g_ptr_array_new();
    bool list = false;
    walk(o, parts, out, &list);
    if (ret_list)
        *ret_list = list;
    return out;
}

bool ml_j_num_at(struct json_object *o, const char *key, double *ret)
{
    g_autoptr(GPtrArray) v = ml_j_values(o, key, NULL);
    return v->len == 1 && ml_j_value_num(g_ptr_array_index(v, 0), ret);
}

struct json_object *ml_j_path_named(struct json_object *o, const char *name)
{
    struct json_object *paths = ml_j_array(o, "paths");
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        if (g_strcmp0(ml_j_str(p, "name"), name) == 0)
            return p;
    }
    return NULL;
}
