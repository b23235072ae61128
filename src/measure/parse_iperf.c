#include "measure/parse_iperf.h"

#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "core/util.h"

/* A long run with per-second intervals stays far below this; anything larger is not iperf3. */
#define IPERF_JSON_MAX (16 * 1024 * 1024)
/* 2^53 bytes (a double's exact integers) and an hour: no interval comes near either. */
#define IPERF_INTERVAL_BYTES_MAX 9007199254740992.0
#define IPERF_INTERVAL_S_MAX 3600

static struct json_object *get_section(struct json_object *end, const char *key, GError **err)
{
    struct json_object *o = NULL;
    if (!json_object_object_get_ex(end, key, &o) || !json_object_is_type(o, json_type_object)) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    "iperf3 output has no end.%s object; was it run as a client with -J?", key);
        return NULL;
    }
    return o;
}

static bool get_count(struct json_object *sec, const char *sec_name, const char *key, uint64_t *ret,
                      GError **err)
{
    struct json_object *o = NULL;
    if (!json_object_object_get_ex(sec, key, &o) || !json_object_is_type(o, json_type_int)) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 output has no integer end.%s.%s",
                    sec_name, key);
        return false;
    }
    /* json-c parses into int64 and flags values beyond it; bytes are never negative. */
    int64_t v = json_object_get_int64(o);
    if (v < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 output has a negative end.%s.%s",
                    sec_name, key);
        return false;
    }
    *ret = (uint64_t)v;
    return true;
}

static bool get_number(struct json_object *sec, const char *sec_name, const char *key, double *ret,
                       GError **err)
{
    struct json_object *o = NULL;
    /* iperf3 writes whole values such as 0 without a fraction, which json-c types as int. */
    if (!json_object_object_get_ex(sec, key, &o) ||
        !(json_object_is_type(o, json_type_double) || json_object_is_type(o, json_type_int))) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 output has no number end.%s.%s",
                    sec_name, key);
        return false;
    }
    double v = json_object_get_double(o);
    if (!isfinite(v) || v < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 output has an invalid end.%s.%s: %g",
                    sec_name, key, v);
        return false;
    }
    *ret = v;
    return true;
}

static struct json_object *parse_document(const char *text, GError **err)
{
    size_t len = strlen(text);
    if (len > IPERF_JSON_MAX) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    "iperf3 output is %zu bytes, more than the %d accepted", len, IPERF_JSON_MAX);
        return NULL;
    }
    if (strspn(text, " \t\r\n") == len) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 printed nothing; expected JSON (-J)");
        return NULL;
    }

    struct json_tokener *tok = json_tokener_new();
    struct json_object *doc = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);

    if (!doc || jerr != json_tokener_success) {
        const char *why =
            jerr == json_tokener_continue ? "it ends too early" : json_tokener_error_desc(jerr);
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 output is not JSON: %s", why);
        json_object_put(doc);
        return NULL;
    }
    if (strspn(text + used, " \t\r\n") != len - used) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    "iperf3 output has text after its JSON document (at byte %zu)", used);
        json_object_put(doc);
        return NULL;
    }
    if (!json_object_is_type(doc, json_type_object)) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 output is JSON but not an object");
        json_object_put(doc);
        return NULL;
    }
    return doc;
}

/* ---- optional fields: a missing or mistyped one is unknown, never an error ---- */

static struct json_object *member(struct json_object *o, const char *key, json_type type)
{
    struct json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type) ? v : NULL;
}

/* A finite number >= 0 (iperf3 writes whole values without a fraction: json-c types them int). */
static bool opt_number(struct json_object *o, const char *key, double *ret)
{
    struct json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, key, &v) ||
        !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
        return false;
    double x = json_object_get_double(v);
    if (!isfinite(x) || x < 0)
        return false;
    *ret = x;
    return true;
}

static bool opt_count(struct json_object *o, const char *key, int64_t *ret)
{
    struct json_object *v = member(o, key, json_type_int);
    if (!v || json_object_get_int64(v) < 0)
        return false;
    *ret = json_object_get_int64(v);
    return true;
}

static void opt_string(struct json_object *o, const char *key, char *buf, size_t size)
{
    struct json_object *v = member(o, key, json_type_string);
    if (v)
        g_strlcpy(buf, json_object_get_string(v), size);
}

