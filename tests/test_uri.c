/* meshlab's libvirt URI parser (src/topology/uri.c) against libvirt's own (virURIParse, from the
 * library: tests/libvirt_uri.h), on every URI of the round-4 audit
 * (shared/research/reliability-audit-2026-12-04.md, findings 1, 2 and 6) and their near variants;
 * what a topology may name; and "the same connection" as down compares it. */
#include <stdlib.h>

#include "check.h"
#include "libvirt_uri.h"
#include "topology/uri.h"

/* The parameters as "name=value" joined by " " (the decoded split), or the parse error. */
static char *split(const char *text)
{
    g_autoptr(GError) e = NULL;
    g_autoptr(MlUri) u = ml_uri_parse(text, &e);
    if (!u)
        return g_strdup_printf("error: %s", e->message);
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < u->n_params; i++)
        g_string_append_printf(s, "%s%s=%s", i ? " " : "", u->params[i].name, u->params[i].value);
    return g_string_free(s, FALSE);
}

struct agree_case {
    const char *uri;
    const char *params; /* ours, decoded, as split() shows them */
};

/* URIs both parsers read: ours must split them exactly as libvirt does. */
static const struct agree_case agree[] = {
    {"qemu:///system", ""},
    {"test:///default", ""},
    {"qemu:///system?", ""},
    {"qemu+ssh://root@127.0.0.1/system", ""},
    {"qemu+ssh://root@127.0.0.1:2222/system?keyfile=/k&no_tty=1", "keyfile=/k no_tty=1"},
    /* Finding 1: ';' separates where no '&' is left, so command= reaches libvirt. */
    {"qemu+ssh://polyglot.yaml@127.0.0.1/system?no_verify=1;command=/bin/bash",
     "no_verify=1 command=/bin/bash"},
    /* ... but where an '&' follows, the ';' stays inside a value. */
    {"qemu+ssh://h/system?keyfile=/k;command=/x&no_tty=1", "keyfile=/k;command=/x no_tty=1"},
    {"qemu+ssh://h/system?no_tty=1&keyfile=/k;command=/x", "no_tty=1 keyfile=/k command=/x"},
    {"qemu+ssh://h/system?a=1;b=2;c=3", "a=1 b=2 c=3"},
    /* Finding 2: socket= is percent-decoded before libvirt pastes it into the remote shell. */
    {"qemu+ssh://root@127.0.0.1:2299/system?keyfile=/root/.ssh/k&no_verify=1&socket='%3Bid%3E/tmp/"
     "PWNED%3B'",
     "keyfile=/root/.ssh/k no_verify=1 socket=';id>/tmp/PWNED;'"},
    {"qemu+ssh://h/system?;netcat=nc", "netcat=nc"},
    {"qemu+ssh://h/system?known_hosts_verify=ignore", "known_hosts_verify=ignore"},
    {"qemu+ssh://h/system?COMMAND=/x", "COMMAND=/x"},
    {"qemu+ssh://h/system?%63ommand=/x", "command=/x"},
    {"qemu+ssh://h/system?keyfile=/a&KeyFile=/b", "keyfile=/a KeyFile=/b"},
    {"qemu+ssh://h/system?a=1&&b=2", "a=1 b=2"},
    {"qemu+ssh://h/system?a=b=c", "a=b=c"},
    {"qemu+ssh://h/system?a=%41%42&b=", "a=AB b="},
    {"qemu+ssh://h/system?x=a/b?c:d@e", "x=a/b?c:d@e"},
    {"qemu+ssh://[::1]:22/system", ""},
    {"qemu+ssh://root@[2001:db8::1]/system?no_tty=1", "no_tty=1"},
    {"qemu+tls://host.example/system?pkipath=/etc/pki/lab", "pkipath=/etc/pki/lab"},
    {"qemu+ssh://h:65535/system", ""},
    {"qemu+ssh://h/system?keyfile=/tmp/dir%20with%20space/key", "keyfile=/tmp/dir with space/key"},
    {"qemu:///system?socket=/run/another-libvirtd/libvirt-sock",
     "socket=/run/another-libvirtd/libvirt-sock"},
    {"qemu+ssh://root@127.0.0.1:2222/system?keyfile=/tmp/t/key&command=/tmp/t/ssh&no_tty=1",
     "keyfile=/tmp/t/key command=/tmp/t/ssh no_tty=1"},
};

