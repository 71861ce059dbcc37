"""s2a serve: LibreTranslate's API as its clients use it, the limits, and concurrent clients."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from seq2attn_cli.decoding.translator import Translator
from seq2attn_cli.serve.server import Limits, create_app, model_languages

S2A = str(Path(sys.executable).parent / "s2a")
LINES = ["il voit grand chat rouge", "je mange pain", "elle aime eau", "nous voit chien"]


@pytest.fixture(scope="module")
def translator(tiny_model) -> Translator:
    return Translator.load(tiny_model)


def client_for(translator: Translator, **options) -> TestClient:
    """A test client of the app as `s2a serve` builds it, with the given limits or options."""
    given = {k: options.pop(k) for k in ("body_bytes", "lines", "chars", "timeout") if k in options}
    limits = Limits(**{"body_bytes": 262144, "lines": 128, "chars": 1000, "timeout": 30, **given})
    options = {"languages": ("fr", "en"), "beam": 5, **options}
    app = create_app(translator, limits=limits, **options)
    return TestClient(app)


@pytest.fixture(scope="module")
def client(translator):
    with client_for(translator) as c:
        yield c


def test_a_string_q_gives_a_string_and_a_list_gives_a_list(client, translator) -> None:
    found = translator.translate(LINES)
    want = [t.text for t in found]
    sure = [round(t.confidence, 4) for t in found]
    one = client.post("/translate", json={"q": LINES[0], "source": "fr", "target": "en"})
    assert one.status_code == 200
    # LibreTranslate's field, and beside it s2a's confidence (0-1) and dropped words
    assert one.json() == {"translatedText": want[0], "confidence": sure[0], "dropped": []}
    many = client.post("/translate", json={"q": LINES, "source": "fr", "target": "en"})
    assert many.json() == {"translatedText": want, "confidence": sure, "dropped": [[]] * 4}


def test_a_text_is_as_sure_as_its_least_sure_line_and_names_every_dropped_word(client) -> None:
    texts = client.post("/translate", json={"q": LINES, "attention": True}).json()["attention"]
    lines = [line for text in texts for line in text]  # a list q: one list of lines per text
    text = client.post("/translate", json={"q": "\n".join(LINES), "attention": True}).json()
    assert text["confidence"] == min(line["confidence"] for line in lines)
    assert text["dropped"] == [w for line in lines for w in line["dropped"]]
    assert all(0 <= line["confidence"] <= 1 for line in text["attention"])


def test_source_auto_reports_the_detected_language_as_libretranslate_does(client) -> None:
    reply = client.post("/translate", json={"q": LINES[:2], "source": "auto", "target": "en"})
    detected = reply.json()["detectedLanguage"]  # one per text, each text's own
    assert len(detected) == 2 and detected[0] != detected[1]
    assert all(d["language"] == "fr" and 0 < d["confidence"] <= 100 for d in detected)


def test_a_form_encoded_request_works_like_json(client) -> None:
    form = client.post("/translate", data={"q": LINES[1], "source": "fr", "target": "en"})
    as_json = client.post("/translate", json={"q": LINES[1], "source": "fr", "target": "en"})
    assert form.status_code == 200 and form.json() == as_json.json()


def test_each_line_of_a_text_is_translated_and_the_lines_are_kept(client, translator) -> None:
    reply = client.post("/translate", json={"q": "\n".join(LINES[:3])})
    want = [t.text for t in translator.translate(LINES[:3])]
    assert reply.json()["translatedText"].split("\n") == want


def test_attention_gives_words_weights_and_alignment_for_every_line(client) -> None:
    reply = client.post("/translate", json={"q": [LINES[0], "a\nb"], "attention": True}).json()
    assert [len(lines) for lines in reply["attention"]] == [1, 2]
    line = reply["attention"][0][0]
    assert line["source_words"][:-1] == LINES[0].split() and line["source_words"][-1] == "</s>"
    assert line["target_words"][-1] == "</s>"
    assert " ".join(line["target_words"][:-1]) == reply["translatedText"][0]
    assert len(line["weights"]) == len(line["target_words"])
    for row in line["weights"]:
        assert len(row) == len(line["source_words"]) and abs(sum(row) - 1) < 0.01
    assert re.fullmatch(r"(\d+-\d+( \d+-\d+)*)?", line["alignment"])
    assert isinstance(line["score"], float) and line["score"] <= 0


def test_languages_and_health_answer_as_libretranslate_does(client) -> None:
    languages = client.get("/languages").json()
    assert {"code": "fr", "name": "French", "targets": ["en"]} in languages
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["api_key_required"] is False


def test_the_page_is_self_contained(client) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "<title>" in page.text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.text)  # nothing fetched


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b'{"q": "bonjour', 400, "malformed JSON"),
        (b'["bonjour"]', 400, "Invalid JSON format"),
        (b"{}", 400, "missing q parameter"),
        (b'{"q": ""}', 400, "missing q parameter"),
        (b'{"q": 3}', 400, "string or a list of strings"),
        (b'{"q": ["a", 3]}', 400, "string or a list of strings"),
        (b'{"q": "a", "colour": "red"}', 400, "unknown parameter 'colour'"),
        (b'{"q": "a", "source": "de"}', 400, "de is not supported"),
        (b'{"q": "a", "target": "es"}', 400, "es is not supported"),
        (b'{"q": "a", "source": ["fr"]}', 400, "source parameter must be a string"),
        (b'{"q": "a", "format": "xml"}', 400, "xml format is not supported"),
        (b'{"q": "a", "alternatives": "three"}', 400, "alternatives parameter is not a number"),
        (b'{"q": "a", "alternatives": 5}', 400, "alternatives parameter must be <= 4"),
        (b'{"q": "a", "attention": "maybe"}', 400, "attention"),
    ],
)
def test_a_bad_request_gets_a_json_error_naming_the_problem(client, body, status, says) -> None:
    reply = client.post("/translate", content=body, headers={"Content-Type": "application/json"})
    assert reply.status_code == status
    assert says in reply.json()["error"]


def test_requests_over_a_limit_get_400_and_the_server_goes_on(translator) -> None:
    with client_for(translator, body_bytes=2000, lines=3, chars=40) as c:
        big = c.post("/translate", json={"q": "je " * 1000})
        assert big.status_code == 400 and "limit is 2000 (the server's --max-body)" in big.text
        lines = c.post("/translate", json={"q": LINES})
        assert lines.status_code == 400 and "4 lines" in lines.json()["error"]
        assert "the limit is 3 (the server's --max-lines)" in lines.json()["error"]
        long = c.post("/translate", json={"q": ["je", "chat " * 10]})
        assert long.status_code == 400 and "q[1]" in long.json()["error"]
        assert "(the server's --max-chars)" in long.json()["error"]
        assert c.post("/translate", json={"q": LINES[:3]}).status_code == 200


def test_a_request_over_the_time_limit_gets_503(translator) -> None:
    with client_for(translator, timeout=1e-6) as c:
        reply = c.post("/translate", json={"q": LINES, "source": "fr"})
        assert reply.status_code == 503 and "not done within" in reply.json()["error"]


class Slow:
    """A translator that takes as long per character as a big model does (0.1 ms)."""

    def __init__(self, translator: Translator) -> None:
        self.translator = translator

    def translate(self, lines: list[str], **options) -> list:
        """The tiny model's translations, after the time a big model would take."""
        time.sleep(1e-4 * sum(map(len, lines)))
        return self.translator.translate(lines, **options)


