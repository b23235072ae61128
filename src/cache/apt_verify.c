#include "cache/apt_verify.h"

#include "cache/checksum.h"
#include "cache/fetch.h"
#include "core/spawn.h"
#include "core/util.h"

#include <errno.h>
#include <gio/gio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLEARSIGN_BEGIN "-----BEGIN PGP SIGNED MESSAGE-----"
#define SIGNATURE_BEGIN "-----BEGIN PGP SIGNATURE-----"
#define SIGNATURE_END "-----END PGP SIGNATURE-----"
#define STATUS_PREFIX "[GNUPG:] "

enum {
    SNIFF_BYTES = 1024,
    INRELEASE_MAX_BYTES = 16 << 20,
};

/* gpgv checks a few hundred kB in well under a second; a minute is a hang (a keyring on a
 * stalled network mount, a FIFO). */
#define GPGV_TIMEOUT_S 60.0
static double gpgv_timeout_s = GPGV_TIMEOUT_S;

void ml_apt_test_set_gpgv_timeout(double seconds)
{
    gpgv_timeout_s = seconds > 0 ? seconds : GPGV_TIMEOUT_S;
}

/* Reads up to SNIFF_BYTES from the start of path; returns how many, or -1. */
static gssize read_head(const char *path, char *buf)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, SNIFF_BYTES, f);
    fclose(f);
    return (gssize)n;
}

/* A FIFO under a cache file's name would block the read for ever. */
static bool regular_file(const char *path, GError **err)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return true; /* a missing file fails where it is read, with its own message */
    g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                "'%s' is not a regular file (a FIFO, a device or a directory stands in the "
                "cache under that name); remove it and run 'meshlab fetch' again",
                path);
    return false;
}

static const char *kind_name(enum ml_apt_kind kind)
{
    switch (kind) {
    case ML_APT_INRELEASE:
        return "clearsigned InRelease file";
    case ML_APT_GZIP:
        return "gzip-compressed Packages index";
    case ML_APT_DEB:
        return "Debian package";
    }
    return "file";
}

static void set_html_error(const char *path, const char *url, const char *what, GError **err)
{
    g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                "%s did not send the %s but an HTML page (a captive portal, a login page or a "
                "proxy's error page answered in its place with status 200); '%s' was deleted. "
                "Log in to the network or get past the portal or proxy, then run the command "
                "again",
                url, what, path);
}

bool ml_apt_check_form(const char *path, enum ml_apt_kind kind, const char *url, GError **err)
{
    char buf[SNIFF_BYTES + 1] = "";
    if (!regular_file(path, err))
        return false;
    gssize n = read_head(path, buf);
    if (n < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read '%s': %s", path, g_strerror(errno));
        return false;
    }
    bool ok = false;
    switch (kind) {
    case ML_APT_INRELEASE:
        ok = g_str_has_prefix(buf, CLEARSIGN_BEGIN "\n") ||
             g_str_has_prefix(buf, CLEARSIGN_BEGIN "\r\n");
        break;
    case ML_APT_GZIP:
        ok = n >= 2 && (guchar)buf[0] == 0x1f && (guchar)buf[1] == 0x8b;
        break;
    case ML_APT_DEB:
        ok = n >= 21 && memcmp(buf, "!<arch>\ndebian-binary", 21) == 0;
        break;
    }
    if (ok)
        return true;
    unlink(path);
    if (ml_fetch_looks_like_html(buf, (size_t)n)) {
        set_html_error(path, url, kind_name(kind), err);
        return false;
    }
    g_autofree char *start = g_strndup(buf, MIN(n, 16));
    g_autofree char *shown = g_strescape(start, NULL);
    g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                "%s is not a %s (it starts with \"%s\"); '%s' was deleted. Check that the URL "
                "points into the archive, and run the command again",
                url, kind_name(kind), shown, path);
    return false;
}

/* The file must be one clearsigned message and nothing else: gpgv's output is then exactly
 * the signed text, and nothing unsigned around it can be mistaken for part of it. */
static bool one_clearsigned_message(const char *text, gsize len, const char *path, const char *url,
                                    GError **err)
{
    int begins = 0, signatures = 0, ends = 0;
    bool after_end = false;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        char *line = g_strchomp(*l);
        if (strcmp(line, CLEARSIGN_BEGIN) == 0)
            begins++;
        else if (strcmp(line, SIGNATURE_BEGIN) == 0)
            signatures++;
        else if (strcmp(line, SIGNATURE_END) == 0) {
            ends++;
            after_end = true;
        } else if (after_end && *line)
            ends = -1;
    }
    if (strlen(text) == len && begins == 1 && signatures == 1 && ends == 1 &&
        g_str_has_prefix(text, CLEARSIGN_BEGIN))
        return true;
    g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                "%s is not one clearsigned message with its signature (found %d signed "
                "messages, %d signatures, %s after them), as the archive publishes it; '%s' was "
                "deleted. Run the command again to download it afresh",
                url, begins, signatures, ends == 1 ? "nothing" : "other text", path);
    return false;
}

