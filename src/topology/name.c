#include "topology/name.h"

#include <string.h>

#include "core/util.h"
#include "topology/topology.h"

#define SHOWN_MAX 48

char *ml_name_shown(const char *s)
{
    GString *out = g_string_new(NULL);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool utf8_continuation = (*p & 0xc0) == 0x80;
        if (out->len >= SHOWN_MAX && !utf8_continuation) {
            g_string_append(out, "...");
            break;
        }
        if (*p == '\\')
            g_string_append(out, "\\\\");
        else if (*p == '\n')
            g_string_append(out, "\\n");
        else if (*p == '\t')
            g_string_append(out, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            g_string_append_printf(out, "\\x%02x", *p);
        else
            g_string_append_c(out, (char)*p);
    }
    return g_string_free(out, FALSE);
}

bool ml_name_check(const char *what, const char *s, bool allow_dot, GError **err)
{
    size_t len = s ? strlen(s) : 0;
    const char *chars = allow_dot ? "abcdefghijklmnopqrstuvwxyz0123456789.-"
                                  : "abcdefghijklmnopqrstuvwxyz0123456789-";
    g_autofree char *shown = ml_name_shown(s ? s : "");

    if (len >= ML_NAME_MAX) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s '%s' is %zu characters long; names are at most %d characters because "
                    "they become parts of file and libvirt names",
                    what, shown, len, ML_NAME_MAX - 1);
        return false;
    }
    /* The first letter rules out "", "." and ".."; the rest rules out '/'. */
    if (len == 0 || !g_ascii_islower(s[0]) || strspn(s, chars) != len || s[len - 1] == '-' ||
        s[len - 1] == '.') {
        if (allow_dot)
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "%s '%s' is not allowed: a name starts with a lowercase letter, has only "
                        "lowercase letters, digits, '.' and '-', and does not end with '.' or "
                        "'-' (names become parts of file names)",
                        what, shown);
        else
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "%s '%s' is not allowed: a name starts with a lowercase letter, has only "
                        "lowercase letters, digits and '-', and does not end with '-' (names "
                        "become parts of file and libvirt names)",
                        what, shown);
        return false;
    }
    return true;
}

bool ml_name_check_guest(const char *lab, const char *node, GError **err)
{
    return ml_name_check("lab name", lab, false, err) &&
           (!node || ml_name_check("node name", node, false, err));
}

bool ml_name_is_pool_file(const char *file)
{
    static const char *const suffixes[] = {".qcow2", "-seed.iso", "-artifacts.iso", "-console.log"};
    g_autofree char *name = g_strdup(file);
    /* virtlogd keeps a few rotated logs beside the console log: NODE-console.log.0, .1 ... */
    char *dot = strrchr(name, '.');
    if (dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1)) {
        *dot = '\0';
        if (!g_str_has_suffix(name, "-console.log"))
            return false;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        if (!g_str_has_suffix(name, suffixes[i]))
            continue;
        name[strlen(name) - strlen(suffixes[i])] = '\0';
        return ml_name_check("node name", name, false, NULL);
    }
    return false;
}
