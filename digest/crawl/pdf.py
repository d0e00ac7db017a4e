"""PDFs: recognised by Content-Type or magic bytes, converted to text by markitdown in a child.

The conversion runs in `digest.crawl._pdf_worker`, a separate Python process with an address-space
limit (`crawl.pdf_memory_mb`), killed when it overruns `crawl.pdf_timeout`. A garbage, hostile
or huge PDF costs that child and gives a `PdfError` naming the problem; it never takes the
service down.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from dataclasses import dataclass

from digest.errors import PdfError
from digest.runtime.subprocesses import child_env

PDF_MAGIC = b"%PDF-"
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf", "application/acrobat"})
# The header may follow a little junk (the PDF spec allows up to 1 KB before it).
_MAGIC_WINDOW = 1024


@dataclass(frozen=True, slots=True)
class PdfText:
    title: str
    text: str


def looks_like_pdf(content_type: str, head: bytes) -> bool:
    """True for a PDF media type or for a body starting with `%PDF-` (whatever it is labelled)."""
    return content_type in PDF_TYPES or PDF_MAGIC in head[:_MAGIC_WINDOW]


async def pdf_to_text(data: bytes, *, timeout: float, memory_mb: int) -> PdfText:  # noqa: ASYNC109
    """Markdown text of the PDF in `data`, converted in a limited child process."""
    if PDF_MAGIC not in data[:_MAGIC_WINDOW]:
        raise PdfError("not a PDF (no %PDF- header)")
    env = child_env()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "digest.crawl._pdf_worker",
        "--memory-mb",
        str(memory_mb),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        try:
            out, err = await asyncio.wait_for(proc.communicate(data), timeout)
        except TimeoutError:
            raise PdfError(
                f"PDF conversion took longer than {timeout:g} s and was stopped"
            ) from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                await proc.wait()
    if proc.returncode != 0:
        raise PdfError(_crash_reason(proc.returncode, err, memory_mb))
    try:
        result = json.loads(out)
    except ValueError:
        raise PdfError("PDF converter returned no result") from None
    if not isinstance(result, dict):
        raise PdfError("PDF converter returned no result")
    if result.get("error"):
        raise PdfError(str(result["error"]))
    text = str(result.get("text") or "").strip()
    title = str(result.get("title") or "").strip()
    if not text:
        raise PdfError("the PDF has no extractable text (scanned images?)")
    return PdfText(title=title or _first_line(text), text=text)


def _crash_reason(code: int | None, stderr: bytes, memory_mb: int) -> str:
    if code is not None and code < 0:
        return f"PDF converter crashed (signal {-code})"
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    last = lines[-1].strip() if lines else ""
    if "MemoryError" in last or "bad_alloc" in last:
        return f"the PDF needs more than the {memory_mb} MB memory limit"
    return f"PDF converter failed (exit {code}){': ' + last[:200] if last else ''}"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:200]
    return ""
