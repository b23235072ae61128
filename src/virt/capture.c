#include "virt/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/rundir.h"
#include "core/util.h"
#include "core/leftovers.h"
#include "virt/hostshell.h"

#define TCPDUMP "tcpdump"
/* How long tcpdump on another host may take to listen, ssh's connection included. */
#define READY_TIMEOUT_S 15.0

bool ml_capture_available(char **ret_reason)
{
    g_autofree char *bin = g_find_program_in_path(TCPDUMP);
    if (bin)
        return true;
    *ret_reason = g_strdup("tcpdump is not installed on this host (apt-get install tcpdump)");
    return false;
}

char **ml_capture_argv(const char *tcpdump, const char *tap, const char *path, bool as_root)
{
    GPtrArray *a = g_ptr_array_new();
    /* -p: no promiscuous mode; -U, --immediate-mode: each packet written as it comes, none
     * left in the kernel's buffer when the capture stops; -C/-W: a ring of
     * ML_CAPTURE_FILES files of ML_CAPTURE_FILE_MB each, so a flooding guest fills at most
     * that much of the host's disk, and the copy reads no more. */
    const char *fixed[] = {tcpdump, "-p", "-n", "-U", "--immediate-mode", "-i", tap, "-w", path};
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
        g_ptr_array_add(a, g_strdup(fixed[i]));
    g_ptr_array_add(a, g_strdup("-C"));
    g_ptr_array_add(a, g_strdup_printf("%d", ML_CAPTURE_FILE_MB));
    g_ptr_array_add(a, g_strdup("-W"));
    g_ptr_array_add(a, g_strdup_printf("%d", ML_CAPTURE_FILES));
    /* tcpdump drops root for its own user after the first file; the next ones are made in
     * meshlab's private directory, which that user cannot enter. */
    if (as_root) {
        g_ptr_array_add(a, g_strdup("-Z"));
        g_ptr_array_add(a, g_strdup("root"));
    }
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

static void reap(pid_t pid)
{
    kill(pid, SIGINT);
    for (int i = 0; i < 50; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        g_usleep(100000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static bool write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        data += w;
        len -= (size_t)w;
    }
    return true;
}

static void remove_dir(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *p = g_build_filename(dir, name, NULL);
        unlink(p);
    }
    rmdir(dir);
}

char *ml_capture_remote_script(const char *tap)
{
    g_autofree char *t = g_shell_quote(tap);
    /* tcpdump writes into a FIFO that head empties onto ssh's stdout, at most the same bytes a
     * local capture keeps; ssh's stdin closing (meshlab stops the capture, or is gone) stops
     * tcpdump, which then flushes, and the host's directory goes. */
    return g_strdup_printf(
        "command -v tcpdump >/dev/null || { echo 'tcpdump is not installed on the lab host' "
        ">&2; exit 127; }; "
        "d=$(mktemp -d /tmp/meshlab-hostcap-XXXXXX) || exit 1; mkfifo \"$d/p\" || exit 1; "
        "head -c %lld <\"$d/p\" & h=$!; "
        "tcpdump -p -n -U --immediate-mode -i %s -w \"$d/p\" 2>\"$d/err\" & t=$!; "
        "i=0; while ! grep -q 'listening on' \"$d/err\" && kill -0 $t 2>/dev/null && "
        "[ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; echo " ML_CAPTURE_READY " >&2; "
        "read _; kill -INT $t 2>/dev/null; wait $t; r=$?; wait $h; "
        "[ $r = 0 ] || [ $r = 130 ] || cat \"$d/err\" >&2; rm -rf \"$d\"",
        ML_CAPTURE_MAX_BYTES, t);
}

/* What of ssh's stderr is kept for messages; the rest is read and dropped. */
#define SAID_MAX 4096
/* What one read of ssh's stdout moves. */
#define COPY_CHUNK (64 * 1024)

/* ssh's stdout copied into the capture's file, and its stderr read, by a thread of their own:
 * neither pipe fills while the measurement goes on, and the host cannot write past the cap. */
struct ml_capture_copy {
    GMutex lock;
    GCond changed;
    bool ready;        /* the host said ML_CAPTURE_READY */
    bool ended;        /* the thread is done with both pipes */
    bool capped;       /* ML_CAPTURE_MAX_BYTES reached: ssh's group was killed there */
    int write_errno;   /* the file could not be written */
    GString *said;     /* ssh's stderr, its first SAID_MAX bytes */
    gsize said_ready;  /* where what it said after ML_CAPTURE_READY starts */
    long long copied;  /* bytes in the file */
    pid_t pid;         /* ssh, leading its own process group */
    int out, err;      /* ssh's stdout and stderr */
    int file;          /* the one file of the private directory */
    int wake[2];       /* a byte written to wake[1] ends the thread */
    GThread *thread;
};

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static struct ml_capture_copy *copy_new(void)
{
    struct ml_capture_copy *cp = g_new0(struct ml_capture_copy, 1);
    g_mutex_init(&cp->lock);
    g_cond_init(&cp->changed);
    cp->said = g_string_new(NULL);
    cp->out = cp->err = cp->file = cp->wake[0] = cp->wake[1] = -1;
    return cp;
}

static void copy_free(struct ml_capture_copy *cp)
{
    if (!cp)
        return;
    close_fd(&cp->out);
    close_fd(&cp->err);
    close_fd(&cp->file);
    close_fd(&cp->wake[0]);
    close_fd(&cp->wake[1]);
    g_string_free(cp->said, TRUE);
    g_mutex_clear(&cp->lock);
    g_cond_clear(&cp->changed);
    g_free(cp);
}

/* Under the lock: a change the waiting thread looks at. */
static void copy_set(struct ml_capture_copy *cp, bool *flag)
{
    g_mutex_lock(&cp->lock);
    *flag = true;
    g_cond_broadcast(&cp->changed);
    g_mutex_unlock(&cp->lock);
}

/* One read of ssh's stdout into the file, up to the cap; false when no more is taken. */
static bool copy_out(struct ml_capture_copy *cp, char *buf)
{
    ssize_t r = read(cp->out, buf, COPY_CHUNK);
    if (r < 0 && errno == EINTR)
        return true;
    if (r <= 0)
        return false;
    size_t take = (size_t)MIN((long long)r, ML_CAPTURE_MAX_BYTES - cp->copied);
    if (!write_all(cp->file, buf, take)) {
        cp->write_errno = errno ? errno : EIO;
        kill(-cp->pid, SIGKILL); /* nowhere to put the rest */
        return false;
    }
    cp->copied += (long long)take;
    if (cp->copied < ML_CAPTURE_MAX_BYTES)
        return true;
    /* The host's own head -c stops here; one that goes on is not read and not waited for. */
    kill(-cp->pid, SIGKILL);
    g_mutex_lock(&cp->lock);
    cp->capped = true;
    g_mutex_unlock(&cp->lock);
    return false;
}

/* One read of ssh's stderr: its first SAID_MAX bytes kept, and whether it said it listens. */
static bool read_err(struct ml_capture_copy *cp, char *buf)
{
    ssize_t r = read(cp->err, buf, COPY_CHUNK);
    if (r < 0 && errno == EINTR)
        return true;
    if (r <= 0)
        return false;
    g_mutex_lock(&cp->lock);
    g_string_append_len(cp->said, buf, MIN(r, (ssize_t)(SAID_MAX - MIN(cp->said->len, SAID_MAX))));
    const char *ready = cp->ready ? NULL : strstr(cp->said->str, ML_CAPTURE_READY);
    if (ready) {
        cp->ready = true;
        cp->said_ready = (gsize)(ready - cp->said->str) + strlen(ML_CAPTURE_READY);
        g_cond_broadcast(&cp->changed);
    }
    g_mutex_unlock(&cp->lock);
    return true;
}

static gpointer copy_main(gpointer data)
{
    struct ml_capture_copy *cp = data;
    g_autofree char *buf = g_malloc(COPY_CHUNK);
    while (cp->out >= 0 || cp->err >= 0) {
        /* poll skips a closed one (fd -1). */
        struct pollfd pfd[3] = {
            {cp->wake[0], POLLIN, 0}, {cp->out, POLLIN, 0}, {cp->err, POLLIN, 0}};
        if (poll(pfd, 3, -1) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents)
            break;
        if (pfd[1].revents && !copy_out(cp, buf))
            close_fd(&cp->out);
        if (pfd[2].revents && !read_err(cp, buf))
            close_fd(&cp->err);
    }
    copy_set(cp, &cp->ended);
    return NULL;
}

/* Whether ssh has ended, leaving it to be reaped: its process group stays its own until then. */
static bool exited(pid_t pid)
{
    siginfo_t info = {0};
    return waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

/* ssh's stdin closes, so the host's tcpdump stops, flushes and its directory goes; ssh gets
 * c->stop_s s to pass on the rest and end. Then its group is killed, whatever the host does,
 * the copy ends and ssh is reaped. */
static void stop_remote(struct ml_capture *c)
{
    struct ml_capture_copy *cp = c->copy;
    close_fd(&c->fd);
    if (c->pid <= 0)
        return;
    /* Its stderr stays open until then: a closed one would end it before the flush, and the
     * host's last words (tcpdump's error) come there. */
    double deadline = ml_now() + c->stop_s;
    for (;;) {
        g_mutex_lock(&cp->lock);
        bool ended = cp->ended;
        g_mutex_unlock(&cp->lock);
        if ((ended && exited(c->pid)) || ml_now() >= deadline)
            break;
        g_usleep(50 * 1000);
    }
    kill(-c->pid, SIGKILL);
    if (cp->thread) {
        ssize_t w = write(cp->wake[1], "", 1);
        (void)w;
        g_thread_join(cp->thread);
        cp->thread = NULL;
    }
    while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    c->pid = 0;
}

/* ssh on its way: its stdin, stdout and stderr the pipes' other ends. */
static pid_t fork_ssh(char **argv, int in, int out, int err)
{
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(in, STDIN_FILENO);
        dup2(out, STDOUT_FILENO);
        dup2(err, STDERR_FILENO);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (pid > 0)
        setpgid(pid, pid);
    return pid;
}

/* Waits until the host says tcpdump listens, ssh ends, or READY_TIMEOUT_S. */
static bool wait_ready(struct ml_capture_copy *cp, const char *tap, GError **err)
{
    gint64 end = g_get_monotonic_time() + (gint64)(READY_TIMEOUT_S * G_USEC_PER_SEC);
    g_mutex_lock(&cp->lock);
    while (!cp->ready && !cp->ended && g_cond_wait_until(&cp->changed, &cp->lock, end))
        ;
    bool ready = cp->ready;
    g_autofree char *first = ready ? NULL : g_strstrip(g_strdup(cp->said->str));
    g_mutex_unlock(&cp->lock);
    if (!ready)
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "the capture on %s did not start on the lab's host within %d s%s%s; check "
                    "that 'ssh' to it works without a prompt and that tcpdump is installed there",
                    tap, (int)READY_TIMEOUT_S, *first ? ": " : "", first);
    return ready;
}

/* tcpdump on another host, over the SSH its URI names: the copy thread takes ssh's stdout into
 * the one file of the private directory; c->fd is ssh's stdin, whose closing stops it. */
static bool start_remote(struct ml_capture *c, const char *uri, const char *tap, GError **err)
{
    g_autofree char *script = ml_capture_remote_script(tap);
    g_auto(GStrv) argv = ml_hostshell_argv(uri, script, err);
    if (!argv)
        return false;
    struct ml_capture_copy *cp = c->copy = copy_new();
    g_autofree char *path = g_strdup_printf("%s/%s0", c->tmp_path, ML_CAPTURE_BASE);
    cp->file = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1};
    bool piped = cp->file >= 0 && pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0 &&
                 pipe2(errp, O_CLOEXEC) == 0 && pipe2(cp->wake, O_CLOEXEC) == 0;
    int saved = errno;
    pid_t pid = piped ? fork_ssh(argv, in[0], out[1], errp[1]) : -1;
    saved = piped ? errno : saved;
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&errp[1]);
    c->fd = in[1];
    cp->out = out[0];
    cp->err = errp[0];
    if (pid < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot start the capture on %s: %s", tap,
                    g_strerror(saved));
        return false;
    }
    c->pid = cp->pid = pid;
    cp->thread = g_thread_new("meshlab-capture", copy_main, cp);
    /* The capture counts from tcpdump's first packet: wait for the host to say it listens. */
    return wait_ready(cp, tap, err);
}

