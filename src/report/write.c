/* The reports of one run, written below its run directory: report.md, report.html and the
 * pictures, all from results.json. */
#include "report/report.h"

#include <fcntl.h>
#include <unistd.h>

#include "core/rundir.h"

/* A picture that an earlier rendering drew and this one did not must not stay beside a report
 * that says it is missing. The plots directory is opened without following a link, and unlinkat
 * removes a link itself, never what it points to. */
static void remove_stale(int dirfd, const struct ml_plots *plots)
{
    int fd = openat(dirfd, "plots", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    for (size_t i = 0; i < plots->n; i++) {
        if (plots->plot[i].svg)
            continue;
        g_autofree char *name = g_strdup_printf("%s.svg", plots->plot[i].name);
        unlinkat(fd, name, 0);
    }
    close(fd);
}

bool ml_report_write(int dirfd, struct json_object *results, const struct ml_metric *metrics,
                     size_t n_metrics, const char *gnuplot, size_t *ret_drawn, GError **err)
{
    struct ml_plots plots;
    ml_plots_draw(results, gnuplot, &plots);
    g_autofree char *md = ml_report_render_markdown_with(results, metrics, n_metrics, &plots, err);
    bool ok = md != NULL;
    size_t drawn = 0;
    for (size_t i = 0; ok && i < plots.n; i++) {
        if (!plots.plot[i].svg)
            continue;
        g_autofree char *rel = g_strdup_printf("plots/%s.svg", plots.plot[i].name);
        ok = ml_rundir_write(dirfd, rel, plots.plot[i].svg, -1, 0644, err);
        drawn += ok;
    }
    g_autofree char *html = ok ? ml_report_render_html(md, &plots, dirfd) : NULL;
    ok = ok && ml_rundir_write(dirfd, "report.md", md, -1, 0644, err) &&
         ml_rundir_write(dirfd, "report.html", html, -1, 0644, err);
    if (ok)
        remove_stale(dirfd, &plots);
    ml_plots_clear(&plots);
    if (ret_drawn)
        *ret_drawn = drawn;
    return ok;
}
