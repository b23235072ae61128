/* Measurement profiles in a topology (measure.profiles): durations, counts and the matrix of
 * cells each path is measured in, and the seed lab's profiles for a file that gives none.
 * The types and lookups are in topology/topology.h. */
#pragma once

#include "topology/topology.h"
#include "topology/yaml.h"

/* Reads measure.profiles (mapping n) into t->measure.profiles. */
bool ml_profiles_parse(struct ml_yaml *y, yaml_node_t *n, struct ml_topology *t);
/* Gives t the profiles of a file without measure.profiles: full, deep and quick. */
void ml_profiles_default(struct ml_topology *t);

/* --until's default and largest MAX: netperf's -i 10 and a bound on a run's length. */
#define ML_UNTIL_MAX_DEFAULT 10
#define ML_UNTIL_MAX_LIMIT 100
/* Sets p's until_percent and until_max from --until's "PCT[,MAX]" (0 < PCT <= 100, 2 <= MAX
 * <= ML_UNTIL_MAX_LIMIT, MAX ML_UNTIL_MAX_DEFAULT when not given); p is untouched on error. */
bool ml_profile_set_until(struct ml_profile *p, const char *arg, GError **err);
