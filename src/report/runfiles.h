/* The files of a run directory as report and compare read them. A run directory is data that
 * people send each other: only its own regular files are read, below the directory's descriptor,
 * never through a link, and no message quotes what a file holds. (src/export/place.c reads the
 * same way for export, which report/ may not include; one reader in core/rundir.c would serve
 * both.) */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

/* The largest results.json read: far above a long run's, far below what would strain memory. */
#define ML_RESULTS_MAX_BYTES (256u << 20)

/* Whether rel may be a link of report.html into its run directory: a relative path of
 * [A-Za-z0-9._/-] whose every part is neither empty, "." nor "..": no scheme, no backslash,
 * nothing from the root, from another host ("//x") or from above the directory. */
bool ml_runfile_name_ok(const char *rel);

/* The directory path, opened for reading the run's files: a link given as the directory is
 * refused. -1 with err (ML_ERR_INPUT) naming path and why. */
int ml_runfile_dir_open(const char *path, GError **err);

/* Whether the directory dirfd has rel (ml_runfile_name_ok) as a regular file reached through no
 * link. Nothing is opened but directories. */
bool ml_runfile_exists(int dirfd, const char *rel);

/* The regular file rel ("results.json", "raw/plain/01-forward-1-1.iperf3.json") below dirfd,
 * read whole: each directory on the way opened without following a link, the file examined
 * before it is opened (a link, a FIFO, a device or a directory is never opened) and refused over
 * max bytes. NULL with err (ML_ERR_INPUT) naming shown (the file's name as the user knows it)
 * and why, never what the file holds. *ret_len (may be NULL) is its length. */
char *ml_runfile_read(int dirfd, const char *rel, const char *shown, gsize max, gsize *ret_len,
                      GError **err);

/* The results document rel below dirfd (normally "results.json"), read by ml_runfile_read,
 * parsed as one JSON document and checked by ml_results_check: NULL with err (ML_ERR_INPUT)
 * naming shown and the line, column and byte where it stops being JSON and json-c's rule, or the
 * field and the rule it breaks; no byte of the file is quoted beyond a field's name. */
struct json_object *ml_results_read_at(int dirfd, const char *rel, const char *shown,
                                       GError **err);
