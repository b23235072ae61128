#include "cache/fetch.h"

#include "cache/checksum.h"
#include "core/util.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    PROGRESS_INTERVAL_S = 2,
    CONNECT_TIMEOUT_S = 30,
    /* A mirror slower than this for a whole minute is stuck, not slow. */
    LOW_SPEED_BYTES = 1024,
    LOW_SPEED_TIME_S = 60,
    SUMS_MAX_BYTES = 1 << 20,
    SUMS_DEADLINE_S = 120,
};

/* Tests only (ml_fetch_test_trust_ca). */
static char *test_ca_file;

struct transfer {
    CURL *curl;
    const char *url;
    const char *name; /* for progress lines */
    const char *what; /* what the file is, for messages */
    FILE *out;        /* the .part file, or NULL when collecting into mem */
    GString *mem;
    curl_off_t resume_from; /* bytes already in the .part file when the request was made */
    curl_off_t received;    /* bytes written by this transfer */
    guint64 max_bytes;      /* the whole file never exceeds this */
    double deadline_s;      /* nor does fetching it take longer, a restart included: */
    double until;           /* ml_now() at the deadline */
    bool too_big;
    bool deadline_hit;
    bool served_html; /* the last answer said Content-Type: text/html */
    char refused_redirect[1024];
    int io_errno;
    double started;
    double last_report;
};

static void curl_init_once(void)
{
    static gsize done;
    if (g_once_init_enter(&done)) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        g_once_init_leave(&done, 1);
    }
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct transfer *t = userdata;
    size_t len = size * nmemb;

    /* An error page must not end up in the .part file we resume from later. */
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 400)
        return 0;
    /* Content-Length may be absent or lie: the cap is counted here, on what arrives. */
    if ((guint64)(t->resume_from + t->received) + len > t->max_bytes) {
        t->too_big = true;
        return 0;
    }
    if (t->mem) {
        g_string_append_len(t->mem, ptr, (gssize)len);
    } else if (fwrite(ptr, 1, len, t->out) != len) {
        t->io_errno = errno;
        return 0;
    }
    t->received += (curl_off_t)len;
    return len;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    struct transfer *t = userdata;
    (void)ultotal;
    (void)ulnow;
    if (ml_interrupted())
        return 1; /* curl aborts with CURLE_ABORTED_BY_CALLBACK; the .part stays */
    if (!t->out)
        return 0;
    double now = ml_now();
    if (now - t->last_report < PROGRESS_INTERVAL_S)
        return 0;
    t->last_report = now;

    double secs = now - t->started > 0.001 ? now - t->started : 0.001;
    g_autofree char *rate = g_format_size((guint64)((double)dlnow / secs));
    g_autofree char *done = g_format_size((guint64)(t->resume_from + dlnow));
    if (dltotal > 0) {
        curl_off_t total = t->resume_from + dltotal;
        g_autofree char *total_s = g_format_size((guint64)total);
        ml_progress("fetch", "%s: %s of %s (%.0f%%), %s/s", t->name, done, total_s,
                    100.0 * (double)(t->resume_from + dlnow) / (double)total, rate);
    } else {
        ml_progress("fetch", "%s: %s, %s/s", t->name, done, rate);
    }
    return 0;
}

const char *ml_fetch_redirect_protocols(const char *url)
{
    if (url && g_ascii_strncasecmp(url, "https://", 8) == 0)
        return "https";
    if (url && g_ascii_strncasecmp(url, "http://", 7) == 0)
        return "http,https";
    return NULL;
}

void ml_fetch_test_trust_ca(const char *pem_path)
{
    g_free(test_ca_file);
    test_ca_file = g_strdup(pem_path);
}

static CURL *new_handle(struct transfer *t, char *errbuf)
{
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    t->curl = c;
    curl_easy_setopt(c, CURLOPT_URL, t->url);
    /* file:// lets a checksum list already in the cache stand in for the published one. */
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,file");
    const char *redir = ml_fetch_redirect_protocols(t->url);
    if (redir) {
        curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, redir);
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    }
    if (test_ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, test_ca_file);
    /* A Content-Length over the cap ends the transfer before any byte; on_write counts the
     * rest, since a server need not send one. */
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)t->max_bytes);
    double left_ms = (t->until - ml_now()) * 1000.0;
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)MAX(left_ms, 1.0));
    curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, (long)LOW_SPEED_BYTES);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)LOW_SPEED_TIME_S);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "meshlab/" MESHLAB_VERSION);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, t);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    return c;
}