@pytest.mark.parametrize("glossary", [{}, {"pain": "loaf"}])  # with one, as without
def test_a_short_request_after_a_timed_out_one_is_answered(translator, capsys, glossary) -> None:
    with client_for(Slow(translator), timeout=1, search_chars=1000) as c:  # 0.1 s searches
        asked = {"q": ["je mange pain " * 20] * 100, "glossary": glossary}  # 2.8 s of work
        big = c.post("/translate", json=asked)
        assert big.status_code == 503 and "within 1 s" in big.json()["error"]
        short = c.post("/translate", json={"q": LINES[0]})
        assert short.status_code == 200 and short.json()["translatedText"]
    logged = capsys.readouterr().err.splitlines()
    assert len([line for line in logged if "503" in line]) == 1


def test_a_final_newline_does_not_count_as_a_line(translator) -> None:
    with client_for(translator, lines=3) as c:
        reply = c.post("/translate", json={"q": "\n".join(LINES[:3]) + "\n"})
        assert reply.status_code == 200
        assert reply.json()["translatedText"].split("\n")[3:] == [""]  # the newline is kept
        assert c.post("/translate", json={"q": "\n".join(LINES)}).status_code == 400


def test_a_model_of_unknown_languages_lists_none_and_detects_without_confidence(
    translator,
) -> None:
    unknown = dataclasses.replace(translator.config, languages=(None, None))
    languages = model_languages(unknown, Path("models/my-model"))
    with client_for(translator, languages=languages) as c:
        assert c.get("/languages").json() == []
        reply = c.post("/translate", json={"q": LINES[0], "source": "auto"}).json()
        assert reply["translatedText"]
        assert reply["detectedLanguage"] == {"language": "und", "confidence": 0.0}


def test_an_api_key_is_required_when_the_server_has_one(translator) -> None:
    with client_for(translator, api_key="s3cret") as c:
        assert c.post("/translate", json={"q": "je"}).status_code == 403
        assert c.post("/translate", json={"q": "je", "api_key": "nope"}).status_code == 403
        assert c.post("/translate", json={"q": "je", "api_key": "s3cret"}).status_code == 200
        assert c.get("/health").json()["api_key_required"] is True


