#include "core/leftovers.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "core/rundir.h"

#define TMP_KINDS "seed|capture|plot|kvm|export"

char *ml_leftover_template(const char *kind, const char *suffix)
{
    return g_strdup_printf("meshlab-%s-%d-XXXXXX%s", kind, (int)getpid(), suffix);
}

int ml_leftover_pid(const char *name)
{
    /* meshlab-KIND-PID-XXXXXX[.pcap], .build-IMAGE-PID-XXXXXX, FILE.tmp.PID[.XXXXXX] */
    static GRegex *re;
    if (!re)
        re = g_regex_new("^(?:meshlab-(?:" TMP_KINDS ")-|\\.build-[a-z0-9.-]+?-)([0-9]+)-"
                         "[A-Za-z0-9]{6}(?:\\.pcap)?$"
                         "|\\.tmp\\.([0-9]+)(?:\\.[A-Za-z0-9]{6})?$",
                         G_REGEX_OPTIMIZE, 0, NULL);
    g_autoptr(GMatchInfo) m = NULL;
    if (!g_regex_match(re, name, 0, &m))
        return 0;
    g_autofree char *a = g_match_info_fetch(m, 1);
    g_autofree char *b = g_match_info_fetch(m, 2);
    const char *digits = a && *a ? a : b;
    long pid = digits ? strtol(digits, NULL, 10) : 0;
    return pid > 0 && pid < (1L << 22) ? (int)pid : 0;
}

static bool process_gone(int pid)
{
    return pid != getpid() && kill(pid, 0) < 0 && errno == ESRCH;
}

static bool remove_path(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT;
    if (!S_ISDIR(st.st_mode))
        return unlink(path) == 0;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = ml_rundir_clear(fd, path, NULL);
    close(fd);
    return ok && rmdir(path) == 0;
}

/* Looks at the entries of dir, and of its subdirectories down to depth. */
static int sweep_dir(const char *dir, int depth, bool remove, ml_leftover_cb cb, void *opaque)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    if (!d)
        return 0;
    int n = 0;
    const char *name;
    while ((name = g_dir_read_name(d))) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        int pid = ml_leftover_pid(name);
        if (pid > 0) {
            if (process_gone(pid) && (!remove || remove_path(path))) {
                if (cb)
                    cb(path, opaque);
                n++;
            }
            continue;
        }
        if (depth > 0 && g_file_test(path, G_FILE_TEST_IS_DIR) &&
            !g_file_test(path, G_FILE_TEST_IS_SYMLINK))
            n += sweep_dir(path, depth - 1, remove, cb, opaque);
    }
    return n;
}

int ml_leftovers_sweep(bool remove, ml_leftover_cb cb, void *opaque)
{
    int n = 0;
    g_autoptr(GDir) d = g_dir_open(g_get_tmp_dir(), 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        if (!g_str_has_prefix(name, "meshlab-"))
            continue;
        g_autofree char *path = g_build_filename(g_get_tmp_dir(), name, NULL);
        int pid = ml_leftover_pid(name);
        if (pid > 0 && process_gone(pid) && (!remove || remove_path(path))) {
            if (cb)
                cb(path, opaque);
            n++;
        }
    }
    n += sweep_dir(ml_cache_dir(), 2, remove, cb, opaque);
    g_autofree char *labs = g_build_filename(ml_state_dir(), "labs", NULL);
    n += sweep_dir(labs, 0, remove, cb, opaque);
    return n;
}
