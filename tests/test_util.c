/* The small shared helpers of core/util: paths in the state directory and the
 * tail of a command's or a console's output. */
#include "check.h"

#include <glib/gstdio.h>

#include "cache/image_ubuntu.h"
#include "core/util.h"

static void test_last_lines(void)
{
    g_autofree char *two = ml_last_lines("one\ntwo\nthree\n\n", 2);
    CHECK_STR(two, "two\nthree");
    /* Fewer lines than asked: all of them, without the surrounding blanks. */
    g_autofree char *all = ml_last_lines("\n  only\n", 5);
    CHECK_STR(all, "only");
    g_autofree char *none = ml_last_lines(NULL, 3);
    CHECK_STR(none, "");
    g_autofree char *zero = ml_last_lines("a\nb", 0);
    CHECK_STR(zero, "");
    /* No line starts with the newline that ended the one before it. */
    g_autofree char *one = ml_last_lines("panic\nend Kernel panic", 1);
    CHECK_STR(one, "end Kernel panic");
}

static void test_state_paths(void)
{
    g_setenv("MESHLAB_STATE_DIR", "/tmp/ml-state", TRUE);
    g_autofree char *state = ml_lab_state_path("three-guest", ".json");
    CHECK_STR(state, "/tmp/ml-state/labs/three-guest.json");
    g_autofree char *lock = ml_lab_state_path("three-guest", ".lock");
    CHECK_STR(lock, "/tmp/ml-state/labs/three-guest.lock");
    g_autofree char *pool = ml_lab_pool_dir("three-guest");
    CHECK_STR(pool, "/tmp/ml-state/pools/three-guest");
    g_unsetenv("MESHLAB_STATE_DIR");
}

/* The image catalogue is found by the same search as every other data directory. */
static void test_data_dirs(void)
{
    g_autofree char *root = g_dir_make_tmp("ml-data-XXXXXX", NULL);
    g_autofree char *images = g_build_filename(root, "images", NULL);
    CHECK(g_mkdir(images, 0700) == 0);
    g_setenv("MESHLAB_DATA_DIR", root, TRUE);
    g_autofree char *data = ml_data_dir("images");
    CHECK_STR(data, images);
    g_autofree char *catalogue = ml_image_catalogue_dir();
    CHECK_STR(catalogue, images);
    g_setenv("MESHLAB_IMAGES_DIR", "/elsewhere", TRUE);
    g_autofree char *pinned = ml_image_catalogue_dir();
    CHECK_STR(pinned, "/elsewhere");
    g_unsetenv("MESHLAB_IMAGES_DIR");
    /* A root without the directory is passed over for the source tree's. */
    CHECK(g_rmdir(images) == 0);
    g_autofree char *fallback = ml_image_catalogue_dir();
    CHECK_STR(fallback, MESHLAB_SOURCE_DIR "/images");
    g_unsetenv("MESHLAB_DATA_DIR");
    g_rmdir(root);
}

/* A list reads as a sentence: one word, two with the conjunction, three with commas. */
static void test_words_joined(void)
{
    g_autoptr(GPtrArray) w = g_ptr_array_new();
    g_autofree char *none = ml_words_joined(w, "and");
    CHECK_STR(none, "");
    g_ptr_array_add(w, "nebula");
    g_autofree char *one = ml_words_joined(w, "and");
    CHECK_STR(one, "nebula");
    g_ptr_array_add(w, "tailscale");
    g_autofree char *two = ml_words_joined(w, "or");
    CHECK_STR(two, "nebula or tailscale");
    g_ptr_array_add(w, "tinc");
    g_autofree char *three = ml_words_joined(w, "and");
    CHECK_STR(three, "nebula, tailscale and tinc");
}

int main(void)
{
    test_words_joined();
    test_data_dirs();
    test_last_lines();
    test_state_paths();
    return check_finish();
}
