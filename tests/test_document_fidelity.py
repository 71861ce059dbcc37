"""What a translated document must not lose: every word translated or warned about, a line
break between two sentences, link destinations as written, attributes read as a browser does."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from seq2attn_cli.cli.app import app
from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.documents import sentences_in
from seq2attn_cli.documents.placement import Atom, place


@pytest.fixture(scope="module")
def tiny(tiny_model: Path) -> Translator:
    return Translator.load(tiny_model)


def s2a(*args: str) -> object:
    """`s2a translate ARGS` run in this process."""
    return CliRunner().invoke(app, ["translate", *args])


def test_a_long_paragraph_is_translated_to_its_last_word(tiny_model, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("je mange pain " * 100 + "il voit chat\n")  # 1,412 characters, no stop
    result = s2a("--model", str(tiny_model), "--beam", "1", "-i", str(notes))
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.endswith("he sees cat\n")


def test_what_a_document_leaves_out_is_warned_about_as_for_lines(tiny_model, tmp_path):
    page = tmp_path / "page.html"
    bold = "je mange pain " * 800  # one tag around 11,200 characters: nowhere to cut it
    page.write_text(f"<p>je man☃ge pain</p>\n<p><b>{bold}</b></p>\n", encoding="utf-8")
    result = s2a("--model", str(tiny_model), "--beam", "1", "-i", str(page))
    assert result.exit_code == 0 and result.stdout.startswith("<p>I big bread</p>\n<p><b>")
    assert result.stderr.splitlines() == [
        f'warning: {page}: "je man☃ge pain": the model knows no piece for "☃"; '
        "translated without them",
        f'warning: {page}: "je mange pain je mange pain je mange…": longer than s2a '
        "translates; translated its first 10,000 characters only",
    ]


def test_a_block_of_inline_code_alone_brings_no_warning(tiny_model, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("je mange pain\n\n`make test`\n\n| `ls` | `cd` |\n|---|---|\n| a | b |\n")
    result = s2a("--model", str(tiny_model), "--beam", "1", "-i", str(notes))
    assert result.exit_code == 0 and "`make test`" in result.stdout
    assert result.stderr == ""  # was: the model knows no piece for "\U00100000", never typed


def test_a_line_break_after_a_sentence_follows_its_whole_translation(shipped):
    page = shipped.translate_document("<p>Bonjour<br>Il pleut.</p>", format="html")
    assert page == "<p>Good morning<br>It's raining.</p>"
    notes = shipped.translate_document("Bonjour  \nIl pleut.\n", format="markdown")
    assert notes == "Good morning  \nIt's raining.\n"
    cue = shipped.translate_document(
        "1\n00:00:01,000 --> 00:00:02,000\nBonjour.\nIl pleut.\n", format="srt"
    )
    assert cue == "1\n00:00:01,000 --> 00:00:02,000\nGood morning.\nIt's raining.\n"


def test_a_sentence_split_across_two_cues_is_translated_as_one(shipped):
    srt = ("5\n00:00:12,500 --> 00:00:14,000\nJe pense que nous devrions\n\n"
           "6\n00:00:14,100 --> 00:00:16,000\nacheter une nouvelle voiture.\n")  # fmt: skip
    cues = [cue.split("\n") for cue in shipped.translate_document(srt, format="srt").split("\n\n")]
    assert [cue[:2] for cue in cues] == [["5", "00:00:12,500 --> 00:00:14,000"],
                                         ["6", "00:00:14,100 --> 00:00:16,000"]]  # fmt: skip
    said = [" ".join(line for line in cue[2:] if line) for cue in cues]
    whole = shipped.translate(["Je pense que nous devrions acheter une nouvelle voiture."])[0].text
    assert all(said) and " ".join(said) == whole  # alone, the second came out "Make a new car."
    vtt = "WEBVTT\n\n00:12.500 --> 00:14.000\n" + srt.split("\n", 2)[2].replace(
        "6\n00:00:14,100 --> 00:00:16,000", "00:14.100 --> 00:16.000"
    )
    assert " ".join(shipped.translate_document(vtt, format="vtt").split("\n")[3::3]) == whole


@pytest.mark.parametrize(("aligned", "placed"), [([[1], []], "I\neat"), ([[], []], "I\neat")])
def test_a_line_break_between_words_never_lands_at_an_edge(aligned, placed):
    # "je <NL> mange": attention ties "je" to the last word, or nothing to anything; the break
    # after it wrote "I eat\n" then, an empty line (and between two cues, a cue with no text)
    line_break = Atom(after=0, text="\n", parent=None, space=False, breaks=True)
    assert place([], [line_break], ["I", "eat"], aligned, str) == placed


def cues(*texts: str) -> str:
    """A SubRip file of these cue texts, a second each."""
    return "\n".join(
        f"{n}\n00:00:0{n},000 --> 00:00:0{n},900\n{text}\n" for n, text in enumerate(texts, 1)
    )


@pytest.mark.parametrize(
    ("texts", "sentences"),
    [
        (("Je pense.", "il pleut."), ["Je pense.", "il pleut."]),  # the first sentence ended
        (("Je pense que", "Il pleut."), ["Je pense que", "Il pleut."]),  # the second starts one
        (("Je pense que", "- oui\n- non"), ["Je pense que", "oui", "non"]),  # a dialogue
        (("- oui\n- je pense que", "il pleut."), ["oui", "je pense que", "il pleut."]),
        (("un", "deux", "trois", "quatre"), ["un deux trois", "quatre"]),  # three cues at most
        (("<i>Je pense que</i>", "<i>nous devrions</i>"), ["Je pense que", "nous devrions"]),
    ],
)
def test_cues_that_do_not_share_a_sentence_are_translated_apart(texts, sentences):
    assert sentences_in(cues(*texts), format="srt") == sentences


def test_markup_that_starts_a_paragraph_keeps_the_space_after_it(tiny):
    page = tiny.translate_document('<p><img src="a.png"> je mange pain</p>', format="html", beam=1)
    assert page == '<p><img src="a.png"> I eats bread</p>'
    glued = tiny.translate_document('<p><img src="a.png">je mange pain</p>', format="html", beam=1)
    assert glued == '<p><img src="a.png">I eats bread</p>'
    notes = tiny.translate_document("![chat](a.png) je mange pain\n", format="markdown", beam=1)
    assert notes == "![cat](a.png) I eats bread\n"
    broken = tiny.translate_document("<p><br>je mange pain</p>", format="html", beam=1)
    assert broken == "<p><br>I eats bread</p>"
    both = tiny.translate_document(
        '<p><img src="a.png"><br>je mange pain</p>', format="html", beam=1
    )
    assert both == '<p><img src="a.png"><br>I eats bread</p>'  # no space of its own before <br>
    lines = tiny.translate_document(
        '<p><img src="a.png">\nje mange pain</p>', format="html", beam=1
    )
    assert lines == '<p><img src="a.png">\nI eats bread</p>'  # its line break came out a space


def links(text: str) -> list[tuple[str, str]]:
    """Where a Markdown document's links and images lead, and their titles, in order."""
    return [
        (t.attrs.get("href") or t.attrs.get("src"), t.attrs.get("title"))
        for block in MarkdownIt("commonmark").parse(text)
        for t in block.children or []
        if t.type in ("link_open", "image")
    ]


