#include "virt/agent.h"

#include <json-c/json.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

#define AGENT_TIMEOUT_S 10

static bool interruptible = true;

void ml_agent_set_interruptible(bool on)
{
    interruptible = on;
}

void ml_exec_clear(struct ml_exec *ex)
{
    g_free(ex->out);
    g_free(ex->err);
    memset(ex, 0, sizeof(*ex));
}

static const char *domain_name(virDomainPtr dom)
{
    const char *n = virDomainGetName(dom);
    return n ? n : "?";
}

static struct json_object *agent_call(virDomainPtr dom, struct json_object *cmd, int timeout,
                                      GError **err)
{
    const char *text = json_object_to_json_string_ext(cmd, JSON_C_TO_STRING_PLAIN);
    char *reply = virDomainQemuAgentCommand(dom, text, timeout, 0);
    if (!reply) {
        const char *msg = virGetLastErrorMessage();
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "guest agent of '%s' did not answer: %s",
                    domain_name(dom), msg ? msg : "unknown error");
        return NULL;
    }
    struct json_object *parsed = json_tokener_parse(reply);
    free(reply);
    struct json_object *ret = NULL;
    if (!parsed || !json_object_object_get_ex(parsed, "return", &ret)) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "guest agent of '%s' sent a reply without "
                    "'return'",
                    domain_name(dom));
        json_object_put(parsed);
        return NULL;
    }
    json_object_get(ret);
    json_object_put(parsed);
    return ret;
}

bool ml_agent_ping(virDomainPtr dom, int timeout_s)
{
    struct json_object *cmd = json_object_new_object();
    json_object_object_add(cmd, "execute", json_object_new_string("guest-ping"));
    struct json_object *r = agent_call(dom, cmd, timeout_s, NULL);
    json_object_put(cmd);
    virResetLastError();
    bool ok = r != NULL;
    json_object_put(r);
    return ok;
}

bool ml_agent_spawn(virDomainPtr dom, const char *cmd, const char *input, long long *ret_pid,
                    GError **err)
{
    struct json_object *req = json_object_new_object();
    struct json_object *args = json_object_new_object();
    struct json_object *argv = json_object_new_array();
    json_object_array_add(argv, json_object_new_string("-c"));
    json_object_array_add(argv, json_object_new_string(cmd));
    json_object_object_add(req, "execute", json_object_new_string("guest-exec"));
    json_object_object_add(args, "path", json_object_new_string("/bin/sh"));
    json_object_object_add(args, "arg", argv);
    json_object_object_add(args, "capture-output", json_object_new_boolean(1));
    if (input) {
        g_autofree char *b64 = g_base64_encode((const guchar *)input, strlen(input));
        json_object_object_add(args, "input-data", json_object_new_string(b64));
    }
    json_object_object_add(req, "arguments", args);
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, err);
    json_object_put(req);
    if (!r)
        return false;
    struct json_object *pid = NULL;
    bool ok = json_object_object_get_ex(r, "pid", &pid);
    if (ok)
        *ret_pid = json_object_get_int64(pid);
    else
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "guest-exec in '%s' returned no pid",
                    domain_name(dom));
    json_object_put(r);
    return ok;
}

static char *decode_field(struct json_object *r, const char *key)
{
    struct json_object *v = NULL;
    if (!json_object_object_get_ex(r, key, &v))
        return g_strdup("");
    gsize len = 0;
    guchar *raw = g_base64_decode(json_object_get_string(v), &len);
    char *s = g_malloc(len + 1);
    memcpy(s, raw, len);
    s[len] = '\0';
    g_free(raw);
    return s;
}

bool ml_agent_exec_status_parse(struct json_object *r, bool *ret_exited, struct ml_exec *ret,
                                GError **err)
{
    struct json_object *exited = NULL;
    *ret_exited = false;
    if (!json_object_object_get_ex(r, "exited", &exited) || !json_object_get_boolean(exited))
        return true;
    /* qemu-ga keeps at most 16 MiB of each stream and says so; a short answer
     * taken for the whole one would be a wrong measurement or a wrong key. */
    static const char *const truncated[] = {"out-truncated", "err-truncated"};
    for (size_t i = 0; i < G_N_ELEMENTS(truncated); i++) {
        struct json_object *t = NULL;
        if (json_object_object_get_ex(r, truncated[i], &t) && json_object_get_boolean(t)) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                        "the guest agent cut the command's %s short (%s); make the command "
                        "print less, or write to a file in the guest and read that",
                        i == 0 ? "output" : "error output", truncated[i]);
            return false;
        }
    }
    struct json_object *code = NULL;
    memset(ret, 0, sizeof(*ret));
    ret->exit_code =
        json_object_object_get_ex(r, "exitcode", &code) ? json_object_get_int(code) : -1;
    ret->out = decode_field(r, "out-data");
    ret->err = decode_field(r, "err-data");
    if (json_object_object_get_ex(r, "signal", &code))
        ret->signal = json_object_get_int(code);
    *ret_exited = true;
    return true;
}

