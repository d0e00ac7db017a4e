"""Child process that parses untrusted HTML: `python -m digest.fetch._parse_worker`.

Requests arrive on stdin and answers leave on stdout, one frame each: an 8-byte header (two
big-endian lengths), a JSON header, then a raw body. Only JSON comes back, never a pickle: the
parent trusts nothing this process says beyond its shape. The address space is capped first
(`--memory-mb`), so a page that makes the parser allocate without end fails here. The parent
kills the process when an answer is late; see `digest.fetch.parsers`.

Operations:
- `lede`: body = page bytes; header `charset`, `max_chars` -> `{"text", "kind"}`
- `main_text`: body = HTML as UTF-8; header `url` -> `{"title", "text"}`
- `feed`: body = feed document; header `feed_url`, `category`, `name`, `base_url`, `charset`
  -> `{"feed": ParsedFeed as JSON}` or `{"feed_error": why it cannot be read}`
- `ping`: -> `{}` once the worker is ready

Before its first request the worker sends one unasked answer, `{"ok": {}}`, once its modules
are imported: the parent hands it a page only then, so a worker slow to start (a loaded
machine) is never mistaken for one stuck on a hostile page.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from typing import Any, BinaryIO

from digest.runtime.subprocesses import limit_memory

FRAME = struct.Struct(">II")


def read_frame(stream: BinaryIO) -> tuple[dict[str, Any], bytes] | None:
    head = stream.read(FRAME.size)
    if len(head) < FRAME.size:
        return None
    header_len, body_len = FRAME.unpack(head)
    header = json.loads(stream.read(header_len))
    return header, stream.read(body_len)


def write_frame(stream: BinaryIO, header: dict[str, Any], body: bytes = b"") -> None:
    data = json.dumps(header, ensure_ascii=False).encode()
    stream.write(FRAME.pack(len(data), len(body)) + data + body)
    stream.flush()


def _lede(header: dict[str, Any], body: bytes) -> dict[str, Any]:
    from digest.fetch.decode import decode_html
    from digest.fetch.lede import find_lede

    lede = find_lede(decode_html(body, header.get("charset")), int(header["max_chars"]))
    return {"text": lede.text, "kind": lede.kind, "site": lede.site, "title": lede.title}


def _main_text(header: dict[str, Any], body: bytes) -> dict[str, Any]:
    from digest.fetch.maintext import extract_main_text

    main = extract_main_text(body.decode("utf-8", "replace"), header.get("url"))
    return {"title": main.title, "text": main.text}


def _feed(header: dict[str, Any], body: bytes) -> dict[str, Any]:
    from digest.errors import FeedError
    from digest.fetch.feed_parser import parse_feed

    try:
        parsed = parse_feed(
            body,
            feed_url=str(header["feed_url"]),
            category=str(header["category"]),
            name=header.get("name"),
            base_url=header.get("base_url"),
            charset=header.get("charset"),
        )
    except FeedError as err:  # the document's fault: the parent reports it as such
        return {"feed_error": str(err)}
    return {"feed": parsed.to_json()}


_OPERATIONS = {
    "lede": _lede,
    "main_text": _main_text,
    "feed": _feed,
    "ping": lambda _header, _body: {},
}


def main() -> None:
    import argparse  # here: the service imports this module for FRAME alone

    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-mb", type=int, default=1024)
    parser.add_argument(
        "--preload", action="append", default=[], choices=["lede", "main_text", "feed"]
    )
    args = parser.parse_args()
    limit_memory(args.memory_mb)
    requests, answers = sys.stdin.buffer, os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # a library that prints must not corrupt the frames
    if "lede" in args.preload:
        import digest.fetch.lede
    if "main_text" in args.preload:
        import trafilatura  # noqa: F401

        import digest.fetch.maintext
    if "feed" in args.preload:
        import digest.fetch.feed_parser  # noqa: F401
    write_frame(answers, {"ok": {}})  # ready
    while (request := read_frame(requests)) is not None:
        header, body = request
        answer: dict[str, Any]
        try:
            answer = {"ok": _OPERATIONS[header["op"]](header, body)}
        except MemoryError:
            answer = {"error": f"parsing needs more than the {args.memory_mb} MB memory limit"}
        except Exception as err:  # a hostile page may break the parser in any way
            answer = {"error": f"{type(err).__name__}: {err}"[:300]}
        write_frame(answers, answer)


if __name__ == "__main__":
    main()
