#!/usr/bin/env python3
"""torch_export.py — a real model's training step from PyTorch as node-link JSON for placebench.

Run by `placebench dataset import --torch MODEL --out FILE` (or directly:
torch_export.py MODEL --out FILE [--batch B]).  The model's training step (forward, the loss,
autograd's backward and an SGD update of every parameter) is traced by functorch's make_fx into
one graph of aten operators; shapes come from running it on real tensors (ShapeProp).  Each
operator becomes a node with:
  type       the aten operator ("convolution", "convolution_backward", "addmm", ...);
  flops      convolutions 2 x outputs x (in channels / groups) x kernel area, their backward that
             for each gradient it produces, matrix products 2 m k n, everything else one per output
             element; views, metadata and tuple access compute nothing;
  bytes      the bytes of its tensor inputs and outputs (0 for views);
  mem        the bytes of a parameter or buffer (placeholders only);
  out_sizes  bytes of each output (tuple outputs are read through getitem, folded into ports);
  cost       the plain K80 roofline (the generators' `--cost-model roofline`, model/devcost.h):
             5 us + max(flops / 2.8e12, bytes / 240e9) s, 1 us for an operator that moves and
             computes nothing; not the calibrated per-class model (aten ops are not classified).
Models: torchvision's inception_v3 (299 x 299, no aux head), resnet101 and vgg19 (224 x 224),
and a BERT-style encoder (bert-small's sizes: hidden and feed-forward 1024, 4 layers, 16
heads, sequence 128, a 30,522-word vocabulary, a span head of 2 logits).  Deterministic: weights
and data come from a fixed seed; the graph depends on shapes only.
"""
import argparse
import json
import operator
import sys

import torch
import torch.nn.functional as F
import torchvision
from functorch import make_functional_with_buffers
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.shape_prop import ShapeProp

K80_FLOPS, K80_BW, LAUNCH_US, HOST_US = 2.8e12, 240e9, 5.0, 1.0
VIEWS = {"view", "_reshape_alias", "t", "transpose", "permute", "expand", "detach", "unsqueeze",
         "squeeze", "alias", "slice", "select", "as_strided", "empty", "_unsafe_view"}


class BertStyle(torch.nn.Module):
    """Embeddings (word, position, token type) + LayerNorm, a post-LN GELU encoder, a span head."""

    def __init__(self, vocab=30522, hidden=1024, layers=4, heads=16, ff=1024, seq=128):
        super().__init__()
        self.word = torch.nn.Embedding(vocab, hidden)
        self.position = torch.nn.Embedding(512, hidden)
        self.token_type = torch.nn.Embedding(2, hidden)
        self.norm = torch.nn.LayerNorm(hidden)
        self.drop = torch.nn.Dropout(0.1)
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, ff, 0.1, activation="gelu",
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.span = torch.nn.Linear(hidden, 2)
        self.seq = seq

    def forward(self, ids):
        pos = torch.arange(self.seq).unsqueeze(0)
        x = self.word(ids) + self.position(pos) + self.token_type(torch.zeros_like(ids))
        x = self.encoder(self.drop(self.norm(x)))
        return self.span(x).sum(dim=1)  # [batch, 2]: start and end scores


def build(name, batch):
    """The model and one batch of inputs and integer labels."""
    if name == "bert":
        model = BertStyle()
        return model, torch.randint(0, 30522, (batch, model.seq)), torch.randint(0, 2, (batch,))
    if name == "inception_v3":
        model = torchvision.models.inception_v3(aux_logits=False, init_weights=False)
        size = 299
    elif name in ("resnet101", "vgg19"):
        model = getattr(torchvision.models, name)()
        size = 224
    else:
        raise SystemExit(f"torch_export: unknown model '{name}' (inception_v3, resnet101, vgg19, "
                         "bert)")
    return model, torch.randn(batch, 3, size, size), torch.randint(0, 1000, (batch,))


