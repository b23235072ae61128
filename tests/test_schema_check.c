/* The results schema built into meshlab, and the validator that reads it: the built-in copy is
 * docs/results.schema.json, every keyword of it is one the validator knows, every fixture is
 * accepted, and each rule refuses at the right JSON pointer (tests/cli_schema_agree.sh checks
 * the same documents against the python checker). */
#include <json-c/json.h>

#include "check.h"
#include "fixtures.h"
#include "core/util.h"
#include "dataplanes/dataplane.h"
#include "report/schema_check.h"

extern const unsigned char ml_results_schema_json[];
extern const size_t ml_results_schema_json_len;

static void test_built_in(void)
{
    g_autofree char *file = NULL;
    gsize len = 0;
    CHECK(g_file_get_contents("docs/results.schema.json", &file, &len, NULL));
    CHECK(file && len == ml_results_schema_json_len &&
          memcmp(file, ml_results_schema_json, len) == 0);
    struct json_object *s = ml_results_schema();
    CHECK(s != NULL);
    g_autofree char *problem = ml_schema_problem(s);
    CHECK(problem == NULL);
    if (problem)
        fprintf(stderr, "%s\n", problem);
}

static void test_fixtures(void)
{
    static const char *const files[] = {
        "tests/data/results-v2-busy.json",   "tests/data/results-v2-faster.json",
        "tests/data/results-v2-matrix.json", "tests/data/results-v2-nat.json",
        "tests/data/results-v2-rerun.json",  "tests/data/results-v2-schema-example.json",
        "tests/data/results-hosts.json",     "docs/examples/results.json",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        struct json_object *r = json_object_from_file(files[i]);
        g_autoptr(GError) err = NULL;
        CHECK(r && ml_results_check(r, files[i], &err));
        if (err)
            fprintf(stderr, "%s\n", err->message);
        json_object_put(r);
    }
    /* the v1 document is another schema, said as such */
    struct json_object *old = fixture_json("results-all-measured.json");
    g_autoptr(GError) err = NULL;
    CHECK(!ml_results_check(old, "old.json", &err));
    CHECK(err && err->code == ML_ERR_INPUT &&
          strstr(err->message, "old.json is not a 'meshlab-results/3' results document: at "
                               "/schema: its schema is \"meshlab-results/1\""));
    json_object_put(old);
}

/* Validates text against a schema given as text: "" when valid, else "POINTER: RULE". */
static char *verdict(const char *schema, const char *text)
{
    struct json_object *s = json_tokener_parse(schema), *v = json_tokener_parse(text);
    if (!s || (!v && strcmp(text, "null") != 0))
        return g_strdup("(test's JSON does not parse)");
    char *problem = ml_schema_problem(s);
    if (problem) {
        json_object_put(s);
        json_object_put(v);
        return problem;
    }
    g_autofree char *at = NULL, *rule = NULL;
    bool ok = ml_schema_validate(s, v, &at, &rule);
    json_object_put(s);
    json_object_put(v);
    return ok ? g_strdup("") : g_strdup_printf("%s: %s", at, rule);
}

#define VALID(schema, text)                                                                        \
    do {                                                                                           \
        g_autofree char *got_ = verdict(schema, text);                                             \
        CHECK_STR(got_, "");                                                                       \
    } while (0)
#define INVALID(schema, text, want)                                                                \
    do {                                                                                           \
        g_autofree char *got_ = verdict(schema, text);                                             \
        CHECK_STR(got_, want);                                                                     \
    } while (0)

