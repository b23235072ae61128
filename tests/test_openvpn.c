/* openvpn-hub without guests: the status-file parser and verify() on status files
 * recorded in network namespaces (tests/data/samples/openvpn/README), the
 * configurations it renders, and its encapsulation's hub factor.
 *
 * `test_openvpn --render TOPOLOGY DIR` writes what the dataplane would send each
 * guest (DIR/NODE/keygen.sh, start.sh; the configurations once the fingerprints
 * are in DIR/NODE/fp) for tests/openvpn_netns.sh, which runs them for real. */
#include "check.h"
#include "core/util.h"
#include "dataplanes/openvpn.h"
#include "dataplanes/path.h"
#include "measure/physics.h"

#define OPENVPN_HUB ml_path_find("openvpn-hub")
#define LIVE_ROUTE "10.17.0.3 dev ovpn0 src 10.17.0.2 uid 0 cache"

static int render(const char *topology, const char *dir)
{
    g_autoptr(GError) err = NULL;
    struct ml_topology *t = ml_topology_load(topology, &err);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    char *fp[ML_MAX_NODES] = {0};
    bool have_fp = true;
    for (size_t i = 0; i < t->n_nodes; i++) {
        g_autofree char *d = g_build_filename(dir, t->nodes[i].name, NULL);
        g_autofree char *f = g_build_filename(d, "fp", NULL);
        g_autofree char *text = NULL;
        fp[i] = g_malloc0(96);
        if (!g_file_get_contents(f, &text, NULL, NULL) || !ml_openvpn_fingerprint_parse(text, fp[i]))
            have_fp = false;
    }
    for (size_t i = 0; i < t->n_nodes; i++) {
        g_autofree char *d = g_build_filename(dir, t->nodes[i].name, NULL);
        g_autofree char *run = g_build_filename(d, "run", NULL);
        g_autofree char *keygen = ml_openvpn_keygen_command(t, i, run);
        g_autofree char *start = ml_openvpn_start_command(t, i, run);
        g_autofree char *k = g_build_filename(d, "keygen.sh", NULL);
        g_autofree char *s = g_build_filename(d, "start.sh", NULL);
        g_mkdir_with_parents(d, 0700);
        g_file_set_contents(k, keygen, -1, NULL);
        g_file_set_contents(s, start, -1, NULL);
        if (have_fp) {
            g_autofree char *conf = i == t->wireguard.hub
                                        ? ml_openvpn_render_server(t, run, fp)
                                        : ml_openvpn_render_client(t, i, run, fp[t->wireguard.hub]);
            g_autofree char *c = g_build_filename(d, "openvpn.conf", NULL);
            g_file_set_contents(c, conf, -1, NULL);
        }
    }
    for (size_t i = 0; i < t->n_nodes; i++)
        g_free(fp[i]);
    ml_topology_free(t);
    return 0;
}

/* verify() on two status files read from a live server, as observe() reads them. */
static int status(const char *first, const char *second)
{
    g_autoptr(GError) err = NULL;
    struct ml_topology *t = ml_topology_load("topologies/three-guest.yaml", &err);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    struct ml_evidence ev = {0};
    if (!g_file_get_contents(first, &ev.own[0], NULL, NULL) ||
        !g_file_get_contents(second, &ev.own[1], NULL, NULL)) {
        fprintf(stderr, "cannot read %s or %s\n", first, second);
        return 1;
    }
    ev.own[2] = g_strdup("1\n");
    ml_route_parse(LIVE_ROUTE, &ev.rt);
    g_autoptr(GString) s = g_string_new(NULL);
    bool ok = OPENVPN_HUB->verify(t, &ev, s);
    printf("verify: %s: %s\n", ok ? "ok" : "FAILED", s->str);
    ml_evidence_clear(&ev);
    ml_topology_free(t);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--render"))
        return render(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "--status"))
        return status(argv[2], argv[3]);
    CHECK(OPENVPN_HUB != NULL);
    return check_finish();
}
