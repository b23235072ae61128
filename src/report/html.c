/* report.html from report.md: the Markdown that report.c writes (headings, paragraphs, lists,
 * quotes, tables, footnotes, picture links) is a small subset, so it is translated here line by
 * line; the pictures' SVGs go inline in place of their links. Nothing refers outside the file but
 * a link to a file of the run directory. */
#include "report/report.h"

#include <string.h>

#include "report/runfiles.h"
#include "results/format.h"

static const char style[] =
    "body{font-family:sans-serif;max-width:75em;margin:1em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #bbb;padding:.2em .5em}th{background:#eee}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "blockquote{border-left:.3em solid #d08000;background:#fff6e0;margin:.5em 0;padding:.3em 1em}"
    "figure{margin:1em 0}figcaption{font-style:italic}svg{max-width:100%;height:auto}"
    "code{background:#f3f3f3}.notes p{font-size:.9em}";

static void put_escaped_c(GString *h, char ch)
{
    switch (ch) {
    case '&':
        g_string_append(h, "&amp;");
        break;
    case '<':
        g_string_append(h, "&lt;");
        break;
    case '>':
        g_string_append(h, "&gt;");
        break;
    case '"':
        g_string_append(h, "&quot;");
        break;
    default:
        g_string_append_c(h, ch);
    }
}

/* "[text](href)" at t whose href is a file that the run directory dirfd has, named as
 * ml_runfile_name_ok allows (no scheme, no backslash, nothing from the root, another host or
 * above): its length, or 0, and the page refers to nothing outside the run directory. */
static size_t link_at(const char *t, size_t len, int dirfd, size_t *ret_text_len,
                      const char **ret_href, size_t *ret_href_len)
{
    const char *end = t + len;
    const char *mid = memchr(t, ']', len);
    if (!mid || mid + 1 >= end || mid[1] != '(' || mid == t + 1 ||
        memchr(t + 1, '[', (size_t)(mid - t - 1)) || memchr(t + 1, '\\', (size_t)(mid - t - 1)))
        return 0;
    const char *href = mid + 2;
    const char *close = memchr(href, ')', (size_t)(end - href));
    g_autofree char *file = close ? g_strndup(href, (size_t)(close - href)) : NULL;
    if (!file || !ml_runfile_name_ok(file) || !ml_runfile_exists(dirfd, file))
        return 0;
    *ret_text_len = (size_t)(mid - t - 1);
    *ret_href = href;
    *ret_href_len = (size_t)(close - href);
    return (size_t)(close - t) + 1;
}

/* One line of Markdown text: **strong**, *emphasis*, `code`, [^n] markers, [links](file) into
 * the run directory dirfd, and the escapes ml_put_text writes (\| \\ \[ \] \<). */
static void put_inline(GString *h, const char *t, size_t len, int dirfd)
{
    bool strong = false, em = false, code = false;
    for (size_t i = 0; i < len; i++) {
        const char *p = t + i;
        if (!code && p[0] == '\\' && i + 1 < len && p[1] && strchr(ML_TEXT_ESCAPED, p[1])) {
            put_escaped_c(h, p[1]);
            i++;
        } else if (!code && p[0] == '*' && i + 1 < len && p[1] == '*') {
            g_string_append(h, strong ? "</strong>" : "<strong>");
            strong = !strong;
            i++;
        } else if (!code && p[0] == '*') {
            g_string_append(h, em ? "</em>" : "<em>");
            em = !em;
        } else if (p[0] == '`') {
            g_string_append(h, code ? "</code>" : "<code>");
            code = !code;
        } else if (!code && p[0] == '[' && i + 2 < len && p[1] == '^') {
            size_t n = strspn(p + 2, "0123456789");
            if (n && i + 2 + n < len && p[2 + n] == ']') {
                g_string_append_printf(h, "<sup><a href=\"#note-%.*s\">%.*s</a></sup>", (int)n,
                                       p + 2, (int)n, p + 2);
                i += 2 + n;
            } else {
                g_string_append_c(h, '[');
            }
        } else if (!code && p[0] == '[') {
            size_t text_len, href_len;
            const char *href;
            size_t n = link_at(p, len - i, dirfd, &text_len, &href, &href_len);
            if (n) {
                g_string_append(h, "<a href=\"");
                for (size_t k = 0; k < href_len; k++)
                    put_escaped_c(h, href[k]);
                g_string_append(h, "\">");
                for (size_t k = 0; k < text_len; k++)
                    put_escaped_c(h, p[1 + k]);
                g_string_append(h, "</a>");
                i += n - 1;
            } else {
                g_string_append_c(h, '[');
            }
        } else {
            put_escaped_c(h, *p);
        }
    }
    /* an unclosed marker from a reason's own '*' closes here, so the page stays well-formed */
    if (code)
        g_string_append(h, "</code>");
    if (em)
        g_string_append(h, "</em>");
    if (strong)
        g_string_append(h, "</strong>");
}

static void put_inline0(GString *h, const char *t, int dirfd)
{
    put_inline(h, t, strlen(t), dirfd);
}

/* The cells of a table line, split at '|' that are not escaped ("\\|" is an escaped backslash
 * before the cell's end). */
static GPtrArray *cells_of(const char *line)
{
    GPtrArray *cells = g_ptr_array_new_with_free_func(g_free);
    const char *p = line + 1; /* past the leading '|' */
    const char *start = p;
    for (; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            continue;
        }
        if (*p == '|') {
            g_autofree char *cell = g_strndup(start, (size_t)(p - start));
            g_ptr_array_add(cells, g_strdup(g_strstrip(cell)));
            start = p + 1;
        }
    }
    return cells;
}

