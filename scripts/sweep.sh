#!/usr/bin/env bash
# Sweeps the SVR's C and p on held-out next-move agreement (depth 1).
# Usage: scripts/sweep.sh KIFU_DIR WORK_DIR [HOLDOUT]
# Labels come from material (iteration 1); prints one line per (C, p).
set -euo pipefail
kifu=${1:?kifu folder}; work=${2:?work folder}; holdout=${3:-0.15}
bin=${NIWATORI:-target/release/niwatori}
mkdir -p "$work"
# The same split as `learn` and `report` (seed 1): list the held-out files.
train_list=() held_list=()
while IFS=$'\t' read -r side file; do
  if [ "$side" = held ]; then held_list+=("$file"); else train_list+=("$file"); fi
done < <("$bin" report --kifu "$kifu" --holdout "$holdout" --list-split)
"$bin" extract "${train_list[@]}" --out "$work/train" --resume >/dev/null
"$bin" extract "${held_list[@]}" --out "$work/heldout" --resume >/dev/null
printf '%-6s %-6s %8s %8s %8s %9s %7s\n' C p top1 top3 train rmse_cp secs
for c in ${CS:-0.01 0.1 1}; do
  for p in ${PS:-0.001 0.005 0.02 0.1}; do
    m="$work/c$c-p$p.model"
    start=$(date +%s)
    "$bin" train "$work/train" --out "$m" -c "$c" -p "$p" -e "${E:-0.01}" -q >/dev/null
    secs=$(( $(date +%s) - start ))
    "$bin" report --kifu "$kifu" --holdout "$holdout" --model "$m" --rows "$work/heldout" \
      --json "$work/c$c-p$p.json" >/dev/null
    python3 - "$work/c$c-p$p.json" "$c" "$p" "$secs" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l, t = r["learned"], r["learned_on_training_games"]
print(f'{sys.argv[2]:<6} {sys.argv[3]:<6} {100*l["top1"]:7.1f}% {100*l["top3"]:7.1f}% '
      f'{100*t["top1"]:7.1f}% {r["regression"]["rmse_cp"]:9.0f} {sys.argv[4]:>7}')
PY
  done
done
