"""How often a tag lands on the right words: French HTML sentences translated with the
embedded model; each tag should wrap the English words given for it.

    .venv/bin/python bench/tag_placement.py [--test] [--model DIR] [--beam 5]

Two sets. bench/tag_placement.tsv: 84 sentences with one word in <b>, on which the rule before
#43 was tuned (its 70%). --test: bench/tag_placement_test.tsv (issue #43), sentences written to
measure, never to tune, in categories (nouns, noun phrases, adjectives, verbs, names,
multi-word, nested and link tags...); its header gives the format.

Each tag is judged apart. "unjudged" when the translation does not hold the expected words at
all (the model chose others); else "lost" when the tag is not in the output once or wraps no
word, "exact" when it wraps just the expected words (punctuation and case aside), "wider" when
it wraps them and more, "wrong" otherwise. The same translations are scored for each way of
linking words (`links` of decoding/explain/links.py, the rule before it, `s2a align`'s `shared`
links, the alignment head's probabilities read by `links` and by `s2a align`'s own head links)
and for a baseline that puts each tag on the target words at its source words' relative place
(what placement.py does for a model without attention), to show what attention adds.
stdout: the table (Markdown); stderr: each tag `links` does not place exactly.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from pathlib import Path
from typing import Any

from seq2attn_cli.align.methods import shared
from seq2attn_cli.checkpoint import EMBEDDED
from seq2attn_cli.decoding.explain import links as linking
from seq2attn_cli.decoding.translation import Translation
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.documents import READERS, translated
from seq2attn_cli.documents.inline import sources

TUNING = Path(__file__).with_name("tag_placement.tsv")
TEST = Path(__file__).with_name("tag_placement_test.tsv")
MARKUP = re.compile(r"<(/?)([A-Za-z][\w-]*)\b[^>]*>")
VOID = {"br", "img", "hr", "wbr", "input"}
BLOCK = {"p", "div", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6"}  # kept, not placed
VERDICTS = ("exact", "wider", "wrong", "lost")
BEFORE_SURE = 0.7  # the rule before #43: its share of a row's attention that links it


def before_43(rows: list[list[float]], targets: list[str]) -> list[list[int]]:
    """The rule before #43: a source word's target words are the one that attends to it most
    and any that puts most of its attention, 70% at least, on it ("a" for "étudiant")."""
    best = [max(range(len(row)), key=row.__getitem__) for row in rows]
    linked = []
    for i in range(len(rows[0])):
        top = max(range(len(rows)), key=lambda j, i=i: rows[j][i])
        sure = [j for j, b in enumerate(best) if b == i and rows[j][i] >= BEFORE_SURE]
        linked.append(sorted({top, *sure}))
    return linked


def shared_links(rows: list[list[float]], targets: list[str]) -> list[list[int]]:
    """`s2a align --method shared`'s links (a source word may get none: its tag is empty)."""
    linked: list[list[int]] = [[] for _ in rows[0]]
    for i, j in sorted(shared(rows, rows)):
        linked[i].append(j)
    return linked


def head_links(rows: list[list[float]], targets: list[str]) -> list[list[int]]:
    """`s2a align`'s links off the head's word probabilities (row-best and column-best)."""
    from seq2attn_cli.align.head import links as by_head

    linked: list[list[int]] = [[] for _ in rows[0]]
    for i, j in sorted(by_head(rows)):
        linked[i].append(j)
    return linked


@dataclasses.dataclass
class Row:
    """A sentence of a set: its category, its HTML, and each tag's accepted English words."""

    category: str
    source: str
    tags: list[str]  # each tag's opening, as written (unique within the sentence)
    expected: list[list[list[str]]]  # per tag: its alternatives, each a list of words


def words(text: str) -> list[str]:
    """Lower-case words without the punctuation around them."""
    return [w.strip(".,;:!?\"'()«»").lower() for w in text.split() if w.strip(".,;:!?\"'()«»")]


