/* A minimal test harness: each test program counts its checks and ends with
 * the plain "N passed, N failed" line; exit status is non-zero on any failure. */
#pragma once

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (cond) {                                                                           \
            check_passed++;                                                                   \
        } else {                                                                              \
            check_failed++;                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);          \
        }                                                                                     \
    } while (0)

#define CHECK_STR(a, b)                                                                       \
    do {                                                                                      \
        const char *check_a_ = (a), *check_b_ = (b);                                          \
        if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0) {                        \
            check_passed++;                                                                   \
        } else {                                                                              \
            check_failed++;                                                                   \
            fprintf(stderr, "%s:%d: expected \"%s\"\n%*sgot      \"%s\"\n", __FILE__, __LINE__, \
                    check_b_ ? check_b_ : "(null)", (int)strlen(__FILE__) + 8, "",          \
                    check_a_ ? check_a_ : "(null)");                                          \
        }                                                                                     \
    } while (0)

static inline int check_finish(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#include <glib.h>
#include <stdlib.h>

/* Compares generated text with tests/golden/NAME; MESHLAB_UPDATE_GOLDEN=1 rewrites it. */
static inline void check_golden(const char *name, const char *text)
{
    char *path = g_build_filename("tests", "golden", name, NULL);
    const char *update = getenv("MESHLAB_UPDATE_GOLDEN");
    if (update && *update == '1') {
        g_file_set_contents(path, text, -1, NULL);
        check_passed++;
        g_free(path);
        return;
    }
    char *want = NULL;
    if (!g_file_get_contents(path, &want, NULL, NULL)) {
        check_failed++;
        fprintf(stderr, "golden file %s is missing (MESHLAB_UPDATE_GOLDEN=1 writes it)\n", path);
    } else if (strcmp(want, text) != 0) {
        check_failed++;
        fprintf(stderr, "%s differs from generated text:\n--- generated\n%s\n--- end\n", path, text);
    } else {
        check_passed++;
    }
    g_free(want);
    g_free(path);
}
