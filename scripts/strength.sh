#!/usr/bin/env bash
# The strength protocol of a learned model: an equal-time match against
# material (byoyomi 200 ms, one thread each, openings from real floodgate
# games, colours swapped), then one row appended to STRENGTH.md with the
# model, its training parameters (from MODEL.json), W-D-L and Elo.
#   scripts/strength.sh MODEL [GAMES] [BYOYOMI_MS] [OUT_DIR]
# Resumable: rerun the same command (the match resumes from OUT_DIR).
set -euo pipefail
model=${1:?usage: scripts/strength.sh MODEL [GAMES] [BYOYOMI_MS] [OUT_DIR]}
games=${2:-400}
byoyomi=${3:-200}
out=${4:-runs/strength-$(basename "$model" .model)-b$byoyomi}
openings=../shared/openings/floodgate2016-24ply.sfen
[ -f "$model" ] || { echo "missing model $model" >&2; exit 1; }
[ -f "$openings" ] || { echo "missing $openings (see ../shared/README.md)" >&2; exit 1; }
cargo build --release --quiet
mkdir -p "$out"
target/release/niwatori match \
  --a "learned:$model --option MoveOverhead=10" --b "material --option MoveOverhead=10" \
  --games "$games" --byoyomi "$byoyomi" --concurrency 2 \
  --openings "$openings" --csa-out "$out" --json "$out/summary.json"
python3 - "$model" "$out/summary.json" "$byoyomi" <<'EOF'
import json, os, sys
model, summary, byoyomi = sys.argv[1:]
s = json.load(open(summary))
meta = {}
if os.path.exists(model + ".json"):
    meta = json.load(open(model + ".json"))
params = ", ".join(f"{k} {meta[k]}" for k in ("c", "p", "e") if k in meta) or "?"
rows = meta.get("data", {}).get("rows", "?")
# The learn run the model came from, when it sits in that run's --out.
run_dir = os.path.dirname(os.path.abspath(model))
data, agreement = "?", "?"
if os.path.exists(os.path.join(run_dir, "learn.json")):
    run = json.load(open(os.path.join(run_dir, "learn.json")))
    data = (f"{run['kifu']}, sample {run['sample']}, margin {run['margin']}, "
            f"base {run.get('base', 'none')}")
    if run.get("king_piece"):
        data += ", king-piece" if run.get("attacks", True) else ", king-piece without attacks"
if os.path.exists(os.path.join(run_dir, "history.json")):
    # the model's own iteration (best.model: the best one's)
    history = json.load(open(os.path.join(run_dir, "history.json")))
    own = [r for r in history if os.path.abspath(r["model"]) == os.path.abspath(model)]
    best = own[0] if own else max(history, key=lambda r: r["heldout_top1"], default=None)
    if best:
        agreement = f"{100 * best['heldout_top1']:.1f} % (material {100 * best['material_top1']:.1f} %)"
lo, hi = s["elo_ci95"]
line = (f"| {model} | {data} | {params} | {rows} | {agreement} | b{byoyomi} | {s['games']} | "
        f"{s['a_wins']}-{s['draws']}-{s['b_wins']} | {s['elo']:+.0f} [{lo:+.0f}, {hi:+.0f}] |\n")
path = "STRENGTH.md"
if not os.path.exists(path):
    open(path, "w").write(
        "# Learned models against material at equal time\n\n"
        "Rows appended by `scripts/strength.sh`; openings from "
        "`../shared/openings/floodgate2016-24ply.sfen`.\n\n"
        "| model | data | C, p, e | rows | held-out top-1 | time | games | W-D-L | Elo (95 %) |\n"
        "|---|---|---|---|---|---|---|---|---|\n")
open(path, "a").write(line)
print(line, end="")
EOF
