/* The guest agent's replies, as libvirt hands them over: the reply text, then what
 * guest-exec-status and guest-file-read make of its value. The first byte picks the type the call
 * wants. */
#include "fuzz.h"
#include "virt/agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const enum json_type want[] = {json_type_object, json_type_int, json_type_array,
                                          json_type_string};
    g_autoptr(GError) err = NULL;
    struct json_object *r = ml_agent_reply_parse((const char *)data + 1, size - 1, "guest-fuzz",
                                                 want[data[0] % G_N_ELEMENTS(want)], &err);
    if (!r) {
        if (!err)
            __builtin_trap();
        return 0;
    }
    if (err)
        __builtin_trap();
    bool exited = false;
    struct ml_exec ex = {0};
    g_autoptr(GError) e1 = NULL, e2 = NULL;
    if (ml_agent_exec_status_parse(r, &exited, &ex, &e1)) {
        if (exited && (!ex.out || !ex.err))
            __builtin_trap();
    } else if (!e1) {
        __builtin_trap();
    }
    ml_exec_clear(&ex);
    g_autoptr(GByteArray) out = g_byte_array_new();
    size_t n = 0;
    if (ml_agent_file_read_parse(r, 4096, out, &n, &e2)) {
        if (n > 4096 || out->len != n)
            __builtin_trap();
    } else if (!e2) {
        __builtin_trap();
    }
    json_object_put(r);
    return 0;
}
