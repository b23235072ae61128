/* libvirt: creating a lab's objects, and finding and removing them again by
 * their tag alone (lab name in every object's name, lab and run id in each
 * domain's metadata), so down works without the topology file. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

#include "cache/image.h"
#include "topology/plan.h"
#include "topology/uri.h"

#define ML_VIRT_DEFAULT_URI "qemu:///system"
/* The libvirt connection every verb uses: --connect URI (main sets it), else MESHLAB_URI,
 * else ML_VIRT_DEFAULT_URI. A libvirt URI alias (uri_aliases in libvirt.conf) is passed
 * through: libvirt resolves it. */
const char *ml_virt_uri(void);
void ml_virt_set_uri(const char *uri);
/* --connect's URI or MESHLAB_URI's; NULL when neither was given. */
const char *ml_virt_uri_given(void);
/* True when the given URI is MESHLAB_URI's (no --connect). */
bool ml_virt_uri_from_env(void);
/* 1 when uri names a host (qemu+ssh://root@server/system: another libvirtd, whose file
 * system is not this machine's), 0 when it names none (qemu:///system, test:///default),
 * -1 when it is not a URI meshlab reads (an alias, resolved by libvirt: ask the connection).
 * URIs are read as libvirt reads them (topology/uri.h): ml_uri_public shows one, ml_uri_same
 * compares two. */
int ml_virt_uri_remote(const char *uri);
/* The URI conn was opened with, an alias resolved; fallback when libvirt does not say. */
char *ml_virt_conn_uri(virConnectPtr conn, const char *fallback);
/* ml_virt_uri_remote of the URI conn was opened with: 0 for this machine's libvirt. */
int ml_virt_conn_remote(virConnectPtr conn);
/* Opens uri with a keepalive (a remote libvirtd silent for ML_VIRT_KEEPALIVE_S ×
 * ML_VIRT_KEEPALIVE_COUNT s closes the connection and fails the calls waiting on it) and
 * libvirt's event loop running, which the keepalive needs. */
virConnectPtr ml_virt_connect(const char *uri, GError **err);
#define ML_VIRT_KEEPALIVE_S 5
#define ML_VIRT_KEEPALIVE_COUNT 3
/* Registers libvirt's default event loop and runs it in a thread of its own, once per process. */
bool ml_virt_events_start(GError **err);
/* Why libvirt closed a connection of this process, as words; NULL while none was closed. */
const char *ml_virt_closed_why(void);

/* Sets err from libvirt's last error, prefixed with what was being done. */
void ml_virt_error(GError **err, const char *what_fmt, ...) G_GNUC_PRINTF(2, 3);

/* Host h's network of the lab; mtu 0: the default (1500), else the bridge's and the guests'
 * MTU (a lab over several hosts leaves VXLAN's 50 bytes of the underlay's). */
bool ml_virt_define_network(virConnectPtr conn, const struct ml_plan_host *h, unsigned mtu,
                            GError **err);
/* The uid and gid QEMU runs as (libvirt's DAC base label); false, with -1,
 * when the driver has none (test:///default, or a QEMU that runs as root). */
bool ml_virt_qemu_owner(virConnectPtr conn, long *ret_uid, long *ret_gid);
/* The lab's pool on host h in h->pool_dir: QEMU's user's (0700) on this machine; on another host
 * root's (0711), where QEMU can open the files libvirt labels for it and cannot plant a link
 * that libvirt, as root, would follow when it uploads into the pool or reads from it. */
bool ml_virt_define_pool(virConnectPtr conn, const struct ml_plan_host *h, GError **err);
/* The directory of meshlab's pools on another host, each a directory of its own that goes
 * with its pool: libvirt's own images directory, root's, on every libvirt host. */
#define ML_VIRT_HOST_DIR "/var/lib/libvirt/images"
/* The directory of lab's pool on conn's host: ml_lab_pool_dir(lab) on this machine's libvirt,
 * ML_VIRT_HOST_DIR/meshlab-LAB on another host (whose file system is not this machine's). lab
 * may be LAB.HOST (ml_plan_host_key): a lab over several hosts has a pool on each. */
