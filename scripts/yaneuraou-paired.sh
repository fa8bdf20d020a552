#!/usr/bin/env bash
# Two niwatori builds against YaneuraOu's search at the same time, one game
# at a time each, same openings and colours game by game: the machine's load
# of the day falls on both alike (the landed build alone scored 18 % one day
# and 12-13 % another), and the difference is judged game by game.
# Resumable: rerun the same command.
#   scripts/yaneuraou-paired.sh OUT_DIR BINARY_A BINARY_B [GAMES] [BYOYOMI_MS]
# BINARY_A/B: niwatori executables (e.g. `cargo build --release` in two git
# worktrees, then copies of target/release/niwatori). Prints both scores and
# the difference B − A with its 95 % interval over the paired games.
set -euo pipefail
usage="usage: scripts/yaneuraou-paired.sh OUT_DIR BINARY_A BINARY_B [GAMES] [BYOYOMI_MS]"
out=${1:?$usage}
bin_a=${2:?$usage}
bin_b=${3:?$usage}
games=${4:-200}
byoyomi=${5:-200}
for b in "$bin_a" "$bin_b"; do
  [ -x "$b" ] || { echo "missing niwatori binary $b" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "missing python3 (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p "$out/a" "$out/b"
play() { # BINARY DIR
  NIWATORI=$1 CONCURRENCY=1 bash "$(dirname "$0")/yaneuraou-match.sh" "$2" "$games" "$byoyomi" \
    > "$2/match.log" 2>&1
}
play "$bin_a" "$out/a" & pid_a=$!
play "$bin_b" "$out/b" & pid_b=$!
status=0
wait "$pid_a" || { echo "build A's match failed, see $out/a/match.log" >&2; status=1; }
wait "$pid_b" || { echo "build B's match failed, see $out/b/match.log" >&2; status=1; }
[ "$status" = 0 ] || exit 1
python3 - "$out" <<'EOF'
import json, math, sys
out = sys.argv[1]
def scores(side):
    s = {}
    path = f"{out}/{side}/results.jsonl"
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        sys.exit(f"{path}: {e}")
    for n, line in enumerate(lines, 1):
        try:
            r = json.loads(line)
            w = r["record"]["winner"]
            s[r["game"]] = 0.5 if w is None else float((w == 0) == r["a_black"])
        except (ValueError, KeyError, TypeError) as e:
            sys.exit(f"{path} line {n}: {e!r}")
    if not s:
        sys.exit(f"{path}: no games")
    return s
a, b = scores("a"), scores("b")
for name, s in (("A", a), ("B", b)):
    n = len(s)
    wins = sum(v == 1 for v in s.values())
    draws = sum(v == 0.5 for v in s.values())
    print(f"{name}: {wins}-{draws}-{n - wins - draws} ({100 * sum(s.values()) / n:.1f} %)")
both = sorted(set(a) & set(b))
if not both:
    sys.exit("no game played by both builds")
d = [b[g] - a[g] for g in both]
mean = sum(d) / len(d)
sd = math.sqrt(sum((x - mean) ** 2 for x in d) / max(len(d) - 1, 1))
half = 1.96 * sd / math.sqrt(len(d))
print(f"B - A over {len(d)} paired games: {100 * mean:+.1f} points [{100 * (mean - half):+.1f}, {100 * (mean + half):+.1f}]")
EOF
