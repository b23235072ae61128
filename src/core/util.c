#include "core/util.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>

G_DEFINE_QUARK(meshlab - error - quark, ml_error)

static double start_time;
static bool quiet;
static volatile sig_atomic_t interrupts;

double ml_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ml_log_init(void)
{
    start_time = ml_now();
}

void ml_log_set_quiet(bool q)
{
    quiet = q;
}

double ml_elapsed(void)
{
    return ml_now() - start_time;
}

static struct ml_log_sink sink = {ml_log_stderr, NULL};

struct ml_log_sink ml_log_set_sink(const struct ml_log_sink *next)
{
    struct ml_log_sink before = sink;
    sink = next && next->fn ? *next : (struct ml_log_sink){ml_log_stderr, NULL};
    return before;
}

/* text with what may not stand as it is written \xHH or \uHHHH: C0 and DEL, bytes that are
 * not UTF-8 and C1 always; in a comment line also a newline, a tab, Unicode's line and paragraph
 * separators, and a backslash (as two), so that no line ends or continues inside it. */
static char *escape(const char *text, bool comment)
{
    const char *p = text ? text : "";
    const char *end = p + strlen(p);
    GString *s = g_string_sized_new((gsize)(end - p));
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (comment && c == '\\') {
            g_string_append(s, "\\\\");
            p++;
            continue;
        }
        if ((!comment && (c == '\n' || c == '\t')) || (c >= 0x20 && c < 0x7f)) {
            g_string_append_c(s, (char)c);
            p++;
            continue;
        }
        gunichar u = c < 0x80 ? (gunichar)-1 : g_utf8_get_char_validated(p, end - p);
        if (u == (gunichar)-1 || u == (gunichar)-2) {
            /* C0, DEL, or a byte that is not UTF-8 (a lone 0x9b is CSI on some terminals) */
            g_string_append_printf(s, "\\x%02x", c);
            p++;
            continue;
        }
        const char *next = g_utf8_next_char(p);
        if (u < 0xa0 || (comment && (u == 0x2028 || u == 0x2029)))
            g_string_append_printf(s, "\\u%04x", (unsigned)u); /* C1 */
        else
            g_string_append_len(s, p, next - p);
        p = next;
    }
    return g_string_free(s, FALSE);
}

char *ml_escape_controls(const char *text)
{
    return escape(text, false);
}

char *ml_comment_text(const char *text)
{
    return escape(text, true);
}

/* Messages carry guest output and results.json's strings: escaped here, an ESC in them never
 * reaches the terminal. */
char *ml_log_format(const struct ml_log_event *e)
{
    g_autofree char *message = ml_escape_controls(e->message);
    if (e->kind == ML_LOG_WARN)
        return g_strdup_printf("meshlab: warning: %s", message);
    g_autofree char *phase = ml_escape_controls(e->phase);
    return g_strdup_printf("[%6.1fs] %-10s %s", e->elapsed, phase, message);
}

void ml_log_stderr(const struct ml_log_event *e, void *data)
{
    (void)data;
    g_autofree char *line = ml_log_format(e);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static G_GNUC_PRINTF(3, 0) void emit(enum ml_log_kind kind, const char *phase, const char *fmt,
                                     va_list ap)
{
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    struct ml_log_event e = {kind, ml_elapsed(), phase, msg};
    sink.fn(&e, sink.data);
}

void ml_progress(const char *phase, const char *fmt, ...)
{
    if (quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit(ML_LOG_PROGRESS, phase, fmt, ap);
    va_end(ap);
}

void ml_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(ML_LOG_WARN, "warning", fmt, ap);
    va_end(ap);
}

static void on_signal(int sig)
{
    (void)sig;
    /* A teardown is never cut short: leaving half a lab behind is worse than
     * waiting a few more seconds. */
    static const char skip[] = "\nmeshlab: interrupted again: skipping the guests' logs, "
                               "tearing down now\n";
    static const char still[] = "\nmeshlab: still tearing down, please wait\n";
    ssize_t r = 0;
    if (interrupts == 1)
        r = write(2, skip, sizeof(skip) - 1);
    else if (interrupts > 1)
        r = write(2, still, sizeof(still) - 1);
    (void)r;
    if (interrupts < 1000)
        interrupts++;
}

void ml_signals_install(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* When whatever reads our output goes away (a closed pipe, a killed tee), a
     * write must fail harmlessly, not kill meshlab halfway through a teardown. */
    signal(SIGPIPE, SIG_IGN);
}

bool ml_interrupted(void)
{
    return interrupts != 0;
}

void ml_error_append(GError **err, const char *fmt, ...)
{
    if (!err || !*err)
        return;
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *more = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    char *said = g_strconcat((*err)->message, "; ", more, NULL);
    g_free((*err)->message);
    (*err)->message = said;
}

bool ml_check_interrupted(GError **err)
{
    if (!interrupts)
        return false;
    g_set_error(err, ML_ERROR, ML_ERR_INTERRUPTED, "interrupted");
    return true;
}

unsigned ml_interrupt_count(void)
{
    return (unsigned)interrupts;
}

bool ml_write_file(const char *path, const char *data, gssize len, int mode, GError **err)
{
    if (len < 0)
        len = (gssize)strlen(data);
    /* A new file under a name nobody can guess, never through a link that is
     * already there (g_mkstemp_full adds O_CREAT|O_EXCL); the pid in the name
     * tells 'meshlab down' whether its writer is gone. */
    g_autofree char *tmp = g_strdup_printf("%s.tmp.%d.XXXXXX", path, (int)getpid());
    int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot create '%s': %s", tmp, g_strerror(errno));
        return false;
    }
    gssize off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, (size_t)(len - off));
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            unlink(tmp);
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot write '%s': %s", path, g_strerror(e));
            return false;
        }
        off += w;
    }
    if (fchmod(fd, (mode_t)mode) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot write '%s': %s", path, g_strerror(e));
        return false;
    }
    return true;
}

