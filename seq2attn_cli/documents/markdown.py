"""Markdown documents: the text of each paragraph, heading, list item and table cell
translated, its emphasis, links and code placed by attention (inline.py); YAML front matter
kept as it was.

markdown-it-py (CommonMark, with GitHub's tables, strikethrough and footnotes, whose `[^1]`
and `[^1]:` are kept as written, their definitions translated) finds the blocks; only
the source of each block's text is replaced, so everything around it (list markers and
GitHub's task boxes, `>`, `#`, table pipes, blank lines, code blocks, link definitions) is
kept as it was. An HTML block outside lists and quotes that opens with a block's tag (a
README's `<p align="center">`, `<details>`) and holds no Markdown is read as a page is
(html.py): kept as given, `<summary>` and `alt` texts were left in French.
A paragraph's lines are translated as one text, its line breaks (soft or hard) placed by
attention, so a paragraph written over two lines comes out over two; inline code, URLs and
backslash escapes are kept as written, and inline HTML is read as a page's (html.py): its
inline elements' tags follow their words, <kbd> and <code> are kept whole. A link's or
image's destination, or its reference, is written back as it was in the source, character
for character; its title is translated, as a page's title attribute is.
"""

from __future__ import annotations

import re
from dataclasses import replace

from markdown_it.token import Token

from ..decoding.rules.urls import around
from . import html
from .chunks import (
    NO_LANGUAGES,
    Chunk,
    Close,
    Inline,
    Item,
    Keep,
    Languages,
    Open,
    Part,
    Plain,
    relabeled,
)
from .markdown_parser import FOOTNOTE, PARSER

SPECIAL = re.compile(r"[\\`*_\[\]<>]")  # in text, these would start markup
TASK = re.compile(r"\[[ xX]\](?=\s|$)")  # a task list item's box: - [ ] to do, - [x] done
# GitHub's alert, a quote's first line alone: "> [!WARNING]" (translated, "> \[WARNINGC")
ALERT = re.compile(r"\[!(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*", re.I)
# YAML front matter (Jekyll, Hugo, pandoc): data, not text; CommonMark would read a heading.
# "---", "key:" lines, then "---" or "..."; "---" then a blank line, a heading or a sentence
# is a thematic break, as pandoc reads it. Or Hugo's TOML, between "+++" lines (read as a
# paragraph, its keys were translated: "titre = ..." -> "title")
FRONT_MATTER = re.compile(
    r"\A(?:---[ \t]*\r?\n(?:(?=[\w\"'-]+[ \t]*:(?:[ \t]|\r?\n)).*?\r?\n)?"
    r"(?:---|\.\.\.)|\+\+\+[ \t]*\r?\n(?:.*?\r?\n)?\+\+\+)[ \t]*(?:\r?\n|\Z)",
    re.S,
)
# the page's language in front matter (Hugo, Jekyll, pandoc): lang: fr, language: "fr-CA",
# TOML's lang = "fr"
LANG = re.compile(r"""^((?:lang|language)[ \t]*[:=][ \t]*["']?)([A-Za-z]{2,3}(?:[-_]\w+)?)""", re.M)
# a definition's mark at a line's start (pandoc, PHP Markdown Extra: "Term\n: definition");
# CommonMark reads a soft break, and the ":" was placed by attention ("Cat:\nan animal")
DEFINITION_MARK = re.compile(r":[ \t]+(?=\S)")
# what text written for a Markdown renderer holds, in an HTML block: kept as given (markdown.py)
MARKDOWN_SYNTAX = re.compile(r"`|\]\(|\*\*|__|markdown=|^[ \t]*(?:[-+*#>]|\d+[.)])[ \t]", re.M)
# a link's or image's title at the end of what follows its text: (url "title"), 'title', (title)
TITLES = {
    '"': re.compile(r'\s"((?:\\.|[^"\\])*)"\s*\)\Z', re.S),
    "'": re.compile(r"\s'((?:\\.|[^'\\])*)'\s*\)\Z", re.S),
    ")": re.compile(r"\s\(((?:\\.|[^()\\])*)\)\s*\)\Z", re.S),
}
# what a translated title escapes, by the mark that closes it (and a backslash)
TITLES_ESCAPED = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]"), ")": re.compile(r"[()\\]")}
MARKS = {"strong", "em", "s"}  # **bold**, _em_, ~~struck~~: their markup goes around words


