/* Where an export reads and writes. A run directory is something people send each other: export
 * reads only its own regular files, never through a link. The export holds private keys and
 * goes where --to says: the directory above it is opened as a run directory's parents are (no
 * link followed on the way, owned by root or the caller, writable by no one else), the export
 * is made in a stage beside it, and the stage is written, checked and renamed into place
 * through descriptors, never by path: what is handed over is what this process wrote. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

/* The regular file rel ("rulesets/plain/hub.nft") below the directory dirfd, read whole as report
 * reads a run directory (ml_runfile_read: no link followed, nothing but a regular file opened,
 * nothing over max bytes, nothing quoted); shown names dirfd in messages. */
char *ml_export_read_at(int dirfd, const char *shown, const char *rel, gsize max, gsize *ret_len,
                        GError **err);

struct ml_export_place {
    int parent;    /* the directory that takes the export; -1 once closed */
    int fd;        /* the stage, made in parent */
    char *shown;   /* the export's path as given, for messages */
    char *base;    /* the export's name in parent */
    char *stage;   /* the stage's name in parent: ".BASE.KIND-PID" */
    dev_t dev;     /* the stage's identity, as made */
    ino_t ino;
    bool placed;   /* renamed into place */
};

/* Opens the directory above `to` and makes the stage (kind "partial", or "unverified" for an
 * export --verify tries first) in it, mode 0700. First removes, saying so, the stages of exports
 * to the same place whose process is gone (they may hold private keys). Refused (ML_ERR_INPUT):
 * a link on the way, a directory another user owns or that group or others may write, and a
 * `to` that exists and is not an empty directory (an export never writes over another). */
bool ml_export_place_open(const char *to, const char *kind, struct ml_export_place *ret,
                          GError **err);

/* Renames the stage to the export's name, when the stage's name still names the directory
 * this process made (checked before and after): a stage swapped for another directory is never
 * handed over. */
bool ml_export_place_commit(struct ml_export_place *p, GError **err);

/* Closes p. A stage not placed is emptied through its descriptor (its keys go, wherever it is
 * now) and removed when its name is still the one made. NULL and a closed p are fine. */
void ml_export_place_close(struct ml_export_place *p);
