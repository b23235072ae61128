#include "virt/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "core/leftovers.h"

#define TCPDUMP "tcpdump"

bool ml_capture_available(char **ret_reason)
{
    g_autofree char *bin = g_find_program_in_path(TCPDUMP);
    if (bin)
        return true;
    *ret_reason = g_strdup("tcpdump is not installed on this host (apt-get install tcpdump)");
    return false;
}

bool ml_capture_start(struct ml_capture *c, const char *tap, const char *rel, GError **err)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    g_autofree char *bin = g_find_program_in_path(TCPDUMP);
    if (!bin) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "--capture needs tcpdump on this host (apt-get install tcpdump)");
        return false;
    }
    GError *e = NULL;
    g_autofree char *tmpl = ml_leftover_template("capture", ".pcap");
    c->fd = g_file_open_tmp(tmpl, &c->tmp_path, &e);
    if (c->fd < 0) {
        g_propagate_prefixed_error(err, e, "cannot make a file for the capture on %s: ", tap);
        return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot start tcpdump: %s", g_strerror(errno));
        return false;
    }
    if (pid == 0) {
        /* Its own group, so a Ctrl-C at the terminal is meshlab's to handle; it dies with
         * meshlab whatever happens to meshlab. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        int null = open("/dev/null", O_RDWR);
        dup2(c->fd, STDOUT_FILENO);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDERR_FILENO);
        }
        /* -p: no promiscuous mode; -U: each packet written as it comes; -w -: to stdout, which
         * is already open, so tcpdump needs no file of its own. */
        execl(bin, TCPDUMP, "-p", "-n", "-U", "-i", tap, "-w", "-", (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    c->pid = pid;
    c->rel = g_strdup(rel);
    return true;
}

static void reap(pid_t pid)
{
    kill(pid, SIGINT);
    for (int i = 0; i < 50; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        g_usleep(100000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

bool ml_capture_stop(struct ml_capture *c, const struct ml_lab *lab, GError **err)
{
    bool ok = true;
    if (c->pid > 0)
        reap(c->pid);
    c->pid = 0;
    if (c->tmp_path) {
        g_autofree char *data = NULL;
        gsize len = 0;
        GError *e = NULL;
        if (!g_file_get_contents(c->tmp_path, &data, &len, &e)) {
            g_propagate_prefixed_error(err, e, "cannot read the capture %s: ", c->rel);
            ok = false;
        } else {
            ok = ml_lab_write(lab, c->rel, data, (gssize)len, err);
        }
        unlink(c->tmp_path);
    }
    if (c->fd >= 0)
        close(c->fd);
    g_clear_pointer(&c->tmp_path, g_free);
    g_clear_pointer(&c->rel, g_free);
    c->fd = -1;
    return ok;
}

bool ml_capture_lab_start(const struct ml_lab *lab, struct ml_capture caps[ML_CAPTURE_TAPS],
                          const char *dir, struct json_object *files, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t nodes[ML_CAPTURE_TAPS] = {t->wireguard.hub, t->measure.client, t->measure.server};
    memset(caps, 0, sizeof(struct ml_capture) * ML_CAPTURE_TAPS);
    for (size_t k = 0; k < ML_CAPTURE_TAPS; k++) {
        g_autofree char *rel = g_strdup_printf("%s/%s.pcap", dir, t->nodes[nodes[k]].name);
        if (!ml_capture_start(&caps[k], lab->plan->guests[nodes[k]].tap, rel, err)) {
            ml_capture_lab_stop(lab, caps);
            return false;
        }
        json_object_array_add(files, json_object_new_string(rel));
    }
    return true;
}

void ml_capture_lab_stop(const struct ml_lab *lab, struct ml_capture caps[ML_CAPTURE_TAPS])
{
    for (size_t k = 0; k < ML_CAPTURE_TAPS; k++) {
        g_autoptr(GError) e = NULL;
        if (caps[k].rel && !ml_capture_stop(&caps[k], lab, &e))
            ml_warn("capture: %s", e->message);
    }
}
