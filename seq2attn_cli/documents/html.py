"""HTML pages: the text of each block translated, inline tags placed by attention (inline.py).

The standard library's html.parser reads the page; every character of it is kept as it was
but the text of blocks, the alt, title, placeholder and aria-label attributes, a button's
value (<input type="submit">), a <meta> description's content and a lang naming the source
language (it names the target): tags, attributes, comments, the doctype, scripts, styles,
the text of <pre>, <code>, <kbd>, <samp>, <var> and <textarea> (a block's own translated
attributes are translated: a <textarea placeholder>), and any element marked translate="no"
or class="notranslate", attributes too, or in another language than the source (lang="en").
A tag that holds a reference mark alone (a citation's <sup>[1]</sup>) is kept whole after
its word. Entities are read
as the characters they name and written back escaped (&amp; &lt; &gt;), others as the
characters themselves. A line break inside a block's text is placed by attention, as in
Markdown: a paragraph written over two lines comes out over two.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace
from html.parser import HTMLParser

from .chunks import (
    NO_LANGUAGES,
    Chunk,
    Close,
    Inline,
    Keep,
    Languages,
    Open,
    Part,
    Plain,
    primary,
    relabeled,
)

# inline elements: their tags are carried over to the words they wrapped
INLINE = set(
    "a abbr b bdi bdo cite data del dfn em font i ins label mark q ruby s small span strong"
    " sub sup time tt u".split()
) | {"c", "v", "lang"}  # WebVTT's class, voice and language spans (vtt.py)
# inline, and empty: written as they were (a placeholder translated), where they belong
ATOMS = {"br", "img", "wbr", "input"}
# elements that have no content and no end tag: none is kept whole, translate="no" or not
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}  # fmt: skip
# a ruby's annotation (its reading: <ruby>東京<rt>Tōkyō</rt></ruby>) is no word of the sentence:
# kept after its base's word. Read as one, the base came out inside it, the reading lost
ANNOTATIONS = {"rt", "rp"}
VERBATIM = {"script", "style", "pre", "code", "kbd", "samp", "var", "textarea", "svg", "math"}
VERBATIM |= ANNOTATIONS
VERBATIM_INLINE = {"code", "kbd", "samp", "var"}  # kept whole, inside the sentence around them
# the attributes whose values are text, translated (as Firefox Translations does), and a
# <meta> whose content is the page's description or title, as search results and link
# previews show it
TRANSLATED = {"alt", "title", "placeholder", "aria-label"}
BUTTONS = {"submit", "button", "reset"}  # <input type="submit" value="Envoyer">: a label
DESCRIBED = {"description", "og:description", "og:title", "twitter:description", "twitter:title"}
# a start tag's name, then one attribute at a time, as html.parser reads them
TAG_NAME = re.compile(r"<[a-zA-Z][^\t\n\r\f />\x00]*(?:\s|/(?!>))*")
ATTRIBUTE = re.compile(
    r"""([^\s/>][^\s/=>]*)(?:\s*=+\s*('([^']*)'|"([^"]*)"|(?!['"])([^>\s]*)))?(?:\s|/(?!>))*"""
)
LINE_BREAK = re.compile(r"\s*\n\s*")  # a line break in a block's text, the spaces around it


def _escape(text: str) -> str:
    """Text written into HTML."""
    return html.escape(text, quote=False)


def _in_double_quotes(text: str) -> str:
    """An attribute value written between double quotes: an apostrophe stays one (it came
    out &#x27; in "l'accueil" -> "the home's page")."""
    return html.escape(text, quote=False).replace('"', "&quot;")


def _in_single_quotes(text: str) -> str:
    """An attribute value written between single quotes."""
    return html.escape(text, quote=False).replace("'", "&#x27;")


