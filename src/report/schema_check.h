/* A results.json checked against its contract, docs/results.schema.json, before anything is
 * rendered from it: a document that someone else produced reaches the renderers only in the
 * shape meshlab writes, its names matching the registry's and the topology's rules. The schema
 * is compiled into meshlab (CMake turns the file into a byte array), so an installed meshlab
 * needs no source tree. The validator knows the JSON Schema (2020-12) keywords that schema
 * uses, and refuses a schema with any other. A pattern is searched as ECMA-262 does it: '$'
 * matches at the very end of the text only, never before a last newline. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

/* docs/results.schema.json as built in, parsed once; owned here. */
struct json_object *ml_results_schema(void);

/* Validates doc against schema. True when valid; else false, *ret_pointer (g_free) the JSON
 * pointer of the first value that fails ("" for the document itself) and *ret_rule (g_free)
 * the rule it broke, as a sentence part that quotes the schema and a key, never a value of
 * doc: "the text does not match the pattern '^[a-z]+$'". Either out parameter may be NULL. */
bool ml_schema_validate(struct json_object *schema, struct json_object *doc, char **ret_pointer,
                        char **ret_rule);

/* NULL when ml_schema_validate can use schema: every keyword known, every $ref resolved,
 * every pattern compiled; else (g_free) what is wrong, and where in the schema. */
char *ml_schema_problem(struct json_object *schema);

/* results, read from file, as 'meshlab report' and 'meshlab compare' accept it: a
 * meshlab-results/3 document that the built-in schema accepts, every string UTF-8 without a
 * NUL. Else false and err (ML_ERR_INPUT) naming file, the field's JSON pointer and the rule;
 * of what the file holds, only keys and another meshlab's schema name ("meshlab-results/1"). */
bool ml_results_check(struct json_object *results, const char *file, GError **err);
