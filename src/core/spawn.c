#include "core/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"

/* Seconds a stopped group gets between SIGTERM and SIGKILL: enough for
 * mmdebstrap to unmount its chroot, short enough for a waiting user. */
#define STOP_GRACE_S 5.0

void ml_proc_clear(struct ml_proc *proc)
{
    g_free(proc->out);
    g_free(proc->err);
    memset(proc, 0, sizeof(*proc));
}

/* Runs in the child between fork and exec: only async-signal-safe calls. A
 * group of its own keeps the terminal's Ctrl-C from reaching it directly, so
 * meshlab decides when it stops, and lets meshlab stop its children too. */
static void child_setup(gpointer data)
{
    (void)data;
    setpgid(0, 0);
    /* meshlab ignores SIGPIPE; its children expect the default. */
    signal(SIGPIPE, SIG_DFL);
}

/* Reads what is there, keeping up to ML_PROC_MAX_OUTPUT bytes; false at end
 * of file or on an error. */
static bool drain(int fd, GString *into, bool *cut)
{
    char buf[1 << 16];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0) {
            gsize room = ML_PROC_MAX_OUTPUT - MIN(into->len, ML_PROC_MAX_OUTPUT);
            if ((gsize)n > room)
                *cut = true;
            g_string_append_len(into, buf, (gssize)MIN((gsize)n, room));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 && errno == EAGAIN;
    }
}

/* Stops the group: SIGTERM, then SIGKILL for whatever is left after the grace.
 * Reaps the child; returns its wait status. */
static int stop_group(pid_t pid)
{
    int status = 0;
    kill(-pid, SIGTERM);
    double deadline = ml_now() + STOP_GRACE_S;
    while (ml_now() < deadline) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        g_usleep(20 * 1000);
    }
    kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

bool ml_proc_run(const char *const *argv, double timeout_s, struct ml_proc *ret, GError **err)
{
    return ml_proc_run_opts(argv, NULL, timeout_s, ret, err);
}

bool ml_proc_run_opts(const char *const *argv, const struct ml_proc_opts *opts, double timeout_s,
                      struct ml_proc *ret, GError **err)
{
    static const struct ml_proc_opts none = {0};
    if (!opts)
        opts = &none;
    memset(ret, 0, sizeof(*ret));
    unsigned interrupts_at_start = ml_interrupt_count();
    double start = ml_now();
    double deadline = timeout_s > 0 ? start + timeout_s : 0;
    GPid pid = 0;
    int fds[2] = {-1, -1};
    g_autoptr(GError) spawn_err = NULL;
    if (!g_spawn_async_with_pipes(opts->cwd, (char **)argv, opts->envp,
                                  G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, child_setup,
                                  NULL, &pid, NULL, &fds[0], &fds[1], &spawn_err)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot run '%s': %s", argv[0], spawn_err->message);
        return false;
    }
    GString *text[2] = {g_string_new(NULL), g_string_new(NULL)};
    bool *cut[2] = {&ret->out_cut, &ret->err_cut};
    for (int k = 0; k < 2; k++)
        fcntl(fds[k], F_SETFL, fcntl(fds[k], F_GETFL) | O_NONBLOCK);
    bool reaped = false;
    int status = 0;
    for (;;) {
        if (!reaped) {
            pid_t r = waitpid(pid, &status, WNOHANG);
            if (r == pid) {
                reaped = true;
                /* What it left running in its group has no business going on. */
                kill(-pid, SIGKILL);
            }
        }
        if (fds[0] < 0 && fds[1] < 0 && reaped)
            break;
        if (ml_interrupt_count() != interrupts_at_start) {
            ret->interrupted = true;
            break;
        }
        if (deadline && ml_now() >= deadline) {
            ret->timed_out = true;
            break;
        }
        struct pollfd pfd[2];
        nfds_t n = 0;
        for (int k = 0; k < 2; k++)
            if (fds[k] >= 0)
                pfd[n++] = (struct pollfd){.fd = fds[k], .events = POLLIN};
        /* Short sleeps: a signal does not always wake poll (it may land on
         * another thread), and the child's exit closes nothing when a
         * grandchild holds its pipes. */
        if (n > 0)
            poll(pfd, n, 100);
        else
            g_usleep(20 * 1000);
        for (int k = 0; k < 2; k++) {
            if (fds[k] >= 0 && !drain(fds[k], text[k], cut[k])) {
                close(fds[k]);
                fds[k] = -1;
            }
        }
        if (opts->watch)
            opts->watch(text[1], opts->data);
    }
    if (!reaped)
        status = stop_group(pid);
    for (int k = 0; k < 2; k++) {
        if (fds[k] >= 0) {
            drain(fds[k], text[k], cut[k]);
            close(fds[k]);
        }
    }
    g_spawn_close_pid(pid);
    ret->status = status;
    ret->seconds = ml_now() - start;
    ret->out = g_string_free(text[0], FALSE);
    ret->err = g_string_free(text[1], FALSE);
    return true;
}