def read(text: str, *, languages: Languages = NO_LANGUAGES) -> list[Chunk]:
    """The document as chunks: its front matter and markup as written (but a `lang:` naming
    the source language, which names the target), each block's text as an Inline."""
    front = FRONT_MATTER.match(text)
    head = front.group() if front else ""
    labeled = LANG.sub(lambda m: m.group(1) + relabeled(m.group(2), languages), head)
    return [labeled, *_blocks(text[len(head) :], languages)]


def _blocks(text: str, languages: Languages) -> list[Chunk]:
    """Markdown as chunks: markup as written, each block's text as an Inline, and an HTML
    block (a README's <p align="center">, <details>) read as a page's (html.py)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)] + [len(text)]
    chunks: list[Chunk] = []
    cursor = 0
    tokens = PARSER.parse(text)
    for n, token in enumerate(tokens):
        if token.map is None:
            continue
        lo, hi = starts[token.map[0]], starts[min(token.map[1], len(starts) - 1)]
        if token.type == "html_block" and token.level == 0 and _page(text[lo:hi]):
            chunks += [text[cursor:lo], *html.read(text[lo:hi], languages=languages)]
            cursor = hi
        if token.type != "inline" or not token.children:
            continue
        cell = tokens[n - 1].type in ("th_open", "td_open")
        lines = token.content.split("\n")
        lines = [line.replace("|", "\\|") for line in lines] if cell else lines  # as written
        found = _locate(text, lines, max(cursor, lo), hi)
        if found is None:  # not where markdown-it says: the block is kept as it was
            continue
        start, end, prefixes = found
        newline = "\r\n" if text[start:end].count("\r\n") else "\n"  # the block's own breaks
        lead, items = _lead(tokens, n, _items(token.children, token.content, prefixes, newline))
        if cell:  # its `|` as written, `\\|`
            inline = Inline([piece for item in items for piece in _piped(item)], escape_cell)
        else:
            inline = Inline(items, escape)
        chunks += [text[cursor : start + len(lead)], inline]
        cursor = end
    return [*chunks, text[cursor:]]


def _page(block: str) -> bool:
    """Whether an HTML block is read as a page's: it opens with a block's tag, not an inline
    one (whose spaces would move before it: "<a>" NL "    Voir" became a code block), and
    holds nothing written for Markdown (`code`, [a link](url), "- item", `markdown="1"`), which
    is kept as given."""
    opening = re.match(r"\s*<([a-zA-Z][\w-]*)", block)
    name = opening.group(1).lower() if opening else ""
    inline = not name or name in html.INLINE or name in html.ATOMS or name in html.VERBATIM_INLINE
    return not inline and not MARKDOWN_SYNTAX.search(block)


def _lead(tokens: list[Token], n: int, items: list[Item]) -> tuple[str, list[Item]]:
    """The markup that starts block `n`, written as it was, and the items after it: a task
    list item's box (`- [ ] to do`), a footnote's label (`[^1]: text`) or an alert's mark
    (`> [!NOTE]`, its line), GitHub's."""
    first, second = (items + ["", ""])[:2]
    in_paragraph = tokens[n - 1].type == "paragraph_open"
    in_item = in_paragraph and n > 1 and tokens[n - 2].type == "list_item_open"
    if in_item and isinstance(first, str) and (box := TASK.match(first)):
        return box.group(), [first[box.end() :], *items[1:]]
    in_quote = in_paragraph and n > 1 and tokens[n - 2].type == "blockquote_open"
    if in_quote and isinstance(first, str) and ALERT.fullmatch(first):
        if isinstance(second, Keep) and second.breaks:  # its line break, as written
            return first + "".join(map(str, second.parts)), items[2:]
        return first, items[1:]
    label = first.parts[0] if isinstance(first, Keep) else None
    if in_paragraph and isinstance(label, str) and FOOTNOTE.fullmatch(label):
        if isinstance(second, str) and second.startswith(":"):
            return f"{label}:", [second[1:], *items[2:]]
    return "", items