def spans(html: str) -> tuple[str, dict[str, str | None]]:
    """The text without its tags, and each tag's inner text by its opening as written (None
    for a tag that opens more than once or never closes)."""
    plain, stack, found, at = "", [], {}, 0
    for m in MARKUP.finditer(html):
        plain += html[at : m.start()]
        at = m.end()
        closing, name = m.group(1), m.group(2).lower()
        if name in VOID or m.group(0).endswith("/>"):
            continue
        if not closing:
            stack.append((m.group(0), name, len(plain)))
        elif any(n == name for _, n, _ in stack):
            while stack:  # it closes the tags left open inside it too
                opening, n, start = stack.pop()
                found.setdefault(opening, []).append(plain[start:])
                if n == name:
                    break
    for opening, _, _ in stack:  # never closed
        found.setdefault(opening, []).append(None)
    return plain + html[at:], {k: v[0] if len(v) == 1 else None for k, v in found.items()}


def contains(seq: list[str], part: list[str]) -> bool:
    """Whether `part` is a run of consecutive words of `seq`."""
    return any(seq[i : i + len(part)] == part for i in range(len(seq) - len(part) + 1))


def judge(translated: str, opening: str, expected: list[list[str]]) -> str:
    """One tag's verdict in a translated sentence: exact / wider / wrong / lost / unjudged."""
    plain, inner = spans(translated)
    if not any(contains(words(plain), alt) for alt in expected):
        return "unjudged"
    inside = words(inner.get(opening) or "")
    if not inside:
        return "lost"
    if inside in expected:
        return "exact"
    return "wider" if any(contains(inside, alt) for alt in expected) else "wrong"


def read(path: Path) -> list[Row]:
    """A set: `category<TAB>html<TAB>expected` lines, or `html<TAB>expected` (the tuning set)."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        category, source, expected = fields if len(fields) == 3 else ["all", *fields]
        tags = [
            m.group(0)
            for m in MARKUP.finditer(source)
            if not m.group(1) and m.group(2).lower() not in VOID | BLOCK
        ]
        entries = [[words(alt) for alt in entry.split("|")] for entry in expected.split(" ; ")]
        if len(set(tags)) != len(tags) or len(entries) != len(tags) or not tags:
            raise SystemExit(
                f"{path.name}:{n}: {len(tags)} tags (each written once), "
                f"{len(entries)} expected entries: {line}"
            )
        rows.append(Row(category, source, tags, entries))
    return rows


class Wrapper:
    """What documents.translated reads of a translator besides `translate`: the base one's."""

    base: Translator

    @property
    def config(self) -> Any:
        """The base translator's model configuration (its languages)."""
        return self.base.config

    @property
    def max_chars(self) -> int:
        """The longest sentence the base translator takes, in characters."""
        return self.base.max_chars


class Once(Wrapper):
    """A translator that translates each sentence once, however often it is asked."""

    def __init__(self, translator: Translator, beam: int) -> None:
        self.translator, self.beam, self.done = translator, beam, {}
        self.base = translator

    def translate(self, texts: list[str], *, beam: int, glossary: None = None) -> list:
        todo = list(dict.fromkeys(t for t in texts if t not in self.done))
        found = self.translator.translate(todo, beam=self.beam) if todo else []
        self.done.update(zip(todo, found, strict=True))
        return [self.done[t] for t in texts]


class ByHead(Wrapper):
    """The same translations with the alignment head's probabilities in place of attention:
    each translation force-decoded after its source, as `s2a align` reads a given pair."""

    def __init__(self, once: Once, directory: Path) -> None:
        from seq2attn_cli.align.head import load_head

        self.once, self.done, self.base = once, {}, once.translator
        self.head = load_head(directory, once.translator.config.model)

    def translate(self, texts: list[str], *, beam: int, glossary: None = None) -> list:
        return [self._with_head(t) for t in self.once.translate(texts, beam=beam)]

    def _with_head(self, t: Translation) -> Translation:
        from seq2attn_cli.align.forced import forced_batch

        if t.source in self.done or not t.has_attention:
            return self.done.get(t.source, t)
        if t.parts != 1:  # its pieces were searched in parts: kept with attention, and said
            print(f"head columns: attention kept for a line in parts: {t.source}", file=sys.stderr)
            return t
        sp = self.once.translator.subwords.sp
        src = [sp.piece_to_id(p) for p in t.src_tokens[:-1]]
        tgt = [sp.piece_to_id(p) for p in (t.model_tokens or t.tgt_tokens)[:-1]]
        pair = forced_batch(self.once.translator, [src], [tgt])[0]
        rows = self.head.probabilities(pair).tolist() + [list(t.weights[-1])]  # </s>'s row kept
        self.done[t.source] = dataclasses.replace(t, weights=rows)
        return self.done[t.source]


