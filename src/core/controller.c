#include "core/controller.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

static char *machine_id(void)
{
    static const char *const files[] = {"/etc/machine-id", "/var/lib/dbus/machine-id"};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *text = NULL;
        if (g_file_get_contents(files[i], &text, NULL, NULL) && *g_strstrip(text))
            return g_steal_pointer(&text);
    }
    return g_strdup(g_get_host_name());
}

static char *state_path(void)
{
    g_autofree char *cwd = g_get_current_dir();
    return g_canonicalize_filename(ml_state_dir(), cwd);
}

const char *ml_controller_id(void)
{
    /* Not cached: tests and one process may change MESHLAB_STATE_DIR. */
    static _Thread_local char id[ML_CONTROLLER_ID_LEN + 1];
    g_autofree char *machine = machine_id();
    g_autofree char *dir = state_path();
    g_autofree char *seed = g_strdup_printf("meshlab controller\n%s\n%s", machine, dir);
    g_autofree char *h = g_compute_checksum_for_string(G_CHECKSUM_SHA256, seed, -1);
    g_strlcpy(id, h, sizeof(id));
    return id;
}

const char *ml_controller_words(void)
{
    static _Thread_local char words[512];
    g_autofree char *dir = state_path();
    snprintf(words, sizeof(words), "meshlab on %s, state directory %s", g_get_host_name(), dir);
    return words;
}

void ml_controller_uuid(const char *what, char ret[37])
{
    g_autofree char *h = g_compute_checksum_for_string(G_CHECKSUM_SHA256, what, -1);
    const char *id = ml_controller_id();
    /* RFC 9562: version 8 in the 13th hex digit, variant 10 in the 17th. */
    char variant = "89ab"[g_ascii_xdigit_value(h[16]) & 3];
    snprintf(ret, 37, "%.8s-%.4s-8%.3s-%c%.3s-%.12s", id, id + 8, h + 12, variant, h + 17,
             h + 20);
}

bool ml_controller_of_uuid(const char *uuid, char ret_id[ML_CONTROLLER_ID_LEN + 1])
{
    if (!uuid || strlen(uuid) != 36 || uuid[8] != '-' || uuid[13] != '-' || uuid[14] != '8' ||
        !strchr("89abAB", uuid[19]))
        return false;
    snprintf(ret_id, ML_CONTROLLER_ID_LEN + 1, "%.8s%.4s", uuid, uuid + 9);
    for (char *p = ret_id; *p; p++)
        *p = g_ascii_tolower(*p);
    return true;
}

bool ml_controller_owns(const char *uuid)
{
    char id[ML_CONTROLLER_ID_LEN + 1];
    return ml_controller_of_uuid(uuid, id) && !strcmp(id, ml_controller_id());
}
