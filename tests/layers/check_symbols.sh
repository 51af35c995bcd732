#!/usr/bin/env bash
# ctest layers_call_only_seen: no floor's objects call a function (or use a variable, a vtable)
# that only a floor it does not see defines (cmake/MinigraphFloors.cmake). The include check
# catches a header of a floor not seen; this catches a declaration written by hand, and says
# which object needs which symbol of which floor.
#   check_symbols.sh NM OBJECT_LIST FLOOR=SEEN,SEEN... ...
# OBJECT_LIST: lines "<floor> <object file>" (written by tests/layers/CMakeLists.txt).
set -euo pipefail
export LC_ALL=C  # one collation for sort, comm and join
nm=$1
list=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

floors=()
for spec in "$@"; do
  floor=${spec%%=*}
  floors+=("$floor")
  mapfile -t objects < <(awk -v f="$floor" '$1 == f { print $2 }' "$list")
  if [ ${#objects[@]} -eq 0 ]; then
    echo "FAILED: $list lists no objects of the floor $floor"
    exit 1
  fi
  "$nm" -P --defined-only "${objects[@]}" | awk 'NF >= 2 && $2 != "U" { print $1 }' \
    | sort -u > "$work/$floor.defined"
  # "symbol object" for every undefined reference.
  "$nm" -P -A --undefined-only "${objects[@]}" | awk '{ sub(/:$/, "", $1); print $2, $1 }' \
    | sort -u > "$work/$floor.undefined"
  echo "$floor: ${#objects[@]} objects, $(wc -l < "$work/$floor.defined") symbols defined"
done

failed=0
for spec in "$@"; do
  floor=${spec%%=*}
  IFS=, read -r -a seen <<< "${spec#*=}"
  # What the floor may use: its own symbols and those of the floors it sees.
  allowed=("$work/$floor.defined")
  for below in "${seen[@]}"; do
    [ -n "$below" ] && allowed+=("$work/$below.defined")
  done
  sort -u "${allowed[@]}" > "$work/allowed"
  for other in "${floors[@]}"; do
    [ "$other" = "$floor" ] && continue
    [[ ",${spec#*=}," == *",$other,"* ]] && continue
    # Undefined here, defined only in a floor not seen.
    comm -23 "$work/$other.defined" "$work/allowed" > "$work/unseen"
    join "$work/$floor.undefined" "$work/unseen" > "$work/calls" || true
    while read -r symbol object; do
      echo "FAILED: $floor/ uses a symbol of $other/, which it does not see:" \
           "$(echo "$symbol" | c++filt) in ${object##*/}"
      failed=1
    done < "$work/calls"
  done
done
if [ $failed -ne 0 ]; then
  exit 1
fi
echo "no floor uses a symbol of a floor it does not see: ok"