static void test_keywords(void)
{
    /* type: 1.0 is an integer (as in the python checker), true is not a number */
    VALID("{\"type\": \"integer\"}", "1.0");
    INVALID("{\"type\": \"integer\"}", "1.5", ": the value is a number, not of type integer");
    INVALID("{\"type\": [\"number\", \"null\"]}", "true",
            ": the value is a boolean, not of type number or null");
    VALID("{\"type\": [\"number\", \"null\"]}", "null");
    INVALID("{\"type\": \"string\"}", "{\"a\": 1}", ": the value is an object, not of type string");

    /* const and enum compare JSON values: 2 is 2.0, "2" is not */
    VALID("{\"const\": 2}", "2.0");
    INVALID("{\"const\": 2}", "\"2\"", ": the value is not 2");
    INVALID("{\"enum\": [\"a\", null]}", "\"b\"", ": the value is not one of [\"a\",null]");
    VALID("{\"enum\": [\"a\", null]}", "null");

    /* objects: required and refused keys at the object, members at their own pointer, the
     * document's order */
    const char *obj = "{\"type\": \"object\", \"required\": [\"a\"], \"additionalProperties\": "
                      "false, \"properties\": {\"a\": {\"type\": \"string\"}, \"b/c~\": "
                      "{\"minimum\": 0}}}";
    INVALID(obj, "{}", ": the key \"a\" is missing, and it is required");
    INVALID(obj, "{\"a\": \"x\", \"z\": 1}", ": the key \"z\" is not allowed here");
    INVALID(obj, "{\"a\": \"x\", \"b/c~\": -1}", "/b~1c~0: the number is below the minimum 0");
    INVALID(obj, "{\"a\": 3}", "/a: the value is an integer, not of type string");
    INVALID("{\"propertyNames\": {\"pattern\": \"^[a-z]+$\"}}", "{\"ok\": 1, \"Bad\": 2}",
            ": the key \"Bad\" is refused: the text does not match the pattern '^[a-z]+$'");
    INVALID("{\"additionalProperties\": {\"type\": \"integer\"}}", "{\"x\": \"y\"}",
            "/x: the value is a string, not of type integer");

    /* arrays */
    INVALID("{\"items\": {\"maximum\": 3}, \"maxItems\": 3}", "[1, 2, 4]",
            "/2: the number is above the maximum 3");
    INVALID("{\"items\": {\"maximum\": 3}, \"maxItems\": 2}", "[1, 2, 3]",
            ": the array has 3 items, more than 2");

    /* strings: a pattern is searched, not anchored; a NUL is never text */
    VALID("{\"pattern\": \"b\"}", "\"abc\"");
    INVALID("{\"pattern\": \"^b\"}", "\"a\\u001b[2J\"",
            ": the text does not match the pattern '^b'");
    INVALID("{\"minLength\": 1}", "\"\"", ": the text is shorter than 1 characters");
    INVALID("{\"type\": \"string\"}", "\"a\\u0000b\"",
            ": the text is not UTF-8 or holds a NUL character");

    /* $ref, anyOf (the alternative that got deepest speaks), allOf, not, if/then/else */
    const char *defs = "{\"$defs\": {\"n\": {\"type\": \"object\", \"properties\": {\"x\": "
                       "{\"type\": \"integer\"}}}}, \"anyOf\": [{\"$ref\": \"#/$defs/n\"}, "
                       "{\"type\": \"null\"}]}";
    VALID(defs, "null");
    VALID(defs, "{\"x\": 1}");
    INVALID(defs, "{\"x\": \"1\"}", "/x: the value is a string, not of type integer");
    INVALID("{\"allOf\": [{\"minimum\": 1}, {\"maximum\": 2}]}", "3",
            ": the number is above the maximum 2");
    INVALID("{\"not\": {\"pattern\": \"_kb$\"}}", "\"rss_kb\"",
            ": the value matches {\"pattern\":\"_kb$\"}, which it must not");
    const char *cond = "{\"if\": {\"properties\": {\"s\": {\"const\": \"ok\"}}}, \"then\": "
                       "{\"required\": [\"v\"]}, \"else\": {\"properties\": {\"v\": {\"type\": "
                       "\"null\"}}}}";
    VALID(cond, "{\"s\": \"ok\", \"v\": 1}");
    INVALID(cond, "{\"s\": \"ok\"}", ": the key \"v\" is missing, and it is required");
    INVALID(cond, "{\"s\": \"no\", \"v\": 1}", "/v: the value is an integer, not of type null");
    INVALID("{\"oneOf\": [{\"minimum\": 0}, {\"maximum\": 10}]}", "5",
            ": an integer matches 2 of oneOf's schemas, not exactly one");

    /* a schema the validator cannot read is refused, never half-applied */
    INVALID("{\"properties\": {\"a\": {\"multipleOf\": 2}}}", "1",
            "/properties/a/multipleOf: meshlab's validator does not know the keyword "
            "'multipleOf'; teach it to src/report/schema_check.c, or say it with the keywords "
            "it knows");
    INVALID("{\"$ref\": \"#/$defs/none\"}", "1",
            "/$ref #/$defs/none does not point into this schema ('#/...')");
    g_autofree char *uncompiled = verdict("{\"pattern\": \"(\"}", "1");
    CHECK(g_str_has_prefix(uncompiled, "/pattern does not compile: "));
}

