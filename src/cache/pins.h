/* The versions of the third-party programs the guests run, one pin for every way they are
 * obtained (the publishers' downloads and the builds from images/go, whose go.mod requires the
 * same): the newest that the Go module proxy serves and Go 1.26 builds (docs/tailscale.md). */
#pragma once

#define ML_TAILSCALE_VERSION "1.102.5"
#define ML_HEADSCALE_VERSION "0.29.3"
