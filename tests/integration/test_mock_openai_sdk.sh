#!/bin/bash
# The official OpenAI SDK (npm `openai`, pinned in tests/sdk/package-lock.json and installed into
# the build's sdk-tools/ as the k8s tools are) shows the mock's own message for a request the mock
# refuses (prompt + max_tokens over --max-model-len): the mock's errors have the
# {"error": {"message", "type", "param", "code"}} shape. With --flat-errors (older vLLM's flat
# object) the SDK finds no message in the body, which is why that shape is not the default.
# ctest: parallel (content only)
source "$(dirname "$0")/protocol_lib.sh"
install_tools tests/sdk sdk-tools "the OpenAI SDK"
cp "$SRC/tests/sdk/error_message.mjs" "$TOOLS/"

start_mock --max-model-len 100 --ttft-ms 1 --itl-ms 1
said=$(timeout 30 node "$TOOLS/error_message.mjs" "$MOCK_URL/v1" mock-llama)
assert_equal "what the SDK says" "$said" "400 400 This model's maximum context length is 100 tokens. However, you requested 110 tokens (60 in the messages, 50 in the completion). Please reduce the length of the messages or completion."

start_mock --max-model-len 100 --ttft-ms 1 --itl-ms 1 --flat-errors
said=$(timeout 30 node "$TOOLS/error_message.mjs" "$MOCK_URL/v1" mock-llama)
case $said in
400*"maximum context length"*) fail "the SDK read a message from the flat shape: $said" ;;
400*) ;;
*) fail "the SDK said: $said" ;;
esac
echo "ok: the OpenAI SDK shows the mock's 400 message; with --flat-errors it said: $said"
