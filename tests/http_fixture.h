/* What the download tests share: the local HTTP server (tests/http_server.py,
 * 127.0.0.1 only), started on an ephemeral port it prints on its first line,
 * and the removal of their scratch trees. */
#pragma once

#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Removes a test's scratch tree. */
static inline void rm_rf(const char *path)
{
    GDir *d = g_dir_open(path, 0, NULL);
    if (d) {
        const char *name;
        while ((name = g_dir_read_name(d))) {
            char *child = g_build_filename(path, name, NULL);
            rm_rf(child);
            g_free(child);
        }
        g_dir_close(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Serves root; log_path (may be NULL) receives one line per request. Returns the
 * server's pid and sets *ret_port, or returns 0 when it did not start. */
static inline GPid http_server_start(const char *root, const char *log_path, int *ret_port)
{
    const char *argv[] = {"python3", "tests/http_server.py", "--root", root,
                          log_path ? "--log" : NULL, log_path, NULL};
    GPid pid = 0;
    int out_fd = -1;
    GError *err = NULL;
    if (!g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
                                  G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                  &pid, NULL, &out_fd, NULL, &err)) {
        fprintf(stderr, "cannot start the test server: %s\n", err->message);
        g_error_free(err);
        return 0;
    }
    char line[32] = "";
    size_t len = 0;
    while (len < sizeof(line) - 1) {
        ssize_t n = read(out_fd, line + len, 1);
        if (n <= 0 || line[len] == '\n')
            break;
        len++;
    }
    line[len] = '\0';
    close(out_fd);
    *ret_port = atoi(line);
    if (*ret_port <= 0) {
        fprintf(stderr, "the test server did not print its port (got '%s')\n", line);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        g_spawn_close_pid(pid);
        return 0;
    }
    return pid;
}