/* What the end of a transfer says beyond its code: the answer's type, whether the deadline or
 * the cap ended it, and where a refused redirect pointed. */
static void note_end(struct transfer *t, CURLcode rc)
{
    char *type = NULL;
    if (curl_easy_getinfo(t->curl, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type)
        t->served_html = g_ascii_strncasecmp(type, "text/html", 9) == 0;
    if (rc == CURLE_FILESIZE_EXCEEDED)
        t->too_big = true;
    /* The connect and low-speed limits end a transfer with the same code, earlier. */
    if (rc == CURLE_OPERATION_TIMEDOUT && ml_now() >= t->until - 0.5)
        t->deadline_hit = true;
    char *at = NULL;
    if (rc == CURLE_UNSUPPORTED_PROTOCOL &&
        curl_easy_getinfo(t->curl, CURLINFO_EFFECTIVE_URL, &at) == CURLE_OK && at &&
        strcmp(at, t->url) != 0)
        g_strlcpy(t->refused_redirect, at, sizeof(t->refused_redirect));
}

static char *what_of(const struct transfer *t)
{
    return t->what ? g_strdup_printf("%s (%s)", t->url, t->what) : g_strdup(t->url);
}

/* Turns a failed transfer into one message: what failed, the URL, what to do. kept is the
 * .part file when it holds data the next run resumes from. */
static void set_transfer_error(const struct transfer *t, CURLcode rc, long status,
                               const char *errbuf, const char *kept, GError **err)
{
    const char *why = *errbuf ? errbuf : curl_easy_strerror(rc);
    g_autofree char *file = what_of(t);
    if (status >= 400) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "cannot download %s: the server answered HTTP %ld; check that the URL is "
                    "still published there (and any proxy settings), or fill the cache by hand",
                    file, status);
    } else if (rc == CURLE_ABORTED_BY_CALLBACK && ml_interrupted()) {
        if (kept)
            g_set_error(err, ML_ERROR, ML_ERR_INTERRUPTED,
                        "download of %s interrupted; '%s' keeps what arrived and the next run "
                        "resumes from there",
                        file, kept);
        else
            g_set_error(err, ML_ERROR, ML_ERR_INTERRUPTED, "download of %s interrupted", file);
    } else if (t->io_errno) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "cannot store %s: %s; free some disk space or "
                    "point MESHLAB_CACHE_DIR elsewhere",
                    file, g_strerror(t->io_errno));
    } else if (t->too_big) {
        g_autofree char *cap = g_format_size_full(t->max_bytes, G_FORMAT_SIZE_LONG_FORMAT);
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "cannot download %s: it is larger than its cap of %s, so the server sends "
                    "something other than that file (or data without end); the transfer was "
                    "stopped and nothing was kept. Check the URL and the mirror; if the "
                    "publisher's file really is that large now, raise its cap in meshlab's "
                    "source (src/cache/)",
                    file, cap);
    } else if (t->deadline_hit) {
        g_autofree char *got = g_format_size((guint64)(t->resume_from + t->received));
        if (kept)
            g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                        "cannot download %s: the transfer passed its deadline of %.0f s with "
                        "%s in hand and was stopped; '%s' keeps what arrived. Run the command "
                        "again to resume, or use a faster mirror",
                        file, t->deadline_s, got, kept);
        else
            g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                        "cannot download %s: the transfer passed its deadline of %.0f s and was "
                        "stopped; the server is too slow, try again later or use another mirror",
                        file, t->deadline_s);
    } else if (*t->refused_redirect) {
        const char *rule = ml_fetch_redirect_protocols(t->url);
        const char *allowed = !rule                        ? "nowhere"
                              : g_str_equal(rule, "https") ? "https"
                                                           : "http or https";
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "cannot download %s: the server redirected to %s, but a redirect from this "
                    "URL may only lead to %s (a download that starts on https stays on it); "
                    "nothing was downloaded. Use a URL or mirror that serves it that way "
                    "throughout",
                    file, t->refused_redirect, allowed);
    } else if (kept) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "cannot download %s: %s; what arrived is kept in '%s', run the command again "
                    "to resume",
                    file, why, kept);
    } else {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "cannot download %s: %s; check the network and any proxy settings "
                    "(https_proxy), or fill the cache by hand",
                    file, why);
    }
}

