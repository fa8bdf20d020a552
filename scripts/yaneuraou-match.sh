#!/usr/bin/env bash
# niwatori's search against YaneuraOu's, both with a material-only evaluation,
# at equal time (byoyomi, one thread each): the yardstick of the README's
# search table. Resumable: rerun the same command.
#   scripts/yaneuraou-match.sh OUT_DIR [GAMES] [BYOYOMI_MS|nodes:N] [NIWATORI_SPEC]
# (nodes:N: N nodes a move each, `go nodes`, a diagnostic of what a node buys)
# NIWATORI_SPEC defaults to material with a 10 ms move overhead (YaneuraOu
# gets NetworkDelay 0: both may use the whole byoyomi, less pipe latency).
# NIWATORI=BINARY plays that build instead of building this checkout;
# CONCURRENCY sets the games at a time (default 2).
set -euo pipefail
out=${1:?usage: scripts/yaneuraou-match.sh OUT_DIR [GAMES] [BYOYOMI_MS] [NIWATORI_SPEC]}
games=${2:-200}
byoyomi=${3:-200}
spec=${4:-material --option MoveOverhead=10}
yo=../shared/tools/yaneuraou/YaneuraOu-material
[ -x "$yo" ] || { echo "missing $yo (see ../shared/README.md)" >&2; exit 1; }
limit=(--byoyomi "$byoyomi")
case $byoyomi in nodes:*) limit=(--nodes "${byoyomi#nodes:}") ;; esac
niwatori=${NIWATORI:-}
if [ -z "$niwatori" ]; then
  cargo build --release --quiet
  niwatori=target/release/niwatori
fi
[ -x "$niwatori" ] || { echo "missing niwatori binary $niwatori" >&2; exit 1; }
mkdir -p "$out"
exec "$niwatori" match \
  --a "$spec" \
  --b "usi:$yo --option Threads=1 --option USI_Hash=64 --option BookFile=no_book --option NetworkDelay=0 --option NetworkDelay2=0 --option MinimumThinkingTime=100" \
  --games "$games" "${limit[@]}" --concurrency "${CONCURRENCY:-2}" \
  --openings ../shared/kifu/wcsc28 \
  --csa-out "$out" --json "$out/summary.json"