class ByPosition(Wrapper):
    """The same translations without their attention: placement.py then places each tag at
    its source words' relative position (as for a model trained with `--attention none`)."""

    def __init__(self, once: Once) -> None:
        self.once, self.base = once, once.translator

    def translate(self, texts: list[str], *, beam: int, glossary: None = None) -> list:
        return [dataclasses.replace(t, weights=[]) for t in self.once.translate(texts, beam=beam)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--test", action="store_true", help=f"score {TEST.name}, not the tuning set"
    )
    parser.add_argument("--model", default=None, help="model directory (default: embedded)")
    parser.add_argument("--beam", type=int, default=5)
    args = parser.parse_args()
    rows = read(TEST if args.test else TUNING)
    once = Once(Translator.load(args.model), args.beam)
    by_head = ByHead(once, Path(args.model) if args.model else EMBEDDED)
    start = time.perf_counter()
    once.translate([s for r in rows for s in sources(READERS["html"](r.source))], beam=args.beam)
    # each rule: its name, the translator placement reads, and the links it places tags by
    links = linking.links
    rules = [
        ("links.links", once, links),
        ("before #43 (top + 70%)", once, before_43),
        ("`shared`", once, shared_links),
        *(
            [
                ("links.links on the head", by_head, links),
                ("`s2a align`'s head links", by_head, head_links),
            ]
            if by_head.head is not None
            else []  # a model without an alignment head
        ),  # fmt: skip
        ("by position", ByPosition(once), links),
    ]
    tallies: dict[str, dict[str, dict[str, int]]] = {}  # rule, category, verdict: count
    for name, translator, rule in rules:
        linking.links = rule
        tallies[name] = {}
        for row in rows:
            out = translated(translator, row.source, format="html", beam=args.beam).text
            for k, (opening, expected) in enumerate(zip(row.tags, row.expected, strict=True)):
                verdict = judge(out, opening, expected)
                for category in {row.category, "all"}:
                    tally = tallies[name].setdefault(category, {})
                    tally[verdict] = tally.get(verdict, 0) + 1
                if verdict != "exact" and name == rules[0][0]:
                    wanted = " | ".join(" ".join(alt) for alt in expected)
                    print(f"{verdict:8} tag {k + 1} {row.source}  ->  {out}  (expected: {wanted})",
                          file=sys.stderr)  # fmt: skip
    linking.links = links
    first = tallies[rules[0][0]]
    categories = list(dict.fromkeys([r.category for r in rows] + ["all"]))
    tags = sum(len(r.tags) for r in rows)
    judged = tags - first["all"].get("unjudged", 0)
    print(f"{TEST.name if args.test else TUNING.name}: {len(rows)} sentences, {tags} tags, "
          f"{judged} judged (the others' translation lacks the words); beam {args.beam}, "
          f"{time.perf_counter() - start:.1f} s\n")  # fmt: skip
    print("| category | tags | judged | " + " | ".join(
        f"{name}: exact / wider / wrong / lost" for name, _, _ in rules) + " |")  # fmt: skip
    print("|---" * (3 + len(rules)) + "|")
    for category in categories:
        counts = first[category]
        n = sum(counts.values())
        ok = n - counts.get("unjudged", 0)
        cells = []
        for name, _, _ in rules:
            c = tallies[name][category]
            share = f" ({100 * c.get('exact', 0) / ok:.0f}%)" if ok else ""
            cells.append(" / ".join(str(c.get(v, 0)) for v in VERDICTS) + share)
        label = f"**{category}**" if category == "all" else category
        print(f"| {label} | {n} | {ok} | " + " | ".join(cells) + " |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