/* Refuses what is not a checksum list: an HTML page (served as text/html, or reading like one)
 * or text other than "HASH [NAME]" lines. done says what became of the copy, for the message. */
static bool check_sums_text(const char *text, size_t len, bool served_html, const char *url,
                            const char *done, GError **err)
{
    if (served_html || ml_fetch_looks_like_html(text, len)) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "%s is an HTML page, not a checksum list: the mirror returned HTML (a "
                    "captive portal, a login page or a proxy's error page answered in its place, "
                    "or the mirror does not carry the file); %s. Log in to the network or get "
                    "past the proxy, or use another mirror, then run the command again",
                    url, done);
        return false;
    }
    int bad = 0;
    if (ml_sha256_list_valid(text, len, &bad))
        return true;
    g_autofree char *copy = g_strndup(text, len);
    g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
    g_autofree char *start =
        bad > 0 && bad <= (int)g_strv_length(lines) ? g_strndup(lines[bad - 1], 60) : NULL;
    g_autofree char *shown = start ? g_strescape(start, NULL) : NULL;
    g_autofree char *where =
        shown ? g_strdup_printf("line %d reads \"%s\"", bad, shown)
              : g_strdup(memchr(text, '\0', len) ? "it holds binary data" : "it lists nothing");
    g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                "%s is not a checksum list (%s, where 'SHA256  NAME' lines were expected); %s. "
                "Check the URL and the mirror, then run the command again",
                url, where, done);
    return false;
}

/* A checksum list is small; it is kept in memory and never cached as a .part. */
static char *fetch_small(const char *url, GError **err)
{
    curl_init_once();
    char errbuf[CURL_ERROR_SIZE] = "";
    g_autoptr(GString) mem = g_string_new(NULL);
    struct transfer t = {.url = url,
                         .what = "a checksum list",
                         .mem = mem,
                         .max_bytes = SUMS_MAX_BYTES,
                         .deadline_s = SUMS_DEADLINE_S,
                         .until = ml_now() + SUMS_DEADLINE_S};
    CURL *c = new_handle(&t, errbuf);
    if (!c) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot download %s: libcurl failed to start",
                    url);
        return NULL;
    }
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    note_end(&t, rc);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK || status >= 400) {
        set_transfer_error(&t, rc, status, errbuf, NULL, err);
        return NULL;
    }
    if (!check_sums_text(mem->str, mem->len, t.served_html, url, "nothing was kept", err))
        return NULL;
    return g_strdup(mem->str);
}

/* Refuses what would block a read for ever (a FIFO) or never end (a device). */
static bool check_regular(const char *path, const struct stat *st, GError **err)
{
    if (S_ISREG(st->st_mode))
        return true;
    g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                "'%s' is not a regular file (a FIFO, a device or a directory stands in the "
                "cache under that name); remove it and run the command again",
                path);
    return false;
}

char *ml_fetch_sha256_file(const char *path, GError **err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read '%s': %s", path, g_strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!check_regular(path, &st, err)) {
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read '%s': %s", path, g_strerror(errno));
        close(fd);
        return NULL;
    }
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    g_autofree guchar *buf = g_malloc(1 << 20);
    size_t n;
    while ((n = fread(buf, 1, 1 << 20, f)) > 0)
        g_checksum_update(sum, buf, (gssize)n);
    bool failed = ferror(f);
    int saved = errno;
    fclose(f);
    if (failed) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read '%s': %s", path, g_strerror(saved));
        return NULL;
    }
    return g_strdup(g_checksum_get_string(sum));
}

bool ml_fetch_looks_like_html(const char *head, size_t len)
{
    g_autofree char *low = g_ascii_strdown(head, (gssize)MIN(len, 1024));
    return strstr(low, "<!doctype html") || strstr(low, "<html") || strstr(low, "<head") ||
           strstr(low, "<body") || strstr(low, "<title");
}

/* " (an HTML page: ...)" when the file at path is one, else "". */
static const char *html_hint(const char *path)
{
    char head[1024];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(head, 1, sizeof(head), f) : 0;
    if (f)
        fclose(f);
    return n && ml_fetch_looks_like_html(head, n)
               ? " (it is an HTML page: a captive portal, a login page or a proxy answered in "
                 "place of the file; log in to the network or get past the proxy first)"
               : "";
}