bool ml_mkdir_p(const char *path, int mode, GError **err)
{
    /* Parents made here get 0755, not mode: the lock directory's 0700 must not become
     * /var/lib/meshlab's on a fresh host, where it would shut QEMU's user out of the pools. */
    g_autofree char *parent = g_path_get_dirname(path);
    if (strcmp(parent, path) != 0 && g_mkdir_with_parents(parent, 0755) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot create directory '%s': %s", parent,
                    g_strerror(errno));
        return false;
    }
    if (g_mkdir_with_parents(path, mode) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot create directory '%s': %s", path,
                    g_strerror(errno));
        return false;
    }
    return true;
}

bool ml_mkdir_mode(const char *path, int mode, GError **err)
{
    g_autofree char *parent = g_path_get_dirname(path);
    if (!ml_mkdir_p(parent, 0755, err))
        return false;
    if (mkdir(path, (mode_t)mode) < 0) {
        struct stat st;
        if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return true;
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot create directory '%s': %s", path,
                    errno == EEXIST ? "something other than a directory is in the way"
                                    : g_strerror(errno));
        return false;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    bool ok = fd >= 0 && fchmod(fd, (mode_t)mode) == 0;
    if (!ok)
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot set the mode of directory '%s': %s", path,
                    g_strerror(errno));
    if (fd >= 0)
        close(fd);
    return ok;
}

/* Opens path for reading if it is a regular file, never through a link, never blocking. */
static int open_regular(const char *path, struct stat *st, GError **err)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot open '%s': %s", path,
                    errno == ELOOP ? "it is a symbolic link, which meshlab does not follow here"
                                   : g_strerror(errno));
        return -1;
    }
    if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "cannot read '%s': it is not a regular file (a FIFO, a device or a "
                    "directory); remove it and run again",
                    path);
        close(fd);
        return -1;
    }
    return fd;
}

