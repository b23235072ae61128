/* The sweeps interleave the policy groups by round: round 1 of every group, then round 2 ...,
 * never a group's rounds back to back while another group waits; the setup starts with the
 * group whose policy is in force and each phase starts where the one before ended, so no
 * switch of the policy (a restart of daemons, 10-20 s under TCG) is spent between phases. */
#include "check.h"

#include <stdlib.h>

#include "measure/measure.h"

/* How often the policy changes walking the visits. */
static unsigned switches(const size_t *v, size_t n)
{
    unsigned k = 0;
    for (size_t i = 1; i < n; i++)
        k += v[i] != v[i - 1];
    return k;
}

int main(void)
{
    /* direct (0) and relay (1), 3 rounds, nothing in force */
    size_t v[5 * 2];
    ml_sweep_visits(2, 3, 0, v);
    const size_t want[] = {0, 1, /* setup */ 1, 0, 1, 0, 1, 0, /* rounds */ 0, 1 /* after */};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        CHECK(v[i] == want[i]);
    /* every round visits every group once */
    for (unsigned r = 1; r <= 3; r++)
        CHECK(v[r * 2] != v[r * 2 + 1]);
    /* one switch in the setup, one within each round, one between rounds */
    CHECK(switches(v, 10) == 1 + 3 + 2 + 1);

    /* the fixed-rate sweep starts with the group in force (relay) */
    ml_sweep_visits(2, 1, 1, v);
    CHECK(v[0] == 1 && v[1] == 0 && v[2] == 0 && v[3] == 1 && v[4] == 1 && v[5] == 0);

    /* three groups, two rounds: each round in the same cyclic order */
    size_t w[4 * 3];
    ml_sweep_visits(3, 2, 0, w);
    CHECK(w[0] == 0 && w[1] == 1 && w[2] == 2);
    CHECK(w[3] == 2 && w[4] == 0 && w[5] == 1);
    CHECK(w[6] == 2 && w[7] == 0 && w[8] == 1);
    CHECK(w[9] == 1 && w[10] == 2 && w[11] == 0);

    /* no rounds (no fixed rate): the checks after start where the setup ended */
    ml_sweep_visits(2, 0, 0, v);
    CHECK(v[0] == 0 && v[1] == 1 && v[2] == 1 && v[3] == 0);

    /* one group: always itself */
    size_t one[4];
    ml_sweep_visits(1, 2, 0, one);
    CHECK(one[0] == 0 && one[1] == 0 && one[2] == 0 && one[3] == 0);
    return check_finish();
}
