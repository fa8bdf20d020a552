#!/usr/bin/env python3
"""The positions where niwatori lost its games against YaneuraOu, replayed.

A match against YaneuraOu-material (scripts/yaneuraou-match.sh) is decided
by a few moves: niwatori calls the position level, and YaneuraOu's reply
already shows it a piece or more ahead. This collects those moves, asks an
engine what it plays there at the match's byoyomi, and scores each chosen
move with YaneuraOu itself searching 1 s after it: a quick, paired check
of a search change before the 200-game match that decides it.

  scripts/critical-positions.py collect SET CSA_DIR...
      the first such move of each game (niwatori's score at least -100, the
      opponent's reply at least 250 lower, both from niwatori's view; CSA
      comments `'** SCORE`, black's view, as `niwatori match` writes them)
  scripts/critical-positions.py play SET OUT [--engine CMD] [--byoyomi MS]
      the engine's move in each position (default target/release/niwatori
      with MoveOverhead 10; `--engine yo` for YaneuraOu-material)
  scripts/critical-positions.py referee SET OUT...
      YaneuraOu's 1 s score after each chosen move, from the mover's view
      (clipped to ±2000, cached in SET.referee.json); prints the mean, the
      moves scored -300 or worse, and paired differences against the first OUT

The referee is one engine's opinion, and a move YaneuraOu prefers scores
well by construction. Worse, the positions are picked by the losing
build's own choices, so any change that plays differently there escapes
a known loss: the mean regresses towards the referee's whatever the
change is worth (a build it scored +35 ± 21 then lost its match; see
the README). Use it to find positions to study, never to choose a build:
`niwatori match` decides that.
"""
import argparse, glob, json, os, statistics, subprocess, sys, threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
YO = os.path.join(ROOT, "../shared/tools/yaneuraou/YaneuraOu-material")
YO_OPTIONS = [("Threads", 1), ("USI_Hash", 64), ("BookFile", "no_book"), ("NetworkDelay", 0),
              ("NetworkDelay2", 0), ("MinimumThinkingTime", 100)]
PIECES = {"FU": "P", "KY": "L", "KE": "N", "GI": "S", "KI": "G", "KA": "B", "HI": "R", "OU": "K"}
START = ["-KY-KE-GI-KI-OU-KI-GI-KE-KY", " * -HI *  *  *  *  * -KA * ", "-FU" * 9, "", "", "",
         "+FU" * 9, " * +KA *  *  *  *  * +HI * ", "+KY+KE+GI+KI+OU+KI+GI+KE+KY"]


def square(s):
    return s[0] + "abcdefghi"[int(s[1]) - 1]