bool ml_agent_poll(virDomainPtr dom, long long pid, bool *ret_exited, struct ml_exec *ret,
                   GError **err)
{
    struct json_object *req = json_object_new_object();
    struct json_object *args = json_object_new_object();
    json_object_object_add(req, "execute", json_object_new_string("guest-exec-status"));
    json_object_object_add(args, "pid", json_object_new_int64(pid));
    json_object_object_add(req, "arguments", args);
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, err);
    json_object_put(req);
    if (!r)
        return false;
    *ret_exited = false;
    bool parsed = ml_agent_exec_status_parse(r, ret_exited, ret, err);
    json_object_put(r);
    if (!parsed)
        g_prefix_error(err, "in '%s': ", domain_name(dom));
    return parsed;
}

bool ml_agent_wait(virDomainPtr dom, long long pid, double timeout_s, struct ml_exec *ret,
                   GError **err)
{
    double deadline = ml_now() + timeout_s;
    unsigned delay_ms = 20;
    for (;;) {
        bool exited = false;
        if (!ml_agent_poll(dom, pid, &exited, ret, err))
            return false;
        if (exited)
            return true;
        /* Collecting logs after a Ctrl-C still gives up at the second one. */
        if (ml_interrupt_count() >= (interruptible ? 1u : 2u)) {
            g_set_error(err, ML_ERROR, ML_ERR_INTERRUPTED, "interrupted");
            return false;
        }
        if (ml_now() > deadline) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                        "a command in '%s' did not finish within %.0f s", domain_name(dom),
                        timeout_s);
            return false;
        }
        g_usleep(delay_ms * 1000);
        if (delay_ms < 250)
            delay_ms *= 2;
    }
}

bool ml_agent_exec(virDomainPtr dom, const char *cmd, const char *input, double timeout_s,
                   struct ml_exec *ret, GError **err)
{
    long long pid = 0;
    if (!ml_agent_spawn(dom, cmd, input, &pid, err))
        return false;
    if (ml_agent_wait(dom, pid, timeout_s, ret, err))
        return true;
    /* Commands carry no secrets (those travel on stdin), so naming one is safe. */
    if (err && *err && (*err)->code == ML_ERR_GUEST)
        g_prefix_error(err, "`%.70s%s`: ", cmd, strlen(cmd) > 70 ? "…" : "");
    return false;
}

char *ml_agent_run(virDomainPtr dom, const char *cmd, const char *input, double timeout_s,
                   GError **err)
{
    struct ml_exec ex = {0};
    if (!ml_agent_exec(dom, cmd, input, timeout_s, &ex, err))
        return NULL;
    if (ex.exit_code != 0) {
        g_autofree char *why = g_strstrip(g_strdup(*ex.err ? ex.err : ex.out));
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "in '%s', `%s` exited with status %d: %s",
                    domain_name(dom), cmd, ex.exit_code, why);
        ml_exec_clear(&ex);
        return NULL;
    }
    char *out = g_steal_pointer(&ex.out);
    ml_exec_clear(&ex);
    return out;
}

static struct json_object *file_request(const char *execute, long long handle)
{
    struct json_object *req = json_object_new_object();
    struct json_object *args = json_object_new_object();
    json_object_object_add(req, "execute", json_object_new_string(execute));
    json_object_object_add(args, "handle", json_object_new_int64(handle));
    json_object_object_add(req, "arguments", args);
    return req;
}

