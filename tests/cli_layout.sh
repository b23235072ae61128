#!/usr/bin/env bash
# The rooms of src/ (docs/architecture.md) and what may reach into what: each
# room includes only rooms below it, so the data flow reads from the folder
# names and no two rooms call each other.
set -u
cd "$(dirname "$0")/.."
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }

declare -A rank=([core]=0 [topology]=1 [report]=1 [cache]=2 [virt]=3 [dataplanes]=4 [measure]=5 [cli]=6)
for f in src/*; do
    if [ -f "$f" ]; then bad "$f lies outside the rooms"; continue; fi
    room=${f#src/}
    [ -n "${rank[$room]+x}" ] && ok || bad "src/$room is not a room that docs/architecture.md names"
done
for f in src/*/*.[ch]; do
    room=$(basename "$(dirname "$f")")
    [ -n "${rank[$room]+x}" ] || continue
    while read -r inc; do
        target=${inc%%/*}
        if [ "$inc" = "$target" ]; then
            bad "$f includes \"$inc\" without its room"
        elif [ -z "${rank[$target]+x}" ]; then
            bad "$f includes \"$inc\" from no room"
        elif [ "$target" != "$room" ] && [ "${rank[$target]}" -ge "${rank[$room]}" ]; then
            bad "$f ($room) reaches up or across into $target"
        else
            ok
        fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
