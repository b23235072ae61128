#include "virt/virt_xml.h"

#include <stdio.h>
#include <string.h>

#include "core/controller.h"

/* An object's UUID carries the controller that made it (core/controller.h). */
static void controller_uuid(const char *kind, const char *name, char ret[37])
{
    g_autofree char *what = g_strdup_printf("meshlab %s %s", kind, name);
    ml_controller_uuid(what, ret);
}

char *ml_xml_network(const struct ml_plan_host *h, unsigned mtu)
{
    char uuid[37];
    controller_uuid("network", h->network, uuid);
    g_autofree char *mtu_el = mtu ? g_strdup_printf("  <mtu size='%u'/>\n", mtu) : g_strdup("");
    g_autofree char *head = g_markup_printf_escaped("<network>\n"
                                                    "  <name>%s</name>\n"
                                                    "  <uuid>%s</uuid>\n"
                                                    "  <bridge name='%s' stp='off' delay='0'/>\n",
                                                    h->network, uuid, h->bridge);
    return g_strconcat(head, mtu_el, "</network>\n", NULL);
}

char *ml_xml_pool(const struct ml_plan_host *h, long uid, long gid, int mode)
{
    char uuid[37];
    controller_uuid("pool", h->pool, uuid);
    g_autofree char *head = g_markup_printf_escaped("<pool type='dir'>\n"
                                                    "  <name>%s</name>\n"
                                                    "  <uuid>%s</uuid>\n"
                                                    "  <target>\n"
                                                    "    <path>%s</path>\n",
                                                    h->pool, uuid, h->pool_dir);
    g_autofree char *owner = uid >= 0 && gid >= 0
                                 ? g_strdup_printf("<owner>%ld</owner><group>%ld</group>", uid, gid)
                                 : g_strdup("");
    return g_strdup_printf("%s    <permissions><mode>%04o</mode>%s</permissions>\n"
                           "  </target>\n"
                           "</pool>\n",
                           head, mode, owner);
}

char *ml_xml_overlay_volume(const char *name, const char *backing, unsigned long long capacity)
{
    g_autofree char *cap = g_strdup_printf("%llu", capacity);
    return g_markup_printf_escaped("<volume>\n"
                                   "  <name>%s</name>\n"
                                   "  <capacity unit='bytes'>%s</capacity>\n"
                                   "  <target>\n"
                                   "    <format type='qcow2'/>\n"
                                   "    <permissions><mode>0600</mode></permissions>\n"
                                   "  </target>\n"
                                   "  <backingStore>\n"
                                   "    <path>%s</path>\n"
                                   "    <format type='qcow2'/>\n"
                                   "  </backingStore>\n"
                                   "</volume>\n",
                                   name, cap, backing);
}

/* The name, and the tag by which meshlab finds what it made. */
static void put_identity(GString *x, const struct ml_plan *plan, const struct ml_plan_guest *g,
                         bool kvm)
{
    const char *lab = plan->topo->name, *node = g->node->name;
    /* The same UUID in every run of the lab by this controller: libvirt restores a saved guest
     * (the warm start) only into a domain with the UUID it was saved with. */
    char uuid[37];
    controller_uuid("domain", g->domain, uuid);
    g_autofree char *head = g_markup_printf_escaped(
        "<domain type='%s'>\n"
        "  <name>%s</name>\n"
        "  <uuid>%s</uuid>\n"
        "  <title>meshlab lab %s, guest %s</title>\n"
        "  <metadata>\n"
        "    <meshlab:lab xmlns:meshlab='" ML_TAG_NS "'>\n"
        "      <meshlab:name>%s</meshlab:name>\n"
        "      <meshlab:run>%s</meshlab:run>\n"
        "      <meshlab:node>%s</meshlab:node>\n"
        "      <meshlab:controller>%s</meshlab:controller>\n"
        "      <meshlab:by>%s</meshlab:by>\n"
        "    </meshlab:lab>\n"
        "  </metadata>\n",
        kvm ? "kvm" : "qemu", g->domain, uuid, lab, node, lab, plan->run_id, node,
        ml_controller_id(), ml_controller_words());
    g_string_append(x, head);
}

