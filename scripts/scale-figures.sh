#!/usr/bin/env bash
# The "Data at scale" figures: learn (one iteration, SAMPLE of the positions,
# default 0.3, .bin rows) on the first FILES record files of the shared games (wcsc28,
# gps, pro, misc, selfplay, then fsf-floodgate), plus every record of
# EXTRA_DIR (generated games, see generate-games.sh); prints one table row:
# games, rows, bytes, each stage's seconds, peak memory and agreement.
#   [SAMPLE=0.3] scripts/scale-figures.sh FILES [EXTRA_DIR] [WORK_DIR]
set -euo pipefail
files=${1:?usage: scripts/scale-figures.sh FILES [EXTRA_DIR] [WORK_DIR]}
extra=${2:-}
work=${3:-/tmp/niwatori-scale-$files}
cargo build --release --quiet
bin=$(pwd)/target/release/niwatori
shared=$(cd ../shared/kifu && pwd)
rm -rf "$work"; mkdir -p "$work/kifu"
n=0
for d in wcsc28 gps pro misc selfplay fsf-floodgate; do
  mkdir -p "$work/kifu/$d"
  for f in $(find "$shared/$d" -name '*.csa' -o -name '*.kif' | sort); do
    [ "$n" -lt "$files" ] || break 2
    ln -s "$f" "$work/kifu/$d/"; n=$((n + 1))
  done
done
[ -z "$extra" ] || ln -s "$(cd "$extra" && pwd)" "$work/kifu/extra"
/usr/bin/time -v "$bin" learn --kifu "$work/kifu" --iterations 1 --sample "${SAMPLE:-0.3}" \
  --out "$work/models" --features "$work/features" > "$work/learn.log" 2>&1
python3 - "$work" <<'EOF'
import json, re, sys
w = sys.argv[1]
f = f"{w}/features/iter-1"
train = json.load(open(f"{f}/train/extract.json"))["summary"]
held = json.load(open(f"{f}/heldout/extract.json"))["summary"]
model = json.load(open(f"{w}/models/iter-1.model.json"))
hist = json.load(open(f"{w}/models/history.json"))[0]
log = open(f"{w}/learn.log").read()
peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", log).group(1))
extract = train["seconds"] + held["seconds"]
report = hist["seconds"] - extract - model["load_seconds"] - model["train_seconds"]
print("| games (train + held out) | rows | .bin bytes | extract s | load s | train s (iterations) | report s | total s | peak memory | held-out top-1 (material) |")
print(f"| {train['games_written']} + {held['games_written']} | {train['rows'] + held['rows']:,} | "
      f"{train['bytes'] + held['bytes']:,} | {extract:.1f} | {model['load_seconds']:.1f} | "
      f"{model['train_seconds']:.1f} ({model['iterations']}) | {report:.0f} | {hist['seconds']:.0f} | "
      f"{peak_kb / 1e6:.2f} GB | {100 * hist['heldout_top1']:.1f} % ({100 * hist['material_top1']:.1f} %) |")
EOF
