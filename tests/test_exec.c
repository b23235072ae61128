/* meshlab exec's pure parts: the command line the guest's shell runs (run here through a real
 * /bin/sh, as the guest's would), the namespace check, the streaming reader's offsets, and the
 * agent replies it reads. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cli/commands.h"
#include "core/util.h"
#include "virt/agent.h"

static void test_command_line(void)
{
    char *plain[] = {"nft", "list", "ruleset", NULL};
    g_autofree char *a = cmd_exec_command_line(plain, false);
    CHECK_STR(a, "'nft' 'list' 'ruleset'");
    g_autofree char *b = cmd_exec_command_line(plain, true);
    CHECK_STR(b, "ip netns exec mlnat 'nft' 'list' 'ruleset'");
    char *hostile[] = {"echo", "it's", "$(x)", NULL};
    g_autofree char *c = cmd_exec_command_line(hostile, false);
    CHECK_STR(c, "'echo' 'it'\\''s' '$(x)'");
}

/* Runs the guest script with /bin/sh as qemu-ga would (sh -c SCRIPT); returns the wait
 * status and the pid of the shell it started. */
static int run_script(const char *script, GPid *ret_pid)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    GPid pid = 0;
    g_autoptr(GError) err = NULL;
    if (!g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                       &err)) {
        fprintf(stderr, "cannot run /bin/sh: %s\n", err->message);
        return -1;
    }
    int status = -1;
    waitpid(pid, &status, 0);
    *ret_pid = pid;
    return status;
}

static char *slurp(const char *dir, const char *name)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    char *text = NULL;
    return g_file_get_contents(path, &text, NULL, NULL) ? text : g_strdup("(missing)");
}

