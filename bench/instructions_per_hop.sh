#!/usr/bin/env bash
# Instructions per frame-hop of a fabricsim-sim binary (callgrind counts instructions, which
# machine load does not move): each scenario runs for 4 ms and 2 ms and the difference of the
# instruction totals is divided by the difference of the frame-hops, so set-up cost cancels.
#   usage: [DURATIONS="80us 40us"] bench/instructions_per_hop.sh FABRICSIM_SIM [SCENARIO.yaml ...]
# Default scenarios: the four of bench/README.md's instruction tables. Needs valgrind.
# DURATIONS replaces 4 ms and 2 ms (the 1024-host bench takes minutes per ms under callgrind).
# SETS adds --set overrides to every run, e.g. SETS="results.sample_interval=10us".
set -euo pipefail
sim=$(realpath "$1"); shift
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$root"/bench/scenarios/dumbbell_line_rate.yaml \
    "$root"/bench/scenarios/leaf_spine_poisson.yaml "$root"/bench/scenarios/leaf_spine_8q_dwrr_ecn.yaml \
    "$root"/bench/scenarios/leaf_spine_websearch_dctcp.yaml
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # scenario duration -> "instructions frame_hops"
    local sets=()
    for s in ${SETS:-}; do sets+=(--set "$s"); done
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$sim" "$1" --set "duration=$2" \
        "${sets[@]}" --out "$work/res" --overwrite >/dev/null 2>"$work/vg.log"
    local ir hops
    ir=$(grep -E '^(summary|totals):' "$work/cg.out" | head -1 | awk '{print $2}')
    hops=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['kernel']['frame_hops'])" \
        "$work/res/summary.json")
    echo "$ir $hops"
}
read -r long short <<<"${DURATIONS:-4ms 2ms}"
for f in "$@"; do
    read -r i4 h4 < <(run "$f" "$long")
    read -r i2 h2 < <(run "$f" "$short")
    python3 -c "import sys; i4,h4,i2,h2=map(int,sys.argv[2:]); print(f'{sys.argv[1]}: {(i4-i2)/(h4-h2):.1f} instructions per frame-hop')" \
        "$(basename "$f" .yaml)" "$i4" "$h4" "$i2" "$h2"
done