/* gpgv's verdict, read from its status lines as apt's gpgv method does. */
struct verdict {
    int good;  /* signatures that are good, by a valid key, with a strong digest */
    bool bad;  /* a BADSIG: the text was changed after signing */
    char *why; /* the first reason a signature did not count */
    bool current_good;
    bool current_strong;
};

static void verdict_note(struct verdict *v, char *why)
{
    if (!v->why)
        v->why = why;
    else
        g_free(why);
}

static void verdict_close_sig(struct verdict *v)
{
    if (v->current_good && v->current_strong)
        v->good++;
    v->current_good = v->current_strong = false;
}

static void read_status_line(struct verdict *v, const char *line)
{
    g_auto(GStrv) w = g_strsplit(line, " ", -1);
    guint n = g_strv_length(w);
    if (n == 0)
        return;
    const char *key = n > 1 ? w[1] : "";
    if (strcmp(w[0], "NEWSIG") == 0) {
        verdict_close_sig(v);
    } else if (strcmp(w[0], "GOODSIG") == 0) {
        v->current_good = true;
    } else if (strcmp(w[0], "VALIDSIG") == 0) {
        /* Field 9 is the digest: MD5 (1), SHA-1 (2) and RIPEMD-160 (3) do not count. */
        int digest = n > 8 ? atoi(w[8]) : 0;
        v->current_strong = digest > 3;
        if (!v->current_strong)
            verdict_note(
                v, g_strdup_printf("the signature by key %s uses a weak digest (%d)", key, digest));
    } else if (strcmp(w[0], "BADSIG") == 0) {
        v->bad = true;
        verdict_note(v, g_strdup_printf("the signature by key %s is BAD: the text was changed "
                                        "after it was signed",
                                        key));
    } else if (strcmp(w[0], "EXPKEYSIG") == 0 || strcmp(w[0], "REVKEYSIG") == 0 ||
               strcmp(w[0], "EXPSIG") == 0) {
        verdict_note(v, g_strdup_printf("the signature by key %s does not count: %s", key,
                                        w[0][0] == 'R'   ? "the key is revoked"
                                        : w[0][3] == 'K' ? "the key has expired"
                                                         : "the signature has expired"));
    } else if (strcmp(w[0], "NO_PUBKEY") == 0) {
        verdict_note(v,
                     g_strdup_printf("it is signed by key %s, which is not in the keyring", key));
    } else if (strcmp(w[0], "ERRSIG") == 0) {
        /* Field 7 is why: 9 is a missing public key. */
        bool no_key = n > 6 && strcmp(w[6], "9") == 0;
        verdict_note(v, g_strdup_printf(no_key ? "it is signed by key %s, which is not in the "
                                                 "keyring"
                                               : "the signature by key %s cannot be checked",
                                        key));
    }
}