bool ml_spawn_timeout(const char *const *argv, double timeout_s, char **ret_stdout, GError **err)
{
    return ml_spawn_opts(argv, NULL, timeout_s, ret_stdout, err);
}

bool ml_spawn_opts(const char *const *argv, const struct ml_proc_opts *opts, double timeout_s,
                   char **ret_stdout, GError **err)
{
    struct ml_proc proc;
    if (!ml_proc_run_opts(argv, opts, timeout_s, &proc, err))
        return false;
    bool ok = false;
    const char *said = *proc.err ? proc.err : proc.out;
    g_autofree char *tail = ml_last_lines(said, 6);
    if (proc.interrupted) {
        g_set_error(err, ML_ERROR, ML_ERR_INTERRUPTED, "interrupted; '%s' was stopped", argv[0]);
    } else if (proc.timed_out) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "'%s' did not finish within %.0f s and was stopped%s%s; run it by hand to "
                    "see where it hangs",
                    argv[0], timeout_s, *tail ? ": " : "", tail);
    } else if (WIFSIGNALED(proc.status)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "'%s' was killed by signal %d", argv[0],
                    WTERMSIG(proc.status));
    } else if (!WIFEXITED(proc.status) || WEXITSTATUS(proc.status) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "'%s' failed (status %d): %s", argv[0],
                    WIFEXITED(proc.status) ? WEXITSTATUS(proc.status) : -1, tail);
    } else if (ret_stdout && proc.out_cut) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "'%s' printed more than %u MiB; meshlab reads no more than that", argv[0],
                    ML_PROC_MAX_OUTPUT >> 20);
    } else {
        ok = true;
        if (ret_stdout)
            *ret_stdout = g_steal_pointer(&proc.out);
    }
    ml_proc_clear(&proc);
    return ok;
}

bool ml_spawn(const char *const *argv, char **ret_stdout, GError **err)
{
    return ml_spawn_timeout(argv, ML_SPAWN_TIMEOUT_S, ret_stdout, err);
}

/* The child's side of ml_run_in_group: the error travels as "CODE\nMESSAGE". */
static G_GNUC_NORETURN void run_child(int fd, bool (*fn)(void *, GError **), void *data)
{
    setpgid(0, 0);
    /* The parent stops this group with SIGTERM: it must end it, not only set
     * meshlab's interrupt flag. */
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    g_autoptr(GError) e = NULL;
    bool ok = fn(data, &e);
    if (!ok) {
        g_autofree char *msg = g_strdup_printf("%d\n%s", e ? e->code : ML_ERR_HOST,
                                               e ? e->message : "failed without saying why");
        size_t len = strlen(msg), off = 0;
        while (off < len) {
            ssize_t w = write(fd, msg + off, len - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
    }
    close(fd);
    fflush(stderr);
    _exit(ok ? 0 : 1);
}

bool ml_run_in_group(const char *what, double timeout_s, bool (*fn)(void *data, GError **err),
                     void *data, GError **err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot start %s: %s", what, g_strerror(errno));
        return false;
    }
    unsigned interrupts_at_start = ml_interrupt_count();
    double deadline = timeout_s > 0 ? ml_now() + timeout_s : 0;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot start %s: %s", what, g_strerror(e));
        return false;
    }
    if (pid == 0) {
        close(p[0]);
        run_child(p[1], fn, data);
    }
    close(p[1]);
    /* Both sides set the group, so that a kill right after fork reaches it. */
    setpgid(pid, pid);
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    GString *msg = g_string_new(NULL);
    bool cut = false, reaped = false, interrupted = false, timed_out = false;
    int status = 0, fd = p[0];
    while (!reaped || fd >= 0) {
        if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            kill(-pid, SIGKILL); /* an appliance left behind has no business going on */
        }
        if (ml_interrupt_count() != interrupts_at_start) {
            interrupted = true;
            break;
        }
        if (deadline && ml_now() >= deadline) {
            timed_out = true;
            break;
        }
        if (fd >= 0) {
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            poll(&pfd, 1, 100);
            if (!drain(fd, msg, &cut)) {
                close(fd);
                fd = -1;
            }
        } else {
            g_usleep(20 * 1000);
        }
    }
    if (!reaped)
        status = stop_group(pid);
    if (fd >= 0) {
        drain(fd, msg, &cut);
        close(fd);
    }
    g_autofree char *text = g_string_free(msg, FALSE);
    if (interrupted) {
        g_set_error(err, ML_ERROR, ML_ERR_INTERRUPTED, "interrupted; %s was stopped", what);
        return false;
    }
    if (timed_out) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "%s did not finish within %.0f s and was stopped with everything it "
                    "started",
                    what, timeout_s);
        return false;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return true;
    char *nl = strchr(text, '\n');
    if (nl) {
        *nl = '\0';
        g_set_error(err, ML_ERROR, (int)g_ascii_strtoll(text, NULL, 10), "%s", nl + 1);
    } else if (WIFSIGNALED(status)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "%s was killed by signal %d", what,
                    WTERMSIG(status));
    } else {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "%s failed without saying why", what);
    }
    return false;
}
