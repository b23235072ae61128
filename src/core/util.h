/* Shared conventions: errors travel as GError in the ML_ERROR domain, only the
 * command layer prints them; progress lines carry the elapsed time. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#define ML_ERROR ml_error_quark()
GQuark ml_error_quark(void);

enum ml_error_code {
    ML_ERR_INPUT = 1,   /* the user's file or arguments; exit status 2 */
    ML_ERR_HOST,        /* the host lacks something (package, daemon, disk) */
    ML_ERR_LIBVIRT,     /* libvirt refused or failed */
    ML_ERR_GUEST,       /* a guest did not do what was asked */
    ML_ERR_IMAGE,       /* building, downloading or verifying an image */
    ML_ERR_FETCH,       /* a download failed or did not verify */
    ML_ERR_MEASURE,     /* a measurement failed */
    ML_ERR_INTERRUPTED, /* Ctrl-C or SIGTERM */
};

/* Exit statuses of the command layer. */
enum { ML_EXIT_OK = 0, ML_EXIT_FAIL = 1, ML_EXIT_USAGE = 2, ML_EXIT_INTERRUPTED = 130 };

/* Monotonic seconds since an arbitrary origin. */
double ml_now(void);
/* Seconds since ml_log_init(). */
double ml_elapsed(void);
void ml_log_init(void);
void ml_log_set_quiet(bool quiet);

/* Progress and warnings are events handed to one sink; library code never
 * writes to stderr itself, so tests can capture what it says and a command can
 * show it as text or JSON. */
enum ml_log_kind { ML_LOG_PROGRESS, ML_LOG_WARN };
struct ml_log_event {
    enum ml_log_kind kind;
    double elapsed;      /* seconds since ml_log_init() */
    const char *phase;   /* "boot", "measure", ...; "warning" for ML_LOG_WARN */
    const char *message; /* one line, no newline */
};
struct ml_log_sink {
    void (*fn)(const struct ml_log_event *event, void *data);
    void *data;
};
/* Installs sink (NULL: the default, ml_log_stderr) and returns the one before. */
struct ml_log_sink ml_log_set_sink(const struct ml_log_sink *sink);
/* Text as it may be printed on a terminal: C0 and C1 control characters (newline and tab
 * excepted), DEL and bytes that are not UTF-8 written as \xNN or \u00NN, so text from a guest
 * or a results file cannot move the cursor, clear the screen or retitle the window. "" for NULL. */
char *ml_escape_controls(const char *text);
/* Text that lands in a `#` comment line of a file meshlab writes (a script, cloud-init
 * user-data, an nftables ruleset, a wg-quick, swanctl, tinc, OpenVPN or nebula config,
 * README.md) from a results.json someone else may have written (the lab's name, the run's id):
 * ml_escape_controls, and also every newline and tab, Unicode's line and paragraph separators
 * (YAML 1.1 breaks lines at them) and a backslash (as two), so that no line ends or continues
 * inside it and the rest cannot become a command or a rule of its own. Printable text is kept. */
char *ml_comment_text(const char *text);
/* The text of an event, its control characters escaped (ml_escape_controls):
 * "[  12.3s] phase      message" for progress, "meshlab: warning: message" for a warning. */
char *ml_log_format(const struct ml_log_event *event);
/* The default sink: ml_log_format's line on stderr. */
void ml_log_stderr(const struct ml_log_event *event, void *data);

/* A progress event; dropped while quiet. */
void ml_progress(const char *phase, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* A warning event; never dropped. */
void ml_warn(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/* Installs SIGINT/SIGTERM handlers that only count; long waits poll the count.
 * The first interrupt stops the work and starts the cleanup, the second skips
 * what the cleanup does besides tearing down (the guests' logs), and no number
 * of them stops a teardown. */
void ml_signals_install(void);
bool ml_interrupted(void);
/* How many times the user has interrupted (SIGINT, SIGTERM, SIGHUP). */
unsigned ml_interrupt_count(void);
/* Adds "; " and the formatted text to the end of (*err)'s message (nothing when err or *err is
 * NULL): what was done about an error, after the error itself. */
void ml_error_append(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Sets err to ML_ERR_INTERRUPTED and returns true when the user asked to stop. */
bool ml_check_interrupted(GError **err);

/* Writes a file atomically with the given mode: a new temp file PATH.tmp.PID.XXXXXX
 * created with O_EXCL (no link is followed), then renamed over PATH. */
bool ml_write_file(const char *path, const char *data, gssize len, int mode, GError **err);

/* Creates a directory with the given mode (less the umask), and its missing parents with 0755. */
bool ml_mkdir_p(const char *path, int mode, GError **err);

/* Creates the directory path and its parents. The directory path itself, when made now, gets
 * exactly mode (past the umask: QEMU's user must get through); one that was already there
 * keeps its own mode (MESHLAB_STATE_DIR=/tmp must not lose /tmp's sticky bit). */
bool ml_mkdir_mode(const char *path, int mode, GError **err);

/* Copies the regular file FROM to DEST, in a directory another user may write (a pool
 * directory belongs to QEMU's user): FROM is opened without following a link and must be a
 * regular file; whatever is at DEST (a file, a link) is removed and DEST is created anew with
 * O_EXCL, never through a link, with the given mode. Holes are kept, and a file system that
 * can share the blocks (reflink) does. */
bool ml_file_place(const char *from, const char *dest, int mode, GError **err);

/* The last max bytes (all of it when shorter) of the regular file path, read without
 * following a link at path and without blocking on a FIFO: a link, FIFO or device is refused
 * with err set. */
char *ml_file_read_nofollow(const char *path, gsize max, gsize *ret_len, GError **err);

/* Lower-case hex SHA-256 of a buffer. */
char *ml_sha256_hex(const void *data, size_t len);

/* Directories, overridable for tests. */
const char *ml_state_dir(void); /* MESHLAB_STATE_DIR or /var/lib/meshlab */
const char *ml_cache_dir(void); /* MESHLAB_CACHE_DIR or /var/cache/meshlab */

/* A lab's file in the state directory: STATE/labs/LAB SUFFIX (".json" is its
 * state, ".lock" its lock). */
char *ml_lab_state_path(const char *lab, const char *suffix);

/* The directory of a lab's storage pool: STATE/pools/LAB; NULL when LAB is "", "." or ".." or
 * holds a '/', so that no caller can build STATE/pools or STATE from it (the whole name rule
 * is topology/name.h's). */
char *ml_lab_pool_dir(const char *lab);

/* The last n lines of text, leading and trailing white space trimmed; "" for NULL. */
char *ml_last_lines(const char *text, int n);

/* A directory of meshlab's data (images, cloud-init): $MESHLAB_DATA_DIR/SUB,
 * else the source tree's SUB, else the installed share/meshlab/SUB. */
char *ml_data_dir(const char *sub);

/* Pure: the words as a list a sentence reads: "a", "a and b", "a, b and c" (conj "and" or
 * "or"); "" for none. g_free it. */
char *ml_words_joined(GPtrArray *words, const char *conj);
