# `placebench simulate` on the graph of specs/placeto.md §1.6 (tests/data/sim/spec16.graph.json,
# grouped as {A,B}, {C}, {D}): --json against the spec's figures, --trace checked event by event,
# a group placement, and the errors for an incomplete placement, an unknown name and a device
# index out of range.  Expected values come from the spec's worked example and by hand below.
source "$(dirname "$0")/lib/common.bash"

graph="$PB_TESTDATA/sim/spec16.graph.json"
echo '{"A": 0, "B": 0, "C": 1, "D": 0}' >case1.json
echo '{"G_AB": 0, "G_C": 1, "G_D": 0}' >case1-groups.json
echo '{"A": 0, "B": 1, "C": 1, "D": 1}' >case3.json
echo '{"A": 0, "B": 1, "C": 2, "D": 0}' >fanout.json

# check_json FILE STEP PEAKS EVENTS — the --json output holds these numbers exactly.
check_json() {
    python3 - "$@" <<'PY' || fail "simulate --json $1: $(cat "$1")"
import json, sys
out = json.load(open(sys.argv[1]))
want = (float(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4]))
got = (out["step_time_us"], out["peak_memory_bytes"], out["n_events"])
assert got == want, "got %r, want %r" % (got, want)
PY
}

# Case 1 (A, B, D on GPU0; C on GPU1): 80.0 us, peaks [91200, 38000]; the spec's event table has
# 15 popped events (idle wake-ups at 41.4, 45, 55.7, 65.7 and 80 included).
"$PB_BIN" simulate --graph "$graph" --placement case1.json --json >case1.out ||
    fail "simulate case 1 failed"
check_json case1.out 80.0 '[91200, 38000]' 15
# The same placement given by group is expanded to the ops.
"$PB_BIN" simulate --graph "$graph" --placement case1-groups.json --json >groups.out ||
    fail "simulate by group failed"
check_json groups.out 80.0 '[91200, 38000]' 15
# Case 3 (A on GPU0; B, C, D on GPU1): 92.10000000000001 us, peaks [76000, 53200], 12 events.
"$PB_BIN" simulate --graph "$graph" --placement case3.json --json >case3.out ||
    fail "simulate case 3 failed"
check_json case3.out 92.10000000000001 '[76000, 53200]' 12
echo "ok: --json matches the spec's cases 1 and 3, by op and by group"

# check_trace TRACE SPEC — the trace's X events: one per op on tid 0 of its device, one per
# transfer on tid 1 of the sending device; SPEC lists (name, pid, ts, dur[, bytes, to]).
check_trace() {
    python3 - "$@" <<'PY' || fail "trace $1 is not as expected"
import json, sys
trace = json.load(open(sys.argv[1]))
want = json.loads(sys.argv[2])
events = trace["traceEvents"]
x = [e for e in events if e["ph"] == "X"]
ops = [e for e in x if e["cat"] == "op"]
transfers = [e for e in x if e["cat"] == "transfer"]
assert len(ops) == len(want["ops"]), "%d op events" % len(ops)
assert len(transfers) == len(want["transfers"]), "%d transfer events" % len(transfers)
assert all(e["tid"] == 0 for e in ops) and all(e["tid"] == 1 for e in transfers)
for e, (name, pid, ts, end) in zip(ops, want["ops"]):
    assert (e["name"], e["pid"], e["ts"]) == (name, pid, ts), e
    assert abs(e["ts"] + e["dur"] - end) < 1e-9, e
for e, (name, pid, ts, dur, size, to) in zip(transfers, want["transfers"]):
    assert (e["name"], e["pid"], e["ts"], e["dur"]) == (name, pid, ts, dur), e
    assert (e["args"]["bytes"], e["args"]["to"]) == (size, to), e
meta = {(e["name"], e["pid"], e["tid"]): e["args"] for e in events if e["ph"] == "M"}
for d in range(want["devices"]):
    assert meta[("process_name", d, 0)]["name"] == "GPU:%d" % d
    assert meta[("thread_name", d, 0)]["name"] == "compute"
    assert meta[("thread_name", d, 1)]["name"] == "bus (outgoing)"
PY
}

