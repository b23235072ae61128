/* The NAT matrix of one dataplane as an SVG grid, written here rather than by gnuplot: the
 * picture is a handful of squares, and drawn by C it is the same bytes on every host, so a test
 * can read it. */
#include <string.h>

#include "results/format.h"
#include "results/natgrid.h"

#define CELL_W 150
#define CELL_H 72
#define LEFT 190
#define TOP 78
#define LEGEND_H 56

static void put_escaped(GString *s, const char *text)
{
    g_autofree char *e = g_markup_escape_text(text ? text : "", -1);
    g_string_append(s, e);
}

static void put_text_at(GString *s, int x, int y, const char *anchor, const char *extra,
                        const char *text)
{
    g_string_append_printf(s, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\"%s>", x, y, anchor, extra);
    put_escaped(s, text);
    g_string_append(s, "</text>\n");
}

static unsigned count_of(struct json_object *cell, const char *key)
{
    double v;
    return ml_j_num(ml_j_obj(cell, "outcomes"), key, &v) && v > 0 ? (unsigned)v : 0;
}

/* "2/3": the repeats that gave the cell's outcome, of all its repeats. */
static char *repeats_of(struct json_object *cell, const char *outcome)
{
    unsigned d = count_of(cell, "direct"), r = count_of(cell, "relay"),
             f = count_of(cell, "failed");
    if (d + r + f == 0)
        return NULL;
    unsigned n = g_strcmp0(outcome, "direct") == 0 ? d : g_strcmp0(outcome, "relay") == 0 ? r : f;
    bool race = g_strcmp0(ml_j_str(cell, "expected"), "race") == 0 && d && r;
    return g_strdup_printf("%u/%u%s", n, d + r + f, race ? ", a race" : "");
}

static void put_cell(GString *s, struct json_object *cell, int x, int y)
{
    const char *outcome = ml_j_str_or(cell, "outcome", "not-run");
    g_string_append_printf(s,
                           "<rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                           "fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"2\">",
                           x, y, CELL_W, CELL_H, ml_nat_colour(outcome));
    const char *why = ml_j_str(cell, "explanation");
    if (why) {
        g_string_append(s, "<title>");
        put_escaped(s, why);
        g_string_append(s, "</title>");
    }
    g_string_append(s, "</rect>\n");
    int cx = x + CELL_W / 2;
    put_text_at(s, cx, y + 24, "middle", " font-weight=\"bold\"",
                strcmp(outcome, "not-run") == 0 ? "not run" : outcome);
    double secs;
    if (strcmp(outcome, "direct") == 0 && ml_j_num(cell, "seconds_to_direct", &secs)) {
        g_autoptr(GString) t = g_string_new(NULL);
        ml_put_fixed(t, secs, 1);
        g_string_append(t, " s");
        put_text_at(s, cx, y + 44, "middle", "", t->str);
    }
    g_autofree char *reps = repeats_of(cell, outcome);
    if (reps)
        put_text_at(s, cx, y + 63, "middle", " font-size=\"11\"", reps);
}

static void put_legend(GString *s, int y)
{
    static const struct {
        const char *outcome, *label;
    } keys[] = {{"direct", "direct (seconds to the first direct packet)"},
                {"relay", "relay"},
                {"failed", "failed"},
                {"not-run", "not run"}};
    int x = 10;
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        g_string_append_printf(s,
                               "<rect class=\"key\" x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" "
                               "fill=\"%s\"/>\n",
                               x, y, ml_nat_colour(keys[i].outcome));
        put_text_at(s, x + 20, y + 12, "start", "", keys[i].label);
        x += 20 + 7 * (int)strlen(keys[i].label) + 24;
    }
}

char *ml_nat_svg(struct json_object *matrix, const char *dataplane)
{
    g_autoptr(GPtrArray) types = ml_nat_types_of(matrix, dataplane);
    if (types->len == 0)
        return NULL;
    const char *a_node = "client-a", *b_node = "client-b";
    for (size_t i = 0; i < ml_j_len(matrix); i++) {
        struct json_object *c = json_object_array_get_idx(matrix, i);
        if (g_strcmp0(ml_j_str(c, "dataplane"), dataplane) == 0) {
            a_node = ml_j_str_or(c, "a_node", a_node);
            b_node = ml_j_str_or(c, "b_node", b_node);
            break;
        }
    }
    int n = (int)types->len;
    int w = LEFT + n * CELL_W + 20, h = TOP + n * CELL_H + LEGEND_H;
    w = MAX(w, 640);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                           "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"13\">\n",
                           w, h, w, h);
    g_autofree char *title = g_strdup_printf("NAT matrix, %s", dataplane);
    put_text_at(s, 10, 20, "start", " font-size=\"15\" font-weight=\"bold\"", title);
    g_autofree char *cols = g_strdup_printf("%s's NAT (b_nat) →", b_node);
    g_autofree char *rows = g_strdup_printf("%s's NAT (a_nat) ↓", a_node);
    put_text_at(s, LEFT + n * CELL_W / 2, 42, "middle", " font-style=\"italic\"", cols);
    put_text_at(s, 10, 42, "start", " font-style=\"italic\"", rows);
    for (int j = 0; j < n; j++)
        put_text_at(s, LEFT + j * CELL_W + CELL_W / 2, TOP - 10, "middle", "",
                    g_ptr_array_index(types, j));
    for (int i = 0; i < n; i++) {
        const char *a = g_ptr_array_index(types, i);
        put_text_at(s, LEFT - 10, TOP + i * CELL_H + CELL_H / 2 + 5, "end", "", a);
        for (int j = i; j < n; j++) {
            struct json_object *cell =
                ml_nat_cell(matrix, dataplane, a, g_ptr_array_index(types, j));
            if (cell)
                put_cell(s, cell, LEFT + j * CELL_W, TOP + i * CELL_H);
        }
    }
    put_legend(s, TOP + n * CELL_H + 24);
    g_string_append(s, "</svg>\n");
    return g_string_free(s, false);
}
