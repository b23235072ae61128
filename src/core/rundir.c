#include "core/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

bool ml_dir_private(int fd, const char *what, const char *advice, GError **err)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot examine %s: %s", what, g_strerror(errno));
        return false;
    }
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s belongs to uid %u, not to you or root: meshlab would write where someone "
                    "else can plant links or swap what it writes; %s",
                    what, (unsigned)st.st_uid, advice);
        return false;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s is writable by %s (mode %04o): another user could plant links in it or "
                    "swap what meshlab writes there; use a directory only you can write, or "
                    "'chmod go-w' it",
                    what, (st.st_mode & S_IWOTH) ? "everyone" : "its group",
                    (unsigned)(st.st_mode & 07777));
        return false;
    }
    return true;
}

static bool check_owner(const char *path, int fd, GError **err)
{
    g_autofree char *what = g_strdup_printf("run directory '%s'", path);
    return ml_dir_private(fd, what,
                          "give --out a directory of your own (or leave it out for "
                          "runs/LAB-RUNID)",
                          err);
}

bool ml_rundir_clear(int dirfd, const char *shown, GError **err)
{
    int dup_fd = dup(dirfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot list '%s': %s", shown, g_strerror(errno));
        return false;
    }
    rewinddir(d);
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (unlinkat(dirfd, e->d_name, 0) == 0)
            continue;
        int sub = errno == EISDIR ? openat(dirfd, e->d_name, DIR_FLAGS) : -1;
        if (sub >= 0) {
            g_autofree char *inner = g_build_filename(shown, e->d_name, NULL);
            ok = ml_rundir_clear(sub, inner, err);
            close(sub);
            if (ok && unlinkat(dirfd, e->d_name, AT_REMOVEDIR) == 0)
                continue;
        }
        if (ok)
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot remove '%s/%s' of an earlier run: %s",
                        shown, e->d_name, g_strerror(errno));
        ok = false;
    }
    closedir(d);
    return ok;
}

static bool is_empty(int dirfd)
{
    int dup_fd = dup(dirfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return false;
    }
    rewinddir(d);
    bool empty = true;
    struct dirent *e;
    while (empty && (e = readdir(d)))
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

/* The lab named by the marker of an earlier run, or NULL. */
static char *marker_lab(int dirfd)
{
    int fd = openat(dirfd, ML_RUNDIR_MARKER, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    struct json_object *o = json_tokener_parse(buf), *v = NULL;
    char *lab = NULL;
    if (o && json_object_object_get_ex(o, "lab", &v) && json_object_is_type(v, json_type_string))
        lab = g_strdup(json_object_get_string(v));
    json_object_put(o);
    return lab;
}

static bool reuse(const char *path, int fd, const char *lab, bool force, GError **err)
{
    if (is_empty(fd))
        return true;
    g_autofree char *old = marker_lab(fd);
    if (!old) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "run directory '%s' is not empty and holds no meshlab run; give --out a new "
                    "or empty directory",
                    path);
        return false;
    }
    if (strcmp(old, lab) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "run directory '%s' holds a run of lab %s, not %s; give --out another "
                    "directory",
                    path, old, lab);
        return false;
    }
    if (!force) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "run directory '%s' holds an earlier run of lab %s; add --force to replace "
                    "it, or give --out another directory",
                    path, lab);
        return false;
    }
    ml_progress("run", "--force: removing the earlier run in %s", path);
    return ml_rundir_clear(fd, path, err);
}

/* A link that only root can have made and can change: root owns it and the directory it is
 * in, which nobody else can write (or only with the sticky bit, as /tmp). */
static bool trusted_link(int dirfd, const struct stat *link)
{
    struct stat dir;
    return link->st_uid == 0 && fstat(dirfd, &dir) == 0 && dir.st_uid == 0 &&
           (!(dir.st_mode & (S_IWGRP | S_IWOTH)) || (dir.st_mode & S_ISVTX));
}

/* Opens the directory at the absolute path abs, creating what is missing (0755) on the way,
 * one component at a time with O_NOFOLLOW: a link is followed only when trusted_link (the
 * host's own, as /var/run), else refused. A run directory's parents are often a user's
 * (runs/ in a checkout): a link there would send root's mkdir and writes anywhere. */
static int open_parents(const char *abs, const char *shown, GError **err)
{
    int cur = open("/", DIR_FLAGS);
    /* The components left, last first. */
    g_autoptr(GPtrArray) left = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) parts = g_strsplit(abs, "/", -1);
    for (gint i = (gint)g_strv_length(parts) - 1; i >= 0; i--)
        if (*parts[i] && strcmp(parts[i], "."))
            g_ptr_array_add(left, g_strdup(parts[i]));
    int hops = 0;
    while (cur >= 0 && left->len > 0) {
        g_autofree char *name = g_ptr_array_steal_index(left, left->len - 1);
        int next = openat(cur, name, DIR_FLAGS);
        if (next < 0 && errno == ENOENT && (mkdirat(cur, name, 0755) == 0 || errno == EEXIST))
            next = openat(cur, name, DIR_FLAGS);
        struct stat st;
        if (next < 0 && (errno == ELOOP || errno == ENOTDIR) &&
            fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            if (!trusted_link(cur, &st) || ++hops > 40) {
                g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                            "cannot use '%s' as the run directory: '%s' on its way is a symbolic "
                            "link that uid %u can change, and meshlab (root) does not follow "
                            "it; give --out the real directory",
                            shown, name, (unsigned)st.st_uid);
                close(cur);
                return -1;
            }
            char target[PATH_MAX];
            ssize_t n = readlinkat(cur, name, target, sizeof(target) - 1);
            if (n <= 0) {
                close(cur);
                cur = -1;
                break;
            }
            target[n] = '\0';
            g_auto(GStrv) more = g_strsplit(target, "/", -1);
            for (gint i = (gint)g_strv_length(more) - 1; i >= 0; i--)
                if (*more[i] && strcmp(more[i], "."))
                    g_ptr_array_add(left, g_strdup(more[i]));
            if (target[0] == '/') {
                close(cur);
                cur = open("/", DIR_FLAGS);
            }
            continue;
        }
        int e = errno;
        close(cur);
        cur = next;
        errno = e;
    }
    if (cur < 0 && !(err && *err))
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot create run directory '%s': %s", shown,
                    g_strerror(errno));
    return cur;
}

