#!/usr/bin/env python3
"""Depth and nodes that niwatori and YaneuraOu-material reach on the same
positions in the same time (or to the same depth), through USI.

  scripts/depth-vs-yaneuraou.py [--movetime MS | --depth D] [--engine CMD] [--positions FILE]

Positions default to the bench's eight and twelve real floodgate openings
(every 500th line of ../shared/openings/floodgate2016-24ply.sfen). FILE holds
`sfen …` or `startpos moves …` lines; `scripts/wcsc28-midgame.usi` holds 30
middle-game positions (plies 50 and 70 of WCSC28 games, every 11th). Prints one line a position and the
medians. A diagnostic, not a strength claim: use `niwatori match` for that.
"""
import argparse, os, re, statistics, sys

from usi_engine import UsiEngine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
YO = os.path.join(ROOT, "../shared/tools/yaneuraou/YaneuraOu-material")
YO_OPTIONS = [("Threads", 1), ("USI_Hash", 64), ("BookFile", "no_book"), ("NetworkDelay", 0),
              ("NetworkDelay2", 0), ("MinimumThinkingTime", 100)]


def default_positions():
    bench = open(os.path.join(ROOT, "src/bench/search.rs")).read()
    sfens = re.findall(r'^\s*"([^"]+ [bw] [^"]* \d+)",$', bench, re.M)
    openings = open(os.path.join(ROOT, "../shared/openings/floodgate2016-24ply.sfen")).read().splitlines()
    return ["sfen " + s for s in sfens] + [l.strip() for l in openings[::500][:12]]


def search(cmd, options, positions, go):
    """(depth, nodes, bestmove, seconds) of each position's search."""
    engine = UsiEngine(cmd, options)
    out = [engine.search(pos, go) for pos in positions]
    engine.quit()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--movetime", type=int, default=200)
    ap.add_argument("--depth", type=int)
    ap.add_argument("--engine", default=os.path.join(ROOT, "target/release/niwatori"))
    ap.add_argument("--positions")
    a = ap.parse_args()
    for path in (YO, a.engine.split()[0]):
        if not os.access(path, os.X_OK):
            sys.exit(f"missing {path} (cargo build --release; ../shared/README.md for YaneuraOu)")
    positions = open(a.positions).read().splitlines() if a.positions else default_positions()
    positions = [p.strip() for p in positions if p.strip()]
    go = f"go depth {a.depth}" if a.depth else f"go movetime {a.movetime}"
    yo = search(YO, YO_OPTIONS, positions, go)
    nw = search(a.engine, [("USI_Hash", 64), ("MoveOverhead", 10)], positions, go)
    print(f"{go}: YaneuraOu-material | niwatori")
    for (yd, yn, ym, _), (nd, nn, nm, _) in zip(yo, nw):
        print(f"  depth {yd:2} nodes {yn:9} {ym:6} | depth {nd:2} nodes {nn:9} {nm:6}")
    med = statistics.median
    print(f"median depth {med(r[0] for r in yo)} | {med(r[0] for r in nw)}")
    print(f"median nodes {med(r[1] for r in yo):.0f} | {med(r[1] for r in nw):.0f}")
    print(f"total nodes {sum(r[1] for r in yo)} | {sum(r[1] for r in nw)}")
    print(f"total time {sum(r[3] for r in yo):.2f} s | {sum(r[3] for r in nw):.2f} s")


if __name__ == "__main__":
    main()
