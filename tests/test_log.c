/* Progress and warnings go through one sink: a test (or a JSON writer) sees
 * each event's phase and message, and the default sink writes the familiar
 * "[  12.3s] phase      message" lines to stderr. */
#include "check.h"

#include <fcntl.h>
#include <unistd.h>

#include "core/util.h"

struct captured {
    GPtrArray *lines; /* "KIND|phase|message" */
    int calls;
};

static void capture(const struct ml_log_event *e, void *data)
{
    struct captured *c = data;
    c->calls++;
    g_ptr_array_add(c->lines,
                    g_strdup_printf("%s|%s|%s", e->kind == ML_LOG_WARN ? "warn" : "progress",
                                    e->phase, e->message));
}

/* What the default sink wrote to stderr while fn ran. */
static char *stderr_of(void (*fn)(void))
{
    g_autofree char *path = g_build_filename(g_get_tmp_dir(), "meshlab-test-log-XXXXXX", NULL);
    int fd = g_mkstemp(path);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    dup2(saved, 2);
    close(saved);
    close(fd);
    char *text = NULL;
    g_file_get_contents(path, &text, NULL, NULL);
    unlink(path);
    return text;
}

static void say_boot(void)
{
    ml_progress("boot", "guest %s is up", "client-a");
    ml_warn("cache at %s is %d%% full", "/var/cache", 93);
}

int main(void)
{
    ml_log_init();
    struct captured c = {g_ptr_array_new_with_free_func(g_free), 0};
    struct ml_log_sink mine = {capture, &c};
    struct ml_log_sink before = ml_log_set_sink(&mine);
    CHECK(before.fn == ml_log_stderr);

    ml_progress("measure", "path %s: %d of %d", "wireguard-hub", 2, 7);
    ml_warn("teardown incomplete: %s", "pool busy");
    CHECK(c.lines->len == 2);
    if (c.lines->len == 2) {
        CHECK_STR(g_ptr_array_index(c.lines, 0), "progress|measure|path wireguard-hub: 2 of 7");
        CHECK_STR(g_ptr_array_index(c.lines, 1), "warn|warning|teardown incomplete: pool busy");
    }

    /* Quiet drops progress, never a warning. */
    ml_log_set_quiet(true);
    ml_progress("boot", "dropped");
    ml_warn("kept");
    ml_log_set_quiet(false);
    CHECK(c.calls == 3);
    CHECK(c.lines->len == 3 && !strcmp(g_ptr_array_index(c.lines, 2), "warn|warning|kept"));

    /* The default sink's format. */
    struct ml_log_event e = {ML_LOG_PROGRESS, 12.34, "boot", "guest client-a is up"};
    g_autofree char *line = ml_log_format(&e);
    CHECK_STR(line, "[  12.3s] boot       guest client-a is up");
    struct ml_log_event w = {ML_LOG_WARN, 1.0, "warning", "no space"};
    g_autofree char *wline = ml_log_format(&w);
    CHECK_STR(wline, "meshlab: warning: no space");

    /* NULL puts the default back: it writes to stderr, and ours no longer hears. */
    struct ml_log_sink was = ml_log_set_sink(NULL);
    CHECK(was.fn == capture && was.data == &c);
    g_autofree char *err = stderr_of(say_boot);
    CHECK(err && g_regex_match_simple("^\\[ *[0-9]+\\.[0-9]s\\] boot       guest client-a is up\\n"
                                      "meshlab: warning: cache at /var/cache is 93% full\\n$",
                                      err, 0, 0));
    CHECK(c.calls == 3);
    g_ptr_array_unref(c.lines);
    return check_finish();
}
