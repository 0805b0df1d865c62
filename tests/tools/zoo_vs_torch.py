#!/usr/bin/env python3
"""zoo_vs_torch.py — a generated zoo graph beside the PyTorch trace of the same model.

Not part of the test suite (it needs torch and a few seconds per model).  Usage:

    zoo_vs_torch.py PLACEBENCH [BATCH]

For vgg19, resnet101, inceptionv3 and bert-small it runs `dataset gen MODEL --batch BATCH` and
`dataset import --torch` of the matching torchvision model or BERT-style encoder at the same
batch (default 2), then prints per model the op counts, the training step's total FLOPs, the
traced parameter bytes and a histogram of op classes (TensorFlow and aten op types mapped to
the same classes).  The traced graphs are aten-level: one convolution_backward computes both
gradients of a convolution, and there are no Consts, Identities, gradient tuples or initializers,
so op counts differ by design; FLOPs and parameters are what should agree.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

PAIRS = [("vgg19", "vgg19"), ("resnet101", "resnet101"), ("inceptionv3", "inception_v3"),
         ("bert-small", "bert")]
CLASSES = [
    ("conv", {"Conv2D", "convolution"}),
    ("conv-grad", {"Conv2DBackpropInput", "Conv2DBackpropFilter", "convolution_backward"}),
    ("matmul", {"MatMul", "BatchMatMulV2", "mm", "addmm", "bmm"}),
    ("activation", {"Relu", "ReluGrad", "relu", "threshold_backward", "gelu", "gelu_backward",
                    "Tanh", "TanhGrad"}),
    ("optimizer", {"ApplyAdam", "ApplyGradientDescent"}),
    ("variable", {"VariableV2", "Parameter", "Buffer"}),
    ("bookkeeping", {"Const", "Identity", "NoOp", "Shape", "ShapeN", "BroadcastGradientArgs",
                     "Reshape", "view", "_reshape_alias", "t", "detach", "expand", "transpose",
                     "permute", "unsqueeze", "squeeze", "Placeholder", "Input", "Fill", "Assign",
                     "RandomUniform", "TruncatedNormal", "InvertPermutation", "Transpose",
                     "clone"}),
]


def op_class(kind):
    kind = kind.rstrip("_")
    for name, kinds in CLASSES:
        if kind in kinds:
            return name
    if "BatchNorm" in kind or "batch_norm" in kind:
        return "batch-norm"
    if "Pool" in kind or "pool" in kind:
        return "pool"
    return "other"


def summary(path):
    g = json.load(open(path))
    hist = collections.Counter(op_class(n["type"]) for n in g["nodes"])
    flops = sum(n.get("flops", 0) for n in g["nodes"])
    params = sum(n.get("mem", 0) for n in g["nodes"] if n["type"] == "Parameter")
    return len(g["nodes"]), flops, params, hist


def main():
    pb, batch = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "2"
    with tempfile.TemporaryDirectory() as tmp:
        for zoo, torch_name in PAIRS:
            subprocess.run([pb, "dataset", "gen", zoo, "--batch", batch, "--out", tmp], check=True,
                           stderr=subprocess.DEVNULL)
            traced = os.path.join(tmp, f"torch-{zoo}.json")
            subprocess.run([pb, "dataset", "import", "--torch", torch_name, "--batch", batch,
                            "--out", traced], check=True, stderr=subprocess.DEVNULL)
            ops_g, flops_g, _, hist_g = summary(os.path.join(tmp, f"{zoo}.json"))
            ops_t, flops_t, params_t, hist_t = summary(traced)
            print(f"{zoo}: ops {ops_g} generated / {ops_t} traced; GFLOP {flops_g / 1e9:.1f} / "
                  f"{flops_t / 1e9:.1f}; traced parameters {params_t / 2**20:.1f} MiB")
            print("   " + "  ".join(f"{k} {hist_g.get(k, 0)}/{hist_t.get(k, 0)}"
                                    for k in sorted(set(hist_g) | set(hist_t))))


if __name__ == "__main__":
    main()