/* Memory, CPUs, how it boots (the image's kernel when it has one), and its life cycle. */
static void put_machine(GString *x, const struct ml_node *n, const struct ml_image *image, bool kvm)
{
    g_string_append_printf(x, "  <memory unit='MiB'>%u</memory>\n  <vcpu>%u</vcpu>\n",
                           n->memory_mib, n->vcpus);
    g_string_append(x, "  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n");
    if (image->kernel) {
        g_autofree char *boot =
            g_markup_printf_escaped("    <kernel>%s</kernel>\n"
                                    "    <initrd>%s</initrd>\n"
                                    "    <cmdline>%s</cmdline>\n",
                                    image->kernel, image->initrd, image->cmdline);
        g_string_append(x, boot);
    } else {
        g_string_append(x, "    <boot dev='hd'/>\n");
    }
    g_string_append(x, "  </os>\n  <features><acpi/><apic/></features>\n");
    /* Under KVM the host's CPU. Under TCG QEMU's qemu64, named, where every cipher runs its
     * generic code: TCG calls a C helper for most AES-NI, PCLMULQDQ, SSSE3 and AVX2 instructions
     * (QEMU's target/i386/ops_sse.h), where a scalar instruction becomes a few of the host's
     * own, so the vector code a real CPU runs fastest is the slower emulation here. Two A/Bs
     * on the dataplanes lab (docs/performance.md, "The guests' CPU under TCG"), four runs a
     * model: QEMU's maximum (AVX2 ChaCha20) took kernel WireGuard's hub from 187-216 CPU s/GB
     * on qemu64 to 310-343, and IPsec's AES-GCM (rfc4106-gcm-aesni) from 214-340 to 225-260:
     * the AES-NI model spared AES-GCM about a fifth, charged WireGuard three fifths and put
     * IPsec ahead of it, where the dataplane benchmark seed's silicon has WireGuard at a third
     * to a half of IPsec's CPU per Gbit/s. results.json records the model read back from the
     * domain (environment.guest_cpu). */
    g_string_append(x, kvm ? "  <cpu mode='host-passthrough'/>\n"
                           : "  <cpu mode='custom' match='exact' check='none'>\n"
                             "    <model fallback='forbid'>qemu64</model>\n"
                             "  </cpu>\n");
    g_string_append(x, "  <clock offset='utc'/>\n"
                       "  <on_poweroff>destroy</on_poweroff>\n"
                       "  <on_reboot>restart</on_reboot>\n"
                       "  <on_crash>destroy</on_crash>\n");
}

/* A read-only CD on IDE (the cloud kernel has no AHCI driver). No disk of a lab's domain takes
 * part in a snapshot (snapshot='no'): the warm save is a snapshot of the memory alone, and its
 * overlay is copied by meshlab (warm.c). */
static void put_cdrom(GString *x, const char *path, const char *dev)
{
    g_autofree char *cd =
        g_markup_printf_escaped("    <disk type='file' device='cdrom' snapshot='no'>\n"
                                "      <driver name='qemu' type='raw'/>\n"
                                "      <source file='%s'/>\n"
                                "      <target dev='%s' bus='ide'/>\n"
                                "      <readonly/>\n"
                                "    </disk>\n",
                                path, dev);
    g_string_append(x, cd);
}

/* Disk, seed CD (unless the host writes the seed through the agent), the lab's network,
 * serial console, guest agent channel; then the artifacts CD, when the guest has one.
 * The serial console is a pty, so `meshlab console` can attach to it, and is logged to
 * the console file, which the lab reads after boot. The NIC has no option ROM (it only
 * matters for network boot, and costs seconds under TCG) and there is no USB. */
static void put_devices(GString *x, const struct ml_plan *plan, const struct ml_plan_guest *g,
                        const struct ml_domain_paths *paths)
{
    g_autofree char *disk =
        g_markup_printf_escaped("  <devices>\n"
                                "    <disk type='file' device='disk' snapshot='no'>\n"
                                "      <driver name='qemu' type='qcow2' "
                                "discard='unmap'/>\n"
                                "      <source file='%s'/>\n"
                                "      <target dev='vda' bus='virtio'/>\n"
                                "    </disk>\n",
                                paths->overlay);
    g_string_append(x, disk);
    if (paths->seed)
        put_cdrom(x, paths->seed, "hdc");
    g_autofree char *devices =
        g_markup_printf_escaped("    <controller type='usb' model='none'/>\n"
                                "    <interface type='network'>\n"
                                "      <source network='%s'/>\n"
                                "      <mac address='%s'/>\n"
                                "      <target dev='%s'/>\n"
                                "      <model type='virtio'/>\n"
                                "      <rom enabled='no'/>\n"
                                "    </interface>\n"
                                "    <serial type='pty'>\n"
                                "      <log file='%s'/>\n"
                                "      <target port='0'/>\n"
                                "    </serial>\n"
                                "    <console type='pty'>\n"
                                "      <target type='serial' port='0'/>\n"
                                "    </console>\n"
                                "    <channel type='unix'>\n"
                                "      <target type='virtio' name='org.qemu.guest_agent.0'/>\n"
                                "    </channel>\n"
                                "    <rng model='virtio'>\n"
                                "      <backend model='random'>/dev/urandom</backend>\n"
                                "    </rng>\n"
                                "    <memballoon model='none'/>\n",
                                plan->hosts[g->host].network, g->mac, g->tap, paths->console);
    g_string_append(x, devices);
    /* A second CD for the binaries the guests may not download themselves. */
    if (paths->artifacts)
        put_cdrom(x, paths->artifacts, "hdd");
    g_string_append(x, "  </devices>\n");
}

