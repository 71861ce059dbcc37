"""markdown-it-py as s2a reads Markdown with it (markdown.py): CommonMark with GitHub's tables
and strikethrough; GitHub's footnote references (`[^1]`) as tokens of their own, and their
definitions (`[^1]: text`) as paragraphs to translate; links and images that keep their
source text, so that their destination is written back as it was (their title is translated).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock, paragraph, reference
from markdown_it.rules_inline import autolink, image, link
from markdown_it.rules_inline.state_inline import StateInline

# GitHub's footnote reference: [^1], [^note]; not a link's text ("[^haut](#top)", "[^a][ref]")
FOOTNOTE = re.compile(r"\[\^[^\]\s]+\](?![(\[])")
DEFINITION = re.compile(FOOTNOTE.pattern + ":")  # and a footnote's definition: [^1]: text
PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("text_join")


def _with_source(rule: Callable[[StateInline, bool], bool], kind: str, label: int) -> Callable:
    """A markdown-it inline rule that also keeps, on the token it makes, its source text:
    `label` (what its [text] is) and `tail` (what follows it: (url "title"), [ref] or none)."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        end = state.md.helpers.parseLinkLabel(state, start + label - 1, True) if label else -1
        if not rule(state, silent):
            return False
        if not silent:
            token = next(t for t in state.tokens[count:] if t.type == kind)
            source = state.src[start : state.pos]
            token.meta["label"] = state.src[start + label : end] if end >= 0 else ""
            token.meta["tail"] = state.src[end + 1 : state.pos] if end >= 0 else source
        return True

    return wrapped


def _footnote(state: StateInline, silent: bool) -> bool:
    """An inline rule for GitHub's footnote references (`[^1]`), kept as written."""
    found = FOOTNOTE.match(state.src, state.pos)
    if found is None:
        return False
    if not silent:
        state.push("footnote_ref", "", 0).markup = found.group()
    state.pos = found.end()
    return True


def _no_footnote(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """The link definition rule, but not for a footnote's (`[^1]: text`, a paragraph to
    translate; read as a link definition, `[^1]: Voir "ici"` would be kept untranslated)."""
    if DEFINITION.match(state.src, state.bMarks[start] + state.tShift[start]):
        return False
    return reference(state, start, end, silent)


def _footnote_definition(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A footnote's definition (`[^1]: text`) read as a paragraph of its own, as GitHub does:
    the next one ends it rather than being joined to its line."""
    at = state.bMarks[start] + state.tShift[start]
    if state.sCount[start] - state.blkIndent >= 4 or not DEFINITION.match(state.src, at):
        return False
    return silent or paragraph(state, start, end, silent)


PARSER.block.ruler.at("reference", _no_footnote)
PARSER.block.ruler.before(
    "paragraph", "footnote_definition", _footnote_definition, {"alt": ["paragraph"]}
)
PARSER.inline.ruler.before("link", "footnote_ref", _footnote)
PARSER.inline.ruler.at("link", _with_source(link, "link_open", 1))
PARSER.inline.ruler.at("image", _with_source(image, "image", 2))
PARSER.inline.ruler.at("autolink", _with_source(autolink, "link_open", 0))
