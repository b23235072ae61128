#include "dataplanes/verdict.h"

#include <math.h>
#include <string.h>
#include <arpa/inet.h>

#include "topology/yaml.h"

void ml_evidence_clear(struct ml_evidence *e)
{
    g_free(e->route);
    for (size_t i = 0; i < ML_EVIDENCE_OWN_MAX; i++)
        g_free(e->own[i]);
    g_free(e->own_error);
    memset(e, 0, sizeof(*e));
}

/* Words of `ip route get` output (iproute2's print_route), each list between
 * spaces. "via", "dev" and "src" are read; these take one value meshlab does
 * not need (a metric's value may follow "lock"): */
static const char route_valued[] =
    " from tos table proto scope metric mark uid realms nhid expires users used age ipid error "
    "iif pref mtu advmss rtt rttvar reordering window cwnd ssthresh hoplimit initcwnd initrwnd "
    "quickack congctl features rto_min fastopen_no_cookie ";
/* these are flags, as are the cache's "<local,brd>": */
static const char route_flags[] = " cache dead onlink pervasive offload trap notify linkdown "
                                  "unresolved rt_offload rt_trap rt_offload_failed ";
/* and these types come before the destination when it is not unicast. */
static const char route_types[] =
    " unicast local broadcast anycast multicast blackhole unreachable prohibit throw nat ";

static bool word_in(const char *w, const char *list)
{
    g_autofree char *padded = g_strdup_printf(" %s ", w);
    return strstr(list, padded) != NULL;
}

/* An IPv4 or IPv6 address, with a /prefix when prefix_ok. */
static bool route_address(const char *w, bool prefix_ok)
{
    g_autofree char *a = g_strdup(w);
    char *slash = strchr(a, '/');
    unsigned prefix = 0;
    if (slash) {
        char *end = NULL;
        prefix = (unsigned)g_ascii_strtoull(slash + 1, &end, 10);
        if (!prefix_ok || end == slash + 1 || *end || !g_ascii_isdigit(slash[1]))
            return false;
        *slash = '\0';
    }
    unsigned char buf[sizeof(struct in6_addr)];
    return (inet_pton(AF_INET, a, buf) == 1 && prefix <= 32) ||
           (inet_pton(AF_INET6, a, buf) == 1 && prefix <= 128);
}

/* Copies an address (or a name when !address) into dst; false when it is
 * missing, not one, already set, or does not fit. */
static bool route_take(char *dst, size_t size, const char *w, bool address)
{
    if (!w || *dst || strlen(w) >= size || (address && !route_address(w, false)))
        return false;
    memcpy(dst, w, strlen(w) + 1);
    return true;
}

bool ml_route_parse(const char *text, struct ml_route *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (!text)
        return false;
    g_auto(GStrv) split = g_strsplit_set(text, " \t\n\\", -1);
    g_autoptr(GPtrArray) words = g_ptr_array_new();
    for (char **w = split; *w; w++)
        if (**w)
            g_ptr_array_add(words, *w);
    g_ptr_array_add(words, NULL);
    char **w = (char **)words->pdata;
    if (*w && word_in(*w, route_types))
        w++;
    if (!*w || (strcmp(*w, "default") && !route_address(*w, true)))
        return false;
    struct ml_route r = {0};
    for (w++; *w; w++) {
        const char *k = *w;
        bool ok = true;
        if (!strcmp(k, "via")) {
            if (w[1] && (!strcmp(w[1], "inet") || !strcmp(w[1], "inet6")))
                w++;
            ok = route_take(r.via, sizeof(r.via), *++w, true);
        } else if (!strcmp(k, "dev")) {
            ok = route_take(r.dev, sizeof(r.dev), *++w, false);
        } else if (!strcmp(k, "src")) {
            ok = route_take(r.src, sizeof(r.src), *++w, true);
        } else if (word_in(k, route_valued)) {
            if (w[1] && !strcmp(w[1], "lock"))
                w++;
            ok = *++w != NULL;
        } else {
            ok = word_in(k, route_flags) || (k[0] == '<' && k[strlen(k) - 1] == '>');
        }
        if (!ok || !*w)
            return false;
    }
    r.parsed = true;
    *ret = r;
    return true;
}