bool ml_capture_start(struct ml_capture *c, const char *uri, const char *tap, const char *rel,
                      GError **err)
{
    *c = (struct ml_capture){.fd = -1, .stop_s = ML_CAPTURE_STOP_S};
    g_autofree char *bin = g_find_program_in_path(TCPDUMP);
    if (!bin && !uri) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "--capture needs tcpdump on this host (apt-get install tcpdump)");
        return false;
    }
    GError *e = NULL;
    g_autofree char *tmpl = ml_leftover_template("capture", "");
    c->tmp_path = g_dir_make_tmp(tmpl, &e);
    if (!c->tmp_path) {
        g_propagate_prefixed_error(err, e, "cannot make a directory for the capture on %s: ", tap);
        return false;
    }
    if (uri) {
        if (start_remote(c, uri, tap, err)) {
            c->rel = g_strdup(rel);
            return true;
        }
        /* Nothing of it stays: not ssh, not the host's tcpdump (its stdin closes), not the
         * directory. */
        stop_remote(c);
        copy_free(c->copy);
        remove_dir(c->tmp_path);
        g_clear_pointer(&c->tmp_path, g_free);
        *c = (struct ml_capture){.fd = -1};
        return false;
    }
    g_autofree char *path = g_build_filename(c->tmp_path, ML_CAPTURE_BASE, NULL);
    g_auto(GStrv) argv = ml_capture_argv(bin, tap, path, geteuid() == 0);
    pid_t pid = fork();
    if (pid < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot start tcpdump: %s", g_strerror(errno));
        return false;
    }
    if (pid == 0) {
        /* Its own group, so a Ctrl-C at the terminal is meshlab's to handle; it dies with
         * meshlab whatever happens to meshlab. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid);
    c->pid = pid;
    c->rel = g_strdup(rel);
    return true;
}

struct ring_file {
    char *path;
    struct timespec mtime;
};

static gint by_mtime(gconstpointer a, gconstpointer b)
{
    const struct ring_file *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->path, y->path);
}

bool ml_capture_collect(const char *dir, int out_fd, bool *ret_wrapped, GError **err)
{
    *ret_wrapped = false;
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    g_autoptr(GArray) files = g_array_new(FALSE, TRUE, sizeof(struct ring_file));
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        if (!g_str_has_prefix(name, ML_CAPTURE_BASE))
            continue;
        struct ring_file f = {g_build_filename(dir, name, NULL), {0}};
        struct stat st;
        if (lstat(f.path, &st) == 0 && S_ISREG(st.st_mode)) {
            f.mtime = st.st_mtim;
            g_array_append_val(files, f);
        } else {
            g_free(f.path);
        }
    }
    /* The ring's oldest file first; each starts with its own pcap header, which only the first
     * keeps: the rest go on the same link and snap length, so the result is one pcap. */
    g_array_sort(files, by_mtime);
    /* Once the ring went round, its first file is no longer its oldest. */
    *ret_wrapped =
        files->len >= ML_CAPTURE_FILES &&
        !g_str_has_suffix(g_array_index(files, struct ring_file, 0).path, "/" ML_CAPTURE_BASE "0");
    bool ok = true;
    enum { CHUNK = 64 * 1024 };
    g_autofree char *buf = g_malloc(CHUNK);
    for (guint i = 0; ok && i < files->len; i++) {
        const char *path = g_array_index(files, struct ring_file, i).path;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot read the capture file %s: %s", path,
                        g_strerror(errno));
            ok = false;
            break;
        }
        size_t skip = i == 0 ? 0 : ML_PCAP_HEADER;
        for (;;) {
            ssize_t r = read(fd, buf, CHUNK);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot read the capture file %s: %s", path,
                            g_strerror(errno));
                ok = false;
                break;
            }
            if (r == 0)
                break;
            size_t drop = MIN(skip, (size_t)r);
            skip -= drop;
            if (!write_all(out_fd, buf + drop, (size_t)r - drop)) {
                g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot write the capture: %s",
                            g_strerror(errno));
                ok = false;
                break;
            }
        }
        close(fd);
    }
    for (guint i = 0; i < files->len; i++)
        g_free(g_array_index(files, struct ring_file, i).path);
    return ok;
}

