/* The topology's YAML reader: one document loaded from text (no anchors, aliases, tags or
 * directives, nesting bounded), and typed values read out of it, each failure one line
 * "FILE:LINE:COL: RULE" at the node that broke the rule. Knows no topology keys. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <yaml.h>

#include "topology/topology.h"

#define ML_YAML_MAX_KEYS 16

/* A document being read and where its first failure goes. */
struct ml_yaml {
    const char *file; /* as messages name it */
    yaml_document_t *doc;
    GError **err;       /* set once, ML_ERR_INPUT */
    GPtrArray *scratch; /* message fragments, freed by ml_yaml_clear */
    bool data;          /* a file someone else may have written: messages quote none of it */
};

/* One key a mapping may have. A list of them ends with {NULL, false}. */
struct ml_yaml_key {
    const char *name;
    bool required;
};

/* What a sequence or mapping must hold, for the messages that refuse it. */
struct ml_yaml_shape {
    yaml_node_type_t type; /* YAML_SEQUENCE_NODE or YAML_MAPPING_NODE */
    const char *of;        /* "WHAT must be a sequence of OF, not FOUND" */
    const char *unit;      /* "WHAT lists N UNIT; at most MAX" ("has" for a mapping) */
    size_t max;            /* 0: any number */
    const char *if_empty;  /* "WHAT is empty; IF_EMPTY"; NULL: it may be empty */
};

/* Loads the one document of text (a second one is an error too) after refusing what a
 * topology has no use for: anchors, aliases, tags, directives, nesting past 16 levels. */
bool ml_yaml_load(const char *name, const char *text, size_t len, yaml_document_t *doc,
                  GError **err);
/* Frees the scratch fragments (not the document). */
void ml_yaml_clear(struct ml_yaml *y);

/* Sets y->err to "FILE:LINE:COL: RULE" at node at; always returns false. */
bool ml_yaml_fail(struct ml_yaml *y, const yaml_node_t *at, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
/* A message fragment that lives as long as y's scratch. */
const char *ml_yaml_fmt(struct ml_yaml *y, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Takes s into y's scratch. */
const char *ml_yaml_keep(struct ml_yaml *y, char *s);
/* A user's value as it may appear inside a one-line message: control characters escaped,
 * long values cut short. */
const char *ml_yaml_shown(struct ml_yaml *y, const char *s);
/* What was found where something else was expected, for "X must be Y, not Z": "a mapping",
 * "a sequence", "an empty value", "'text'". */
const char *ml_yaml_found(struct ml_yaml *y, const yaml_node_t *n);

const char *ml_yaml_value(const yaml_node_t *n); /* a scalar's text */
bool ml_yaml_is_null(const yaml_node_t *n);      /* a plain "", "~", "null", "Null", "NULL" */
bool ml_yaml_has_nul(const yaml_node_t *n);      /* a scalar with a NUL inside */
/* The 1-based line and column where n starts. */
int ml_yaml_line(const yaml_node_t *n);
int ml_yaml_column(const yaml_node_t *n);

/* Checks mapping node against its allowed keys and hands back each key's value (or NULL),
 * in the order of keys. libyaml keeps duplicate keys, so they are caught here. what names the
 * mapping in messages (NULL: the topology itself). */
bool ml_yaml_read_mapping(struct ml_yaml *y, yaml_node_t *node, const char *what,
                          const struct ml_yaml_key *keys, yaml_node_t **ret_values);
/* The key node of name in mapping n, or NULL. */
yaml_node_t *ml_yaml_find_key(struct ml_yaml *y, yaml_node_t *n, const char *name);
/* The number of items (pairs) of n after checking it against shape. */
bool ml_yaml_collection(struct ml_yaml *y, yaml_node_t *n, const char *what,
                        const struct ml_yaml_shape *shape, size_t *ret_count);
/* Item i of sequence n; key and value of pair i of mapping n. */
yaml_node_t *ml_yaml_item(struct ml_yaml *y, const yaml_node_t *n, size_t i);
yaml_node_t *ml_yaml_pair_key(struct ml_yaml *y, const yaml_node_t *n, size_t i);
yaml_node_t *ml_yaml_pair_value(struct ml_yaml *y, const yaml_node_t *n, size_t i);

bool ml_yaml_get_string(struct ml_yaml *y, yaml_node_t *n, const char *what, const char **ret);
/* A decimal integer in min..max, unquoted. */
bool ml_yaml_get_uint(struct ml_yaml *y, yaml_node_t *n, const char *what, unsigned min,
                      unsigned max, unsigned *ret);
/* A decimal number as people write one: 0.05, 1, 0.5; no exponents, signs or words. */
bool ml_yaml_get_decimal(struct ml_yaml *y, yaml_node_t *n, const char *what, double *ret);
/* Compares two decimals as ml_yaml_get_decimal accepts them by their text, so that a bound
 * holds exactly: 0.0019999999999999999 is below 0.002 although both are the same double.
 * Returns <0, 0 or >0 as strcmp. */
int ml_yaml_decimal_cmp(const char *a, const char *b);
/* A name by the rule of topology/name.h. */
bool ml_yaml_get_name(struct ml_yaml *y, yaml_node_t *n, const char *what, bool allow_dot,
                      char ret[ML_NAME_MAX]);
/* An IPv4 address in canonical dotted-quad form. */
bool ml_yaml_get_address(struct ml_yaml *y, yaml_node_t *n, const char *what, struct in_addr *ret);
/* An IPv4 network NET/PREFIX, prefix 8..30, no host bits, outside the ranges no lab network
 * can live in. */
bool ml_yaml_get_subnet(struct ml_yaml *y, yaml_node_t *n, const char *what, struct ml_subnet *ret);

/* For messages: "192.0.2.10", "192.0.2.0/24". */
const char *ml_yaml_ip_str(struct ml_yaml *y, struct in_addr a);
const char *ml_yaml_subnet_str(struct ml_yaml *y, const struct ml_subnet *s);
/* The netmask of prefix, host byte order. */
uint32_t ml_prefix_mask(unsigned prefix);
