#include "report/schema_check.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/util.h"
#include "report/report.h"
#include "results/json.h"

/* Written at build time from docs/results.schema.json (cmake/embed.cmake). */
extern const unsigned char ml_results_schema_json[];
extern const size_t ml_results_schema_json_len;

/* Far deeper than a document json-c parses (its tokener stops at 32 levels): only a $ref that
 * loops without descending into the value gets here. */
#define MAX_DEPTH 256
/* How many bytes of a key, or of a value of the schema, a message quotes. A message never
 * quotes a value of the document: what a file holds is not echoed (it may not be the user's). */
#define QUOTE_MAX 60

/* JSON Schema's patterns are ECMA-262's: without the m flag, '$' matches at the very end only,
 * where PCRE's also matches before a last newline ("three-guest\n" would be a name). */
#define PATTERN_FLAGS G_REGEX_DOLLAR_ENDONLY

struct ctx {
    struct json_object *root;  /* the whole schema: where "$ref": "#/..." points into */
    GHashTable *regex;         /* pattern -> GRegex */
    GString *at;               /* the JSON pointer of the value being checked */
    char *fail_at, *fail_rule; /* the first failure */
    int depth;
};

/* Keywords that say nothing about validity: skipped ("format" is not asserted, as in the
 * python checker). $defs is walked for the schema's own check; validation reaches it by $ref. */
static const char *const annotations[] = {
    "$schema",  "$id",        "$comment", "title",     "description", "default",
    "examples", "deprecated", "readOnly", "writeOnly", "format",
};

/* Keywords whose value is a schema, an object of schemas, or an array of schemas. */
static const char *const one_schema[] = {
    "additionalProperties", "propertyNames", "items", "not", "if", "then", "else"};
static const char *const schema_maps[] = {"properties", "patternProperties", "$defs"};
static const char *const schema_lists[] = {"allOf", "anyOf", "oneOf"};
/* Keywords with a number, and with a count. */
static const char *const numbers[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
static const char *const counts[] = {"minItems",  "maxItems",      "minLength",
                                     "maxLength", "minProperties", "maxProperties"};
static const char *const others[] = {"type", "enum", "const", "required", "pattern", "$ref"};

static bool in(const char *word, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(word, list[i]) == 0)
            return true;
    return false;
}
#define IN(word, list) in(word, list, G_N_ELEMENTS(list))

static const char *const type_names[] = {"null",   "boolean", "integer", "number",
                                         "string", "array",   "object"};

static bool is_number(struct json_object *v)
{
    return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static bool is_integer(struct json_object *v)
{
    if (json_object_is_type(v, json_type_int))
        return true;
    double d = json_object_get_double(v);
    return json_object_is_type(v, json_type_double) && isfinite(d) && d == floor(d);
}

static bool is_type(struct json_object *v, const char *type)
{
    if (strcmp(type, "null") == 0)
        return json_object_get_type(v) == json_type_null;
    if (strcmp(type, "boolean") == 0)
        return json_object_is_type(v, json_type_boolean);
    if (strcmp(type, "integer") == 0)
        return is_integer(v);
    if (strcmp(type, "number") == 0)
        return is_number(v);
    if (strcmp(type, "string") == 0)
        return json_object_is_type(v, json_type_string);
    if (strcmp(type, "array") == 0)
        return json_object_is_type(v, json_type_array);
    return strcmp(type, "object") == 0 && json_object_is_type(v, json_type_object);
}

static const char *type_of(struct json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "a boolean";
    case json_type_int:
        return "an integer";
    case json_type_double:
        return "a number";
    case json_type_string:
        return "a string";
    case json_type_array:
        return "an array";
    case json_type_object:
        return "an object";
    }
    return "a value";
}

/* A key or a value of the schema as a message shows it: JSON (control characters escaped by
 * json-c), cut short. */
