#include "measure/parse_ping.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* Longer than any ping summary we parse; keeps error messages short. */
#define LAST_LINE_MAX 200

static bool parse_unsigned(const char **p, unsigned *ret)
{
    if (!g_ascii_isdigit(**p))
        return false;
    char *end;
    errno = 0;
    unsigned long v = strtoul(*p, &end, 10);
    if (errno || v > G_MAXUINT)
        return false;
    *ret = (unsigned)v;
    *p = end;
    return true;
}

static bool skip(const char **p, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(*p, word, n) != 0)
        return false;
    *p += n;
    return true;
}

/* "5 packets transmitted, 5 received, +4 duplicates, +1 errors, 0% packet loss, time 813ms"
 * (iputils) or "5 packets transmitted, 5 packets received, 0% packet loss" (busybox). The
 * "+N" parts come in either order depending on the iputils version, so they are read by name. */
static bool parse_counts(const char *line, struct ml_ping_result *r)
{
    const char *p = line;
    if (!parse_unsigned(&p, &r->transmitted) || !skip(&p, " packets transmitted, ") ||
        !parse_unsigned(&p, &r->received))
        return false;
    if (!skip(&p, " received") && !skip(&p, " packets received"))
        return false;
    while (skip(&p, ", +")) {
        unsigned n;
        if (!parse_unsigned(&p, &n))
            return false;
        if (skip(&p, " errors") || skip(&p, " error"))
            r->errors = n;
        else if (skip(&p, " duplicates") || skip(&p, " duplicate"))
            r->duplicates = n;
        else if (skip(&p, " corrupted"))
            continue; /* iputils' damaged replies; nothing here uses them */
        else
            return false;
    }
    return true;
}

/* "rtt min/avg/max/mdev = 0.036/0.069/0.196/0.063 ms" (iputils),
 * "round-trip min/avg/max = 0.040/0.052/0.063 ms" (busybox),
 * "round-trip min/avg/max/stddev = ..." (BSD). */
static bool parse_rtt(const char *line, struct ml_ping_result *r)
{
    const char *eq = strstr(line, " = ");
    if (!eq)
        return false;
    const char *names = strchr(line, ' ');
    if (!names || names >= eq)
        return false;
    names++;
    bool has_mdev = g_str_has_prefix(names, "min/avg/max/");
    if (!has_mdev && !g_str_has_prefix(names, "min/avg/max "))
        return false;

    double v[4] = {0, 0, 0, -1};
    int want = has_mdev ? 4 : 3;
    const char *p = eq + 3;
    for (int i = 0; i < want; i++) {
        char *end;
        /* g_ascii_strtod ignores the locale: ping prints a '.' whatever LC_NUMERIC says. */
        v[i] = g_ascii_strtod(p, &end);
        if (end == p || !isfinite(v[i]) || v[i] < 0)
            return false;
        p = end;
        if (i + 1 < want && *p++ != '/')
            return false;
    }
    if (!g_str_has_prefix(p, " ms"))
        return false;
    r->min_ms = v[0];
    r->avg_ms = v[1];
    r->max_ms = v[2];
    r->mdev_ms = v[3];
    r->have_rtt = true;
    return true;
}

