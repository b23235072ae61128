#include "path.h"

void ml_probe_clear(struct ml_probe *p)
{
    g_free(p->route);
    p->route = NULL;
}

const struct ml_path_ops *ml_path_ops(enum ml_path_kind kind)
{
    static const struct ml_path_ops *const all[ML_PATH_COUNT] = {
        [ML_PATH_PLAIN] = &ml_path_plain,
        [ML_PATH_WIREGUARD_HUB] = &ml_path_wireguard_hub,
    };
    return (unsigned)kind < ML_PATH_COUNT ? all[kind] : NULL;
}