def escape(text: str) -> str:
    """Text written into Markdown: the characters that would start markup escaped, but those
    of a URL or e-mail address, which comes out as it was written (its text held them)."""
    return around(text, lambda other: SPECIAL.sub(r"\\\g<0>", other), str)


def escape_cell(text: str) -> str:
    """Text written into a table cell: escaped as any, and its `|` too, or it would end the cell."""
    return _pipe(escape(text))


def _pipe(text: str) -> str:
    """Markup written into a table cell, its `|` escaped as they were (markdown-it reads a
    cell's `\\|` as `|` before the cell's inline markup: in code and links too, as GitHub)."""
    return text.replace("|", "\\|")


def _piped(item: Item) -> list[Item]:
    """An item of a table cell, its `|` escaped again. In its text a `\\|` parts what is on
    each side (`oui \\| non`), translated apart; the model has no piece for `|` and would
    leave it out."""
    if isinstance(item, str):
        pieces = re.split(r"(\s*\|\s*)", item)  # its spaces with it: a break has none after it
        return [
            Keep((_pipe(piece),), breaks=True, cuts=True) if k % 2 else piece
            for k, piece in enumerate(pieces)
            if piece
        ]
    parts = tuple(
        replace(p, escape=lambda t, e=p.escape: _pipe(e(t))) if isinstance(p, Plain) else _pipe(p)
        for p in item.parts
    )
    if isinstance(item, Open):
        empty = None if item.empty is None else _pipe(item.empty)
        return [replace(item, parts=parts, empty=empty)]
    return [replace(item, parts=parts)]


def _locate(
    text: str, lines: list[str], start: int, stop: int
) -> tuple[int, int, list[str]] | None:
    """Where a block's text lines are in the document: (start, end, each line's prefix)."""
    prefixes, first, at = [], -1, start
    for n, line in enumerate(lines):
        found = text.find(line, at, stop)
        if found < 0 or (n and text.count("\n", at, found) != 1):
            return None
        prefixes.append(text[text.rfind("\n", 0, found) + 1 : found])
        first = found if n == 0 else first
        at = found + len(line)
    return first, at, prefixes


def _items(children: list[Token], content: str, prefixes: list[str], newline: str) -> list[Item]:
    """A block's inline tokens as Inline items: text, marks around words, and kept markup
    (a line break as the block writes them: `newline`)."""
    lines = content.split("\n")
    items: list[Item] = []
    line, links, skip, marked = 0, [], False, 0
    tokens = _kept_whole(children, content)
    for k, token in enumerate(tokens):
        kind = token.type
        if skip:  # the text of an autolink, written whole with its <...>
            skip = kind != "link_close"
        elif kind == "text":  # less a definition's mark, written with the break before it
            items.append(token.content[marked:])
            marked = 0
        elif kind == "text_special":  # an entity: its character; an escape: as written
            items.append(Keep((token.markup,)) if token.info == "escape" else token.content)
        elif kind == "softbreak":  # the line break kept, placed by attention; no cut
            line += 1
            mark = _definition_mark(tokens[k + 1 : k + 2])  # the term's end: a cut
            items.append(Keep((f"{newline}{prefixes[line]}{mark}",), breaks=True, cuts=bool(mark)))
            marked = len(mark)
        elif kind == "hardbreak":
            mark = "\\" if lines[line].endswith("\\") else "  "
            line += 1
            items.append(Keep((f"{mark}{newline}{prefixes[line]}",), breaks=True, cuts=True))
        elif kind.removesuffix("_open") in MARKS:  # around no word: left out, not `****`
            items.append(Open((token.markup,), kind.removesuffix("_open"), empty=""))
        elif kind.removesuffix("_close") in MARKS:
            items.append(Close((token.markup,), kind.removesuffix("_close")))
        elif kind == "link_open" and token.markup == "autolink":
            skip = True
            items.append(Keep((token.meta["tail"],)))  # <url>, as written
        elif kind == "link_open":
            links.append(_titled(token, tail := _tail(token)))
            url = escape(PARSER.normalizeLinkText(token.attrs["href"]))  # around no word: its text
            items.append(Open(("[",), "link", empty=f"[{url}]{tail}"))
        elif kind == "link_close":
            items.append(Close(("]", *links.pop()), "link"))
        elif kind == "footnote_ref":
            items.append(Keep((token.markup,)))
        elif kind == "code_inline":  # over two lines as well: as the block writes them
            code, line = _rejoined(_code(token, "\n".join(lines[line:])), prefixes, line, newline)
            items.append(Keep((code,), word=True))
        elif kind == "image":
            items.append(Keep(("![", Plain(token.content), "]", *_titled(token, _tail(token)))))
        elif kind == "html_inline":  # <b> and </b> carried over to the words, as in a page
            items.append(html.inline_item(token.content, *html.one_tag(token.content))
                         or Keep((token.content,)))  # fmt: skip
        elif kind == "html_kept":  # its line breaks as the block writes them
            kept, line = _rejoined(token.content, prefixes, line, newline)
            items.append(Keep((kept,), word=True))
        else:  # a token this reader does not know: its text, as written
            items.append(Keep((token.markup + token.content,)))
    return items


