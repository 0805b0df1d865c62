#!/usr/bin/env python3
# gen_heterps.py — writes the HeterPS layer chains (CTRDNN-8/12/16/20, MATCHNET, 2EMB, NCE) of
# specs/heterps.md §5 as networkx node-link JSON into this folder (see README.md for the
# encoding).  Usage: python3 datasets/heterps/gen_heterps.py [OUT_DIR]
import json
import os
import sys


def layer(name, kind, inp, out, flops=0, params=0, cut=None, **attrs):
    """One layer; cut defaults to out (spec §4)."""
    return dict(name=name, kind=kind, inp=inp, out=out, flops=flops, params=params,
                cut=out if cut is None else cut, attrs=attrs)


def fc(name, i, o, cut=None):
    return layer(name, "FC", i, o, flops=2 * i * o, params=i * o + o, cut=cut)


def ctrdnn(n_layers):
    """CTRDNN-L: 26 ids into a 1,000,001 x 10 table, FC 400 x (L-5), softmax 2, loss."""
    chain = [layer("emb", "EMB", 26, 260, ids=26, dim=10, rows=1000001),
             layer("pool", "POOL", 260, 260, flops=260),
             layer("concat", "CONCAT", 273, 273),
             fc("fc1", 273, 400)]
    chain += [fc("fc%d" % k, 400, 400) for k in range(2, n_layers - 4)]
    chain += [fc("fc_out", 400, 2), layer("loss", "LOSS", 2, 1, flops=10)]
    assert len(chain) == n_layers
    return chain


def matchnet():
    """Multiview SimNet, towers query / positive / negative, GRU 128 over 79 / 99 / 90 steps."""
    chain = []
    live = 0  # outputs of earlier towers that stay live across later cuts
    for tower, steps in (("q", 79), ("pt", 99), ("nt", 90)):
        seq = steps * 128
        gru = steps * 3 * 2 * (128 + 128) * 128
        chain += [layer(tower + "_emb", "EMB", steps, seq, cut=seq + live, ids=steps, dim=128,
                        rows=6327),
                  layer(tower + "_gru", "RNN", seq, seq, flops=gru, params=98688, cut=seq + live,
                        steps=steps),
                  layer(tower + "_pool", "POOL", seq, 128, flops=seq, cut=128 + live),
                  layer(tower + "_fc", "FC", 128, 128, flops=32768, params=16512, cut=128 + live)]
        live += 128
    chain += [layer("cos_pos", "SIM", 256, 1, flops=768, cut=257),
              layer("cos_neg", "SIM", 256, 1, flops=768, cut=2),
              layer("hinge", "LOSS", 2, 1, flops=4),
              layer("mean", "REDUCE", 1, 1, flops=1)]
    return chain


def two_emb():
    """Wide & deep with two tables of 1e5 rows (dims 128 and 1), 22 ids per example."""
    return [layer("deep_emb", "EMB", 22, 2816, ids=22, dim=128, rows=100000),
            layer("deep_pool", "POOL", 2816, 128, flops=2816),
            layer("wide_emb", "EMB", 22, 22, cut=150, ids=22, dim=1, rows=100000),
            layer("wide_pool", "POOL", 22, 1, flops=22, cut=129),
            fc("fc64", 128, 64, cut=65),
            fc("fc32", 64, 32, cut=33),
            fc("fc1", 32, 1, cut=2),
            layer("concat", "CONCAT", 2, 2),
            fc("fc_out", 2, 2),
            layer("ce", "LOSS", 2, 1, flops=10)]


def nce():
    """Skip-gram with NCE, 5 negatives, vocabulary 354,051, dim 300.  The spec gives no input
    size for sampler and loss: they read the cut of the layer before them."""
    return [layer("in_emb", "EMB", 1, 300, ids=1, dim=300, rows=354051),
            layer("sampler", "SAMPLER", 300, 305, flops=100),
            layer("nce_w", "EMB", 6, 1806, cut=2106, ids=6, dim=301, rows=354051),
            layer("logits", "DOT", 2100, 6, flops=3600),
            layer("loss", "LOSS", 6, 1, flops=60)]


def fmt(v):
    return repr(int(v)) if float(v).is_integer() else repr(v)


def node_link(name, chain):
    nodes = []
    for y in chain:
        words = [y["kind"], "in=" + fmt(y["inp"]), "out=" + fmt(y["out"])]
        words += ["%s=%s" % (k, fmt(v)) for k, v in y["attrs"].items()]
        nodes.append({"id": y["name"], "type": " ".join(words), "cost": 0, "flops": y["flops"],
                      "mem": 4 * y["params"], "out_sizes": [4 * y["cut"]]})
    links = [{"source": a["name"], "target": b["name"], "port": 0}
             for a, b in zip(chain, chain[1:])]
    return {"directed": True, "multigraph": False, "graph": {"name": name}, "nodes": nodes,
            "links": links}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    models = [("ctrdnn-%d" % n, ctrdnn(n)) for n in (8, 12, 16, 20)]
    models += [("matchnet", matchnet()), ("2emb", two_emb()), ("nce", nce())]
    for name, chain in models:
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(node_link(name, chain), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
