/* How a path's frames look on the hub's wire (struct ml_encap): what the probe's check and the
 * physics of a transfer both count. */
#include "dataplanes/dataplane.h"

/* n inner bytes and the trailer padded to a multiple of e->pad_to, never past the MTU. */
static unsigned padded(const struct ml_encap *e, unsigned n)
{
    n += e->trailer;
    if (!e->pad_to)
        return n;
    unsigned p = (n + e->pad_to - 1) / e->pad_to * e->pad_to;
    return p > e->inner_mtu + e->trailer ? e->inner_mtu + e->trailer : p;
}

#define ETHERNET_BYTES 14

unsigned ml_encap_frame_bytes(const struct ml_encap *e, unsigned inner)
{
    if (!e)
        return 0;
    return padded(e, inner < e->inner_mtu ? inner : e->inner_mtu) + e->overhead + ETHERNET_BYTES;
}
