#include "export/place.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/rundir.h"
#include "core/util.h"
#include "report/runfiles.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static bool is_link(int dirfd, const char *name)
{
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

char *ml_export_read_at(int dirfd, const char *shown, const char *rel, gsize max, gsize *ret_len,
                        GError **err)
{
    g_autofree char *name = g_build_filename(shown, rel, NULL);
    return ml_runfile_read(dirfd, rel, name, max, ret_len, err);
}

/* The directory above the absolute path abs, each component opened with O_NOFOLLOW from "/":
 * a link anywhere on the way is refused, whoever made it. */
static int open_parent(const char *abs, const char *shown, GError **err)
{
    g_autofree char *parent = g_path_get_dirname(abs);
    g_auto(GStrv) parts = g_strsplit(parent, "/", -1);
    int cur = open("/", DIR_FLAGS);
    for (char **p = parts; cur >= 0 && *p; p++) {
        if (!**p)
            continue;
        int next = openat(cur, *p, DIR_FLAGS);
        if (next < 0) {
            int e = errno;
            bool link = is_link(cur, *p);
            close(cur);
            if (link)
                g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                            "cannot export to '%s': '%s' on its way is a symbolic link, and "
                            "export follows none (the export holds private keys, and whoever "
                            "can change the link decides where they go); give --to the real "
                            "directory",
                            shown, *p);
            else
                g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                            "cannot export to '%s': '%s' on its way: %s; --to's directory must "
                            "exist",
                            shown, *p, g_strerror(e));
            return -1;
        }
        close(cur);
        cur = next;
    }
    if (cur < 0)
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot open /: %s", g_strerror(errno));
    return cur;
}

/* The export's directory must be the caller's or root's, and no one else's to write: another
 * user who can write it can swap the stage for a directory of their own while it is written. */
static bool parent_trusted(int fd, const char *shown, GError **err)
{
    g_autofree char *what = g_strdup_printf("the directory of '%s'", shown);
    return ml_dir_private(fd, what, "give --to a place in a directory of your own", err);
}

/* Removes the directory name in dirfd and what it holds, following no link. */
static void remove_at(int dirfd, const char *name, const char *shown)
{
    int fd = openat(dirfd, name, DIR_FLAGS);
    if (fd >= 0) {
        ml_rundir_clear(fd, shown, NULL);
        close(fd);
    }
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* The pid of a stage of base's export (".BASE.partial-PID", ".BASE.unverified-PID", and an older
 * meshlab's "..BASE.unverified-PID.partial-PID"), or 0. */
static long stage_pid(const char *name, const char *base)
{
    static const struct {
        const char *lead, *kind;
    } kinds[] = {{".", ".partial-"}, {".", ".unverified-"}, {"..", ".unverified-"}};
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++) {
        g_autofree char *prefix = g_strconcat(kinds[k].lead, base, kinds[k].kind, NULL);
        if (!g_str_has_prefix(name, prefix))
            continue;
        const char *digits = name + strlen(prefix);
        char *end = NULL;
        guint64 pid = g_ascii_strtoull(digits, &end, 10);
        bool whole = *end == '\0' || (k == 2 && g_str_has_prefix(end, ".partial-"));
        if (end != digits && whole && pid > 0 && pid <= G_MAXINT)
            return (long)pid;
    }
    return 0;
}

static void sweep_stale(const struct ml_export_place *p)
{
    int dup_fd = fcntl(p->parent, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return;
    }
    g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func(g_free);
    for (struct dirent *e; (e = readdir(d));) {
        long pid = stage_pid(e->d_name, p->base);
        if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            g_ptr_array_add(gone, g_strdup(e->d_name));
    }
    closedir(d);
    g_autofree char *dir = g_path_get_dirname(p->shown);
    for (guint i = 0; i < gone->len; i++) {
        g_autofree char *shown = g_build_filename(dir, g_ptr_array_index(gone, i), NULL);
        ml_warn("removing %s: an export was killed before it could remove it", shown);
        remove_at(p->parent, g_ptr_array_index(gone, i), shown);
    }
}

