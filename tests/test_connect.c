/* Which libvirt host a verb works on (issue 20, item 1): --connect over MESHLAB_URI over the
 * default, the URI a lab's up recorded for its later verbs, what of a URI may be shown, and
 * which URIs name another host. */
#include "check.h"

#include <glib/gstdio.h>
#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <stdlib.h>

#include "core/util.h"
#include "results/json.h"
#include "topology/plan.h"
#include "topology/topology.h"
#include "virt/lab.h"
#include "virt/virt.h"

static void test_remote(void)
{
    CHECK(ml_virt_uri_remote("qemu:///system") == 0);
    CHECK(ml_virt_uri_remote("qemu+unix:///system") == 0);
    CHECK(ml_virt_uri_remote("test:///default") == 0);
    CHECK(ml_virt_uri_remote("qemu+ssh://root@server/system") == 1);
    CHECK(ml_virt_uri_remote("qemu+ssh://root@127.0.0.1:2222/system?keyfile=/k&no_verify=1") == 1);
    CHECK(ml_virt_uri_remote("qemu+tcp://[2001:db8::1]/system") == 1);
    /* An alias is not a URI: the connection says where it leads. */
    CHECK(ml_virt_uri_remote("lab-server") == -1);
    CHECK(ml_virt_uri_remote(NULL) == -1);
}

static void test_public(void)
{
    g_autofree char *a = ml_uri_public(
        "qemu+ssh://root:s3cret@server:2222/system?keyfile=/root/.ssh/lab&no_verify=1");
    /* meshlab reads no password (topology/uri.h): such a URI is shown without its user part. */
    CHECK_STR(a, "qemu+ssh://server:2222/system");
    g_autofree char *b = ml_uri_public("qemu:///system");
    CHECK_STR(b, "qemu:///system");
    g_autofree char *c = ml_uri_public("test:///default");
    CHECK_STR(c, "test:///default");
    g_autofree char *d = ml_uri_public("lab-server");
    CHECK_STR(d, "lab-server");
    g_autofree char *e = ml_uri_public("qemu+tls://host.example/system?pkipath=/etc/pki/x");
    CHECK_STR(e, "qemu+tls://host.example/system");
    /* What GLib cannot read as a URI still loses its query and its user part. */
    g_autofree char *f = ml_uri_public("qemu+ssh://root:pw@h/system?keyfile=/root/my key");
    CHECK(f && !strstr(f, "pw") && !strstr(f, "keyfile") && !strstr(f, "my key"));
    g_autofree char *g = ml_uri_public("lab-server?keyfile=/k");
    CHECK_STR(g, "lab-server");
    /* An IPv6 host keeps its brackets when shown. */
    g_autofree char *h = ml_uri_public("qemu+ssh://root@[::1]/system?keyfile=/k");
    CHECK_STR(h, "qemu+ssh://root@[::1]/system");
}

static void test_same(void)
{
    CHECK(ml_uri_same("qemu:///system", "qemu:///system"));
    /* The query is part of the connection: another socket= is another libvirtd (audit round 4,
     * finding 6), another key file another login. */
    CHECK(!ml_uri_same("qemu+ssh://root@h:22/system?keyfile=/a",
                       "qemu+ssh://root@h:22/system?keyfile=/b&no_tty=1"));
    CHECK(!ml_uri_same("qemu:///system", "qemu:///system?socket=/run/other/libvirt-sock"));
    CHECK(!ml_uri_same("qemu+ssh://root@h/system", "qemu+ssh://root@other/system"));
    CHECK(!ml_uri_same("qemu+ssh://root@h/system", "qemu:///system"));
    CHECK(!ml_uri_same(NULL, "qemu:///system"));
}