def trace(model, x, y):
    """The training step as an aten graph with shapes, and the parameter placeholders."""
    model.train()
    fmodel, params, buffers = make_functional_with_buffers(model)

    def step(params, buffers, x, y):
        loss = F.cross_entropy(fmodel(params, buffers, x), y)
        grads = torch.autograd.grad(loss, params)
        return [p - 0.01 * g for p, g in zip(params, grads)]

    gm = make_fx(step)(params, buffers, x, y)
    ShapeProp(gm).propagate(*params, *buffers, x, y)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return gm, set(placeholders[:len(params)]), set(placeholders[len(params):-2])


def metas(node):
    """The TensorMetadata of each output of node (a tuple output gives several)."""
    m = node.meta.get("tensor_meta")
    if m is None:
        return []
    if hasattr(m, "shape"):  # TensorMetadata is itself a named tuple
        return [m]
    return [x for x in m if hasattr(x, "shape")] if isinstance(m, (tuple, list)) else []


def nbytes(meta):
    if not hasattr(meta, "shape"):
        return 0
    n = 1
    for d in meta.shape:
        n *= int(d)
    return n * torch.empty((), dtype=meta.dtype).element_size()


def numel(meta):
    n = 1
    for d in getattr(meta, "shape", ()):
        n *= int(d)
    return n


def shape_of(arg):
    m = metas(arg) if isinstance(arg, torch.fx.Node) else []
    return list(m[0].shape) if m else []


def flops_of(node, kind, outs):
    a = node.args
    if kind == "convolution":
        w = shape_of(a[1])
        return 2.0 * numel(outs[0]) * w[1] * w[2] * w[3]
    if kind == "convolution_backward":
        dy, w, mask = shape_of(a[0]), shape_of(a[2]), a[-1]
        per = 2.0 * (numel_list(dy)) * w[1] * w[2] * w[3]
        return per * (int(bool(mask[0])) + int(bool(mask[1])))
    if kind in ("mm", "addmm", "bmm"):
        x = shape_of(a[1] if kind == "addmm" else a[0])
        return 2.0 * numel(outs[0]) * x[-1]
    return float(sum(numel(o) for o in outs))


def numel_list(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def export(name, batch):
    torch.manual_seed(0)
    model, x, y = build(name, batch)
    gm, params, buffers = trace(model, x, y)
    nodes, links, source = [], [], {}
    for node in gm.graph.nodes:
        if node.op == "output":
            continue
        if node.op == "call_function" and node.target is operator.getitem:
            source[node] = (source[node.args[0]][0], node.args[1])
            continue
        outs = metas(node)
        sizes = [nbytes(o) for o in outs]
        if node.op == "placeholder":
            kind = "Parameter" if node in params else "Buffer" if node in buffers else "Input"
            rec = {"id": node.name, "type": kind, "cost": HOST_US, "out_sizes": sizes,
                   "mem": float(sum(sizes)) if kind != "Input" else 0.0}
        else:
            kind = str(node.target).split(".")[1] if str(node.target).startswith("aten.") \
                else str(node.target)
            inputs = [i for i in node.all_input_nodes if i in source]
            view = kind.rstrip("_") in VIEWS
            flops = 0.0 if view else flops_of(node, kind.rstrip("_"), outs)
            moved = 0.0 if view else float(sum(sizes) + sum(
                nbytes(metas(i)[0]) if metas(i) else 0 for i in inputs))
            cost = HOST_US if view else LAUNCH_US + 1e6 * max(flops / K80_FLOPS, moved / K80_BW)
            rec = {"id": node.name, "type": kind, "cost": cost, "out_sizes": sizes,
                   "flops": flops, "bytes": moved}
            for i in node.all_input_nodes:
                if i in source:
                    src, port = source[i]
                    links.append({"source": src, "target": node.name, "port": port})
        source[node] = (node.name, 0)
        nodes.append(rec)
    return {"directed": True, "multigraph": False,
            "graph": {"name": f"torch-{name}-b{batch}"}, "nodes": nodes, "links": links}, \
        sum(nbytes(metas(p)[0]) for p in params)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=2)
    args = ap.parse_args()
    graph, param_bytes = export(args.model, args.batch)
    with open(args.out, "w") as f:
        json.dump(graph, f)
    print(f"torch_export: {args.model}: {len(graph['nodes'])} ops, {len(graph['links'])} links, "
          f"{param_bytes / 2**20:.1f} MiB of parameters -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