static char *quote(struct json_object *v)
{
    if (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
        return g_strdup(type_of(v));
    const char *json =
        json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    size_t len = strlen(json);
    if (len <= QUOTE_MAX)
        return g_strdup(json);
    len = QUOTE_MAX;
    while (len > 0 && ((unsigned char)json[len] & 0xc0) == 0x80)
        len--;
    return g_strdup_printf("%.*s…", (int)len, json);
}

static char *quote_key(const char *key)
{
    struct json_object *s = json_object_new_string(key);
    char *q = quote(s);
    json_object_put(s);
    return q;
}

static bool json_equal(struct json_object *a, struct json_object *b)
{
    if (is_number(a) && is_number(b)) {
        if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int))
            return json_object_get_int64(a) == json_object_get_int64(b);
        return json_object_get_double(a) == json_object_get_double(b);
    }
    if (json_object_get_type(a) != json_object_get_type(b))
        return false;
    switch (json_object_get_type(a)) {
    case json_type_null:
        return true;
    case json_type_boolean:
        return json_object_get_boolean(a) == json_object_get_boolean(b);
    case json_type_string:
        return json_object_get_string_len(a) == json_object_get_string_len(b) &&
               memcmp(json_object_get_string(a), json_object_get_string(b),
                      (size_t)json_object_get_string_len(a)) == 0;
    case json_type_array: {
        size_t n = ml_j_len(a);
        if (n != ml_j_len(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!json_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
                return false;
        return true;
    }
    case json_type_object: {
        if (json_object_object_length(a) != json_object_object_length(b))
            return false;
        json_object_object_foreach(a, key, va)
        {
            if (!ml_j_has(b, key) || !json_equal(va, ml_j_get(b, key)))
                return false;
        }
        return true;
    }
    default:
        return false;
    }
}

static bool fail(struct ctx *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool fail(struct ctx *c, const char *fmt, ...)
{
    if (c->fail_at)
        return false;
    va_list ap;
    va_start(ap, fmt);
    c->fail_rule = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    c->fail_at = g_strdup(c->at->str);
    return false;
}

/* Appends "/key" to the pointer, '~' and '/' escaped (RFC 6901); returns the length before. */
static size_t push(GString *at, const char *key)
{
    size_t before = at->len;
    g_string_append_c(at, '/');
    for (const char *p = key; *p; p++) {
        if (*p == '~')
            g_string_append(at, "~0");
        else if (*p == '/')
            g_string_append(at, "~1");
        else
            g_string_append_c(at, *p);
    }
    return before;
}

static GRegex *regex_of(GHashTable *cache, const char *pattern, GError **err)
{
    GRegex *re = g_hash_table_lookup(cache, pattern);
    if (!re) {
        re = g_regex_new(pattern, PATTERN_FLAGS, 0, err);
        if (re)
            g_hash_table_insert(cache, g_strdup(pattern), re);
    }
    return re;
}

/* "#/$defs/path" -> that node of the schema, or NULL. */
static struct json_object *resolve(struct json_object *root, const char *ref)
{
    if (!ref || ref[0] != '#')
        return NULL;
    g_autofree char *decoded = g_uri_unescape_string(ref + 1, NULL);
    if (!decoded || (decoded[0] && decoded[0] != '/'))
        return NULL;
    struct json_object *node = root;
    g_auto(GStrv) parts = g_strsplit(decoded, "/", -1);
    for (size_t i = 1; parts[i] && node; i++) {
        GString *key = g_string_new(NULL);
        for (const char *p = parts[i]; *p; p++) {
            if (p[0] == '~' && (p[1] == '0' || p[1] == '1')) {
                g_string_append_c(key, p[1] == '1' ? '/' : '~');
                p++;
            } else {
                g_string_append_c(key, *p);
            }
        }
        if (json_object_is_type(node, json_type_array)) {
            char *end = NULL;
            guint64 idx = g_ascii_strtoull(key->str, &end, 10);
            node = key->len && !*end && idx < json_object_array_length(node)
                       ? json_object_array_get_idx(node, idx)
                       : NULL;
        } else {
            node = ml_j_get(node, key->str);
        }
        g_string_free(key, TRUE);
    }
    return node;
}

static bool validate(struct ctx *c, struct json_object *s, struct json_object *v);

/* Validates v against s on the side: the failure stays in *ret_at, *ret_rule. */
static bool try(struct ctx *c, struct json_object *s, struct json_object *v, char **ret_at,
                char **ret_rule)
{
    struct ctx sub = *c;
    sub.fail_at = sub.fail_rule = NULL;
    bool ok = validate(&sub, s, v);
    *ret_at = sub.fail_at;
    *ret_rule = sub.fail_rule;
    return ok;
}

static size_t depth_of(const char *pointer)
{
    size_t n = 0;
    for (const char *p = pointer; p && *p; p++)
        n += *p == '/';
    return n;
}

/* anyOf/oneOf: how many alternatives v matches. When none, the failure reported is the one
 * that got deepest into v (the alternative meant, most likely), the first of equals. */
static size_t matches(struct ctx *c, struct json_object *alts, struct json_object *v)
{
    size_t n = 0;
    char *best_at = NULL, *best_rule = NULL;
    for (size_t i = 0; i < ml_j_len(alts); i++) {
        char *at = NULL, *rule = NULL;
        if (try(c, json_object_array_get_idx(alts, i), v, &at, &rule)) {
            n++;
        } else if (!best_at || depth_of(at) > depth_of(best_at)) {
            g_free(best_at);
            g_free(best_rule);
            best_at = g_steal_pointer(&at);
            best_rule = g_steal_pointer(&rule);
        }
        g_free(at);
        g_free(rule);
    }
    if (n == 0 && !c->fail_at && best_at) {
        c->fail_at = g_steal_pointer(&best_at);
        c->fail_rule = g_steal_pointer(&best_rule);
    }
    g_free(best_at);
    g_free(best_rule);
    return n;
}

static bool check_type(struct ctx *c, struct json_object *type, struct json_object *v)
{
    GString *want = g_string_new(NULL);
    bool ok = false;
    if (json_object_is_type(type, json_type_string)) {
        ok = is_type(v, json_object_get_string(type));
        g_string_append(want, json_object_get_string(type));
    } else {
        for (size_t i = 0; i < ml_j_len(type); i++) {
            const char *t = json_object_get_string(json_object_array_get_idx(type, i));
            ok |= is_type(v, t);
            g_string_append_printf(want, "%s%s", i ? " or " : "", t);
        }
    }
    if (!ok)
        fail(c, "the value is %s, not of type %s", type_of(v), want->str);
    g_string_free(want, TRUE);
    return ok;
}

static bool check_string(struct ctx *c, struct json_object *s, struct json_object *v)
{
    const char *text = json_object_get_string(v);
    int len = json_object_get_string_len(v);
    if (!g_utf8_validate(text, len, NULL))
        return fail(c, "the text is not UTF-8 or holds a NUL character");
    struct json_object *min = ml_j_get(s, "minLength"), *max = ml_j_get(s, "maxLength");
    glong chars = g_utf8_strlen(text, len);
    if (min && chars < json_object_get_int64(min))
        return fail(c, "the text is shorter than %" PRId64 " characters",
                    json_object_get_int64(min));
    if (max && chars > json_object_get_int64(max))
        return fail(c, "the text is longer than %" PRId64 " characters",
                    json_object_get_int64(max));
    struct json_object *pattern = ml_j_get(s, "pattern");
    if (pattern) {
        GRegex *re = regex_of(c->regex, json_object_get_string(pattern), NULL);
        if (!re || !g_regex_match(re, text, 0, NULL))
            return fail(c, "the text does not match the pattern '%s'",
                        json_object_get_string(pattern));
    }
    return true;
}

static bool check_number(struct ctx *c, struct json_object *s, struct json_object *v)
{
    static const struct {
        const char *key;
        bool below, exclusive;
        const char *says;
    } bounds[] = {
        {"minimum", true, false, "is below the minimum"},
        {"exclusiveMinimum", true, true, "is not above"},
        {"maximum", false, false, "is above the maximum"},
        {"exclusiveMaximum", false, true, "is not below"},
    };
    double x = json_object_get_double(v);
    for (size_t i = 0; i < G_N_ELEMENTS(bounds); i++) {
        struct json_object *b = ml_j_get(s, bounds[i].key);
        if (!b)
            continue;
        double limit = json_object_get_double(b);
        bool bad = bounds[i].below ? (bounds[i].exclusive ? x <= limit : x < limit)
                                   : (bounds[i].exclusive ? x >= limit : x > limit);
        if (bad) {
            g_autofree char *l = quote(b);
            return fail(c, "the number %s %s", bounds[i].says, l);
        }
    }
    return true;
}

/* The schema of patternProperties matching key, from the i-th on; NULL when none. */
static struct json_object *pattern_schema(struct ctx *c, struct json_object *s, const char *key,
                                          size_t *i)
{
    struct json_object *patterns = ml_j_get(s, "patternProperties");
    size_t k = 0;
    if (!patterns)
        return NULL;
    json_object_object_foreach(patterns, pattern, sub)
    {
        GRegex *re = regex_of(c->regex, pattern, NULL);
        if (k++ >= *i && re && g_regex_match(re, key, 0, NULL)) {
            *i = k;
            return sub;
        }
    }
    return NULL;
}

static bool is_additional(struct ctx *c, struct json_object *s, const char *key)
{
    size_t i = 0;
    return !ml_j_has(ml_j_get(s, "properties"), key) && !pattern_schema(c, s, key, &i);
}

/* Object-level rules first (a missing or refused key is the object's failure), then every
 * member in the document's order. */
static bool check_object(struct ctx *c, struct json_object *s, struct json_object *v)
{
    struct json_object *required = ml_j_get(s, "required");
    for (size_t i = 0; i < ml_j_len(required); i++) {
        const char *key = json_object_get_string(json_object_array_get_idx(required, i));
        if (!ml_j_has(v, key)) {
            g_autofree char *q = quote_key(key);
            return fail(c, "the key %s is missing, and it is required", q);
        }
    }
    int n = json_object_object_length(v);
    struct json_object *min = ml_j_get(s, "minProperties"), *max = ml_j_get(s, "maxProperties");
    if (min && n < json_object_get_int64(min))
        return fail(c, "the object has %d keys, fewer than %" PRId64, n,
                    json_object_get_int64(min));
    if (max && n > json_object_get_int64(max))
        return fail(c, "the object has %d keys, more than %" PRId64, n, json_object_get_int64(max));
    struct json_object *names = ml_j_get(s, "propertyNames"),
                       *additional = ml_j_get(s, "additionalProperties");
    bool closed =
        json_object_is_type(additional, json_type_boolean) && !json_object_get_boolean(additional);
    json_object_object_foreach(v, key, member)
    {
        (void)member;
        g_autofree char *q = quote_key(key);
        if (!g_utf8_validate(key, -1, NULL))
            return fail(c, "a key is not UTF-8");
        if (closed && is_additional(c, s, key))
            return fail(c, "the key %s is not allowed here", q);
        if (!names)
            continue;
        struct json_object *name = json_object_new_string(key);
        g_autofree char *at = NULL, *rule = NULL;
        bool ok = try(c, names, name, &at, &rule);
        json_object_put(name);
        if (!ok)
            return fail(c, "the key %s is refused: %s", q, rule);
    }
    json_object_object_foreach(v, key2, member2)
    {
        size_t before = push(c->at, key2);
        bool ok = true;
        struct json_object *props = ml_j_get(s, "properties");
        if (ml_j_has(props, key2))
            ok = validate(c, ml_j_get(props, key2), member2);
        size_t i = 0;
        for (struct json_object *sub; ok && (sub = pattern_schema(c, s, key2, &i));)
            ok = validate(c, sub, member2);
        if (ok && additional && !closed && is_additional(c, s, key2))
            ok = validate(c, additional, member2);
        g_string_truncate(c->at, before);
        if (!ok)
            return false;
    }
    return true;
}

static bool check_array(struct ctx *c, struct json_object *s, struct json_object *v)
{
    size_t n = json_object_array_length(v);
    struct json_object *min = ml_j_get(s, "minItems"), *max = ml_j_get(s, "maxItems");
    if (min && (int64_t)n < json_object_get_int64(min))
        return fail(c, "the array has %zu items, fewer than %" PRId64, n,
                    json_object_get_int64(min));
    if (max && (int64_t)n > json_object_get_int64(max))
        return fail(c, "the array has %zu items, more than %" PRId64, n,
                    json_object_get_int64(max));
    struct json_object *items = ml_j_get(s, "items");
    for (size_t i = 0; items && i < n; i++) {
        char index[24];
        g_snprintf(index, sizeof index, "%zu", i);
        size_t before = push(c->at, index);
        bool ok = validate(c, items, json_object_array_get_idx(v, i));
        g_string_truncate(c->at, before);
        if (!ok)
            return false;
    }
    return true;
}

static bool check_enum(struct ctx *c, struct json_object *s, struct json_object *v)
{
    struct json_object *cnst = ml_j_get(s, "const"), *list = ml_j_get(s, "enum");
    if (ml_j_has(s, "const") && !json_equal(v, cnst)) {
        g_autofree char *w = quote(cnst);
        return fail(c, "the value is not %s", w);
    }
    if (!list)
        return true;
    for (size_t i = 0; i < ml_j_len(list); i++)
        if (json_equal(v, json_object_array_get_idx(list, i)))
            return true;
    const char *all = json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE);
    return fail(c, "the value is not one of %s", all);
}

static bool check_logic(struct ctx *c, struct json_object *s, struct json_object *v)
{
    struct json_object *all = ml_j_get(s, "allOf"), *any = ml_j_get(s, "anyOf"),
                       *one = ml_j_get(s, "oneOf");
    for (size_t i = 0; i < ml_j_len(all); i++)
        if (!validate(c, json_object_array_get_idx(all, i), v))
            return false;
    if (any && matches(c, any, v) == 0)
        return false;
    if (one) {
        size_t n = matches(c, one, v);
        if (n == 0)
            return false;
        if (n > 1)
            return fail(c, "%s matches %zu of oneOf's schemas, not exactly one", type_of(v), n);
    }
    g_autofree char *at = NULL, *rule = NULL;
    struct json_object *never = ml_j_get(s, "not");
    if (never && try(c, never, v, &at, &rule)) {
        const char *shown = json_object_to_json_string_ext(
            never, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        return fail(c, "the value matches %s, which it must not", shown);
    }
    struct json_object *cond = ml_j_get(s, "if");
    if (cond) {
        g_autofree char *if_at = NULL, *if_rule = NULL;
        struct json_object *branch =
            ml_j_get(s, try(c, cond, v, &if_at, &if_rule) ? "then" : "else");
        if (branch && !validate(c, branch, v))
            return false;
    }
    return true;
}

static bool validate(struct ctx *c, struct json_object *s, struct json_object *v)
{
    if (json_object_is_type(s, json_type_boolean))
        return json_object_get_boolean(s) || fail(c, "no value is allowed here");
    if (++c->depth > MAX_DEPTH) {
        c->depth--;
        return fail(c, "the schema's $ref loops without end");
    }
    bool ok = true;
    struct json_object *ref = ml_j_get(s, "$ref"), *type = ml_j_get(s, "type");
    if (ref) {
        struct json_object *target = resolve(c->root, json_object_get_string(ref));
        ok = target ? validate(c, target, v)
                    : fail(c, "the schema's $ref %s points nowhere", json_object_get_string(ref));
    }
    ok = ok && (!type || check_type(c, type, v)) && check_enum(c, s, v);
    if (ok && json_object_is_type(v, json_type_string))
        ok = check_string(c, s, v);
    else if (ok && is_number(v))
        ok = check_number(c, s, v);
    else if (ok && json_object_is_type(v, json_type_object))
        ok = check_object(c, s, v);
    else if (ok && json_object_is_type(v, json_type_array))
        ok = check_array(c, s, v);
    ok = ok && check_logic(c, s, v);
    c->depth--;
    return ok;
}

bool ml_schema_validate(struct json_object *schema, struct json_object *doc, char **ret_pointer,
                        char **ret_rule)
{
    struct ctx c = {
        .root = schema,
        .regex =
            g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_regex_unref),
        .at = g_string_new(NULL),
    };
    bool ok = validate(&c, schema, doc);
    if (ret_pointer)
        *ret_pointer = g_steal_pointer(&c.fail_at);
    if (ret_rule)
        *ret_rule = g_steal_pointer(&c.fail_rule);
    g_free(c.fail_at);
    g_free(c.fail_rule);
    g_string_free(c.at, TRUE);
    g_hash_table_unref(c.regex);
    return ok;
}

/* The schema's own shape, walked once: what validate() would trip on or silently ignore. */
static char *problem(struct json_object *root, struct json_object *s, GString *at);

static char *problem_at(struct json_object *root, struct json_object *s, GString *at,
                        const char *key)
{
    size_t before = push(at, key);
    char *p = problem(root, s, at);
    g_string_truncate(at, before);
    return p;
}

static char *keyword_problem(struct json_object *root, const char *key, struct json_object *v,
                             GString *at)
{
    if (IN(key, one_schema))
        return problem_at(root, v, at, key);
    if (IN(key, schema_maps)) {
        if (!json_object_is_type(v, json_type_object))
            return g_strdup_printf("%s/%s is not an object of schemas", at->str, key);
        size_t before = push(at, key);
        char *p = NULL;
        json_object_object_foreach(v, name, sub)
        {
            if (strcmp(key, "patternProperties") == 0) {
                g_autoptr(GRegex) re = g_regex_new(name, PATTERN_FLAGS, 0, NULL);
                if (!re)
                    p = g_strdup_printf("%s: the pattern '%s' does not compile", at->str, name);
            }
            if (!p)
                p = problem_at(root, sub, at, name);
            if (p)
                break;
        }
        g_string_truncate(at, before);
        return p;
    }
    if (IN(key, schema_lists)) {
        if (!json_object_is_type(v, json_type_array) || !json_object_array_length(v))
            return g_strdup_printf("%s/%s is not an array of schemas", at->str, key);
        size_t before = push(at, key);
        char *p = NULL;
        for (size_t i = 0; !p && i < ml_j_len(v); i++) {
            char index[24];
            g_snprintf(index, sizeof index, "%zu", i);
            p = problem_at(root, json_object_array_get_idx(v, i), at, index);
        }
        g_string_truncate(at, before);
        return p;
    }
    if (IN(key, numbers) && !is_number(v))
        return g_strdup_printf("%s/%s is not a number", at->str, key);
    if (IN(key, counts) && (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0))
        return g_strdup_printf("%s/%s is not a count", at->str, key);
    if (strcmp(key, "type") == 0) {
        bool one = json_object_is_type(v, json_type_string);
        if (!one && !json_object_is_type(v, json_type_array))
            return g_strdup_printf("%s/type is neither a type nor a list of them", at->str);
        for (size_t i = 0; i < (one ? 1 : ml_j_len(v)); i++) {
            struct json_object *t = one ? v : json_object_array_get_idx(v, i);
            if (!json_object_is_type(t, json_type_string) ||
                !IN(json_object_get_string(t), type_names))
                return g_strdup_printf("%s/type names an unknown type", at->str);
        }
    }
    if (strcmp(key, "enum") == 0 && !json_object_is_type(v, json_type_array))
        return g_strdup_printf("%s/enum is not an array", at->str);
    if (strcmp(key, "required") == 0) {
        if (!json_object_is_type(v, json_type_array))
            return g_strdup_printf("%s/required is not an array", at->str);
        for (size_t i = 0; i < ml_j_len(v); i++)
            if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
                return g_strdup_printf("%s/required holds something other than a key", at->str);
    }
    if (strcmp(key, "pattern") == 0) {
        g_autoptr(GError) err = NULL;
        g_autoptr(GRegex) re = json_object_is_type(v, json_type_string)
                                   ? g_regex_new(json_object_get_string(v), PATTERN_FLAGS, 0, &err)
                                   : NULL;
        if (!re)
            return g_strdup_printf("%s/pattern does not compile: %s", at->str,
                                   err ? err->message : "not a string");
    }
    if (strcmp(key, "$ref") == 0 && !resolve(root, json_object_get_string(v)))
        return g_strdup_printf("%s/$ref %s does not point into this schema ('#/...')", at->str,
                               json_object_get_string(v));
    return NULL;
}

static char *problem(struct json_object *root, struct json_object *s, GString *at)
{
    if (json_object_is_type(s, json_type_boolean))
        return NULL;
    if (!json_object_is_type(s, json_type_object))
        return g_strdup_printf("%s is neither a schema nor true/false", at->str[0] ? at->str : "/");
    json_object_object_foreach(s, key, v)
    {
        if (IN(key, annotations))
            continue;
        if (!IN(key, one_schema) && !IN(key, schema_maps) && !IN(key, schema_lists) &&
            !IN(key, numbers) && !IN(key, counts) && !IN(key, others))
            return g_strdup_printf("%s/%s: meshlab's validator does not know the keyword '%s'; "
                                   "teach it to src/report/schema_check.c, or say it with the "
                                   "keywords it knows",
                                   at->str, key, key);
        char *p = keyword_problem(root, key, v, at);
        if (p)
            return p;
    }
    return NULL;
}

char *ml_schema_problem(struct json_object *schema)
{
    g_autoptr(GString) at = g_string_new(NULL);
    return problem(schema, schema, at);
}

static struct json_object *schema;
static char *schema_broken;

struct json_object *ml_results_schema(void)
{
    static gsize once;
    if (g_once_init_enter(&once)) {
        struct json_tokener *tok = json_tokener_new();
        struct json_object *s = json_tokener_parse_ex(tok, (const char *)ml_results_schema_json,
                                                      (int)ml_results_schema_json_len);
        if (!s)
            schema_broken = g_strdup(json_tokener_error_desc(json_tokener_get_error(tok)));
        else if (!(schema_broken = ml_schema_problem(s)))
            schema = s;
        else
            json_object_put(s);
        json_tokener_free(tok);
        g_once_init_leave(&once, 1);
    }
    return schema;
}

/* The first string or key, in the document's order, that is not UTF-8 or holds a NUL (what a
 * terminal or a regex must never see); its pointer is left in at. */
static bool text_ok(struct json_object *v, GString *at)
{
    if (json_object_is_type(v, json_type_string))
        return g_utf8_validate(json_object_get_string(v), json_object_get_string_len(v), NULL);
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < ml_j_len(v); i++) {
            char index[24];
            g_snprintf(index, sizeof index, "%zu", i);
            size_t before = push(at, index);
            if (!text_ok(json_object_array_get_idx(v, i), at))
                return false;
            g_string_truncate(at, before);
        }
    }
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, key, member)
        {
            size_t before = push(at, key);
            if (!g_utf8_validate(key, -1, NULL) || !text_ok(member, at))
                return false;
            g_string_truncate(at, before);
        }
    }
    return true;
}

