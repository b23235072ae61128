#!/usr/bin/env bash
# The rooms of src/ (docs/architecture.md) and what may reach into what: each
# room includes only rooms below it, so the data flow reads from the folder
# names and no two rooms call each other; inside a room, no two files include
# each other in a circle.
set -u
cd "$(dirname "$0")/.."
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }

# In the order data flows: results/ (the metric descriptor, tables, number formatting, the NAT
# expectations) is what measure/ writes and report/ reads, so both stand on it.
declare -A rank=([core]=0 [topology]=1 [results]=2 [cache]=3 [virt]=4 [guestnet]=5 [dataplanes]=6
    [measure]=7 [report]=8 [export]=9 [cli]=10)
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

# Circles between the files of one room: a file is its .c and .h together, and it points at
# every file of its own room whose header either of them includes. tsort names each loop.
# Circles that stood before this check, in rooms whose owners are taking them apart; one that
# is gone is only noted, so that its line here can go.
known_circles=()
edges=$(for f in src/*/*.[ch]; do
    room=$(basename "$(dirname "$f")")
    [ -n "${rank[$room]+x}" ] || continue
    file=$(basename "${f%.*}")
    sed -n "s|^#include \"$room/\([^\"]*\)\.h\".*|\1|p" "$f" | while read -r to; do
        [ "$to" != "$file" ] && echo "$room/$file $room/$to"
    done
done | sort -u)
# tsort prints each loop as "tsort: -: input contains a loop:" and then one member a line.
circles=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null |
    awk '/input contains a loop/ { if (c != "") print c; c = ""; next }
         { sub(/^tsort: /, ""); c = c == "" ? $0 : c " " $0 }
         END { if (c != "") print c }' | while read -r line; do
        tr ' ' '\n' <<<"$line" | sort | tr '\n' ' ' | sed 's/ $//'; echo
    done)
while read -r c; do
    [ -n "$c" ] || continue
    known=0
    for k in "${known_circles[@]}"; do [ "$k" = "$c" ] && known=1; done
    if [ "$known" = 1 ]; then ok; else bad "files include each other in a circle: $c"; fi
done <<<"$circles"
for k in "${known_circles[@]}"; do
    grep -qxF "$k" <<<"$circles" || echo "note: the circle $k is gone: drop it from known_circles"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