class _Events(HTMLParser):
    """The parser's events, each with the offset where its text starts in the page."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.starts = [0] + [m.end() for m in re.finditer("\n", page)]
        self.events: list[tuple[int, str, str, list, str]] = []

    def _add(self, kind: str, tag: str = "", attrs: list | None = None, data: str = "") -> None:
        line, column = self.getpos()
        self.events.append((self.starts[line - 1] + column, kind, tag, attrs or [], data))

    def handle_starttag(self, tag, attrs):  # WebVTT's <c.yellow> is a <c>
        self._add("start", tag.split(".")[0], attrs)

    def handle_startendtag(self, tag, attrs):
        self._add("empty", tag, attrs)

    def handle_endtag(self, tag):
        self._add("end", tag)

    def handle_data(self, data):
        self._add("data", data=data)

    def handle_comment(self, data):
        self._add("comment")

    def handle_decl(self, decl):
        self._add("other")

    def handle_pi(self, data):
        self._add("other")

    def unknown_decl(self, data):
        self._add("other")


def _parts(raw: str, attrs: list) -> tuple[Part, ...]:
    """A start tag as written, the values of its TRANSLATED attributes to be translated.

    Its attributes are read one after the other as html.parser reads them, so text that only
    looks like one inside another's value stays; if they are not the parser's, none is read.
    """
    parts: list[Part] = []
    names, end = [], 0
    named = {k: (v or "").lower() for k, v in attrs}
    tag = m.group().strip("< \t\n\r\f/").lower() if (m := TAG_NAME.match(raw)) else ""
    meta = tag == "meta" and DESCRIBED & {named.get("name"), named.get("property")}
    button = tag == "input" and named.get("type") in BUTTONS  # its value is its label
    translated = TRANSLATED | ({"content"} if meta else set()) | ({"value"} if button else set())
    at = m.end() if (m := TAG_NAME.match(raw)) else len(raw)
    while at < len(raw) and (m := ATTRIBUTE.match(raw, at)) and m.end() > at:
        names.append(m.group(1).lower())
        group = next((g for g in (3, 4, 5) if m.group(g) is not None), 0)
        if group and names[-1] in translated:
            quote = '"' if group == 5 else ""  # unquoted, it would end at the first space
            escape = _in_single_quotes if group == 3 else _in_double_quotes
            value = Plain(html.unescape(m.group(group)), escape)
            parts += [raw[end : m.start(group)] + quote, value, quote]
            end = m.end(group)
        at = m.end()
    if names != [name for name, _ in attrs]:  # not the parser's attributes: none translated
        return (raw,)
    return (*parts, raw[end:]) if parts else (raw,)


VTT_LANG = re.compile(r"(<lang[ \t]+)([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]+)*)(\s*>)")


def _relabeled(raw: str, languages: Languages) -> str:
    """A start tag whose lang (or xml:lang) names the source language, naming the target: a
    page translated into English kept lang="fr", and screen readers read it as French."""
    if "lang" not in raw.lower():
        return raw
    if vtt := VTT_LANG.fullmatch(raw):  # WebVTT's <lang fr>: the code is the tag's
        return vtt.group(1) + relabeled(vtt.group(2), languages) + vtt.group(3)
    out, end = [], 0
    at = m.end() if (m := TAG_NAME.match(raw)) else len(raw)
    while at < len(raw) and (m := ATTRIBUTE.match(raw, at)) and m.end() > at:
        group = next((g for g in (3, 4, 5) if m.group(g) is not None), 0)
        if group and m.group(1).lower() in ("lang", "xml:lang"):  # fr, fr-CA
            out += [raw[end : m.start(group)], relabeled(m.group(group), languages)]
            end = m.end(group)
        at = m.end()
    return "".join(out) + raw[end:]


def _skipped(tag: str, attrs: list) -> bool:
    """Whether an element's content is kept as it was."""
    return tag in VERBATIM or _marked(attrs)


def _marked(attrs: list) -> bool:
    """Whether an element is marked untranslated, its attributes too (translate="no")."""
    named = dict(attrs)
    classes = (named.get("class") or "").split()
    return named.get("translate") == "no" or "notranslate" in classes


def _foreign(tag: str, attrs: list, languages: Languages) -> bool:
    """Whether an element inside the page says its text is in another language than the
    source (`<span lang="en">weekend</span>`: translated, the word was lost). Not <html> or
    <body>: a French page that a template calls lang="en" is still translated."""
    source = languages[0]
    if not source or tag in ("html", "body"):
        return False
    named = dict(attrs)
    code = named.get("lang") or named.get("xml:lang")
    if tag == "lang" and attrs:  # WebVTT's <lang en>: the code is the tag's one "attribute"
        code = attrs[0][0]
    return bool(code) and primary(code) != source


