#include "virt/guest_value.h"

#include <arpa/inet.h>
#include <string.h>

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool ml_guest_ipv4(const char *s, struct in_addr *ret)
{
    if (!s)
        return false;
    g_autofree char *t = g_strstrip(g_strdup(s));
    struct in_addr a;
    char back[INET_ADDRSTRLEN];
    if (strlen(t) >= sizeof(back) || inet_pton(AF_INET, t, &a) != 1 ||
        !inet_ntop(AF_INET, &a, back, sizeof(back)) || strcmp(back, t) != 0)
        return false;
    if (ret)
        *ret = a;
    return true;
}

/* Strict base64: groups of four from the alphabet, '=' padding only at the very end. */
static bool decode_b64(const char *s, gsize *ret_len)
{
    size_t n = strlen(s);
    if (n == 0 || n % 4 != 0)
        return false;
    size_t body = strspn(s, b64_chars);
    size_t pad = n - body;
    if (pad > 2 || strspn(s + body, "=") != pad)
        return false;
    g_free(g_base64_decode(s, ret_len));
    return true;
}

bool ml_guest_pem(const char *text, const char *banner, gsize body_len)
{
    if (!text || !banner)
        return false;
    g_autofree char *begin = g_strdup_printf("-----BEGIN %s-----", banner);
    g_autofree char *end = g_strdup_printf("-----END %s-----", banner);
    g_autofree char *t = g_strstrip(g_strdup(text));
    g_auto(GStrv) lines = g_strsplit(t, "\n", -1);
    guint n = g_strv_length(lines);
    if (n < 3)
        return false;
    GString *body = g_string_new(NULL);
    bool ok = true;
    for (guint i = 0; i < n; i++) {
        char *l = lines[i];
        size_t len = strlen(l);
        if (len && l[len - 1] == '\r')
            l[len - 1] = '\0';
        if (i == 0)
            ok = ok && strcmp(l, begin) == 0;
        else if (i == n - 1)
            ok = ok && strcmp(l, end) == 0;
        else
            ok = ok && *l &&
                 strspn(l, b64_chars) + strspn(l + strspn(l, b64_chars), "=") == strlen(l);
        if (i > 0 && i < n - 1)
            g_string_append(body, l);
    }
    gsize len = 0;
    ok = ok && decode_b64(body->str, &len) && len > 0 && (body_len == 0 || len == body_len);
    g_string_free(body, TRUE);
    return ok;
}

bool ml_guest_ssh_ed25519(const char *s)
{
    static const char type[] = "ssh-ed25519";
    if (!s)
        return false;
    g_autofree char *t = g_strstrip(g_strdup(s));
    g_auto(GStrv) words = g_strsplit(t, " ", -1);
    guint n = g_strv_length(words);
    if (n < 2 || n > 3 || strcmp(words[0], type) != 0)
        return false;
    if (n == 3 &&
        (!*words[2] || strspn(words[2], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
                                        "XYZ0123456789@._-") != strlen(words[2])))
        return false;
    gsize len = 0;
    if (!decode_b64(words[1], &len) || len != 4 + 11 + 4 + 32)
        return false;
    g_autofree guchar *blob = g_base64_decode(words[1], &len);
    static const guchar head[] = {0,   0,   0,   11,  's', 's', 'h', '-', 'e', 'd',
                                  '2', '5', '5', '1', '9', 0,   0,   0,   32};
    return memcmp(blob, head, sizeof(head)) == 0;
}
