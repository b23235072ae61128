/* The topology file: YAML in, a topology or one "FILE:LINE:COL: RULE" error out. */
#include "dataplanes/dataplane.h"
#include "fuzz.h"
#include "topology/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_parse("fuzz.yaml", text, size, &err);
    if (topo) {
        g_autoptr(GError) perr = NULL;
        ml_paths_resolve(topo, &perr);
    } else if (!err) {
        __builtin_trap(); /* a refusal always says why */
    }
    return 0;
}