bool ml_peer_on_underlay(const struct ml_topology *t, const char *hostport, GString *sentence)
{
    struct in_addr a;
    g_autofree char *host =
        g_strndup(hostport ? hostport : "", strcspn(hostport ? hostport : "", ":"));
    uint32_t mask = ml_prefix_mask(t->lab_subnet.prefix);
    bool on_lab = inet_pton(AF_INET, host, &a) == 1 &&
                  (ntohl(a.s_addr) & mask) == ntohl(t->lab_subnet.net.s_addr) &&
                  a.s_addr != t->nodes[t->hub].address.s_addr;
    if (!on_lab)
        g_string_append_printf(sentence, "%s is not a client's address on the lab bridge; ",
                               hostport && *hostport ? hostport : "(none)");
    return on_lab;
}

bool ml_route_enters(const struct ml_route *rt, const char *dev, GString *sentence)
{
    if (!rt->parsed) {
        g_string_append_printf(sentence, "the route could not be read (must leave by %s); ", dev);
        return false;
    }
    bool ok = !strcmp(rt->dev, dev) && !rt->via[0];
    if (!ok)
        g_string_append_printf(sentence, "the route leaves by %s%s%s (must be %s, no gateway); ",
                               rt->dev[0] ? rt->dev : "no device", rt->via[0] ? " via " : "",
                               rt->via, dev);
    return ok;
}

double ml_probe_ratio(const struct ml_encap *e, unsigned inner)
{
    if (!e || !inner)
        return 0;
    return 2.0 * ml_encap_frame_bytes(e, inner) / inner;
}

double ml_probe_loss(const struct ml_wan_profile *a, const struct ml_wan_profile *b,
                     const struct ml_wan_profile *relay)
{
    double kept = (1 - a->loss_percent / 100) * (1 - b->loss_percent / 100);
    if (relay)
        kept *= (1 - relay->loss_percent / 100) * (1 - relay->loss_percent / 100);
    return 1 - kept;
}

unsigned ml_probe_misses_allowed(unsigned n, double q)
{
    if (!(q > 0))
        return 0;
    /* One ping must come back whatever the loss: a path that answers none is no path. */
    if (q >= 1)
        return n ? n - 1 : 0;
    /* P(X <= k) summed term by term: C(n,k) q^k (1-q)^(n-k). */
    double term = pow(1 - q, n), below = term;
    unsigned k = 0;
    while (k + 1 < n && 1 - below >= 1e-3) {
        term *= (double)(n - k) / (k + 1) * q / (1 - q);
        below += term;
        k++;
    }
    return k;
}