int ml_rundir_open(const char *path, const char *lab, const char *run_id, bool force, GError **err)
{
    /* Relative to the working directory as it is (getcwd), not as $PWD spells it through
     * links. */
    g_autofree char *cwd = g_path_is_absolute(path) ? NULL : getcwd(NULL, 0);
    g_autofree char *abs = g_canonicalize_filename(path, cwd);
    g_autofree char *parent_path = g_path_get_dirname(abs);
    g_autofree char *base = g_path_get_basename(abs);
    int parent = open_parents(parent_path, path, err);
    if (parent < 0)
        return -1;
    int fd = openat(parent, base, DIR_FLAGS);
    if (fd < 0 && errno == ENOENT) {
        if (mkdirat(parent, base, 0755) < 0 && errno != EEXIST) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot create run directory '%s': %s", path,
                        g_strerror(errno));
            close(parent);
            return -1;
        }
        fd = openat(parent, base, DIR_FLAGS);
    }
    if (fd < 0) {
        int e = errno;
        struct stat st;
        bool link = fstatat(parent, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
        close(parent);
        g_set_error(err, ML_ERROR, e == ELOOP || e == ENOTDIR ? ML_ERR_INPUT : ML_ERR_HOST,
                    "cannot use '%s' as the run directory: %s", path,
                    link ? "it is a symbolic link; give the directory it points to, if you trust "
                           "it"
                         : g_strerror(e));
        return -1;
    }
    close(parent);
    if (!check_owner(path, fd, err) || !reuse(path, fd, lab, force, err)) {
        close(fd);
        return -1;
    }
    struct json_object *m = json_object_new_object();
    json_object_object_add(m, "lab", json_object_new_string(lab));
    json_object_object_add(m, "run_id", json_object_new_string(run_id));
    bool ok = ml_rundir_write(fd, ML_RUNDIR_MARKER, json_object_to_json_string(m), -1, 0644, err);
    json_object_put(m);
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Writes data into a new file below dirfd and renames it to name. */
static bool write_at(int dirfd, const char *name, const char *shown, const char *data, gssize len,
                     int mode, GError **err)
{
    g_autofree char *tmp = NULL;
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        g_free(tmp);
        tmp = g_strdup_printf(".%s.tmp.%08x", name, g_random_int());
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot create '%s': %s", shown, g_strerror(errno));
        return false;
    }
    gssize off = 0;
    bool ok = true;
    while (ok && off < len) {
        ssize_t w = write(fd, data + off, (size_t)(len - off));
        if (w < 0 && errno == EINTR)
            continue;
        ok = w >= 0;
        off += ok ? w : 0;
    }
    ok = ok && fchmod(fd, (mode_t)mode) == 0;
    int e = errno;
    ok = close(fd) == 0 && ok;
    ok = ok && renameat(dirfd, tmp, dirfd, name) == 0;
    if (!ok) {
        e = errno ? errno : e;
        unlinkat(dirfd, tmp, 0);
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot write '%s': %s", shown, g_strerror(e));
    }
    return ok;
}

static bool write_rel(int dirfd, const char *rel, const char *data, gssize len, int mode,
                      bool private_dirs, GError **err)
{
    if (len < 0)
        len = (gssize)strlen(data);
    g_auto(GStrv) parts = g_strsplit(rel, "/", -1);
    guint n = g_strv_length(parts);
    int cur = dup(dirfd);
    for (guint i = 0; cur >= 0 && i + 1 < n; i++) {
        if (!*parts[i] || !strcmp(parts[i], ".") || !strcmp(parts[i], "..")) {
            close(cur);
            cur = -1;
            errno = EINVAL;
            break;
        }
        int dir_mode =
            private_dirs || (i == 0 && !strcmp(parts[i], ML_RUNDIR_PRIVATE)) ? 0700 : 0755;
        if (mkdirat(cur, parts[i], (mode_t)dir_mode) < 0 && errno != EEXIST) {
            close(cur);
            cur = -1;
            break;
        }
        int next = openat(cur, parts[i], DIR_FLAGS);
        close(cur);
        cur = next;
    }
    if (cur < 0 || n == 0 || !*parts[n - 1]) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "cannot open the directory of '%s' in the run "
                    "directory: %s",
                    rel, errno == ELOOP ? "a symbolic link is in the way" : g_strerror(errno));
        if (cur >= 0)
            close(cur);
        return false;
    }
    bool ok = write_at(cur, parts[n - 1], rel, data, len, mode, err);
    close(cur);
    return ok;
}

bool ml_rundir_write(int dirfd, const char *rel, const char *data, gssize len, int mode,
                     GError **err)
{
    return write_rel(dirfd, rel, data, len, mode, false, err);
}

bool ml_rundir_write_private(int dirfd, const char *rel, const char *data, gssize len, GError **err)
{
    return write_rel(dirfd, rel, data, len, 0600, true, err);
}

void ml_rundir_remove(const char *path)
{
    int fd = open(path, DIR_FLAGS);
    if (fd >= 0) {
        ml_rundir_clear(fd, path, NULL);
        close(fd);
    }
    rmdir(path);
}
