#!/usr/bin/env python3
"""Writes the tokenizer comparison corpus to stdout: one text per line, as hex bytes.

Hand-written cases (code, CJK, emoji, numbers, whitespace runs, contractions, decomposed
accents, special tokens written in the text, invalid UTF-8), then seeded random mixes of the
same ingredients, so every run compares the same texts.
"""
import random
import sys

CASES = [
    "Hello world",
    " leading space and trailing space ",
    "It's, I'M, we'll, they'RE, you've, he'd, DON'T, o'clock, 's alone",
    "int main(int argc, char **argv) {\n    printf(\"%d\\n\", argc);\n\treturn 0;\n}\n",
    "def f(x):\n    return [i ** 2 for i in range(x) if i % 3 == 0]  # squares\n\n\nprint(f(10))",
    '{"model": "llama", "messages": [{"role": "user", "content": "hi"}], "stream": true}',
    "if (a<=b && c!=d || e>=f) { x += y; } else { z -= 1; } // done",
    "SELECT id, name FROM users WHERE age >= 21 ORDER BY name DESC LIMIT 10;",
    "<html><body><div class=\"x\">Text &amp; more</div></body></html>",
    "中文文本的分词测试，包括标点符号。你好世界！",
    "日本語のテキスト：ひらがな、カタカナ、漢字を含む。東京タワー",
    "한국어 텍스트도 있습니다. 안녕하세요!",
    "😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷🇯🇵 ❤️ ✨🎉",
    "1 12 123 1234 12345 123456 1234567 3.14159 -42 1,234,567.89 0x1F 1e-9",
    "٠١٢٣٤٥٦٧٨٩ ①②③ ½ ¾ Ⅻ 12345678901234567890",
    "spaces:   three,     five,\ttab,\t\ttwo tabs, end   ",
    "lines\n\nblank\r\nwindows\rold mac\n   \n\t\n",
    "                                                                 ",
    "\n\n\n\n\n\n",
    "Café naïve résumé Ünïcödé Straße ﬁ ligature",
    "Cafe\u0301 nai\u0308ve decomposed e\u0301 a\u030a \u1100\u1161\u11a8",
    "Ελληνικά κείμενα, Русский текст, עברית, العربية, हिन्दी भाषा, ไทย",
    "Special <|endoftext|> and <|im_start|>user\nhi<|im_end|> <|begin_of_text|> <｜end▁of▁sentence｜>",
    "<|endoftext|><|endoftext|>",
    "URLs https://example.com/path?q=1&r=two#frag and emails a.b@c.io",
    "Markdown: **bold** _it_ `code` ## Heading\n- item\n- [link](http://x.y)\n| a | b |\n|---|---|",
    "Mixed123abc ABCdef camelCase snake_case kebab-case SCREAMING_CASE HTTPServer iOS",
    "!!! ??? ... --- === *** ### $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}}",
    "a" * 300,
    "ab" * 200 + "\n" + "=" * 150,
    # where a space and lowercase letters end (tokenizer.c takes such a piece without PCRE2)
    "edges word's wordX wordé word1 word. word_ word- a  b don't fooBar x'y  z\tw q\nr s\u00a0t end",
    "word",
    " lone",
    "Zero\u200bwidth\u200djoiner\u00a0nbsp\u2003em\u3000ideographic space",
]

INVALID = [
    b"lone \x80 continuation",
    b"overlong \xc0\x80 and \xc1\xbf",
    b"surrogate \xed\xa0\x80 half",
    b"truncated emoji \xf0\x9f\x98",
    b"truncated at end \xe4\xb8",
    b"\xff\xfe bytes never valid \xf5\x80\x80\x80",
    b"mixed \xe4\xb8\xad\x80\xe6\x96 text \xf4\x90\x80\x80 beyond",
    b"\x80\x80\x80\x80",
]

PIECES = [
    "the", " quick", " brown", " fox", "Jumps", "OVER", " ", "  ", "\t", "\n", "\r\n", "123",
    "4567", ".", ",", "!", "?", "'s", "'LL", "中文", "日本", "カタカナ", "😀", "👍🏽", "é", "e\u0301",
    "{", "}", "()", "=>", "==", "//", "#", "_", "-", "ñ", "Ω", "ß", "ﬁ", "٣", "\u00a0", "<|endoftext|>",
    "printf", "return", "i++", "0x", "FF", "    ", "\n\n", "...", "—", "“quoted”",
]


def main():
    rng = random.Random(22)
    texts = [c.encode() for c in CASES] + INVALID
    for _ in range(200):
        n = rng.randint(1, 40)
        text = "".join(rng.choice(PIECES) for _ in range(n)).encode()
        if rng.random() < 0.1:  # an invalid byte somewhere
            at = rng.randint(0, len(text))
            text = text[:at] + bytes([rng.choice([0x80, 0xBF, 0xC3, 0xE2, 0xF0, 0xFF])]) + text[at:]
        texts.append(text)
    sys.stdout.write("".join(t.hex() + "\n" for t in texts))


if __name__ == "__main__":
    main()
