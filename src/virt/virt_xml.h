/* libvirt XML for a lab's network, pool, volumes and domains. Pure text: no
 * connection, so every renderer has a golden-file test. */
#pragma once

#include <stdbool.h>

#include "cache/image.h"
#include "topology/plan.h"

/* An isolated bridge: no <ip>, no <forward>, so the host gets no address and
 * no route and the lab's traffic never leaves the bridge. */
char *ml_xml_network(const struct ml_plan_host *h, unsigned mtu);
/* The pool's directory holds the overlays, seeds and consoles, and the
 * overlays hold the guests' secrets (private keys, nebula's CA key, Headscale's
 * database): mode 0700, owned by the user QEMU runs as (uid/gid; -1: leave
 * it to libvirt, which makes it root's), of mode (0700 here; on another host 0711
 * and root's, see ml_virt_define_pool). */
char *ml_xml_pool(const struct ml_plan_host *h, long uid, long gid, int mode);
/* A qcow2 overlay on the image's base, mode 0600. */
char *ml_xml_overlay_volume(const char *name, const char *backing, unsigned long long capacity);

struct ml_domain_paths {
    const char *overlay;   /* path of the guest's qcow2 overlay */
    const char *seed;      /* path of its NoCloud seed ISO; NULL when the agent brings it */
    const char *console;   /* file the serial console is written to */
    const char *artifacts; /* an ISO of binaries from the host's cache, or NULL */
};
char *ml_xml_domain(const struct ml_plan *plan, size_t guest, const struct ml_image *image,
                    bool kvm, const struct ml_domain_paths *paths);
/* The CPU a domain's XML gives its guest, as results.json's environment.guest_cpu.model
 * records it: the <cpu> element's mode where it names no model ("host-passthrough",
 * "maximum"), else its model and each feature it requires ("qemu64+aes+pclmuldq"). NULL where
 * the XML has no <cpu> of the domain's own or cannot be read. */
char *ml_xml_domain_cpu_model(const char *xml);
