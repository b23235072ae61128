/* Host programs as children that cannot outlive their welcome: each runs in a
 * process group of its own, with a deadline, and the whole group is stopped
 * (SIGTERM, then SIGKILL after a grace) when the deadline passes or the user
 * interrupts meshlab while it runs. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* The default deadline of ml_spawn: generous, but a hang still ends. */
#define ML_SPAWN_TIMEOUT_S 600.0
/* Bytes of each stream kept; the rest is read and dropped. */
#define ML_PROC_MAX_OUTPUT (64u << 20)

/* What a finished child left behind. */
struct ml_proc {
    int status;       /* wait status; meaningful unless timed_out or interrupted */
    bool timed_out;   /* stopped at its deadline */
    bool interrupted; /* stopped because of a Ctrl-C or SIGTERM that arrived while it ran */
    double seconds;   /* start to end, including the stopping */
    char *out;        /* its stdout, NUL-terminated */
    char *err;        /* its stderr */
    bool out_cut;     /* stdout went past ML_PROC_MAX_OUTPUT; out holds the start */
    bool err_cut;     /* the same for stderr */
};
void ml_proc_clear(struct ml_proc *proc);

/* Runs argv (no shell, PATH searched) to its end or its deadline (timeout_s > 0)
 * and records how it ended. Fails only when the program cannot be started. An
 * interrupt counts only when it arrives after the start: cleanups that run
 * after a first Ctrl-C still get to finish, unless a further one comes. */
bool ml_proc_run(const char *const *argv, double timeout_s, struct ml_proc *ret, GError **err);

/* How ml_proc_run_opts runs a program: in directory cwd (NULL: this one), with the environment
 * envp (NULL: meshlab's), and watch(err, data), when set, called several times a second with its
 * stderr so far (a long build shows its progress from it). */
struct ml_proc_opts {
    const char *cwd;
    char **envp;
    void (*watch)(const GString *err, void *data);
    void *data;
};
bool ml_proc_run_opts(const char *const *argv, const struct ml_proc_opts *opts, double timeout_s,
                      struct ml_proc *ret, GError **err);

/* ml_proc_run that fails unless the program exits 0 (and, when ret_stdout is
 * wanted, printed no more than ML_PROC_MAX_OUTPUT): the message names the
 * program and carries the last lines of its stderr. ML_ERR_INTERRUPTED when
 * it was interrupted, ML_ERR_HOST otherwise. ret_stdout may be NULL. */
bool ml_spawn_timeout(const char *const *argv, double timeout_s, char **ret_stdout, GError **err);
/* ml_spawn_timeout with ml_proc_run_opts's options. */
bool ml_spawn_opts(const char *const *argv, const struct ml_proc_opts *opts, double timeout_s,
                   char **ret_stdout, GError **err);
/* Runs fn(data) in a forked copy of meshlab that leads a process group of its
 * own, so that everything fn starts (libguestfs launches its QEMU appliance
 * from inside the library, where no argv reaches) is stopped with it, at the
 * deadline or on an interrupt, like a program under ml_proc_run. fn's error
 * comes back as err; what fn changes in memory does not (the work must leave
 * its result in files). what names the work in messages. */
bool ml_run_in_group(const char *what, double timeout_s, bool (*fn)(void *data, GError **err),
                     void *data, GError **err);

/* ml_spawn_timeout with ML_SPAWN_TIMEOUT_S. */
bool ml_spawn(const char *const *argv, char **ret_stdout, GError **err);
