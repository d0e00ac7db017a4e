"""The preferences form as the real `digest serve` reads it, without a browser: whatever a
client posts (digits of other scripts, numbers thousands of digits long, bytes that are not
UTF-8, a charset nobody knows), the answer is a page that says what is wrong, never a 500."""

from __future__ import annotations

import html
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from digest.store import open_store
from tests.configs import write_config
from tests.conftest import free_port, run_cli, start_cli

pytestmark = pytest.mark.slow

READER = "reader@example.org"
# Every field of the page's form but the new channel (whose checks are the channels' own).
FIELDS = ("csrf", "category", "timezone", "send_at", "include", "exclude", "max_stories")
FIELDS += ("language", "send_email", "remove")


@dataclass
class Form:
    folder: Path
    url: str
    csrf: str

    def post(
        self, body: bytes, content_type: str = "application/x-www-form-urlencoded"
    ) -> tuple[int, str]:
        request = urllib.request.Request(
            self.url, data=body, headers={"Content-Type": content_type}, method="POST"
        )
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(request, timeout=30) as response:
                return response.status, response.read().decode(errors="replace")
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode(errors="replace")

    def send(self, **fields: str) -> tuple[int, str]:
        return self.post(urllib.parse.urlencode({"csrf": self.csrf, **fields}).encode())

    def subscriber(self) -> Any:
        with open_store(f"sqlite:///{self.folder / 'digest.db'}") as store:
            return store.subscriber(READER)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 303 after saving is the answer itself


@pytest.fixture(scope="module")
def form(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Form]:
    """`digest serve` over a store with one subscriber; its preferences form and a CSRF token
    from the page."""
    port = free_port()
    folder = write_config(tmp_path_factory.mktemp("form"), serve={"port": port})
    with open_store(f"sqlite:///{folder / 'digest.db'}") as store:
        token = store.add_subscriber(READER, categories=None, timezone="UTC").token
    server = start_cli("serve", cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/preferences?token={token}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    page = response.read().decode()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        yield Form(folder, url, csrf)
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("count", ["²", "٣", "３", "1" * 5000, "-1", "1e2", " 2 2"])
def test_stories_per_category_are_ascii_digits_or_a_plain_refusal(form: Form, count: str):
    before = form.subscriber().preferences.max_stories
    status, page = form.send(max_stories=count, timezone="UTC")
    assert status == 400, page[:300]
    assert "stories per category must be a whole number (digits 0 to 9)" in page
    assert form.subscriber().preferences.max_stories == before  # "٣" is not taken as 3


@pytest.mark.parametrize("timezone", ["America", "Etc", "9" * 300])
def test_a_time_zone_naming_a_folder_or_too_long_is_a_plain_refusal(form: Form, timezone: str):
    """ZoneInfo raises OSError for these ("Is a directory", "File name too long"), which the
    check did not catch: a server error (Hypothesis, default profile)."""
    status, page = form.send(timezone=timezone)
    assert status == 400, page[:300]
    assert "unknown time zone" in page
    assert form.subscriber().preferences.timezone == "UTC"


NOW = str(int(time.time()))


@pytest.mark.parametrize(
    "csrf", ["².x", "٣.x", "1" * 4300 + ".x", "1" * 20 + ".x", f"{NOW}.é", f"{NOW}.{'é' * 64}"]
)
def test_a_csrf_token_of_any_shape_is_refused_not_a_crash(form: Form, csrf: str):
    status, page = form.post(urllib.parse.urlencode({"csrf": csrf, "include": "x"}).encode())
    assert status == 403 and "This form has expired" in page


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"include=caf\xe9", "application/x-www-form-urlencoded"),
        (b"include=x", "application/x-www-form-urlencoded; charset=no-such-charset"),
        (
            b"--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--\r\n",
            "multipart/form-data; boundary=b",
        ),
    ],
)
def test_a_form_that_cannot_be_read_is_answered_400(form: Form, body: bytes, content_type: str):
    status, page = form.post(body, content_type)
    assert status == 400 and "could not be read" in page


def test_ascii_digits_still_set_the_number_of_stories(form: Form):
    status, _ = form.send(max_stories="3", timezone="UTC")
    assert status == 303 and form.subscriber().preferences.max_stories == 3


def test_a_bad_value_is_refused_in_the_same_words_by_the_page_and_the_command_line(form: Form):
    status, page = form.send(send_at="25:00", timezone="UTC")
    typed = run_cli("subscribers", "set", READER, "--send-at", "25:00", cwd=form.folder)
    assert (status, typed.code) == (400, 1), page[:300]
    message = typed.stderr.strip().removeprefix("digest: error: ")
    assert message.startswith("not a time of day: '25:00'")
    assert message in html.unescape(page)


values = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(categories=["Nd", "No", "Nl"]), min_size=1, max_size=8),
    st.sampled_from(["UTC", "07:30", "world", "yes", "fr", "0", "12", "9" * 5000]),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(fields=st.lists(st.tuples(st.sampled_from(FIELDS), values), max_size=12))
def test_any_form_gets_a_page_never_a_server_error(form: Form, fields: list[tuple[str, str]]):
    keep_csrf = not any(name == "csrf" for name, _ in fields)
    body = urllib.parse.urlencode([("csrf", form.csrf)] * keep_csrf + fields).encode()
    status, page = form.post(body)
    assert status in (303, 400, 403), (status, page[:300])
    assert "Traceback" not in page


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=200))
def test_any_bytes_posted_get_a_page_never_a_server_error(form: Form, raw: bytes):
    status, page = form.post(f"csrf={form.csrf}&".encode() + raw)
    assert status in (303, 400, 403), (status, page[:300])


def multipart(parts: list[tuple[str, str, bool]]) -> bytes:
    """A multipart/form-data body (boundary "b"): each part a field, or a file when flagged."""
    body = b""
    for name, value, is_file in parts:
        filename = '; filename="f.txt"' if is_file else ""
        kind = "Content-Type: application/octet-stream\r\n" if is_file else ""
        head = f'--b\r\nContent-Disposition: form-data; name="{name}"{filename}\r\n{kind}\r\n'
        body += head.encode() + value.encode() + b"\r\n"
    return body + b"--b--\r\n"


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(
        st.tuples(st.sampled_from(FIELDS[1:]), st.text("abc٣²09:", max_size=8), st.booleans()),
        max_size=8,
    )
)
def test_a_multipart_form_with_files_gets_a_page_never_a_server_error(
    form: Form, parts: list[tuple[str, str, bool]]
):
    body = multipart([("csrf", form.csrf, False), *parts])
    status, page = form.post(body, "multipart/form-data; boundary=b")
    assert status in (303, 400, 403), (status, page[:300])
