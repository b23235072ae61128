/* Host programs end when they should: at their deadline, on Ctrl-C, with
 * everything they started. The interrupt tests come last and in order: the
 * interrupt count only grows. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/spawn.h"
#include "core/util.h"

static char *tmpdir;

/* Dead or a zombie nobody reaped yet: either way it runs no more. */
static bool gone(long pid)
{
    if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
        return true;
    g_autofree char *path = g_strdup_printf("/proc/%ld/stat", pid);
    g_autofree char *stat = NULL;
    if (!g_file_get_contents(path, &stat, NULL, NULL))
        return true;
    const char *close_paren = strrchr(stat, ')');
    return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

static bool gone_soon(long pid)
{
    for (int i = 0; i < 100; i++) {
        if (gone(pid))
            return true;
        g_usleep(20 * 1000);
    }
    return false;
}

/* A shell that starts a sleeping grandchild in the background, writes both
 * pids to pidfile, and sleeps itself. */
static void sleepers_argv(const char *pidfile, const char *argv[4])
{
    static char script[512];
    g_snprintf(script, sizeof(script), "sleep 30 & echo $$ $! > '%s'; sleep 30", pidfile);
    argv[0] = "sh";
    argv[1] = "-c";
    argv[2] = script;
    argv[3] = NULL;
}

static void read_pids(const char *pidfile, long *shell, long *grandchild)
{
    g_autofree char *text = NULL;
    *shell = *grandchild = 0;
    if (g_file_get_contents(pidfile, &text, NULL, NULL))
        sscanf(text, "%ld %ld", shell, grandchild);
}

static void test_plain(void)
{
    const char *echo[] = {"echo", "hello", NULL};
    g_autofree char *out = NULL;
    CHECK(ml_spawn_timeout(echo, 10, &out, NULL));
    CHECK_STR(out, "hello\n");

    const char *fail[] = {"sh", "-c", "echo partial; echo 'it broke' >&2; exit 3", NULL};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_spawn_timeout(fail, 10, NULL, &err));
    CHECK(err && err->code == ML_ERR_HOST);
    CHECK(err && strstr(err->message, "'sh' failed (status 3): it broke"));

    const char *missing[] = {"meshlab-no-such-program", NULL};
    g_autoptr(GError) merr = NULL;
    CHECK(!ml_spawn(missing, NULL, &merr));
    CHECK(merr && strstr(merr->message, "cannot run 'meshlab-no-such-program'"));
}

/* A program that prints without end cannot fill meshlab's memory, and a cut
 * output is not passed off as the whole. */
static void test_output_cap(void)
{
    const char *flood[] = {"head", "-c", "70000000", "/dev/zero", NULL};
    struct ml_proc proc;
    CHECK(ml_proc_run(flood, 30, &proc, NULL));
    CHECK(proc.out_cut && !proc.err_cut);
    CHECK(WIFEXITED(proc.status) && WEXITSTATUS(proc.status) == 0);
    ml_proc_clear(&proc);
    g_autofree char *out = NULL;
    g_autoptr(GError) err = NULL;
    CHECK(!ml_spawn_timeout(flood, 30, &out, &err));
    CHECK(out == NULL);
    CHECK(err && strstr(err->message, "'head' printed more than 64 MiB"));
    CHECK(ml_spawn_timeout(flood, 30, NULL, NULL));
}

/* The child leads a process group of its own: Ctrl-C on the terminal reaches
 * meshlab only, and meshlab can stop the child with all it started. */
static void test_own_group(void)
{
    const char *argv[] = {"sh", "-c", "echo $$ $(cut -d' ' -f5 /proc/$$/stat)", NULL};
    g_autofree char *out = NULL;
    CHECK(ml_spawn_timeout(argv, 10, &out, NULL));
    long pid = 0, pgid = 0;
    CHECK(out && sscanf(out, "%ld %ld", &pid, &pgid) == 2);
    CHECK(pid > 0 && pid == pgid);
    CHECK(pgid != (long)getpgrp());
}