def test_link_destinations_are_kept_as_written_and_titles_translated(tiny):
    notes = (
        "je [mange](http://x.y/a 'chien rouge') pain\n\n[chat](http://x.y/été) "
        '[chien](<a b.html>)\n\n<http://x.y/a%20b> ![eau](e.png "grand")\n\n'
        "il voit [maison]\n\nil voit [eau][m]\n\n[maison]: http://m.n\n[m]: http://m.o 'chat'\n"
    )
    out = tiny.translate_document(notes, format="markdown", beam=1)
    for kept in ("[eats](http://x.y/a 'dog red')", "[cat](http://x.y/été)",
                 "[dog](<a b.html>)", "<http://x.y/a%20b>", '![water](e.png "big")',
                 "[house][maison]", "[water][m]", "[maison]: http://m.n\n",
                 "[m]: http://m.o 'chat'\n"):  # fmt: skip
        assert kept in out, out
    assert [href for href, _ in links(out)] == [href for href, _ in links(notes)]
    # a definition's title is kept, as the definition is
    assert [title for _, title in links(out)] == ["dog red", None, None, None, "big", None, "chat"]


def test_a_translated_title_is_escaped_for_the_mark_around_it(shipped, model_writes):
    """A link's title written back with its quotes or parentheses escaped: still a title."""
    said = 'It\'s "so" (here)'
    model_writes(said)
    notes = "[a](x.html \"b\")\n\n[c](y.html 'd')\n\n[e](z.html (f))\n\n![g](i.png 'h')\n"
    out = shipped.translate_document(notes, format="markdown", beam=1)
    assert [href for href, _ in links(out)] == ["x.html", "y.html", "z.html", "i.png"]
    assert [title for _, title in links(out)] == [said] * 4, out


def test_an_apostrophe_in_a_translated_attribute_stays_one(shipped):
    page = """<p title="C'est l'heure">Bonjour.</p><img alt='Le "chat"' src=a.png>"""
    out = shipped.translate_document(page, format="html")
    assert out.startswith("""<p title="It's time">""")  # was title="It&#x27;s time"
    assert out.endswith("""<img alt='The "cat"' src=a.png>""")  # in single quotes: "" kept


def test_only_real_alt_and_title_attributes_are_translated(tiny):
    page = "<p data-x=' title=\"chien\"'>chat</p>"  # a value that holds title="..."
    assert tiny.translate_document(page, format="html", beam=1) == page.replace("chat", "cat")
    image = tiny.translate_document("<p>chat <img src=x.png alt=chien></p>", format="html")
    assert image == '<p>cat <img src=x.png alt="dog"></p>'  # unquoted, it would end at a space
