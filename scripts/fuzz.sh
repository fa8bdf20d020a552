#!/usr/bin/env bash
# Coverage-guided fuzzing (afl.rs, stable toolchain) of every parser that
# reads outside input: game records, USI commands, SFEN, libsvm rows,
# LIBLINEAR model files, CSA server messages.
#   scripts/fuzz.sh [EXECS] [TARGET...]    default 10000000 executions each
# Seeds come from ../shared; findings go to target/fuzz/TARGET/default/
# {crashes,hangs}; the table at the end is what the README quotes. Needs
# `cargo install cargo-afl && cargo afl config --build` once.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$here/../shared" && pwd)
execs=${1:-10000000}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(records usi sfen libsvm model csa_server)
command -v cargo-afl >/dev/null || { echo "fuzz: cargo-afl missing: cargo install cargo-afl && cargo afl config --build" >&2; exit 1; }
work=$here/target/fuzz
mkdir -p "$work"
(cd "$here/fuzz" && cargo afl build --release --target-dir "$work/build" 2>&1 | tail -1)

seed() {
  local t=$1 in=$work/$t/in
  rm -rf "$in"; mkdir -p "$in"
  case $t in
    records)
      local i=0
      for f in $(ls "$shared"/kifu/wcsc28/*.csa | head -8); do printf '\0' | cat - "$f" > "$in/csa$i"; i=$((i+1)); done
      for f in $(find "$shared/kifu" -name '*.kif' | head -8); do printf '\1' | cat - "$f" > "$in/kif$i"; i=$((i+1)); done ;;
    usi)
      printf 'position startpos moves 7g7f 3c3d 8h2b+\ngo btime 1000 wtime 1000 byoyomi 100\nsetoption name Threads value 2\n' > "$in/a"
      printf 'position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves 2g2f\ngo mate 1000\ngo depth 5 nodes 100\nsetoption name Eval value material-hand\n' > "$in/b" ;;
    sfen)
      head -20 "$shared/openings/floodgate2016-24ply.sfen" | sed -n 's/^sfen //p' | sed 's/ moves.*//' | head -5 | split -l 1 - "$in/s"
      printf 'lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1' > "$in/start"
      printf '4k4/9/4P4/9/9/9/9/9/4K4 b G2P 1' > "$in/hand" ;;
    libsvm)
      printf '0.25 1:1 7:2 99:1\n-1 3:1\n0 \n' > "$in/a"
      printf '1e-3 5164760:1 12:3\n' > "$in/b" ;;
    model)
      printf 'solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 3\nbias -1\nw\n0.5 \n-1 \n0 \n' > "$in/a"
      printf 'solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 2\nbias 1\nw\n1e-3 \n2 \n0.25 \n' > "$in/b" ;;
    csa_server)
      printf 'Protocol_Version:1.2\nGame_ID:g1\nName+:a\nName-:b\nYour_Turn:+\nTo_Move:+\nMax_Moves:256\nBEGIN Time\nTime_Unit:1sec\nTotal_Time:600\nByoyomi:10\nLeast_Time_Per_Move:0\nEND Time\nBEGIN Position\nPI\n+\n+7776FU,T3\n-3334FU,T2\nEND Position\n' > "$in/a" ;;
  esac
}

results=()
for t in "${targets[@]}"; do
  seed "$t"
  rm -rf "$work/$t/out"
  echo "fuzz: $t, $execs executions"
  AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
    cargo afl fuzz -i "$work/$t/in" -o "$work/$t/out" -E "$execs" -t 1000 -m none \
      "$work/build/release/$t" > "$work/$t/afl.log" 2>&1 || true
  stats=$work/$t/out/default/fuzzer_stats
  [ -f "$stats" ] || { echo "fuzz: $t did not start; see $work/$t/afl.log" >&2; tail -20 "$work/$t/afl.log" >&2; exit 1; }
  get() { awk -F' *: *' -v k="$1" '$1==k {print $2}' "$stats"; }
  results+=("$(printf '%-11s %12s execs %6s s %8s/s  crashes %s  hangs %s  paths %s' "$t" \
    "$(get execs_done)" "$(get run_time)" "$(get execs_per_sec)" "$(get saved_crashes)" "$(get saved_hangs)" "$(get corpus_count)")")
done
printf "%s\n" "${results[@]}" | tee -a "$work/summary.txt"
