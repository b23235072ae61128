#include "virt/agent.h"

#include <json-c/json.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

#define AGENT_TIMEOUT_S ML_AGENT_TIMEOUT_S

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

const char *ml_agent_error_text(const GError *e)
{
    return e && e->message ? e->message : "no reason was given";
}

static const char *domain_name(virDomainPtr dom)
{
    const char *n = virDomainGetName(dom);
    return n ? n : "?";
}

static const char *json_type_word(enum json_type t)
{
    switch (t) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "a boolean";
    case json_type_double:
        return "a decimal number";
    case json_type_int:
        return "an integer";
    case json_type_object:
        return "an object";
    case json_type_array:
        return "an array";
    case json_type_string:
        return "a string";
    }
    return "an unknown value";
}

struct json_object *ml_agent_reply_parse(const char *reply, size_t len, const char *execute,
                                         enum json_type want, GError **err)
{
    if (len > ML_AGENT_REPLY_MAX) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "the reply to %s is %zu bytes, more than the %d a reply may have", execute, len,
                    ML_AGENT_REPLY_MAX);
        return NULL;
    }
    struct json_tokener *tok = json_tokener_new();
    struct json_object *parsed = json_tokener_parse_ex(tok, reply, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!parsed || jerr != json_tokener_success) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the reply to %s is not JSON (%s)", execute,
                    jerr == json_tokener_continue ? "it was cut short"
                                                  : json_tokener_error_desc(jerr));
        json_object_put(parsed);
        return NULL;
    }
    while (end < len && g_ascii_isspace(reply[end]))
        end++;
    struct json_object *ret = NULL;
    const char *why = end < len                                        ? "has text after its JSON"
                      : !json_object_is_type(parsed, json_type_object) ? "is not a JSON object"
                      : !json_object_object_get_ex(parsed, "return", &ret) ? "has no 'return'"
                                                                           : NULL;
    bool ok = !why && json_object_is_type(ret, want);
    if (why)
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the reply to %s %s", execute, why);
    else if (!ok)
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the reply to %s returned %s, not %s", execute,
                    json_type_word(json_object_get_type(ret)), json_type_word(want));
    else
        json_object_get(ret);
    json_object_put(parsed);
    return ok ? ret : NULL;
}

/* The member key of a reply's object r, of type want: *ret stays NULL when it is absent and
 * optional; a member of another type, or a required one absent, fails. */
static bool member(struct json_object *r, const char *execute, const char *key, enum json_type want,
                   bool required, struct json_object **ret, GError **err)
{
    *ret = NULL;
    struct json_object *v = NULL;
    if (!json_object_is_type(r, json_type_object)) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the reply to %s returned %s, not an object",
                    execute, json_type_word(json_object_get_type(r)));
        return false;
    }
    if (!json_object_object_get_ex(r, key, &v)) {
        if (required)
            g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the reply to %s has no '%s'", execute, key);
        return !required;
    }
    if (!json_object_is_type(v, want)) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the reply to %s has %s as '%s', not %s", execute,
                    json_type_word(json_object_get_type(v)), key, json_type_word(want));
        return false;
    }
    *ret = v;
    return true;
}

/* Sends cmd and returns its "return" value, which has type want; NULL with err set for any other
 * answer, so a caller never sees a value it did not ask for. */
/* MESHLAB_TRACE_AGENT=FILE: every agent call, its guest, what it ran and how long the answer
 * took, a line each, for finding where a pass's seconds go (docs/performance.md). */
static void trace(virDomainPtr dom, const char *name, struct json_object *cmd, double t0)
{
    static FILE *f;
    static gsize once;
    if (g_once_init_enter(&once)) {
        const char *path = getenv("MESHLAB_TRACE_AGENT");
        f = path && *path ? fopen(path, "a") : (FILE *)NULL;
        g_once_init_leave(&once, 1);
    }
    if (!f)
        return;
    struct json_object *args = NULL, *path = NULL;
    json_object_object_get_ex(cmd, "arguments", &args);
    json_object_object_get_ex(args, "arg", &path);
    const char *what = path ? json_object_get_string(json_object_array_get_idx(path, 1)) : "";
    fprintf(f, "%.3f %.3f %s %s %.120s\n", t0, ml_now() - t0, domain_name(dom), name,
            what ? what : "");
    fflush(f);
}