char *ml_apt_inrelease_verify(const char *path, const char *keyring, const char *url, GError **err)
{
    g_autofree char *gpgv = g_find_program_in_path("gpgv");
    if (!gpgv) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "gpgv is not installed, and without it the signature of %s cannot be "
                    "checked; install the gpgv package (apt-get install gpgv)",
                    url);
        return NULL;
    }
    g_autofree char *abs_keyring = g_canonicalize_filename(keyring, NULL);
    if (!g_file_test(abs_keyring, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "the keyring '%s' to check %s against is missing",
                    abs_keyring, url);
        return NULL;
    }
    g_autofree char *text = NULL;
    gsize len = 0;
    g_autoptr(GError) read_err = NULL;
    struct stat st;
    if (!regular_file(path, err))
        return NULL;
    if (stat(path, &st) == 0 && st.st_size > INRELEASE_MAX_BYTES) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "'%s' (from %s) is larger than %d bytes; that is no InRelease file", path, url,
                    INRELEASE_MAX_BYTES);
        return NULL;
    }
    if (!g_file_get_contents(path, &text, &len, &read_err)) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read the InRelease file: %s",
                    read_err->message);
        return NULL;
    }
    if (!one_clearsigned_message(text, len, path, url, err)) {
        unlink(path);
        return NULL;
    }

    /* Status lines go to stderr with gpgv's own messages; the signed text alone to stdout. */
    const char *argv[] = {gpgv,        "--status-fd", "2",  "--output", "-",
                          "--keyring", abs_keyring,   "--", path,       NULL};
    struct ml_proc proc;
    g_autoptr(GError) spawn_err = NULL;
    if (!ml_proc_run(argv, gpgv_timeout_s, &proc, &spawn_err)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot run gpgv: %s", spawn_err->message);
        return NULL;
    }
    g_autofree char *out = g_steal_pointer(&proc.out);
    g_autofree char *errout = g_steal_pointer(&proc.err);
    bool timed_out = proc.timed_out, interrupted = proc.interrupted, cut = proc.out_cut;
    double took = proc.seconds;
    ml_proc_clear(&proc);
    if (interrupted) {
        g_set_error(err, ML_ERROR, ML_ERR_INTERRUPTED,
                    "interrupted while gpgv checked the signature of %s", url);
        return NULL;
    }
    if (timed_out) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "gpgv did not finish checking the signature of %s ('%s' against the keyring "
                    "'%s') within %.0f s and was stopped after %.0f s; nothing was trusted. "
                    "Check that 'gpgv --version' answers and that the keyring and the cache are "
                    "on a local disk, then run the command again",
                    url, path, abs_keyring, gpgv_timeout_s, took);
        return NULL;
    }
    if (cut) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "gpgv printed more of %s than the file holds; nothing was trusted", url);
        return NULL;
    }

    /* apt's rule: any good signature by a trusted key will do (the archive may sign with old
     * and new keys at once, and gpgv then exits non-zero for the one it lacks), any bad one
     * fails the file. */
    struct verdict v = {0};
    const char *said = NULL; /* gpgv's last word for people */
    g_auto(GStrv) lines = g_strsplit(errout ? errout : "", "\n", -1);
    for (char **l = lines; *l; l++) {
        if (g_str_has_prefix(*l, STATUS_PREFIX))
            read_status_line(&v, *l + strlen(STATUS_PREFIX));
        else if (*g_strstrip(*l))
            said = *l;
    }
    verdict_close_sig(&v);
    g_autofree char *why = v.why;
    if (v.good > 0 && !v.bad && out && *out)
        return g_steal_pointer(&out);

    unlink(path);
    g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                "the signature of %s does not verify against the keyring '%s': %s; '%s' was "
                "deleted. Run the command again to download it afresh; if it fails again, the "
                "mirror or something on the way serves altered files (gpgv said: \"%s\")",
                url, abs_keyring,
                why ? why : (v.good == 0 ? "gpgv found no good signature" : "gpgv failed"), path,
                said ? said : "nothing");
    return NULL;
}

static bool field_is(const char *line, const char *name, const char **ret_value)
{
    size_t n = strlen(name);
    if (g_ascii_strncasecmp(line, name, n) != 0 || line[n] != ':')
        return false;
    *ret_value = line + n + 1 + strspn(line + n + 1, " \t");
    return true;
}

/* One " HASH SIZE NAME" line of a Release file's SHA256 field; returns NAME. */
static char *parse_sum_line(const char *line, struct ml_apt_sum *ret)
{
    g_auto(GStrv) w = g_strsplit_set(line, " \t", -1);
    const char *tok[3] = {NULL};
    int count = 0;
    for (char **p = w; *p; p++) {
        if (!**p)
            continue;
        if (count < 3)
            tok[count] = *p;
        count++;
    }
    if (count != 3 || !ml_sha256_hex_valid(tok[0]) ||
        strspn(tok[1], "0123456789") != strlen(tok[1]))
        return NULL;
    for (int i = 0; i < 65; i++)
        ret->sha256[i] = g_ascii_tolower(tok[0][i]);
    ret->size = g_ascii_strtoull(tok[1], NULL, 10);
    return g_strdup(tok[2]);
}

bool ml_apt_release_lookup(const char *release, const char *suite, const char *name,
                           struct ml_apt_sum *ret, GError **err)
{
    g_auto(GStrv) lines = g_strsplit(release, "\n", -1);
    g_autofree char *suite_seen = NULL;
    g_autofree char *codename_seen = NULL;
    bool in_sha256 = false, found = false;
    for (char **l = lines; *l; l++) {
        char *line = g_strchomp(*l);
        const char *value = NULL;
        if (*line == ' ' || *line == '\t') {
            struct ml_apt_sum sum;
            g_autofree char *file = in_sha256 && !found ? parse_sum_line(line, &sum) : NULL;
            if (file && strcmp(file, name) == 0) {
                *ret = sum;
                found = true;
            }
            continue;
        }
        in_sha256 = false;
        if (field_is(line, "SHA256", &value))
            in_sha256 = true;
        else if (field_is(line, "Suite", &value))
            suite_seen = g_strdup(value);
        else if (field_is(line, "Codename", &value))
            codename_seen = g_strdup(value);
    }
    if (g_strcmp0(suite_seen, suite) != 0 && g_strcmp0(codename_seen, suite) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "the signed Release text is for suite '%s' (codename '%s'), not '%s': "
                    "another suite's file was served; check the catalogue's apt_source",
                    suite_seen ? suite_seen : "none", codename_seen ? codename_seen : "none",
                    suite);
        return false;
    }
    if (!found) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "the signed Release text of suite '%s' lists no SHA256 for '%s'; check the "
                    "component and architecture in the catalogue's apt_source",
                    suite, name);
        return false;
    }
    return true;
}