/* What the file must hash to, from each source that has an opinion. */
struct expectations {
    char *pinned;
    char *sums;
    char *known;
    char *known_text; /* the whole known-hashes file, to append to */
};

static void expectations_clear(struct expectations *e)
{
    g_free(e->pinned);
    g_free(e->sums);
    g_free(e->known);
    g_free(e->known_text);
}

static bool gather_expectations(const struct ml_fetch_request *req, struct expectations *e,
                                GError **err)
{
    if (req->expected_sha256) {
        if (!ml_sha256_hex_valid(req->expected_sha256)) {
            g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                        "the pinned hash '%s' for %s is not a SHA-256 (64 hex digits)",
                        req->expected_sha256, req->url);
            return false;
        }
        e->pinned = g_ascii_strdown(req->expected_sha256, -1);
    }
    if (req->sums_url) {
        const char *name = req->sums_name ? req->sums_name : "";
        g_autofree char *text = fetch_small(req->sums_url, err);
        if (!text)
            return false;
        e->sums = ml_sha256_list_lookup(text, name);
        if (!e->sums) {
            g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                        "the checksum list %s has no entry for '%s'; the release directory does "
                        "not hold that file, check the URL",
                        req->sums_url, name);
            return false;
        }
        /* Fail before a long download that could never verify. */
        if (e->pinned && strcmp(e->pinned, e->sums) != 0) {
            g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                        "the pinned SHA-256 %s for %s disagrees with %s, which lists %s; the pin "
                        "or the checksum list is wrong, fix the catalogue entry",
                        e->pinned, req->url, req->sums_url, e->sums);
            return false;
        }
    }
    if (req->known_hashes) {
        g_autoptr(GError) read_err = NULL;
        if (!g_file_get_contents(req->known_hashes, &e->known_text, NULL, &read_err)) {
            if (!g_error_matches(read_err, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
                g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read the known hashes: %s",
                            read_err->message);
                return false;
            }
            e->known_text = g_strdup("");
        }
        e->known = ml_sha256_list_lookup(e->known_text, req->url);
    }
    return true;
}

/* Checks path against every expectation; on a mismatch deletes it (and the other copy). */
static bool verify_file(const struct ml_fetch_request *req, const struct expectations *e,
                        const char *path, const char *other, char **ret_hash, GError **err)
{
    g_autofree char *got = ml_fetch_sha256_file(path, err);
    if (!got)
        return false;

    const char *want = NULL;
    g_autofree char *what = NULL;
    if (e->pinned && strcmp(got, e->pinned) != 0) {
        want = e->pinned;
        what = g_strdup("the pinned hash");
    } else if (e->sums && strcmp(got, e->sums) != 0) {
        want = e->sums;
        what = g_strdup_printf("the entry for '%s' in %s", req->sums_name, req->sums_url);
    }
    if (want) {
        const char *hint = html_hint(path);
        unlink(path);
        unlink(other);
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "SHA-256 of %s does not match %s: expected %s, got %s%s; the file was "
                    "deleted. Run the command again to download it afresh; if it fails again, "
                    "the mirror serves another file than the one pinned",
                    req->url, what, want, got, hint);
        return false;
    }
    if (e->known && strcmp(got, e->known) != 0) {
        unlink(path);
        unlink(other);
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "%s has changed since it was first downloaded: '%s' recorded SHA-256 %s, the "
                    "file now has %s; the file was deleted. If the change is expected, remove its "
                    "line from '%s' and run the command again",
                    req->url, req->known_hashes, e->known, got, req->known_hashes);
        return false;
    }
    *ret_hash = g_steal_pointer(&got);
    return true;
}

static bool record_known(const struct ml_fetch_request *req, const struct expectations *e,
                         const char *hash, GError **err)
{
    if (!req->known_hashes || e->known)
        return true;
    g_autofree char *dir = g_path_get_dirname(req->known_hashes);
    if (!ml_mkdir_p(dir, 0755, err))
        return false;
    size_t len = strlen(e->known_text);
    g_autofree char *text =
        g_strdup_printf("%s%s%s  %s\n", e->known_text,
                        len && e->known_text[len - 1] != '\n' ? "\n" : "", hash, req->url);
    return ml_write_file(req->known_hashes, text, -1, 0644, err);
}

/* Transfers url into part, resuming from what part already holds. Sets *ret_html when the
 * answer was served as text/html. */
