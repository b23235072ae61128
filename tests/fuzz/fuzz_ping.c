/* ping's output from a guest (iputils or BusyBox). */
#include "fuzz.h"
#include "measure/parse_ping.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    struct ml_ping_result r;
    g_autoptr(GError) err = NULL;
    if (!ml_ping_parse(text, &r, &err) && !err)
        __builtin_trap();
    /* What a deadline cut off can never be more than what was sent and went unanswered. */
    unsigned sent = err ? 0 : r.transmitted;
    if (ml_ping_cut_off(text, sent, 0.05) > sent)
        __builtin_trap();
    GArray *rtts = ml_ping_rtts(text);
    if (rtts)
        g_array_unref(rtts);
    return 0;
}
