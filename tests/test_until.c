/* run --until PCT[,MAX]: the argument, and the decision after each round whether a cell takes
 * one more pass, on a recorded series (the passes of a real run, then ones that scatter). The
 * measurement loop that asks it (measure.c, rounds) needs guests: the e2e test runs it. */
#include "check.h"

#include <math.h>

#include "core/util.h"
#include "measure/stats.h"
#include "topology/profile.h"

static void test_argument(void)
{
    struct ml_profile p = {0};
    g_autoptr(GError) err = NULL;
    CHECK(ml_profile_set_until(&p, "5", &err));
    CHECK(p.until_percent == 5 && p.until_max == ML_UNTIL_MAX_DEFAULT);
    CHECK(ml_profile_set_until(&p, "2.5,20", &err));
    CHECK(p.until_percent == 2.5 && p.until_max == 20);
    static const char *const bad[] = {"",   "0",   "-1", "101",    "5,1",
                                      "5,", "5,x", "x",  "5,10,3", "5,101"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_clear_error(&err);
        CHECK(!ml_profile_set_until(&p, bad[i], &err));
        CHECK(err && err->code == ML_ERR_INPUT && strstr(err->message, "--until"));
    }
    /* untouched on error */
    CHECK(p.until_percent == 2.5 && p.until_max == 20);
}

/* Feeds a cell's passes one round at a time, as rounds() does; the round it stopped at. */
static unsigned rounds_until(const double *series, size_t n_series, unsigned least, double pct,
                             unsigned max, enum ml_until_verdict *ret, double *ret_half)
{
    for (unsigned r = 1; r <= n_series; r++) {
        *ret = ml_until_next(series, r, r, least, pct, max, ret_half);
        if (*ret != ML_UNTIL_MORE)
            return r;
    }
    return 0;
}

static void test_decision(void)
{
    enum ml_until_verdict u;
    double half;
    /* wireguard-hub forward-1 of a real run (val17): 9.50, 9.35, 9.53 Mbit/s. After 3: mean
     * 9.462, half-width 4.3027 x 0.0958 / sqrt(3) = 0.238, 2.51 %: within ±5 % at its 3rd
     * pass, not earlier (its profile's 3 come first), and not within ±2 % */
    const double wg[] = {9498995.74, 9353464.69, 9534146.41, 9400000, 9480000,
                         9450000,    9470000,    9460000,    9455000, 9465000};
    CHECK(rounds_until(wg, 10, 3, 5, 10, &u, &half) == 3);
    CHECK(u == ML_UNTIL_CONVERGED && fabs(half - 2.515) < 0.005);
    /* ±2 %: one pass more (9.40: mean 9.4465, sd 0.0843, t(0.975, 3) = 3.182, half-width
     * 0.134, 1.42 %) */
    CHECK(rounds_until(wg, 10, 3, 2, 10, &u, &half) == 4);
    CHECK(u == ML_UNTIL_CONVERGED && fabs(half - 1.42) < 0.01);
    /* wireguard-go-hub's passes scatter (4.67, 5.15, 5.50, ...): gives up at MAX */
    const double go[] = {4668404.9, 5152559.6, 5501750.7, 4400000, 5900000, 4500000};
    CHECK(rounds_until(go, 6, 3, 5, 6, &u, &half) == 6);
    CHECK(u == ML_UNTIL_GAVE_UP && half > 5);
    /* fewer than 2 passes that passed: no interval, never converged */
    CHECK(ml_until_next(go, 1, 4, 2, 5, 4, &half) == ML_UNTIL_GAVE_UP && isnan(half));
    CHECK(ml_until_next(go, 1, 3, 2, 5, 4, &half) == ML_UNTIL_MORE);
    /* a profile's own passes are taken even when the first two agree */
    const double same[] = {5, 5, 5};
    CHECK(ml_until_next(same, 2, 2, 3, 5, 10, &half) == ML_UNTIL_MORE && half == 0);
    CHECK(ml_until_next(same, 3, 3, 3, 5, 10, &half) == ML_UNTIL_CONVERGED);
}

int main(void)
{
    test_argument();
    test_decision();
    return check_finish();
}
