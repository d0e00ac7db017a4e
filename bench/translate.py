"""Translation benchmark: one edition to many readers in several languages, through the LLM.

Run from the repository root:

    .venv/bin/python bench/translate.py [--subscribers 1000] [--delay 0.2] [--concurrency 1]

The local fake LLM server (tests/llmserver.py) answers each translation after `--delay`
seconds (a model's time per call; a local CPU model takes seconds, a hosted one about one).
One edition (tests/editions.py: 4 categories, 3 stories each, English summaries) is sent by
`digest.jobs.sending.send_edition` to `--subscribers` readers whose languages are spread over de,
fr, es, it, en and none (all categories each), the emails to the outbox, the store SQLite.
Printed: the translations alone (the edition into each language, nothing translated yet: LLM
calls, calls per story and language, wall time), the send to every reader after them (all
kept), the next day's edition sent by a new process (the same texts under new story ids, as an
unchanged story is: calls, wall time), and the claim check's time per translation (median of
the edition's stories).

Measured here (2 cores shared with five other jobs, load average 13-14, so the spread is
wide), 1,000 readers, 0.2 s a call: 48 calls for 12 stories in 4 languages, one per story and
language (none for the English readers or those without a language); the translations alone
23.8 s at concurrency 1 (9.6 s of it the calls' own 0.2 s), 16.7 s at 4; the send to every
reader after them 30.0-30.5 s; the next day's edition, by a new process, 0 calls, sent in
25.9-37.2 s (the send's time swings by more than the translations cost); the claim check
4.2-13.4 ms a translation.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from digest.app import App  # noqa: E402
from digest.config import load_config  # noqa: E402
from digest.facts.translation_check import check_translation  # noqa: E402
from digest.jobs.sending import send_edition  # noqa: E402
from digest.subscribers.preferences import Preferences  # noqa: E402
from digest.summarize.translate import translate_editions  # noqa: E402
from digest.summarize.translator import LLMTranslator  # noqa: E402
from tests.configs import write_config  # noqa: E402
from tests.editions import make_edition  # noqa: E402
from tests.llmserver import LLMServer  # noqa: E402

DAY = date(2026, 11, 29)
LANGUAGES = ("de", "fr", "es", "it", "en", None)


async def send(app: App, day: date, concurrency: int) -> tuple[float, LLMTranslator]:
    store = await app.store()
    edition = store.edition(day)
    assert edition is not None
    translator = await app.translator()
    assert isinstance(translator, LLMTranslator)
    translator._slots = asyncio.Semaphore(concurrency)  # the bench's own bound
    now = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=12)
    started = time.perf_counter()
    await send_edition(app, edition, now=now, translator=translator)
    return time.perf_counter() - started, translator


async def main(subscribers: int, delay: float, concurrency: int) -> None:
    async with LLMServer() as srv:
        srv.delay = delay
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            llm = {"base_url": srv.url, "model": srv.model, "timeout": 30.0, "max_retries": 0}
            write_config(folder, sources={"categories": ["technology"]}, llm=llm)
            config = load_config(folder / "digest.toml")
            async with App(config) as app:
                store = await app.store()
                edition = make_edition(DAY)
                store.save_edition(edition)
                for i in range(subscribers):
                    email = f"reader{i}@example.org"
                    store.add_subscriber(email, categories=None, timezone="UTC")
                    language = LANGUAGES[i % len(LANGUAGES)]
                    store.save_preferences(email, Preferences(language=language))
                # The translations alone, as the send makes them before building messages.
                translator = await app.translator()
                assert isinstance(translator, LLMTranslator)
                translator._slots = asyncio.Semaphore(concurrency)
                started = time.perf_counter()
                await translate_editions([(edition, x) for x in LANGUAGES], translator)
                alone = time.perf_counter() - started
                took, _ = await send(app, DAY, concurrency)
            stories = sum(len(s.stories) for s in edition.sections)
            calls = len(srv.translations())
            pairs = stories * sum(1 for x in LANGUAGES if x and x != "en")
            print(f"{subscribers} readers, {stories} stories, {delay:g} s a call, "
                  f"concurrency {concurrency}")  # fmt: skip
            print(f"first: {calls} LLM calls for {pairs} (story, language) pairs "
                  f"({calls / pairs:.2f} a pair) in {alone:.1f} s")  # fmt: skip
            print(f"  {translator.stats.describe()}")
            print(f"the send to every reader after them: {took:.1f} s")

            tomorrow = DAY + timedelta(days=1)
            async with App(config) as app:
                (await app.store()).save_edition(make_edition(tomorrow))
                took, translator = await send(app, tomorrow, concurrency)
            print(f"next day, new process: {len(srv.translations()) - calls} LLM calls, "
                  f"{took:.1f} s; {translator.stats.describe()}")  # fmt: skip

    times = []
    for section in edition.sections:
        for s in section.stories:
            original = (s.title, s.brief_summary, s.summary)
            tagged = tuple(f"[de] {f}" for f in original)
            started = time.perf_counter()
            check_translation(original, tagged, [o.title for o in s.outlets], "de")
            times.append(time.perf_counter() - started)
    print(f"claim check of a translation: median {statistics.median(times) * 1000:.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(main(args.subscribers, args.delay, args.concurrency))
