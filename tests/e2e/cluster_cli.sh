#!/usr/bin/env bash
# cluster_cli.sh — `placebench cluster list|show`: the presets of configs/clusters.lua (built into
# the binary), a seeded random topology, and one-line errors for bad names and device counts.
source "$(dirname "$0")/lib/common.bash"

"$PB_BIN" cluster list >list.txt
for preset in gdp-p100 heterps heterps-types placeto-k80 tag-cloud tag-random tag-sfb tag-testbed tag-testbed-code; do
    grep -q "^$preset " list.txt || fail "cluster list lacks $preset: $(cat list.txt)"
done
[ "$(wc -l <list.txt)" -eq 9 ] || fail "cluster list: expected 9 presets: $(cat list.txt)"

# TAG §5.2 testbed: 4 V100 32GB on NVLink (2 links, 48 GB/s), 1080Ti and P100 machines on PCIe
# 3.0 (12 GB/s), 100 Gbit/s = 12500 B/us between machines.
"$PB_BIN" cluster show tag-testbed --devices 16 >testbed.txt
grep -q "^cluster tag-testbed: 16 devices on 7 machines" testbed.txt || fail "$(head -1 testbed.txt)"
grep -q "machine 0  4 x V100-32G; link 48000 B/us" testbed.txt || fail "testbed machine 0"
grep -q "machine 6  2 x P100; link 12000 B/us" testbed.txt || fail "testbed machine 6"
grep -Eq "^ +0 +48000 +12500 " testbed.txt || fail "testbed machine matrix row 0"
grep -q "transfer speed 12000 B/us" testbed.txt || fail "testbed Placeto bus"

# TAG's Table 5 cluster: two machines with one 1080Ti each, the testbed's 100 Gbit/s between.
"$PB_BIN" cluster show tag-sfb --devices 2 >sfb.txt
grep -q "^cluster tag-sfb: 2 devices on 2 machines" sfb.txt || fail "$(head -1 sfb.txt)"
grep -q "machine 1  1 x 1080Ti" sfb.txt || fail "tag-sfb machine 1: $(cat sfb.txt)"
grep -Eq "^ +0 +12000 +12500$" sfb.txt || fail "tag-sfb bandwidth row 0: $(cat sfb.txt)"

# The Placeto box: any n, 7600 B/us everywhere, delta1 5.7, delta2 25.
"$PB_BIN" cluster show placeto-k80 --devices 3 >k80.txt
grep -q "delta1 5.7 us, delta2 25 us, transfer speed 7600 B/us, init offset 0 us" k80.txt ||
    fail "placeto-k80 bus: $(tail -1 k80.txt)"

# Random topologies: the same seed gives the same cluster, another seed another one.
"$PB_BIN" cluster show tag-random --devices 12 --seed 7 >r7a.txt
"$PB_BIN" cluster show tag-random --devices 12 --seed 7 >r7b.txt
"$PB_BIN" cluster show tag-random --devices 12 --seed 8 >r8.txt
cmp -s r7a.txt r7b.txt || fail "tag-random seed 7 differs between two runs"
cmp -s <(tail -n +2 r7a.txt) <(tail -n +2 r8.txt) && fail "tag-random seeds 7 and 8 give the same cluster"

# Errors: one line on stderr, nothing on stdout, exit 1.
check_error() {
    local expect=$1
    shift
    status=0
    "$PB_BIN" cluster "$@" >out.txt 2>err.txt || status=$?
    [ "$status" -eq 1 ] || fail "cluster $*: exit status $status"
    [ ! -s out.txt ] || fail "cluster $*: wrote to stdout: $(cat out.txt)"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "cluster $*: stderr is not one line: $(cat err.txt)"
    grep -qF -- "$expect" err.txt || fail "cluster $*: error lacks '$expect': $(cat err.txt)"
}
check_error "unknown cluster preset 'tag-testbd' (did you mean 'tag-testbed'?)" show tag-testbd --devices 4
check_error "cluster 'tag-cloud': has 32 devices; devices = 33 does not fit" show tag-cloud --devices 33
check_error "devices must be 1..48 (got 49)" show tag-random --devices 49
check_error "--devices N is required" show heterps

# A config naming a preset: the device count and the name are checked before anything runs, and
# the error names the config's line of `cluster`.
cat >bad_count.lua <<'LUA'
return experiment {
  datasets = "graphs/tiny.json",
  devices = { 4, 20 },
  cluster = "tag-testbed",
  simulator = "fake",
  placer = "random",
}
LUA
sed 's/cluster = "tag-testbed"/cluster = { "placeto-k80", "tag-clod" }/; s/{ 4, 20 }/4/' bad_count.lua >bad_name.lua
check_config() {
    local config=$1 expect=$2
    status=0
    "$PB_BIN" check "$config" >out.txt 2>err.txt || status=$?
    [ "$status" -eq 1 ] || fail "check $config: exit status $status: $(cat err.txt)"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "check $config: stderr is not one line: $(cat err.txt)"
    grep -qF -- "$expect" err.txt || fail "check $config: error lacks '$expect': $(cat err.txt)"
}
check_config bad_count.lua "bad_count.lua:4: cluster 'tag-testbed': has 16 devices; devices = 20 does not fit"
check_config bad_name.lua "bad_name.lua:4: unknown cluster preset 'tag-clod' (did you mean 'tag-cloud'?)"
sed 's/{ 4, 20 }/{ 4, 16 }/' bad_count.lua >good.lua
"$PB_BIN" check good.lua >out.txt || fail "check good.lua failed"
grep -q "2 runs" out.txt || fail "check good.lua: $(cat out.txt)"
echo "ok"
