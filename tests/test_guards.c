/* Inputs that must not make meshlab wait forever or report half an answer:
 * MESHLAB_BOOT_TIMEOUT, and guest-exec results the agent cut short. */
#include <json-c/json.h>

#include "virt/agent.h"
#include "check.h"
#include "virt/lab.h"
#include "core/util.h"

static bool boot_timeout(const char *value, double *ret, GError **err)
{
    g_setenv("MESHLAB_BOOT_TIMEOUT", value, TRUE);
    bool ok = ml_lab_boot_timeout(ret, err);
    g_unsetenv("MESHLAB_BOOT_TIMEOUT");
    return ok;
}

static void test_boot_timeout(void)
{
    double t = 0;
    g_unsetenv("MESHLAB_BOOT_TIMEOUT");
    CHECK(ml_lab_boot_timeout(&t, NULL) && t == 600);
    CHECK(boot_timeout("90", &t, NULL) && t == 90);
    CHECK(boot_timeout("2.5", &t, NULL) && t == 2.5);
    static const char *const bad[] = {"nan", "NaN", "inf", "-inf", "infinity", "-1",    "0",
                                      "-0",  "abc", "",    "90s",  "1e400",    "100000"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) err = NULL;
        t = 0;
        bool ok = boot_timeout(bad[i], &t, &err);
        if (ok)
            fprintf(stderr, "MESHLAB_BOOT_TIMEOUT='%s' was accepted as %g\n", bad[i], t);
        CHECK(!ok);
        CHECK(err && err->code == ML_ERR_INPUT);
        CHECK(err && strstr(err->message, "MESHLAB_BOOT_TIMEOUT must be a number of seconds"));
        CHECK(err && strstr(err->message, "unset it for the default of 600 s"));
    }
}

static bool parse_status(const char *json, bool *exited, struct ml_exec *ex, GError **err)
{
    struct json_object *r = json_tokener_parse(json);
    CHECK(r != NULL);
    bool ok = ml_agent_exec_status_parse(r, exited, ex, err);
    json_object_put(r);
    return ok;
}

static void test_exec_status(void)
{
    struct ml_exec ex = {0};
    bool exited = true;
    CHECK(parse_status("{\"exited\": false}", &exited, &ex, NULL));
    CHECK(!exited);

    /* "aGVsbG8K" is "hello\n", "b29wcw==" is "oops". */
    CHECK(parse_status("{\"exited\": true, \"exitcode\": 3, \"out-data\": \"aGVsbG8K\", "
                       "\"err-data\": \"b29wcw==\"}",
                       &exited, &ex, NULL));
    CHECK(exited && ex.exit_code == 3);
    CHECK_STR(ex.out, "hello\n");
    CHECK_STR(ex.err, "oops");
    ml_exec_clear(&ex);

    CHECK(parse_status("{\"exited\": true, \"signal\": 9}", &exited, &ex, NULL));
    CHECK(exited && ex.exit_code == -1);
    CHECK_STR(ex.out, "");
    ml_exec_clear(&ex);

    /* A false flag is no truncation. */
    CHECK(parse_status("{\"exited\": true, \"exitcode\": 0, \"out-data\": \"aGVsbG8K\", "
                       "\"out-truncated\": false}",
                       &exited, &ex, NULL));
    CHECK(exited);
    CHECK_STR(ex.out, "hello\n");
    ml_exec_clear(&ex);

    g_autoptr(GError) err = NULL;
    CHECK(!parse_status("{\"exited\": true, \"exitcode\": 0, \"out-data\": \"aGVsbG8K\", "
                        "\"out-truncated\": true}",
                        &exited, &ex, &err));
    CHECK(err && err->code == ML_ERR_GUEST);
    CHECK(err && strstr(err->message, "cut the command's output short (out-truncated)"));
    CHECK(ex.out == NULL);

    g_autoptr(GError) err2 = NULL;
    CHECK(!parse_status("{\"exited\": true, \"exitcode\": 1, \"err-data\": \"b29wcw==\", "
                        "\"err-truncated\": true}",
                        &exited, &ex, &err2));
    CHECK(err2 && strstr(err2->message, "cut the command's error output short (err-truncated)"));
    CHECK(ex.err == NULL);
}

int main(void)
{
    test_boot_timeout();
    test_exec_status();
    return check_finish();
}
