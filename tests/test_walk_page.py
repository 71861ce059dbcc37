"""The step-through page /walk in a real headless Chromium: the numbers it shows are the model's."""

from __future__ import annotations

import os
import subprocess
from urllib.parse import quote

import pytest
from test_server import S2A, post_json
from test_web_page import open_local, pytestmark  # noqa: F401  (skipped without Chromium)

SENTENCE = "il voit grand chat rouge"


def api_steps(url: str, q: str) -> list[dict]:
    """What POST /steps answers for one sentence: one walk per model served."""
    return post_json(url, "steps", {"q": q})["models"]


def inspect_steps(model, q: str) -> list[dict]:
    """`s2a inspect --steps` as printed: per step its chosen piece, top weights and scores."""
    env = {**os.environ, "COLUMNS": "300"}  # one table row a line
    out = subprocess.run(
        [S2A, "inspect", "--model", str(model), q, "--steps", "--threads", "1"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout.split("decoding step by step")[1]  # fmt: skip
    steps = []
    for line in out.splitlines():
        cols = [c.strip() for c in line.split("│")]
        if len(cols) == 9 and cols[1].isdigit():
            weights = dict(w.rsplit(":", 1) for w in cols[4].split())
            steps.append(
                {
                    "scores": [float(x) for x in cols[3].split()],
                    "weights": {piece: float(w) for piece, w in weights.items()},
                    "chosen": cols[7].rsplit(" (", 1)[0],
                }
            )
    return steps


def open_walk(browser, url: str, q: str, *, width: int, phone: bool = False):
    """/walk decoding `q`, at its first step."""
    page, faults = open_local(browser, url, f"walk?q={quote(q)}", width=width, phone=phone)
    page.wait_for_selector("#where:has-text('step 1 of')")
    assert not faults, faults
    return page


def shown_step(page, m: int) -> dict:
    """What panel m shows once its weighted sum is complete."""
    panel = f".model[data-model='{m}']"
    page.wait_for_selector(f"{panel}[data-summed='1']")
    return page.evaluate(
        """(panel) => {
        const box = document.querySelector(panel);
        const rows = [...box.querySelectorAll('.wcell')];
        return {
          step: +box.dataset.step,
          chosen: box.querySelector('ol.top li.chosen').dataset.piece,
          weights: rows.map((r) => +r.dataset.weight),
          bars: rows.map((r) => r.querySelector('.bar b').textContent),
          scores: [...box.querySelectorAll('.row.src .score')].slice(1).map((s) => s.textContent),
          context: JSON.parse(box.querySelector('[data-move="4"] .cells').dataset.values),
          top: [...box.querySelectorAll('ol.top li')].map((li) => li.dataset.piece),
          sofar: box.querySelector('.sofar').textContent,
        };
      }""",
        panel,
    )


def test_stepping_through_shows_each_steps_weights_and_word_as_api_and_inspect(
    tiny_model, tiny_none_model, served, chromium
) -> None:
    url = served(tiny_model, "--compare", str(tiny_none_model))
    page = open_walk(chromium, url, SENTENCE, width=1300)
    walks = api_steps(url, SENTENCE)
    inspected = inspect_steps(tiny_model, SENTENCE)
    main, none = walks
    assert len(inspected) == len(main["steps"])
    last = max(len(w["steps"]) for w in walks)
    for t in range(last):
        if t:
            page.keyboard.press("ArrowRight")
        assert page.text_content("#where") == f"step {t + 1} of {last}"
        if t < len(main["steps"]):
            want, cli = main["steps"][t], inspected[t]
            got = shown_step(page, 0)
            assert got["step"] == t + 1
            assert got["chosen"] == want["chosen"] == cli["chosen"]
            assert got["weights"] == pytest.approx(want["weights"], abs=1e-6)
            assert got["bars"] == [f"{w:.2f}" for w in want["weights"]]
            shown = dict(zip(main["source_pieces"], got["bars"], strict=True))
            assert {p: float(shown[p]) for p in cli["weights"]} == cli["weights"]
            assert [float(s) for s in got["scores"]] == pytest.approx(cli["scores"], abs=0.051)
            assert got["top"][:5] == [p for p, _ in want["candidates"]]
            assert got["context"] == pytest.approx(want["context"], abs=1e-6)
            so_far = "".join(s["chosen"] for s in main["steps"][: t + 1] if s["chosen"] != "</s>")
            assert got["sofar"].startswith(so_far.replace("▁", " ").strip() or "…")
        # the model without attention: one vector, weight 1, nothing to choose from
        k = min(t, len(none["steps"]) - 1)
        other = shown_step(page, 1)
        assert other["weights"] == [1.0] and other["bars"] == ["1.00"]
        assert other["chosen"] == none["steps"][k]["chosen"]
    assert page.is_disabled("#fwd") and page.locator(".none-note").count() == 1
    page.keyboard.press("ArrowLeft")
    assert page.text_content("#where") == f"step {last - 1} of {last}"
    page.click("#back")
    page.keyboard.press("Home")
    assert page.text_content("#where") == f"step 1 of {last}" and page.is_disabled("#back")
    page.click("#play")  # plays the six moves of step 1's successor, then on
    page.wait_for_selector(f"#where:has-text('step 2 of {last}')", timeout=10_000)
    assert page.get_attribute("#play", "aria-label") == "pause"
    page.keyboard.press(" ")
    assert page.get_attribute("#play", "aria-label") == "play"


def test_on_a_phone_both_models_fit_and_the_buttons_work_by_keyboard(
    tiny_model, tiny_none_model, served, chromium
) -> None:
    url = served(tiny_model, "--compare", str(tiny_none_model))
    sentence = "il voit grand chat rouge et le petit chien mange pain"
    page = open_walk(chromium, url, sentence, width=360, phone=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.focus("#fwd")
    page.keyboard.press("Enter")
    assert page.text_content("#where").startswith("step 2 of")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")  # the back button
    assert page.text_content("#where").startswith("step 1 of")


def test_a_line_the_models_copy_says_so_and_offers_no_step_to_play(
    tiny_model, tiny_none_model, served, chromium
) -> None:
    url = served(tiny_model, "--compare", str(tiny_none_model))
    page, faults = open_local(chromium, url, "walk?q=1999", width=1300)
    page.wait_for_selector("#where:has-text('no steps to show')")
    notes = page.locator(".model .none-note").all_text_contents()
    assert len(notes) == 2 and all("No decoding step" in n and "“1999”" in n for n in notes)
    assert all(page.is_disabled(b) for b in ("#back", "#play", "#fwd"))
    page.keyboard.press("End")
    page.keyboard.press(" ")
    assert page.text_content("#where") == "no steps to show" and not page.locator(".move").count()
    assert not faults, faults  # no script error, keys pressed with nothing to play
