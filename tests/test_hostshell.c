/* The shell on a lab's host (virt/hostshell.h): this machine's sh, or the SSH of a qemu+ssh://
 * URI with its user, port, key file, ssh binary and host-key options; no shell for another
 * transport. And the script a capture runs there (virt/capture.h). */
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "core/util.h"
#include "virt/capture.h"
#include "virt/hostshell.h"

static char *joined(char **argv)
{
    return g_strjoinv(" | ", argv);
}

int main(void)
{
    g_auto(GStrv) here = ml_hostshell_argv("qemu:///system", "ip link", NULL);
    g_autofree char *h = joined(here);
    CHECK_STR(h, "sh | -c | ip link");

    g_auto(GStrv) ssh = ml_hostshell_argv(
        "qemu+ssh://root@127.0.0.1:2222/system?keyfile=/tmp/k%20ey&command=/tmp/ssh&no_tty=1"
        "&known_hosts=/tmp/kh&no_verify=1",
        "echo 'a b'", NULL);
    guint n = g_strv_length(ssh);
    CHECK(n == 17);
    g_autofree char *last = ssh[n - 1];
    ssh[n - 1] = NULL;
    g_autofree char *s = joined(ssh);
    ssh[n - 1] = g_steal_pointer(&last);
    CHECK_STR(s, "/tmp/ssh | -T | -o | BatchMode=yes | -p | 2222 | -l | root | -i | /tmp/k ey | -o "
                 "| UserKnownHostsFile=/tmp/kh | -o | StrictHostKeyChecking=no | -- | 127.0.0.1");
    /* ssh hands the remote shell one command line: it gives the script back as it was. */
    g_auto(GStrv) words = NULL;
    CHECK(g_shell_parse_argv(ssh[n - 1], NULL, &words, NULL));
    CHECK(words && g_strv_length(words) == 3 && !strcmp(words[0], "sh") && !strcmp(words[1], "-c"));
    g_autofree char *back = g_strdup(words ? words[2] : "");
    CHECK_STR(back, "echo 'a b'");

    /* The plain form: ssh, no port, no user, no key. */
    g_auto(GStrv) plain = ml_hostshell_argv("qemu+ssh://server/system", "true", NULL);
    g_autofree char *p = joined(plain);
    CHECK_STR(p, "ssh | -T | -o | BatchMode=yes | -- | server | sh -c 'true'");

    /* TLS and TCP have no shell; the message names the URI without its query. */
    g_autoptr(GError) e = NULL;
    CHECK(ml_hostshell_argv("qemu+tls://server/system?pkipath=/secret", "true", &e) == NULL);
    CHECK(e && strstr(e->message, "qemu+tls://server/system is not an SSH URI") &&
          !strstr(e->message, "secret"));

    /* The capture script: tcpdump on the tap into a FIFO, at most 64 MB out, stopped when stdin
     * closes, its directory removed; sh accepts it. */
    g_autofree char *script = ml_capture_remote_script("mlt0123abcd0");
    CHECK(strstr(script, "tcpdump -p -n -U --immediate-mode -i 'mlt0123abcd0' -w \"$d/p\"") !=
          NULL);
    CHECK(strstr(script, "head -c 64000000 <\"$d/p\"") != NULL);
    CHECK(strstr(script, "read _; kill -INT $t") != NULL);
    CHECK(strstr(script, "rm -rf \"$d\"") != NULL);
    CHECK(fixture_sh_syntax_ok(script));
    return check_finish();
}
