/* Shared by the libFuzzer targets here: each reads one input and hands it to one parser, as
 * wireguard-tools' src/fuzz/ does. A crash, a leak, or undefined behaviour is a finding. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (it may hold NULs itself; parsers see the first part). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    return g_strndup((const char *)data, size);
}

/* Splits the input at NUL bytes into at most n strings; the missing ones are "". Returns how
 * many there were. Free each with g_free. */
static inline size_t fuzz_split(const uint8_t *data, size_t size, char **parts, size_t n)
{
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= size && k < n; i++) {
        if (i == size || (data[i] == 0 && k + 1 < n)) {
            parts[k++] = g_strndup((const char *)data + start, i - start);
            start = i + 1;
        }
    }
    for (size_t i = k; i < n; i++)
        parts[i] = g_strdup("");
    return k;
}