/* One interval's sum (and its reverse under --bidir): bytes and seconds. */
static bool interval_sum(struct json_object *iv, const char *key, double *bytes, double *secs)
{
    struct json_object *sum = NULL, *b = NULL, *s = NULL;
    if (!json_object_object_get_ex(iv, key, &sum) || !json_object_object_get_ex(sum, "bytes", &b) ||
        !json_object_object_get_ex(sum, "seconds", &s) || !json_object_is_type(b, json_type_int))
        return false;
    *bytes = (double)json_object_get_int64(b);
    *secs = json_object_get_double(s);
    return *bytes >= 0 && isfinite(*secs) && *secs >= 0;
}

/* The smallest pmtu of an interval's sending streams; -1 when none has one. */
static int64_t interval_pmtu(struct json_object *iv)
{
    struct json_object *streams = member(iv, "streams", json_type_array);
    int64_t least = -1, v;
    for (size_t i = 0; streams && i < json_object_array_length(streams); i++) {
        struct json_object *st = json_object_array_get_idx(streams, i);
        struct json_object *sender = member(st, "sender", json_type_boolean);
        if (sender && json_object_get_boolean(sender) && opt_count(st, "pmtu", &v) && v > 0)
            least = least < 0 ? v : MIN(least, v);
    }
    return least;
}

static bool read_intervals(struct json_object *doc, struct ml_iperf_result *r, GError **err)
{
    struct json_object *ivs = NULL;
    /* iperf3 -J always writes them; a document without is read for its end figures alone. */
    if (!json_object_object_get_ex(doc, "intervals", &ivs))
        return true;
    if (!json_object_is_type(ivs, json_type_array)) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 output's \"intervals\" is not an array");
        return false;
    }
    size_t n = json_object_array_length(ivs);
    for (size_t i = 0; i < n && r->n_intervals < ML_IPERF_INTERVALS_MAX; i++) {
        struct json_object *iv = json_object_array_get_idx(ivs, i);
        double bytes = 0, secs = 0, back = 0, back_s = 0;
        if (!interval_sum(iv, "sum", &bytes, &secs)) {
            g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                        "iperf3 output has no bytes and seconds in intervals[%zu].sum", i);
            return false;
        }
        if (json_object_object_get_ex(iv, "sum_bidir_reverse", NULL) &&
            !interval_sum(iv, "sum_bidir_reverse", &back, &back_s)) {
            g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                        "iperf3 output has no bytes in intervals[%zu].sum_bidir_reverse", i);
            return false;
        }
        /* Far beyond any real interval; keeps the warm-up's sums below overflow. */
        if (bytes + back > IPERF_INTERVAL_BYTES_MAX || secs > IPERF_INTERVAL_S_MAX) {
            g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                        "iperf3 output's intervals[%zu] claims %.0f bytes in %g s; no interval "
                        "of a pass has more than %.0f bytes or lasts over %d s",
                        i, bytes + back, secs, IPERF_INTERVAL_BYTES_MAX, IPERF_INTERVAL_S_MAX);
            return false;
        }
        struct json_object *sum = member(iv, "sum", json_type_object);
        struct json_object *omitted = member(sum, "omitted", json_type_boolean);
        bool warm_up = omitted && json_object_get_boolean(omitted);
        r->interval_bytes[r->n_intervals] = bytes + back;
        r->interval_s[r->n_intervals] = secs;
        r->interval_omitted[r->n_intervals] = warm_up;
        r->n_intervals++;
        if (warm_up)
            r->omitted_s += secs;
        int64_t pmtu = interval_pmtu(iv);
        if (pmtu > 0)
            r->pmtu = pmtu;
    }
    return true;
}

/* The warm-up's bytes in doc's intervals marked omitted, as its end counted them: sent[0] and
 * received[0] of end.sum's direction (intervals' "sum"), sent[1] and received[1] of the other
 * under --bidir ("sum_bidir_reverse"), by each sum's "sender" flag. The client's document and,
 * under --get-server-output, the server's: every sum of 3.12's intervals says which it is. */
static void warm_up_bytes(struct json_object *doc, double sent[2], double received[2])
{
    struct json_object *ivs = member(doc, "intervals", json_type_array);
    for (size_t i = 0; ivs && i < json_object_array_length(ivs); i++) {
        struct json_object *iv = json_object_array_get_idx(ivs, i);
        static const char *const keys[] = {"sum", "sum_bidir_reverse"};
        for (size_t k = 0; k < G_N_ELEMENTS(keys); k++) {
            struct json_object *sum = member(iv, keys[k], json_type_object);
            struct json_object *omitted = member(sum, "omitted", json_type_boolean);
            struct json_object *sender = member(sum, "sender", json_type_boolean);
            double bytes = 0, secs = 0;
            if (!omitted || !json_object_get_boolean(omitted) || !sender ||
                !interval_sum(iv, keys[k], &bytes, &secs) || bytes > IPERF_INTERVAL_BYTES_MAX)
                continue;
            (json_object_get_boolean(sender) ? sent : received)[k] += bytes;
        }
    }
}

