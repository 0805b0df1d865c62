# .ci/check-layers refuses an include that goes up the layers, a third-party header outside its
# folder and a plugin reaching into another plugin's folder, and accepts the tree as it is.
source "$(dirname "$0")/lib/common.bash"
: "${PB_SRC:?}"
check="$PB_SRC/.ci/check-layers"

mkdir tree
cp -r "$PB_SRC/harness" "$PB_SRC/plugins" tree/
python3 "$check" tree > clean.out || fail "the unchanged tree is refused: $(cat clean.out)"

echo '#include "run/plan.h"' >> tree/harness/core/array.c
echo '#include <sqlite3.h>' >> tree/harness/model/graph.c
echo '#include "../placeto-gnn/messenger.h"' >> tree/plugins/embedding/pgnn/pgnn.c
echo '#include "nodelink.h"' >> tree/harness/store/store.c
if python3 "$check" tree > bad.out 2> bad.err; then fail "violations accepted: $(cat bad.out)"; fi
grep -q 'harness/core/array.c:[0-9]*: layer core includes "run/plan.h" of the higher layer run' bad.out || fail "upward include: $(cat bad.out)"
grep -q 'harness/model/graph.c:[0-9]*: <sqlite3.h> may only be included under harness/store/' bad.out || fail "sqlite outside store: $(cat bad.out)"
grep -q 'plugins/embedding/pgnn/pgnn.c:[0-9]*: "../placeto-gnn/messenger.h" reaches into another folder' bad.out || fail "plugin cross-include: $(cat bad.out)"
grep -q 'harness/store/store.c:[0-9]*: "nodelink.h" is not in this folder' bad.out || fail "bare cross-folder include: $(cat bad.out)"
[ "$(wc -l < bad.out)" = 4 ] || fail "expected 4 violations: $(cat bad.out)"
grep -q '4 include(s) break the layering' bad.err || fail "$(cat bad.err)"
echo ok
