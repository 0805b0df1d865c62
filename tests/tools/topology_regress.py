#!/usr/bin/env python3
"""topology_regress.py — pins the topology simulator's results on zoo graphs.

Two modes over one list of cases (a zoo model generated with a fixed seed, a cluster preset, a
device count and a strategy file):

  generate  --bin PLACEBENCH --out DIR   writes DIR/strategies/*.json (seeded, for each model)
                                         and DIR/expected.json from what PLACEBENCH prints
  check     --bin PLACEBENCH --data DIR  runs the same cases with another placebench and fails
                                         on the first difference

What is compared, per case: every field of `simulate --json` (step time, feasibility, per-device
peak memory and compute time, link busy times, throughput, monetary cost, events), exactly, and
the SHA-256 of the `--trace` file, which holds every task's device or link, start and end (so
per-node times and the compiled graph's placement are compared too).

tests/data/topology_regress/expected.json was generated with the build of main at commit
4842896 (before the simulator's speed work):
    git archive 4842896 | tar -x -C /tmp/base && cmake -S /tmp/base -B /tmp/base/build \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/base/build -j2
    python3 tests/tools/topology_regress.py generate --bin /tmp/base/build/placebench \
        --out tests/data/topology_regress
Those expectations hold with the plugin options base_groups=false prune=false
replace_placeholder=false sum_parts=false (the compiler of main knew neither TAG's base-group
fallback, nor the pruning to the sinks' ancestors, nor the shape Const before each Placeholder
replica, and added partial sums on one device before a split reader); `check` passes them.
They were made from graphs of the plain K80 roofline (dataset version 1, before the cost model
calibration); `check` generates the zoo graphs with `--cost-model roofline`, which reproduces
them, and so does `generate --cost-model roofline` with a build that has the option.
"""
import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile

MODELS = ["vgg19", "inceptionv3", "bert-small"]
ZOO_SEED = 1
CLUSTER = "tag-testbed"
# Per model: the device count each strategy runs on (16 = the whole testbed).
DEVICES = {"vgg19": 16, "inceptionv3": 16, "bert-small": 6}
# Options of the topology plugin that make this build compile as main did.
LEGACY_OPTIONS = ["simulator.base_groups=false", "simulator.prune=false",
                  "simulator.replace_placeholder=false", "simulator.sum_parts=false"]


def fixed_strategies(n):
    """Strategies that do not depend on the graph (default group and option only)."""
    all_devs = list(range(n))
    speeds = {16: [5.6, 5.6, 5.6, 5.6] + [4.0] * 8 + [3.3] * 4, 6: [5.6] * 4 + [4.0] * 2}[n]
    return {
        "single": {"device_groups": {"g0": [0]}, "default": {"group": "g0", "option": "none"}},
        "dp-allreduce": {"device_groups": {"all": all_devs},
                         "default": {"group": "all", "option": "allreduce"}},
        "dp-ps": {"device_groups": {"all": all_devs}, "default": {"group": "all", "option": "ps"}},
        "dp-shares": {"device_groups": {"all": all_devs},
                      "default": {"group": "all", "option": "allreduce"},
                      "shares": {"all": speeds}},
        "duplicate": {"device_groups": {"four": [0, 1, 2, 3]},
                      "default": {"group": "four", "option": "duplicate"}},
        "split": {"device_groups": {"four": [3, 2, 1, 0]},
                  "default": {"group": "four", "option": "split"}},
    }


def mixed_strategy(groups, n, seed):
    """Each op group of the graph on a seeded choice of device group and option."""
    rng = random.Random(seed)
    half = n // 2
    device_groups = {
        "all": list(range(n)),
        "low": list(range(half)),
        "high": list(range(half, n)),
        "pair": [1, n - 1],
        "d0": [0],
        "dlast": [n - 1],
    }
    choices = [("all", "allreduce"), ("all", "ps"), ("low", "allreduce"), ("high", "ps"),
               ("pair", "duplicate"), ("pair", "allreduce"), ("d0", "none"), ("dlast", "none")]
    ops = {}
    for name in groups:
        group, option = choices[rng.randrange(len(choices))]
        ops[name] = {"group": group, "option": option}
    return {"device_groups": device_groups, "default": {"group": "all", "option": "allreduce"},
            "ops": ops}


