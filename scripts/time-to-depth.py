#!/usr/bin/env python3
"""Time two niwatori builds take to search the same positions to a depth.

  scripts/time-to-depth.py BINARY_A BINARY_B [--depth 12] [--runs 3] [--positions FILE]

Each run searches every position (default `scripts/wcsc28-midgame.usi`, 30
middle-game positions of WCSC28 games) through USI with `go depth D`, 64 MiB
of table, a new game before each position; the runs alternate A, B, A, B so
that the machine's load falls on both alike. Prints each build's total nodes,
the median time and nodes/s, and B's time as a ratio of A's, and whether both
chose the same moves. A diagnostic of speed, not of strength.
"""
import argparse, os, statistics, sys

from usi_engine import UsiEngine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(binary, positions, depth):
    """(total nodes, seconds between each `go` and its `bestmove`, moves)."""
    engine = UsiEngine(f"{binary} usi", [("USI_Hash", 64)])
    results = [engine.search(pos, f"go depth {depth}") for pos in positions]
    engine.quit()
    return sum(r.nodes for r in results), sum(r.seconds for r in results), [r.move for r in results]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary_a")
    ap.add_argument("binary_b")
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--positions", default=os.path.join(ROOT, "scripts/wcsc28-midgame.usi"))
    a = ap.parse_args()
    for path in (a.binary_a, a.binary_b):
        if not os.access(path, os.X_OK):
            sys.exit(f"missing niwatori binary {path}")
    try:
        positions = [l.strip() for l in open(a.positions) if l.strip()]
    except OSError as e:
        sys.exit(f"{a.positions}: {e}")
    results = {a.binary_a: [], a.binary_b: []}
    for r in range(a.runs):
        for b in (a.binary_a, a.binary_b):
            results[b].append(run(b, positions, a.depth))
            nodes, secs, _ = results[b][-1]
            print(f"run {r + 1} {b}: {nodes} nodes {secs:.2f} s", file=sys.stderr)
    med = {}
    for name, b in (("A", a.binary_a), ("B", a.binary_b)):
        nodes = results[b][0][0]
        med[b] = statistics.median(s for _, s, _ in results[b])
        print(f"{name} {b}: depth {a.depth} on {len(positions)} positions, {nodes} nodes, "
              f"median {med[b]:.2f} s, {nodes / med[b] / 1e6:.3f} M nodes/s")
    same = results[a.binary_a][0][2] == results[a.binary_b][0][2]
    print(f"B/A time {med[a.binary_b] / med[a.binary_a]:.3f} (medians of {a.runs}); "
          f"same moves: {'yes' if same else 'no'}")


if __name__ == "__main__":
    main()
