"""The page at / in a real headless Chromium: type French, get English, hover a word."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import CHROMIUM
from test_server import post_json

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="no Chromium (Debian: apt-get install chromium)"
)


def open_local(browser: Any, url: str, path: str, *, width: int = 1000, phone: bool = False):
    """A page of `browser` at url + path that refuses anything beyond the server (no CDN,
    no fonts); the page and what went wrong on it, growing as it runs: the addresses it was
    refused and its script errors."""
    viewport = {"width": width, "height": 800}
    page = browser.new_page(viewport=viewport, has_touch=phone, is_mobile=phone)
    faults: list[str] = []

    def local_only(route) -> None:
        if route.request.url.startswith(url):
            route.continue_()
        else:
            faults.append(route.request.url)
            route.abort()

    page.route("**/*", local_only)
    page.on("pageerror", lambda error: faults.append(f"script error: {error}"))
    page.goto(url + path)
    return page, faults


def open_page(browser: Any, url: str, sentence: str, *, width: int = 1000, phone: bool = False):
    """The page at / with `sentence` translated."""
    page, faults = open_local(browser, url, "", width=width, phone=phone)
    page.fill("#text", sentence)
    page.click("#go")
    page.wait_for_function("document.querySelector('#output').textContent.length > 0")
    assert not faults, faults
    return page


def attention(url: str, sentence: str) -> dict:
    """What the API says about one sentence, to check the page against."""
    return post_json(url, "translate", {"q": sentence, "attention": True})


def test_hovering_a_word_lights_up_the_words_it_attended_to(
    tiny_model, tmp_path, served, chromium
) -> None:
    sentence = "il voit grand chat rouge"
    url = served(tiny_model)
    page = open_page(chromium, url, sentence)
    want = attention(url, sentence)
    assert page.text_content("#output") == want["translatedText"]
    line = want["attention"][0]
    # hover the first English word: its heatmap row is framed, French words lit by weight
    page.hover(".words.tgt .w[data-i='0']")
    row = line["weights"][0]
    assert page.locator("td.focus").count() == len(line["source_words"])
    assert page.locator("td.focus").evaluate_all("c => c.map(td => +td.dataset.j)") == [0] * len(
        row
    )
    lit = page.locator(".words.src .w").evaluate_all(
        "ws => ws.map(w => +getComputedStyle(w).getPropertyValue('--h'))"
    )
    assert lit == pytest.approx(row[: len(lit)], abs=1e-3)
    best = max(range(len(row) - 1), key=row.__getitem__)
    classes = page.get_attribute(f".words.src .w[data-i='{best}']", "class")
    assert ("lit" in classes) == (row[best] >= 0.5)
    # and the reverse: a French word lights the English words that attended to it
    page.hover(f".words.src .w[data-i='{best}']")
    column = [r[best] for r in line["weights"]]
    lit = page.locator(".words.tgt .w").evaluate_all(
        "ws => ws.map(w => +getComputedStyle(w).getPropertyValue('--h'))"
    )
    assert lit == pytest.approx(column[: len(lit)], abs=1e-3)
    assert page.locator("td.focus").count() == len(line["target_words"])
    page.screenshot(path=str(tmp_path / "page.png"), full_page=True)


def test_on_a_phone_the_page_fits_and_a_tap_pins_a_word(tiny_model, served, chromium) -> None:
    url = served(tiny_model)
    sentence = "il voit grand chat rouge " * 3  # a heatmap wider than the phone
    page = open_page(chromium, url, sentence, width=360, phone=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360  # the heatmap scrolls inside its own box, not the page
    page.tap(".words.tgt .w[data-i='1']")
    assert page.locator("td.focus").evaluate_all("c => c.map(td => +td.dataset.j)")[0] == 1
    assert "focus" in page.get_attribute(".words.tgt .w[data-i='1']", "class")


def test_a_low_confidence_line_is_marked_and_its_dropped_words_underlined(
    tiny_model, tmp_path, served, chromium
):
    model = Path(shutil.copytree(tiny_model, tmp_path / "unsure"))
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    config["confidence"] = {"bias": -9.0, "weights": {}, "threshold": 99.0}  # sure of nothing
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    url = served(model)
    page = open_page(chromium, url, "il voit grand chat")
    line = attention(url, "il voit grand chat")["attention"][0]
    assert line["confidence"] < 0.5 and line["dropped"] == ["voit", "grand", "chat"]
    assert "low" in page.get_attribute(".line", "class")
    assert "confidence 0.00" in page.text_content(".line .sure")
    underlined = page.locator(".words.src .w.dropped").all_text_contents()
    assert underlined == ["voit", "grand", "chat"]
