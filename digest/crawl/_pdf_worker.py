"""Child process that turns one PDF into markdown: `python -m digest.crawl._pdf_worker`.

Reads the PDF's bytes on stdin and writes one JSON object on stdout: `{"text", "title"}` or
`{"error"}`. Its address space is capped first (`--memory-mb`), before markitdown is even
imported, so a hostile PDF (decompression bombs are an open markitdown issue) runs out of memory
here, not in the service. The parent kills it when it overruns its time limit.
"""

from __future__ import annotations

import argparse
import io
import json
import sys

from digest.runtime.subprocesses import limit_memory

_OUT_OF_MEMORY = ("bad_alloc", "failed to map segment", "Cannot allocate memory")


def _title(data: bytes) -> str:
    """The document's /Title metadata, when it has one."""
    try:
        from pdfminer.pdfdocument import PDFDocument
        from pdfminer.pdfparser import PDFParser
        from pdfminer.pdftypes import resolve1
        from pdfminer.utils import decode_text

        doc = PDFDocument(PDFParser(io.BytesIO(data)))
        for info in doc.info:
            value = resolve1(info.get("Title"))
            if isinstance(value, bytes):
                value = decode_text(value)
            if isinstance(value, str) and value.strip():
                return " ".join(value.split())[:500]
    except Exception:
        pass
    return ""


def convert(data: bytes) -> dict[str, str]:
    from markitdown import MarkItDown, StreamInfo
    from markitdown.converters import PdfConverter

    # Only the PDF converter: with the built-ins, a broken PDF falls through to the plain-text
    # converter and comes back as its own raw bytes.
    md = MarkItDown(enable_builtins=False, enable_plugins=False)
    md.register_converter(PdfConverter())
    info = StreamInfo(mimetype="application/pdf", extension=".pdf")
    try:
        result = md.convert_stream(io.BytesIO(data), stream_info=info)
    except MemoryError:
        raise
    except Exception as err:
        return {"error": f"not a readable PDF: {_reason(err)}"}
    return {"text": result.markdown or "", "title": result.title or _title(data)}


def _reason(err: BaseException) -> str:
    """markitdown wraps the parser's error in a multi-line summary; keep the parser's words."""
    text = str(err)
    for line in text.splitlines():
        if "threw" in line and "with message:" in line:
            return line.split("with message:", 1)[1].strip() or text
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first or type(err).__name__


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-mb", type=int, default=512)
    args = parser.parse_args()
    try:
        limit_memory(args.memory_mb)
        data = sys.stdin.buffer.read()
        out = convert(data)
    except MemoryError:
        out = {"error": f"the PDF needs more than the {args.memory_mb} MB memory limit"}
    except ImportError as err:  # onnxruntime (via magika) reports allocation failures this way
        if any(sign in str(err) for sign in _OUT_OF_MEMORY):
            out = {"error": f"the PDF converter needs more than the {args.memory_mb} MB limit"}
        else:
            out = {"error": f"markitdown[pdf] is not available: {err}"}
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
