/* What a meshlab killed by SIGKILL (or a crash) leaves outside libvirt: seeds,
 * captures, plots, KVM probes and the export's key directories in $TMPDIR,
 * half-built images and half-written files in the cache and state directories.
 * Each carries its writer's pid in its name, so only the leftovers of processes
 * that are gone are touched. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* Seeds are assembled in $TMPDIR/meshlab-seed-<pid>-XXXXXX. */
#define ML_SEED_TMP_PREFIX "meshlab-seed-"

/* The template of a temporary file or directory in $TMPDIR that the sweep knows:
 * "meshlab-KIND-<pid>-XXXXXX" and suffix, KIND one of seed, capture, plot, kvm, export (the
 * export's checks and key making: they hold private keys). */
char *ml_leftover_template(const char *kind, const char *suffix);

typedef void (*ml_leftover_cb)(const char *path, void *opaque);

/* Finds the leftovers of dead meshlab processes and, with remove, deletes
 * them (never following a link). Calls cb for each; returns how many. */
int ml_leftovers_sweep(bool remove, ml_leftover_cb cb, void *opaque);

/* The pid a meshlab temporary name carries, or 0 when name is not one. */
int ml_leftover_pid(const char *name);
