"""Work units, their outcomes, the steps that turn one into the other, and the runners.

A unit is a frozen dataclass naming one piece of a job (a category's feeds, a batch of
headlines, a story, a batch of subscribers), small enough to cross the task queue as JSON; its
`kind` is the name its task has on the queue. A job module registers the step of each of its
unit kinds with `@step(UnitType, OutcomeType)`; a runner looks the step up by kind, in this
process or in a worker, so neither the runner nor the queue needs to know the job.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, Self, TypeVar

from digest.models import Failure

if TYPE_CHECKING:
    from digest.config import Config
    from digest.crawl import Crawler
    from digest.deliver.push_types import Channels
    from digest.fetch.client import HttpClient
    from digest.fetch.fast import FastExtractor
    from digest.fetch.parsers import ParserPool
    from digest.sources.ddg import DuckDuckGo
    from digest.store.face import StoreFace
    from digest.stories.embeddings import Embedder
    from digest.summarize import Summarizer
    from digest.summarize.translate import Translator


class Parts(Protocol):
    """What a step needs of the app: the configuration and the parts `digest.app.App` builds
    from it, each opened on first use. Named here so that nothing in `digest/jobs/` or
    `digest/queue/` imports the app, which imports them; `App` is one by its shape."""

    @property
    def config(self) -> Config: ...

    @property
    def ddg(self) -> DuckDuckGo: ...

    @property
    def http(self) -> HttpClient: ...

    @property
    def extractor(self) -> FastExtractor: ...

    @property
    def feed_parsers(self) -> ParserPool: ...

    async def crawler(self) -> Crawler: ...

    async def summarizer(self) -> Summarizer: ...

    async def embedder(self) -> Embedder | None: ...

    def channels(self) -> Channels: ...

    async def translator(self) -> Translator: ...

    async def runner(self) -> Runner: ...

    async def face(self, *, create: bool = True) -> StoreFace: ...


class Outcome:
    """What a step did, as its job folds it into the report (and as JSON, from a worker)."""

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        raise NotImplementedError


OutcomeT = TypeVar("OutcomeT", bound=Outcome)
OutcomeT_co = TypeVar("OutcomeT_co", bound=Outcome, covariant=True)


class Unit(Generic[OutcomeT_co]):
    """One piece of a job's work; `kind` names its step (and its task on the queue)."""

    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Lost:
    """A unit whose step never said what it did: it raised on a worker, or its worker died
    and its retry failed too. In-process a step's exception goes up instead."""

    unit: Unit[Any]
    error: str

    def failure(self, what: str) -> Failure:
        """The run's error for it: "task:digest.story:42", what it was and why it was lost."""
        return Failure(f"task:{self.unit.kind}:{what}", self.error)


U = TypeVar("U", bound=Unit[Any])
StepFunction = Callable[["Parts", U], Awaitable[OutcomeT]]


@dataclass(frozen=True, slots=True)
class Step(Generic[U, OutcomeT]):
    unit: type[U]
    outcome: type[OutcomeT]
    run: StepFunction[U, OutcomeT]


STEPS: dict[str, Step[Any, Any]] = {}
Ended = Callable[[Any], None]


def step(
    unit: type[U], outcome: type[OutcomeT]
) -> Callable[[StepFunction[U, OutcomeT]], StepFunction[U, OutcomeT]]:
    """Register the decorated function as what runs one `unit` (of its kind) and gives an
    `outcome`; one step per kind."""

    def register(run: StepFunction[U, OutcomeT]) -> StepFunction[U, OutcomeT]:
        known = STEPS.get(unit.kind)
        if known is not None and known.run is not run:
            raise ValueError(f"two steps for the unit kind {unit.kind!r}")
        STEPS[unit.kind] = Step(unit, outcome, run)
        return run

    return register


def step_for(kind: str) -> Step[Any, Any]:
    try:
        return STEPS[kind]
    except KeyError:
        raise LookupError(f"no step registered for the unit kind {kind!r}") from None


class Runner(Protocol):
    """Runs units and gives each one's outcome, in the units' order.

    `remote`: the units run in other processes (the queue's workers). A job splits or overlaps
    its work further only then: a sending run is one piece in this process, and collect's
    categories take turns here. `locks`: one per unit;
    two units of the same lock never run at once. `ended` hears of each unit that ended (for
    progress)."""

    remote: bool

    async def run(
        self,
        units: Sequence[Unit[OutcomeT]],
        *,
        locks: Sequence[str] | None = None,
        ended: Ended | None = None,
    ) -> list[OutcomeT | Lost]: ...


class InProcess:
    """Every unit's step at once in this process. Every unit ends (its pages stored or not)
    before the first exception goes up, as it would have on its own; no unit is Lost here."""

    remote = False

    def __init__(self, app: Parts) -> None:
        self.app = app

    async def run(
        self,
        units: Sequence[Unit[OutcomeT]],
        *,
        locks: Sequence[str] | None = None,
        ended: Ended | None = None,
    ) -> list[OutcomeT | Lost]:
        # `locks` keep apart units running at once on several workers; here each unit runs once.
        async def one(unit: Unit[OutcomeT]) -> OutcomeT:
            outcome: OutcomeT = await step_for(unit.kind).run(self.app, unit)
            if ended is not None:
                ended(unit)
            return outcome

        done = await asyncio.gather(*(one(u) for u in units), return_exceptions=True)
        outcomes: list[OutcomeT | Lost] = []
        for outcome in done:
            if isinstance(outcome, BaseException):
                raise outcome
            outcomes.append(outcome)
        return outcomes