static struct json_object *agent_call(virDomainPtr dom, struct json_object *cmd, int timeout,
                                      enum json_type want, GError **err)
{
    const char *text = json_object_to_json_string_ext(cmd, JSON_C_TO_STRING_PLAIN);
    struct json_object *execute = NULL;
    json_object_object_get_ex(cmd, "execute", &execute);
    const char *name = json_object_get_string(execute);
    double t0 = ml_now();
    char *reply = virDomainQemuAgentCommand(dom, text, timeout, 0);
    trace(dom, name, cmd, t0);
    if (!reply) {
        const char *msg = virGetLastErrorMessage();
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "guest agent of '%s' did not answer: %s",
                    domain_name(dom), msg ? msg : "unknown error");
        return NULL;
    }
    struct json_object *ret = ml_agent_reply_parse(reply, strlen(reply), name, want, err);
    free(reply);
    if (!ret)
        g_prefix_error(err, "guest agent of '%s': ", domain_name(dom));
    return ret;
}

bool ml_agent_bound(virDomainPtr dom, GError **err)
{
    if (virDomainAgentSetResponseTimeout(dom, ML_AGENT_TIMEOUT_S, 0) == 0)
        return true;
    virErrorPtr e = virGetLastError();
    if (e && e->code == VIR_ERR_NO_SUPPORT) {
        virResetLastError();
        return true;
    }
    const char *m = virGetLastErrorMessage();
    g_set_error(err, ML_ERROR, ML_ERR_LIBVIRT,
                "cannot bound the guest agent's answers from '%s' to %d s (%s), so a silent "
                "agent would hang meshlab; is the guest running?",
                domain_name(dom), ML_AGENT_TIMEOUT_S, m ? m : "unknown error");
    return false;
}

bool ml_agent_ping(virDomainPtr dom, int timeout_s)
{
    struct json_object *cmd = json_object_new_object();
    json_object_object_add(cmd, "execute", json_object_new_string("guest-ping"));
    struct json_object *r = agent_call(dom, cmd, timeout_s, json_type_object, NULL);
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
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, json_type_object, err);
    json_object_put(req);
    if (!r)
        return false;
    struct json_object *pid = NULL;
    bool ok = member(r, "guest-exec", "pid", json_type_int, true, &pid, err);
    if (ok && json_object_get_int64(pid) <= 0) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the reply to guest-exec has pid %lld",
                    (long long)json_object_get_int64(pid));
        ok = false;
    }
    if (ok)
        *ret_pid = json_object_get_int64(pid);
    else
        g_prefix_error(err, "in '%s': ", domain_name(dom));
    json_object_put(r);
    return ok;
}

static char *decode_field(struct json_object *v)
{
    if (!v)
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
    static const char ex[] = "guest-exec-status";
    struct json_object *exited = NULL;
    *ret_exited = false;
    if (!member(r, ex, "exited", json_type_boolean, true, &exited, err))
        return false;
    if (!json_object_get_boolean(exited))
        return true;
    /* qemu-ga keeps at most 16 MiB of each stream and says so; a short answer
     * taken for the whole one would be a wrong measurement or a wrong key. */
    static const char *const truncated[] = {"out-truncated", "err-truncated"};
    for (size_t i = 0; i < G_N_ELEMENTS(truncated); i++) {
        struct json_object *t = NULL;
        if (!member(r, ex, truncated[i], json_type_boolean, false, &t, err))
            return false;
        if (t && json_object_get_boolean(t)) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                        "the guest agent cut the command's %s short (%s); make the command "
                        "print less, or write to a file in the guest and read that",
                        i == 0 ? "output" : "error output", truncated[i]);
            return false;
        }
    }
    struct json_object *code = NULL, *sig = NULL, *out = NULL, *errd = NULL;
    if (!member(r, ex, "exitcode", json_type_int, false, &code, err) ||
        !member(r, ex, "signal", json_type_int, false, &sig, err) ||
        !member(r, ex, "out-data", json_type_string, false, &out, err) ||
        !member(r, ex, "err-data", json_type_string, false, &errd, err))
        return false;
    int64_t c = code ? json_object_get_int64(code) : -1;
    int64_t n = sig ? json_object_get_int64(sig) : 0;
    if (c < -1 || c > 255 || n < 0 || n > 128) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "the reply to %s has exit code %lld and signal %lld: no process ends so", ex,
                    (long long)c, (long long)n);
        return false;
    }
    memset(ret, 0, sizeof(*ret));
    ret->exit_code = (int)c;
    ret->signal = (int)n;
    ret->out = decode_field(out);
    ret->err = decode_field(errd);
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
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, json_type_object, err);
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

/* A line no command's output holds: the end of one command's section. */
#define EACH_MARK "@@meshlab-section-end@@"