/* A background process that holds the output pipes does not keep meshlab
 * waiting once the program itself is done. */
static void test_leftover_holds_pipes(void)
{
    g_autofree char *pidfile = g_build_filename(tmpdir, "leftover.pid", NULL);
    g_autofree char *script = g_strdup_printf("sleep 30 & echo $! > '%s'; echo done", pidfile);
    const char *argv[] = {"sh", "-c", script, NULL};
    g_autofree char *out = NULL;
    double t0 = ml_now();
    CHECK(ml_spawn_timeout(argv, 20, &out, NULL));
    CHECK(ml_now() - t0 < 3);
    CHECK_STR(out, "done\n");
    long sleeper = 0, none = 0;
    read_pids(pidfile, &sleeper, &none);
    CHECK(sleeper > 0 && gone_soon(sleeper));
}

static void test_timeout(void)
{
    g_autofree char *pidfile = g_build_filename(tmpdir, "timeout.pid", NULL);
    const char *argv[4];
    sleepers_argv(pidfile, argv);
    g_autoptr(GError) err = NULL;
    double t0 = ml_now();
    CHECK(!ml_spawn_timeout(argv, 1, NULL, &err));
    double took = ml_now() - t0;
    CHECK(took >= 0.9 && took < 4);
    CHECK(err && err->code == ML_ERR_HOST);
    CHECK(err && strstr(err->message, "'sh' did not finish within 1 s and was stopped"));
    long shell = 0, grandchild = 0;
    read_pids(pidfile, &shell, &grandchild);
    CHECK(shell > 0 && gone_soon(shell));
    CHECK(grandchild > 0 && gone_soon(grandchild));

    /* A program that ignores SIGTERM gets SIGKILL after the grace. */
    const char *stubborn[] = {"sh", "-c", "trap '' TERM; sleep 30 & wait; sleep 30", NULL};
    struct ml_proc proc;
    t0 = ml_now();
    CHECK(ml_proc_run(stubborn, 0.5, &proc, NULL));
    took = ml_now() - t0;
    CHECK(proc.timed_out && !proc.interrupted);
    CHECK(took >= 5 && took < 9);
    ml_proc_clear(&proc);
}

static gpointer interrupt_soon(gpointer data)
{
    g_usleep(300 * 1000);
    kill(getpid(), SIGINT);
    return NULL;
}

/* Reads what fd 2 received while fn ran. */
static char *stderr_of(void (*fn)(void))
{
    g_autofree char *path = g_build_filename(tmpdir, "stderr", NULL);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *text = NULL;
    g_file_get_contents(path, &text, NULL, NULL);
    return text ? text : g_strdup("");
}

static void raise_sigint(void)
{
    raise(SIGINT);
}

static void test_interrupts(void)
{
    ml_signals_install();
    CHECK(ml_interrupt_count() == 0);
    g_autofree char *pidfile = g_build_filename(tmpdir, "interrupt.pid", NULL);
    const char *argv[4];
    sleepers_argv(pidfile, argv);
    GThread *thread = g_thread_new("interrupt", interrupt_soon, NULL);
    g_autoptr(GError) err = NULL;
    double t0 = ml_now();
    CHECK(!ml_spawn_timeout(argv, 30, NULL, &err));
    CHECK(ml_now() - t0 < 5);
    g_thread_join(thread);
    CHECK(err && err->code == ML_ERR_INTERRUPTED);
    long shell = 0, grandchild = 0;
    read_pids(pidfile, &shell, &grandchild);
    CHECK(shell > 0 && gone_soon(shell));
    CHECK(grandchild > 0 && gone_soon(grandchild));
    CHECK(ml_interrupt_count() == 1);

    /* After the first interrupt the cleanup still runs programs. */
    const char *echo[] = {"echo", "cleanup", NULL};
    g_autofree char *out = NULL;
    CHECK(ml_spawn_timeout(echo, 10, &out, NULL));
    CHECK_STR(out, "cleanup\n");

    /* The second skips the logs, the third and later change nothing. */
    g_autofree char *second = stderr_of(raise_sigint);
    CHECK(ml_interrupt_count() == 2);
    CHECK(strstr(second, "interrupted again: skipping the guests' logs, tearing down now"));
    g_autofree char *third = stderr_of(raise_sigint);
    CHECK(ml_interrupt_count() == 3);
    CHECK(strstr(third, "still tearing down, please wait"));
}

