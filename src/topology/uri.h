#pragma once

#include <glib.h>
#include <stdbool.h>

/* A libvirt connection URI as libvirt itself reads it: virURIParse (libxml2's RFC 3986 parser,
 * src/util/viruri.c) splits scheme, user, server, port, path and the raw query, and
 * virURIParseParams splits the query at each '&' or, where none is left, at ';', percent-decoding
 * each name and value; the remote driver then takes a parameter by its name, case-insensitively,
 * the last one given winning (remote_driver.c, EXTRACT_URI_ARG_*). meshlab reads a URI only this
 * way, so what it checks is what libvirt will use. It is stricter than libvirt where no lab needs
 * the freedom: no fragment, no password, no percent escape outside the query, no control character
 * in a decoded parameter; what it accepts, libvirt parses to the same parts (test_uri holds this
 * against libvirt's own virURIParse). */

struct ml_uri_param {
    char *name;  /* decoded, as given (compare with ml_uri_param's case-insensitive lookup) */
    char *value; /* decoded; "" for a bare name */
};

struct ml_uri {
    char *scheme; /* "qemu+ssh" */
    char *user;   /* NULL when none */
    char *server; /* NULL when none; an IPv6 literal without its brackets */
    unsigned port; /* 0 when none */
    char *path;   /* NULL when none */
    char *query;  /* raw, as written; NULL when none */
    struct ml_uri_param *params;
    size_t n_params;
};

/* An alias of libvirt.conf's uri_aliases (virURIFindAliasMatch's characters): no ':'. */
bool ml_uri_is_alias(const char *text);

/* Parses text as libvirt would; NULL with err (ML_ERR_INPUT) saying what is wrong and where. An
 * alias is not a URI: check ml_uri_is_alias first. */
struct ml_uri *ml_uri_parse(const char *text, GError **err);
void ml_uri_free(struct ml_uri *u);
typedef struct ml_uri MlUri;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MlUri, ml_uri_free)

/* The value libvirt's remote driver takes for name: the last parameter of that name, whatever
 * its case; NULL when there is none. */
const char *ml_uri_param(const struct ml_uri *u, const char *name);

/* The transport after '+' in the scheme ("ssh" of "qemu+ssh"); NULL when there is none. */
const char *ml_uri_transport(const struct ml_uri *u);

/* What a topology file may name as a host (docs/topology.md, hosts): nothing that libvirt or
 * meshlab would run or that weakens how the host is checked. NULL when text is fine, else why not
 * (a sentence to put after "hosts.NAME.uri: "), which the caller frees. */
char *ml_uri_topology_refusal(const char *text);

/* Whether a and b name the same libvirt connection, spelled out whole: scheme, user, server (its
 * case ignored), port, path, and every parameter as the remote driver takes it (names' case
 * ignored, the last of a name winning, order ignored). Two spellings of which either fails to
 * parse, or an alias, are the same only when their texts are equal. */
bool ml_uri_same(const char *a, const char *b);

/* The URI as results and messages may show it: scheme://user@server:port/path, without the query
 * (key files, sockets) and without a password; NULL when text is NULL. An alias or a text that does
 * not parse is shown up to its first '?' or '#', without a user part. */
char *ml_uri_public(const char *text);