char *ml_xml_domain(const struct ml_plan *plan, size_t guest, const struct ml_image *image,
                    bool kvm, const struct ml_domain_paths *paths)
{
    const struct ml_plan_guest *g = &plan->guests[guest];
    GString *x = g_string_new(NULL);
    put_identity(x, plan, g, kvm);
    put_machine(x, g->node, image, kvm);
    put_devices(x, plan, g, paths);
    g_string_append(x, "</domain>\n");
    return g_string_free(x, FALSE);
}

/* ---- reading back the CPU a domain was given ---- */

struct cpu_read {
    int depth, cpu_depth; /* cpu_depth: the <cpu> element's, 0 outside it */
    bool in_model;
    GString *mode, *model;
    GPtrArray *required;
};

static void cpu_start(GMarkupParseContext *ctx, const char *name, const char **attrs,
                      const char **values, gpointer data, GError **err)
{
    (void)ctx, (void)err;
    struct cpu_read *c = data;
    c->depth++;
    /* The domain's own <cpu>, a child of <domain>: not a <cpu> of its capabilities. */
    if (!c->cpu_depth && c->depth == 2 && !strcmp(name, "cpu")) {
        c->cpu_depth = c->depth;
        g_string_assign(c->mode, "custom"); /* libvirt's default mode */
        for (size_t i = 0; attrs[i]; i++)
            if (!strcmp(attrs[i], "mode"))
                g_string_assign(c->mode, values[i]);
    } else if (c->cpu_depth && c->depth == c->cpu_depth + 1 && !strcmp(name, "model")) {
        c->in_model = true;
    } else if (c->cpu_depth && c->depth == c->cpu_depth + 1 && !strcmp(name, "feature")) {
        const char *feature = NULL, *policy = "require";
        for (size_t i = 0; attrs[i]; i++)
            if (!strcmp(attrs[i], "name"))
                feature = values[i];
            else if (!strcmp(attrs[i], "policy"))
                policy = values[i];
        if (feature && (!strcmp(policy, "require") || !strcmp(policy, "force")))
            g_ptr_array_add(c->required, g_strdup(feature));
    }
}

static void cpu_end(GMarkupParseContext *ctx, const char *name, gpointer data, GError **err)
{
    (void)ctx, (void)name, (void)err;
    struct cpu_read *c = data;
    if (c->depth == c->cpu_depth)
        c->cpu_depth = -1; /* read: later <cpu> elements are not the domain's */
    c->in_model = false;
    c->depth--;
}

static void cpu_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer data,
                     GError **err)
{
    (void)ctx, (void)err;
    struct cpu_read *c = data;
    if (c->in_model)
        g_string_append_len(c->model, text, (gssize)len);
}

char *ml_xml_domain_cpu_model(const char *xml)
{
    if (!xml)
        return NULL;
    struct cpu_read c = {.mode = g_string_new(NULL),
                         .model = g_string_new(NULL),
                         .required = g_ptr_array_new_with_free_func(g_free)};
    static const GMarkupParser parser = {
        .start_element = cpu_start, .end_element = cpu_end, .text = cpu_text};
    GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, &c, NULL);
    bool ok = g_markup_parse_context_parse(ctx, xml, -1, NULL) &&
              g_markup_parse_context_end_parse(ctx, NULL);
    g_markup_parse_context_free(ctx);
    char *ret = NULL;
    g_strstrip(c.model->str);
    c.model->len = strlen(c.model->str);
    if (ok && c.cpu_depth != 0) {
        /* A named model with what it requires beyond it ("qemu64+aes+pclmuldq"); a mode that
         * names no model (host-passthrough, maximum) as itself. */
        GString *m = g_string_new(c.model->len && !strcmp(c.mode->str, "custom") ? c.model->str
                                                                                 : c.mode->str);
        for (size_t i = 0; c.model->len && i < c.required->len; i++)
            g_string_append_printf(m, "+%s", (const char *)c.required->pdata[i]);
        ret = g_string_free(m, FALSE);
    }
    g_string_free(c.mode, TRUE);
    g_string_free(c.model, TRUE);
    g_ptr_array_free(c.required, TRUE);
    return ret;
}
