/* What this host can do: KVM really running a guest or only TCG, and the
 * versions the results record. Probed, never assumed. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* Where a verdict came from. */
enum ml_accel_source {
    ML_ACCEL_DECIDED, /* no probe was needed or possible (MESHLAB_ACCEL, no /dev/kvm, ...) */
    ML_ACCEL_PROBED,  /* a probe ran just now */
    ML_ACCEL_CACHED,  /* an earlier probe on the same kernel, QEMU and CPU */
};

struct ml_host_accel {
    bool kvm;     /* true only when a KVM guest was seen running */
    char *reason; /* why KVM is or is not used, for the user and the results */
    enum ml_accel_source source;
    char *probed_at; /* UTC time of the probe that decided; NULL for DECIDED */
    double probe_s;  /* how long that probe took */
    char *key;       /* what the verdict holds for: host kernel, QEMU, CPU */
    bool elsewhere;  /* probed on another host through its libvirt (kvm_remote.h), not kept */
};

/* Boots kernel (may be NULL) under QEMU with KVM for a few seconds and decides
 * from what it printed. The verdict is cached in CACHE/kvm-probe.json for this
 * host kernel, QEMU binary and CPU; MESHLAB_KVM_REPROBE=1 ignores the cache.
 * MESHLAB_ACCEL=tcg|kvm overrides the probe. */
void ml_host_probe_accel(const char *kernel, struct ml_host_accel *ret);
void ml_host_accel_clear(struct ml_host_accel *accel);
/* MESHLAB_ACCEL=tcg|kvm's verdict into ret (true), or false when it is not set to either. */
bool ml_host_accel_forced(struct ml_host_accel *ret);
/* "probe", "cache" or "none": for the results. */
const char *ml_host_accel_source_name(enum ml_accel_source source);
/* Where the verdict came from, in a sentence: "probed now in 20.1 s ..." or
 * "cached from 2026-11-30T04:51:25Z ..."; NULL when no probe decided it. */
char *ml_host_accel_origin(const struct ml_host_accel *accel);

/* What a probe looks at; ml_host_probe_accel fills it for this host. */
struct ml_kvm_probe {
    const char *dev_kvm;     /* /dev/kvm */
    const char *qemu;        /* the emulator, or NULL when there is none */
    const char *cache_file;  /* where verdicts are kept; NULL: nowhere */
    const char *host_kernel; /* release and version; NULL: this host's */
    bool reprobe;            /* probe even when the cache has a verdict */
    double timeout_s;        /* how long a kernel under KVM gets to panic */
};
void ml_host_probe_accel_with(const struct ml_kvm_probe *probe, const char *kernel,
                              struct ml_host_accel *ret);
/* The cache key: host kernel (NULL: this host's), QEMU binary (path, size,
 * mtime) and CPU (model name and a hash of its flags). */
char *ml_host_kvm_key(const char *qemu, const char *host_kernel);

/* Path of the QEMU system emulator, or NULL. */
const char *ml_host_qemu_binary(void);
/* "uname -r" of the host. */
char *ml_host_kernel(void);
/* Free bytes on the file system holding path, or -1. */
gint64 ml_host_free_bytes(const char *path);
/* MemAvailable in bytes, or -1. */
gint64 ml_host_mem_available(void);
