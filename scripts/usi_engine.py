"""A USI engine driven through its pipes, for the search diagnostics
(`time-to-depth.py`, `depth-vs-yaneuraou.py`): one class, so both read the
engine's output the same way."""
import collections, subprocess, sys, time

# What one `go` found: depth and nodes of the last `info` that has them.
Search = collections.namedtuple("Search", "depth nodes move seconds")


class UsiEngine:
    """An engine started by `cmd` (a shell command line), handshaken and
    given `options` (name, value pairs)."""

    def __init__(self, cmd, options=()):
        self.cmd = cmd
        self.p = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.send("usi")
        self.read_until("usiok")
        for name, value in options:
            self.send(f"setoption name {name} value {value}")
        self.send("isready")
        self.read_until("readyok")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def read_until(self, prefix, on_line=None):
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit(f"{self.cmd}: the engine closed its output")
            if on_line:
                on_line(line)
            if line.startswith(prefix):
                return line

    def search(self, position, go):
        """Searches `position` (`sfen …` or `startpos moves …`) in a new game
        with the `go` command line: a `Search`, seconds from `go` to
        `bestmove`."""
        # `isready` before `position`: YaneuraOu's resets the position
        self.send("usinewgame")
        self.send("isready")
        self.read_until("readyok")
        self.send(f"position {position}")
        last = {}

        def note(line):
            w = line.split()
            if w and w[0] == "info" and "depth" in w and "nodes" in w:
                last["depth"] = int(w[w.index("depth") + 1])
                last["nodes"] = int(w[w.index("nodes") + 1])

        start = time.monotonic()
        self.send(go)
        line = self.read_until("bestmove", note)
        seconds = time.monotonic() - start
        if "nodes" not in last:
            sys.exit(f"{self.cmd}: no `info … depth … nodes` before the bestmove of {position[:60]}…")
        return Search(last["depth"], last["nodes"], line.split()[1], seconds)

    def quit(self):
        self.send("quit")
        self.p.wait()
