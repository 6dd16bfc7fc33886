#!/bin/bash
# A sweep's progress (docs/sweeps.md, "Progress"): on a terminal, one live line per level redrawn
# in place ("\r\033[K" and no newline between redraws) that names the level i/n, its phase,
# elapsed and remaining seconds, requests in flight, req/s, TTFT p50 so far and the errors; when
# stderr is not a terminal, the same line as plain timestamped lines, with no escape codes. The
# terminal is a pseudo-terminal the test opens (python3 pty), the server the embedded mock.
# ctest: parallel (it reads the lines' form and order, not their timing)
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/sweep.yaml" <<YAML
seed: 9
target: {ignore_eos: true}
workload: {input_tokens: 16, output_tokens: 12}
scheduler: {kind: concurrent}
sweep:
  concurrency: [2, 4]
  warmup: 2s
  snapshots: {count: 2, duration: 1500ms}
  drain: 2s
  exclude_error_pct: 100
mock: {ttft: 20ms, itl: 10ms, fail_rate: 0.1}
validity: {max_schedule_lag: 2s}
YAML

# stderr (and stdout) on a pseudo-terminal: every byte the controller writes there is kept.
python3 - "$STAMPEDE" "$WORK/sweep.yaml" "$WORK/tty-out" "$WORK/tty.bytes" <<'PY' ||
import os, pty, select, subprocess, sys, time
stampede, config, out, dump = sys.argv[1:5]
master, slave = pty.openpty()
proc = subprocess.Popen([stampede, "run", config, "--workers", "1", "--allow-invalid", "--out", out],
                        stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, close_fds=True)
os.close(slave)
data, deadline = b"", time.monotonic() + 90
while time.monotonic() < deadline:
    ready, _, _ = select.select([master], [], [], 1)
    if ready:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its side
            chunk = b""
        if not chunk:
            break
        data += chunk
    elif proc.poll() is not None:
        break
else:
    proc.kill()
    sys.exit("the sweep on a terminal did not end within 90 s")
open(dump, "wb").write(data)
sys.exit(proc.wait(timeout=30))
PY
    fail "the sweep on a terminal failed: $(tail -c 600 "$WORK/tty.bytes" | tr '\r\033' '|^')"

python3 - "$WORK/tty.bytes" <<'PY' || fail "the live line on a terminal is not right"
import re, sys
data = open(sys.argv[1], "rb").read().decode()
LINE = re.compile(
    r"level (?P<i>\d+)/(?P<n>\d+) concurrency (?P<c>\d+) rep 1/1 \| "
    r"(?P<phase>starting|warm-up|snapshot (?P<snap>\d)/2|drain) (?P<elapsed>\d+) s, "
    r"(?P<left>\d+) s left \| sweep about (?P<eta>\d+ s|\d+ min \d+ s) left \| "
    r"in flight (?P<inflight>\d+) \| (?P<rps>\d+\.\d) req/s \| "
    r"TTFT p50 (?P<ttft>-|\d+(\.\d+)?) ms \| (?P<errors>\d+) errors$")
CLEAR = "\r\033[K"
# Each redraw is CLEAR + the line; what follows it is the next redraw, or a CLEAR + a message
# line ending in a newline, or the end. Split on CLEAR: every part is a live line (no newline),
# or a message line (ends in "\n"), or empty (a CLEAR that only wiped the line).
parts = data.split(CLEAR)
lives, redraws = [], 0
for k, part in enumerate(parts[1:], 1):
    if not part or part.endswith("\n"):
        continue
    m = LINE.match(part)
    assert m, f"a redraw that is not the live line: {part!r}"
    lives.append(m)
    # in place: the previous part was a live line too (no newline between the two)
    if k > 1 and parts[k - 1] and not parts[k - 1].endswith("\n") and LINE.match(parts[k - 1]):
        redraws += 1
assert len(lives) >= 6, f"{len(lives)} live lines in {len(data)} bytes"
assert redraws >= 4, f"only {redraws} in-place redraws"
assert "\n" not in "".join(m.group(0) for m in lives)
seen = {(m["i"], m["c"], "snapshot" if m["snap"] else m["phase"]) for m in lives}
for want in (("1", "2", "warm-up"), ("1", "2", "snapshot"), ("2", "4", "warm-up"),
             ("2", "4", "snapshot")):
    assert want in seen, f"no live line for level/concurrency/phase {want}: {sorted(seen)}"
assert all(m["n"] == "2" for m in lives), "level i/n does not say 2 levels"
for m in lives:  # warm-up and snapshots: elapsed + left = 2 s + 2 x 1.5 s (each rounded)
    if m["phase"] in ("warm-up",) or m["snap"]:
        assert abs(int(m["elapsed"]) + int(m["left"]) - 5) <= 1, m.group(0)
    assert int(m["inflight"]) <= int(m["c"]), m.group(0)
measured = [m for m in lives if m["snap"]]
assert any(m["ttft"] != "-" and 15 < float(m["ttft"]) < 500 for m in measured), \
    [m["ttft"] for m in measured]
assert any(float(m["rps"]) > 0 for m in measured), [m["rps"] for m in measured]
for level in ("1", "2"):  # each level counts its own errors, from 0
    errors = [int(m["errors"]) for m in lives if m["i"] == level]
    assert errors == sorted(errors) and errors[-1] > 0, \
        f"level {level}: errors {errors}: 10 % of requests fail"
# the levels in order: no line of level 1 after one of level 2
order = [int(m["i"]) for m in lives]
assert order == sorted(order), order
print(f"ok: {len(lives)} live lines, {redraws} redrawn in place, phases {sorted(seen)}")
PY

# Not a terminal: the same line, one per second, each stamped [HH:MM:SS], no escape codes.
sed -e 's/concurrency: \[2, 4\]/concurrency: [3]/' "$WORK/sweep.yaml" >"$WORK/plain.yaml"
run_bounded 60 /dev/null "$WORK/plain.err" "$WORK/plain.yaml" --workers 1 --allow-invalid \
    --out "$WORK/plain-out"
[ "$RUN_RC" = 0 ] || fail "the plain sweep exited $RUN_RC: $(tail -5 "$WORK/plain.err")"
python3 - "$WORK/plain.err" <<'PY' || fail "the plain progress lines are not right"
import re, sys
text = open(sys.argv[1]).read()
assert "\r" not in text and "\033" not in text, "escape codes on a file"
LINE = re.compile(r"^\[\d\d:\d\d:\d\d\] level 1/1 concurrency 3 rep 1/1 \| "
                  r"(starting|warm-up|snapshot [12]/2|drain) \d+ s, \d+ s left \| "
                  r"sweep about \d+ s left \| in flight \d+ "
                  r"\| \d+\.\d req/s \| TTFT p50 (-|\d+(\.\d+)?) ms \| \d+ errors$")
lines = [l for l in text.splitlines() if l.startswith("[")]  # messages say "run: ..."
assert len(lines) >= 3, f"{len(lines)} progress lines: {text[-600:]}"
bad = [l for l in lines if not LINE.match(l)]
assert not bad, f"progress lines not in the plain form: {bad}"
assert any("snapshot" in l for l in lines), lines
print(f"ok: {len(lines)} plain timestamped progress lines")
PY
echo "ok: a sweep's live line is redrawn in place on a terminal, and timestamped lines otherwise"
