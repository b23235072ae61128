/* One meshlab at a time per lab: up, run and down hold an exclusive flock on
 * <state>/labs/LAB.lock from before they look at the lab until they end, so
 * two invocations never build, measure or tear down the same lab at once. The
 * kernel drops the lock when its holder dies, even by SIGKILL. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* Takes the lab's lock without waiting and records this process and verb in
 * it. Returns the descriptor that holds it, or -1 with err saying which pid
 * holds it, since when and doing what. */
int ml_lock_lab(const char *lab, const char *verb, GError **err);

/* Deletes the lock file and releases the lock, so no lock file outlives its
 * holder; a taker that opened the old file notices that it is gone and starts
 * again. */
void ml_lock_release(const char *lab, int fd);

/* The lock file's path. */
char *ml_lock_path(const char *lab);