bool ml_agent_file_open(virDomainPtr dom, const char *path, const char *mode, long long *ret_handle,
                        GError **err)
{
    struct json_object *req = json_object_new_object();
    struct json_object *args = json_object_new_object();
    json_object_object_add(req, "execute", json_object_new_string("guest-file-open"));
    json_object_object_add(args, "path", json_object_new_string(path));
    json_object_object_add(args, "mode", json_object_new_string(mode));
    json_object_object_add(req, "arguments", args);
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, err);
    json_object_put(req);
    if (!r) {
        g_prefix_error(err, "cannot open %s: ", path);
        return false;
    }
    bool ok = json_object_is_type(r, json_type_int);
    if (ok)
        *ret_handle = json_object_get_int64(r);
    else
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "guest-file-open of %s in '%s' returned no handle",
                    path, domain_name(dom));
    json_object_put(r);
    return ok;
}

bool ml_agent_file_read_parse(struct json_object *r, GByteArray *out, size_t *ret_count,
                              GError **err)
{
    struct json_object *count = NULL, *b64 = NULL;
    if (!json_object_object_get_ex(r, "count", &count) || json_object_get_int64(count) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "guest-file-read sent a reply without 'count'");
        return false;
    }
    size_t n = (size_t)json_object_get_int64(count);
    gsize len = 0;
    g_autofree guchar *raw = NULL;
    if (json_object_object_get_ex(r, "buf-b64", &b64))
        raw = g_base64_decode(json_object_get_string(b64), &len);
    if (len != n) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "guest-file-read said %zu bytes but sent %zu", n,
                    (size_t)len);
        return false;
    }
    if (len)
        g_byte_array_append(out, raw, (guint)len);
    *ret_count = n;
    return true;
}

bool ml_agent_file_read_at(virDomainPtr dom, long long handle, long long offset, size_t count,
                           GByteArray *out, size_t *ret_count, GError **err)
{
    struct json_object *req = file_request("guest-file-seek", handle);
    struct json_object *args = json_object_object_get(req, "arguments");
    json_object_object_add(args, "offset", json_object_new_int64(offset));
    json_object_object_add(args, "whence", json_object_new_string("set"));
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, err);
    json_object_put(req);
    if (!r)
        return false;
    json_object_put(r);
    req = file_request("guest-file-read", handle);
    json_object_object_add(json_object_object_get(req, "arguments"), "count",
                           json_object_new_int64((int64_t)count));
    r = agent_call(dom, req, AGENT_TIMEOUT_S, err);
    json_object_put(req);
    if (!r)
        return false;
    bool ok = ml_agent_file_read_parse(r, out, ret_count, err);
    json_object_put(r);
    if (!ok)
        g_prefix_error(err, "in '%s': ", domain_name(dom));
    return ok;
}

bool ml_agent_file_close(virDomainPtr dom, long long handle, GError **err)
{
    struct json_object *req = file_request("guest-file-close", handle);
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, err);
    json_object_put(req);
    bool ok = r != NULL;
    json_object_put(r);
    return ok;
}

bool ml_agent_file_write(virDomainPtr dom, const char *path, const void *data, size_t len,
                         GError **err)
{
    long long handle = -1;
    if (!ml_agent_file_open(dom, path, "w", &handle, err))
        return false;
    struct json_object *req = file_request("guest-file-write", handle);
    g_autofree char *b64 = g_base64_encode(data, len);
    json_object_object_add(json_object_object_get(req, "arguments"), "buf-b64",
                           json_object_new_string(b64));
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, err);
    json_object_put(req);
    struct json_object *count = NULL;
    bool ok = r && json_object_object_get_ex(r, "count", &count) &&
              json_object_get_int64(count) == (int64_t)len;
    if (r && !ok)
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "guest-file-write of %s in '%s' wrote %lld of %zu bytes", path,
                    domain_name(dom), count ? (long long)json_object_get_int64(count) : -1LL, len);
    json_object_put(r);
    g_autoptr(GError) cerr = NULL;
    if (!ml_agent_file_close(dom, handle, ok ? err : &cerr))
        return false;
    return ok;
}

char *ml_agent_file_get(virDomainPtr dom, const char *path, size_t max, GError **err)
{
    long long handle = -1;
    if (!ml_agent_file_open(dom, path, "r", &handle, err))
        return NULL;
    g_autoptr(GByteArray) buf = g_byte_array_new();
    size_t got = 0;
    bool ok = ml_agent_file_read_at(dom, handle, 0, max, buf, &got, err);
    g_autoptr(GError) cerr = NULL;
    ml_agent_file_close(dom, handle, &cerr);
    if (!ok)
        return NULL;
    return g_strndup((const char *)buf->data, buf->len);
}
