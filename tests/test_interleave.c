/* The sweeps interleave the policy groups by round: round 1 of every group, then round 2 ...,
 * never a group's rounds back to back while another group waits, except where one round ends
 * and the next begins: the rounds walk the groups in serpentine order from the group whose
 * policy is in force, so no switch of the policy (a restart of daemons, 10-20 s under TCG) is
 * spent between rounds. The setup and the checks after ride in the groups' first and last
 * visits (measure.c sweep), so they cost none either. */
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
    size_t v[3 * 2];
    ml_sweep_visits(2, 3, 0, v);
    const size_t want[] = {0, 1, /* round 1 */ 1, 0, /* round 2 */ 0, 1 /* round 3 */};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        CHECK(v[i] == want[i]);
    /* every round visits every group once */
    for (unsigned r = 0; r < 3; r++)
        CHECK(v[r * 2] != v[r * 2 + 1]);
    /* one switch within each round, none between rounds: the old cyclic order with its setup
     * and after phases took 1 + 3 + 2 + 1 */
    CHECK(switches(v, 6) == 3);

    /* the fixed-rate sweep starts with the group in force (relay) */
    ml_sweep_visits(2, 1, 1, v);
    CHECK(v[0] == 1 && v[1] == 0);

    /* three groups, three rounds, relay (1) in force: 1 2 0, 0 2 1, 1 2 0 */
    size_t w[3 * 3];
    ml_sweep_visits(3, 3, 1, w);
    const size_t want3[] = {1, 2, 0, 0, 2, 1, 1, 2, 0};
    for (size_t i = 0; i < G_N_ELEMENTS(want3); i++)
        CHECK(w[i] == want3[i]);
    CHECK(switches(w, 9) == 3 * 2);
    /* each round visits each group once */
    for (unsigned r = 0; r < 3; r++)
        CHECK(w[r * 3] + w[r * 3 + 1] + w[r * 3 + 2] == 3 && w[r * 3] != w[r * 3 + 1] &&
              w[r * 3 + 1] != w[r * 3 + 2] && w[r * 3] != w[r * 3 + 2]);

    /* no rounds (no fixed rate): no visits; measure.c sets up and checks every group after */
    v[0] = 42;
    ml_sweep_visits(2, 0, 0, v);
    CHECK(v[0] == 42);

    /* one group: always itself */
    size_t one[2];
    ml_sweep_visits(1, 2, 0, one);
    CHECK(one[0] == 0 && one[1] == 0);
    /* dataplanes.yaml's groups: direct (9 paths, nebula's and tinc's restarting: 11), relay
     * (3, nebula's and tinc's: 5), peer relay (1, its grant: 2): the peer relay, the cheapest
     * to enter, goes in the middle, which every round enters. */
    size_t costs[] = {11, 5, 2};
    size_t order[3];
    ml_groups_arrange(3, costs, order);
    CHECK(order[0] == 0 && order[1] == 2 && order[2] == 1);
    /* walked for three rounds: the middle entered three times, each end twice */
    size_t walk[9];
    ml_sweep_visits(3, 3, 0, walk);
    unsigned entered[3] = {1, 0, 0}; /* the first visit enters group 0 */
    for (size_t i = 1; i < 9; i++)
        entered[walk[i]] += walk[i] != walk[i - 1];
    CHECK(entered[0] == 2 && entered[1] == 3 && entered[2] == 2);
    /* The seed lab's: direct (3), DERP (1), the peer relay (1, its grant given and withdrawn:
     * 2): the peer relay at an end, DERP in the middle, whatever order they came in. */
    size_t seedlab[] = {3, 1, 2}, seedlab2[] = {3, 2, 1};
    ml_groups_arrange(3, seedlab, order);
    CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2);
    ml_groups_arrange(3, seedlab2, order);
    CHECK(order[0] == 0 && order[1] == 2 && order[2] == 1);
    /* four groups: the two costliest at the ends, the two cheapest inside */
    size_t c4[] = {1, 5, 2, 7};
    size_t o4[4];
    ml_groups_arrange(4, c4, o4);
    CHECK(o4[0] == 3 && o4[3] == 1);
    CHECK((o4[1] == 2 && o4[2] == 0) || (o4[1] == 0 && o4[2] == 2));
    /* equal costs: the one given first is taken first (group 0 in force stays first) */
    size_t same[] = {1, 1, 1};
    ml_groups_arrange(3, same, order);
    CHECK(order[0] == 0 && order[1] == 2 && order[2] == 1);
    /* two groups keep their order */
    size_t c2[] = {1, 9};
    size_t o2[2];
    ml_groups_arrange(2, c2, o2);
    CHECK(o2[0] == 0 && o2[1] == 1);

    /* The fixed rate's passes ride in the last rounds' visits, from round 2 at the earliest
     * (the rate is a fraction of the medians before them). */
    static const struct {
        unsigned full, fixed, rounds, from;
    } plans[] = {
        {3, 1, 3, 3}, /* the seed lab's full profile: 3 rounds, the fixed pass in the third */
        {2, 2, 3, 2}, /* dataplanes.yaml's: 2 and 2, the fixed passes in rounds 2 and 3 */
        {2, 1, 2, 2}, /* quick: 2 rounds, the fixed pass in the second */
        {3, 3, 4, 2}, /* deep: 3 and 3, rounds 2 to 4 */
        {1, 1, 2, 2}, /* one full-speed round: the fixed one after it */
        {3, 0, 3, 0}, /* no fixed cell */
        {0, 2, 2, 1}, /* no full-speed cell */
    };
    for (size_t k = 0; k < G_N_ELEMENTS(plans); k++) {
        unsigned rounds = 99, from = 99;
        ml_sweep_plan(plans[k].full, plans[k].fixed, &rounds, &from);
        CHECK(rounds == plans[k].rounds && from == plans[k].from);
    }
    /* The seed lab's three groups, 3 rounds serpentine: 6 switches after the first entry, where
     * a fixed-rate sweep of its own added 2 more (it starts where the rounds ended, then enters
     * the other two). */
    size_t seed[9];
    ml_sweep_visits(3, 3, 0, seed);
    CHECK(switches(seed, 9) == 6);
    return check_finish();
}