/* The name patterns: the registry's path names and the topology's names (check_name: a
 * lowercase letter first, lowercase letters, digits and '-', no '-' last, at most 31). */
static void test_name_patterns(void)
{
    struct json_object *s = ml_results_schema();
    struct json_object *defs = json_object_object_get(s, "$defs");
    struct json_object *path = json_object_object_get(
        json_object_object_get(json_object_object_get(defs, "path"), "properties"), "name");
    struct json_object *guest = json_object_object_get(
        json_object_object_get(
            json_object_object_get(
                json_object_object_get(json_object_object_get(s, "properties"), "guests"), "items"),
            "properties"),
        "name");
    CHECK(json_object_object_get(path, "pattern") && json_object_object_get(guest, "pattern"));
    const struct ml_path_ops *ops;
    ML_FOR_EACH_PATH(k, ops)
    {
        struct json_object *name = json_object_new_string(ops->name);
        CHECK(ml_schema_validate(path, name, NULL, NULL));
        json_object_put(name);
    }
    static const char *const good[] = {"hub", "a", "client-a", "a1-b2",
                                       "abcdefghijklmnopqrstuvwxyz01234"};
    static const char *const bad[] = {
        "",    "A",   "-a",  "a-",    "1a",
        "a_b", "a.b", "a b", "a`id`", "abcdefghijklmnopqrstuvwxyz012345"};
    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        struct json_object *name = json_object_new_string(good[i]);
        CHECK(ml_schema_validate(guest, name, NULL, NULL));
        json_object_put(name);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        struct json_object *name = json_object_new_string(bad[i]);
        CHECK(!ml_schema_validate(guest, name, NULL, NULL));
        CHECK(!ml_schema_validate(path, name, NULL, NULL));
        json_object_put(name);
    }
}

/* What report and compare say: the file, the pointer, the rule, what to do; never the value. */
static void test_message(void)
{
    struct json_object *r = fixture_json("results-v2-nat.json");
    struct json_object *p0 = json_object_array_get_idx(json_object_object_get(r, "paths"), 0);
    json_object_object_add(p0, "name", json_object_new_string("plain`id > PWNED`"));
    g_autoptr(GError) err = NULL;
    CHECK(!ml_results_check(r, "run/results.json", &err));
    CHECK(err && err->code == ML_ERR_INPUT);
    CHECK(err && g_str_has_prefix(err->message,
                                  "run/results.json: at /paths/0/name: the text does not match "
                                  "the pattern '^[a-z]([a-z0-9-]{0,29}[a-z0-9])?$'. The file "
                                  "breaks the results contract"));
    CHECK(err && !strstr(err->message, "PWNED"));
    json_object_put(r);
}

/* JSON Schema's patterns are ECMA-262's: '$' (no m flag) is the very end of the text, so a
 * name with a newline after it is not a name (PCRE's '$' also matches before a last newline). */
