"""LibreTranslate's own clients, unchanged, against a running `s2a serve` on 127.0.0.1.

libretranslatepy (translate, detect, languages) and deep-translator's LibreTranslator
(translate, translate_batch, translate_file, and its 403 and error statuses): every call
they offer that reaches a LibreTranslate server (deep-translator's get_supported_languages
and is_language_supported read its own table).
"""

from __future__ import annotations

import json
import socket

import pytest
from deep_translator import LibreTranslator
from deep_translator.exceptions import AuthorizationException, ServerException
from libretranslatepy import LibreTranslateAPI
from test_server import LINES, start_server

from seq2attn_cli.decoding.translator import Translator

GERMAN = "Guten Morgen, wie geht es dir heute? Ich habe keine Zeit."


@pytest.fixture(scope="module")
def server(tiny_model):
    """`s2a serve` of the tiny model with an api key and a request limit; its URL and log."""
    proc, url = start_server(tiny_model, "--api-key", "k3y", "--req-limit", "40")
    yield url, proc
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def want(tiny_model) -> list[str]:
    return [t.text for t in Translator.load(tiny_model).translate(LINES)]


def test_libretranslatepy_translates_detects_and_lists_languages(server, want) -> None:
    api = LibreTranslateAPI(server[0], api_key="k3y")
    assert api.translate(LINES[0], "fr", "en") == want[0]
    assert api.translate(LINES[1], "auto", "en") == want[1]
    found = api.detect(GERMAN)
    assert found[0]["language"] == "de" and found[0]["confidence"] > 50
    assert {"code": "fr", "name": "French", "targets": ["en"]} in api.languages()


def test_libretranslatepy_hears_403_for_a_wrong_key(server) -> None:
    import urllib.error

    with pytest.raises(urllib.error.HTTPError) as refused:
        LibreTranslateAPI(server[0], api_key="nope").translate(LINES[0], "fr", "en")
    assert refused.value.code == 403
    assert json.load(refused.value) == {"error": "Invalid API key"}


def test_deep_translator_translates_a_text_a_batch_and_a_file(server, want, tmp_path) -> None:
    lt = LibreTranslator(source="fr", target="en", api_key="k3y", custom_url=server[0])
    assert lt.translate(LINES[0]) == want[0]
    assert lt.translate_batch(LINES) == want
    path = tmp_path / "notes.txt"
    path.write_text(LINES[2], encoding="utf-8")
    assert lt.translate_file(str(path)) == want[2]


def test_deep_translator_hears_403_and_400_as_its_exceptions(server) -> None:
    wrong = LibreTranslator(source="fr", target="en", api_key="nope", custom_url=server[0])
    with pytest.raises(AuthorizationException):
        wrong.translate(LINES[0])
    german = LibreTranslator(source="de", target="en", api_key="k3y", custom_url=server[0])
    with pytest.raises(ServerException):  # 400: de is not supported
        german.translate("Guten Morgen")


def raw(url: str, request: bytes) -> bytes:
    """Send bytes as they are to the server; what it answers."""
    host, port = url.split("//")[1].strip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        return b"".join(iter(lambda: sock.recv(65536), b""))


def test_a_hostile_request_leaves_no_traceback_in_the_log(server) -> None:
    url, proc = server
    deep = b"[" * 100_000
    for body, kind in [(deep, "application/json"), (b"--x\r\n\x00", "multipart/form-data")]:
        head = f"POST /translate HTTP/1.1\r\nHost: a\r\nContent-Type: {kind}\r\n"
        answer = raw(url, head.encode() + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        assert answer.startswith(b"HTTP/1.1 4"), answer[:100]
    assert raw(url, b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400")
    proc.terminate()  # its log is read to its end
    log = proc.stderr.read()
    assert "Traceback" not in log and "Exception" not in log, log[-2000:]
