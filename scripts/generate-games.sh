#!/usr/bin/env bash
# Generate training games: an engine against itself at a fixed node budget,
# two games at a time, each from its own real opening (one deterministic
# engine would replay a game with the colours swapped), written as CSA.
#   scripts/generate-games.sh OUT_DIR [GAMES] [NODES] [OPENINGS] [ENGINE]
# OPENINGS: a USI openings file (one `startpos moves ...` line each; default
#   the 10,831 real floodgate openings) or a folder of records (a prefix of
#   12-36 plies of each game).
# ENGINE: a `niwatori match` spec (default fairy-stockfish over USI; e.g.
#   "learned:models/best.model" for niwatori with its own model).
# Resumable: OUT_DIR/results.jsonl records every finished game; rerun the
# same command and it goes on. Games per hour are printed at the end.
set -euo pipefail
out=${1:?usage: scripts/generate-games.sh OUT_DIR [GAMES] [NODES] [OPENINGS] [ENGINE]}
games=${2:-620}
nodes=${3:-12000}
openings=${4:-../shared/openings/floodgate2016-24ply.sfen}
engine=${5:-usi:/usr/games/fairy-stockfish}
case "$engine" in
usi:*)
  bin=${engine#usi:}
  bin=${bin%% *}
  [ -x "$bin" ] || { echo "missing $bin: run scripts/setup.sh" >&2; exit 1; }
  a="$engine --name gen-a" b="$engine --name gen-b" ;;
*) a=$engine b=$engine ;;
esac
[ -e "$openings" ] || { echo "missing openings $openings" >&2; exit 1; }
cargo build --release --quiet
start=$(date +%s)
before=$( [ -f "$out/results.jsonl" ] && wc -l < "$out/results.jsonl" || echo 0)
target/release/niwatori match \
  --a "$a" --b "$b" \
  --games "$games" --nodes "$nodes" --concurrency 2 \
  --openings "$openings" --opening-plies 12-36 --seed 2026 --one-game-per-opening \
  --csa-out "$out" --json "$out/summary.json"
after=$(wc -l < "$out/results.jsonl")
secs=$(( $(date +%s) - start ))
echo "generated $((after - before)) games in ${secs} s: $(( (after - before) * 3600 / (secs > 0 ? secs : 1) )) games/hour"