static bool target_free(const struct ml_export_place *p, GError **err)
{
    struct stat st;
    if (fstatat(p->parent, p->base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return true;
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot examine %s: %s", p->shown,
                    g_strerror(errno));
        return false;
    }
    int fd = S_ISDIR(st.st_mode) ? openat(p->parent, p->base, DIR_FLAGS) : -1;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    bool empty = d != NULL;
    for (struct dirent *e; empty && (e = readdir(d));)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    else if (fd >= 0)
        close(fd);
    if (!empty)
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s already exists and is not an empty directory: export never writes over "
                    "an earlier export; remove it, or give another --to",
                    p->shown);
    return empty;
}

static bool make_stage(struct ml_export_place *p, const char *kind, GError **err)
{
    p->stage = g_strdup_printf(".%s.%s-%d", p->base, kind, (int)getpid());
    remove_at(p->parent, p->stage, p->shown); /* this process's own, should a pid come round */
    struct stat st;
    if (mkdirat(p->parent, p->stage, 0700) == 0)
        p->fd = openat(p->parent, p->stage, DIR_FLAGS);
    if (p->fd < 0 || fstat(p->fd, &st) != 0 || fchmod(p->fd, 0700) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot make a directory beside %s: %s", p->shown,
                    g_strerror(errno));
        return false;
    }
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    return true;
}

bool ml_export_place_open(const char *to, const char *kind, struct ml_export_place *ret,
                          GError **err)
{
    *ret = (struct ml_export_place){.parent = -1, .fd = -1, .shown = g_strdup(to)};
    /* Relative to the working directory as it is (getcwd), not as $PWD spells it through
     * links. */
    g_autofree char *cwd = g_path_is_absolute(to) ? NULL : getcwd(NULL, 0);
    g_autofree char *abs = g_canonicalize_filename(to, cwd);
    ret->base = g_path_get_basename(abs);
    if (!strcmp(abs, "/")) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "cannot export to '%s': give a directory to make",
                    to);
        return false;
    }
    ret->parent = open_parent(abs, to, err);
    bool ok = ret->parent >= 0 && parent_trusted(ret->parent, to, err);
    if (ok)
        sweep_stale(ret);
    ok = ok && target_free(ret, err) && make_stage(ret, kind, err);
    if (!ok)
        ml_export_place_close(ret);
    return ok;
}

static bool stage_is(const struct ml_export_place *p, const char *name)
{
    struct stat st;
    return fstatat(p->parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == p->dev &&
           st.st_ino == p->ino;
}

bool ml_export_place_commit(struct ml_export_place *p, GError **err)
{
    if (!stage_is(p, p->stage)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "the export's stage beside %s is no longer the directory this export made "
                    "(someone who can write its directory moved it): nothing was handed over",
                    p->shown);
        return false;
    }
    if (renameat(p->parent, p->stage, p->parent, p->base) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot move the export into %s: %s", p->shown,
                    g_strerror(errno));
        return false;
    }
    if (!stage_is(p, p->base)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "%s is not the export this meshlab wrote (someone who can write its "
                    "directory swapped it): do not use it",
                    p->shown);
        return false;
    }
    p->placed = true;
    return true;
}

void ml_export_place_close(struct ml_export_place *p)
{
    if (!p)
        return;
    if (p->fd >= 0 && !p->placed) {
        ml_rundir_clear(p->fd, p->shown, NULL);
        if (stage_is(p, p->stage))
            unlinkat(p->parent, p->stage, AT_REMOVEDIR);
    }
    if (p->fd >= 0)
        close(p->fd);
    if (p->parent >= 0)
        close(p->parent);
    g_free(p->shown);
    g_free(p->base);
    g_free(p->stage);
    *p = (struct ml_export_place){.parent = -1, .fd = -1};
}
