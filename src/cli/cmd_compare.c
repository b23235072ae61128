#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/print.h"
#include "core/util.h"
#include "report/compare.h"
#include "report/schema_check.h"

static const char compare_usage[] =
    "Usage: meshlab compare [--json] RUN_A RUN_B\n\n"
    "Compares two runs (run directories, or their results.json files): for each path both\n"
    "measured, the median throughput of each cell, the hub bytes per payload byte, the RTT\n"
    "p99 under load and the hub's CPU seconds per GB, in A and in B, the difference\n"
    "(absolute and %), and whether it is real: Welch's two-sided t-test of the passes'\n"
    "values, \"differs\" when its p-value is under 0.05, else \"within noise\" (the noise\n"
    "column: t(0.975, df) x sqrt(sA^2/nA + sB^2/nB), s the standard deviation of the\n"
    "passes' values, n their number, df Welch-Satterthwaite's); \"unknown\" with fewer\n"
    "than 2 passes on either side. Warns when the runs\n"
    "used different accelerators or a host was busy. Exits 0, or 2 for a file that is not\n"
    "a meshlab-results/3 document that docs/results.schema.json (built in) accepts.\n\n"
    "  -j, --json   print the comparison as JSON (schema meshlab-compare/2)\n";

static struct json_object *load(const char *arg, char **ret_file, GError **err)
{
    *ret_file = g_file_test(arg, G_FILE_TEST_IS_DIR) ? g_build_filename(arg, "results.json", NULL)
                                                     : g_strdup(arg);
    struct json_object *r = json_object_from_file(*ret_file);
    if (!r)
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "Cannot read %s: %s", *ret_file,
                    json_util_get_last_err());
    else if (!ml_results_check(r, *ret_file, err)) {
        json_object_put(r);
        r = NULL;
    }
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