def test_unknown_routes_and_methods_answer_json(client) -> None:
    assert client.get("/nope").json() == {"error": "Not Found"}
    assert client.get("/translate").status_code == 405


def start_server(model: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    """`s2a serve` on a free port; its process and base URL once it answers."""
    cmd = [S2A, "serve", "--model", str(model), "--port", "0", "--threads", "1", *extra]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=os.environ)
    line = proc.stderr.readline()
    found = re.search(r"http://[\d.]+:\d+/", line)
    assert found, line + proc.stderr.read()
    return proc, found[0]


def post_json(url: str, route: str, body: dict) -> Any:
    """POST a JSON body to a running server's route; its JSON answer."""
    request = urllib.request.Request(
        url + route, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.load(reply)


def post(url: str, q: str) -> str:
    """One client: POST /translate with a string, the translation back."""
    return post_json(url, "translate", {"q": q})["translatedText"]


def test_twenty_parallel_clients_each_get_what_s2a_translate_gives(tiny_model, toy_corpus):
    lines = [row.split("\t")[0] for row in toy_corpus.read_text().splitlines()[:20]]
    cli = subprocess.run(
        [S2A, "translate", "--model", str(tiny_model), "--threads", "1"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    proc, url = start_server(tiny_model)
    try:
        with ThreadPoolExecutor(max_workers=20) as pool:
            answers = list(pool.map(lambda q: post(url, q), lines))
        assert answers == cli.stdout.splitlines()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_refuses_a_port_in_use_before_loading_the_model(tiny_model) -> None:
    proc, url = start_server(tiny_model)
    try:
        port = url.rsplit(":", 1)[1].strip("/")
        taken = subprocess.run(
            [S2A, "serve", "--model", str(tiny_model), "--port", port],
            capture_output=True,
            text=True,
        )
        assert taken.returncode == 2 and f"--port {port}" in taken.stderr
        assert "Traceback" not in taken.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_refuses_a_max_chars_beyond_what_the_model_translates(tiny_model) -> None:
    try:  # without the check the server would start, and cut such lines without a word
        asked = subprocess.run(
            [S2A, "serve", "--model", str(tiny_model), "--port", "0", "--max-chars", "30000"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("s2a serve started with --max-chars 30000")
    assert asked.returncode == 2 and "Traceback" not in asked.stderr
    assert "--max-chars 30000: s2a translates lines of up to 10,000 characters" in asked.stderr


def test_log_requests_says_a_line_a_request_without_its_text_or_key(tiny_model) -> None:
    proc, url = start_server(tiny_model, "--log-requests", "--api-key", "s3cret")
    try:
        body = {"q": "je mange pain"}  # the key in the query string, which is not logged
        assert post_json(url, "translate?api_key=s3cret", body)["translatedText"]
        with pytest.raises(urllib.error.HTTPError):  # refused: logged with its status too
            post_json(url, "translate", {"q": "je mange pain", "api_key": "wrong"})
        with pytest.raises(urllib.error.HTTPError):  # a newline in the path forges no line
            urllib.request.urlopen(url + "x%0A127.0.0.1%20POST%20/translate%20200", timeout=30)
    finally:
        proc.terminate()
        said = proc.communicate(timeout=30)[1]
    lines = [line for line in said.splitlines() if " /translate " in line]
    assert re.fullmatch(r"127\.0\.0\.1 POST /translate 200 \d+ ms", lines[0]), said
    assert re.fullmatch(r"127\.0\.0\.1 POST /translate 403 \d+ ms", lines[1]), said
    assert "s3cret" not in said and "mange" not in said
    assert re.search(r"\n127\.0\.0\.1 GET /x%0A127\.0\.0\.1%20POST%20/translate%20200 404", said)
    assert len(lines) == 2  # the forged one is not a line of its own


def test_no_line_a_request_unless_asked(tiny_model) -> None:
    proc, url = start_server(tiny_model)
    try:
        assert post(url, "je mange pain")
    finally:
        proc.terminate()
        said = proc.communicate(timeout=30)[1]
    assert "/translate" not in said


@pytest.mark.parametrize(
    "signum, code, said",
    [(signal.SIGINT, 130, "s2a: interrupted"), (signal.SIGTERM, 143, "s2a: stopped by SIGTERM")],
)
def test_ctrl_c_or_sigterm_stops_the_server_with_a_line_that_says_so(
    tiny_model, signum, code, said
):
    proc, url = start_server(tiny_model)
    assert post(url, "je mange pain")
    proc.send_signal(signum)  # SIGTERM as systemd or docker stop send it: it died with -15
    rest = proc.communicate(timeout=30)[1]
    assert proc.returncode == code and rest.splitlines()[-1:] == [said], rest
