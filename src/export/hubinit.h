/* The hub VPS's one cloud-init user-data file, to paste into a provider's "user data" field:
 * it writes every file the bundle gives the hub (with its mode), the firewall and the sysctls,
 * and one setup script that installs only the packages whose commands are missing, applies
 * them, and starts the dataplanes. Checked after it is made: the text is parsed back as YAML
 * and each file must come out byte for byte. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "dataplanes/bundle.h"

/* Where the user-data puts the firewall, the sysctls and the setup script on the hub. */
#define ML_HUBINIT_FIREWALL "/etc/meshlab/hub.nft"
#define ML_HUBINIT_SYSCTL "/etc/sysctl.d/99-meshlab.conf"
#define ML_HUBINIT_SCRIPT "/usr/local/sbin/meshlab-hub-setup"
#define ML_HUBINIT_LOG "/var/log/meshlab-hub-setup.log"

/* The user-data of b's hub with firewall (an nft script; NULL: none) loaded at every boot. */
char *ml_hubinit_render(const struct ml_bundle *b, const char *firewall);
/* Parses user_data back and checks that it is a #cloud-config whose write_files hold exactly
 * the files of b's hub, the firewall and the script, each with its content and mode; err names
 * the first that differs. */
bool ml_hubinit_check(const struct ml_bundle *b, const char *firewall, const char *user_data,
                      GError **err);
