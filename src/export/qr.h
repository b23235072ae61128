/* A client's config as a QR code, for WireGuard's phone apps ("Add a tunnel", "Scan from QR
 * code"): libqrencode makes the symbol, libpng writes it as a PNG, and the same symbol is drawn
 * as text for a terminal. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* The symbol of text (8-bit mode, error correction L, the smallest version that holds it):
 * *ret_width modules a side, ret_modules[y * width + x] true for a dark module. False with
 * err when text does not fit a QR code. */
bool ml_qr_encode(const char *text, unsigned *ret_width, GByteArray **ret_modules, GError **err);
/* A PNG of text's symbol, scale pixels a module, with the 4-module quiet zone the standard asks
 * for: black on white, 8-bit greyscale. */
GByteArray *ml_qr_png(const char *text, unsigned scale, GError **err);
/* The symbol as UTF-8 text, two modules a character cell (upper and lower half blocks), light
 * modules drawn: for a terminal with light text on a dark background, as `qrencode -t UTF8`. */
char *ml_qr_text(const char *text, GError **err);
