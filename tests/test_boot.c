/* What the guests' boot stages mean (virt/lab.c's wait_ready): how a guest's stage goes on, and
 * when the lab is ready, still booting or late, on recorded stages; what a guest's ready file
 * says. No guest boots here: the waiting itself (the guest agent, cloud-init's hold) needs
 * guests and runs in the e2e tests. */
#include "check.h"

#include "core/util.h"
#include "virt/lab.h"

static void test_next(void)
{
    /* An image that takes its seed through the agent is held before cloud-init... */
    CHECK(ml_boot_next(ML_BOOT_AGENT, true) == ML_BOOT_HOLD);
    CHECK(ml_boot_next(ML_BOOT_HOLD, true) == ML_BOOT_CONFIG);
    /* ...one with a seed disk goes from its agent straight to cloud-init. */
    CHECK(ml_boot_next(ML_BOOT_AGENT, false) == ML_BOOT_CONFIG);
    CHECK(ml_boot_next(ML_BOOT_CONFIG, true) == ML_BOOT_READY);
    CHECK(ml_boot_next(ML_BOOT_CONFIG, false) == ML_BOOT_READY);
    CHECK(ml_boot_next(ML_BOOT_READY, false) == ML_BOOT_READY);
}

static const char *const names[] = {"hub", "client-a", "client-b"};

static void test_judge(void)
{
    g_autoptr(GError) err = NULL;
    enum ml_boot_stage all[] = {ML_BOOT_READY, ML_BOOT_READY, ML_BOOT_READY};
    CHECK(ml_boot_judge(all, names, 3, 12.5, 600, &err) == ML_BOOT_ALL_READY && !err);
    /* the last guest ready in the same look as the timeout passed: ready, not late */
    CHECK(ml_boot_judge(all, names, 3, 601, 600, &err) == ML_BOOT_ALL_READY && !err);

    enum ml_boot_stage some[] = {ML_BOOT_READY, ML_BOOT_CONFIG, ML_BOOT_AGENT};
    CHECK(ml_boot_judge(some, names, 3, 30, 600, &err) == ML_BOOT_WAITING && !err);
    CHECK(ml_boot_judge(some, names, 3, 600, 600, &err) == ML_BOOT_WAITING && !err);
    /* past the timeout: each guest not ready, with what it waits for */
    CHECK(ml_boot_judge(some, names, 3, 600.3, 600, &err) == ML_BOOT_LATE);
    CHECK(err && err->code == ML_ERR_GUEST);
    CHECK_STR(err ? err->message : NULL,
              "guests not ready after 600 s: client-a (cloud-init unfinished), client-b (agent "
              "silent); their consoles are kept in the run directory (raise "
              "MESHLAB_BOOT_TIMEOUT on a slow host)");
    g_clear_error(&err);
    enum ml_boot_stage held[] = {ML_BOOT_HOLD, ML_BOOT_READY, ML_BOOT_READY};
    CHECK(ml_boot_judge(held, names, 3, 90.5, 90, &err) == ML_BOOT_LATE);
    CHECK_STR(err ? err->message : NULL,
              "guests not ready after 90 s: hub (cloud-init's hold not reached); their consoles "
              "are kept in the run directory (raise MESHLAB_BOOT_TIMEOUT on a slow host)");
}

/* The ready file of an image that takes its seed through the agent: "ok" and this run's id. */
static void test_ready_file(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *ok = g_strdup("ok\nlab=seed\nrun=20261201-233341-ab12\nnode=hub\n");
    CHECK(ml_boot_ready_file(ok, "20261201-233341-ab12", "hub", &err) && !err);
    /* another run's seed (a saved guest restored with its old seed): not ready, and said so */
    g_autofree char *old = g_strdup("ok\nlab=seed\nrun=20261130-101010-cd34\nnode=hub\n");
    CHECK(!ml_boot_ready_file(old, "20261201-233341-ab12", "hub", &err));
    CHECK_STR(err ? err->message : NULL,
              "guest hub: cloud-init configured it for another run (ok\nlab=seed\n"
              "run=20261130-101010-cd34\nnode=hub); its seed was not this run's");
    g_clear_error(&err);
    /* a run id that only begins like this one's is another run */
    g_autofree char *prefix = g_strdup("ok\nrun=20261201-233341-ab12x\n");
    CHECK(!ml_boot_ready_file(prefix, "20261201-233341-ab12", "hub", &err) && err);
    g_clear_error(&err);
    /* cloud-init failed: the file says why */
    g_autofree char *failed = g_strdup("failed: runcmd exited 1\n");
    CHECK(!ml_boot_ready_file(failed, "20261201-233341-ab12", "client-a", &err));
    CHECK_STR(err ? err->message : NULL,
              "guest client-a: cloud-init did not configure it: failed: runcmd exited 1; its "
              "console and cloud-init log are kept in the run directory");
}

int main(void)
{
    test_ready_file();
    test_next();
    test_judge();
    return check_finish();
}
