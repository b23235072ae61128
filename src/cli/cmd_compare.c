#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/print.h"
#include "core/util.h"
#include "report/compare.h"
#include "report/runfiles.h"

static const char compare_usage[] =
    "Usage: meshlab compare [--json] RUN_A RUN_B\n\n"
    "Compares two runs (run directories, or their results.json files): for each path both\n"
    "measured, the median throughput of each cell, the hub bytes per payload byte, the RTT\n"
    "p99 under load and the hub's CPU seconds per GB, in A and in B, the difference\n"
    "(absolute and %), each side's pass values, and whether it is real: Welch's two-sided\n"
    "t-test of the passes' values (of their logarithms where all are positive), its p-value\n"
    "adjusted by Holm's method over every row tested, \"differs\" when that is under 0.05,\n"
    "else \"within noise\" (the noise column: the difference the row's test alone, before\n"
    "the adjustment, would just call real, at A's level); \"unknown\" with fewer than 2\n"
    "passes on either side, \"censored\" for a\n"
    "p99 that is a lower bound (pings lost beyond it), \"not comparable\" for a fixed-rate\n"
    "cell offered different rates. Warns when the runs\n"
    "used different accelerators or a host was busy. Exits 0, or 2 for a file that is not\n"
    "a meshlab-results/3 document that docs/results.schema.json (built in) accepts, or is\n"
    "not a regular file of its directory (a symbolic link is followed nowhere).\n\n"
    "  -j, --json   print the comparison as JSON (schema meshlab-compare/3)\n";

/* A run directory's results.json, or the results file arg names, read as a file of its own
 * directory: through that directory's descriptor, never through a link. */
static struct json_object *load(const char *arg, char **ret_file, GError **err)
{
    int fd = open(arg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    g_autofree char *rel = NULL;
    if (fd >= 0) {
        rel = g_strdup("results.json");
        *ret_file = g_build_filename(arg, rel, NULL);
    } else if (e == ENOTDIR) { /* a file (a link, too: ml_results_read_at refuses it) */
        g_autofree char *dir = g_path_get_dirname(arg);
        rel = g_path_get_basename(arg);
        *ret_file = g_strdup(arg);
        fd = ml_runfile_dir_open(dir, err);
    } else {
        *ret_file = g_strdup(arg);
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "Cannot read %s: %s; give a run directory or its results.json.", arg,
                    g_strerror(e));
    }
    if (fd < 0)
        return NULL;
    struct json_object *r = ml_results_read_at(fd, rel, *ret_file, err);
    close(fd);
    return r;
}

static void text(FILE *f, struct json_object *cmp)
{
    g_autofree char *t = ml_compare_text(cmp);
    fputs(t, f);
}

int cmd_compare_main(int argc, char **argv)
{
    int status;
    enum cmd_format format;
    if (!cmd_print_args(argc, argv, compare_usage, 2, &format, &status))
        return status;
    g_autoptr(GError) err = NULL;
    g_autofree char *fa = NULL, *fb = NULL;
    struct json_object *a = load(argv[optind], &fa, &err);
    struct json_object *b = a ? load(argv[optind + 1], &fb, &err) : NULL;
    struct json_object *cmp = b ? ml_compare(a, fa, b, fb, &err) : NULL;
    json_object_put(a);
    json_object_put(b);
    if (!cmp)
        return cmd_fail(err);
    cmd_print(stdout, format, cmp, text);
    json_object_put(cmp);
    return ML_EXIT_OK;
}
