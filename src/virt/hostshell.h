/* A shell on a lab's libvirt host, for what libvirt's API does not do (tcpdump on a tap): this
 * machine's own sh for a URI without a host, and for qemu+ssh:// the same SSH that libvirt's
 * connection uses, with the URI's user, port, key file, ssh binary (command=) and host-key
 * options (no_verify=, known_hosts=). A remote URI of any other transport (qemu+tls://,
 * qemu+tcp://) has no shell, and says so. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* Pure: the argv that runs script (one sh -c string) on uri's host; NULL-terminated, g_strfreev
 * it. NULL with err for a URI that names a host but not over SSH, or that cannot be parsed. */
char **ml_hostshell_argv(const char *uri, const char *script, GError **err);
