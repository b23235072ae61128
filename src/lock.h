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

/* Releases the lock; with remove, also deletes the lock file (down). */
void ml_lock_release(const char *lab, int fd, bool remove);

/* The lock file's path. */
char *ml_lock_path(const char *lab);
