#!/usr/bin/env bash
# traverse_networkx.sh — `placebench order` agrees with networkx on random DAGs (specs/placeto.md §5).
#
# networkx >= 2.6 changed topological_sort, so topo and reversed-topo are compared with a
# transcription of the networkx 2.4 code (spec §5.2); dfs-preorder, dfs-postorder,
# lexico-topo, bfs (composed from nx.bfs_edges as in spec §5.6) and lexico are compared with
# the installed networkx, whose code for them is the same as 2.4's.
set -euo pipefail

: "${PB_BIN:?PB_BIN must name the placebench binary}"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# python3-networkx is a declared dependency: a missing networkx is a failure, not a skip.
PY=""
for candidate in ${PB_PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import networkx' 2>/dev/null; then
        PY=$candidate
        break
    fi
done
[ -n "$PY" ] || fail "no python3 with networkx found (install python3-networkx, or set PB_PYTHON)"
echo "using $PY, networkx $("$PY" -c 'import networkx; print(networkx.__version__)')"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Writes $work/<graph>.json and the expected orders $work/<graph>.<order>.expected.
"$PY" - "$work" <<'EOF'
import json
import random
import sys

import networkx as nx

out = sys.argv[1]


def nx24_topological_sort(G):
    """networkx 2.4 topological_sort (spec 5.2): Kahn with a LIFO list of ready nodes."""
    indegree = {v: d for v, d in G.in_degree() if d > 0}
    zero = [v for v, d in G.in_degree() if d == 0]
    result = []
    while zero:
        node = zero.pop()
        for _, child in G.edges(node):
            indegree[child] -= 1
            if indegree[child] == 0:
                zero.append(child)
                del indegree[child]
        result.append(node)
    assert not indegree, "cycle"
    return result


def spec_bfs(G):
    """Spec 5.6: sources sorted by name, each followed by its bfs_edges targets, repeats dropped."""
    sources = sorted(v for v, d in G.in_degree() if d == 0)
    walk = []
    for s in sources:
        walk.append(s)
        walk.extend(v for _, v in nx.bfs_edges(G, s))
    seen, result = set(), []
    for v in walk:
        if v not in seen:
            seen.add(v)
            result.append(v)
    return result


def orders(G):
    topo = nx24_topological_sort(G)
    return {
        "lexico": sorted(G.nodes),
        "topo": topo,
        "reversed-topo": topo[::-1],
        "dfs-preorder": list(nx.dfs_preorder_nodes(G)),
        "dfs-postorder": list(nx.dfs_postorder_nodes(G)),
        "lexico-topo": list(nx.lexicographical_topological_sort(G)),
        "bfs": spec_bfs(G),
    }


PARTS = ["layer", "Layer_1", "conv2d", "Conv2D", "gradients", "_grad", "a", "b0", "9x",
         "while", "Adam", "dense", "\u00e9tage", "z"]


def random_names(rng, n):
    names = set()
    while len(names) < n:
        depth = rng.randint(1, 3)
        names.add("/".join(rng.choice(PARTS) for _ in range(depth)) + "/" + str(rng.randint(0, 99)))
    names = sorted(names)
    rng.shuffle(names)
    return names


def random_dag(rng, n, density, duplicates):
    """Nodes inserted in random order; edges from lower to higher hidden rank, random order."""
    names = random_names(rng, n)
    rank = {v: i for i, v in enumerate(rng.sample(names, n))}
    edges = []
    for _ in range(int(density * n)):
        u, v = rng.sample(names, 2)
        if rank[u] > rank[v]:
            u, v = v, u
        edges.append((u, v))
    if duplicates:
        edges += rng.sample(edges, min(len(edges), 10))
    return names, edges


def write(name, names, edges, groups=None):
    nodes = []
    for v in names:
        node = {"id": v, "cost": 1.0}
        if groups:
            node["group"] = groups[v]
        nodes.append(node)
    doc = {"directed": True, "multigraph": False, "graph": {}, "nodes": nodes,
           "links": [{"source": u, "target": v} for u, v in edges]}
    with open(f"{out}/{name}.json", "w", encoding="utf-8") as f:
        json.dump(doc, f)


def expect(name, G):
    for order, nodes in orders(G).items():
        assert sorted(nodes) == sorted(G.nodes), (name, order)
        with open(f"{out}/{name}.{order}.expected", "w", encoding="utf-8") as f:
            f.write("".join(v + "\n" for v in nodes))


def digraph(names, edges):
    # A DiGraph keeps node and successor insertion order; a repeated edge keeps its place,
    # as the harness's graph builder does.
    G = nx.DiGraph()
    G.add_nodes_from(names)
    G.add_edges_from(edges)
    return G


rng = random.Random(20240611)
shapes = [(12, 1.0, False), (60, 0.8, False), (150, 1.5, True), (300, 2.5, False),
          (400, 0.6, True), (250, 4.0, False)]
for k, (n, density, dups) in enumerate(shapes):
    names, edges = random_dag(rng, n, density, dups)
    write(f"g{k}", names, edges)
    expect(f"g{k}", digraph(names, edges))

# A grouped graph: the harness orders the grouped graph, whose nodes are the groups in order of
# first appearance and whose edges are the crossing op edges in order of first crossing.
names, edges = random_dag(rng, 200, 1.5, False)
group_names = [f"grp/{i:02d}" for i in range(40)]
rng.shuffle(group_names)
# Groups are contiguous in a topological order of the ops, so the grouped graph stays acyclic.
G = digraph(names, edges)
topo = nx24_topological_sort(G)
groups = {v: group_names[i * len(group_names) // len(topo)] for i, v in enumerate(topo)}
write("grouped", names, edges, groups)
seen_groups = list(dict.fromkeys(groups[v] for v in names))
crossing = [(groups[u], groups[v]) for u, v in edges if groups[u] != groups[v]]
expect("grouped", digraph(seen_groups, crossing))
EOF

orders="lexico topo reversed-topo dfs-preorder dfs-postorder lexico-topo bfs"
checked=0
for json in "$work"/*.json; do
    graph=$(basename "$json" .json)
    for order in $orders; do
        actual="$work/$graph.$order.actual"
        "$PB_BIN" order --graph "$json" --traversal "$order" >"$actual" ||
            fail "placebench order --graph $graph.json --traversal $order exited with $?"
        if ! diff -u --label "networkx ($graph, $order)" --label "placebench ($graph, $order)" \
            "$work/$graph.$order.expected" "$actual" >"$work/diff"; then
            head -n 40 "$work/diff" >&2
            fail "$order on $graph differs from networkx (diff above: - networkx, + placebench)"
        fi
        checked=$((checked + 1))
    done
done
echo "ok: $checked (graph, order) pairs match networkx"

# random: a permutation of the nodes, the same for the same seed, another for another seed.
g=$work/g3.json
"$PB_BIN" order --graph "$g" --traversal random --seed 5 >"$work/r5a"
"$PB_BIN" order --graph "$g" --traversal random --seed 5 >"$work/r5b"
"$PB_BIN" order --graph "$g" --traversal random --seed 6 >"$work/r6"
if ! cmp -s "$work/r5a" "$work/r5b"; then
    fail "random with seed 5 gave two different orders"
fi
if cmp -s "$work/r5a" "$work/r6"; then
    fail "random gave the same order for seeds 5 and 6"
fi
if ! cmp -s <(LC_ALL=C sort "$work/r5a") <(LC_ALL=C sort "$work/g3.lexico.expected"); then
    fail "random is not a permutation of the nodes of g3"
fi
if cmp -s "$work/r5a" "$work/g3.lexico.expected"; then
    fail "random returned the nodes sorted by name"
fi
echo "ok: random is a seeded permutation"

# Bad input: clear message and non-zero exit.
expect_error() {
    local pattern=$1
    shift
    if "$PB_BIN" order "$@" >"$work/out" 2>"$work/err"; then
        fail "placebench order $* succeeded; expected an error matching '$pattern'"
    fi
    grep -q -- "$pattern" "$work/err" || fail "placebench order $*: error '$(cat "$work/err")' \
does not match '$pattern'"
    [ ! -s "$work/out" ] || fail "placebench order $* wrote to stdout on error"
}
printf '{"directed": true, "nodes": [{"id": "a"}, {"id": "b"}], "links": [{"source": "a", "target": "b"}, {"source": "b", "target": "a"}]}' >"$work/cyclic.json"
expect_error "cycle" --graph "$work/cyclic.json" --traversal topo
expect_error "no-such-order" --graph "$work/g0.json" --traversal no-such-order
expect_error "missing.json" --graph "$work/missing.json" --traversal topo
expect_error "seed" --graph "$work/g0.json" --traversal random --seed -3
expect_error "usage" --graph "$work/g0.json"
echo "ok: bad input is rejected"
