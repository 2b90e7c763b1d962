#!/usr/bin/env bash
# Are the results of this tree identical to those of BASE_REV? Builds fabricsim-sim of BASE_REV in
# a scratch worktree and of this tree in BUILD (default build/), runs every shipped and bench
# scenario with both (run-ahead and --lockstep; long scenarios shortened), and compares the
# results folders: summary.json without host_perf and kernel.systemc_wakeups (how the run was
# carried out) and with drop causes counted 0 left out (a new or renamed cause nothing hit is not
# a result change), and the config echo (summary "config" and config.yaml) allowed to gain keys
# the base does not have (a new parameter at its default is not a result change); every other
# file byte for byte.
#   usage: tests/regression/compare_outputs.sh BASE_REV [BUILD]
# Exit status 0 identical, 1 a difference (listed), 2 usage or build error. For refactors that
# must not change any result (issue 12); a change that renames output keys is not "identical".
# The scratch folder ($TMPDIR/fabricsim-compare-<rev>) stays for quick re-runs; remove it with
# `git worktree remove --force <scratch>/src`.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BASE_REV [BUILD]" >&2; exit 2; }
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
base_rev=$(git -C "$root" rev-parse --verify "$1^{commit}") || exit 2
build=$(realpath -m "${2:-$root/build}")
scratch=${TMPDIR:-/tmp}/fabricsim-compare-${base_rev:0:12}
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

if [ ! -d "$scratch/src" ]; then
    mkdir -p "$scratch"
    git -C "$root" worktree add --detach -f "$scratch/src" "$base_rev" >/dev/null
fi
cmake -S "$scratch/src" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFABRICSIM_BUILD_TESTS=OFF \
      -DFABRICSIM_BUILD_BENCH=OFF -DFABRICSIM_BUILD_PYTHON=OFF >/dev/null || exit 2
cmake --build "$scratch/build" --target fabricsim-sim >/dev/null || exit 2
cmake --build "$build" --target fabricsim-sim >/dev/null || exit 2

# Scenarios that run longer than a few seconds are shortened (same duration for both sides).
declare -A short=([incast_dctcp]=400ms [mqecn_static_flows]=50ms [websearch_leaf_spine]=20ms
                  [dumbbell_line_rate]=20ms [hull_testbed]=2s)
out=$scratch/out
rm -rf "$out"
status=0
for f in "$root"/platforms/scenarios/*.yaml "$root"/bench/scenarios/*.yaml; do
    name=$(basename "$f" .yaml)
    rel=${f#"$root"/}
    if [ ! -f "$scratch/src/$rel" ]; then
        echo "$name: new since the base revision, not compared"; continue
    fi
    args=()
    [ -n "${short[$name]:-}" ] && args=(--set "duration=${short[$name]}")
    for mode in run_ahead lockstep; do
        extra=()
        [ "$mode" = lockstep ] && extra=(--lockstep)
        for side in base head; do
            sim="$scratch/build/platforms/fabricsim-sim"
            [ "$side" = head ] && sim="$build/platforms/fabricsim-sim"
            "$sim" "$f" "${args[@]}" "${extra[@]}" --out "$out/$side/$name-$mode" --quiet >/dev/null 2>&1 || {
                echo "$name $mode: $side run failed"; status=1; }
        done
        a=$out/base/$name-$mode b=$out/head/$name-$mode diffs=()
        if [ "$(cd "$a" && find . -type f | sort)" != "$(cd "$b" && find . -type f | sort)" ]; then
            diffs+=("different files")
        fi
        while IFS= read -r file; do
            if [ "$file" = ./summary.json ]; then
                python3 - "$a/$file" "$b/$file" <<'EOF' || diffs+=("summary.json")
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])

def zero_causes_out(o):
    # A drop cause counted 0 and one the revision does not know are the same result (a new or
    # renamed cause that nothing hit).
    if isinstance(o, dict):
        return {k: ({c: n for c, n in v.items() if n} if k in ("drops", "dropped_by_cause")
                    and isinstance(v, dict) else zero_causes_out(v)) for k, v in o.items()}
    if isinstance(o, list):
        return [zero_causes_out(v) for v in o]
    return o

def known_keys_only(head, base):
    # The head's config echo restricted to the keys the base echoes.
    if isinstance(head, dict) and isinstance(base, dict):
        return {k: known_keys_only(v, base[k]) for k, v in head.items() if k in base}
    if isinstance(head, list) and isinstance(base, list) and len(head) == len(base):
        return [known_keys_only(h, b) for h, b in zip(head, base)]
    return head

for s in (a, b):
    s.pop("host_perf", None)
    # How often the SystemC kernel woke the model scheduler says how the run was carried out
    # (lock-step and run-ahead already differ there), not what it simulated (issue 17: the
    # sampler stopped cutting run-ahead windows).
    s.get("kernel", {}).pop("systemc_wakeups", None)
if "config" in a and "config" in b:
    b["config"] = known_keys_only(b["config"], a["config"])
sys.exit(zero_causes_out(a) != zero_causes_out(b))
EOF
            elif [ "$file" = ./config.yaml ]; then
                # The base's lines, in order, within the head's (new keys add lines).
                python3 - "$a/$file" "$b/$file" <<'EOF' || diffs+=("config.yaml")
import sys
base, head = (open(p).read().splitlines() for p in sys.argv[1:])
it = iter(head)
sys.exit(not all(line in it for line in base))
EOF
            elif ! cmp -s "$a/$file" "$b/$file"; then
                diffs+=("${file#./}")
            fi
        done < <(cd "$a" && find . -type f | sort)
        if [ ${#diffs[@]} -eq 0 ]; then echo "$name $mode: identical"
        else echo "$name $mode: DIFFERENT (${diffs[*]})"; status=1; fi
    done
done
exit $status
