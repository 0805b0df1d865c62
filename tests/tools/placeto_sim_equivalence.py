#!/usr/bin/env python3
"""placeto_sim_equivalence.py — compares `placebench simulate` with the Placeto reference simulator
on random graphs whose links come in any order.

Not part of the test suite: it needs a checkout of the reference code, which the project does not
ship.  Usage:

    placeto_sim_equivalence.py PLACEBENCH REF_DIR [COUNT] [SEED]

REF_DIR holds the package tf_placement_sim/ (tf_sim.py, tf_pl_simulator.py and an empty
__init__.py) from bwhub/Graph_Traversal_Order_in_Device_Placement, sim/tf_placement_sim.  Each
graph has 2-40 ops whose node list is in random (not topological) order, integer or fractional
costs (some absent, some 0), 1-3 output ports (some absent), inputs with repeated parents,
control inputs ('^p') and ports 0-2; its links are written in a random interleaving of the
nodes' input lists (each node's inputs keep their order, so the last link from a parent still
names the port, as in the reference).  The placement is random on 1-8 devices.  Compared: step
time and per-device peak memory (exactly), event count, and every op's start time (from the
trace, to 1e-9 relative).  Prints the mismatches and a summary line; exits 1 on any mismatch.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

NAME_CHARS = "abcqXYZ019_/"


class StandIn:
    """What the reference reads of a TensorFlow metagraph: node name, op and input strings."""

    class Node:
        def __init__(self, name, inputs):
            self.name, self.op, self.device, self.input = name, "Op", "", inputs

    def __init__(self, nodes):
        class GraphDef:
            pass

        self.graph_def = GraphDef()
        self.graph_def.node = nodes


def random_graph(rng):
    n = rng.randint(2, 40)
    names = set()
    while len(names) < n:
        names.add("".join(rng.choice(NAME_CHARS) for _ in range(rng.randint(1, 9))))
    topo = sorted(names)
    rng.shuffle(topo)  # a topological order; the node list is another permutation of it
    rank = {v: i for i, v in enumerate(topo)}
    node_list = topo[:]
    rng.shuffle(node_list)
    costs, outs, inputs = {}, {}, {}
    for v in topo:
        r = rng.random()
        if r < 0.1:
            pass  # absent: 0 in the reference
        elif r < 0.2:
            costs[v] = 0
        elif r < 0.6:
            costs[v] = rng.randint(1, 80)
        else:
            costs[v] = round(rng.uniform(0.5, 80), rng.choice([1, 3, 6]))
        if rng.random() > 0.1:
            outs[v] = [rng.choice([0, rng.randint(1, 300000), round(rng.uniform(1, 3e5), 2)])
                       for _ in range(rng.randint(1, 3))]
        ins = []
        earlier = topo[: rank[v]]
        if earlier:
            for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
                p = rng.choice(earlier)
                kind = rng.random()
                if kind < 0.1:
                    ins.append("^" + p)
                elif kind < 0.6:
                    ins.append(p)
                else:
                    ins.append("%s:%d" % (p, rng.randint(0, 2)))
        inputs[v] = ins
    return node_list, costs, outs, inputs


def reference(node_list, costs, outs, inputs, placement, n_dev):
    from tf_placement_sim.tf_pl_simulator import ImportantOpsSimulator
    from tf_placement_sim.tf_sim import Simulator

    mg = StandIn([StandIn.Node(v, list(inputs[v])) for v in node_list])
    sim = ImportantOpsSimulator.__new__(ImportantOpsSimulator)
    devices = ["/device:GPU:%d" % d for d in range(n_dev)]
    Simulator.__init__(sim, mg, dict(costs), {k: list(v) for k, v in outs.items()}, devices)
    r, peak, _ = sim.simulate(dict(placement), sim_mem_usage=True)
    start = {v: sim.f[v].start_time for v in node_list}
    return r, peak, start


def parse_input(s):
    s = s[1:] if s[0] == "^" else s
    if ":" not in s:
        s += ":0"
    p, o = s.split(":")
    return p, int(o)


def node_link(node_list, costs, outs, inputs, rng):
    nodes = []
    for v in node_list:
        d = {"id": v}
        if v in costs:
            d["cost"] = costs[v]
        if v in outs:
            d["out_sizes"] = outs[v]
        nodes.append(d)
    queues = [[(parse_input(s), v) for s in inputs[v]] for v in node_list]
    queues = [q for q in queues if q]
    links = []
    while queues:
        q = rng.choice(queues)
        (p, o), v = q.pop(0)
        links.append({"source": p, "target": v, "port": o})
        if not q:
            queues.remove(q)
    return {"directed": True, "multigraph": False, "graph": {}, "nodes": nodes, "links": links}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    pb, ref_dir = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    sys.path.insert(0, ref_dir)
    import warnings

    warnings.simplefilter("ignore", SyntaxWarning)
    rng = random.Random(seed)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        gpath, ppath, tpath = (os.path.join(tmp, f) for f in ("g.json", "p.json", "t.json"))
        for case in range(count):
            node_list, costs, outs, inputs = random_graph(rng)
            n_dev = rng.randint(1, 8)
            placement = {v: rng.randrange(n_dev) for v in node_list}
            with open(gpath, "w") as f:
                json.dump(node_link(node_list, costs, outs, inputs, rng), f)
            with open(ppath, "w") as f:
                json.dump(placement, f)
            want_r, want_peak, want_start = reference(node_list, costs, outs, inputs, placement,
                                                      n_dev)
            out = subprocess.run([pb, "simulate", "--graph", gpath, "--placement", ppath,
                                  "--devices", str(n_dev), "--json", "--trace", tpath],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print("case %d: placebench failed: %s" % (case, out.stderr.strip()))
                bad += 1
                continue
            got = json.loads(out.stdout)
            start = {}
            for e in json.load(open(tpath))["traceEvents"]:
                if e.get("ph") == "X" and e.get("tid") == 0:
                    start[e["name"]] = e["ts"]
            why = []
            if got["step_time_us"] != want_r:
                why.append("step time %r, reference %r" % (got["step_time_us"], want_r))
            if got["peak_memory_bytes"] != [float(x) for x in want_peak]:
                why.append("peak memory %r, reference %r" % (got["peak_memory_bytes"], want_peak))
            for v in node_list:
                w, g = want_start[v], start.get(v)
                if g is None or abs(g - w) > 1e-9 * max(1.0, abs(w)):
                    why.append("op %s starts at %r, reference %r" % (v, g, w))
                    break
            if why:
                bad += 1
                print("case %d (%d ops, %d devices): %s" % (case, len(node_list), n_dev,
                                                             "; ".join(why)))
    print("%d graphs, %d mismatches" % (count, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