/* rel below the run directory (already under the lab's write_prefix), created empty through
 * ml_rundir_write (which follows no link), then opened again the same way for the copy. */
static int open_in_run(const struct ml_lab *lab, const char *rel, GError **err)
{
    if (!lab->run_open) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "no run directory is open for '%s'", rel);
        return -1;
    }
    if (!ml_rundir_write(lab->run_fd, rel, "", 0, 0644, err))
        return -1;
    g_auto(GStrv) parts = g_strsplit(rel, "/", -1);
    guint n = g_strv_length(parts);
    int cur = dup(lab->run_fd);
    for (guint i = 0; cur >= 0 && i + 1 < n; i++) {
        int next = openat(cur, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(cur);
        cur = next;
    }
    int fd =
        cur >= 0 ? openat(cur, parts[n - 1], O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC) : -1;
    int saved = errno;
    if (cur >= 0)
        close(cur);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != 0)) {
        close(fd);
        fd = -1;
        saved = EEXIST;
    }
    if (fd < 0)
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot open '%s' in the run directory: %s", rel,
                    g_strerror(saved));
    return fd;
}

/* After a capture on another host: a copy cut at the cap, a file that could not be written,
 * and what the host said while it captured. */
static bool remote_outcome(const struct ml_capture *c, GError **err)
{
    const struct ml_capture_copy *cp = c->copy;
    if (cp->write_errno) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "cannot write the capture that the lab's host sent: %s; check the space "
                    "left in the temporary directory (TMPDIR)",
                    g_strerror(cp->write_errno));
        return false;
    }
    if (cp->capped)
        ml_warn("capture: %s holds only the first %lld MB the tap carried (the cap on each "
                "capture); the capture on the lab's host was stopped there",
                c->rel, ML_CAPTURE_MAX_BYTES / 1000000);
    g_autofree char *later =
        g_strstrip(g_strdup(cp->ready ? cp->said->str + cp->said_ready : ""));
    g_autofree char *tail = g_strdelimit(ml_last_lines(later, 3), "\r\n", ' ');
    if (*tail)
        ml_warn("capture: the lab's host said, while capturing for %s: %.400s", c->rel, tail);
    return true;
}