/* omitted_bytes: the warm-up as its receivers counted it, the client's received intervals and
 * the server's (server_output_json). The sender's count is not the payload: what sat in its
 * socket buffer when the omit timer fired is counted there and again in end.sum_received. So
 * a warm-up the client sent needs the server's document, and without it the figures would read
 * high: that fails. */
static bool read_warm_up(struct json_object *doc, struct ml_iperf_result *r, GError **err)
{
    double sent[2] = {0}, received[2] = {0}, server_sent[2] = {0}, server_received[2] = {0};
    warm_up_bytes(doc, sent, received);
    struct json_object *server = member(doc, "server_output_json", json_type_object);
    if (server)
        warm_up_bytes(server, server_sent, server_received);
    if (sent[0] + sent[1] > 0 && !server) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    "iperf3's output counts the %.0f bytes of the warm-up (-O) only as the client "
                    "sent them: the receiver's count, server_output_json (--get-server-output, "
                    "the server run with -J), is missing, and without it the payload would read "
                    "high",
                    sent[0] + sent[1]);
        return false;
    }
    r->omitted_bytes =
        (uint64_t)(received[0] + received[1] + server_received[0] + server_received[1]);
    r->omitted_sent_bytes = (uint64_t)(sent[0] + server_sent[0]);
    r->omitted_received_bytes = (uint64_t)(received[0] + server_received[0]);
    /* Under -R the server sent it: its count came back only with its document. */
    r->omitted_sent_unknown = r->omitted_received_bytes > 0 && r->omitted_sent_bytes == 0;
    /* --bidir's other direction: the server sent it, the client received it. */
    r->omitted_sent_reverse_bytes = (uint64_t)(sent[1] + server_sent[1]);
    r->omitted_received_reverse_bytes = (uint64_t)(received[1] + server_received[1]);
    r->reverse_sent_unknown =
        r->omitted_received_reverse_bytes > 0 && r->omitted_sent_reverse_bytes == 0;
    return true;
}

/* What start says of the run: -O, the protocol, the MSS. */
static void read_start(struct json_object *doc, struct ml_iperf_result *r)
{
    struct json_object *start = member(doc, "start", json_type_object);
    struct json_object *test = member(start, "test_start", json_type_object);
    struct json_object *proto = member(test, "protocol", json_type_string);
    int64_t v = 0;
    if (opt_count(test, "omit", &v) && v <= 600)
        r->omit_s = (unsigned)v;
    if (opt_count(test, "blksize", &v) && v > 0)
        r->blksize = (uint64_t)v;
    if (opt_count(test, "num_streams", &v) && v > 0 && v <= 128)
        r->streams = (unsigned)v;
    r->udp = proto && strcmp(json_object_get_string(proto), "UDP") == 0;
    if ((opt_count(start, "tcp_mss", &v) && v > 0) ||
        (opt_count(start, "tcp_mss_default", &v) && v > 0))
        r->tcp_mss = v;
}

/* The client's sending sockets' RTT and the congestion control, from end. */
static void read_tcp(struct json_object *end, struct ml_iperf_result *r)
{
    struct json_object *streams = member(end, "streams", json_type_array);
    double sum = 0, mean, max, min;
    unsigned n = 0;
    opt_string(end, "sender_tcp_congestion", r->sender_congestion, sizeof(r->sender_congestion));
    opt_string(end, "receiver_tcp_congestion", r->receiver_congestion,
               sizeof(r->receiver_congestion));
    for (size_t i = 0; streams && i < json_object_array_length(streams); i++) {
        struct json_object *snd =
            member(json_object_array_get_idx(streams, i), "sender", json_type_object);
        struct json_object *mine = member(snd, "sender", json_type_boolean);
        if (!mine || !json_object_get_boolean(mine) || !opt_number(snd, "mean_rtt", &mean) ||
            !(mean > 0))
            continue;
        sum += mean;
        n++;
        if (opt_number(snd, "max_rtt", &max) && max > 0)
            r->rtt_max_us = isnan(r->rtt_max_us) ? max : MAX(r->rtt_max_us, max);
        if (opt_number(snd, "min_rtt", &min) && min > 0)
            r->rtt_min_us = isnan(r->rtt_min_us) ? min : MIN(r->rtt_min_us, min);
    }
    if (n)
        r->rtt_mean_us = sum / n;
}

