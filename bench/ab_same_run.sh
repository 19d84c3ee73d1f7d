# Same-run A/B of the four bench scripts: a base tree (AB_BASE, default .wt/base: `git archive 4b471d6 | tar -x -C .wt/base`)
# and this tree, alternated twice in one process tree, each bench process holding a CUDA context (see
# dmlwgsl.benchmark.hold_clocks). Run on the device: `source .gpu/enter.sh && OUT=/tmp/ab bash bench/ab_same_run.sh`.
set -u
SITE=${TMPDIR:-/tmp}/dmlwgsl-site
for round in 1 2; do
  for tree in base new; do
    if [ $tree = base ]; then root=$PWD/${AB_BASE:-.wt/base}; else root=$PWD; fi
    for s in ${AB_SCRIPTS:-depth_to_space space_to_depth resample convolution_integer}; do
      extra=""; [ $s = resample ] && extra="--no-torch"
      [ $s = depth_to_space ] || [ $s = space_to_depth ] && extra="--dtype float32 --dtype float16 --dtype uint8 --dtype int64"
      ( cd $root && PYTHONPATH=$SITE:$root/src timeout 200 python3 -c "import torch, runpy, sys; torch.zeros(1, device='cuda'); torch.cuda.synchronize(); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')" bench/bench_$s.py --json $extra > $OUT/$tree$round-$s.json 2> $OUT/$tree$round-$s.err ) || echo "$tree $s rc=$?"
    done
  done
done
python3 - <<'PY'
import json, os, glob, collections, math
out = os.environ["OUT"]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
names = {}
for f in sorted(glob.glob(out + "/*.json")):
    tag = os.path.basename(f).split("-")[0].rstrip("12")
    try:
        d = json.load(open(f))
    except Exception as e:
        print("bad", f, e); continue
    seen = collections.Counter()
    for r in d["rows"]:
        ms = r.get("ms")
        if not ms or (isinstance(ms, float) and math.isnan(ms)) or r["op"] in ("torch", "dot4_ceiling", "copy"):
            continue
        k0 = (r["op"][:20], r["shape"], r["dtype"], r["variant"] if r["op"] != "convolution_integer" else "")
        seen[k0] += 1
        key = k0 + (seen[k0],)
        rows[key][tag].append(ms)
        names.setdefault(key, {})[tag] = r["variant"]
print(f"{'config':70} {'base ms':>9} {'new ms':>9} {'new/base':>8}")
worst = 0
for k, v in rows.items():
    label = " ".join(map(str, k[:3])) + " " + " / ".join(names[k].get(t, "?")[:24] for t in ("base", "new"))
    if not v.get("base") or not v.get("new"):
        print("unmatched", label, dict(v)); continue
    b, n = min(v["base"]), min(v["new"])
    worst = max(worst, n / b)
    print(f"{label[:70]:70} {b:9.4f} {n:9.4f} {n / b:8.3f}")
print("worst new/base", round(worst, 3))
PY
cd $OUT && tar czf ab.tgz *.json *.err && rm -f *.json *.err
