#!/usr/bin/env bash
# networkx_crosscheck.sh — generated and imported graphs, exported as node-link JSON, load in
# networkx with the same node and edge counts, longest path and degree figures as placebench's.
set -euo pipefail
: "${PB_BIN:?PB_BIN must name the placebench binary}" "${PB_SRC:?PB_SRC must name the source tree}"

# Debian's python3-networkx lives with /usr/bin/python3; fall back to whatever python3 has it.
PY=/usr/bin/python3
if ! "$PY" -c 'import networkx' 2>/dev/null; then
    PY=python3
fi
"$PY" -c 'import networkx' || { echo "FAIL: no python3 with networkx" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for fam in cifar10 ptb nmt; do
    "$PB_BIN" dataset gen "$fam" --count 2 --seed 5 --out "$tmp/gen/$fam" 2>/dev/null
done
mkdir -p "$tmp/gen/msr"
for g in LayerGraphs/gnmt_training OperatorGraphs/bert_l-3_training; do
    "$PB_BIN" dataset import --msr "$PB_SRC/datasets/msr-dnn-partitioning/$g.json" \
        --out "$tmp/gen/msr/$(basename "$g").json"
done

cat > "$tmp/check.py" <<'EOF'
import json, sys
import networkx as nx

def load(path):
    with open(path) as f:
        data = json.load(f)
    try:  # networkx >= 3.4 reads "edges" unless told otherwise; 2.x knows only "links"
        return nx.node_link_graph(data, edges="links")
    except TypeError:
        return nx.node_link_graph(data)

def figures(g):
    return {
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "longest_path": nx.dag_longest_path_length(g),
        "max_in_degree": max((d for _, d in g.in_degree()), default=0),
        "max_out_degree": max((d for _, d in g.out_degree()), default=0),
        "degree_histogram": nx.degree_histogram(g),
    }

stats = json.loads(sys.argv[1])
failed = False
for level, path in (("op", sys.argv[2]), ("grouped", sys.argv[3])):
    g = load(path)
    if not g.is_directed() or not nx.is_directed_acyclic_graph(g):
        print(f"FAIL {stats['graph']} {level}: networkx does not see a DAG")
        failed = True
        continue
    ours, theirs = stats[level], figures(g)
    for key, value in theirs.items():
        if ours[key] != value:
            print(f"FAIL {stats['graph']} {level} {key}: placebench {ours[key]} networkx {value}")
            failed = True
if not failed:
    print(f"ok {stats['graph']}: op {stats['op']['nodes']}/{stats['op']['edges']} "
          f"grouped {stats['grouped']['nodes']}/{stats['grouped']['edges']} "
          f"longest {stats['grouped']['longest_path']}")
sys.exit(1 if failed else 0)
EOF

status=0
count=0
for f in "$tmp"/gen/*/*.json; do
    "$PB_BIN" dataset export --graph "$f" --out "$tmp/op.json"
    "$PB_BIN" dataset export --graph "$f" --out "$tmp/grouped.json" --grouped
    stats=$("$PB_BIN" dataset stats --json "$f")
    "$PY" "$tmp/check.py" "$stats" "$tmp/op.json" "$tmp/grouped.json" || status=1
    # the generated file itself loads the same as its export
    "$PY" "$tmp/check.py" "$stats" "$f" "$tmp/grouped.json" > /dev/null || status=1
    count=$((count + 1))
done
[ "$count" -eq 8 ] || { echo "FAIL: expected 8 graphs, checked $count" >&2; exit 1; }
[ "$status" -eq 0 ] || { echo "FAIL: networkx disagrees with placebench" >&2; exit 1; }
echo "networkx agrees on $count graphs"