def graph_groups(path):
    with open(path) as f:
        g = json.load(f)
    seen, order = set(), []
    for node in g["nodes"]:
        name = node.get("group")
        if name is not None and name not in seen:
            seen.add(name)
            order.append(name)
    return order


def gen_graph(bin_, model, tmp, gen_extra):
    out = os.path.join(tmp, model)
    subprocess.run([bin_, "dataset", "gen", model, "--out", out, "--seed", str(ZOO_SEED)] +
                   gen_extra, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(out, model + ".json")


def run_case(bin_, graph, strategy, n, tmp, options):
    trace = os.path.join(tmp, "trace.json")
    cmd = [bin_, "simulate", "--graph", graph, "--strategy", strategy, "--cluster", CLUSTER,
           "--devices", str(n), "--json", "--trace", trace]
    for o in options:
        cmd += ["--opt", o]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip()}
    with open(trace, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    os.remove(trace)
    # METIS prints its warnings on stdout (a known wart of the split option), as many times as it
    # runs: the result is the last line.
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    return {"json": json.loads(lines[-1]), "trace_sha256": digest}


def cases(data, tmp, bin_, write, gen_extra):
    """Yields (name, graph, strategy path, devices) for every case."""
    sdir = os.path.join(data, "strategies")
    if write:
        os.makedirs(sdir, exist_ok=True)
    for model in MODELS:
        graph = gen_graph(bin_, model, tmp, gen_extra)
        n = DEVICES[model]
        strategies = fixed_strategies(n)
        groups = graph_groups(graph)
        strategies["mixed-1"] = mixed_strategy(groups, n, 1)
        strategies["mixed-2"] = mixed_strategy(groups, n, 2)
        for sname, s in strategies.items():
            path = os.path.join(sdir, "%s-%s.json" % (model, sname))
            if write:
                with open(path, "w") as f:
                    json.dump(s, f, indent=1, sort_keys=True)
                    f.write("\n")
            yield "%s/%s" % (model, sname), graph, path, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["generate", "check"])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out")
    ap.add_argument("--data")
    ap.add_argument("--option", action="append", default=[],
                    help="extra option for check (simulator.KEY=VALUE)")
    ap.add_argument("--cost-model",
                    help="dataset gen --cost-model for generate (check: always roofline)")
    a = ap.parse_args()
    data = a.out if a.mode == "generate" else a.data
    with tempfile.TemporaryDirectory() as tmp:
        if a.mode == "generate":
            got = {}
            extra = ["--cost-model", a.cost_model] if a.cost_model else []
            for name, graph, path, n in cases(data, tmp, a.bin, True, extra):
                got[name] = run_case(a.bin, graph, path, n, tmp, [])
            with open(os.path.join(data, "expected.json"), "w") as f:
                json.dump({"zoo_seed": ZOO_SEED, "cluster": CLUSTER, "cases": got}, f, indent=1,
                          sort_keys=True)
                f.write("\n")
            print("wrote %d cases" % len(got))
            return 0
        with open(os.path.join(data, "expected.json")) as f:
            expected = json.load(f)["cases"]
        bad = 0
        seen = 0
        for name, graph, path, n in cases(data, tmp, a.bin, False, ["--cost-model", "roofline"]):
            seen += 1
            got = run_case(a.bin, graph, path, n, tmp, LEGACY_OPTIONS + a.option)
            want = expected.get(name)
            if got != want:
                bad += 1
                print("DIFFERS: %s\n  expected %s\n  got      %s" % (name, json.dumps(want)[:600],
                                                                  json.dumps(got)[:600]))
            else:
                print("same: %s (%s)" % (name, "error" if "error" in got else
                                         "step %r us" % got["json"]["step_time_us"]))
        if seen != len(expected):
            print("the fixture has %d cases, the check ran %d" % (len(expected), seen))
            bad += 1
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