static bool download_part(const struct ml_fetch_request *req, const char *part, bool *ret_html,
                          GError **err)
{
    curl_init_once();
    g_autofree char *name = g_path_get_basename(req->dest);
    double until = ml_now() + req->deadline_s;
    for (int attempt = 0;; attempt++) {
        struct stat st;
        curl_off_t have = stat(part, &st) == 0 ? (curl_off_t)st.st_size : 0;
        if ((guint64)have > req->max_bytes) {
            unlink(part); /* from before the cap, or another file: nothing to resume */
            have = 0;
        }
        FILE *out = fopen(part, "ab");
        if (!out) {
            g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot create '%s': %s", part,
                        g_strerror(errno));
            return false;
        }
        char errbuf[CURL_ERROR_SIZE] = "";
        struct transfer t = {.url = req->url,
                             .name = name,
                             .what = req->what,
                             .out = out,
                             .resume_from = have,
                             .max_bytes = req->max_bytes,
                             .deadline_s = req->deadline_s,
                             .until = until};
        t.started = t.last_report = ml_now();
        CURL *c = new_handle(&t, errbuf);
        if (!c) {
            fclose(out);
            g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot download %s: libcurl failed to start",
                        req->url);
            return false;
        }
        if (have > 0) {
            g_autofree char *have_s = g_format_size((guint64)have);
            ml_progress("fetch", "resuming %s after %s", name, have_s);
            curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, have);
        } else {
            ml_progress("fetch", "downloading %s", req->url);
        }

        CURLcode rc = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_off_t got = 0;
        curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &got);
        note_end(&t, rc);
        curl_easy_cleanup(c);
        if (fclose(out) != 0 && rc == CURLE_OK && !t.io_errno)
            t.io_errno = errno;
        /* The server ignored the Range (CURLE_RANGE_ERROR: it answered 200), or the .part is
         * already as long as the file or longer (416: the file may have changed; the hash
         * cannot tell). Either way the .part is worthless: start over, once. */
        if ((rc == CURLE_RANGE_ERROR || status == 416) && have > 0 && attempt == 0) {
            ml_progress("fetch", "%s: the server cannot resume this download; starting over", name);
            unlink(part);
            continue;
        }
        if (rc != CURLE_OK || status >= 400 || t.io_errno) {
            /* Past the cap nothing is worth resuming: the server sends another file. */
            bool kept = !t.too_big && stat(part, &st) == 0 && st.st_size > 0;
            if (!kept)
                unlink(part); /* nothing to resume from */
            set_transfer_error(&t, rc, status, errbuf, kept ? part : NULL, err);
            return false;
        }
        double secs = ml_now() - t.started;
        g_autofree char *got_s = g_format_size((guint64)got);
        ml_progress("fetch", "%s: %s in %.1fs", name, got_s, secs);
        *ret_html = t.served_html;
        return true;
    }
}

/* An HTML page that an earlier meshlab recorded as a checksum list: its line in known-hashes
 * would refuse the real list for ever, so it goes with the page. */
static void forget_known(const struct ml_fetch_request *req, const struct expectations *e,
                         const char *path)
{
    if (!req->known_hashes || !e->known)
        return;
    g_autofree char *got = ml_fetch_sha256_file(path, NULL);
    if (!got || strcmp(got, e->known) != 0)
        return;
    g_autofree char *line = g_strdup_printf("%s  %s", got, req->url);
    g_autoptr(GString) kept = g_string_new(NULL);
    g_auto(GStrv) lines = g_strsplit(e->known_text, "\n", -1);
    for (char **l = lines; *l; l++) {
        g_autofree char *stripped = g_strstrip(g_strdup(*l));
        if (*stripped && strcmp(stripped, line) != 0)
            g_string_append_printf(kept, "%s\n", *l);
    }
    if (ml_write_file(req->known_hashes, kept->str, (gssize)kept->len, 0644, NULL))
        ml_warn("forgot the hash '%s' recorded for %s: it was not a checksum list", got, req->url);
}

/* A checksum list must read as one before it is trusted or recorded; path (with other) is
 * deleted when it does not. */
