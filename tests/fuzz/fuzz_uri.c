/* A libvirt URI, as a topology's hosts: or --connect gives it: meshlab's parser
 * (src/topology/uri.c) never crashes, and what it accepts libvirt's own virURIParse splits into the
 * same scheme, user, server, port, path and parameters (tests/libvirt_uri.h). */
#include "../libvirt_uri.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *why;
    static bool have_libvirt;
    static bool init;
    if (!init) {
        have_libvirt = lv_uri_init(&why);
        init = true;
    }
    g_autofree char *text = g_strndup((const char *)data, size);
    if (strlen(text) != size)
        return 0;
    g_autoptr(GError) err = NULL;
    g_autoptr(MlUri) u = ml_uri_parse(text, &err);
    g_autofree char *refusal = ml_uri_topology_refusal(text);
    g_autofree char *shown = ml_uri_public(text);
    if (!u) {
        if (!err || refusal == NULL) {
            if (!ml_uri_is_alias(text))
                __builtin_trap();
        }
        return 0;
    }
    if (err || !shown || !ml_uri_same(text, text))
        __builtin_trap();
    /* What is shown holds no parameter: no key file, no socket. */
    if (strchr(shown, '?'))
        __builtin_trap();
    if (have_libvirt) {
        g_autofree char *d = lv_uri_disagreement(u, text);
        if (d) {
            fprintf(stderr, "%s: %s\n", text, d);
            __builtin_trap();
        }
    }
    return 0;
}
