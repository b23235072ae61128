#!/bin/sh
# Written by meshlab: trust the lab CA (tailscaled's TLS reads the system store) and
# resolve headscale.lab to the hub.
set -eu
cat > /usr/local/share/ca-certificates/meshlab-lab-ca.crt <<'MESHLAB_CA'
-----BEGIN CERTIFICATE-----
MIIBdzCCAR2gAwIBAgIUTESTONLYTESTONLYTESTONLYTESTONLYwCgYIKoZIzj0
-----END CERTIFICATE-----
MESHLAB_CA
chmod 0644 /usr/local/share/ca-certificates/meshlab-lab-ca.crt
update-ca-certificates >/dev/null
sed -i '/[[:space:]]headscale\.lab$/d' /etc/hosts
printf '%s\t%s\n' 192.0.2.10 headscale.lab >> /etc/hosts
