#!/usr/bin/env bash
# Generate extra training games: fairy-stockfish against itself at a fixed node
# budget, from prefixes (plies 12-36) of the shared WCSC28 games. The real games
# in ../shared/kifu number 550; this brings the training set past 1,000 games.
#   scripts/generate-games.sh OUT_DIR [GAMES] [NODES]
set -euo pipefail
out=${1:?usage: scripts/generate-games.sh OUT_DIR [GAMES] [NODES]}
games=${2:-620}
nodes=${3:-12000}
engine=/usr/games/fairy-stockfish
[ -x "$engine" ] || { echo "missing $engine: run scripts/setup.sh" >&2; exit 1; }
cargo build --release --quiet
# results.jsonl in OUT_DIR makes this resumable: rerun the same command.
exec target/release/niwatori match \
  --a "usi:$engine --name fsf-a" --b "usi:$engine --name fsf-b" \
  --games "$games" --nodes "$nodes" --concurrency 2 \
  --openings ../shared/kifu/wcsc28 --opening-plies 12-36 --seed 2026 \
  --csa-out "$out" --json "$out/summary.json"