bool ml_ping_parse(const char *text, struct ml_ping_result *ret, GError **err)
{
    g_return_val_if_fail(text != NULL, false);
    g_return_val_if_fail(ret != NULL, false);

    struct ml_ping_result r = {.mdev_ms = -1};
    bool have_counts = false;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    const char *last = NULL;

    for (char **l = lines; *l; l++) {
        g_strchomp(*l); /* also drops a '\r' */
        const char *line = *l;
        if (!*line)
            continue;
        last = line;
        if (!have_counts && strstr(line, " packets transmitted, ")) {
            if (!parse_counts(line, &r)) {
                g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                            "Cannot read ping's statistics line: \"%.*s\"", LAST_LINE_MAX, line);
                return false;
            }
            have_counts = true;
        } else if (have_counts &&
                   (g_str_has_prefix(line, "rtt ") || g_str_has_prefix(line, "round-trip "))) {
            if (!parse_rtt(line, &r)) {
                g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                            "Cannot read ping's round-trip line: \"%.*s\"", LAST_LINE_MAX, line);
                return false;
            }
        }
    }

    if (!have_counts) {
        if (last)
            g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                        "ping printed no statistics; its last line was \"%.*s\"", LAST_LINE_MAX,
                        last);
        else
            g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "ping printed nothing");
        return false;
    }
    if (r.received > 0 && !r.have_rtt) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    "ping counted %u replies but printed no round-trip times", r.received);
        return false;
    }
    *ret = r;
    return true;
}

bool ml_ping_parse_runs(const char *text, struct ml_ping_result *ret, GError **err)
{
    g_return_val_if_fail(text != NULL, false);
    g_return_val_if_fail(ret != NULL, false);

    /* Each run ends in "--- ADDR ping statistics ---", its counts and its rtt line: splitting
     * at "--- " leaves one run's statistics at the head of each piece after the first. */
    struct ml_ping_result sum = {.mdev_ms = -1};
    double rtt_total = 0;
    unsigned runs = 0;
    g_auto(GStrv) pieces = g_strsplit(text, "--- ", -1);
    for (char **p = pieces; *p; p++) {
        if (!strstr(*p, " packets transmitted, "))
            continue;
        struct ml_ping_result r;
        if (!ml_ping_parse(*p, &r, err))
            return false;
        runs++;
        sum.transmitted += r.transmitted;
        sum.received += r.received;
        sum.errors += r.errors;
        sum.duplicates += r.duplicates;
        if (r.have_rtt) {
            sum.min_ms = sum.have_rtt ? MIN(sum.min_ms, r.min_ms) : r.min_ms;
            sum.max_ms = sum.have_rtt ? MAX(sum.max_ms, r.max_ms) : r.max_ms;
            rtt_total += r.avg_ms * r.received;
            sum.have_rtt = true;
        }
    }
    if (!runs)
        return ml_ping_parse(text, ret, err); /* says why there is no statistics line */
    if (sum.received)
        sum.avg_ms = rtt_total / sum.received;
    *ret = sum;
    return true;
}

GArray *ml_ping_rtts(const char *text)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
    g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
    for (char **l = lines; *l; l++) {
        const char *t = strstr(*l, " time=");
        if (!t || !strstr(*l, "icmp_seq=") || strstr(*l, "DUP!"))
            continue;
        char *end = NULL;
        double ms = g_ascii_strtod(t + 6, &end);
        if (end != t + 6 && isfinite(ms) && ms >= 0)
            g_array_append_val(a, ms);
    }
    return a;
}

unsigned ml_ping_cut_off(const char *text, unsigned transmitted, double interval_s)
{
    unsigned last = 0;
    double max_ms = -1;
    g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
    for (char **l = lines; *l; l++) {
        const char *seq = strstr(*l, "icmp_seq="), *t = strstr(*l, " time=");
        if (!seq || !t || strstr(*l, "DUP!"))
            continue;
        char *end = NULL;
        guint64 n = g_ascii_strtoull(seq + 9, &end, 10);
        double ms = g_ascii_strtod(t + 6, NULL);
        if (end == seq + 9 || n > G_MAXUINT)
            continue;
        last = MAX(last, (unsigned)n);
        if (isfinite(ms))
            max_ms = MAX(max_ms, ms);
    }
    if (max_ms < 0 || !(interval_s > 0) || transmitted <= last)
        return 0;
    /* iputils numbers its requests from 1: the ones after `last` are the tail. */
    unsigned tail = transmitted - last;
    double waited = ceil(2 * max_ms / 1000.0 / interval_s) + 1;
    return tail <= waited ? tail : 0;
}
