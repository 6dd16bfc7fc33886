#!/bin/bash
# An endpoint whose host name does not resolve fails the run before it starts: the worker looks
# every name up while preparing (before Ready), the controller aborts naming the host and the
# endpoint, exits non-zero, and no request is ever sent (the run writes no results.json).
#
# The name has a label over 63 octets: it can never be put in a DNS query, so the lookup fails
# on this host (after /etc/hosts) and no packet leaves it, whatever /etc/resolv.conf says.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

HOST=no-such-host-with-a-label-longer-than-sixty-three-octets-xxxxxxxx.invalid
write_workload "$WORK/u.yaml" endpoints="[http://$HOST:1/v1]" concurrency=2 max_requests=10
run_bounded 60 "$WORK/table" "$WORK/run.err" "$WORK/u.yaml" --workers 2 --out "$WORK/out"
[ "$RUN_RC" != 0 ] || fail "exit status 0 for an unresolvable host"
grep -Eq "cannot resolve host $HOST \(endpoint http://$HOST:1(/v1)?\): " "$WORK/run.err" ||
    fail "message: $(tail -3 "$WORK/run.err")"
grep -q "starting in" "$WORK/run.err" && fail "a worker started the run: $(grep 'starting in' "$WORK/run.err")"
[ ! -e "$WORK/out/results.json" ] || fail "results.json written for a run that never started"
echo "ok: unresolvable host fails the run before the start, exit $RUN_RC"
