"""No request body, however malformed, deep or large, gets a 500 or a traceback from s2a serve."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_server import client_for

from seq2attn_cli.decoding.translator import Translator

ROUTES = ["/translate", "/detect", "/translate_file"]
JSON, FORM = "application/json", "application/x-www-form-urlencoded"
BOUNDARY = "multipart/form-data; boundary=xyz"
HOSTILE = [
    (JSON, b"[" * 100_000),  # deeper than the JSON parser goes
    (JSON, b'{"q": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"),
    (JSON, b'{"q": "a", "alternatives": ' + b"9" * 5000 + b"}"),  # past int()'s digit limit
    (JSON, b'{"q": "a", "alternatives": 1e999}'),  # inf
    (JSON, b'{"q": "a", "alternatives": -7}'),  # taken as 0, as LibreTranslate does
    (JSON, b'{"q": 1e999999}'),
    (JSON, b'{"q": {"a": 1}}'),
    (JSON, b'{"q": null}'),
    (JSON, b'{"q": true}'),
    (JSON, b'{"q": [["a"]]}'),
    (JSON, b'{"q": "a", "source": 3}'),
    (JSON, b'{"q": "a", "api_key": ["k"]}'),
    (JSON, b'{"q": "a", "attention": []}'),
    (JSON, b'{"q": "\\ud800 lone surrogate"}'),
    (JSON, b'{"q": "nul \\u0000 byte"}'),
    (JSON, b'{"q": "\xff\xfe invalid utf-8"}'),
    (JSON, b'{"q": "a", "q": "b"}'),
    (JSON, b"\x00\x01\x02\xff" * 100),
    (JSON, b""),
    (JSON, b"null"),
    (JSON, b'"just a string"'),
    (JSON, json.dumps({"q": "\n" * 100_000}).encode()),  # lines over the limit
    (JSON, json.dumps({"q": ["a"] * 20_000}).encode()),
    (FORM, b"q=%ff%fe&source=fr"),
    (FORM, b"q=a&q=b&source=fr&source=de"),
    (FORM, b"&&&===&&"),
    (FORM, b"q" * 200_000),
    (FORM, b"\x00\xff" * 50),
    ("text/plain", b"Bonjour"),
    ("application/xml", b"<q>Bonjour</q>"),
    ("multipart/form-data", b"--xyz\r\n\r\n"),  # no boundary
    (BOUNDARY, b"garbage without any boundary"),
    (BOUNDARY, b"--xyz\r\nContent-Disposition: form-data; name=q\r\n\r\nje"),  # never ends
    (BOUNDARY, b'--xyz\r\nContent-Disposition: form-data; name="q"\r\n\r\nje\r\n--xyz--\r\n'),
    (
        BOUNDARY,
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nje\r\n'
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="b.txt"\r\n\r\nje\r\n'
        b"--xyz--\r\n",
    ),  # two files
    (
        BOUNDARY,
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="../../a.srt"\r\n\r\n'
        b"\xff\xfe\x00\x00\r\n--xyz--\r\n",
    ),
    (BOUNDARY, b"--xyz\r\n" + b"X-Header: " + b"h" * 100_000 + b"\r\n\r\n--xyz--\r\n"),
    (BOUNDARY, b"--xyz\r\n" * 20_000),
]


@pytest.fixture(scope="module")
def client(tiny_model):
    with client_for(Translator.load(tiny_model)) as c:  # server errors raise here, as tracebacks
        yield c


def answered(reply) -> bool:
    """A JSON answer: a translation, or a refusal below 500 with its reason."""
    body = reply.json()
    if reply.status_code == 200:
        return True
    return 400 <= reply.status_code < 500 and isinstance(body.get("error"), str)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(("kind", "body"), HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_body_gets_a_json_refusal_not_a_500(client, route, kind, body) -> None:
    reply = client.post(route, content=body, headers={"Content-Type": kind})
    assert answered(reply), (reply.status_code, reply.text[:200])


@pytest.mark.parametrize(
    "query", ["q=%ff", "q=" + "a" * 20_000, "alternatives=9e9&q=a", "q=a&q=b&q=c", "%%%"]
)
def test_a_hostile_query_string_gets_a_json_refusal_not_a_500(client, query) -> None:
    reply = client.post(f"/translate?{query}")
    assert answered(reply), (reply.status_code, reply.text[:200])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    route=st.sampled_from(ROUTES),
    kind=st.sampled_from([JSON, FORM, BOUNDARY, ""]),
    body=st.one_of(
        st.binary(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(st.sampled_from(["q", "source", "alternatives", "x"]), inner)
            ),
            max_leaves=10,
        ).map(lambda v: json.dumps(v).encode()),
    ),
)
def test_any_body_gets_an_answer_not_a_500(client, route, kind, body) -> None:
    reply = client.post(route, content=body, headers={"Content-Type": kind} if kind else {})
    assert answered(reply), (reply.status_code, reply.text[:200])