static void test_agrees_with_libvirt(void)
{
    const char *why = NULL;
    if (!lv_uri_init(&why)) {
        fprintf(stderr, "test_uri: %s\n", why);
        CHECK(!"libvirt's virURIParse is found");
        return;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(agree); i++) {
        g_autoptr(GError) e = NULL;
        g_autoptr(MlUri) u = ml_uri_parse(agree[i].uri, &e);
        if (!u) {
            fprintf(stderr, "%s: %s\n", agree[i].uri, e->message);
            CHECK(!"ours parses it");
            continue;
        }
        g_autofree char *d = lv_uri_disagreement(u, agree[i].uri);
        if (d)
            fprintf(stderr, "%s: %s\n", agree[i].uri, d);
        CHECK(d == NULL);
        g_autofree char *s = split(agree[i].uri);
        CHECK_STR(s, agree[i].params);
    }
    /* The oracle sees a difference where there is one. */
    g_autoptr(MlUri) u = ml_uri_parse("qemu+ssh://h/system?a=1;b=2", NULL);
    g_free(u->params[1].value);
    u->params[1].value = g_strdup("2;c");
    g_autofree char *d = lv_uri_disagreement(u, "qemu+ssh://h/system?a=1;b=2");
    CHECK(d && strstr(d, "parameter 1: ours 'b'='2;c', libvirt's 'b'='2'"));
}

