#!/usr/bin/env bash
# Installs the reference tools that niwatori's tests and benchmarks compare
# against: LIBLINEAR's command-line tools, two USI shogi engines, and Ruby with
# WEBrick to run the CSA shogi-server in ../shared/tools. They are GPL
# programs, used only as separate processes. Also the DejaVu font that the
# PNG plots (src/plot.rs) draw their text with, and Open MPI with libclang
# for the `mpi` feature (distributed training under mpirun), and cshogi.
set -euo pipefail
need=()
command -v liblinear-train >/dev/null 2>&1 || need+=(liblinear-tools)
[ -x /usr/games/fairy-stockfish ] || need+=(fairy-stockfish)
[ -x /usr/games/gpsusi ] || need+=(gpsshogi)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
command -v ruby >/dev/null 2>&1 || need+=(ruby)
ruby -e 'require "webrick"' >/dev/null 2>&1 || need+=(ruby-webrick)
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
[ -f /usr/include/x86_64-linux-gnu/openmpi/mpi.h ] || [ -f /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] || need+=(libopenmpi-dev)
ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 || need+=(libclang-dev)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: run as root (or install ${need[*]} by hand)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
# cshogi (GPL-3.0, from PyPI), the independent reader of the .psv and .hcpe
# files extract writes (tests/rows_binary.rs), in the build folder.
pyc="$(cd "$(dirname "$0")/.." && pwd)/target/python"
PYTHONPATH="$pyc" python3 -c 'import cshogi' >/dev/null 2>&1 ||
  python3 -m pip install --quiet --disable-pip-version-check --target "$pyc" cshogi==1.1.0
echo "setup: liblinear-train $(command -v liblinear-train), fairy-stockfish, gpsusi, DejaVu font, ruby with webrick, $(mpirun --version | head -1), cshogi in $pyc ready"