/* Copies [off, off + len) from in to out at the same offset. */
static bool copy_range(int in, int out, off_t off, off_t len)
{
    g_autofree char *buf = NULL; /* only when the kernel cannot copy it itself */
    const size_t buf_size = 1 << 20;
    while (len > 0) {
        loff_t from = off, to = off;
        ssize_t n = copy_file_range(in, &from, out, &to, (size_t)len, 0);
        if (n < 0 &&
            (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
            if (!buf)
                buf = g_malloc(buf_size);
            n = pread(in, buf, (size_t)MIN(len, (off_t)buf_size), off);
            for (ssize_t w = 0, done = 0; n > 0 && done < n; done += w)
                if ((w = pwrite(out, buf + done, (size_t)(n - done), off + done)) < 0)
                    return false;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0; /* the file shrank: what is there is copied */
        off += n;
        len -= n;
    }
    return true;
}

static bool copy_sparse(int in, int out, off_t size)
{
    off_t off = 0;
    while (off < size) {
        off_t data = lseek(in, off, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break; /* only a hole is left */
        off_t hole = data < 0 ? size : lseek(in, data, SEEK_HOLE);
        if (data < 0)
            data = off;
        if (hole < 0 || hole > size)
            hole = size;
        if (!copy_range(in, out, data, hole - data))
            return false;
        off = hole;
    }
    return ftruncate(out, size) == 0;
}

bool ml_file_place(const char *from, const char *dest, int mode, GError **err)
{
    struct stat st;
    int in = open_regular(from, &st, err);
    if (in < 0)
        return false;
    g_autofree char *dir = g_path_get_dirname(dest);
    g_autofree char *base = g_path_get_basename(dest);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int out = -1;
    if (dfd >= 0 && (unlinkat(dfd, base, 0) == 0 || errno == ENOENT))
        out = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
    bool ok = out >= 0 && copy_sparse(in, out, st.st_size) && fchmod(out, (mode_t)mode) == 0;
    int e = errno;
    if (out >= 0 && close(out) < 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        if (out >= 0)
            unlinkat(dfd, base, 0);
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot copy '%s' to '%s': %s", from, dest,
                    e == EEXIST  ? "something was created at its name meanwhile"
                    : e == ELOOP ? "a symbolic link is in the way"
                                 : g_strerror(e));
    }
    if (dfd >= 0)
        close(dfd);
    close(in);
    return ok;
}

char *ml_file_read_nofollow(const char *path, gsize max, gsize *ret_len, GError **err)
{
    struct stat st;
    int fd = open_regular(path, &st, err);
    if (fd < 0)
        return NULL;
    off_t start = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
    gsize want = (gsize)(st.st_size - start), got = 0;
    char *buf = g_malloc(want + 1);
    while (got < want) {
        ssize_t n = pread(fd, buf + got, want - got, start + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot read '%s': %s", path,
                        g_strerror(errno));
            close(fd);
            g_free(buf);
            return NULL;
        }
        if (n == 0)
            break;
        got += (gsize)n;
    }
    close(fd);
    buf[got] = '\0';
    if (ret_len)
        *ret_len = got;
    return buf;
}

char *ml_sha256_hex(const void *data, size_t len)
{
    return g_compute_checksum_for_data(G_CHECKSUM_SHA256, data, len);
}

char *ml_data_dir(const char *sub)
{
    const char *env = g_getenv("MESHLAB_DATA_DIR");
    const char *roots[] = {env, MESHLAB_SOURCE_DIR, "/usr/local/share/meshlab",
                           "/usr/share/meshlab"};
    for (size_t i = 0; i < G_N_ELEMENTS(roots); i++) {
        if (!roots[i] || !*roots[i])
            continue;
        char *d = g_build_filename(roots[i], sub, NULL);
        if (g_file_test(d, G_FILE_TEST_IS_DIR))
            return d;
        g_free(d);
    }
    return g_build_filename(MESHLAB_SOURCE_DIR, sub, NULL);
}

const char *ml_state_dir(void)
{
    const char *d = getenv("MESHLAB_STATE_DIR");
    return d && *d ? d : "/var/lib/meshlab";
}

const char *ml_cache_dir(void)
{
    const char *d = getenv("MESHLAB_CACHE_DIR");
    return d && *d ? d : "/var/cache/meshlab";
}

char *ml_lab_state_path(const char *lab, const char *suffix)
{
    g_autofree char *name = g_strconcat(lab, suffix, NULL);
    return g_build_filename(ml_state_dir(), "labs", name, NULL);
}

char *ml_lab_pool_dir(const char *lab)
{
    /* "", "." or ".." here would be the directory of every lab's pool, or the state dir; the
     * verbs check the whole name rule (topology/name.h) before they get here. */
    if (!lab || !*lab || !strcmp(lab, ".") || !strcmp(lab, "..") || strchr(lab, '/'))
        return NULL;
    return g_build_filename(ml_state_dir(), "pools", lab, NULL);
}

char *ml_last_lines(const char *text, int n)
{
    if (!text)
        return g_strdup("");
    g_autofree char *copy = g_strstrip(g_strdup(text));
    const char *p = copy + strlen(copy);
    while (p > copy && n > 0) {
        p--;
        if (*p == '\n')
            n--;
    }
    if (*p == '\n')
        p++;
    return g_strdup(p);
}

char *ml_words_joined(GPtrArray *words, const char *conj)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < words->len; i++) {
        if (i)
            g_string_append(s, i + 1 == words->len ? " " : ", ");
        if (i && i + 1 == words->len)
            g_string_append_printf(s, "%s ", conj);
        g_string_append(s, g_ptr_array_index(words, i));
    }
    return g_string_free(s, FALSE);
}