char *ml_agent_each_script(const char *const *cmds, size_t n)
{
    GString *s = g_string_new(NULL);
    /* $(...) drops the trailing newlines, printf puts one back: the mark starts its own line
     * whatever the command printed. A command's failure stops the script with its status. */
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(s,
                               "o=$(%s) || exit $?; [ -z \"$o\" ] || printf '%%s\\n' \"$o\"; "
                               "echo " EACH_MARK "; ",
                               cmds[i]);
    return g_string_free(s, FALSE);
}

bool ml_agent_each_split(const char *out, size_t n, char **ret)
{
    for (size_t i = 0; i < n; i++)
        ret[i] = NULL;
    const char *p = out ? out : "";
    for (size_t i = 0; i < n; i++) {
        const char *m = strstr(p, EACH_MARK "\n");
        if (!m || (m != p && m[-1] != '\n')) {
            for (size_t j = 0; j < i; j++)
                g_clear_pointer(&ret[j], g_free);
            return false;
        }
        ret[i] = g_strndup(p, (gsize)(m - p));
        p = m + strlen(EACH_MARK "\n");
    }
    return true;
}

bool ml_agent_run_each(virDomainPtr dom, const char *const *cmds, size_t n, double timeout_s,
                       char **ret, GError **err)
{
    g_autofree char *script = ml_agent_each_script(cmds, n);
    g_autofree char *out = ml_agent_run(dom, script, NULL, timeout_s, err);
    if (!out) {
        for (size_t i = 0; i < n; i++)
            ret[i] = NULL;
        return false;
    }
    if (!ml_agent_each_split(out, n, ret)) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "in '%s', the output of %zu commands run together did not hold their %zu "
                    "sections: \"%.200s\"",
                    domain_name(dom), n, n, out);
        return false;
    }
    return true;
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
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, json_type_int, err);
    json_object_put(req);
    if (!r) {
        g_prefix_error(err, "cannot open %s: ", path);
        return false;
    }
    bool ok = json_object_get_int64(r) >= 0;
    if (ok)
        *ret_handle = json_object_get_int64(r);
    else
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "guest-file-open of %s in '%s' returned the handle %lld", path,
                    domain_name(dom), (long long)json_object_get_int64(r));
    json_object_put(r);
    return ok;
}

bool ml_agent_file_read_parse(struct json_object *r, size_t asked, GByteArray *out,
                              size_t *ret_count, GError **err)
{
    static const char ex[] = "guest-file-read";
    struct json_object *count = NULL, *b64 = NULL, *eof = NULL;
    if (!member(r, ex, "count", json_type_int, true, &count, err) ||
        !member(r, ex, "buf-b64", json_type_string, false, &b64, err) ||
        !member(r, ex, "eof", json_type_boolean, false, &eof, err))
        return false;
    int64_t said = json_object_get_int64(count);
    if (said < 0 || (uint64_t)said > asked) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "guest-file-read said %lld bytes when at most %zu were asked for",
                    (long long)said, asked);
        return false;
    }
    size_t n = (size_t)said;
    gsize len = 0;
    g_autofree guchar *raw = NULL;
    if (b64)
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
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, json_type_object, err);
    json_object_put(req);
    if (!r)
        return false;
    json_object_put(r);
    /* guest-file-read's count is an int; a larger one is refused by qemu-ga. */
    count = MIN(count, (size_t)ML_AGENT_READ_MAX);
    req = file_request("guest-file-read", handle);
    json_object_object_add(json_object_object_get(req, "arguments"), "count",
                           json_object_new_int64((int64_t)count));
    r = agent_call(dom, req, AGENT_TIMEOUT_S, json_type_object, err);
    json_object_put(req);
    if (!r)
        return false;
    bool ok = ml_agent_file_read_parse(r, count, out, ret_count, err);
    json_object_put(r);
    if (!ok)
        g_prefix_error(err, "in '%s': ", domain_name(dom));
    return ok;
}

bool ml_agent_file_close(virDomainPtr dom, long long handle, GError **err)
{
    struct json_object *req = file_request("guest-file-close", handle);
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, json_type_object, err);
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
    struct json_object *r = agent_call(dom, req, AGENT_TIMEOUT_S, json_type_object, err);
    json_object_put(req);
    struct json_object *count = NULL;
    bool ok = r && member(r, "guest-file-write", "count", json_type_int, true, &count, err) &&
              json_object_get_int64(count) == (int64_t)len;
    if (count && !ok)
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