static bool check_form(const struct ml_fetch_request *req, const struct expectations *e,
                       const char *path, const char *other, bool served_html, GError **err)
{
    if (req->form != ML_FETCH_SUMS)
        return true;
    g_autofree char *text = NULL;
    gsize len = 0;
    struct stat st;
    g_autoptr(GError) read_err = NULL;
    bool ok = false;
    g_autofree char *done = g_strdup_printf("'%s' was deleted and nothing was recorded", path);
    g_autofree char *label =
        req->what ? g_strdup_printf("%s (%s)", req->url, req->what) : g_strdup(req->url);
    if (stat(path, &st) == 0 && (guint64)st.st_size > req->max_bytes) {
        g_autofree char *cap = g_format_size_full(req->max_bytes, G_FORMAT_SIZE_LONG_FORMAT);
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "'%s' is larger than %s, the cap of the checksum list %s; %s. Run the "
                    "command again to download it afresh",
                    path, cap, label, done);
    } else if (!g_file_get_contents(path, &text, &len, &read_err)) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read the checksum list: %s",
                    read_err->message);
        return false;
    } else {
        ok = check_sums_text(text, len, served_html, label, done, err);
    }
    if (!ok) {
        forget_known(req, e, path);
        unlink(path);
        unlink(other);
    }
    return ok;
}

/* One meshlab at a time fetches into a directory: two would append to the same .part, and the
 * second to write known-hashes would drop the first's record. Returns the locked directory's
 * fd, or -1 (interrupted, or the directory cannot be opened). */
static int lock_dir(const char *dir, GError **err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot open '%s': %s", dir, g_strerror(errno));
        return -1;
    }
    bool told = false;
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot lock '%s': %s", dir,
                        g_strerror(errno));
            close(fd);
            return -1;
        }
        if (!told)
            ml_progress("fetch", "another meshlab is downloading into %s; waiting for it", dir);
        told = true;
        if (ml_check_interrupted(err)) {
            close(fd);
            return -1;
        }
        g_usleep(200 * 1000);
    }
    return fd;
}

static bool fetch_locked(const struct ml_fetch_request *req, GError **err);

bool ml_fetch(const struct ml_fetch_request *request, GError **err)
{
    g_return_val_if_fail(request && request->url && request->dest, false);
    if (ml_check_interrupted(err))
        return false;
    g_autofree char *dir = g_path_get_dirname(request->dest);
    if (!ml_mkdir_p(dir, 0755, err))
        return false;
    int lock = lock_dir(dir, err);
    if (lock < 0)
        return false;
    bool ok = fetch_locked(request, err);
    close(lock);
    return ok;
}

static bool fetch_locked(const struct ml_fetch_request *request, GError **err)
{
    struct ml_fetch_request r = *request;
    const struct ml_fetch_request *req = &r;
    if (!r.max_bytes)
        r.max_bytes = ML_FETCH_DEFAULT_MAX_BYTES;
    if (r.deadline_s <= 0)
        r.deadline_s = ML_FETCH_DEFAULT_DEADLINE_S;
    if (req->sums_url && !req->sums_name) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "a checksum list for %s needs the file name to look up in it", req->url);
        return false;
    }

    g_autofree char *part = g_strconcat(req->dest, ".part", NULL);
    const char *mine[] = {req->dest, part, req->known_hashes};
    for (size_t i = 0; i < G_N_ELEMENTS(mine); i++) {
        struct stat st;
        if (mine[i] && stat(mine[i], &st) == 0 && !check_regular(mine[i], &st, err))
            return false;
    }

    struct expectations e = {0};
    g_autofree char *hash = NULL;
    bool ok = gather_expectations(req, &e, err);

    if (ok && g_file_test(req->dest, G_FILE_TEST_EXISTS)) {
        /* Already here (an earlier run, or copied in by hand): verify, never re-download. */
        ok = check_form(req, &e, req->dest, part, false, err) &&
             verify_file(req, &e, req->dest, part, &hash, err) && record_known(req, &e, hash, err);
        expectations_clear(&e);
        return ok;
    }
    bool html = false;
    if (ok) {
        ok = download_part(req, part, &html, err) &&
             check_form(req, &e, part, req->dest, html, err) &&
             verify_file(req, &e, part, req->dest, &hash, err);
    }
    if (ok && (chmod(part, 0644) != 0 || rename(part, req->dest) != 0)) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot move '%s' to '%s': %s", part, req->dest,
                    g_strerror(errno));
        ok = false;
    }
    ok = ok && record_known(req, &e, hash, err);
    expectations_clear(&e);
    return ok;
}
