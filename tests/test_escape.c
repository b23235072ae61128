/* Text from guests and results files reaches the terminal with its control characters
 * escaped: in progress lines and warnings (ml_log_format), in errors (cmd_fail) and in what the
 * verbs' text renderers print (cmd_print). Newline and tab stay; other text is untouched. */
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "cli/commands.h"
#include "cli/print.h"
#include "core/util.h"
#include "results/json.h"

static void test_escape(void)
{
    g_autofree char *clear = ml_escape_controls("\x1b[2J");
    CHECK_STR(clear, "\\x1b[2J");
    g_autofree char *mixed = ml_escape_controls("a\tb\nc\rd\x07\x7f\x01");
    CHECK_STR(mixed, "a\tb\nc\\x0dd\\x07\\x7f\\x01");
    /* C1 as UTF-8 (U+009B is CSI), a lone C1 byte (not UTF-8), and text that is fine */
    g_autofree char *c1 = ml_escape_controls("\xc2\x9b"
                                             "31m \x9b"
                                             "31m × ü → 🙂");
    CHECK_STR(c1, "\\u009b31m \\x9b31m × ü → 🙂");
    g_autofree char *null = ml_escape_controls(NULL);
    CHECK_STR(null, "");
}

static void test_log_format(void)
{
    struct ml_log_event e = {ML_LOG_PROGRESS, 1.0, "boot", "guest said \x1b[2J\x1b]0;owned\x07"};
    g_autofree char *line = ml_log_format(&e);
    CHECK_STR(line, "[   1.0s] boot       guest said \\x1b[2J\\x1b]0;owned\\x07");
    struct ml_log_event w = {ML_LOG_WARN, 1.0, "warning", "setup failed: \x1b[31mred"};
    g_autofree char *wline = ml_log_format(&w);
    CHECK_STR(wline, "meshlab: warning: setup failed: \\x1b[31mred");
}

/* What fn writes to stderr. */
static char *stderr_of(void (*fn)(void))
{
    char path[] = "/tmp/meshlab-test-escape-XXXXXX";
    int fd = g_mkstemp(path);
    if (fd < 0)
        return NULL;
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    char *text = NULL;
    g_file_get_contents(path, &text, NULL, NULL);
    g_unlink(path);
    return text;
}

static int fail_status;

static void fail_with_escape(void)
{
    g_autoptr(GError) err =
        g_error_new(ML_ERROR, ML_ERR_GUEST, "the guest said: %s", "\x1b[2J\x1b[1;1Hall good\r\n");
    fail_status = cmd_fail(err);
}

static void text_with_escape(FILE *f, struct json_object *doc)
{
    fprintf(f, "state: %s\n", ml_j_str(doc, "state"));
}

static void print_with_escape(void)
{
    struct json_object *doc = json_tokener_parse("{\"state\": \"up\\u001b[8m hidden\"}");
    cmd_print(stderr, CMD_TEXT, doc, text_with_escape);
    cmd_print(stderr, CMD_JSON, doc, text_with_escape);
    json_object_put(doc);
}

static void test_cli(void)
{
    g_autofree char *err = stderr_of(fail_with_escape);
    CHECK_STR(err, "meshlab: the guest said: \\x1b[2J\\x1b[1;1Hall good\\x0d\n\n");
    CHECK(fail_status == ML_EXIT_FAIL);
    g_autofree char *printed = stderr_of(print_with_escape);
    CHECK(printed && g_str_has_prefix(printed, "state: up\\x1b[8m hidden\n"));
    /* JSON says it in its own escape */
    CHECK(printed && strstr(printed, "\"state\": \"up\\u001b[8m hidden\""));
    CHECK(printed && !strchr(printed, '\x1b'));
}

int main(void)
{
    test_escape();
    test_log_format();
    test_cli();
    return check_finish();
}