/* Work done inside the library, like libguestfs's appliance: a program it
 * starts with no argv of meshlab's, then a long wait. */
static bool start_and_wait(void *data, GError **err)
{
    const char *pidfile = data;
    g_autofree char *script = g_strdup_printf("echo $$ > '%s'; exec sleep 30", pidfile);
    const char *argv[] = {"sh", "-c", script, NULL};
    if (!g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, err))
        return false;
    g_usleep(30 * G_USEC_PER_SEC);
    return true;
}

static bool fail_in_child(void *data, GError **err)
{
    (void)data;
    g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "the appliance could not mount /");
    return false;
}

static bool succeed_in_child(void *data, GError **err)
{
    (void)err;
    return g_file_set_contents(data, "done", -1, NULL);
}

static long pid_in(const char *pidfile)
{
    for (int i = 0; i < 100; i++) {
        g_autofree char *text = NULL;
        if (g_file_get_contents(pidfile, &text, NULL, NULL) && *text)
            return strtol(text, NULL, 10);
        g_usleep(20 * 1000);
    }
    return 0;
}

/* SIGINT once the work has started its program (the file names its pid). */
static gpointer interrupt_once_started(gpointer pidfile)
{
    for (int i = 0; i < 500 && !g_file_test(pidfile, G_FILE_TEST_EXISTS); i++)
        g_usleep(20 * 1000);
    g_usleep(100 * 1000);
    kill(getpid(), SIGINT);
    return NULL;
}

static void test_in_group(void)
{
    g_autofree char *done = g_build_filename(tmpdir, "in-group.done", NULL);
    g_autoptr(GError) err = NULL;
    CHECK(ml_run_in_group("a test", 10, succeed_in_child, done, &err));
    CHECK(g_file_test(done, G_FILE_TEST_EXISTS));

    /* Its error comes back with its code and message. */
    CHECK(!ml_run_in_group("a test", 10, fail_in_child, NULL, &err));
    CHECK(err && err->code == ML_ERR_IMAGE);
    CHECK_STR(err ? err->message : NULL, "the appliance could not mount /");
    g_clear_error(&err);

    /* A hang: stopped at the deadline, with what it started. */
    g_autofree char *pidfile = g_build_filename(tmpdir, "in-group-timeout.pid", NULL);
    double t0 = ml_now();
    CHECK(!ml_run_in_group("a test", 1, start_and_wait, pidfile, &err));
    CHECK(ml_now() - t0 < 8);
    CHECK(err && strstr(err->message, "a test did not finish within 1 s"));
    long started = pid_in(pidfile);
    CHECK(started > 0 && gone_soon(started));
    g_clear_error(&err);

    /* Ctrl-C: stopped at once, with what it started. */
    g_autofree char *pidfile2 = g_build_filename(tmpdir, "in-group-interrupt.pid", NULL);
    GThread *thread = g_thread_new("interrupt", interrupt_once_started, pidfile2);
    t0 = ml_now();
    CHECK(!ml_run_in_group("a test", 30, start_and_wait, pidfile2, &err));
    CHECK(ml_now() - t0 < 15);
    g_thread_join(thread);
    CHECK(err && err->code == ML_ERR_INTERRUPTED);
    started = pid_in(pidfile2);
    CHECK(started > 0 && gone_soon(started));
}

int main(void)
{
    ml_log_init();
    tmpdir = g_dir_make_tmp("meshlab-test-spawn-XXXXXX", NULL);
    test_plain();
    test_output_cap();
    test_own_group();
    test_leftover_holds_pipes();
    test_timeout();
    test_interrupts();
    test_in_group();
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0);
    g_free(tmpdir);
    return check_finish();
}