/* URIs ours refuses, each a shape no lab needs; libvirt would read them (some as an attack). */
static void test_stricter(void)
{
    static const char *const refused[][2] = {
        {"qemu+ssh://h/system#frag", "no fragment"},
        {"qemu+ssh://u:pw@h/system", "no password"},
        {"QEMU:///system", "starts with its scheme"},
        {"qemu+ssh://h/sys%74em", "no escapes"},
        {"qemu+ssh://-oProxyCommand=x/system", "starts with '-'"},
        {"qemu+ssh://-l@h/system", "starts with '-'"},
        {"qemu+ssh://h:0/system", "1 to 65535"},
        {"qemu+ssh://h:99999/system", "1 to 65535"},
        {"qemu+ssh://h:/system", "1 to 65535"},
        {"qemu+ssh://[;id]/system", "IPv6 address"},
        {"qemu+ssh://a@b@c/system", "a host is a name"},
        {"qemu+ssh://h/system?x=%zz", "'%' is not allowed"},
        {"qemu+ssh://h/system?x=`id`", "'`' is not allowed"},
        {"qemu+ssh://h/system?x=a b", "' ' is not allowed"},
        {"qemu+ssh://h/system?x=%0aid", "control character"},
        {"qemu+ssh://h/system?x=%00", "control character"},
        /* libvirt ignores "=x", and names a lone "=" after the rest of the query (found by
         * fuzz_uri): a parameter without a name is refused. */
        {"qemu+ssh://h/system?=x&a", "has no name"},
        {"test:///default?=x&a&=&bc=:/.me", "has no name"},
        {"qemu:/system", "followed by '://'"},
        {"", "empty"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        g_autofree char *s = split(refused[i][0]);
        bool ok = g_str_has_prefix(s, "error: ") && strstr(s, refused[i][1]);
        if (!ok)
            fprintf(stderr, "%s: expected an error with \"%s\", got \"%s\"\n", refused[i][0],
                    refused[i][1], s);
        CHECK(ok);
    }
    GString *big = g_string_new("qemu:///system?a=");
    while (big->len <= 4096)
        g_string_append_c(big, 'x');
    g_autofree char *s = split(big->str);
    CHECK(strstr(s, "longer than 4096") != NULL);
    g_string_free(big, TRUE);
}

/* A topology's hosts: only the transports and keys a lab needs, of a safe shape. */
static void test_topology_refusal(void)
{
    static const char *const fine[] = {
        "qemu:///system",
        "test:///default",
        "qemu+ssh://root@127.0.0.1/system",
        "qemu+ssh://root@127.0.0.1:2222/system?keyfile=/root/.ssh/id_ed25519&no_tty=1",
        "qemu+ssh://root@[2001:db8::1]/system",
        "qemu+tls://host.example/system?pkipath=/etc/pki/lab",
        "mylab-there", /* an alias of libvirt.conf's uri_aliases */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(fine); i++) {
        g_autofree char *why = ml_uri_topology_refusal(fine[i]);
        if (why)
            fprintf(stderr, "%s: refused: %s\n", fine[i], why);
        CHECK(why == NULL);
    }
    static const char *const refused[][2] = {
        /* finding 1 and its variants */
        {"qemu+ssh://polyglot.yaml@127.0.0.1/system?no_verify=1;command=/bin/bash",
         "'no_verify' turns off the check"},
        {"qemu+ssh://polyglot.yaml@127.0.0.1/system?no_tty=1;command=/bin/bash",
         "'command' names the program"},
        {"qemu+ssh://h/system?keyfile=/k;command=/x&no_tty=1", "'keyfile' has a value of another"},
        {"qemu+ssh://h/system?COMMAND=/x", "'COMMAND' names the program"},
        {"qemu+ssh://h/system?%63ommand=/x", "no percent escape"},
        {"qemu+ssh://h/system?;netcat=nc", "'netcat' names a program"},
        /* finding 2 */
        {"qemu+ssh://root@127.0.0.1:2299/system?keyfile=/k&socket=/run/x", "'socket' is pasted"},
        {"qemu+ssh://h/system?known_hosts_verify=ignore", "'known_hosts_verify' changes"},
        {"qemu+ssh://h/system?known_hosts=/tmp/kh", "'known_hosts' names another file"},
        {"qemu+ssh://h/system?sshauth=agent", "'sshauth' changes"},
        {"qemu+ssh://h/system?name=qemu:///session", "'name' names the driver"},
        {"qemu+ssh://h/system?mode=legacy", "'mode' chooses"},
        {"qemu+ssh://h/system?proxy=netcat", "'proxy' chooses"},
        {"qemu+ssh://h/system?frobnicate=1", "'frobnicate' is not a parameter meshlab knows"},
        {"qemu+ssh://h/system?keyfile=/a&KeyFile=/b", "gives 'KeyFile' twice"},
        {"qemu+ssh://h/system?keyfile=relative/key", "an absolute path"},
        {"qemu+ssh://h/system?keyfile=/etc/../k", "without '..'"},
        {"qemu+ssh://h/system?no_tty=yes", "0 or 1"},
        {"qemu+ssh://h/system?pkipath=/etc/pki", "not of that transport"},
        {"qemu+tls://h/system?keyfile=/k", "not of that transport"},
        {"qemu:///system?socket=/run/another-libvirtd/libvirt-sock", "'socket' is pasted"},
        {"qemu:///system?keyfile=/k", "not of that transport"},
        /* transports and paths */
        {"qemu+ext:///system?command=/bin/sh", "transport 'qemu+ext'"},
        {"qemu+unix:///system?socket=/x", "transport 'qemu+unix'"},
        {"qemu+tcp://h/system", "transport 'qemu+tcp'"},
        {"qemu+libssh2://h/system", "transport 'qemu+libssh2'"},
        {"lxc:///system", "transport 'lxc'"},
        {"qemu:///embed?root=/tmp/x", "not /system"},
        {"qemu:///session", "not /system"},
        {"test:///tmp/host.xml", "not /default"},
        {"qemu://h/system", "has no host"},
        {"qemu+ssh:///system", "names the host"},
        {"qemu+ssh://h/system#x", "no fragment"},
        {"my.alias", "followed by '://'"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        g_autofree char *why = ml_uri_topology_refusal(refused[i][0]);
        bool ok = why && strstr(why, refused[i][1]);
        if (!ok)
            fprintf(stderr, "%s: expected a refusal with \"%s\", got \"%s\"\n", refused[i][0],
                    refused[i][1], why ? why : "(accepted)");
        CHECK(ok);
    }
}

/* Finding 6: a second spelling with another query is another libvirtd. */
static void test_same(void)
{
    CHECK(ml_uri_same("qemu:///system", "qemu:///system"));
    CHECK(ml_uri_same("qemu:///system", "qemu:///system?"));
    CHECK(!ml_uri_same("qemu:///system", "qemu:///system?socket=/run/other/libvirt-sock"));
    CHECK(!ml_uri_same("test:///default", "test:///default?socket=/run/another-libvirtd/s"));
    CHECK(!ml_uri_same("qemu:///system", "qemu:///session"));
    CHECK(!ml_uri_same("qemu+ssh://root@h/system", "qemu+ssh://admin@h/system"));
    CHECK(!ml_uri_same("qemu+ssh://h/system", "qemu+ssh://h:2222/system"));
    CHECK(ml_uri_same("qemu+ssh://root@Host.Example/system", "qemu+ssh://root@host.example/system"));
    CHECK(ml_uri_same("qemu+ssh://h/system?keyfile=/k&no_tty=1",
                      "qemu+ssh://h/system?no_tty=1;KEYFILE=/k"));
    CHECK(ml_uri_same("qemu+ssh://h/system?keyfile=/old&keyfile=/k", "qemu+ssh://h/system?keyfile=/k"));
    CHECK(!ml_uri_same("qemu+ssh://h/system?keyfile=/k", "qemu+ssh://h/system?keyfile=/k2"));
    CHECK(!ml_uri_same("qemu+ssh://h/system?keyfile=/k", "qemu+ssh://h/system"));
    CHECK(ml_uri_same("mylab", "mylab"));
    CHECK(!ml_uri_same("mylab", "qemu:///system"));
    CHECK(!ml_uri_same(NULL, "qemu:///system"));
}

int main(void)
{
    test_agrees_with_libvirt();
    test_stricter();
    test_topology_refusal();
    test_same();
    return check_finish();
}
