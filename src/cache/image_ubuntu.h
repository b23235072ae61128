/* The Ubuntu 24.04 base image: pinned in images/ubuntu-24.04.conf, downloaded and verified into
 * the cache, then customised once with libguestfs so guests boot without any network. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#define ML_IMAGE_UBUNTU_NAME "ubuntu-24.04"

/* Ensures the customised Ubuntu base is in cache_dir and sets *ret_qcow2 to its path
 * (cache_dir/ubuntu-24.04-<key>.qcow2). With allow_network false only cached downloads are used;
 * if one is missing it fails with ML_ERR_IMAGE naming the missing files and the command that
 * fetches them. force_tcg makes libguestfs run its appliance without KVM (pass true when
 * /dev/kvm does not work; the caller knows, this module does not probe the host). */
bool ml_image_ubuntu_prepare(const char *cache_dir, bool allow_network, bool force_tcg,
                             char **ret_qcow2, GError **err);

/* Downloads and verifies the cloud image and packages into cache_dir/downloads, without
 * customising: for filling a cache on a networked host that will be carried elsewhere. */
bool ml_image_ubuntu_download(const char *cache_dir, GError **err);

/* Checks the cached packages the way apt would before installing them: the archive's InRelease
 * signed by a key in keyring, the Packages indexes listed in it, the packages listed in those.
 * The image build runs this with the keyring read out of the verified cloud image; tests pass
 * their own. A file that fails is deleted. Errors: ML_ERR_FETCH, ML_ERR_HOST without gpgv. */
bool ml_image_ubuntu_verify_packages(const char *cache_dir, const char *keyring, GError **err);

/* The directory holding the image catalogue (*.conf): $MESHLAB_IMAGES_DIR, else
 * ml_data_dir("images"): $MESHLAB_DATA_DIR/images, the source tree's, the installed one. */
char *ml_image_catalogue_dir(void);