/* What a document's /schema is, as a message says it: another meshlab's schema by its name (a
 * name of meshlab's own, "meshlab-results/N"), anything else only as what it is not. */
static char *schema_said(struct json_object *results)
{
    struct json_object *name = ml_j_get(results, "schema");
    const char *s = json_object_is_type(name, json_type_string) ? json_object_get_string(name) : "";
    const char *n = g_str_has_prefix(s, "meshlab-results/") ? s + strlen("meshlab-results/") : "";
    if (*n && strlen(n) <= 4 && strspn(n, "0123456789") == strlen(n))
        return g_strdup_printf("\"%s\"", s);
    if (name)
        return g_strdup("none of meshlab's");
    return g_strdup(json_object_is_type(results, json_type_object) ? "missing"
                                                                   : "missing (not an object)");
}

bool ml_results_check(struct json_object *results, const char *file, GError **err)
{
    struct json_object *name = ml_j_get(results, "schema");
    const char *named =
        json_object_is_type(name, json_type_string) ? json_object_get_string(name) : NULL;
    if (g_strcmp0(named, ML_RESULTS_SCHEMA) != 0) {
        g_autofree char *shown = schema_said(results);
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s is not a '%s' results document: at /schema: its schema is %s; meshlab "
                    "reads the results of this meshlab only: measure the lab again with it.",
                    file, ML_RESULTS_SCHEMA, shown);
        return false;
    }
    g_autoptr(GString) at = g_string_new(NULL);
    if (!text_ok(results, at)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s: at %s: the text is not UTF-8 or holds a NUL character, which meshlab "
                    "never writes: this file was not written by meshlab, or was changed after.",
                    file, at->str);
        return false;
    }
    struct json_object *s = ml_results_schema();
    if (!s) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "meshlab's built-in copy of docs/results.schema.json is unusable (%s); "
                    "rebuild meshlab from a source tree whose schema passes "
                    "tests/check_results_schema.py.",
                    schema_broken);
        return false;
    }
    g_autofree char *pointer = NULL, *rule = NULL;
    if (ml_schema_validate(s, results, &pointer, &rule))
        return true;
    g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                "%s: at %s: %s. The file breaks the results contract (docs/results.schema.json): "
                "it was not written by this meshlab, or was changed after; nothing was rendered "
                "from it. Measure the lab again, or correct that field.",
                file, pointer && pointer[0] ? pointer : "/", rule ? rule : "invalid");
    return false;
}
