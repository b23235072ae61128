/* The SHA-256 hex check and the checksum-list lookup that fetch.c, artifacts.c,
 * image_ubuntu.c and apt_verify.c share. */
#include "check.h"

#include "cache/checksum.h"

#define H_A "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define H_B "60303AE22B998861BCE3B28F33EEC1BE758A213C86C93C076DBE9F558C11C752"
#define H_B_LOW "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"

static void test_hex(void)
{
    CHECK(ml_sha256_hex_valid(H_A));
    CHECK(ml_sha256_hex_valid(H_B));
    CHECK(!ml_sha256_hex_valid(H_A "0")); /* 65 digits */
    CHECK(!ml_sha256_hex_valid(H_A " ")); /* trailing space */
    CHECK(!ml_sha256_hex_valid(""));
    CHECK(!ml_sha256_hex_valid(NULL));
    /* 63 digits and a 'g': the right length, not hex. */
    CHECK(!ml_sha256_hex_valid("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0g"));
    CHECK(ml_sha256_hex_prefix(H_A "  name"));
    CHECK(!ml_sha256_hex_prefix(H_A "0  name"));
}

static void test_list_lookup(void)
{
    const char *list = "# a comment\n" H_A "  other.tar.gz\r\n"
        /* A longer hash whose first 64 digits look right: not a SHA-256. */
        H_A "ff  image.img\n"
                       "  " H_B " *image.img  \n" H_A "x image.img\n" H_A "  image.img.bak\n";
    char *h = ml_sha256_list_lookup(list, "image.img");
    CHECK_STR(h, H_B_LOW);
    g_free(h);
    h = ml_sha256_list_lookup(list, "other.tar.gz");
    CHECK_STR(h, H_A);
    g_free(h);
    CHECK(ml_sha256_list_lookup(list, "image") == NULL);
    CHECK(ml_sha256_list_lookup(list, "") == NULL);
    CHECK(ml_sha256_list_lookup(NULL, "image.img") == NULL);
    /* A FILE.sha256 holding the bare hash: found when no name is asked for. */
    h = ml_sha256_list_lookup(H_B "\n", NULL);
    CHECK_STR(h, H_B_LOW);
    g_free(h);
    CHECK(ml_sha256_list_lookup(H_B "\n", "image.img") == NULL);
    /* The known-hashes record keys by URL. */
    h = ml_sha256_list_lookup(H_A " https://example.org/a?b=c\n", "https://example.org/a?b=c");
    CHECK_STR(h, H_A);
    g_free(h);
}

int main(void)
{
    test_hex();
    test_list_lookup();
    return check_finish();
}
