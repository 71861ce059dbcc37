"""What the model should read in a URL's place: how often it copies each stand-in word once
for each URL or e-mail address of a sentence (decoding/rules/urls.py reads them as "URL").

    .venv/bin/python bench/url_placeholder.py [--model DIR] [--beam 5] [--words URL X ...]

Each sentence of url_placeholder.txt is translated with its URLs and addresses replaced by
the word; a sentence counts when the translation holds that word as often as the source.
Every translation is printed, to judge the words around it too.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from seq2attn_cli.decoding.rules.urls import found
from seq2attn_cli.decoding.translator import Translator

SET = Path(__file__).with_name("url_placeholder.txt")


def replaced(line: str, word: str) -> str:
    """`line` with each URL and e-mail address replaced by `word`."""
    for start, url in reversed(list(found(line))):
        line = line[:start] + word + line[start + len(url) :]
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model directory (default: embedded)")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--words", nargs="+", default=["URL", "X"])
    args = parser.parse_args()
    translator = Translator.load(args.model)
    lines = [line for line in SET.read_text().splitlines() if not line.startswith("#")]
    for word in args.words:
        sources = [replaced(line, word) for line in lines]
        done = translator.translate(sources, beam=args.beam)
        copied, pattern = 0, re.compile(rf"\b{re.escape(word)}\b")
        for source, t in zip(sources, done, strict=True):
            ok = len(pattern.findall(t.text)) == len(pattern.findall(source))
            copied += ok
            print(f"{word}: {'ok ' if ok else 'LOST'} {t.text}")
        print(f"{word}: copied once for each URL in {copied} of {len(lines)} sentences\n")


if __name__ == "__main__":
    main()
