#include "cache/checksum.h"

#include <glib.h>
#include <string.h>

static const char hex_digits[] = "0123456789abcdefABCDEF";

bool ml_sha256_hex_prefix(const char *s)
{
    return s && strspn(s, hex_digits) == ML_SHA256_HEX_LEN;
}

bool ml_sha256_hex_valid(const char *s)
{
    return ml_sha256_hex_prefix(s) && s[ML_SHA256_HEX_LEN] == '\0';
}

char *ml_sha256_list_lookup(const char *text, const char *name)
{
    g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
    for (char **l = lines; *l; l++) {
        char *line = g_strstrip(*l);
        if (!ml_sha256_hex_prefix(line))
            continue;
        const char *rest = line + ML_SHA256_HEX_LEN;
        if (*rest && *rest != ' ' && *rest != '\t')
            continue;
        rest += strspn(rest, " \t");
        if (*rest == '*')
            rest++;
        if (!name || (*rest && strcmp(rest, name) == 0))
            return g_ascii_strdown(line, ML_SHA256_HEX_LEN);
    }
    return NULL;
}

bool ml_sha256_list_valid(const char *text, size_t len, int *ret_bad_line)
{
    if (ret_bad_line)
        *ret_bad_line = 0;
    if (!text || memchr(text, '\0', len))
        return false;
    g_autofree char *copy = g_strndup(text, len);
    g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
    int hashes = 0;
    for (int i = 0; lines[i]; i++) {
        char *line = g_strstrip(lines[i]);
        if (!*line)
            continue;
        const char *rest = line + ML_SHA256_HEX_LEN;
        bool ok = ml_sha256_hex_prefix(line);
        if (ok && *rest) {
            ok = *rest == ' ' || *rest == '\t';
            rest += strspn(rest, " \t");
            if (*rest == '*')
                rest++;
            ok = ok && *rest;
        }
        if (!ok) {
            if (ret_bad_line)
                *ret_bad_line = i + 1;
            return false;
        }
        hashes++;
    }
    return hashes > 0;
}