def read(page: str, *, languages: Languages = NO_LANGUAGES) -> list[Chunk]:
    """The page as chunks: markup as written, each block's text as an Inline; a lang attribute
    naming the source language names the target (`languages`: source, target)."""
    parser = _Events(page)
    parser.feed(page)
    parser.close()
    events = parser.events
    offsets = [e[0] for e in events] + [len(page)]
    chunks: list[Chunk] = [page[: offsets[0]]]
    items: list = []
    kept: tuple[str, int, list[str]] | None = None  # inside an element kept whole

    def flush() -> None:
        nonlocal items
        if items:
            chunks.append(Inline(_line_breaks(items), _escape))
            items = []

    for (_, kind, tag, attrs, data), a, b in zip(events, offsets, offsets[1:], strict=False):
        raw = page[a:b]
        if kept is None and kind in ("start", "empty"):
            raw = _relabeled(raw, languages)
            attrs = attrs + [("translate", "no")] * _foreign(tag, attrs, languages)
        if kept is not None:
            name, depth, texts = kept
            depth += (kind == "start" and tag == name) - (kind == "end" and tag == name)
            texts.append(raw)
            kept = (name, depth, texts) if depth else None
            if kept is None:
                _keep("".join(texts), name, items, chunks, flush)
        elif kind == "data":
            items.append(data)
        elif kept_whole(kind, tag, attrs) and (
            tag in VERBATIM_INLINE | ANNOTATIONS or _marked(attrs)
        ):
            kept = (tag, 1, [raw])
        elif kept_whole(kind, tag, attrs):  # a block: its own attributes translated (placeholder)
            flush()
            chunks += list(_parts(raw, attrs))
            kept = (tag, 1, [])
        elif item := inline_item(raw, kind, tag, attrs):
            items.append(item)
        else:  # a block's edge, the doctype: the text before it is a block of its own
            flush()
            chunks += list(_parts(raw, attrs)) if kind in ("start", "empty") else [raw]
    if kept is not None:  # never closed: kept as it was, to the end
        _keep("".join(kept[2]), kept[0], items, chunks, flush)
    flush()
    return chunks


def kept_whole(kind: str, tag: str, attrs: list) -> bool:
    """Whether a tag starts an element whose content is kept as it was (<code>, <kbd>...)."""
    return kind == "start" and _skipped(tag, attrs) and tag not in VOID


def inline_item(raw: str, kind: str, tag: str, attrs: list) -> Open | Close | Keep | None:
    """What a tag (as html.parser reads it) is in a block's text: an inline element's opening
    or closing tag, or markup kept where it is (<br>, <img>, a comment); None for a block's."""
    if kind in ("start", "empty") and (tag in ATOMS or kind == "empty" and tag in INLINE):
        parts = (raw,) if _skipped(tag, attrs) else _parts(raw, attrs)  # translate="no": all
        return Keep(parts, breaks=tag == "br", cuts=tag == "br")
    if kind == "start" and tag in INLINE:
        return Open(_parts(raw, attrs), tag)
    if kind == "end" and tag in INLINE:
        return Close((raw,), tag)
    if kind == "comment" or kind == "end" and tag in ATOMS:
        return Keep((raw,))
    return None


def one_tag(raw: str) -> tuple[str, str, list]:
    """What html.parser reads of one tag alone, as Markdown holds inline HTML ("<b>",
    "</kbd>", "<br/>"): its kind (start, end, empty, comment or other), name and attributes."""
    parser = _Events(raw)
    parser.feed(raw)
    parser.close()
    if len(parser.events) != 1 or parser.events[0][1] == "data":
        return "other", "", []
    _, kind, tag, attrs, _ = parser.events[0]
    return kind, tag, attrs


def _line_breaks(items: list) -> list:
    """A block's items with each line break between two of its words (and the spaces around
    it) as a Keep that parts words, as markdown.py reads a soft break: placed by attention
    (placement.py), so a paragraph written over two lines comes out over two. The spaces and
    line breaks before its first word and after its last are text, written as they were."""
    words = [n for n, item in enumerate(items) if isinstance(item, str) and item.strip()]
    first, last = (words[0], words[-1]) if words else (len(items), -1)
    out: list = []
    for n, item in enumerate(items):
        if not isinstance(item, str):
            out.append(item)
            continue
        before, after, at = n > first, n < last, 0
        for found in LINE_BREAK.finditer(item):
            leading = not (before or item[: found.start()].strip())  # before the first word
            atom = found.start() == 0 and out and isinstance(out[-1], Keep)
            if atom and (out[-1].cuts or leading):
                # after a <br>, or an image that starts the block: its line break, as a
                # Markdown hard break's Keep holds its own (an image's came out a space)
                out[-1] = replace(out[-1], parts=(*out[-1].parts, found.group()), breaks=True)
            elif leading or not (after or item[found.end() :].strip()):
                continue
            else:
                out += [item[at : found.start()], Keep((found.group(),), breaks=True)]
            at = found.end()
        out.append(item[at:])
    return [item for item in out if item != ""]


def _keep(text: str, tag: str, items: list, chunks: list[Chunk], flush) -> None:
    """An element kept whole: inside its sentence if inline, else as a block of its own."""
    if tag in ANNOTATIONS:
        items.append(Keep((text,)))
    elif tag in VERBATIM_INLINE or tag in INLINE:
        items.append(Keep((text,), word=True))
    else:
        flush()
        chunks.append(text)
