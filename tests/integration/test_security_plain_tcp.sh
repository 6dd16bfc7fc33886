#!/bin/bash
# Plain TCP is refused where other machines could reach it (docs/security.md): a controller bound
# to 0.0.0.0 or * and a worker pointed at a non-loopback controller, both without keys and without
# --insecure, exit 1 at once with a message that says how to fix it (keygen, --key,
# --authorized-keys, --server-key). Nothing is bound or connected: the check comes first. Bad key
# set-ups are refused with the file (and line) at fault; keygen never overwrites a key.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

write_workload "$WORK/w.yaml" endpoints="[http://127.0.0.1:9]" max_requests=1

for bind in 'tcp://0.0.0.0:5555' 'tcp://*:5555' 'tcp://[::]:5555'; do
    rc=0
    timeout 10 "$STAMPEDE" controller "$WORK/w.yaml" --bind "$bind" --expect-workers 1 \
        2>"$WORK/ctl.err" || rc=$?
    assert_equal "controller --bind $bind exit status" "$rc" 1
    for hint in "reachable from other machines" "stampede keygen controller" \
        "--key controller.key --authorized-keys" "--server-key controller.pub" "--insecure"; do
        grep -qF -e "$hint" "$WORK/ctl.err" || fail "--bind $bind: no '$hint' in: $(cat "$WORK/ctl.err")"
    done
    grep -q "listening" "$WORK/ctl.err" && fail "--bind $bind listened anyway"
done

rc=0
timeout 10 "$STAMPEDE" worker --connect tcp://192.0.2.1:5555 --once 2>"$WORK/worker.err" || rc=$?
assert_equal "worker exit status" "$rc" 1
for hint in "--key worker.key --server-key controller.pub" "stampede keygen" "--insecure"; do
    grep -qF -e "$hint" "$WORK/worker.err" || fail "worker: no '$hint' in: $(cat "$WORK/worker.err")"
done
grep -q "connecting" "$WORK/worker.err" && fail "the worker connected anyway"

# Bad key set-ups: each refused, naming what is wrong.
(cd "$WORK" && "$STAMPEDE" keygen ctl w >/dev/null) || fail "keygen failed"
rc=0
(cd "$WORK" && "$STAMPEDE" keygen ctl 2>"$WORK/keygen.err") || rc=$?
assert_equal "keygen over an existing key: exit status" "$rc" 1
grep -q "ctl.key: File exists (remove it first" "$WORK/keygen.err" || fail "keygen: $(cat "$WORK/keygen.err")"
mkdir "$WORK/empty" "$WORK/auth"
printf '# a comment\nnot-a-key\n' >"$WORK/auth/bad.pub"
expect_refusal() {
    local what=$1 pattern=$2 rc=0
    shift 2
    timeout 10 "$STAMPEDE" "$@" 2>"$WORK/err" || rc=$?
    assert_equal "$what: exit status" "$rc" 1
    grep -qE -e "$pattern" "$WORK/err" || fail "$what: no /$pattern/ in: $(cat "$WORK/err")"
}
expect_refusal "--key without --authorized-keys" "--key FILE and --authorized-keys DIR go together" \
    controller "$WORK/w.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 --key "$WORK/ctl.key"
expect_refusal "an empty --authorized-keys" "empty: no \*\.pub file there" \
    controller "$WORK/w.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 --key "$WORK/ctl.key" \
    --authorized-keys "$WORK/empty"
expect_refusal "a bad .pub" "auth/bad.pub:2: expected a key of 40 Z85 characters" \
    controller "$WORK/w.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 --key "$WORK/ctl.key" \
    --authorized-keys "$WORK/auth"
expect_refusal "--server-key without --key" "--key FILE and --server-key FILE go together" \
    worker --connect tcp://127.0.0.1:9 --server-key "$WORK/ctl.pub"
expect_refusal "a missing key file" "nowhere.key: No such file" \
    worker --connect tcp://127.0.0.1:9 --key "$WORK/nowhere.key" --server-key "$WORK/ctl.pub"
expect_refusal "a --max-message-size too small" "--max-message-size wants a size from 4KiB to 1TiB" \
    worker --connect tcp://127.0.0.1:9 --max-message-size 12
echo "ok: plain TCP off loopback refused with the fix, bad key set-ups refused by file and line"
