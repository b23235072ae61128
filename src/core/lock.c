#include "core/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

char *ml_lock_path(const char *lab)
{
    return ml_lab_state_path(lab, ".lock");
}

static char *holder(int fd)
{
    char buf[256];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return g_strdup("another process holds its lock and has not said which");
    buf[n] = '\0';
    return g_strdup(g_strstrip(buf));
}

int ml_lock_lab(const char *lab, const char *verb, GError **err)
{
    g_autofree char *path = ml_lock_path(lab);
    g_autofree char *dir = g_path_get_dirname(path);
    if (!ml_mkdir_p(dir, 0700, err))
        return -1;
    /* down deletes the file while holding it; a lock taken on a file that was
     * meanwhile unlinked protects nothing, so check that it is still the one
     * at the path and start again if not. */
    for (int tries = 0; tries < 10; tries++) {
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot open lock file '%s': %s", path,
                        g_strerror(errno));
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
            int e = errno;
            g_autofree char *who = e == EWOULDBLOCK ? holder(fd) : NULL;
            close(fd);
            if (who)
                g_set_error(err, ML_ERROR, ML_ERR_HOST,
                            "lab %s is busy: %s; wait for it to finish or stop it (Ctrl-C), "
                            "then try again",
                            lab, who);
            else
                g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot lock '%s': %s", path,
                            g_strerror(e));
            return -1;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
            a.st_dev == b.st_dev) {
            time_t now = time(NULL);
            struct tm tm;
            char since[32];
            gmtime_r(&now, &tm);
            strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
            g_autofree char *me = g_strdup_printf("meshlab pid %d ('meshlab %s') holds it since "
                                                  "%s\n",
                                                  (int)getpid(), verb, since);
            if (ftruncate(fd, 0) < 0 || pwrite(fd, me, strlen(me), 0) < 0)
                ml_warn("cannot record this process in '%s': %s", path, g_strerror(errno));
            return fd;
        }
        close(fd);
    }
    g_set_error(err, ML_ERROR, ML_ERR_HOST,
                "cannot lock '%s': it keeps being replaced; is another meshlab looping on 'down'?",
                path);
    return -1;
}

void ml_lock_release(const char *lab, int fd)
{
    if (fd < 0)
        return;
    g_autofree char *path = ml_lock_path(lab);
    unlink(path);
    close(fd);
}
