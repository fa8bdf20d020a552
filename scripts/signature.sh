#!/usr/bin/env bash
# The behaviour signature of a niwatori binary, for refactors that must not
# change behaviour: the bench node count, the rows extracted from the WCSC28
# records (a 30 % sample), the model trained on them (bytes, and its sidecar
# without timings), the bench node count under that model, and leaf rows
# labelled with it. Two binaries behave alike when their outputs are equal:
#   scripts/signature.sh OLD_BINARY /tmp/sig-old
#   scripts/signature.sh target/release/niwatori /tmp/sig-new
#   diff <(scripts/signature.sh ...) ...   (or compare the printed lines)
set -euo pipefail
bin=$(realpath "$1")
out=$2
shared=$(realpath "$(dirname "$0")/../../shared")
rm -rf "$out"
mkdir -p "$out"
hashes() { (cd "$1" && find . -type f ! -name extract.json | sort | xargs md5sum); }
"$bin" bench 2>&1 | grep "Total nodes" > "$out/bench.txt"
"$bin" extract "$shared/kifu/wcsc28" --sample 0.3 --out "$out/rows" > /dev/null 2>&1
hashes "$out/rows" > "$out/rows.md5"
"$bin" train "$out/rows" --out "$out/m.model" > /dev/null 2>&1
md5sum < "$out/m.model" > "$out/model.md5"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k,None) for k in ('load_seconds','train_seconds')]; print(json.dumps(d,sort_keys=True))" \
  "$out/m.model.json" > "$out/model-json.txt"
"$bin" bench --eval "learned:$out/m.model" 2>&1 | grep "Total nodes" > "$out/bench-learned.txt"
"$bin" extract "$shared/kifu/wcsc28" --sample 0.1 --model "$out/m.model" --features-at leaf \
  --out "$out/leaf-rows" > /dev/null 2>&1
hashes "$out/leaf-rows" > "$out/leaf-rows.md5"
echo "bench $(awk '{print $4}' "$out/bench.txt")"
echo "bench learned $(awk '{print $4}' "$out/bench-learned.txt")"
for f in rows.md5 model.md5 model-json.txt leaf-rows.md5; do
  echo "$f $(md5sum < "$out/$f" | cut -c1-12)"
done
