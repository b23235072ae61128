/* The KVM verdict of a libvirt host that is not this machine, decided on that host: its
 * libvirt must offer KVM domains, and a transient KVM domain there must boot a Linux kernel
 * to its first panic, as the local probe (host.h) does with QEMU directly. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

#include "topology/plan.h"
#include "virt/host.h"

/* The probe domain's name: it is transient and ends before any guest is defined. */
char *ml_kvm_probe_domain(const char *lab);
/* The probe's console log, in the lab's pool (a pool file, so that down removes a leftover). */
#define ML_KVM_PROBE_LOG "kvm-probe-console.log"

/* Pure: the probe domain's XML: KVM, the host's CPU, 256 MiB, kernel (the host's path) with
 * panic=-1, no disk and no network, its serial console logged to log (the host's path), and
 * ended by the host on any reboot or crash; tagged with plan's lab and run like every guest. */
char *ml_kvm_probe_xml(const struct ml_plan *plan, const char *kernel, const char *log);

/* Decides ret on conn's host (MESHLAB_ACCEL still overrides), booting kernel (the host's path)
 * for at most timeout_s; the lab's pool must exist. False only when the host could not be
 * asked at all (err); a KVM that does not work is a verdict, not an error. */
bool ml_kvm_probe_remote(virConnectPtr conn, const struct ml_plan *plan, size_t host,
                         const char *kernel, double timeout_s, struct ml_host_accel *ret,
                         GError **err);