def _kept_whole(children: list[Token], content: str) -> list[Token]:
    """The inline tokens with each element HTML keeps as it was (<kbd>Ctrl</kbd>, <code>) as
    one token, "html_kept", that holds its source text (`content`, the block's), as written."""
    out: list[Token] = []
    kept: tuple[str, int, int] | None = None  # the element's name, depth and start
    at = 0  # where in `content` the last tag found ends
    for token in children:
        tag, start = ("", "", []), at
        if token.type == "html_inline" and (found := content.find(token.content, at)) >= 0:
            tag, start, at = html.one_tag(token.content), found, found + len(token.content)
        if kept is None:
            if not html.kept_whole(*tag):
                out.append(token)
                continue
            kept = (tag[1], 0, start)
        name, depth, begin = kept
        depth += (tag[:2] == ("start", name)) - (tag[:2] == ("end", name))
        kept = (name, depth, begin) if depth else None
        if kept is None:
            out.append(Token("html_kept", "", 0, content=content[begin:at]))
    if kept is not None:  # never closed: kept as it was, to the block's end
        out.append(Token("html_kept", "", 0, content=content[kept[2] :]))
    return out


def _code(token: Token, rest: str) -> str:
    """A code span as the block's text from its line on (`rest`) writes it: markdown-it reads
    each of its line breaks as a space (`chat<NL>: pain` came out on one line)."""
    pad = " " if token.content.startswith("`") or token.content.endswith("`") else ""
    written = f"{token.markup}{pad}{token.content}{pad}{token.markup}"
    found = re.search(r"[ \n]".join(map(re.escape, written.split(" "))), rest)
    return found.group() if found else written


def _rejoined(text: str, prefixes: list[str], line: int, newline: str) -> tuple[str, int]:
    """Text over several of a block's lines, each break as the block writes it (its next
    line's prefix too: "> "), and the line it ends on."""
    first, *others = text.split("\n")
    for other in others:
        line += 1
        first += f"{newline}{prefixes[line]}{other}"
    return first, line


def _definition_mark(after: list[Token]) -> str:
    """The definition's mark (": ") that starts the line after a soft break (`after`: the token
    that follows it, if any), or ""."""
    if after and after[0].type == "text" and (mark := DEFINITION_MARK.match(after[0].content)):
        return mark.group()
    return ""


def _tail(token: Token) -> str:
    """What follows a link's or image's text, as written; a shortcut's reference made explicit
    (`[the dog][chien]`: the translated text no longer names the reference)."""
    tail = token.meta["tail"]
    return tail if tail not in ("", "[]") else f"[{token.meta['label']}]"


def _titled(token: Token, tail: str) -> tuple[Part, ...]:
    """A link's or image's tail with its title to translate, as a page's title attribute is
    (a reference's title, in its definition, is kept as the definition is)."""
    found = [m for t in TITLES.values() if (m := t.search(tail))] if "title" in token.attrs else []
    if not found:
        return (tail,)
    title, delimiters = found[0], TITLES_ESCAPED[tail[found[0].end(1)]]
    text = Plain(str(token.attrs["title"]), escape=lambda t: delimiters.sub(r"\\\g<0>", t))
    return (tail[: title.start(1)], text, tail[title.end(1) :])
