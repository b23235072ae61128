#!/bin/sh
# Written by meshlab: a CA made for this lab only, that vouches for headscale.lab and 192.0.2.10
# alone, and a certificate for them signed by it. The CA key stays here (0600, root);
# only the CA certificate is printed.
set -eu
umask 077
mkdir -p /etc/headscale/tls
cd /etc/headscale/tls
if [ ! -s ca.key ] || [ ! -s ca.crt ] ||
        ! openssl x509 -in ca.crt -noout -ext nameConstraints | grep -q Permitted; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout ca.key -out ca.crt -days 30 -subj '/CN=meshlab lab CA' \
        -addext 'basicConstraints=critical,CA:TRUE,pathlen:0' \
        -addext 'keyUsage=critical,keyCertSign,cRLSign' \
        -addext 'nameConstraints=critical,permitted;DNS:headscale.lab,permitted;IP:192.0.2.10/255.255.255.255'
fi
cat > server.ext <<'MESHLAB_EXT'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:headscale.lab,IP:192.0.2.10
MESHLAB_EXT
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout server.key -out server.csr -subj '/CN=headscale.lab'
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
    -extfile server.ext -out server.crt
rm -f server.csr server.ext
chmod 0600 ca.key server.key
chmod 0644 ca.crt server.crt
# The Debian package runs headscale as its own user, which must read its key.
if id headscale >/dev/null 2>&1; then
    chown headscale: server.key server.crt
fi
cat ca.crt
