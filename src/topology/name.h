/* The rule for names (lab, node, profile, dataplane, image): they become parts of file names
 * and libvirt object names, so every verb checks a name given to it before building anything
 * from it. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* Whether S is a valid name: starts with a lowercase letter, only lowercase letters, digits
 * and '-' (and '.' when allow_dot), does not end with '-' or '.', shorter than ML_NAME_MAX.
 * When not, err (ML_ERR_INPUT) says "WHAT 'S' is not allowed: " and the rule, with S shown
 * escaped and cut short. "", "." and ".." are never names. */
bool ml_name_check(const char *what, const char *s, bool allow_dot, GError **err);

/* S for a message: control characters and '\\' escaped, cut after 48 bytes with "...". */
char *ml_name_shown(const char *s);

/* ml_name_check for a lab's name and one of its nodes' (node may be NULL): what exec and
 * console check before they connect to anything. */
bool ml_name_check_guest(const char *lab, const char *node, GError **err);

/* Whether file is one that meshlab puts in a lab's pool directory (the names
 * topology/plan.c and virt/lab.c give them): NODE.qcow2, NODE-seed.iso, NODE-artifacts.iso,
 * NODE-console.log and virtlogd's rotated NODE-console.log.N. down removes these and leaves
 * anything else, a file added by hand, where it is. */
bool ml_name_is_pool_file(const char *file);
