#include "core/util.h"
#include "topology/name.h"

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

char *ml_log_format(const struct ml_log_event *e)
{
    if (e->kind == ML_LOG_WARN)
        return g_strdup_printf("meshlab: warning: %s", e->message);
    return g_strdup_printf("[%6.1fs] %-10s %s", e->elapsed, e->phase, e->message);
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
    if (g_mkdir_with_parents(path, mode) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot create directory '%s': %s", path,
                    g_strerror(errno));
        return false;
    }
    return true;
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
    /* "", "." or ".." here would be the directory of every lab's pool, or the state dir. */
    if (!lab || !ml_name_check("lab name", lab, false, NULL))
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