static void test_dollar_is_the_end(void)
{
    const char *name = "{\"pattern\": \"^[a-z]([a-z0-9-]{0,29}[a-z0-9])?$\"}";
    VALID(name, "\"three-guest\"");
    INVALID(name, "\"three-guest\\n\"",
            ": the text does not match the pattern '^[a-z]([a-z0-9-]{0,29}[a-z0-9])?$'");
    INVALID(name, "\"three-guest\\r\"",
            ": the text does not match the pattern '^[a-z]([a-z0-9-]{0,29}[a-z0-9])?$'");
    INVALID(name, "\"three\\nguest\"",
            ": the text does not match the pattern '^[a-z]([a-z0-9-]{0,29}[a-z0-9])?$'");
    /* a key, and a pattern under "not": "rss_kb\n" does not end in _kb */
    INVALID("{\"propertyNames\": {\"pattern\": \"^[a-z]+$\"}}", "{\"ok\\n\": 1}",
            ": the key \"ok\\n\" is refused: the text does not match the pattern '^[a-z]+$'");
    INVALID("{\"patternProperties\": {\"^[a-z]+$\": {\"type\": \"integer\"}}}", "{\"ok\": \"1\"}",
            "/ok: the value is a string, not of type integer");
    VALID("{\"patternProperties\": {\"^[a-z]+$\": {\"type\": \"integer\"}}}", "{\"ok\\n\": \"1\"}");
    VALID("{\"not\": {\"pattern\": \"_kb$\"}}", "\"rss_kb\\n\"");
    /* searched, not anchored, where the pattern says so */
    VALID("{\"pattern\": \"^[^/]\"}", "\"captures/a.pcap\\n\"");
}

/* report and compare refuse a results.json whose name, run id, path or node holds a newline
 * at its end, at that field, and quote no value of it. */
