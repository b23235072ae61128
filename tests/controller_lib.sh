# Sourced by the command-line tests that define libvirt objects by hand as meshlab would make
# them: controller_uuid ID WHAT prints the UUID of controller ID's object WHAT ("meshlab network
# NAME", "meshlab pool NAME", "meshlab domain NAME"), as src/core/controller.c makes it: version 8,
# the controller's 48 bits first, the rest from the SHA-256 of WHAT. The tests read ID from
# 'meshlab status --json' (controller.id).
controller_uuid() {
    python3 - "$1" "$2" <<'PY'
import hashlib, sys
cid, what = sys.argv[1], sys.argv[2]
h = hashlib.sha256(what.encode()).hexdigest()
variant = "89ab"[int(h[16], 16) & 3]
print(f"{cid[:8]}-{cid[8:12]}-8{h[12:15]}-{variant}{h[17:20]}-{h[20:32]}")
PY
}