/* end.sum of a UDP run: the receiver's loss and jitter, sent back to the client. */
static void read_udp(struct json_object *end, struct ml_iperf_result *r)
{
    struct json_object *sum = member(end, "sum", json_type_object);
    if (!r->udp)
        return;
    if (!opt_number(sum, "jitter_ms", &r->jitter_ms))
        r->jitter_ms = NAN;
    if (!opt_number(sum, "lost_percent", &r->lost_percent) || r->lost_percent > 100)
        r->lost_percent = NAN;
    if (!opt_count(sum, "lost_packets", &r->lost_packets))
        r->lost_packets = -1;
    if (!opt_count(sum, "packets", &r->packets))
        r->packets = -1;
}

bool ml_iperf_parse(const char *json_text, struct ml_iperf_result *ret, GError **err)
{
    g_return_val_if_fail(json_text != NULL, false);
    g_return_val_if_fail(ret != NULL, false);

    struct json_object *doc = parse_document(json_text, err);
    if (!doc)
        return false;

    bool ok = false;
    struct ml_iperf_result r = {.retransmits = -1,
                                .tcp_mss = -1,
                                .rtt_mean_us = NAN,
                                .rtt_max_us = NAN,
                                .rtt_min_us = NAN,
                                .pmtu = -1,
                                .jitter_ms = NAN,
                                .lost_percent = NAN,
                                .lost_packets = -1,
                                .packets = -1};
    struct json_object *o = NULL, *end, *recv, *sent, *back = NULL, *sent_back = NULL;

    if (json_object_object_get_ex(doc, "error", &o)) {
        const char *msg =
            json_object_is_type(o, json_type_string) ? json_object_get_string(o) : "(no message)";
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 failed: %s", msg);
        goto out;
    }
    if (!json_object_object_get_ex(doc, "end", &end) ||
        !json_object_is_type(end, json_type_object)) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "iperf3 output has no \"end\" object");
        goto out;
    }
    if (!(recv = get_section(end, "sum_received", err)) ||
        !(sent = get_section(end, "sum_sent", err)))
        goto out;
    if (!get_count(recv, "sum_received", "bytes", &r.bytes_received, err) ||
        !get_number(recv, "sum_received", "bits_per_second", &r.bits_per_second_received, err) ||
        !get_number(recv, "sum_received", "seconds", &r.seconds, err) ||
        !get_count(sent, "sum_sent", "bytes", &r.bytes_sent, err))
        goto out;

    if (json_object_object_get_ex(end, "sum_received_bidir_reverse", &back) &&
        (!get_count(back, "sum_received_bidir_reverse", "bytes", &r.bytes_received_reverse, err) ||
         !get_number(back, "sum_received_bidir_reverse", "bits_per_second",
                     &r.payload_bits_per_second, err)))
        goto out;
    /* What the server sent back: its tail, and its retransmits (below). */
    if (json_object_object_get_ex(end, "sum_sent_bidir_reverse", &sent_back) &&
        !get_count(sent_back, "sum_sent_bidir_reverse", "bytes", &r.bytes_sent_reverse, err))
        goto out;
    r.payload_bytes = r.bytes_received + r.bytes_received_reverse;
    r.payload_bits_per_second += r.bits_per_second_received;
    if (!read_intervals(doc, &r, err) || !read_warm_up(doc, &r, err))
        goto out;
    read_start(doc, &r);
    read_tcp(end, &r);
    read_udp(end, &r);

    if (json_object_object_get_ex(sent, "retransmits", &o)) {
        if (!json_object_is_type(o, json_type_int) || json_object_get_int64(o) < 0) {
            g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                        "iperf3 output has an invalid end.sum_sent.retransmits");
            goto out;
        }
        r.retransmits = json_object_get_int64(o);
        /* --bidir: the server's sending sockets retransmit too. */
        if (sent_back && json_object_object_get_ex(sent_back, "retransmits", &o) &&
            json_object_is_type(o, json_type_int) && json_object_get_int64(o) > 0) {
            /* Two counts near INT64_MAX are nonsense, not a sum: held at the largest. */
            int64_t more = json_object_get_int64(o);
            r.retransmits = more > INT64_MAX - r.retransmits ? INT64_MAX : r.retransmits + more;
        }
    }

    *ret = r;
    ok = true;
out:
    json_object_put(doc);
    return ok;
}