static void test_newline_names(void)
{
    static const struct {
        const char *pointer, *value; /* the value is valid without its newline */
    } fields[] = {
        {"/lab", "three-guest\n"},           {"/run_id", "20991231-235959-abcdef\n"},
        {"/paths/0/name", "plain\n"},        {"/guests/0/name", "zhub\n"},
        {"/nat_matrix/0/a_node", "zclient\n"}, {"/profile/name", "zquick\n"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
        struct json_object *r = fixture_json("results-v2-nat.json");
        g_auto(GStrv) parts = g_strsplit(fields[i].pointer + 1, "/", -1);
        struct json_object *node = r;
        guint n = g_strv_length(parts);
        for (guint k = 0; k + 1 < n; k++)
            node = json_object_is_type(node, json_type_array)
                       ? json_object_array_get_idx(node, (size_t)atoi(parts[k]))
                       : json_object_object_get(node, parts[k]);
        g_autofree char *bare = g_strndup(fields[i].value, strlen(fields[i].value) - 1);
        json_object_object_add(node, parts[n - 1], json_object_new_string(fields[i].value));
        g_autoptr(GError) err = NULL;
        CHECK(!ml_results_check(r, "run/results.json", &err));
        g_autofree char *at = g_strdup_printf("run/results.json: at %s: the text does not match "
                                              "the pattern '^",
                                              fields[i].pointer);
        CHECK(err && err->code == ML_ERR_INPUT && g_str_has_prefix(err->message, at));
        CHECK(err && !strstr(err->message, bare));
        if (err && (!g_str_has_prefix(err->message, at) || strstr(err->message, bare)))
            fprintf(stderr, "%s: %s\n", fields[i].pointer, err->message);
        /* the same value without its newline is valid: the newline is what is refused */
        json_object_object_add(node, parts[n - 1], json_object_new_string(bare));
        g_clear_error(&err);
        CHECK(ml_results_check(r, "run/results.json", &err));
        json_object_put(r);
    }
}

/* A value that breaks a rule other than a pattern is not quoted either: a secret in a field
 * where a number or a word belongs stays out of the message; another meshlab's schema is named. */
static void test_values_unquoted(void)
{
    static const char secret[] = "root:$y$j9T$SECRETHASH:19000:0:99999:7:::";
    struct json_object *r = fixture_json("results-v2-nat.json");
    struct json_object *p0 = json_object_array_get_idx(json_object_object_get(r, "paths"), 0);
    json_object_object_add(p0, "status", json_object_new_string(secret));
    g_autoptr(GError) err = NULL;
    CHECK(!ml_results_check(r, "run/results.json", &err));
    CHECK(err && strstr(err->message, "at /paths/0/status: the value is not one of ["));
    CHECK(err && !strstr(err->message, "SECRET"));
    g_clear_error(&err);
    json_object_object_add(r, "run_id", json_object_new_int(7));
    json_object_object_add(p0, "status", json_object_new_string("measured"));
    json_object_object_add(r, "schema", json_object_new_string(secret));
    CHECK(!ml_results_check(r, "run/results.json", &err));
    CHECK(err && strstr(err->message, "at /schema: its schema is none of meshlab's;"));
    CHECK(err && !strstr(err->message, "SECRET"));
    g_clear_error(&err);
    json_object_object_add(r, "schema", json_object_new_string("meshlab-results/3"));
    CHECK(!ml_results_check(r, "run/results.json", &err));
    CHECK(err && strstr(err->message, "at /run_id: the value is an integer, not of type string"));
    json_object_put(r);
}

/* Every daemon of the dataplane registry may be recorded in environment.hosts.*.daemons (a CI
 * run on guests had charon-systemd, openvpn and tincd refused as unexpected properties). */
static void test_registry_daemons(void)
{
    struct json_object *s = ml_results_schema();
    struct json_object *props = json_object_object_get(
        json_object_object_get(
            json_object_object_get(
                json_object_object_get(json_object_object_get(s, "$defs"), "host_metadata"),
                "properties"),
            "daemons"),
        "properties");
    CHECK(props != NULL);
    struct json_object *host = json_object_new_object();
    for (size_t i = 0; ml_daemon_at(i); i++) {
        const char *name = ml_daemon_at(i)->name;
        CHECK(json_object_object_get_ex(props, name, NULL));
        json_object_object_add(host, name, json_object_new_string("1.0"));
    }
    struct json_object *daemons = json_object_object_get(
        json_object_object_get(
            json_object_object_get(json_object_object_get(s, "$defs"), "host_metadata"),
            "properties"),
        "daemons");
    CHECK(ml_daemon_count() >= 7 && ml_schema_validate(daemons, host, NULL, NULL));
    json_object_put(host);
}

/* A pass's series seconds carry the server's and the other guests' taps (issue 18): the new
 * columns validate, a series without them (written before) still does, a wrong type does not. */
static void test_series_sides(void)
{
    struct json_object *s = ml_results_schema();
    struct json_object *sec =
        json_object_object_get(json_object_object_get(s, "$defs"), "series_second");
    CHECK(sec != NULL);
    static const char *const base = "{\"t_s\": 1, \"payload_bytes\": 10, \"iperf_bytes\": 10, "
                                    "\"client_bytes\": 11, \"hub_bytes\": 3, \"hub_packets\": 1, "
                                    "\"hub_bytes_per_payload_byte\": 0.3, \"ok\": true";
    static const struct {
        const char *more;
        bool valid;
    } cases[] = {
        {"}", true},
        {", \"server_bytes\": 11, \"others_bytes\": {\"client-c\": 400}}", true},
        {", \"server_bytes\": null, \"others_bytes\": null}", true},
        {", \"others_bytes\": {\"client-c\": null}}", true},
        {", \"others_bytes\": {\"client-c\": \"400\"}}", false},
        {", \"others_bytes\": {\"Client C\": 400}}", false},
        {", \"server_bytes\": 1.5}", false},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = g_strconcat(base, cases[i].more, NULL);
        struct json_object *v = json_tokener_parse(text);
        CHECK(v != NULL);
        CHECK(ml_schema_validate(sec, v, NULL, NULL) == cases[i].valid);
        json_object_put(v);
    }
}

int main(void)
{
    test_built_in();
    test_registry_daemons();
    test_series_sides();
    test_fixtures();
    test_keywords();
    test_name_patterns();
    test_message();
    test_dollar_is_the_end();
    test_newline_names();
    test_values_unquoted();
    return check_finish();
}
