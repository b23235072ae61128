/* The one reader of JSON documents (results.json, the lab's state, what a verb built to print):
 * absent or mistyped values read as absent, so a caller tests one pointer or one bool. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* The value at key of the object o, or NULL (o NULL or no object, key absent, JSON null). */
struct json_object *ml_j_get(struct json_object *o, const char *key);
/* Whether o is an object with a member key, even a JSON null (where ml_j_get reads NULL). */
bool ml_j_has(struct json_object *o, const char *key);
struct json_object *ml_j_obj(struct json_object *o, const char *key);
struct json_object *ml_j_array(struct json_object *o, const char *key);
const char *ml_j_str(struct json_object *o, const char *key);
/* The string at key, or fallback when it is absent or empty. */
const char *ml_j_str_or(struct json_object *o, const char *key, const char *fallback);
bool ml_j_num(struct json_object *o, const char *key, double *ret);
bool ml_j_value_num(struct json_object *v, double *ret);
bool ml_j_bool(struct json_object *o, const char *key);
/* The integer at key as json-c converts it (a double truncated); 0 when absent. */
int64_t ml_j_int(struct json_object *o, const char *key);
size_t ml_j_len(struct json_object *array);
/* The element of o's `paths` array whose `name` is name, or NULL: a path of a results document,
 * or of one step of its wan_sweep. */
struct json_object *ml_j_path_named(struct json_object *o, const char *name);

/* The values at a dotted key: one for a plain key ("transfer.payload_bytes"), one per element
 * where the key runs through an array ("passes.bits_per_second"), one per member where a part
 * is "*" ("cpu.*.user_s": each guest's), and *ret_list is then true; a number picks one element
 * ("matrix.0.cell"). A missing value is a NULL entry. The values are borrowed from o. */
GPtrArray *ml_j_values(struct json_object *o, const char *key, bool *ret_list);
/* The finite number that is the one value at a dotted key. */
bool ml_j_num_at(struct json_object *o, const char *key, double *ret);