/* Every argument arrives as one word, exactly as given, and nothing in one runs. */
static void test_script_round_trip(void)
{
    g_autofree char *dir = g_dir_make_tmp("meshlab-exec-XXXXXX", NULL);
    g_autofree char *pwned = g_build_filename(dir, "pwned", NULL);
    g_autofree char *subst = g_strdup_printf("$(touch %s)", pwned);
    g_autofree char *backq = g_strdup_printf("`touch %s`", pwned);
    char *argv[] = {"printf", "[%s]\\n", "a b",        "it's", "\"q\"", subst, backq,
                    "",       "x\\y",    "two\nlines", "*",    "--",    NULL};
    g_autofree char *line = cmd_exec_command_line(argv, false);
    g_autofree char *script = cmd_exec_script(dir, line);
    GPid pid = 0;
    int st = run_script(script, &pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    g_autofree char *out = slurp(dir, "out");
    g_autofree char *want = g_strdup_printf("[a b]\n[it's]\n[\"q\"]\n[%s]\n[%s]\n[]\n[x\\y]\n"
                                            "[two\nlines]\n[*]\n[--]\n",
                                            subst, backq);
    CHECK_STR(out, want);
    CHECK(!g_file_test(pwned, G_FILE_TEST_EXISTS));

    /* stderr to its own file, appended; the exit status is the command's. */
    char *fail[] = {"sh", "-c", "echo out; echo oops >&2; exit 3", NULL};
    g_autofree char *fline = cmd_exec_command_line(fail, false);
    g_autofree char *fscript = cmd_exec_script(dir, fline);
    st = run_script(fscript, &pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
    g_autofree char *err = slurp(dir, "err");
    CHECK_STR(err, "oops\n");
    g_autofree char *out2 = slurp(dir, "out");
    CHECK(g_str_has_suffix(out2, "[--]\nout\n"));

    /* The pid guest-exec returns leads the command's own process group (what Ctrl-C kills):
     * /proc/PID/stat's fifth field is the group. */
    char *group[] = {"sh", "-c",
                     "read -r pid comm state ppid pgrp rest </proc/$$/stat; "
                     "echo \"$$ $pgrp\"",
                     NULL};
    g_autofree char *gline = cmd_exec_command_line(group, false);
    g_autofree char *gscript = cmd_exec_script(dir, gline);
    st = run_script(gscript, &pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    g_autofree char *all = slurp(dir, "out");
    g_autofree char *ids = g_strdup_printf("out\n%d %d\n", (int)pid, (int)pid);
    CHECK(g_str_has_suffix(all, ids));
    if (!g_str_has_suffix(all, ids))
        fprintf(stderr, "wanted the group line \"%s\" at the end of:\n%s", ids, all);

    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    CHECK(system(rm) == 0);
}

/* Ctrl-C's kill, through the same /bin/sh (dash on Debian, as in the guest), stops the
 * whole group the script started: the command and what it started. */
static void test_kill_group(void)
{
    g_autofree char *dir = g_dir_make_tmp("meshlab-kill-XXXXXX", NULL);
    char *argv[] = {"sh", "-c", "sleep 60 & echo $!; wait", NULL};
    g_autofree char *line = cmd_exec_command_line(argv, false);
    g_autofree char *script = cmd_exec_script(dir, line);
    const char *sh[] = {"/bin/sh", "-c", script, NULL};
    GPid pid = 0;
    CHECK(
        g_spawn_async(NULL, (char **)sh, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, NULL));
    g_autofree char *out = NULL;
    for (int i = 0; i < 100 && (!out || !strchr(out, '\n')); i++) {
        g_free(out);
        out = slurp(dir, "out");
        g_usleep(20000);
    }
    int child = atoi(out);
    CHECK(child > 0 && kill(child, 0) == 0);
    g_autofree char *cmd = cmd_exec_kill_command(pid, "TERM");
    const char *killer[] = {"/bin/sh", "-c", cmd, NULL};
    g_autofree char *kerr = NULL;
    CHECK(g_spawn_sync(NULL, (char **)killer, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, &kerr, NULL,
                       NULL));
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    /* The background sleep was in the group too; it is gone (or a zombie of init's). */
    bool gone = false;
    for (int i = 0; i < 100 && !gone; i++) {
        g_autofree char *stat_path = g_strdup_printf("/proc/%d/stat", child);
        g_autofree char *stat = NULL;
        gone = !g_file_get_contents(stat_path, &stat, NULL, NULL) || strstr(stat, ") Z ");
        if (!gone)
            g_usleep(20000);
    }
    CHECK(gone);
    if (!gone)
        kill(child, SIGKILL);
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    CHECK(system(rm) == 0);
}

static void test_has_netns(void)
{
    CHECK(cmd_exec_has_netns("mlnat (id: 0)\n", "mlnat"));
    CHECK(cmd_exec_has_netns("other\nmlnat\n", "mlnat"));
    CHECK(!cmd_exec_has_netns("mlnat2 (id: 1)\n", "mlnat"));
    CHECK(!cmd_exec_has_netns("", "mlnat"));
    CHECK(!cmd_exec_has_netns(NULL, "mlnat"));
    CHECK(!cmd_exec_has_netns("xmlnat\n", "mlnat"));
}

/* The reader under test reads a real file that grows, as the guest's does. */
static bool pread_file(void *opaque, long long offset, size_t count, GByteArray *out,
                       size_t *ret_count, GError **err)
{
    int fd = *(int *)opaque;
    g_autofree guint8 *buf = g_malloc(count ? count : 1);
    ssize_t n = pread(fd, buf, count, offset);
    if (n < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "pread: %s", g_strerror(errno));
        return false;
    }
    g_byte_array_append(out, buf, (guint)n);
    *ret_count = (size_t)n;
    return true;
}

static void append(const char *path, const char *text)
{
    FILE *f = fopen(path, "a");
    fputs(text, f);
    fclose(f);
}

static void test_drain(void)
{
    g_autofree char *dir = g_dir_make_tmp("meshlab-drain-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "out", NULL);
    append(path, "abc");
    int fd = open(path, O_RDONLY);
    char *text = NULL;
    size_t len = 0;
    FILE *sink = open_memstream(&text, &len);
    struct cmd_exec_tail t = {0};
    g_autoptr(GError) err = NULL;

    CHECK(cmd_exec_drain(&t, pread_file, &fd, 2, SIZE_MAX, sink, &err));
    CHECK(t.offset == 3);
    /* Nothing new: nothing copied, the offset stays. */
    CHECK(cmd_exec_drain(&t, pread_file, &fd, 2, SIZE_MAX, sink, &err));
    CHECK(t.offset == 3);
    /* New bytes after a read that found the end: only they are copied. */
    append(path, "defghij");
    CHECK(cmd_exec_drain(&t, pread_file, &fd, 4, 5, sink, &err));
    CHECK(t.offset == 8); /* at most max per drain */
    CHECK(cmd_exec_drain(&t, pread_file, &fd, 4, 5, sink, &err));
    CHECK(t.offset == 10);
    fflush(sink);
    CHECK(len == 10 && !memcmp(text, "abcdefghij", 10));
    fclose(sink);
    free(text);

    /* A sink that cannot be written fails as the host's error, and the offset says what was
     * really copied. */
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        struct cmd_exec_tail u = {0};
        CHECK(!cmd_exec_drain(&u, pread_file, &fd, 64, SIZE_MAX, full, &err));
        CHECK(err && err->code == ML_ERR_HOST);
        fclose(full);
    }
    close(fd);
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    CHECK(system(rm) == 0);
}

static void test_agent_replies(void)
{
    g_autoptr(GByteArray) out = g_byte_array_new();
    size_t n = 99;
    struct json_object *r =
        json_tokener_parse("{\"count\": 3, \"buf-b64\": \"YWJj\", \"eof\": false}");
    CHECK(ml_agent_file_read_parse(r, 64, out, &n, NULL));
    CHECK(n == 3 && out->len == 3 && !memcmp(out->data, "abc", 3));
    json_object_put(r);
    r = json_tokener_parse("{\"count\": 0, \"eof\": true}");
    CHECK(ml_agent_file_read_parse(r, 64, out, &n, NULL));
    CHECK(n == 0 && out->len == 3);
    json_object_put(r);
    g_autoptr(GError) err = NULL;
    r = json_tokener_parse("{\"count\": 5, \"buf-b64\": \"YWJj\"}");
    CHECK(!ml_agent_file_read_parse(r, 64, out, &n, &err));
    CHECK(out->len == 3);
    json_object_put(r);
    g_clear_error(&err);
    r = json_tokener_parse("{\"buf-b64\": \"YWJj\"}");
    CHECK(!ml_agent_file_read_parse(r, 64, out, &n, &err));
    json_object_put(r);

    /* A command killed by a signal: exec exits 128+N, so the signal must be read. */
    r = json_tokener_parse("{\"exited\": true, \"signal\": 15}");
    bool exited = false;
    struct ml_exec ex = {0};
    CHECK(ml_agent_exec_status_parse(r, &exited, &ex, NULL));
    CHECK(exited && ex.signal == 15 && ex.exit_code == -1);
    ml_exec_clear(&ex);
    json_object_put(r);
    r = json_tokener_parse("{\"exited\": true, \"exitcode\": 2}");
    CHECK(ml_agent_exec_status_parse(r, &exited, &ex, NULL));
    CHECK(exited && ex.signal == 0 && ex.exit_code == 2);
    ml_exec_clear(&ex);
    json_object_put(r);
}

/* Parses reply as the answer to execute, wanting type want; true when it was accepted. When it
 * was refused, err is set and names the command. */
static bool reply_ok(const char *reply, const char *execute, enum json_type want)
{
    g_autoptr(GError) err = NULL;
    struct json_object *r = ml_agent_reply_parse(reply, strlen(reply), execute, want, &err);
    if (r) {
        CHECK(err == NULL && json_object_is_type(r, want));
        json_object_put(r);
        return true;
    }
    CHECK(err && err->code == ML_ERR_GUEST && strstr(err->message, execute));
    return false;
}

static void test_agent_reply_types(void)
{
    CHECK(reply_ok("{\"return\": {\"pid\": 7}}", "guest-exec", json_type_object));
    CHECK(reply_ok("{\"return\": 3}\n", "guest-file-open", json_type_int));
    CHECK(reply_ok("{\"return\": {}}", "guest-ping", json_type_object));
    /* The agent may answer anything: null, another type, no return, half a reply. */
    CHECK(!reply_ok("{\"return\": null}", "guest-exec", json_type_object));
    CHECK(!reply_ok("{\"return\": null}", "guest-file-open", json_type_int));
    CHECK(!reply_ok("{\"return\": \"3\"}", "guest-file-open", json_type_int));
    CHECK(!reply_ok("{\"return\": [1]}", "guest-exec-status", json_type_object));
    CHECK(!reply_ok("{\"error\": {\"class\": \"x\"}}", "guest-exec", json_type_object));
    CHECK(!reply_ok("{\"return\": {\"pid\": 7}", "guest-exec", json_type_object));
    CHECK(!reply_ok("{\"return\": {}} {\"return\": {}}", "guest-ping", json_type_object));
    CHECK(!reply_ok("[]", "guest-ping", json_type_object));
    CHECK(!reply_ok("", "guest-ping", json_type_object));
    g_autoptr(GError) err = NULL;
    CHECK(!ml_agent_reply_parse("{\"return\": null}", 16, "guest-exec", json_type_object, &err));
    CHECK(err && strstr(err->message, "returned null, not an object"));

    /* Members of the wrong type fail with a message instead of being read as 0 or "". */
    static const char *const bad_status[] = {
        "{}",
        "{\"exited\": \"yes\"}",
        "{\"exited\": true, \"exitcode\": \"0\"}",
        "{\"exited\": true, \"exitcode\": 99999999999}",
        "{\"exited\": true, \"signal\": -4}",
        "{\"exited\": true, \"out-data\": 5}",
        "{\"exited\": true, \"err-data\": {}}",
        "{\"exited\": true, \"out-truncated\": \"no\"}",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad_status); i++) {
        struct json_object *r = json_tokener_parse(bad_status[i]);
        bool exited = false;
        struct ml_exec ex = {0};
        g_autoptr(GError) e = NULL;
        CHECK(!ml_agent_exec_status_parse(r, &exited, &ex, &e));
        CHECK(e && e->code == ML_ERR_GUEST && !exited && ex.out == NULL);
        json_object_put(r);
    }
    static const char *const bad_read[] = {
        "{\"count\": \"3\", \"buf-b64\": \"YWJj\"}",
        "{\"count\": 3, \"buf-b64\": 3}",
        "{\"count\": 3, \"buf-b64\": \"YWJj\", \"eof\": 0}",
        "{\"count\": -1}",
        /* More than asked for: 3 bytes when 2 were asked. */
        "{\"count\": 3, \"buf-b64\": \"YWJj\"}",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad_read); i++) {
        struct json_object *r = json_tokener_parse(bad_read[i]);
        g_autoptr(GByteArray) out = g_byte_array_new();
        size_t n = 0;
        g_autoptr(GError) e = NULL;
        CHECK(!ml_agent_file_read_parse(r, 2, out, &n, &e));
        CHECK(e && e->code == ML_ERR_GUEST && out->len == 0);
        json_object_put(r);
    }
    CHECK(!strcmp(ml_agent_error_text(NULL), "no reason was given"));
}

