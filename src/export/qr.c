#include "export/qr.h"

#include <png.h>
#include <qrencode.h>
#include <string.h>

#include "core/util.h"

#define QUIET 4

bool ml_qr_encode(const char *text, unsigned *ret_width, GByteArray **ret_modules, GError **err)
{
    QRcode *q = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_L);
    if (!q) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "libqrencode could not encode %zu bytes as one QR code: %s", strlen(text),
                    g_strerror(errno));
        return false;
    }
    unsigned w = (unsigned)q->width;
    GByteArray *m = g_byte_array_sized_new(w * w);
    for (unsigned i = 0; i < w * w; i++) {
        guint8 dark = q->data[i] & 1; /* bit 0: dark module (qrencode.h) */
        g_byte_array_append(m, &dark, 1);
    }
    QRcode_free(q);
    *ret_width = w;
    *ret_modules = m;
    return true;
}

static void png_to_array(png_structp png, png_bytep data, png_size_t len)
{
    g_byte_array_append(png_get_io_ptr(png), data, (guint)len);
}

static void png_no_flush(png_structp png)
{
    (void)png;
}

GByteArray *ml_qr_png(const char *text, unsigned scale, GError **err)
{
    unsigned w;
    g_autoptr(GByteArray) m = NULL;
    if (!ml_qr_encode(text, &w, &m, err))
        return NULL;
    unsigned side = (w + 2 * QUIET) * scale;
    GByteArray *out = g_byte_array_new();
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    g_autofree png_bytep row = g_malloc(side);
    if (!png || !info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        g_byte_array_unref(out);
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "libpng could not write the QR code's PNG");
        return NULL;
    }
    png_set_write_fn(png, out, png_to_array, png_no_flush);
    png_set_IHDR(png, info, side, side, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (unsigned y = 0; y < side; y++) {
        int my = (int)(y / scale) - QUIET;
        for (unsigned x = 0; x < side; x++) {
            int mx = (int)(x / scale) - QUIET;
            bool dark = my >= 0 && mx >= 0 && (unsigned)my < w && (unsigned)mx < w &&
                        m->data[(unsigned)my * w + (unsigned)mx];
            row[x] = dark ? 0 : 255;
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return out;
}

char *ml_qr_text(const char *text, GError **err)
{
    unsigned w;
    g_autoptr(GByteArray) m = NULL;
    if (!ml_qr_encode(text, &w, &m, err))
        return NULL;
    int side = (int)w + 2 * QUIET;
    GString *s = g_string_new(NULL);
    for (int y = 0; y < side; y += 2) {
        for (int x = 0; x < side; x++) {
            bool light[2];
            for (int k = 0; k < 2; k++) {
                int my = y + k - QUIET, mx = x - QUIET;
                bool in = my >= 0 && mx >= 0 && my < (int)w && mx < (int)w;
                /* Past the bottom edge of an odd side is the terminal's own dark background. */
                light[k] = y + k < side && !(in && m->data[my * (int)w + mx]);
            }
            g_string_append(s, light[0] && light[1] ? "\u2588"
                               : light[0]           ? "\u2580"
                               : light[1]           ? "\u2584"
                                                    : " ");
        }
        g_string_append_c(s, '\n');
    }
    return g_string_free(s, FALSE);
}
