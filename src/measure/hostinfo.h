/* Per-host metadata for results.json's environment.hosts: what a reader needs to
 * judge a figure from another machine (kernel, offloads, MTUs, the sysctls that
 * matter, daemon versions), and the lab host's CPU. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

/* The sysctls recorded for every guest, in the order they are written. */
extern const char *const ml_hostinfo_sysctls[];

/* The one shell command ml_hostinfo_guest runs in a guest: it prints labelled
 * sections ("### meshlab: NAME") that ml_hostinfo_parse reads, one per daemon of the
 * dataplane registry. */
char *ml_hostinfo_command(void);

/* Runs ml_hostinfo_command in the guest through the agent and parses it. Fails
 * only when the agent or the command failed; a tool the guest lacks is a null
 * in the object, never an error. */
struct json_object *ml_hostinfo_guest(virDomainPtr dom, GError **err);

/* Pure: builds {kernel, vcpus, memory_mib, offloads, sysctls, mtu_bytes, daemons}
 * from the command's output. vcpus are the CPUs online in the guest and
 * memory_mib its MemTotal (the domain's memory less what the kernel reserved);
 * offloads are `ethtool -k eth0` as printed ("on", "off [fixed]"), null without
 * ethtool; every sysctl and daemon key is written, null when absent. Fails, with
 * *ret untouched, only when text is not that command's output. */
bool ml_hostinfo_parse(const char *text, struct json_object **ret, GError **err);

/* The lab host: {host_cpu_model, host_cpus} (model null when /proc/cpuinfo has
 * no "model name", as on some ARM hosts); of remote's host, as its libvirt names them, when
 * remote is not NULL. */
struct json_object *ml_hostinfo_host(virConnectPtr remote);
/* Pure: the first "model name" of a /proc/cpuinfo text, or NULL. */
char *ml_hostinfo_cpu_model(const char *cpuinfo);