static GInputStream *open_index(const char *path, GError **err)
{
    g_autoptr(GFile) file = g_file_new_for_path(path);
    g_autoptr(GError) open_err = NULL;
    GInputStream *raw = G_INPUT_STREAM(g_file_read(file, NULL, &open_err));
    if (!raw) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read the Packages index: %s",
                    open_err->message);
        return NULL;
    }
    if (!g_str_has_suffix(path, ".gz"))
        return raw;
    g_autoptr(GZlibDecompressor) gunzip = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
    GInputStream *in = g_converter_input_stream_new(raw, G_CONVERTER(gunzip));
    g_object_unref(raw);
    return in;
}

struct stanza {
    char *filename;
    struct ml_apt_sum sum;
    bool has_sha256, has_size;
};

static bool stanza_finish(struct stanza *s, GHashTable *wanted, const char *path, GError **err)
{
    bool ok = true;
    gpointer key = NULL, old = NULL;
    if (s->filename && s->has_sha256 && s->has_size &&
        g_hash_table_lookup_extended(wanted, s->filename, &key, &old)) {
        const struct ml_apt_sum *prev = old;
        if (prev && (strcmp(prev->sha256, s->sum.sha256) != 0 || prev->size != s->sum.size)) {
            g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                        "the Packages index '%s' lists '%s' twice with different hashes", path,
                        s->filename);
            ok = false;
        } else if (!prev) {
            g_hash_table_insert(wanted, g_strdup(key), g_memdup2(&s->sum, sizeof(s->sum)));
        }
    }
    g_free(s->filename);
    *s = (struct stanza){0};
    return ok;
}

bool ml_apt_packages_collect(const char *path, GHashTable *wanted, GError **err)
{
    if (!regular_file(path, err))
        return false;
    g_autoptr(GInputStream) in = open_index(path, err);
    if (!in)
        return false;
    g_autoptr(GDataInputStream) data = g_data_input_stream_new(in);
    struct stanza s = {0};
    bool ok = true;
    for (;;) {
        gsize len = 0;
        g_autoptr(GError) read_err = NULL;
        g_autofree char *line = g_data_input_stream_read_line(data, &len, NULL, &read_err);
        if (read_err) {
            g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read the Packages index '%s': %s",
                        path, read_err->message);
            ok = false;
            break;
        }
        if (!line || !*g_strchomp(line)) {
            if (!stanza_finish(&s, wanted, path, err)) {
                ok = false;
                break;
            }
            if (!line)
                break;
            continue;
        }
        const char *value = NULL;
        if (field_is(line, "Filename", &value)) {
            g_free(s.filename);
            s.filename = g_strdup(value);
        } else if (field_is(line, "SHA256", &value)) {
            s.has_sha256 = ml_sha256_hex_valid(value);
            if (s.has_sha256)
                for (int i = 0; i < 65; i++)
                    s.sum.sha256[i] = g_ascii_tolower(value[i]);
        } else if (field_is(line, "Size", &value)) {
            s.has_size = *value && strspn(value, "0123456789") == strlen(value);
            s.sum.size = g_ascii_strtoull(value, NULL, 10);
        }
    }
    g_free(s.filename);
    return ok;
}

bool ml_apt_check_file(const char *path, const struct ml_apt_sum *sum, const char *url,
                       const char *listed_by, GError **err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read '%s': %s", path, g_strerror(errno));
        return false;
    }
    if (!regular_file(path, err))
        return false;
    g_autofree char *got = NULL;
    if ((guint64)st.st_size == sum->size) {
        got = ml_fetch_sha256_file(path, err);
        if (!got)
            return false;
        if (strcmp(got, sum->sha256) == 0)
            return true;
    }
    char head[SNIFF_BYTES + 1] = "";
    gssize n = read_head(path, head);
    bool html = n > 0 && ml_fetch_looks_like_html(head, (size_t)n);
    unlink(path);
    g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                "%s does not match %s: expected %" G_GUINT64_FORMAT " bytes with SHA-256 %s, "
                "got %" G_GUINT64_FORMAT " bytes%s%s%s; '%s' was deleted. Run the command again "
                "to download it afresh; if it fails again, the mirror or something on the way "
                "serves altered files",
                url, listed_by, sum->size, sum->sha256, (guint64)st.st_size,
                got ? " with SHA-256 " : "", got ? got : "",
                html ? " (an HTML page: a captive portal or a proxy answered in its place)" : "",
                path);
    return false;
}
