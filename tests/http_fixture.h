/* What the download tests share: the local HTTP server (tests/http_server.py,
 * 127.0.0.1 only), started on an ephemeral port it prints on its first line,
 * and the removal of their scratch trees. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/keys.h"

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

/* Serves root, over HTTPS when cert and key (PEM files) are given; log_path (may be NULL)
 * receives one line per request. Returns the server's pid and sets *ret_port, or returns 0
 * when it did not start. */
static inline GPid http_server_start_tls(const char *root, const char *log_path, const char *cert,
                                         const char *key, int *ret_port)
{
    const char *argv[10] = {"python3", "tests/http_server.py", "--root", root};
    int argc = 4;
    if (log_path) {
        argv[argc++] = "--log";
        argv[argc++] = log_path;
    }
    if (cert && key) {
        argv[argc++] = "--tls";
        argv[argc++] = cert;
        argv[argc++] = key;
    }
    GPid pid = 0;
    int out_fd = -1;
    GError *err = NULL;
    if (!g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
                                  G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                                  NULL, &out_fd, NULL, &err)) {
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

/* Serves root over plain HTTP. */
static inline GPid http_server_start(const char *root, const char *log_path, int *ret_port)
{
    return http_server_start_tls(root, log_path, NULL, NULL, ret_port);
}

/* Makes a self-signed certificate for 127.0.0.1 (cert.pem, key.pem in dir) with openssl;
 * false when openssl is missing or fails. */
static inline bool http_make_cert(const char *dir, char **ret_cert, char **ret_key)
{
    char *cert = g_build_filename(dir, "cert.pem", NULL);
    char *key = g_build_filename(dir, "key.pem", NULL);
    const char *ext[] = {"subjectAltName=IP:127.0.0.1", NULL};
    bool ok = ml_ec_selfsigned("/CN=127.0.0.1", 2, ext, key, cert, NULL);
    if (!ok) {
        g_free(cert);
        g_free(key);
        return false;
    }
    *ret_cert = cert;
    *ret_key = key;
    return true;
}
