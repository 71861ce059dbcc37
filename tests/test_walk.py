"""POST /steps and decoding/explain/walk.py: the step-through page shows the model's own numbers."""

from __future__ import annotations

import subprocess

import pytest
import torch
from starlette.testclient import TestClient
from test_server import S2A, client_for

from seq2attn_cli.decoding.explain.inspection import inspect_sentence
from seq2attn_cli.decoding.explain.walk import pool, walk
from seq2attn_cli.decoding.translator import Translator

SENTENCE = "il voit grand chat rouge"


@pytest.fixture(scope="module")
def translator(tiny_model) -> Translator:
    return Translator.load(tiny_model)


@pytest.fixture(scope="module")
def none(tiny_none_model) -> Translator:
    return Translator.load(tiny_none_model)


@pytest.fixture(scope="module")
def client(translator, none):
    with client_for(translator, name="tiny", compare=("none", none)) as c:
        yield c


def steps_of(client: TestClient, q: str) -> list[dict]:
    reply = client.post("/steps", json={"q": q})
    assert reply.status_code == 200, reply.text
    return reply.json()["models"]


def test_pool_shows_each_run_of_consecutive_numbers_as_its_mean() -> None:
    assert pool(torch.arange(8.0), 4) == [0.5, 2.5, 4.5, 6.5]
    assert pool(torch.arange(7.0), 3) == [1.0, 3.5, 5.5]  # runs as equal as they can be
    assert pool(torch.tensor([1.0, -2.0]), 32) == [1.0, -2.0]  # fewer numbers: one a cell


@pytest.mark.parametrize("q", [SENTENCE, "je mange pain", "nous voit chien"])
def test_each_step_is_what_inspect_steps_reports_for_the_pieces_the_beam_chose(
    client, translator, q
) -> None:
    walked = steps_of(client, q)[0]
    seen = inspect_sentence(translator, q)  # what `s2a inspect --steps` prints
    beam = translator.translate(q)
    assert walked["name"] == "tiny" and walked["translation"] == beam.text
    assert [s["chosen"] for s in walked["steps"]] == (beam.model_tokens or beam.tgt_tokens)
    assert walked["source_pieces"] == beam.src_tokens
    assert len(walked["steps"]) == len(seen.steps)
    inputs = ["<s>"] + [s.piece for s in seen.steps[:-1]]
    for got, want, read in zip(walked["steps"], seen.steps, inputs, strict=True):
        assert got["chosen"] == want.piece and got["input"] == read
        assert got["weights"] == pytest.approx(want.weights, abs=1e-6)
        assert got["scores"] == pytest.approx(want.scores, abs=1e-5)
        assert [p for p, _ in got["candidates"]] == [p for p, _ in want.candidates]
        assert sum(got["weights"]) == pytest.approx(1, abs=1e-5)
    # the weights are also those of the search itself, as `s2a translate` reports them
    for got, row in zip(walked["steps"], beam.weights, strict=True):
        assert got["weights"] == pytest.approx(row, abs=1e-4)


def test_a_line_of_numbers_the_model_copies_has_no_step_to_replay_as_inspect(
    client, translator
) -> None:
    walked = steps_of(client, "1999")[0]
    assert inspect_sentence(translator, "1999").steps == []  # `s2a inspect --steps` shows none
    assert walked["steps"] == [] and walked["translation"] == "1999"
    assert walked["changes"] == ["left untranslated what holds no word to translate"]
    assert walked["model_text"] == ""  # the model wrote nothing
    assert len(walked["encoder_states"]) == len(walked["source_pieces"])  # a state a piece
    given = steps_of(client, "🍕🍔")[0]  # written back as given: nothing read, nothing written
    assert given["source_pieces"] == given["encoder_states"] == given["steps"] == []
    assert given["model_text"] == "" and given["translation"] == "🍕🍔"


def test_the_context_drawn_is_the_weighted_sum_of_the_encoder_states_drawn(client) -> None:
    walked = steps_of(client, SENTENCE)[0]
    states = walked["encoder_states"]
    assert len(states) == len(walked["source_pieces"])
    assert walked["cells"] == 32 and walked["sizes"]["state"] == 64  # tiny: 2 numbers a cell
    for step in walked["steps"]:
        weighted = list(zip(step["weights"], states, strict=True))
        summed = [sum(w * s[i] for w, s in weighted) for i in range(32)]
        assert step["context"] == pytest.approx(summed, abs=1e-3)
        assert len(step["state"]) == len(step["attentional"]) == 32


def test_a_model_without_attention_hands_the_decoder_one_vector_with_weight_one(client) -> None:
    tiny, none = steps_of(client, SENTENCE)
    assert (tiny["attention"], none["name"], none["attention"]) == ("general", "none", "none")
    assert len(none["encoder_states"]) == 1 and len(none["source_pieces"]) == 6
    for step in none["steps"]:
        assert step["weights"] == [1.0]
        assert step["context"] == pytest.approx(none["encoder_states"][0], abs=1e-4)


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"q": ""}, 422, "one sentence"),
        ({"q": "je mange\nil voit"}, 422, "several lines"),
        ({"q": "je", "beam": 2}, 422, "unknown field 'beam'"),
        ({"q": "chat " * 300}, 400, "the limit is 1000"),
        ({"q": ["je"]}, 422, "one sentence"),
    ],
)
def test_steps_refuses_what_it_cannot_do_with_a_reason(client, body, status, says) -> None:
    reply = client.post("/steps", json=body)
    assert reply.status_code == status and says in reply.json()["error"]


def test_serve_compare_names_a_missing_model_before_loading_anything(tmp_path) -> None:
    missing = tmp_path / "nowhere"
    result = subprocess.run(
        [S2A, "serve", "--compare", str(missing), "--port", "0"], capture_output=True, text=True
    )
    assert result.returncode == 2 and "--compare" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_steps_asks_for_the_api_key_translate_asks_for(translator) -> None:
    with client_for(translator, api_key="s3cret") as keyed:
        assert keyed.post("/steps", json={"q": SENTENCE}).status_code == 403
        reply = keyed.post("/steps", json={"q": SENTENCE, "api_key": "s3cret"})
        assert reply.status_code == 200 and len(reply.json()["models"]) == 1


@pytest.mark.parametrize(
    ("source", "written", "said"),
    [  # issue #44: the page said "s2a set a/an" whenever the translation was not the model's
        ("Erdoğan a vu www.example.com hier.", "Erdogan saw URL yesterday.",
         {"wrote back the letters it read as base letters", "wrote back each URL as given"}),
        ("Nous avons vu une pomme.", "We saw a apple.", {"set a/an by the next word"}),
        ("Nous avons vu une pomme.", "We saw an apple.", set()),
    ],
)  # fmt: skip
def test_the_step_through_page_names_the_rules_that_changed_the_translation_and_no_other(
    shipped, model_writes, source, written, said
) -> None:
    model_writes(written)
    assert set(walk(shipped, source).as_dict()["changes"]) == said