char *ml_virt_lab_pool_dir(virConnectPtr conn, const char *lab);
/* The host's path of a pool's directory; NULL when libvirt does not say. */
char *ml_virt_pool_path(virStoragePoolPtr pool);
/* The virtual size of the qcow2 image at path on this machine (qemu-img info); 0 when unknown. */
unsigned long long ml_virt_image_size(const char *path, GError **err);
/* Guest's overlay in the lab's pool, on backing (the host's path of the base) of capacity
 * bytes (the base's virtual size); the host's path of the overlay into *ret_path. */
bool ml_virt_create_overlay(virConnectPtr conn, const struct ml_plan *plan, size_t guest,
                            const char *backing, unsigned long long capacity, char **ret_path,
                            GError **err);
virDomainPtr ml_virt_define_domain(virConnectPtr conn, const char *name, const char *xml,
                                   GError **err);

/* Lab and run of a domain from its meshlab metadata; false if it has none. */
bool ml_virt_domain_tag(virDomainPtr dom, char **ret_lab, char **ret_run);
/* Whose a domain is (core/controller.h), in words for a message: NULL when it is this
 * controller's, else "controller ID's (meshlab on HOST, state directory DIR, run RUN)" or "no
 * controller's: ...". */
char *ml_virt_domain_owner(virDomainPtr dom);
/* Lab's domains, networks and pools on conn that are not this controller's, one line each
 * ("domain meshlab-LAB.hub: WHOSE"); empty when all are its own or there are none. */
GPtrArray *ml_virt_lab_foreign(virConnectPtr conn, const char *lab);

/* What down removed, one line each, for the user. */
typedef void (*ml_teardown_cb)(const char *what, void *opaque);
/* Removes every object of lab that this controller made: domains whose tag names it, the
 * network and the pool with its volumes; another controller's is left, and err says whose.
 * Idempotent; returns the number of objects removed or -1 when something could not be removed
 * (err says what). */
int ml_virt_teardown(virConnectPtr conn, const char *lab, ml_teardown_cb cb, void *opaque,
                     GError **err);
/* The same, another controller's objects too (down --foreign). */
int ml_virt_teardown_foreign(virConnectPtr conn, const char *lab, ml_teardown_cb cb, void *opaque,
                             GError **err);

/* The names of lab's networks (pools when pools) on conn, sorted: meshlab-LAB, and the
 * meshlab-LAB.HOST of a lab over several hosts (more than one where two of its hosts are one
 * libvirt). */
GPtrArray *ml_virt_lab_objects(virConnectPtr conn, const char *lab, bool pools);
/* Names of labs that have at least one object on this connection. */
GPtrArray *ml_virt_list_labs(virConnectPtr conn);

/* A guest's lab NIC (tap) counters as libvirt reports them, from the guest's side: bytes and
 * packets each way, and the frames dropped each way. rx_drop is what the host dropped on its
 * way in: the tap's queue toward QEMU was full because the guest did not take its frames. */
struct ml_nic_stats {
    long long rx_bytes, tx_bytes, rx_packets, tx_packets, rx_drop, tx_drop;
};
bool ml_virt_nic_stats(virDomainPtr dom, const char *tap, struct ml_nic_stats *ret, GError **err);

/* A tap's queue toward its guest, from the host's sysfs: how many frames it holds
 * (tx_queue_len; the kernel counts a frame received by the guest only when QEMU reads it, so
 * that many can wait at the guest's door uncounted) and the largest frame (mtu + 14). False
 * where sysfs does not say (not a local tap). */
bool ml_virt_tap_queue(const char *tap, unsigned *ret_frames, unsigned *ret_frame_bytes);

/* The CPU time of a domain's vCPUs as the host counts it (libvirt's vcpu_time), in seconds; -1
 * when libvirt does not say (without a cgroup to read it from). */
double ml_virt_vcpu_time_s(virDomainPtr dom);

/* The pid of a running domain's QEMU process (libvirt's /run/libvirt/qemu/NAME.pid), or 0. */
int ml_virt_qemu_pid(virDomainPtr dom);
