#include "core/comment.h"

#include <glib.h>
#include <string.h>

char *ml_comment_text(const char *text)
{
    const char *p = text ? text : "";
    const char *end = p + strlen(p);
    GString *s = g_string_sized_new((gsize)(end - p));
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '\\') {
            g_string_append(s, "\\\\");
            p++;
            continue;
        }
        if (c >= 0x20 && c < 0x7f) {
            g_string_append_c(s, (char)c);
            p++;
            continue;
        }
        gunichar u = c < 0x80 ? (gunichar)-1 : g_utf8_get_char_validated(p, end - p);
        if (u == (gunichar)-1 || u == (gunichar)-2) {
            g_string_append_printf(s, "\\x%02x", c);
            p++;
            continue;
        }
        const char *next = g_utf8_next_char(p);
        if (u < 0xa0 || u == 0x2028 || u == 0x2029)
            g_string_append_printf(s, "\\u%04x", (unsigned)u);
        else
            g_string_append_len(s, p, next - p);
        p = next;
    }
    return g_string_free(s, FALSE);
}