# Case 1: bus0 sends A's output 10-20 (76000 B at 7600 B/us) to GPU1; bus1 sends C's 50-55
# (38000 B) to GPU0.  B and D feed only their own device: no transfer.
"$PB_BIN" simulate --graph "$graph" --placement case1.json --trace case1.trace.json >/dev/null ||
    fail "simulate --trace failed"
check_trace case1.trace.json '{"devices": 2,
  "ops": [["A", 0, 0, 10], ["B", 0, 15.7, 35.7], ["C", 1, 20, 50], ["D", 0, 55, 60]],
  "transfers": [["A:0", 0, 10, 10, 76000, [1]], ["C:0", 1, 50, 5, 38000, [0]]]}'
# A on GPU0, B on GPU1, C on GPU2, D on GPU0: one transfer of A's output serves GPU1 and GPU2
# (10-20); B runs 20-40 and bus1 sends its 15200 B to GPU0 40-42; C runs 20-50 and bus2 sends
# 38000 B 50-55; D runs 55-60.  The last event is bus2's idle wake-up at 55+25 = 80: 18 events
# (hand count: run_dev GPU0 at 0; bus0 at 10; idle GPU0 at 15.7; two releases and two run_dev
# at 20; bus1 at 40; release at 42; idle bus0 at 45, GPU1 at 45.7; bus2 at 50; release and
# run_dev GPU0 at 55; idle GPU2 at 55.7, GPU0 at 65.7, bus1 at 67, bus2 at 80).
"$PB_BIN" simulate --graph "$graph" --placement fanout.json --json --trace fanout.trace.json \
    >fanout.out || fail "simulate fan-out failed"
check_json fanout.out 80.0 '[76000, 15200, 38000]' 18
check_trace fanout.trace.json '{"devices": 3,
  "ops": [["A", 0, 0, 10], ["B", 1, 20, 40], ["C", 2, 20, 50], ["D", 0, 55, 60]],
  "transfers": [["A:0", 0, 10, 10, 76000, [1, 2]], ["B:0", 1, 40, 2, 15200, [0]],
                ["C:0", 2, 50, 5, 38000, [0]]]}'
echo "ok: --trace has one event per op and per transfer, threads and processes named"

# expect_error NEEDLE ARGS... — simulate must fail (not by a signal) with NEEDLE on stderr.
expect_error() {
    local needle=$1
    shift
    local status=0
    "$PB_BIN" simulate --graph "$graph" "$@" >out.txt 2>err.txt || status=$?
    [ "$status" -ne 0 ] || fail "simulate $*: exit status 0"
    [ "$status" -lt 128 ] || fail "simulate $*: killed by a signal ($status)"
    [ ! -s out.txt ] || fail "simulate $*: printed on stdout: $(cat out.txt)"
    grep -qF -- "$needle" err.txt || fail "simulate $*: error lacks \"$needle\": $(cat err.txt)"
    echo "ok: $(cat err.txt)"
}
echo '{"A": 0, "B": 0, "C": 1}' >incomplete.json
expect_error "no device for op 'D'" --placement incomplete.json
echo '{"G_AB": 0, "G_C": 1}' >incomplete-groups.json
expect_error "no device for group 'G_D'" --placement incomplete-groups.json
echo '{"A": 0, "B": 0, "C": 1, "D": 0, "E": 1}' >unknown.json
expect_error "'E' is neither an op nor a group" --placement unknown.json
expect_error "op 'C' is placed on device 1, but --devices is 1" --placement case1.json --devices 1
echo '{"A": 0, "B": 0, "C": -1, "D": 0}' >negative.json
expect_error "op 'C': device must be an integer" --placement negative.json
echo "ok: bad placements refused"
