/* What this host can do: KVM really running a guest or only TCG, and the
 * versions the results record. Probed, never assumed. */
#pragma once

#include <glib.h>
#include <stdbool.h>

struct ml_host_accel {
    bool kvm;       /* true only when a KVM guest was seen running */
    char *reason;   /* why KVM is or is not used, for the user and the results */
};

/* Boots kernel (may be NULL) under QEMU with KVM for a few seconds and decides
 * from what it printed. MESHLAB_ACCEL=tcg|kvm overrides the probe. */
void ml_host_probe_accel(const char *kernel, struct ml_host_accel *ret);
void ml_host_accel_clear(struct ml_host_accel *accel);

/* Path of the QEMU system emulator, or NULL. */
const char *ml_host_qemu_binary(void);
/* "uname -r" of the host. */
char *ml_host_kernel(void);
/* Free bytes on the file system holding path, or -1. */
gint64 ml_host_free_bytes(const char *path);
/* MemAvailable in bytes, or -1. */
gint64 ml_host_mem_available(void);
