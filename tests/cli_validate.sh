#!/usr/bin/env bash
# `meshlab validate` against the shipped lab and every bad topology in tests/data/bad/: the
# command layer prints "meshlab: <message>" on stderr, nothing on stdout, and exits 2.
set -u

if [[ -z "${MESHLAB_BIN:-}" || ! -x "${MESHLAB_BIN}" ]]; then
    echo "skip: MESHLAB_BIN (${MESHLAB_BIN:-unset}) is not an executable"
    exit 77
fi

passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { passed=$((passed + 1)); }
bad() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}

# Runs validate on $1, leaving the status in $rc and the output in $tmp/out and $tmp/err.
validate() {
    "$MESHLAB_BIN" validate "$1" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# Every shipped topology, and the NAT lab the e2e test runs, is valid as it stands.
for good in topologies/*.yaml tests/data/e2e-nat.yaml; do
    validate "$good"
    if [[ $rc -eq 0 ]]; then
        ok
    else
        bad "validate $good exited $rc: $(cat "$tmp/err")"
    fi
done

shopt -s nullglob
cases=(tests/data/bad/*.yaml)
if [[ ${#cases[@]} -ge 20 ]]; then
    ok
else
    bad "only ${#cases[@]} bad topologies in tests/data/bad"
fi
# An expected message that lists every path says @PATHS@: the list validate --help prints.
paths=$("$MESHLAB_BIN" validate --help | sed -n 's/^Paths: //p')
[[ "$paths" == plain,* ]] && ok || bad "validate --help lists no paths: '$paths'"
for f in "${cases[@]}"; do
    want="meshlab: $(cat "${f%.yaml}.expected")"
    want=${want//@PATHS@/$paths}
    validate "$f"
    if [[ $rc -ne 2 ]]; then
        bad "validate $f exited $rc, not 2"
    elif [[ -s "$tmp/out" ]]; then
        bad "validate $f wrote to stdout: $(head -c 200 "$tmp/out")"
    elif [[ $(wc -l <"$tmp/err") -ne 1 || "$(cat "$tmp/err")" != "$want" ]]; then
        bad "validate $f: stderr differs" $'\n'"  want: $want"$'\n'"  got:  $(cat "$tmp/err")"
    else
        ok
    fi
done

missing=tests/data/bad/no-such-topology.yaml
validate "$missing"
if [[ $rc -ne 2 ]]; then
    bad "validate $missing exited $rc, not 2"
elif [[ -s "$tmp/out" ]]; then
    bad "validate $missing wrote to stdout"
elif [[ $(wc -l <"$tmp/err") -ne 1 ]] || ! grep -qF "meshlab: $missing" "$tmp/err"; then
    bad "validate $missing: the message does not name the file: $(cat "$tmp/err")"
else
    ok
fi

# A FIFO, a device or a directory is refused at once, exit 2: opening a FIFO with no writer
# would block, and the timeout ends validate (status 124) if it does.
mkfifo "$tmp/fifo.yaml"
mkdir "$tmp/dir.yaml"
for special in "$tmp/fifo.yaml:a FIFO" "/dev/null:a character device" "$tmp/dir.yaml:a directory"; do
    path=${special%%:*}
    kind=${special#*:}
    timeout 10 "$MESHLAB_BIN" validate "$path" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    want="meshlab: $path: the topology is $kind, not a regular file; give the path of a topology file"
    if [[ $rc -eq 124 ]]; then
        bad "validate $path blocked (killed after 10 s)"
    elif [[ $rc -ne 2 ]]; then
        bad "validate $path exited $rc, not 2: $(cat "$tmp/err")"
    elif [[ -s "$tmp/out" || "$(cat "$tmp/err")" != "$want" ]]; then
        bad "validate $path: stderr differs"$'\n'"  want: $want"$'\n'"  got:  $(cat "$tmp/err")"
    else
        ok
    fi
done

# wireguard.hub, where the hub used to be given, still validates (exit 0, nothing on stdout) with
# one warning on stderr that names the new top-level key, at the old key's line and column.
old="$tmp/old-hub.yaml"
python3 - topologies/three-guest.yaml "$old" <<'PY'
import sys
text = open(sys.argv[1]).read()
new = "hub: hub\nwireguard:\n  subnet: 10.8.0.0/24\n"
assert new in text
open(sys.argv[2], "w").write(text.replace(new, "wireguard:\n  subnet: 10.8.0.0/24\n  hub: hub\n"))
PY
validate "$old"
want="meshlab: warning: $old:32:8: wireguard.hub is deprecated; write \`hub: hub\` at the top level"
if [[ $rc -ne 0 ]]; then
    bad "validate $old (wireguard.hub) exited $rc: $(cat "$tmp/err")"
elif [[ -s "$tmp/out" || "$(cat "$tmp/err")" != "$want" ]]; then
    bad "validate $old: stderr differs"$'\n'"  want: $want"$'\n'"  got:  $(cat "$tmp/err")"
else
    ok
fi

# A refused file gets its error alone, on one line: the deprecation is said only of a file that
# is taken (scripts that read the first line of stderr, as the audit's bad3 runner does, see it).
sed 's/^  server: client-b$/  server: nobody/' "$old" >"$tmp/old-bad.yaml"
validate "$tmp/old-bad.yaml"
if [[ $rc -ne 2 || $(wc -l <"$tmp/err") -ne 1 ]] || grep -q deprecated "$tmp/err"; then
    bad "validate of a refused file with wireguard.hub: rc $rc, stderr: $(cat "$tmp/err")"
else
    ok
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
