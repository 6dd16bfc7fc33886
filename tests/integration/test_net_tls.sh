#!/bin/bash
# target.tls against a TLS server of the test's own, with a CA and certificates made here by
# openssl: without ca_file the run stops at the preflight on the certificate; with it (or with SSL_CERT_FILE
# naming the CA) they succeed; insecure: true succeeds and is warned of in the table and
# results.json; an mTLS server is served with client_cert and client_key; a ca_file the worker
# cannot read refuses the run naming the key.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

pki=$WORK/pki
mkdir -p "$pki"
make_cert() { # name, subject, extensions: a key and a certificate signed by the test CA
    openssl req -newkey rsa:2048 -nodes -keyout "$pki/$1.key" -subj "/CN=$2" \
        -out "$pki/$1.csr" 2>/dev/null
    printf '%s\n' "$3" >"$pki/$1.ext"
    openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
        -days 1 -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>/dev/null
}
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 1 \
    -subj "/CN=stampede test CA" 2>/dev/null
make_cert server 127.0.0.1 "subjectAltName=IP:127.0.0.1"
make_cert client "stampede client" "extendedKeyUsage=clientAuth"

start_test_server net_server.py tls server --log "$WORK/tls.log" --cert "$pki/server.crt" \
    --key "$pki/server.key"
TLS_URL="https://${URL#http://}"
start_test_server net_server.py mtls server --log "$WORK/mtls.log" --cert "$pki/server.crt" \
    --key "$pki/server.key" --client-ca "$pki/ca.crt"
MTLS_URL="https://${URL#http://}"

workload() { # file, endpoint, tls lines
    printf 'target:\n  endpoints: [%s]\n%s\nworkload:\n  kind: requests\n  input_tokens: 8\n' \
        "$2" "$3" >"$1"
    printf '  output_tokens: 3\nscheduler:\n  kind: concurrent\n  concurrency: 2\n' >>"$1"
    printf 'limits:\n  max_requests: 4\n' >>"$1"
}

workload "$WORK/plain.yaml" "$TLS_URL" ""
RUN_RC=0
env -u SSL_CERT_FILE -u CURL_CA_BUNDLE -u SSL_CERT_DIR timeout 60 "$STAMPEDE" run \
    "$WORK/plain.yaml" --workers 1 --out "$WORK/plain" >"$WORK/plain.out" 2>"$WORK/plain.err" ||
    RUN_RC=$?
assert_equal "exit status without ca_file" "$RUN_RC" 1
grep -q "preflight of $TLS_URL: POST $TLS_URL/v1/chat/completions .* failed: SSL certificate problem" \
    "$WORK/plain.err" || fail "no certificate error without ca_file: $(tail -3 "$WORK/plain.err")"

workload "$WORK/ca.yaml" "$TLS_URL" "  tls: {ca_file: pki/ca.crt}"
env -u SSL_CERT_FILE timeout 60 "$STAMPEDE" run "$WORK/ca.yaml" --workers 1 --out "$WORK/ca" --http-phases \
    >"$WORK/ca.out" 2>"$WORK/ca.err" || fail "run with ca_file failed: $(tail -3 "$WORK/ca.err")"
assert_equal "requests ok with ca_file" "$(json_value "$WORK/ca/results.json" 'l["requests_ok"]')" 4
assert_equal "insecure in results.json" \
    "$(json_value "$WORK/ca/results.json" 'r["run"]["network"]["tls"]["insecure"]')" False
! grep -q "WARNING: TLS" "$WORK/ca.out" || fail "a verified run warns of TLS"
# What each request's TLS was: the server closes every connection, so each of the 4 requests
# opens one; Python's server issues TLS 1.3 session tickets, so a stream's second connection
# resumes its first one's session.
check_results "$WORK/ca" <<'PY'
tls = level["tls"]
assert tls["requests_by_version"] == {"TLSv1.3": 4}, tls
assert tls["new_connections"] == 4, tls
assert 1 <= tls["resumed"] < 4, tls
PY
grep -Eq "^tls sessions  TLSv1.3 4 requests; 4 new TLS connections, [1-3] of them resumed a session" \
    "$WORK/ca.out" || fail "the table does not say the TLS sessions: $(grep -i tls "$WORK/ca.out")"

SSL_CERT_FILE=$pki/ca.crt timeout 60 "$STAMPEDE" run "$WORK/plain.yaml" --workers 1 \
    --out "$WORK/env" >"$WORK/env.out" 2>"$WORK/env.err" ||
    fail "run with SSL_CERT_FILE failed: $(tail -3 "$WORK/env.err")"
assert_equal "requests ok with SSL_CERT_FILE" \
    "$(json_value "$WORK/env/results.json" 'l["requests_ok"]')" 4

workload "$WORK/insecure.yaml" "$TLS_URL" "  tls: {insecure: true}"
env -u SSL_CERT_FILE timeout 60 "$STAMPEDE" run "$WORK/insecure.yaml" --workers 1 \
    --out "$WORK/insecure" >"$WORK/insecure.out" 2>"$WORK/insecure.err" ||
    fail "insecure run failed: $(tail -3 "$WORK/insecure.err")"
assert_equal "requests ok insecure" "$(json_value "$WORK/insecure/results.json" 'l["requests_ok"]')" 4
grep -q "WARNING: TLS verification was off (target.tls.insecure)" "$WORK/insecure.out" ||
    fail "the table does not warn of insecure: $(cat "$WORK/insecure.out")"
assert_equal "insecure in results.json" \
    "$(json_value "$WORK/insecure/results.json" 'r["run"]["network"]["tls"]["insecure"]')" True

workload "$WORK/mtls.yaml" "$MTLS_URL" \
    "  tls: {ca_file: pki/ca.crt, client_cert: pki/client.crt, client_key: pki/client.key}"
timeout 60 "$STAMPEDE" run "$WORK/mtls.yaml" --workers 1 --out "$WORK/mtls" \
    >"$WORK/mtls.out" 2>"$WORK/mtls.err" || fail "mTLS run failed: $(tail -3 "$WORK/mtls.err")"
assert_equal "requests ok with mTLS" "$(json_value "$WORK/mtls/results.json" 'l["requests_ok"]')" 4
assert_equal "mTLS server's requests" "$(grep -c "^POST /v1/chat/completions" "$WORK/mtls.log")" 4

workload "$WORK/missing.yaml" "$TLS_URL" "  tls: {ca_file: pki/absent.pem}"
RUN_RC=0
timeout 60 "$STAMPEDE" run "$WORK/missing.yaml" --workers 1 --out "$WORK/missing" \
    >/dev/null 2>"$WORK/missing.err" || RUN_RC=$?
assert_equal "exit status with an unreadable ca_file" "$RUN_RC" 1
grep -q "could not prepare the run: target.tls.ca_file: cannot read $WORK/pki/absent.pem" \
    "$WORK/missing.err" || fail "message: $(tail -3 "$WORK/missing.err")"
echo "ok: ca_file, SSL_CERT_FILE, insecure (warned) and mTLS reach a TLS server; none fails"
