#include "report/runfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "report/schema_check.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define FILE_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

static const char why_name[] = "its name is not a plain path inside the run directory";
static const char why_link[] = "it is, or is inside, a symbolic link";
static const char why_kind[] = "it is not a regular file";
static const char why_big[] = "it is larger than meshlab reads";

bool ml_runfile_name_ok(const char *rel)
{
    static const char allowed[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789._/-";
    if (!rel || !*rel || rel[strspn(rel, allowed)])
        return false;
    g_auto(GStrv) parts = g_strsplit(rel, "/", -1);
    for (char **p = parts; *p; p++)
        if (!**p || !strcmp(*p, ".") || !strcmp(*p, ".."))
            return false;
    return true;
}

static bool is_link(int dirfd, const char *name)
{
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

int ml_runfile_dir_open(const char *path, GError **err)
{
    int fd = open(path, DIR_FLAGS);
    if (fd < 0 && is_link(AT_FDCWD, path))
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "Cannot open the run directory %s: it is a symbolic link, and meshlab reads a "
                    "run directory only as itself; give the directory the link points to.",
                    path);
    else if (fd < 0)
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "Cannot open the run directory %s: %s.", path,
                    g_strerror(errno));
    return fd;
}

/* The directory that holds the last part of parts, below dirfd, each part on the way opened
 * without following a link: -1 with *ret_why (static text, or NULL for errno). */
static int open_parent(int dirfd, char **parts, const char **ret_why)
{
    guint n = g_strv_length(parts);
    for (guint i = 0; i < n; i++) {
        if (!*parts[i] || !strcmp(parts[i], ".") || !strcmp(parts[i], "..")) {
            *ret_why = why_name;
            return -1;
        }
    }
    int cur = n ? fcntl(dirfd, F_DUPFD_CLOEXEC, 0) : -1;
    if (!n)
        *ret_why = why_name;
    for (guint i = 0; cur >= 0 && i + 1 < n; i++) {
        int next = openat(cur, parts[i], DIR_FLAGS);
        int e = errno;
        if (next < 0 && is_link(cur, parts[i]))
            *ret_why = why_link;
        close(cur);
        cur = next;
        errno = e;
    }
    return cur;
}

/* rel's regular file below dirfd, opened only once fstatat has seen a regular file there, and
 * only if it is still that file: -1 with *ret_why or errno. */
static int open_regular(int dirfd, const char *rel, struct stat *ret_st, const char **ret_why)
{
    g_auto(GStrv) parts = g_strsplit(rel, "/", -1);
    int parent = open_parent(dirfd, parts, ret_why);
    if (parent < 0)
        return -1;
    const char *last = parts[g_strv_length(parts) - 1];
    struct stat seen;
    int fd = -1;
    if (fstatat(parent, last, &seen, AT_SYMLINK_NOFOLLOW) != 0)
        ; /* errno says why */
    else if (S_ISLNK(seen.st_mode))
        *ret_why = why_link;
    else if (!S_ISREG(seen.st_mode))
        *ret_why = why_kind;
    else if ((fd = openat(parent, last, FILE_FLAGS)) >= 0 &&
             (fstat(fd, ret_st) != 0 || !S_ISREG(ret_st->st_mode) ||
              ret_st->st_ino != seen.st_ino || ret_st->st_dev != seen.st_dev)) {
        *ret_why = why_kind; /* swapped since it was seen */
        close(fd);
        fd = -1;
    }
    int e = errno;
    close(parent);
    errno = e;
    return fd;
}

bool ml_runfile_exists(int dirfd, const char *rel)
{
    if (dirfd < 0 || !ml_runfile_name_ok(rel))
        return false;
    g_auto(GStrv) parts = g_strsplit(rel, "/", -1);
    const char *why = NULL;
    int parent = open_parent(dirfd, parts, &why);
    struct stat st;
    bool ok = parent >= 0 &&
              fstatat(parent, parts[g_strv_length(parts) - 1], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
              S_ISREG(st.st_mode);
    if (parent >= 0)
        close(parent);
    return ok;
}

static char *read_whole(int fd, gsize size, gsize *ret_len)
{
    char *buf = g_malloc(size + 1);
    gsize got = 0;
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            g_free(buf);
            return NULL;
        }
        if (n == 0)
            break;
        got += (gsize)n;
    }
    buf[got] = '\0';
    *ret_len = got;
    return buf;
}

char *ml_runfile_read(int dirfd, const char *rel, const char *shown, gsize max, gsize *ret_len,
                      GError **err)
{
    const char *why = NULL;
    struct stat st;
    int fd = open_regular(dirfd, rel, &st, &why);
    int e = errno;
    char *buf = NULL;
    gsize len = 0;
    if (fd >= 0 && (gsize)st.st_size > max)
        why = why_big;
    else if (fd >= 0 && !(buf = read_whole(fd, (gsize)st.st_size, &len)))
        e = errno;
    if (fd >= 0)
        close(fd);
    if (!buf && why)
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "Cannot read %s: %s; a run directory is data, and meshlab reads only its own "
                    "regular files, following no link: put the file itself there.",
                    shown, why);
    else if (!buf)
        g_set_error(err, ML_ERROR, e == ENOENT || e == ENOTDIR ? ML_ERR_INPUT : ML_ERR_HOST,
                    "Cannot read %s: %s.", shown, g_strerror(e));
    if (!buf)
        return NULL;
    if (ret_len)
        *ret_len = len;
    return buf;
}

/* The line and column (from 1) of byte off of text. */
static void position(const char *text, size_t off, size_t *ret_line, size_t *ret_col)
{
    size_t line = 1, start = 0;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            line++;
            start = i + 1;
        }
    }
    *ret_line = line;
    *ret_col = off - start + 1;
}

/* What makes text not one JSON document, as json-c's rule (never the text): NULL when it is
 * one, *ret_doc then the document (NULL for a JSON null) and *ret_off unused. */
static const char *parse(const char *text, size_t len, struct json_object **ret_doc,
                         size_t *ret_off)
{
    struct json_tokener *tok = json_tokener_new();
    struct json_object *doc = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    const char *rule = NULL;
    if (e == json_tokener_continue)
        rule = "the document ends before it is complete";
    else if (e != json_tokener_success)
        rule = json_tokener_error_desc(e);
    else if (end < len && end + strspn(text + end, " \t\r\n") < len)
        rule = "something follows the one JSON document";
    if (rule) {
        json_object_put(doc);
        *ret_off = MIN(end, len);
        return rule;
    }
    *ret_doc = doc;
    return NULL;
}

struct json_object *ml_results_read_at(int dirfd, const char *rel, const char *shown,
                                       GError **err)
{
    gsize len = 0;
    g_autofree char *text = ml_runfile_read(dirfd, rel, shown, ML_RESULTS_MAX_BYTES, &len, err);
    if (!text)
        return NULL;
    struct json_object *doc = NULL;
    size_t off = 0, line, col;
    const char *rule = parse(text, len, &doc, &off);
    if (rule) {
        position(text, off, &line, &col);
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s is not JSON: at line %zu, column %zu (byte %zu): %s. meshlab writes "
                    "results.json as one JSON document: this file was not written by meshlab, "
                    "or was changed after.",
                    shown, line, col, off, rule);
        return NULL;
    }
    if (!ml_results_check(doc, shown, err)) {
        json_object_put(doc);
        return NULL;
    }
    return doc;
}