static void put_table(GString *h, char **lines, size_t *i, int dirfd)
{
    g_autoptr(GPtrArray) head = cells_of(lines[*i]);
    g_autoptr(GPtrArray) rule = lines[*i + 1] ? cells_of(lines[*i + 1]) : NULL;
    g_string_append(h, "<table>\n<tr>");
    for (guint k = 0; k < head->len; k++) {
        g_string_append(h, "<th>");
        put_inline0(h, g_ptr_array_index(head, k), dirfd);
        g_string_append(h, "</th>");
    }
    g_string_append(h, "</tr>\n");
    *i += 2;
    for (; lines[*i] && lines[*i][0] == '|'; (*i)++) {
        g_autoptr(GPtrArray) row = cells_of(lines[*i]);
        g_string_append(h, "<tr>");
        for (guint k = 0; k < row->len; k++) {
            bool right = rule && k < rule->len && g_str_has_suffix(g_ptr_array_index(rule, k), ":");
            g_string_append(h, right ? "<td class=\"n\">" : "<td>");
            put_inline0(h, g_ptr_array_index(row, k), dirfd);
            g_string_append(h, "</td>");
        }
        g_string_append(h, "</tr>\n");
    }
    g_string_append(h, "</table>\n");
    (*i)--;
}

static const struct ml_plot *plot_named(const struct ml_plots *plots, const char *file, size_t len)
{
    for (size_t i = 0; plots && i < plots->n; i++) {
        const struct ml_plot *p = &plots->plot[i];
        size_t n = strlen(p->name);
        if (len == n + 4 && strncmp(file, p->name, n) == 0 && strncmp(file + n, ".svg", 4) == 0)
            return p;
    }
    return NULL;
}

/* "![title](plots/NAME.svg)": the picture itself. */
static bool put_picture(GString *h, const char *line, const struct ml_plots *plots, int dirfd)
{
    const char *mid = strstr(line, "](plots/");
    if (!g_str_has_prefix(line, "![") || !mid || !g_str_has_suffix(line, ")"))
        return false;
    const char *file = mid + strlen("](plots/");
    const struct ml_plot *p = plot_named(plots, file, strlen(file) - 1);
    g_string_append(h, "<figure>\n");
    if (p && p->svg)
        g_string_append(h, p->svg);
    else
        g_string_append(h, "<p>(picture missing)</p>");
    g_string_append(h, "\n<figcaption>");
    put_inline(h, line + 2, (size_t)(mid - line - 2), dirfd);
    g_string_append(h, "</figcaption>\n</figure>\n");
    return true;
}