def read_csa(path):
    """(USI moves, {move index: black-view score}, black player's name)."""
    board = {}
    for rank, row in enumerate(START, 1):
        for i in range(len(row) // 3):
            cell = row[3 * i:3 * i + 3]
            if cell.strip() != "*":
                board[(9 - i, rank)] = cell[1:]
    moves, scores, black = [], {}, None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.strip()
        if line.startswith("N+"):
            black = line[2:]
        elif line.startswith("P") and line != "PI":
            sys.exit(f"{path}:{n}: only games from the standard start position (PI) are read")
        elif len(line) == 7 and line[0] in "+-" and line[1:5].isdigit():
            to, piece = (int(line[3]), int(line[4])), line[5:]
            if line[1:3] == "00" and piece not in PIECES:
                sys.exit(f"{path}:{n}: cannot drop {piece}")
            if line[1:3] == "00":
                moves.append(PIECES[piece] + "*" + square(line[3:5]))
            else:
                old = board.pop((int(line[1]), int(line[2])), None)
                if old is None:
                    sys.exit(f"{path}:{n}: no piece on {line[1:3]}")
                moves.append(square(line[1:3]) + square(line[3:5]) + ("+" if old != piece else ""))
            board[to] = piece
        elif line.startswith("'** ") and moves:
            try:
                scores[len(moves) - 1] = int(line.split()[1])
            except (IndexError, ValueError):
                pass
    return moves, scores, black


def collect(a):
    found = []
    for d in a.csa_dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.csa"))):
            moves, scores, black = read_csa(path)
            niwatori_black = black is not None and "YaneuraOu" not in black
            sign = 1 if niwatori_black else -1
            for k in sorted(scores):
                if k + 1 not in scores or (k % 2 == 0) != niwatori_black:
                    continue
                before, after = sign * scores[k], sign * scores[k + 1]
                if -100 <= before < 1500 and before - after >= 250:
                    found.append(f"startpos moves {' '.join(moves[:k])}\t{moves[k]}\t{before}\t{after}")
                    break
    with open(a.set + ".tmp", "w") as f:
        f.write("".join(l + "\n" for l in found))
    os.replace(a.set + ".tmp", a.set)
    print(f"{len(found)} positions")


class Usi:
    def __init__(self, cmd, options):
        self.p = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.send("usi"); self.until("usiok")
        for name, value in options:
            self.send(f"setoption name {name} value {value}")
        self.send("isready"); self.until("readyok")

    def send(self, line):
        self.p.stdin.write(line + "\n"); self.p.stdin.flush()

    def until(self, prefix):
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("the engine closed its output")
            if line.startswith(prefix):
                return line

    def go(self, position, byoyomi):
        """(best move, last score in centipawns from the mover's view)."""
        self.send("usinewgame"); self.send("position " + position)
        self.send(f"go btime 0 wtime 0 byoyomi {byoyomi}")
        score = None
        while True:
            w = self.p.stdout.readline().split()
            if not w:
                sys.exit("the engine closed its output")
            if w[0] == "info" and "score" in w:
                kind, value = w[w.index("score") + 1:w.index("score") + 3]
                score = int(value) if kind == "cp" else (-30000 if value.startswith("-") else 30000)
            if w[0] == "bestmove":
                if w[1] == "resign":
                    score = -30000
                return w[1], score

    def quit(self):
        self.send("quit"); self.p.wait()


def read_set(path):
    return [line.rstrip("\n").split("\t") for line in open(path) if line.strip()]


def play(a):
    rows = read_set(a.set)
    if a.engine == "yo":
        engine = Usi(YO, YO_OPTIONS)
    else:
        engine = Usi(a.engine, [("USI_Hash", 64), ("MoveOverhead", 10)])
    chosen = [engine.go(r[0], a.byoyomi)[0] for r in rows]
    engine.quit()
    with open(a.out + ".tmp", "w") as f:
        f.write("".join(m + "\n" for m in chosen))
    os.replace(a.out + ".tmp", a.out)
    same = sum(m == r[1] for m, r in zip(chosen, rows))
    print(f"{a.out}: the game's move again in {same} of {len(rows)}")


def referee(a):
    rows = read_set(a.set)
    cache_path = a.set + ".referee.json"
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    results = {path: [l.strip() for l in open(path)] for path in a.outs}
    for path, moves in results.items():
        if len(moves) != len(rows):
            sys.exit(f"{path}: {len(moves)} moves for {len(rows)} positions")
    todo = sorted({(i, m) for moves in results.values() for i, m in enumerate(moves)
                   if f"{i} {m}" not in cache})
    lock = threading.Lock()
    errors = []

    def work(items):
        # sys.exit in a thread ends only the thread: the message is kept
        # and raised once the scores found so far are saved.
        try:
            yo = Usi(YO, YO_OPTIONS)
            for i, m in items:
                _, score = yo.go(f"{rows[i][0]} {m}", 1000)
                if score is None:
                    sys.exit(f"{a.set}:{i + 1}: YaneuraOu gave no score after {m}")
                with lock:
                    cache[f"{i} {m}"] = -max(-2000, min(2000, score))
            yo.quit()
        except SystemExit as e:
            errors.append(str(e))

    threads = [threading.Thread(target=work, args=(todo[k::2],)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(cache_path + ".tmp", "w") as f:
        json.dump(cache, f)
    os.replace(cache_path + ".tmp", cache_path)
    if errors:
        sys.exit(errors[0])
    first = None
    for path, moves in results.items():
        s = [cache[f"{i} {m}"] for i, m in enumerate(moves)]
        line = f"{os.path.basename(path)}: mean {statistics.mean(s):.1f}, -300 or worse {sum(x <= -300 for x in s)}"
        if first is None:
            first = s
        else:
            d = [x - y for x, y in zip(s, first)]
            se = statistics.stdev(d) / len(d) ** 0.5
            line += f", against the first {statistics.mean(d):+.1f} ± {1.96 * se:.1f} (95 %)"
        print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect"); c.add_argument("set"); c.add_argument("csa_dirs", nargs="+")
    p = sub.add_parser("play"); p.add_argument("set"); p.add_argument("out")
    p.add_argument("--engine", default=os.path.join(ROOT, "target/release/niwatori") + " usi")
    p.add_argument("--byoyomi", type=int, default=200)
    r = sub.add_parser("referee"); r.add_argument("set"); r.add_argument("outs", nargs="+")
    a = ap.parse_args()
    if not os.access(YO, os.X_OK) and (a.cmd == "referee" or getattr(a, "engine", "") == "yo"):
        sys.exit(f"missing {YO} (see ../shared/README.md)")
    {"collect": collect, "play": play, "referee": referee}[a.cmd](a)


if __name__ == "__main__":
    main()
