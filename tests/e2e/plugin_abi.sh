# A plugin built for another ABI major, or lacking a required operation, is refused with a
# message naming both versions; `list` shows it as refused.
source "$(dirname "$0")/lib/common.bash"

cat > abi.lua <<'LUA'
return experiment { datasets = "graphs/diamond.json", devices = 2, simulator = "fake",
                    placer = "wrong-abi" }
LUA
cat > noplace.lua <<'LUA'
return experiment { datasets = "graphs/diamond.json", devices = 2, simulator = "fake",
                    placer = "no-place" }
LUA
if "$PB_BIN" check abi.lua 2> abi.err; then fail "wrong-ABI plugin accepted"; fi
grep -q "ABI 2.0" abi.err && grep -Eq "this placebench has ABI 1\.[0-9]+" abi.err || fail "message does not name both ABIs: $(cat abi.err)"
grep -q "abi.lua:2:" abi.err || fail "message lacks file:line: $(cat abi.err)"
if "$PB_BIN" check noplace.lua 2> noplace.err; then fail "plugin without place accepted"; fi
grep -q "lacks the required operation 'place'" noplace.err || fail "$(cat noplace.err)"
"$PB_BIN" list > list.out
grep -q "refused: .*fixture-placer-wrong-abi.so was built for plugin ABI 2.0" list.out || fail "list: $(cat list.out)"
[ ! -e results ] || fail "a results folder was created by check"
echo ok