static void test_precedence(void)
{
    g_unsetenv("MESHLAB_URI");
    ml_virt_set_uri(NULL);
    CHECK(ml_virt_uri_given() == NULL);
    CHECK_STR(ml_virt_uri(), "qemu:///system");
    g_setenv("MESHLAB_URI", "test:///default", TRUE);
    CHECK_STR(ml_virt_uri(), "test:///default");
    CHECK(ml_virt_uri_from_env());
    ml_virt_set_uri("qemu+ssh://root@127.0.0.1:1/system");
    CHECK_STR(ml_virt_uri(), "qemu+ssh://root@127.0.0.1:1/system");
    CHECK_STR(ml_virt_uri_given(), "qemu+ssh://root@127.0.0.1:1/system");
    CHECK(!ml_virt_uri_from_env());
    ml_virt_set_uri(NULL);
    g_unsetenv("MESHLAB_URI");
}

/* up records the connection's URI in the lab's state; down, status, exec and console use it
 * unless told otherwise. */
static void test_recorded(const char *state_dir)
{
    static const char yaml[] = "name: far\nimage:\n  use: debian-12\nbridge:\n"
                               "  subnet: 192.0.2.0/24\nnodes:\n"
                               "  - {name: hub, address: 192.0.2.10, tunnel_address: 10.8.0.1}\n"
                               "  - {name: a, address: 192.0.2.11, tunnel_address: 10.8.0.2}\n"
                               "  - {name: b, address: 192.0.2.12, tunnel_address: 10.8.0.3}\n"
                               "hub: hub\nwireguard: {subnet: 10.8.0.0/24}\n"
                               "measure: {client: a, server: b, paths: [plain]}\n";
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_parse("far.yaml", yaml, sizeof(yaml) - 1, &err);
    CHECK(topo != NULL);
    if (!topo)
        return;
    struct ml_lab lab = {0};
    lab.topo = topo;
    lab.plan = ml_plan_new(topo, "20261204-000000-abcdef");
    lab.run_dir = g_strdup("/nonexistent/run");
    lab.conn = virConnectOpen("test:///default");
    CHECK(lab.conn != NULL);
    /* The default stands in the environment; the state must say where the lab really is. */
    CHECK(ml_lab_state_write(&lab, &err));
    bool recorded = false;
    g_autofree char *uri = ml_lab_uri("far", &recorded);
    CHECK_STR(uri, "test:///default");
    CHECK(recorded);
    ml_virt_set_uri("qemu:///system");
    g_autofree char *given = ml_lab_uri("far", &recorded);
    CHECK_STR(given, "qemu:///system");
    CHECK(!recorded);
    ml_virt_set_uri(NULL);
    /* A lab without a state file (or one written before the URI was) gets the default. */
    g_autofree char *none = ml_lab_uri("nowhere", &recorded);
    CHECK_STR(none, "qemu:///system");
    CHECK(!recorded);
    /* Every lab this machine holds a record of, and nothing that is not a lab's name. */
    g_autofree char *odd = g_build_filename(state_dir, "labs", "..json", NULL);
    CHECK(g_file_set_contents(odd, "{}", -1, NULL));
    g_autoptr(GPtrArray) names = ml_lab_state_names();
    CHECK(names->len == 1 && !strcmp(g_ptr_array_index(names, 0), "far"));
    g_unlink(odd);
    ml_lab_state_remove("far", NULL, NULL);
    CHECK(!ml_lab_state_exists("far"));
    virConnectClose(lab.conn);
    ml_plan_free(lab.plan);
    g_free(lab.run_dir);
}

int main(void)
{
    test_remote();
    test_public();
    test_same();
    test_precedence();
    g_autofree char *dir = g_dir_make_tmp("meshlab-connect-XXXXXX", NULL);
    g_chmod(dir, 0711);
    g_setenv("MESHLAB_STATE_DIR", dir, TRUE);
    test_recorded(dir);
    g_autofree char *labs = g_build_filename(dir, "labs", NULL);
    g_autofree char *pools = g_build_filename(dir, "pools", NULL);
    g_rmdir(labs);
    g_rmdir(pools);
    g_rmdir(dir);
    return check_finish();
}
