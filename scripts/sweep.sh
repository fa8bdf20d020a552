#!/usr/bin/env bash
# Sweeps the SVR's C and p on held-out next-move agreement (depth 1).
# Usage: scripts/sweep.sh KIFU_DIR WORK_DIR [HOLDOUT]
# Rows as `learn` makes them in iteration 1: leaf rows labelled by material,
# clamped (mate) rows left out of training. Prints one line per (C, p).
# SAMPLE: fraction of positions extracted (1); REPORT_SAMPLE: fraction of
# positions whose agreement is measured (1); CS, PS: the grid; E: tolerance;
# MARGIN: the game move's margin in centipawns (100);
# ROWS: reuse ROWS/train and ROWS/heldout (a `learn` run's features/iter-1).
set -euo pipefail
kifu=${1:?kifu folder}; work=${2:?work folder}; holdout=${3:-0.1}
sample=${SAMPLE:-1}; report_sample=${REPORT_SAMPLE:-1}
bin=${NIWATORI:-target/release/niwatori}
mkdir -p "$work"
# The same split as `learn` and `report` (seed 1): list the held-out files.
train_list=() held_list=()
while IFS=$'\t' read -r side file; do
  if [ "$side" = held ]; then held_list+=("$file"); else train_list+=("$file"); fi
done < <("$bin" report --kifu "$kifu" --holdout "$holdout" --list-split)
rows=${ROWS:-$work}
if [ -z "${ROWS:-}" ]; then
  opts=(--root "$kifu" --features-at leaf --sample "$sample" --margin "${MARGIN:-100}" --resume --quiet)
  "$bin" extract "${train_list[@]}" --out "$work/train" "${opts[@]}" >/dev/null
  "$bin" extract "${held_list[@]}" --out "$work/heldout" "${opts[@]}" >/dev/null
fi
printf '%-6s %-6s %8s %8s %8s %8s %9s %7s\n' C p top1 top3 material train rmse_cp secs
for c in ${CS:-0.03 0.1 0.3}; do
  for p in ${PS:-0.002 0.005 0.02}; do
    m="$work/c$c-p$p.model"
    start=$(date +%s)
    "$bin" train "$rows/train" --out "$m" -c "$c" -p "$p" -e "${E:-0.001}" --drop-clamped -q >/dev/null
    secs=$(( $(date +%s) - start ))
    "$bin" report --kifu "$kifu" --holdout "$holdout" --model "$m" --rows "$rows/heldout" \
      --sample "$report_sample" --json "$work/c$c-p$p.json" >/dev/null
    python3 - "$work/c$c-p$p.json" "$c" "$p" "$secs" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l, t, m = r["learned"], r["learned_on_training_games"], r["material"]
print(f'{sys.argv[2]:<6} {sys.argv[3]:<6} {100*l["top1"]:7.1f}% {100*l["top3"]:7.1f}% {100*m["top1"]:7.1f}% '
      f'{100*t["top1"]:7.1f}% {r["regression"]["rmse_cp"]:9.0f} {sys.argv[4]:>7}')
PY
  done
done
