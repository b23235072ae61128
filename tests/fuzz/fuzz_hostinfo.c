/* The hostinfo command's sections from a guest. */
#include "fuzz.h"
#include "measure/hostinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    struct json_object *info = NULL;
    g_autoptr(GError) err = NULL;
    if (ml_hostinfo_parse(text, &info, &err))
        json_object_put(info);
    else if (!err)
        __builtin_trap();
    return 0;
}
