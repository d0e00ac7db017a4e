"""Archive search benchmark: SQLite FTS5 against PostgreSQL full-text search, at 100,000 articles.

    .venv/bin/python -m bench.search                 # 100,000 articles, both backends
    .venv/bin/python -m bench.search --quick         # 5,000 articles: to try it
    .venv/bin/python -m bench.search --articles 20000 --repeats 7 --no-postgres
    .venv/bin/python -m bench.search --scale         # PostgreSQL at 100,000 and 1,000,000
                                                     # (bench/search_scale.py; cached)

1. Generates `--articles` news articles, deterministically (`--seed`), before anything is timed:
   titles of 8-12 words, ledes of ~300 characters (90% of articles; the rest failed
   extraction), main texts of 1,500-6,000 characters for `--text-fraction` of them, extractive
   summaries for `--summary-fraction` of all articles (each of an article with a main text),
   8 categories, publication dates over 365 days, 40 outlets. The words come from a fixed
   vocabulary of 1,500 real words (157 function words, ~700 news words, 8 x 25 topical words
   per category, plurals of news words) and a tail of 28,000 made-up words, drawn with a Zipf
   law (s = 1.05, the tail ~20% of tokens) so that word frequencies resemble real text;
   sentences carry named entities (people, places, organisations), numbers and collocations
   ("central bank", "prime minister").
2. Ingests them through the Store API as the service does: `upsert_items` in batches of
   `--batch` (one transaction each), then `save_crawl` for each article of the batch with a
   main text and `save_summary` for each with a summary (one transaction each). Wall time per
   phase, and each phase's rate over the first and the last tenth of the batches; the article
   ids of a batch are read with one SELECT (counted with the upserts). Then `--resight` of the
   articles are upserted again, later (a later collect seeing the same URLs): nothing searched
   changes, only last_seen.
   Above 20,000 articles (`--ingest auto`) the Store API would take too long for the whole set
   (measured: PostgreSQL's save_crawl runs at ~70/s, one committed transaction each, so 100,000
   articles would take ~13 min; before ix_articles_text_hash, save_summary scanned the table and
   ran at 6/s on both backends). Then all but the newest `--sample` articles are bulk-loaded
   first (executemany of the rows the Store API would write, 1,000 per transaction; the
   search triggers index them) and the newest `--sample` go through the
   Store API: its rates are those of a full archive. `--ingest api` forces the Store API.
3. Sizes: the SQLite file and its -wal, the FTS5 shadow tables (dbstat); PostgreSQL: every table
   of the schema with indexes and TOAST, the GIN index, the stored tsvector column. Then
   PostgreSQL gets VACUUM ANALYZE of articles (what autovacuum does after that many inserts:
   it also flushes the GIN pending list); SQLite runs as the service leaves it (no ANALYZE).
4. Search: ~30 fixed queries of 11 kinds through `Store.search` (limit 10), one warm-up round,
   then `--repeats` rounds, the two backends alternating query by query so that the machine's
   noise falls on both alike. Per backend: median and p95 over all query runs, the median per
   kind; per query also the ranking step alone (the candidates query, digest.store.search_backends
   internals, pool 50), the number of matching articles and the overlap of the top-10 URLs
   between the backends (they rank differently: a sanity figure, not an expected equality).

The SQLite file lives in a temporary directory and the PostgreSQL schema is dropped at the end,
also on error. Without PostgreSQL at 127.0.0.1:5432 (or with --no-postgres) only SQLite runs.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import math
import os
import random
import shutil
import socket
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import (  # noqa: E402
    bindparam,
    column,
    func,
    literal_column,
    select,
    table,
    text,
)
from sqlalchemy.dialects.postgresql import TSVECTOR  # noqa: E402

from digest.models import Extract, Headline, Item, Page, Summary  # noqa: E402
from digest.store import (  # noqa: E402
    Store,
    content_hash,
    open_store,
)
from digest.store.engine import READ_ONLY  # noqa: E402
from digest.store.schema import article_recent, articles, summaries  # noqa: E402
from digest.store.search_backends import PostgresBackend, SqliteBackend  # noqa: E402
from digest.store.search_query import fts5_expression, parse_query, pg_tsquery  # noqa: E402
from digest.store.urls import canonical_url  # noqa: E402

PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_URL = f"postgresql+psycopg://postgres@{PG_HOST}:{PG_PORT}/test"
NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
DAYS = 365
VOCAB_SEED = 20260115  # the vocabulary (and so the queries) never depends on --seed
ZIPF_S = 1.05
TAIL_WORDS = 28_000

# -- Text material --------------------------------------------------------------------------------

FUNCTION_WORDS = """
the of and to a in that is for on was with as said by at he it from his be are have has its
an not but this they who were their been will had which after about more or would over also
than she two new up into one year her last when there could first all out people some other
government what our years no them we against before most while can three because since
under week only may just told if during those many such now where him between so however
then through still back did being any these both well like how should down even off told
much according made around several later another next time including without among
whether own four five us across per yet each very far here again until though within
you i your my me ago already least early left high part second few set end way day
""".split()

NEWS_WORDS = """
police president minister court state country city officials report million percent former
national public group company market power deal war security party election support plans
months talks law health money water rights prices economy rise cut days leader members
attack forces military billion council capital energy trade workers policy growth crisis
local plan office chief system vote decision lead case issue top family women children
military region border months news media service data study research team season match
players win final league coach club victory defeat record price bank rates inflation jobs
unemployment budget tax spending debt investors shares stock profit revenue sales firm
chief executive industry factory production supply oil gas climate weather storm flood
drought fire heat emissions carbon pollution environment school university students teachers
hospital patients doctors disease virus vaccine treatment care drug cancer science scientists
space mission launch satellite technology software internet online users platform phone
app network computer chips artificial intelligence model data privacy hackers cyber film
music festival artist book museum exhibition theatre show series award star fans tour
album release director actor prize culture church community protest protesters strike union
demonstrators crowd arrest charges trial judge jury prison sentence lawyer investigation
prosecutors evidence murder crime victims shooting violence troops soldiers ceasefire peace
refugees migrants aid humanitarian sanctions embassy ambassador summit treaty agreement
negotiations diplomats alliance parliament senate congress lawmakers bill reform opposition
coalition campaign candidate polls voters ballot turnout result results count recount
referendum constitution regime rebels militants fighting airstrike missile drone weapons
nuclear defence navy army base border crossing ports shipping airline airport flights
passengers train railway road traffic crash accident injured killed dead died death toll
rescue emergency evacuation residents homes housing rent mortgage property construction
infrastructure bridge tunnel project contract billion funding grant loan bonds currency
dollar euro yen exchange markets traders analysts forecast quarter annual growth recession
consumer spending retail shoppers demand supply chain shortage exports imports tariffs
manufacturing steel cars electric vehicles battery batteries charging solar wind turbines
grid electricity nuclear reactor coal mining copper lithium farmers crops harvest food wheat
rice fishing forest wildlife species conservation ocean sea coast island river mountain
valley village town capital province district county mayor governor minister cabinet
spokesman spokeswoman statement interview announcement conference speech address remarks
warning warned called urged said added noted described denied confirmed announced rejected
approved signed launched opened closed raised lowered increased fell rose dropped jumped
slipped gained lost won beat scored played hosted visited met discussed agreed refused
resigned appointed elected named fired hired sued charged arrested released freed detained
expected likely possible major key new big large small recent latest previous early late
long short strong weak senior junior young old international foreign domestic regional
federal central global economic political social financial military medical legal official
private independent national public general special significant serious critical historic
first second third final annual monthly weekly daily quarterly half double record highest
lowest biggest largest smallest growing falling rising mounting fresh renewed further
ongoing continued additional total average overall average hundreds thousands millions
dozens number amount level rate share range series risk threat danger concern concerns
fears hopes pressure demand demands calls criticism backlash response reaction impact effect
effects consequences change changes shift move step steps measures rules regulations ban
limits restrictions controls checks inspection review audit inquiry probe scandal allegations
claims accusations corruption fraud bribery abuse misconduct failure failures mistakes delay
delays problems problem challenge challenges opportunity chance success progress breakthrough
discovery findings evidence survey poll figures statistics numbers data analysis estimate
estimates projections target targets goal goals strategy approach framework proposal
proposals option options version update updates feature features product products services
customers clients partners partnership merger acquisition takeover bid offer sale stake
shareholders board chairman founder startup startups venture capital fund funds investment
investments assets portfolio pension pensions savings wages pay salary salaries bonus costs
cost bills fees fares subsidies benefits welfare poverty inequality income incomes wealth
households families parents mothers fathers girls boys students pupils graduates workers
employees staff nurses officers firefighters volunteers activists campaigners experts
researchers economists historians critics observers residents citizens population
generation voters supporters opponents rivals allies enemies neighbours partners sources
witnesses survivors relatives friends colleagues
morning afternoon evening night weekend monday tuesday wednesday thursday friday saturday
sunday january february march april june july august september october november december
spring summer autumn winter decade century history future past present moment period era
north south east west northern southern eastern western coastal rural urban remote
""".split()

CATEGORIES: dict[str, list[str]] = {
    "world": """diplomacy ceasefire embassy refugees sanctions envoy summit annexation
        insurgency peacekeepers blockade humanitarian consulate warlord junta coup exiles
        militia frontier hostages corridor truce delegation mediation enclave""".split(),
    "politics": """parliament senate lawmakers coalition ballot referendum incumbent
        manifesto caucus filibuster impeachment cabinet minority majority constituency
        primaries pollsters lobbying legislation veto amendment debate opposition
        spokesperson""".split(),
    "business": """earnings dividend shareholders merger acquisition revenue quarterly
        valuation bonds inflation tariffs exporters retailers lenders mortgage startup
        layoffs profits forecast outlook guidance buyback conglomerate wholesale
        liquidity""".split(),
    "technology": """software semiconductor chipmaker algorithm encryption startup
        smartphone cloud datacenter broadband hackers ransomware processor robotics
        blockchain chatbot developers firmware bandwidth silicon quantum browser
        telecoms gigabit""".split(),
    "science": """astronomers telescope genome fossil particle physicists molecule
        laboratory experiment species evolution galaxy orbit asteroid microbes enzyme
        neutrino glacier specimen hypothesis isotope peer climate biodiversity
        archaeologists""".split(),
    "health": """hospital patients vaccine pandemic outbreak clinical oncology diagnosis
        surgeons therapy antibiotics nurses epidemic prescription dementia diabetes
        obesity vaccination symptoms infection pharmacy mental wellbeing
        transplant""".split(),
    "sports": """striker goalkeeper midfielder championship tournament playoffs
        semifinal quarterfinal medal olympic marathon sprinter cyclist batsman wicket
        innings penalty referee stadium transfer season coach captain qualifier
        derby""".split(),
    "culture": """novelist exhibition gallery orchestra premiere festival documentary
        sculpture choreographer playwright memoir bestseller curator biennale opera
        soundtrack screenplay poetry heritage ballet concert auction manuscript
        director""".split(),
}

FIRST_NAMES = """Maria James Amina Lukas Sofia Daniel Fatima Henrik Chen Priya Olga Mateo
    Yusuf Elena Kwame Ingrid Rafael Aiko Tomasz Leila Samuel Noor Viktor Grace Omar Hanna
    Diego Mei Anders Zainab Pierre Lucia Ivan Chloe Tariq Nadia Felix Ayesha Jonas Beatriz
    Kenji Sara Mikhail Esther Hugo Lina Pablo Ruth Arjun Greta""".split()
SURNAMES = """Lindqvist Okafor Haddad Moreau Kowalski Tanaka Fernandes Brennan Novak Osei
    Castillo Bergstrom Nakamura Adeyemi Petrov Sorensen Ramirez Achterberg Dubois Mensah
    Varga Holloway Iqbal Schneider Abernathy Delacroix Yilmaz Oyelaran Marchetti Quintero
    Halvorsen Nguyen Sato Kapoor Whitfield Lombardi Eriksen Castellano Mwangi Rosenthal
    Okonkwo Valdez Fitzgerald Kovacs Almeida Lindgren Chaudhry Pellegrini Stavros Ivanova
    Thornbury Mbeki Kaufmann Oduya Vasquez Lindahl Ferreira Takahashi Novotny Gallagher""".split()
PLACES = """Lisbon Nairobi Jakarta Warsaw Lagos Montreal Seville Osaka Valparaiso Tbilisi
    Rotterdam Accra Porto Krakow Mombasa Cebu Antwerp Gdansk Medellin Izmir Dakar Tampere
    Vornholt Kestrel Bay Ardenmoor Calloway Sundvik Marrowgate Pellham Tessary Ostrava Brno
    Bilbao Leipzig Trieste Malmo Aarhus Cork Galway Bergen Lyon Nantes Turin Genoa Split
    Varna Salonica Haifa Casablanca""".split()
ORGS = [
    "Meridian Bank",
    "Northgate Energy",
    "Halcyon Motors",
    "Veridian Pharma",
    "Atlas Shipping",
    "Corvid Systems",
    "Solace Health",
    "Brightwater Utilities",
    "Ironclad Steel",
    "Lumen Networks",
    "Harbor Airways",
    "Cascade Foods",
    "Pinnacle Insurance",
    "Quarry Mining",
    "Tidewell Telecom",
    "Redfern Capital",
    "Silverline Rail",
    "Orchid Biotech",
    "Granite Construction Group",
    "Kestrel Aerospace",
    "United Workers Federation",
    "Coastal Wildlife Trust",
    "National Statistics Office",
    "Federal Reserve",
    "World Health Organization",
    "European Commission",
    "International Monetary Fund",
    "United Nations",
    "Red Cross",
    "Supreme Court",
    "Ministry of Finance",
    "Ministry of Health",
    "Olympic Committee",
    "Football Association",
    "National Theatre",
    "Royal Academy",
    "Institute of Marine Research",
    "Polar Research Council",
    "Open Rights Group",
    "Taxpayers Alliance",
]
COLLOCATIONS = """central bank|prime minister|interest rates|climate change|supreme court
    |energy prices|trade deal|stock market|data centre|chip plant|transfer window|peace talks
    |public health|election campaign|artificial intelligence|supply chain|wildfire season
    |vaccine trial|film festival|housing market|labour market|foreign minister|finance
    ministry|heat wave|power grid|free trade|human rights|national team|world cup|press
    conference|budget deficit|oil prices|state media|opposition leader|security forces
    |strike at the factory|interim government|rescue workers|health officials|police said
    |court ruling""".split("|")
COLLOCATIONS = [" ".join(c.split()) for c in COLLOCATIONS]
OUTLETS = [
    (f"{a} {b}", f"{a}{b}".lower())
    for a, b in itertools.product(
        ("Daily", "Morning", "Coastal", "National", "Metro", "Evening", "Global", "Valley"),
        ("Ledger", "Herald", "Wire", "Post", "Courier"),
    )
]

_ONSETS = "b c d f g h k l m n p r s t v z b d k l m n r s t br tr st pr gr".split()
_VOWELS = "a e i o u a e i o a e o ia ou".split()
_CODAS = "n r l s t m nd rt st x k".split()


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


@dataclass(frozen=True)
class Vocabulary:
    words: list[str]  # by rank: the Zipf law draws rank r with weight 1 / r**s
    cum: dict[str, list[float]]  # per category (and "" for none): cumulative weights
    title_cum: dict[str, list[float]]  # the same without function words (headlines)
    persons: list[str]
    tail_start: int  # rank of the first made-up word


def build_vocabulary() -> Vocabulary:
    rng = random.Random(VOCAB_SEED)
    real: list[str] = []
    for word in (*FUNCTION_WORDS, *NEWS_WORDS):
        if word not in real:
            real.append(word)
    topical = [w for words in CATEGORIES.values() for w in words if w not in real]
    real.extend(dict.fromkeys(topical))
    # Inflected forms (rarer than their stems): both engines stem them back.
    forms = [_plural(w) for w in NEWS_WORDS if not w.endswith("s") and len(w) > 3]
    real.extend(f for f in dict.fromkeys(forms) if f not in set(real))
    taken = set(real)
    tail: list[str] = []
    while len(tail) < TAIL_WORDS:
        syllables = rng.choice((2, 2, 2, 3, 3))
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables))
        word += rng.choice(_CODAS) if rng.random() < 0.7 else ""
        if word not in taken and 5 <= len(word) <= 11:
            taken.add(word)
            tail.append(word)
    words = real + tail
    base = [1.0 / (rank**ZIPF_S) for rank in range(1, len(words) + 1)]
    index = {w: i for i, w in enumerate(words)}
    function = {index[w] for w in FUNCTION_WORDS}
    cum: dict[str, list[float]] = {}
    title_cum: dict[str, list[float]] = {}
    boost = sum(base) * 0.04 / 25  # each category's topical words: ~4% of its tokens
    for category in ("", *CATEGORIES):
        weights = list(base)
        for word in CATEGORIES.get(category, ()):
            weights[index[word]] += boost
        cum[category] = list(itertools.accumulate(weights))
        titled = [0.02 * w if i in function else w for i, w in enumerate(weights)]
        title_cum[category] = list(itertools.accumulate(titled))
    persons = [f"{rng.choice(FIRST_NAMES)} {rng.choice(SURNAMES)}" for _ in range(400)]
    return Vocabulary(words, cum, title_cum, list(dict.fromkeys(persons)), len(real))


# -- Articles -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Doc:
    url: str
    title: str
    source: str
    category: str
    published: datetime
    snippet: str
    lede: str
    text: str | None
    summary: Summary | None


class Writer:
    """News-like text from the vocabulary: one Random, so every article is reproducible."""

    def __init__(self, vocab: Vocabulary, rng: random.Random) -> None:
        self.vocab = vocab
        self.rng = rng
        self.zipf_entities = {
            "person": _zipf_cum(len(vocab.persons)),
            "place": _zipf_cum(len(PLACES)),
            "org": _zipf_cum(len(ORGS)),
            "phrase": _zipf_cum(len(COLLOCATIONS)),
        }

    def _pick(self, kind: str) -> str:
        pool: Sequence[str] = {
            "person": self.vocab.persons,
            "place": PLACES,
            "org": ORGS,
            "phrase": COLLOCATIONS,
        }[kind]
        cum = self.zipf_entities[kind]
        return pool[bisect.bisect(cum, self.rng.random() * cum[-1])]

    def words(self, category: str, n: int, *, title: bool = False) -> list[str]:
        cum = (self.vocab.title_cum if title else self.vocab.cum)[category]
        return self.rng.choices(self.vocab.words, cum_weights=cum, k=n)

    def sentence(self, category: str) -> str:
        rng = self.rng
        words = self.words(category, rng.randint(8, 24))
        for kind, chance in (("person", 0.25), ("place", 0.15), ("org", 0.15), ("phrase", 0.15)):
            if rng.random() < chance:
                words.insert(rng.randrange(len(words) + 1), self._pick(kind))
        if rng.random() < 0.2:
            number = rng.choice(
                (str(rng.randint(2, 99)), f"{rng.randint(1, 999)},000", f"{rng.randint(1, 60)}%")
            )
            words.insert(rng.randrange(len(words) + 1), number)
        first = words[0]
        words[0] = first[0].upper() + first[1:]
        if rng.random() < 0.15:
            cut = rng.randrange(3, len(words))
            words[cut - 1] += ","
        return " ".join(words) + "."

    def sentences(self, category: str, chars: int) -> list[str]:
        out: list[str] = []
        length = 0
        while length < chars:
            out.append(self.sentence(category))
            length += len(out[-1]) + 1
        return out

    def title(self, category: str) -> str:
        rng = self.rng
        words = self.words(category, rng.randint(7, 11), title=True)
        kind = rng.choice(("person", "place", "org", "phrase", "phrase"))
        words.insert(rng.randrange(len(words) + 1), self._pick(kind))
        words = " ".join(words).split()[: rng.randint(8, 12)]
        return words[0][0].upper() + " ".join(words)[1:]


def _zipf_cum(n: int) -> list[float]:
    """Entities and collocations: a flatter law than words (s = 0.8)."""
    return list(itertools.accumulate(1.0 / (r**0.8) for r in range(1, n + 1)))


def generate(
    n: int, seed: int, text_fraction: float, summary_fraction: float, vocab: Vocabulary
) -> list[Doc]:
    rng = random.Random(seed)
    writer = Writer(vocab, rng)
    categories = list(CATEGORIES)
    # Which articles get a main text, and which of those a summary: exact fractions.
    with_text = set(rng.sample(range(n), round(n * text_fraction)))
    summarized = set(
        rng.sample(sorted(with_text), min(len(with_text), round(n * summary_fraction)))
    )
    docs = []
    for i in range(n):
        category = rng.choice(categories)
        published = NOW - timedelta(seconds=rng.uniform(0, DAYS * 86400))
        name, domain = rng.choice(OUTLETS)
        title = writer.title(category)
        slug = "-".join(title.lower().split()[:6]).replace(",", "")
        url = f"https://www.{domain}.example/{category}/{published:%Y/%m/%d}/{slug}-{i}"
        lede_sentences = writer.sentences(category, 300)
        lede = " ".join(lede_sentences) if rng.random() < 0.9 else ""
        snippet = _truncate(" ".join(lede_sentences), 170)
        body = summary = None
        if i in with_text:
            paragraphs = []
            target = rng.randint(1500, 6000)
            length = 0
            while length < target:
                paragraph = " ".join(writer.sentences(category, rng.randint(250, 700)))
                paragraphs.append(paragraph)
                length += len(paragraph) + 2
            body = _truncate("\n\n".join(paragraphs), target, ellipsis="")
            if i in summarized:
                chosen = [p.split(". ")[0].rstrip(".") + "." for p in paragraphs[:4]]
                keywords = tuple(dict.fromkeys(w.strip(",").lower() for w in title.split()))[:5]
                summary = Summary(
                    title=title,
                    summary=" ".join(chosen),
                    brief_summary=chosen[0],
                    keywords=keywords,
                    summarizer="extractive",
                )
        docs.append(Doc(url, title, name, category, published, snippet, lede, body, summary))
    docs.sort(key=lambda d: d.published)  # ingested in the order the service would see them
    return docs


def _truncate(text: str, chars: int, ellipsis: str = "…") -> str:
    if len(text) <= chars:
        return text
    return text[:chars].rsplit(" ", 1)[0] + ellipsis


# -- Queries --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query:
    kind: str
    text: str
    category: str | None = None
    since: datetime | None = None
    any_word: bool = False

    def label(self) -> str:
        extra = []
        if self.category:
            extra.append(f"cat={self.category}")
        if self.since:
            extra.append(f"since={(NOW - self.since).days}d")
        if self.any_word:
            extra.append("any_word")
        return self.text + (f"  [{', '.join(extra)}]" if extra else "")


KINDS = (
    "rare word",
    "common word",
    "stop word",
    "two words",
    "phrase",
    "OR",
    "exclusion",
    "category",
    "since",
    "any_word",
    "no match",
)


def queries(vocab: Vocabulary) -> list[Query]:
    tail = vocab.words[vocab.tail_start :]
    # Made-up words of the Zipf tail: in ~60, ~80 and ~130 of 100,000 articles.
    rare1, rare2, rare3 = tail[-1], tail[-3000], tail[-15000]
    month, week = NOW - timedelta(days=30), NOW - timedelta(days=7)
    return [
        Query("rare word", rare1),
        Query("rare word", rare2),
        Query("rare word", rare3),
        Query("rare word", tail[-8000]),
        Query("common word", "government"),
        Query("common word", "people"),
        Query("common word", "market"),
        Query("stop word", "the market"),  # "the" alone is refused: too common
        Query("two words", "energy prices"),
        Query("two words", "election fraud"),
        Query("two words", "Lindqvist Meridian"),
        Query("two words", f"{rare2} hospital"),
        Query("phrase", '"prime minister"'),
        Query("phrase", '"Northgate Energy"'),
        Query("phrase", '"strike at the factory"'),
        Query("OR", "drought OR flood"),
        Query("OR", f"{rare1} OR {rare3}"),
        Query("OR", "Lisbon OR Porto OR Seville"),
        Query("exclusion", "market -shares"),
        Query("exclusion", "election -president"),
        Query("exclusion", f"{rare2} -the"),
        Query("category", "vaccine", category="health"),
        Query("category", "government", category="sports"),
        Query("category", "chip plant", category="technology"),
        Query("since", "storm", since=week),
        Query("since", "government", since=month),
        Query("since", "central bank rates", category="business", since=month),
        Query("any_word", "what happened to the chip plant in Vornholt", any_word=True),
        Query("any_word", "why are energy prices rising", any_word=True),
        Query("any_word", f"who is {rare1} {rare3}", any_word=True),
        Query("no match", "qzxvjyk"),
        Query("no match", '"rates interest central"'),
    ]


# -- Backends -------------------------------------------------------------------------------------


@dataclass
class Backend:
    name: str
    url: str
    store: Store
    schema: str | None = None  # PostgreSQL
    path: Path | None = None  # SQLite
    figures: dict[str, float] = field(default_factory=dict)
    runs: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    rank_runs: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    hits: dict[int, list[str]] = field(default_factory=dict)
    matches: dict[int, int] = field(default_factory=dict)


def postgres_reachable() -> bool:
    try:
        with socket.create_connection((PG_HOST, PG_PORT), timeout=1):
            return True
    except OSError:
        return False


def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(
        host=PG_HOST, port=PG_PORT, user="postgres", dbname="test", autocommit=True
    ) as conn:
        conn.execute(sql)


def ingest(backend: Backend, docs: Sequence[Doc], batch: int) -> None:
    store = backend.store
    # Per batch: (articles, upsert s, crawls, crawl s, summaries, summary s).
    stats: list[tuple[int, float, int, float, int, float]] = []
    started = time.perf_counter()
    last_report = started
    for start in range(0, len(docs), batch):
        chunk = docs[start : start + batch]
        seen_at = chunk[-1].published + timedelta(minutes=5)
        items = [_item(d) for d in chunk]
        keys = [canonical_url(d.url) for d in chunk]
        crawled = [
            (key, Page(url=d.url, final_url=d.url, text=d.text, http_status=200))
            for d, key in zip(chunk, keys, strict=True)
            if d.text is not None
        ]
        summarized = [
            (key, content_hash(d.text), d.summary)
            for d, key in zip(chunk, keys, strict=True)
            if d.summary is not None and d.text is not None
        ]
        t0 = time.perf_counter()
        store.upsert_items(items, seen_at=seen_at)
        ids = _ids(store, keys)
        t1 = time.perf_counter()
        for key, page in crawled:
            store.save_crawl(ids[key], page, at=seen_at + timedelta(minutes=10))
        t2 = time.perf_counter()
        for key, hash_, summary in summarized:
            store.save_summary(ids[key], hash_, summary, at=seen_at + timedelta(minutes=12))
        t3 = time.perf_counter()
        stats.append((len(chunk), t1 - t0, len(crawled), t2 - t1, len(summarized), t3 - t2))
        if t3 - last_report > 30 or start + batch >= len(docs):
            last_report = t3
            progress(f"{backend.name}: {t3 - started:,.0f} s: {_rates(stats)}")
    f = backend.figures
    n, up_s, crawls, crawl_s, sums, sum_s = (sum(col) for col in zip(*stats, strict=True))
    f["ingest_s"] = up_s + crawl_s + sum_s
    f["ingest_rate"] = n / f["ingest_s"]
    f["upsert_rate"] = n / up_s
    f["crawl_rate"] = crawls / crawl_s if crawls else math.nan
    f["summary_rate"] = sums / sum_s if sums else math.nan
    # The same rates over the first and the last tenth of the batches: does ingest slow down?
    tenth = max(1, len(stats) // 10)
    for label, part in (("first", stats[:tenth]), ("last", stats[-tenth:])):
        n, up_s, crawls, crawl_s, sums, sum_s = (sum(col) for col in zip(*part, strict=True))
        f[f"ingest_rate_{label}"] = n / (up_s + crawl_s + sum_s)
        f[f"upsert_rate_{label}"] = n / up_s
        f[f"crawl_rate_{label}"] = crawls / crawl_s if crawls else math.nan
        f[f"summary_rate_{label}"] = sums / sum_s if sums else math.nan


def resight(backend: Backend, docs: Sequence[Doc], batch: int, fraction: float) -> None:
    """A later collect sees some of the same URLs again: nothing searched changes, only
    last_seen (both backends' triggers skip the re-index when no searched text changed)."""
    again = docs[:: max(1, round(1 / fraction))] if fraction > 0 else []
    elapsed = 0.0
    for start in range(0, len(again), batch):
        chunk = again[start : start + batch]
        items = [_item(d) for d in chunk]
        t0 = time.perf_counter()
        backend.store.upsert_items(items, seen_at=NOW + timedelta(hours=1))
        elapsed += time.perf_counter() - t0
    backend.figures["resight_rate"] = len(again) / elapsed if again else math.nan


def bulk_load(backend: Backend, docs: Sequence[Doc], chunk: int = 1000) -> None:
    """The rows the Store API would leave (upsert_items, save_crawl, save_summary), written with
    executemany, `chunk` articles per transaction: the FTS5 triggers and the tsvector trigger
    column index them as they arrive, each article once (the API re-indexes an article at its
    crawl and again at its summary)."""
    started = time.perf_counter()
    last_report = started
    for start in range(0, len(docs), chunk):
        part = docs[start : start + chunk]
        rows = [_bulk_row(d) for d in part]
        with backend.store.engine.begin() as conn:
            conn.execute(articles.insert(), rows)
            ids = dict(
                conn.execute(
                    select(articles.c.url, articles.c.id).where(
                        articles.c.url.in_([r["url"] for r in rows])
                    )
                ).all()
            )
            made = [
                {
                    "article_id": ids[row["url"]],
                    "content_hash": row["text_hash"],
                    "summarizer": d.summary.summarizer,
                    "title": d.summary.title,
                    "summary": d.summary.summary,
                    "brief_summary": d.summary.brief_summary,
                    "keywords": list(d.summary.keywords),
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "created_at": row["crawled_at"] + timedelta(minutes=2),
                }
                for d, row in zip(part, rows, strict=True)
                if d.summary is not None
            ]
            if made:
                conn.execute(summaries.insert(), made)
        now = time.perf_counter()
        if now - last_report > 30 or start + chunk >= len(docs):
            last_report = now
            done = min(start + chunk, len(docs))
            progress(f"{backend.name}: bulk-loaded {done:,}/{len(docs):,}, {now - started:,.0f} s")
    elapsed = time.perf_counter() - started
    backend.figures["bulk_s"] = elapsed
    backend.figures["bulk_rate"] = len(docs) / elapsed


def _bulk_row(doc: Doc) -> dict[str, Any]:
    seen_at = doc.published + timedelta(minutes=5)
    crawled_at = seen_at + timedelta(minutes=10)
    summary = doc.summary
    return {
        "url": canonical_url(doc.url),
        "original_url": doc.url,
        "title": doc.title,
        "source": doc.source,
        "category": doc.category,
        "published": doc.published,
        "snippet": doc.snippet,
        "image": None,
        "lede": doc.lede,
        "extract_status": "ok" if doc.lede else "error",
        "http_status": 200 if doc.lede else 403,
        "extract_error": None if doc.lede else "HTTP 403",
        "origin": "ddg:news",
        "first_seen": seen_at,
        "last_seen": seen_at,
        "fetched_at": seen_at,
        "text": doc.text,
        "text_hash": content_hash(doc.text) if doc.text is not None else None,
        "crawled_at": crawled_at if doc.text is not None else None,
        "crawl_status": "ok" if doc.text is not None else None,
        "crawl_error": None,
        "fetched_by": "http" if doc.text is not None else None,
        "summary_text": f"{summary.brief_summary} {summary.summary}" if summary else None,
    }


def _rates(stats: Sequence[tuple[int, float, int, float, int, float]]) -> str:
    """Progress: articles done, and each step's rate over the last 10 batches."""
    recent = stats[-10:]
    n, up_s, crawls, crawl_s, sums, sum_s = (sum(col) for col in zip(*recent, strict=True))
    done = sum(s[0] for s in stats)
    return (
        f"{done:,} articles; last {len(recent)} batches: upsert {n / up_s:,.0f}/s, "
        f"save_crawl {crawls / max(crawl_s, 1e-9):,.0f}/s, "
        f"save_summary {sums / max(sum_s, 1e-9):,.0f}/s"
    )


def _item(doc: Doc) -> Item:
    headline = Headline(
        title=doc.title,
        url=doc.url,
        source=doc.source,
        published=doc.published,
        snippet=doc.snippet,
        category=doc.category,
        origin="ddg:news",
    )
    extract = Extract(
        url=doc.url,
        full_content=doc.lede,
        status="ok" if doc.lede else "error",
        http_status=200 if doc.lede else 403,
        error=None if doc.lede else "HTTP 403",
    )
    return Item(headline=headline, extract=extract)


def _ids(store: Store, urls: list[str]) -> dict[str, int]:
    with store.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
        query = select(articles.c.url, articles.c.id).where(articles.c.url.in_(urls))
        return {url: id_ for url, id_ in conn.execute(query)}


def measure_sizes(backend: Backend) -> None:
    f = backend.figures
    if backend.path is not None:
        db = backend.path
        wal = db.with_name(db.name + "-wal")
        f["file_mb"] = db.stat().st_size / 1e6
        f["wal_mb"] = wal.stat().st_size / 1e6 if wal.exists() else 0.0
        f["total_mb"] = f["file_mb"] + f["wal_mb"]
        with backend.store.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
            try:
                rows = conn.exec_driver_sql(
                    "SELECT name, sum(pgsize) FROM dbstat GROUP BY name"
                ).all()
            except Exception as err:  # dbstat is a compile-time option of SQLite
                progress(f"sqlite: no dbstat ({err}): FTS share unknown")
                return
        by_name = {name: size for name, size in rows}
        f["fts_mb"] = sum(s for n, s in by_name.items() if n.startswith("articles_fts")) / 1e6
        f["articles_mb"] = by_name.get("articles", 0) / 1e6
        return
    schema = backend.schema
    with backend.store.engine.connect() as conn:
        total = conn.execute(
            text(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = :s AND c.relkind IN ('r', 'm')"
            ),
            {"s": schema},
        ).scalar_one()
        gin = conn.execute(
            text("SELECT pg_relation_size(to_regclass(:i))"),
            {"i": f'"{schema}".ix_articles_search_vector'},
        ).scalar_one()
        vector = conn.execute(
            text("SELECT sum(pg_column_size(search_vector)) FROM articles")
        ).scalar_one()
        table_mb = conn.execute(
            text("SELECT pg_table_size(to_regclass(:t))"), {"t": f'"{schema}".articles'}
        ).scalar_one()
    f["total_mb"] = float(total) / 1e6
    f["fts_mb"] = float(gin) / 1e6
    f["vector_mb"] = float(vector) / 1e6
    f["articles_mb"] = float(table_mb) / 1e6


def _servers(backends: list[Backend]) -> str:
    """The engines' versions and the settings that matter most here."""
    parts = []
    for backend in backends:
        with backend.store.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
            if backend.path is not None:
                version = conn.exec_driver_sql("SELECT sqlite_version()").scalar_one()
                parts.append(f"SQLite {version} (WAL, synchronous=NORMAL)")
                continue
            version = conn.exec_driver_sql("SHOW server_version").scalar_one()
            names = ("shared_buffers", "work_mem", "synchronous_commit", "jit")
            shown = [f"{n}={conn.exec_driver_sql(f'SHOW {n}').scalar_one()}" for n in names]
            parts.append(f"PostgreSQL {version.split()[0]} ({', '.join(shown)})")
    return "servers: " + "; ".join(parts) + f"; {os.cpu_count()} CPUs"


def vacuum_postgres(backend: Backend) -> None:
    started = time.perf_counter()
    with backend.store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM (ANALYZE) articles")
    backend.figures["vacuum_s"] = time.perf_counter() - started


def count_matches(store: Store, q: Query) -> int:
    """How many articles match `q`: every match, counted by the engine's own index."""
    parsed = parse_query(q.text)
    if q.any_word:
        parsed = parsed.any_word()
    with store.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
        if conn.dialect.name == "sqlite":
            fts = table("articles_fts", column("rowid"))
            stmt = (
                select(func.count())
                .select_from(fts.join(articles, articles.c.id == fts.c.rowid))
                .where(
                    literal_column("articles_fts").op("MATCH")(
                        bindparam("q", fts5_expression(parsed))
                    )
                )
            )
        else:
            vector = literal_column("articles.search_vector", TSVECTOR)
            stmt = (
                select(func.count())
                .select_from(articles)
                .where(vector.op("@@")(pg_tsquery(parsed)))
            )
        if q.category is not None:
            stmt = stmt.where(articles.c.category == q.category)
        if q.since is not None:
            stmt = stmt.where(article_recent() >= q.since)
        return int(conn.execute(stmt).scalar_one())


def rank_only(backend: Backend, q: Query) -> float:
    """Seconds for the ranking step alone: the candidates query of a first search (pool 50)."""
    parsed = parse_query(q.text)
    if q.any_word:
        parsed = parsed.any_word()
    with backend.store.engine.connect().execution_options(**{READ_ONLY: True}) as conn:
        engine = SqliteBackend(parsed) if conn.dialect.name == "sqlite" else PostgresBackend(parsed)
        started = time.perf_counter()
        engine.candidates(conn, q.category, q.since, 50)
        return time.perf_counter() - started


def search_once(store: Store, q: Query) -> tuple[float, list[str]]:
    """Seconds for one `digest search` (Store.search, limit 10), and the URLs it found."""
    started = time.perf_counter()
    hits = store.search(q.text, category=q.category, since=q.since, limit=10, any_word=q.any_word)
    return time.perf_counter() - started, [h.url for h in hits]


def run_searches(backends: list[Backend], qs: list[Query], repeats: int) -> None:
    for i, q in enumerate(qs):  # warm-up round (also the hits compared)
        for backend in backends:
            _, urls = search_once(backend.store, q)
            backend.hits[i] = urls
            backend.matches[i] = count_matches(backend.store, q)
            rank_only(backend, q)
    for round_ in range(repeats):
        for i, q in enumerate(qs):
            # Alternate which backend goes first, so neither always follows the other's load.
            order = backends if (round_ + i) % 2 == 0 else backends[::-1]
            for backend in order:
                seconds, _ = search_once(backend.store, q)
                backend.runs[i].append(seconds)
                backend.rank_runs[i].append(rank_only(backend, q))
        progress(f"search round {round_ + 1}/{repeats} done")


# -- Report ---------------------------------------------------------------------------------------


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def _fmt(value: float | None, unit: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if unit == "ms":
        return f"{value * 1000:,.1f} ms" if value < 10 else f"{value * 1000:,.0f} ms"
    if unit == "MB":
        return f"{value:,.1f} MB"
    if unit == "/s":
        return f"{value:,.0f}/s"
    if unit == "s":
        return f"{value:,.1f} s"
    if unit == "%":
        return f"{value:.0f}%"
    return f"{value:,.1f}{unit}"


def report(args: argparse.Namespace, backends: list[Backend], qs: list[Query], notes: list[str]):
    sqlite = backends[0]
    pg = backends[1] if len(backends) > 1 else None
    rows: list[tuple[str, float | None, float | None, str]] = []

    def row(label: str, key: str | Callable[[Backend], float | None], unit: str) -> None:
        def value(b: Backend | None) -> float | None:
            if b is None:
                return None
            return key(b) if callable(key) else b.figures.get(key)

        rows.append((label, value(sqlite), value(pg), unit))

    def kind_runs(b: Backend, kind: str) -> list[float]:
        return [t for i, q in enumerate(qs) if q.kind == kind for t in b.runs[i]]

    row("bulk load: wall time", "bulk_s", "s")
    row("bulk load: articles/s (not Store API)", "bulk_rate", "/s")
    row("ingest: wall time (Store API)", "ingest_s", "s")
    row("ingest: articles/s (all steps)", "ingest_rate", "/s")
    row("  upsert_items (+ id lookup)", "upsert_rate", "/s")
    row("  save_crawl (one tx each)", "crawl_rate", "/s")
    row("  save_summary (one tx each)", "summary_rate", "/s")
    row("  re-sighting upsert_items", "resight_rate", "/s")
    for step in ("ingest", "upsert", "crawl", "summary"):
        for part in ("first", "last"):
            row(f"  {step} rate, {part} 10% of batches", f"{step}_rate_{part}", "/s")
    row("size: database total", "total_mb", "MB")
    row("  SQLite main file", "file_mb", "MB")
    row("  SQLite -wal", "wal_mb", "MB")
    row("  articles table (heap+TOAST)", "articles_mb", "MB")
    row("  FTS5 shadow tables / GIN index", "fts_mb", "MB")
    row("  PostgreSQL tsvector column", "vector_mb", "MB")
    row("  full-text total (+ tsvector column)", _fts_total, "MB")
    row(
        "  full-text total, share of database",
        lambda b: 100 * t / b.figures["total_mb"] if (t := _fts_total(b)) is not None else None,
        "%",
    )
    row("search: median, all runs", lambda b: statistics.median(_all(b)), "ms")
    row("search: p95, all runs", lambda b: p95(_all(b)), "ms")
    row("search: mean, all runs", lambda b: statistics.fmean(_all(b)), "ms")
    for kind in KINDS:
        if any(q.kind == kind for q in qs):
            row(f"  median {kind}", lambda b, k=kind: statistics.median(kind_runs(b, k)), "ms")
    row(
        "ranking step alone: median",
        lambda b: statistics.median(t for runs in b.rank_runs.values() for t in runs),
        "ms",
    )

    print()
    print("=" * 96)
    print("Archive search benchmark: SQLite FTS5 against PostgreSQL full-text search")
    print("=" * 96)
    with_text = sum(1 for d in args.docs if d.text is not None)
    summarized = sum(1 for d in args.docs if d.summary is not None)
    text_chars = sum(len(d.text) for d in args.docs if d.text is not None)
    lede_chars = sum(len(d.lede) for d in args.docs)
    print(
        f"articles {len(args.docs):,} (seed {args.seed}) over {DAYS} days, {len(CATEGORIES)} "
        f"categories, {len(OUTLETS)} outlets; with main text {with_text:,} "
        f"({with_text / len(args.docs):.0%}, avg {text_chars / max(1, with_text):,.0f} chars), "
        f"summaries {summarized:,} ({summarized / len(args.docs):.0%}), "
        f"ledes avg {lede_chars / len(args.docs):,.0f} chars"
    )
    print(
        f"vocabulary {len(args.vocab.words):,} words ({args.vocab.tail_start:,} real, the rest "
        f"made up), Zipf s={ZIPF_S}; batch {args.batch} items per upsert_items; "
        f"re-sighting {args.resight:.0%}; {len(qs)} queries x {args.repeats} runs after a "
        f"warm-up, limit 10"
    )
    print(f"generation took {args.gen_s:,.1f} s (not timed); whole run {args.wall_s / 60:,.1f} min")
    for note in notes:
        print(f"note: {note}")
    print()
    print(f"{'figure':<36} {'SQLite':>14} {'PostgreSQL':>14} {'PG/SQLite':>10}")
    print("-" * 78)
    for label, a, b, unit in rows:
        ratio = f"{b / a:.2f}" if a and b is not None and not math.isnan(a + b) else "-"
        print(f"{label:<36} {_fmt(a, unit):>14} {_fmt(b, unit):>14} {ratio:>10}")

    print()
    print("per kind: matching articles (mean per query), hits returned, top-10 URL overlap")
    print(f"{'kind':<14} {'queries':>7} {'matches SQLite':>15} {'matches PG':>11} "
          f"{'hits S/PG':>10} {'top-10 overlap':>15}")  # fmt: skip
    for kind in KINDS:
        idx = [i for i, q in enumerate(qs) if q.kind == kind]
        if not idx:
            continue
        ms = statistics.fmean(sqlite.matches[i] for i in idx)
        hs = statistics.fmean(len(sqlite.hits[i]) for i in idx)
        if pg is not None:
            mp = f"{statistics.fmean(pg.matches[i] for i in idx):,.0f}"
            hp = statistics.fmean(len(pg.hits[i]) for i in idx)
            common = sum(len(set(sqlite.hits[i]) & set(pg.hits[i])) for i in idx)
            possible = sum(min(len(sqlite.hits[i]), len(pg.hits[i])) for i in idx)
            overlap = f"{common}/{possible}" + (f" ({common / possible:.0%})" if possible else "")
            hits = f"{hs:.1f}/{hp:.1f}"
        else:
            mp, overlap, hits = "-", "-", f"{hs:.1f}/-"
        print(f"{kind:<14} {len(idx):>7} {ms:>15,.0f} {mp:>11} {hits:>10} {overlap:>15}")

    print()
    print("per query: median search ms (ranking step alone), matching articles")
    print(f"{'kind':<12} {'query':<52} {'SQLite':>16} {'PostgreSQL':>16} {'PG/S':>6} "
          f"{'matches S/PG':>15}")  # fmt: skip
    for i, q in enumerate(qs):
        s = statistics.median(sqlite.runs[i])
        s_rank = statistics.median(sqlite.rank_runs[i])
        cell_s = f"{s * 1000:,.1f} ({s_rank * 1000:,.1f})"
        if pg is not None:
            p = statistics.median(pg.runs[i])
            p_rank = statistics.median(pg.rank_runs[i])
            cell_p = f"{p * 1000:,.1f} ({p_rank * 1000:,.1f})"
            ratio = f"{p / s:.2f}"
            counts = f"{sqlite.matches[i]:,}/{pg.matches[i]:,}"
        else:
            cell_p, ratio, counts = "-", "-", f"{sqlite.matches[i]:,}/-"
        print(
            f"{q.kind:<12} {q.label()[:52]:<52} {cell_s:>16} {cell_p:>16} {ratio:>6} {counts:>15}"
        )


def _fts_total(b: Backend) -> float | None:
    """What full-text search stores: FTS5's shadow tables; the GIN index and the tsvector
    column (PostgreSQL keeps the positions in the column, the index holds none)."""
    if "fts_mb" not in b.figures:
        return None
    return b.figures["fts_mb"] + b.figures.get("vector_mb", 0.0)


def _all(b: Backend) -> list[float]:
    return [t for runs in b.runs.values() for t in runs]


# -- Main -----------------------------------------------------------------------------------------


def main(argv: Iterable[str] | None = None) -> int:
    argv = list(argv) if argv is not None else sys.argv[1:]
    if "--scale" in argv:  # PostgreSQL alone, 100,000 and 1,000,000 articles, cached
        from bench import search_scale

        return search_scale.main(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="5,000 articles, 3 runs per query")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--text-fraction", type=float, default=0.30)
    parser.add_argument("--summary-fraction", type=float, default=0.10)
    parser.add_argument("--batch", type=int, default=100, help="items per upsert_items call")
    parser.add_argument("--resight", type=float, default=0.05, help="fraction upserted again")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per query")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--ingest",
        choices=("auto", "api", "bulk"),
        default="auto",
        help="api: every article through the Store API; bulk: all but the newest --sample "
        "bulk-loaded, the rest through the Store API; auto: api up to 20,000 articles",
    )
    parser.add_argument("--sample", type=int, default=5_000, help="Store API articles (bulk)")
    args = parser.parse_args(argv)
    if args.quick:
        args.articles = 5_000
        args.repeats = min(args.repeats, 3)
    if args.ingest == "auto":
        args.ingest = "api" if args.articles <= 20_000 else "bulk"
    args.sample = min(args.sample, args.articles)
    wall = time.perf_counter()

    started = time.perf_counter()
    args.vocab = build_vocabulary()
    args.docs = generate(
        args.articles, args.seed, args.text_fraction, args.summary_fraction, args.vocab
    )
    args.gen_s = time.perf_counter() - started
    progress(f"generated {len(args.docs):,} articles in {args.gen_s:.1f} s")
    qs = queries(args.vocab)

    notes: list[str] = []
    workdir = Path(tempfile.mkdtemp(prefix="digest-bench-search-"))
    backends: list[Backend] = []
    schema: str | None = None
    try:
        path = workdir / "digest.db"
        url = f"sqlite:///{path}"
        backends.append(Backend("sqlite", url, open_store(url), path=path))
        if args.no_postgres:
            notes.append("PostgreSQL not run (--no-postgres)")
        elif not postgres_reachable():
            notes.append(f"PostgreSQL is not reachable at {PG_HOST}:{PG_PORT}: SQLite only")
        else:
            schema = f"bench_search_{uuid.uuid4().hex[:12]}"
            _admin(f'CREATE SCHEMA "{schema}"')
            url = f"{PG_URL}?options=-csearch_path%3D{schema}"
            backends.append(Backend("postgresql", url, open_store(url), schema=schema))
        notes.append(_servers(backends))
        bulk = len(args.docs) - args.sample if args.ingest == "bulk" else 0
        if bulk > 0:
            notes.append(
                f"ingest: the first {bulk:,} articles (by publication time) bulk-loaded with "
                "executemany (the rows the Store API would write, 1,000 articles per "
                f"transaction; the search triggers index them), then the newest "
                f"{args.sample:,} through the Store API: the Store API rates are measured at an "
                f"archive of {bulk:,}-{len(args.docs):,} articles"
            )
        for backend in backends:
            if bulk > 0:
                bulk_load(backend, args.docs[:bulk])
            ingest(backend, args.docs[bulk:], args.batch)
            resight(backend, args.docs, args.batch, args.resight)
            measure_sizes(backend)
            if backend.schema is not None:
                vacuum_postgres(backend)
                notes.append(
                    f"PostgreSQL: VACUUM (ANALYZE) articles after ingest and sizing, "
                    f"{backend.figures['vacuum_s']:.1f} s (autovacuum's job; not in ingest time)"
                )
        run_searches(backends, qs, args.repeats)
        args.wall_s = time.perf_counter() - wall
        report(args, backends, qs, notes)
    finally:
        for backend in backends:
            backend.store.close()
        shutil.rmtree(workdir, ignore_errors=True)
        if schema is not None:
            try:
                _admin(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            except Exception as err:
                print(f"could not drop schema {schema}: {err}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
