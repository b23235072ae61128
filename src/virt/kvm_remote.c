#include "virt/kvm_remote.h"

#include <libvirt/virterror.h>
#include <string.h>

#include "core/controller.h"
#include "core/util.h"
#include "virt/virt.h"
#include "virt/volume.h"

char *ml_kvm_probe_domain(const char *lab)
{
    return g_strdup_printf(ML_OBJ_PREFIX "%s.kvm-probe", lab);
}

char *ml_kvm_probe_xml(const struct ml_plan *plan, const char *kernel, const char *log)
{
    g_autofree char *name = ml_kvm_probe_domain(plan->topo->name);
    g_autofree char *what = g_strdup_printf("meshlab domain %s", name);
    char uuid[37];
    ml_controller_uuid(what, uuid);
    return g_markup_printf_escaped("<domain type='kvm'>\n"
                                   "  <name>%s</name>\n"
                                   "  <uuid>%s</uuid>\n"
                                   "  <title>meshlab lab %s, KVM probe</title>\n"
                                   "  <metadata>\n"
                                   "    <meshlab:lab xmlns:meshlab='" ML_TAG_NS "'>\n"
                                   "      <meshlab:name>%s</meshlab:name>\n"
                                   "      <meshlab:run>%s</meshlab:run>\n"
                                   "      <meshlab:controller>%s</meshlab:controller>\n"
                                   "      <meshlab:by>%s</meshlab:by>\n"
                                   "    </meshlab:lab>\n"
                                   "  </metadata>\n"
                                   "  <memory unit='MiB'>256</memory>\n"
                                   "  <vcpu>1</vcpu>\n"
                                   "  <os>\n"
                                   "    <type arch='x86_64' machine='pc'>hvm</type>\n"
                                   "    <kernel>%s</kernel>\n"
                                   "    <cmdline>console=ttyS0 panic=-1 loglevel=4</cmdline>\n"
                                   "  </os>\n"
                                   "  <cpu mode='host-passthrough'/>\n"
                                   "  <on_poweroff>destroy</on_poweroff>\n"
                                   "  <on_reboot>destroy</on_reboot>\n"
                                   "  <on_crash>destroy</on_crash>\n"
                                   "  <devices>\n"
                                   "    <controller type='usb' model='none'/>\n"
                                   "    <serial type='pty'>\n"
                                   "      <log file='%s' append='off'/>\n"
                                   "      <target port='0'/>\n"
                                   "    </serial>\n"
                                   "    <memballoon model='none'/>\n"
                                   "  </devices>\n"
                                   "</domain>\n",
                                   name, uuid, plan->topo->name, plan->topo->name, plan->run_id,
                                   ml_controller_id(), ml_controller_words(), kernel, log);
}

/* The domain ran until it ended by itself (a panic with panic=-1 is a reboot, which the host
 * turns into the end) or until the deadline; *ret_ended says which. */
static bool wait_end(virConnectPtr conn, const char *name, double timeout_s, double *ret_s,
                     bool *ret_ended, GError **err)
{
    double t0 = ml_now();
    *ret_ended = false;
    for (;;) {
        if (ml_check_interrupted(err))
            return false;
        virDomainPtr dom = virDomainLookupByName(conn, name);
        int active = dom ? virDomainIsActive(dom) : 0;
        if (dom && active == 1 && ml_now() - t0 >= timeout_s) {
            virDomainDestroy(dom);
            virDomainFree(dom);
            break;
        }
        if (dom)
            virDomainFree(dom);
        if (active != 1) {
            *ret_ended = true;
            break;
        }
        g_usleep(200 * 1000);
    }
    virResetLastError();
    *ret_s = ml_now() - t0;
    return true;
}

/* Read, the log goes: the guests' consoles are then the pool's only logs. */
static void remove_log(virConnectPtr conn, const struct ml_plan_host *h)
{
    virStoragePoolPtr pool = virStoragePoolLookupByName(conn, h->pool);
    if (pool)
        virStoragePoolRefresh(pool, 0);
    virStorageVolPtr vol = pool ? virStorageVolLookupByName(pool, ML_KVM_PROBE_LOG) : NULL;
    if (vol) {
        virStorageVolDelete(vol, 0);
        virStorageVolFree(vol);
    }
    if (pool)
        virStoragePoolFree(pool);
    virResetLastError();
}

bool ml_kvm_probe_remote(virConnectPtr conn, const struct ml_plan *plan, size_t host,
                         const char *kernel, double timeout_s, struct ml_host_accel *ret,
                         GError **err)
{
    memset(ret, 0, sizeof(*ret));
    if (ml_host_accel_forced(ret))
        return true;
    char *caps = virConnectGetDomainCapabilities(conn, NULL, NULL, NULL, "kvm", 0);
    if (!caps) {
        const char *why = virGetLastErrorMessage();
        ret->reason = g_strdup_printf("the host's libvirt offers no KVM domains (%s); using TCG",
                                      why ? why : "no reason given");
        virResetLastError();
        return true;
    }
    free(caps);
    g_autofree char *name = ml_kvm_probe_domain(plan->topo->name);
    const struct ml_plan_host *h = &plan->hosts[host];
    g_autofree char *log = g_build_filename(h->pool_dir, ML_KVM_PROBE_LOG, NULL);
    g_autofree char *xml = ml_kvm_probe_xml(plan, kernel, log);
    g_autofree char *at = NULL;
    {
        g_autoptr(GDateTime) now = g_date_time_new_now_utc();
        at = g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
    }
    ml_progress("host",
                "KVM probe: a transient KVM domain %s on the host boots a kernel to its "
                "first panic (at most %.0f s)",
                name, timeout_s);
    double t0 = ml_now();
    virDomainPtr dom = virDomainCreateXML(conn, xml, 0);
    if (!dom) {
        /* QEMU started and ended within the call: that long is what the probe took. */
        ret->probe_s = ml_now() - t0;
        const char *why = virGetLastErrorMessage();
        g_autofree char *first = g_strdup(why ? why : "no reason given");
        char *nl = strchr(first, '\n');
        if (nl)
            *nl = '\0';
        ret->reason =
            g_strdup_printf("KVM probe failed: the host's libvirt said \"%s\"; using TCG", first);
        virResetLastError();
        ret->source = ML_ACCEL_PROBED;
        ret->elsewhere = true;
        ret->probed_at = g_steal_pointer(&at);
        remove_log(conn, h);
        return true;
    }
    virDomainFree(dom);
    double secs = 0;
    bool ended = false;
    if (!wait_end(conn, name, timeout_s, &secs, &ended, err))
        return false;
    gsize len = 0;
    g_autoptr(GError) derr = NULL;
    g_autofree char *console =
        ml_vol_download(conn, h->pool, ML_KVM_PROBE_LOG, 1 << 20, &len, &derr);
    remove_log(conn, h);
    ret->probe_s = secs;
    ret->source = ML_ACCEL_PROBED;
    ret->elsewhere = true;
    ret->probed_at = g_steal_pointer(&at);
    if (console && strstr(console, "Kernel panic")) {
        ret->kvm = true;
        ret->reason = g_strdup_printf("a Linux kernel booted under KVM on the host to its first "
                                      "panic in %.1f s",
                                      secs);
    } else {
        ret->reason = g_strdup_printf(
            "KVM probe failed: a kernel under KVM on the host printed %s in %.0f s%s; using TCG",
            !console ? "nothing that could be read back"
            : len    ? "no panic"
                     : "nothing",
            secs, ended ? " and stopped" : "");
    }
    return true;
}