bool ml_path_verdict(const struct ml_path_ops *ops, const struct ml_topology *topo,
                     const struct ml_evidence *ev, GString *sentence)
{
    /* A shallow copy: verify reads the parsed route, the caller's evidence stays as it was. */
    struct ml_evidence seen = *ev;
    if (!seen.rt.parsed)
        ml_route_parse(seen.route, &seen.rt);
    bool own = !ops->verify || ops->verify(topo, &seen, sentence);
    unsigned allowed = ml_probe_misses_allowed(ev->transmitted, ev->probe_loss);
    unsigned lost = ev->transmitted > ev->received ? ev->transmitted - ev->received : 0;
    bool answered = ev->transmitted > 0 && ev->received > 0 && lost <= allowed;
    /* A path nothing forced is judged as what its dataplane says it found. */
    enum ml_hub_role role = ml_path_role(ops, topo, ev);
    if (role == ML_HUB_FOUND)
        g_string_append(sentence, "the dataplane found no path; ");
    bool quiet = role == ML_HUB_QUIET;
    long long carried = ev->hub_bytes - ev->hub_idle_bytes;
    bool hub_ok = false;
    g_autofree char *must = NULL;
    if (quiet) {
        hub_ok = carried * 20 < ev->probe_bytes + 20LL * ML_PROBE_CHATTER_BYTES;
        must = g_strdup_printf("under 5%% of them plus %d bytes of chatter",
                               ML_PROBE_CHATTER_BYTES);
    } else {
        /* A relay moves each ping and its reply in and out as a frame of the path's own, so
         * the hub's bytes are an exact multiple of the probe's (ml_probe_ratio). The
         * probe's bytes are two IP packets of one size per answered ping. */
        unsigned inner = ev->received ? (unsigned)(ev->probe_bytes / (2 * ev->received)) : 0;
        double ratio = ml_probe_ratio(ops->encap, inner);
        double expect = ratio * (double)ev->probe_bytes;
        /* The floor against everything the hub moved: chatter only adds to a relay's frames, and
         * an idle window that caught a burst of it must not take the frames below their own
         * count. The ceiling against what is above idle, plus a burst the idle window missed. */
        double lo = expect * (1 - ML_PROBE_TOLERANCE_PERCENT / 100);
        double hi = expect * (1 + ML_PROBE_TOLERANCE_PERCENT / 100) +
                    3.0 * lost * ml_encap_frame_bytes(ops->encap, inner) + ML_PROBE_CHATTER_BYTES;
        hub_ok = role != ML_HUB_FOUND && ratio > 0 && (double)ev->hub_bytes >= lo &&
                 (double)carried <= hi;
        if (ratio > 0 && lost)
            must = g_strdup_printf("%.3f times, within %.0f%%, plus up to 3 frames for each of "
                                   "the %u ping%s lost: at least %.0f moved, at most %.0f above "
                                   "idle with %d bytes of chatter",
                                   ratio, ML_PROBE_TOLERANCE_PERCENT, lost, lost == 1 ? "" : "s",
                                   lo, hi, ML_PROBE_CHATTER_BYTES);
        else if (ratio > 0)
            must = g_strdup_printf("%.3f times, within %.0f%%: at least %.0f moved, at most %.0f "
                                   "above idle with %d bytes of chatter, the path's frames for "
                                   "these pings",
                                   ratio, ML_PROBE_TOLERANCE_PERCENT, lo, hi,
                                   ML_PROBE_CHATTER_BYTES);
        else if (!inner)
            must = g_strdup("the multiple its frames give of the pings answered, and none was");
        else
            must = g_strdup("the multiple its frames give, and the path has no frame model "
                            "(ml_path_ops.encap)");
    }
    g_autofree char *slowest =
        ev->probe_max_ms > 0
            ? g_strdup_printf("%s the slowest in %.1f ms", allowed ? ";" : ",", ev->probe_max_ms)
            : g_strdup("");
    g_autofree char *need =
        allowed ? g_strdup_printf("at least %u must be: the WAN profiles lose %.1f %% of round "
                                  "trips",
                                  ev->transmitted - allowed, ev->probe_loss * 100)
                : g_strdup("all must be");
    g_string_append_printf(sentence,
                           "route: %s; %u/%u probe pings answered (%s%s); hub NIC moved "
                           "%lld bytes, less %lld idle (as long, just before) is %lld for %lld "
                           "probe bytes (must be %s)",
                           ev->route ? ev->route : "?", ev->received, ev->transmitted, need,
                           slowest, ev->hub_bytes, ev->hub_idle_bytes, carried, ev->probe_bytes,
                           must);
    return own && answered && hub_ok;
}

const char *ml_found_name(enum ml_found f)
{
    return f == ML_FOUND_DIRECT ? "direct" : f == ML_FOUND_RELAY ? "relay" : "none";
}

enum ml_hub_role ml_path_role(const struct ml_path_ops *ops, const struct ml_topology *topo,
                              const struct ml_evidence *ev)
{
    if (ops->hub != ML_HUB_FOUND)
        return ops->hub;
    const struct ml_auto_ops *a = ops->dataplane->autop;
    struct ml_found_view v = {0};
    if (!a || ev->own_error || !ev->own[a->view_own] ||
        !a->view_parse(topo, ev->own[a->view_own], &v))
        return ML_HUB_FOUND;
    return v.found == ML_FOUND_DIRECT  ? ML_HUB_QUIET
           : v.found == ML_FOUND_RELAY ? ML_HUB_CARRIES
                                       : ML_HUB_FOUND;
}
