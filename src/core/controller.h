/* The controller: this machine and its state directory, the meshlab that makes a lab's libvirt
 * objects and the only one that removes them unless told otherwise (down --foreign). Two
 * machines, or two state directories on one, are two controllers, even for labs of one name on
 * one shared libvirt host. Every domain, network and storage pool a lab makes carries the
 * controller in its UUID (and a domain also in its metadata, with words that say whose it is). */
#pragma once

#include <glib.h>
#include <stdbool.h>

#define ML_CONTROLLER_ID_LEN 12 /* hex digits: the first 48 bits of its SHA-256 */

/* This controller's id: the SHA-256 of the machine's id (/etc/machine-id, else
 * /var/lib/dbus/machine-id, else its host name) and the state directory's absolute path. */
const char *ml_controller_id(void);
/* Who this controller is, in words for another controller's messages: "meshlab on HOST, state
 * directory DIR". */
const char *ml_controller_words(void);

/* The UUID of this controller's object what ("network meshlab-LAB", ...): a UUID of version 8
 * whose first 48 bits are the controller's id and whose rest comes from what, so the same object
 * gets the same UUID in every run (a saved guest restores only into its own UUID). */
void ml_controller_uuid(const char *what, char ret[37]);
/* The controller id a UUID (as libvirt formats it) carries; false when it carries none (not of
 * version 8: made by hand, or by a meshlab before controllers). */
bool ml_controller_of_uuid(const char *uuid, char ret_id[ML_CONTROLLER_ID_LEN + 1]);
/* Whether uuid is this controller's. */
bool ml_controller_owns(const char *uuid);