/* ml_agent_run_each's script, run through a real /bin/sh as the guest's would: each command's
 * output comes back in its own section, whether it ends in a newline, prints nothing or spans
 * lines; a failing command stops the rest and its status is the script's. */
static void test_run_each(void)
{
    const char *cmds[] = {"date +%s; echo 'a\tb'", "printf 'no newline'", "true",
                          "printf 'x\\n\\n'"};
    g_autofree char *script = ml_agent_each_script(cmds, G_N_ELEMENTS(cmds));
    g_autofree char *out = NULL;
    int st = -1;
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    CHECK(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &st,
                       NULL));
    CHECK(g_spawn_check_wait_status(st, NULL));
    char *r[4];
    CHECK(ml_agent_each_split(out, 4, r));
    CHECK(g_ascii_strtoll(r[0], NULL, 10) > 1700000000 && g_str_has_suffix(r[0], "\na\tb\n"));
    CHECK_STR(r[1], "no newline\n");
    CHECK_STR(r[2], "");
    CHECK_STR(r[3], "x\n"); /* trailing blank lines are not output a view reads */
    for (size_t i = 0; i < 4; i++)
        g_free(r[i]);
    /* Fewer sections than asked for: no result, nothing allocated. */
    char *q[5];
    CHECK(!ml_agent_each_split(out, 5, q) && !q[0] && !q[4]);

    const char *failing[] = {"echo first", "echo oops; exit 3", "touch /nonexistent/never"};
    g_autofree char *fs = ml_agent_each_script(failing, 3);
    g_autofree char *fout = NULL;
    const char *fargv[] = {"/bin/sh", "-c", fs, NULL};
    CHECK(g_spawn_sync(NULL, (char **)fargv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &fout, NULL, &st,
                       NULL));
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
    CHECK(!ml_agent_each_split(fout, 3, q));
}

int main(void)
{
    test_command_line();
    test_script_round_trip();
    test_run_each();
    test_kill_group();
    test_has_netns();
    test_drain();
    test_agent_replies();
    test_agent_reply_types();
    return check_finish();
}
