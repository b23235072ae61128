# meshlab lab dataplanes: client-a, ipsec-hub; public keys only
umask 022
mkdir -p /etc/swanctl/pubkey /etc/swanctl/conf.d
cat > /etc/swanctl/pubkey/hub.pem <<'EOF'
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAAAAAAAAAAAAAAAAAAAAAAAAAAAA
AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==
-----END PUBLIC KEY-----
EOF
cat > /etc/swanctl/pubkey/client-a.pem <<'EOF'
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAAAAAAAAAAAAAAAAAAAAAAAAAAAA
AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==
-----END PUBLIC KEY-----
EOF
cat > /etc/swanctl/conf.d/meshlab.conf <<'EOF'
# meshlab lab dataplanes: client-a, ipsec-hub
connections {
    hub {
        version = 2
        local_addrs = 192.0.2.11
        remote_addrs = 192.0.2.10
        encap = yes
        proposals = aes256gcm16-prfsha256-ecp256
        if_id_in = 1
        if_id_out = 1
        dpd_delay = 30s
        keyingtries = 0
        local {
            auth = pubkey
            id = client-a
            pubkeys = client-a.pem
        }
        remote {
            auth = pubkey
            id = hub
            pubkeys = hub.pem
        }
        children {
            hub {
                local_ts = 10.46.0.2/32
                remote_ts = 10.46.0.0/24
                esp_proposals = aes256gcm16
                mode = tunnel
                dpd_action = restart
                start_action = start
            }
        }
    }
}
EOF
cat > /etc/strongswan.d/meshlab.conf <<'EOF'
# meshlab ipsec-hub: ipsec0's connected route is the only route
charon {
    install_routes = no
}
EOF
ip link del ipsec0 2>/dev/null || true
ip link add ipsec0 mtu 1438 type xfrm dev eth0 if_id 1
ip addr add 10.46.0.2/24 dev ipsec0
ip link set ipsec0 up