bool ml_capture_stop(struct ml_capture *c, const struct ml_lab *lab, GError **err)
{
    bool ok = true;
    if (c->copy)
        stop_remote(c);
    else if (c->pid > 0)
        reap(c->pid);
    c->pid = 0;
    if (c->copy)
        ok = remote_outcome(c, err);
    if (ok && c->tmp_path) {
        int out = open_in_run(lab, c->rel, err);
        bool wrapped = false;
        ok = out >= 0 && ml_capture_collect(c->tmp_path, out, &wrapped, err);
        if (out >= 0 && close(out) < 0 && ok) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot write '%s': %s", c->rel,
                        g_strerror(errno));
            ok = false;
        }
        if (ok && wrapped)
            ml_warn("capture: %s holds only the last %d MB the tap carried (the cap on each "
                    "capture)",
                    c->rel, ML_CAPTURE_FILES * ML_CAPTURE_FILE_MB);
    }
    if (!ok)
        g_prefix_error(err, "the capture %s: ", c->rel);
    if (c->tmp_path)
        remove_dir(c->tmp_path);
    close_fd(&c->fd);
    g_clear_pointer(&c->copy, copy_free);
    g_clear_pointer(&c->tmp_path, g_free);
    g_clear_pointer(&c->rel, g_free);
    return ok;
}

