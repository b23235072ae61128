#!/bin/sh
# Written by meshlab: the lab CA where tailscaled alone looks for it (its SSL_CERT_DIR;
# the system's trust store is left alone), and headscale.lab resolved to the hub.
set -eu
mkdir -p /etc/meshlab/headscale-ca
cat > /etc/meshlab/headscale-ca/meshlab-lab-ca.crt <<'MESHLAB_CA'
-----BEGIN CERTIFICATE-----
MIIBdzCCAR2gAwIBAgIUTESTONLYTESTONLYTESTONLYTESTONLYwCgYIKoZIzj0
-----END CERTIFICATE-----
MESHLAB_CA
chmod 0644 /etc/meshlab/headscale-ca/meshlab-lab-ca.crt
sed -i '/[[:space:]]headscale\.lab$/d' /etc/hosts
printf '%s\t%s\n' 192.0.2.10 headscale.lab >> /etc/hosts
