#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/session.h"
#include "topology/workload.h"
#include "core/util.h"
#include "measure/metrics.h"
#include "report/report.h"
#include "report/runfiles.h"

static const char report_usage[] =
    "Usage: meshlab report [--traffic GB [--relayed-share F] [--egress-price P]\n"
    "                      [--included-tb T] [--peak-mbit M] [--currency CODE]] RUN_DIR\n\n"
    "Renders RUN_DIR/report.md, RUN_DIR/report.html and the pictures RUN_DIR/plots/*.svg\n"
    "again from RUN_DIR/results.json alone: nothing is measured and no lab is needed. The\n"
    "pictures are drawn with gnuplot (Debian: gnuplot-nox); without it the reports are still\n"
    "written, with a line where each picture would be, and the command exits 0. Exits 2 when\n"
    "RUN_DIR has no results.json this meshlab reads (a meshlab-results/3 document that\n"
    "docs/results.schema.json, built into meshlab, accepts: the first field that breaks it is\n"
    "named, and nothing is written), or is not a directory you own that only you can write.\n"
    "RUN_DIR is data: only its own regular files are read (a link is followed nowhere in it),\n"
    "and report.html links only to files it has.\n"
    "The workload flags, as `meshlab run` takes them (docs/topology.md, vps), price a month\n"
    "of another workload from the run's own figures, over the one the run recorded\n"
    "(vps_workload) key by key; the report says so, and results.json is not changed.\n";

/* The run directory, opened once: results.json is read and the reports are written through this
 * descriptor (no link followed), and only into a directory that its owner alone can write, as
 * 'run' requires. */
static int open_run_dir(const char *path, GError **err)
{
    int fd = ml_runfile_dir_open(path, err);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || (st.st_uid != geteuid() && st.st_uid != 0) ||
        (st.st_mode & (S_IWGRP | S_IWOTH))) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "The run directory %s is writable by others or owned by another user; "
                    "meshlab writes only into a directory that you alone can write (chmod go-w).",
                    path);
        close(fd);
        return -1;
    }
    return fd;
}

/* The options: --help and the workload's flags, kept in order for ml_workload_set. */
static bool report_args(int argc, char **argv, struct ml_session_opts *opts, int *ret_status)
{
    static const struct option options[] = {
        {"help", no_argument, NULL, 'h'}, ML_WORKLOAD_LONG_OPTIONS, {0}};
    if (!ml_session_args(argc, argv, options, report_usage, opts, ret_status))
        return false;
    if (opts->out_dir) { /* the short -o the run verbs share */
        fputs(report_usage, stderr);
        *ret_status = ML_EXIT_USAGE;
        return false;
    }
    return true;
}

int cmd_report_main(int argc, char **argv)
{
    int status;
    struct ml_session_opts opts = {.verb = "report"};
    if (!report_args(argc, argv, &opts, &status))
        return status;
    const char *dir = argv[optind];
    g_autoptr(GError) err = NULL;
    int fd = open_run_dir(dir, &err);
    if (fd < 0)
        return cmd_fail(err);
    g_autofree char *file = g_build_filename(dir, "results.json", NULL);
    struct json_object *results = ml_results_read_at(fd, "results.json", file, &err);
    size_t drawn = 0;
    bool ok = results && ml_session_reprice(results, &opts, &err) &&
              ml_report_write(fd, results, ml_metrics, ml_metrics_count, NULL, &drawn, &err);
    close(fd);
    json_object_put(results);
    if (!ok)
        return cmd_fail(err);
    printf("report:   %s/report.md\nhtml:     %s/report.html\npictures: %zu drawn in %s/plots%s\n",
           dir, dir, drawn, dir,
           drawn ? "" : " (gnuplot missing or nothing to draw; see the report)");
    return ML_EXIT_OK;
}
