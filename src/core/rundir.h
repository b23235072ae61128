/* The run directory: results.json, report.md, the rulesets and the guests'
 * logs of one run. meshlab runs as root and the directory is often inside a
 * tree a user owns (runs/ in a checkout, or --out), so it is checked before
 * anything is created, opened once, and every write below it goes through that
 * descriptor: no link is followed, and files are created with O_EXCL under a
 * random name and renamed into place. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* The subdirectory of the guests' consoles and journals: a console is a root shell, and
 * anything printed there may be a secret, so ml_rundir_write makes it 0700. */
#define ML_RUNDIR_PRIVATE "guests"

/* The file that marks a directory as one meshlab run: {"lab", "run_id"}. */
#define ML_RUNDIR_MARKER ".meshlab-run"

/* Opens (creating it and its parents if needed) the run directory at path for run run_id
 * of lab, following no link on the way that anyone but root could have made. Refuses a directory
 * owned by another user than the caller or root, or writable by group or others, and a non-empty
 * one, unless it is a run directory of the same lab and force is set: then the old run is removed
 * first, so runs are never mixed. Returns the directory's descriptor, or -1
 * with err set. */
int ml_rundir_open(const char *path, const char *lab, const char *run_id, bool force, GError **err);

/* Whether the directory fd is the caller's or root's and no one else's to write: into one that
 * another user controls, they could plant links or swap what meshlab writes. False with err
 * (ML_ERR_INPUT) naming it as what ("run directory 'X'") and saying advice when it is another's. */
bool ml_dir_private(int fd, const char *what, const char *advice, GError **err);

/* Removes everything below the directory dirfd without following links;
 * shown names it in messages. */
bool ml_rundir_clear(int dirfd, const char *shown, GError **err);

/* Removes the directory at path and everything below it, following no link; quietly, for a
 * half-made directory that is given up (its contents may be secrets). */
void ml_rundir_remove(const char *path);

/* Writes rel (e.g. "guests/hub-console.log") below the directory dirfd,
 * creating the directories on the way, never following a link. */
bool ml_rundir_write(int dirfd, const char *rel, const char *data, gssize len, int mode,
                     GError **err);
/* ml_rundir_write for a secret: the file 0600 and every directory made on the way 0700. */
bool ml_rundir_write_private(int dirfd, const char *rel, const char *data, gssize len,
                             GError **err);