enum block { NONE, PARA, LIST, QUOTE };

static void close_block(GString *h, enum block *b)
{
    static const char *const ends[] = {"", "</p>\n", "</li>\n</ul>\n", "</p></blockquote>\n"};
    g_string_append(h, ends[*b]);
    *b = NONE;
}

char *ml_report_render_html(const char *markdown, const struct ml_plots *plots, int dirfd)
{
    GString *h = g_string_new("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
                              "charset=\"utf-8\">\n<title>");
    g_auto(GStrv) lines = g_strsplit(markdown, "\n", -1);
    if (lines[0] && g_str_has_prefix(lines[0], "# "))
        put_inline0(h, lines[0] + 2, dirfd);
    else
        g_string_append(h, "meshlab report");
    g_string_append_printf(h, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
    enum block b = NONE;
    for (size_t i = 0; lines[i]; i++) {
        const char *l = lines[i];
        if (!*l) {
            close_block(h, &b);
        } else if (g_str_has_prefix(l, "## ")) {
            close_block(h, &b);
            bool notes = strcmp(l + 3, "Notes") == 0;
            g_string_append(h, notes ? "<h2 class=\"notes\">" : "<h2>");
            put_inline0(h, l + 3, dirfd);
            g_string_append(h, "</h2>\n");
        } else if (g_str_has_prefix(l, "### ")) {
            close_block(h, &b);
            g_string_append(h, "<h3>");
            put_inline0(h, l + 4, dirfd);
            g_string_append(h, "</h3>\n");
        } else if (g_str_has_prefix(l, "# ")) {
            close_block(h, &b);
            g_string_append(h, "<h1>");
            put_inline0(h, l + 2, dirfd);
            g_string_append(h, "</h1>\n");
        } else if (l[0] == '|' && lines[i + 1] && g_str_has_prefix(lines[i + 1], "|--")) {
            close_block(h, &b);
            put_table(h, lines, &i, dirfd);
        } else if (put_picture(h, l, plots, dirfd)) {
            close_block(h, &b);
        } else if (g_str_has_prefix(l, "[^") && strstr(l, "]: ")) {
            close_block(h, &b);
            size_t n = strspn(l + 2, "0123456789");
            g_string_append_printf(h, "<p class=\"notes\" id=\"note-%.*s\"><sup>%.*s</sup> ",
                                   (int)n, l + 2, (int)n, l + 2);
            put_inline0(h, strstr(l, "]: ") + 3, dirfd);
            g_string_append(h, "</p>\n");
        } else if (g_str_has_prefix(l, "- ")) {
            if (b == LIST)
                g_string_append(h, "</li>\n<li>");
            else {
                close_block(h, &b);
                g_string_append(h, "<ul>\n<li>");
                b = LIST;
            }
            put_inline0(h, l + 2, dirfd);
        } else if (g_str_has_prefix(l, "> ") || strcmp(l, ">") == 0) {
            if (b != QUOTE) {
                close_block(h, &b);
                g_string_append(h, "<blockquote><p>");
                b = QUOTE;
            } else {
                g_string_append_c(h, '\n');
            }
            put_inline0(h, l[1] ? l + 2 : "", dirfd);
        } else {
            if (b == NONE) {
                g_string_append(h, "<p>");
                b = PARA;
            } else {
                g_string_append_c(h, '\n');
            }
            put_inline0(h, b == LIST ? g_strchug((char *)l) : l, dirfd);
        }
    }
    close_block(h, &b);
    g_string_append(h, "</body>\n</html>\n");
    return g_string_free(h, false);
}
