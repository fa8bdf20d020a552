#!/usr/bin/env bash
# The README's MPI figures: train on ROWS (a folder of extract's rows) with
# 1 rank x 1 and 2 threads, then 2 and 3 ranks of 1 thread, printing peak
# memory per rank (the largest), train time, iterations, the objective
# (the same bits in every run) and what rank 0 sent.
#   scripts/mpi-figures.sh ROWS [OUT_DIR]
# Needs `cargo build --release --features mpi` and Open MPI's mpirun.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/target/release/niwatori
rows=$1
out=${2:-$(mktemp -d)}
mkdir -p "$out"
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
run() {
  local tag=$1 k=$2 t=$3
  export RAYON_NUM_THREADS=$t
  if [ "$k" = 1 ]; then
    /usr/bin/time -f "maxrss_kb %M" "$bin" train --out "$out/$tag.model" "$rows" > "$out/$tag.out" 2> "$out/$tag.err"
  else
    /usr/bin/time -f "maxrss_kb %M" mpirun "${root[@]}" --oversubscribe -x RAYON_NUM_THREADS -np "$k" \
      "$bin" train --out "$out/$tag.model" "$rows" > "$out/$tag.out" 2> "$out/$tag.err"
  fi
  local cg
  cg=$(grep '^iter' "$out/$tag.err" | sed -E 's/.*CG +([0-9]+).*/\1/' | awk '{s+=$1} END {print s}')
  printf '%s ranks x %s threads: %s, CG steps %s, %s | %s | %s\n' "$k" "$t" \
    "$(tail -1 "$out/$tag.err")" "$cg" \
    "$(grep -o '"objective": [^,]*' "$out/$tag.model.json")" \
    "$(grep -E '^[0-9,]+ rows' "$out/$tag.out")" \
    "$(grep -E 'ranks; rank 0 sent' "$out/$tag.out" || echo 'one process')"
}
run k1t1 1 1
run k1t2 1 2
run k2 2 1
run k3 3 1
