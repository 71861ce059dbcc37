"""s2a from Python: `import seq2attn_cli as s2a; s2a.load().translate(...)` as the README shows."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

import pytest
import torch

import seq2attn_cli as s2a
from seq2attn_cli.align.aligner import align
from seq2attn_cli.checkpoint import EMBEDDED
from seq2attn_cli.errors import ModelError

LINES = ["il voit grand chat rouge", "je mange pain", "elle aime eau"]


@pytest.fixture(scope="module")
def tr(tiny_model) -> s2a.Translator:
    return s2a.load(tiny_model)


def test_import_leaves_torch_out_and_the_version_is_the_package_s() -> None:
    code = "import sys, seq2attn_cli as s2a; print(s2a.__version__, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [version("seq2attn-cli"), "False"]


def test_a_str_is_one_sentence_and_a_list_gives_a_list(tr) -> None:
    one = tr.translate(LINES[0])
    assert isinstance(one, s2a.Translation) and one.text
    many = tr.translate(LINES, beam=1)
    assert isinstance(many, list) and len(many) == len(LINES)
    assert tr.translate(LINES)[0] == one  # same sentence, same Translation
    assert [t.text for t in tr.translate(tuple(LINES), beam=1)] == [t.text for t in many]
    assert tr.translate([]) == []


@pytest.mark.parametrize(
    ("wrong", "named"),
    [
        (42, "int"),
        (None, "NoneType"),
        (b"chat", "bytes"),
        (iter(LINES), "list_iterator"),
        (["chat", 3], "list holding int 3"),
        ({"q": "chat"}, "dict"),
    ],  # fmt: skip
)
def test_anything_else_is_a_type_error_that_says_what_it_got(tr, wrong, named) -> None:
    with pytest.raises(TypeError, match="takes a str .* or a list of str, not " + named):
        tr.translate(wrong)


@pytest.mark.parametrize(
    ("call", "error", "said"),
    [
        (
            lambda tr: tr.translate("je", beam=1.5),
            TypeError,
            "beam must be a whole number, not float",
        ),
        (
            lambda tr: tr.translate("je", beam="5"),
            TypeError,
            "beam must be a whole number, not str",
        ),
        (lambda tr: tr.translate("je", batch_size=0), ValueError, "batch_size must be at least 1"),
        (
            lambda tr: tr.translate("je", glossary=["chat"]),
            TypeError,
            "glossary must map .* not list",
        ),
        (lambda tr: tr.translate_document(5), TypeError, "takes a str .*, not int"),
        (lambda tr: tr.translate_document(b"je"), TypeError, "takes a str .*, not bytes"),
        (lambda tr: tr.translate_document("je", beam=0), ValueError, "beam must be at least 1"),
        (lambda tr: align(tr, [("je", "I")], method="best"), ValueError, "one of argmax, .*'best'"),
        (lambda tr: align(tr, None), TypeError, "a list of .* pairs, not NoneType"),
        (lambda tr: align(tr, [("je", "I"), ("a", None)]), TypeError, "pair 1 is \\('a', None\\)"),
        (lambda tr: align(tr, ["ab"]), TypeError, "pairs of two str; pair 0 is 'ab'"),
    ],  # fmt: skip
)
def test_a_wrong_argument_is_an_error_that_names_it(tr, call, error, said) -> None:
    with pytest.raises(error, match=said):
        call(tr)


@pytest.mark.parametrize(
    ("threads", "error", "said"),
    [(-1, ValueError, "threads must be 0 .* not -1"), ("2", TypeError, "not str '2'")],
)
def test_threads_that_are_no_count_are_an_error_that_names_them(tiny_model, threads, error, said):
    with pytest.raises(error, match=said):
        s2a.load(tiny_model, threads=threads)


def test_a_device_that_is_not_there_is_a_value_error_that_says_so(tiny_model) -> None:
    with pytest.raises(ValueError, match="device must be auto, cpu, cuda or mps, not 'gpu'"):
        s2a.load(tiny_model, device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device cuda: no CUDA device is available"):
            s2a.load(tiny_model, device="cuda")
    assert s2a.load(tiny_model, device="auto").translate("je").text


def test_documents_take_a_glossary_as_lines_do(tr) -> None:
    line = tr.translate("il voit chat", glossary={"chat": "Kitty"}).text
    assert "Kitty" in line
    page = tr.translate_document("<p>il voit chat</p>", format="html", glossary={"chat": "Kitty"})
    assert page == f"<p>{line}</p>"
    with pytest.raises(TypeError, match="glossary must map"):
        tr.translate_document("il voit chat", glossary="chat\tKitty")


def test_a_translation_carries_tokens_score_attention_and_alignment(tr) -> None:
    t = tr.translate(LINES[0])
    assert t.src_tokens[-1] == t.tgt_tokens[-1] == "</s>"
    assert len(t.weights) == len(t.tgt_tokens)
    assert all(len(row) == len(t.src_tokens) for row in t.weights)
    assert all(abs(sum(row) - 1) < 1e-3 for row in t.weights)
    assert isinstance(t.score, float) and t.score <= 0
    src, tgt, weights = t.word_attention
    assert src[:-1] == LINES[0].split() and " ".join(tgt[:-1]) == t.text
    assert len(weights) == len(tgt) and len(weights[0]) == len(src)
    assert t.alignment and all(0 <= i < len(src) - 1 and 0 <= j < len(tgt) - 1
                               for i, j in t.alignment)  # fmt: skip
    json.dumps(t.as_dict())  # plain Python values only


def test_a_line_of_columns_is_each_column_s_translation_between_its_tabs(tr) -> None:
    line = f"{LINES[0]}\t  {LINES[1]}"
    t, first, second = tr.translate([line, LINES[0], LINES[1]], beam=5)
    assert t.text == f"{first.text}\t  {second.text}" and t.source == line
    assert t.confidence == min(first.confidence, second.confidence)  # its least sure column
    assert all(a.count("\t") == 1 for a in t.alternatives) and t.text not in t.alternatives
    assert t.src_tokens == first.src_tokens[:-1] + second.src_tokens  # one attention, joined
    assert len(t.weights) == len(t.tgt_tokens) and all(
        len(r) == len(t.src_tokens) for r in t.weights
    )
    words = len(first.text.split())  # the second column's words are numbered after the first's
    assert {(i, j) for i, j in t.alignment if j >= words} == {
        (i + len(LINES[0].split()), j + words) for i, j in second.alignment
    }


def test_load_without_a_path_loads_the_embedded_model() -> None:
    if not (EMBEDDED / "config.json").exists():
        pytest.skip("the embedded model is not in this checkout")
    tr = s2a.load(quantized=False)
    written = json.loads((EMBEDDED / "config.json").read_text(encoding="utf-8"))
    assert tr.config.raw == written and tr.config.model == tr.model.config
    assert tr.max_chars == written["training"]["max_chars"] == tr.config.training.max_chars


def test_load_names_what_is_wrong_with_a_path_in_the_cli_s_words(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("")
    cases = {
        "gone": ": no such directory",
        "file": ": not a directory",
        "empty": r": not a model directory \(no config.json\)",
    }
    for name, says in cases.items():
        with pytest.raises(ModelError, match=f"{name}{says}"):
            s2a.load(str(tmp_path / name))


def test_what_the_model_could_not_read_is_in_dropped_as_the_cli_warns_of_it(shipped):
    # Python and the server said nothing where `s2a translate` warned (a user's try-out)
    t = shipped.translate("Sánchez est l☃à.")
    assert "☃" in t.dropped and "☃" not in t.text
    assert shipped.translate("🍕 🍕").dropped == []  # written back as given: not dropped