bool ml_capture_lab_start(const struct ml_lab *lab, struct ml_capture caps[ML_CAPTURE_TAPS],
                          const char *dir, struct json_object *files, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t nodes[ML_CAPTURE_TAPS] = {t->hub, t->measure.client, t->measure.server};
    memset(caps, 0, sizeof(struct ml_capture) * ML_CAPTURE_TAPS);
    for (size_t k = 0; k < ML_CAPTURE_TAPS; k++) {
        g_autofree char *name = g_strdup_printf("%s/%s.pcap", dir, t->nodes[nodes[k]].name);
        g_autofree char *rel = ml_lab_rel(lab, name);
        if (!ml_capture_start(&caps[k], ml_lab_shell_uri(lab, nodes[k]),
                              lab->plan->guests[nodes[k]].tap, rel, err)) {
            ml_capture_lab_stop(lab, caps);
            return false;
        }
        json_object_array_add(files, json_object_new_string(rel));
    }
    return true;
}

void ml_capture_lab_stop(const struct ml_lab *lab, struct ml_capture caps[ML_CAPTURE_TAPS])
{
    for (size_t k = 0; k < ML_CAPTURE_TAPS; k++) {
        g_autoptr(GError) e = NULL;
        if (caps[k].rel && !ml_capture_stop(&caps[k], lab, &e))
            ml_warn("capture: %s", e->message);
    }
}
