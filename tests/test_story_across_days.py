"""A story across days (issue 38), as the service stores it: a developing story whose coverage
arrives a report a day, from different outlets, keeps one story id through every daily
clustering and keeps its older reports; two events of one kind on consecutive days, told in
like words, stay two stories."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from digest.config import StoriesConfig
from digest.jobs.clustering import cluster_category
from digest.store import Store
from digest.store.schema import articles
from tests import headlines as H
from tests import storefixtures
from tests.storefixtures import NOW, item

db_url, store = storefixtures.db_url, storefixtures.store

CONFIG = StoriesConfig()
DAY = timedelta(days=1)
NOON = NOW.replace(hour=12)

# One outlet a day on the flooding of Valencia (October-November 2024), as Spanish outlets
# titled it: the toll, the missing, the search, the cleanup.
DANA = [
    (
        "El País",
        "La DANA deja al menos 51 muertos en Valencia y arrasa pueblos enteros",
        "Las inundaciones provocadas por la DANA en la provincia de Valencia han dejado al menos "
        "51 muertos; Paiporta, Catarroja y Chiva, arrasados por el agua.",
    ),
    (
        "El Mundo",
        "Sube a 95 la cifra de muertos por la DANA en Valencia",
        "Los equipos de rescate siguen buscando desaparecidos en Paiporta y Catarroja tras las "
        "inundaciones de la DANA, que ya dejan 95 muertos en la provincia de Valencia.",
    ),
    (
        "ABC",
        "La DANA en Valencia: 158 muertos y decenas de desaparecidos en Paiporta",
        "Los bomberos y la UME buscan a los desaparecidos entre el barro de Paiporta, donde la "
        "DANA dejó la mayor parte de los muertos de la provincia de Valencia.",
    ),
    (
        "20minutos",
        "La UME busca a los desaparecidos de la DANA en los garajes de Paiporta y Catarroja",
        "Los militares de la UME achican agua de los garajes de Paiporta y Catarroja, donde "
        "temen hallar más muertos de la DANA que ha dejado 158 en Valencia.",
    ),
]
# Two earthquakes, a day apart, told in like words: another country, another toll.
QUAKES = [
    (
        "El Comercio",
        "Un terremoto de magnitud 7,5 sacude el norte de Perú y deja dos muertos",
        "El sismo, con epicentro en Loreto, derrumbó viviendas en Yurimaguas y dejó dos muertos "
        "y una veintena de heridos, según el Instituto Geofísico del Perú.",
    ),
    (
        "El Universal",
        "Un terremoto de magnitud 7,4 sacude el sur de México y deja cuatro muertos",
        "El sismo, con epicentro en Oaxaca, derrumbó casas en Pinotepa Nacional y dejó cuatro "
        "muertos, según el Servicio Sismológico Nacional de México.",
    ),
]


def report(outlet: str, title: str, lede: str, slug: str, at):
    host = "".join(c for c in outlet.lower() if c.isascii() and c.isalnum())
    return item(
        f"https://www.{host}.example/{slug}",
        title=title,
        lede=lede,
        category="world",
        published=at,
        source=outlet,
    )


def stories_of(store: Store, urls: list[str]) -> list[int | None]:
    with store.engine.connect() as conn:
        query = select(articles.c.url, articles.c.story_id).where(articles.c.url.in_(urls))
        found = {url: story for url, story in conn.execute(query)}
    return [found[u] for u in urls]


def test_a_story_reported_once_a_day_by_other_outlets_keeps_one_id(store: Store) -> None:
    """One report a day for three days, collected and clustered once a day (23:00) among other
    news: every day's report joins the story of the first day, under that story's id."""
    urls = []
    first_story = None
    for day, (outlet, title, lede) in enumerate(DANA[:3]):
        noon = NOON + day * DAY
        arriving = [report(outlet, title, lede, f"dana{day}", noon)]
        if day == 0:
            arriving += [
                report(line.outlet, line.title, line.text, f"other{n}", noon)
                for n, line in enumerate(H.SINGLES)
            ]
        store.upsert_items(arriving, seen_at=noon + timedelta(hours=10))
        cluster_category(store, "world", now=noon + timedelta(hours=11), config=CONFIG)
        urls.append(arriving[0].headline.url)
        found = stories_of(store, urls)
        first_story = found[0]
        assert first_story is not None
        assert found == [first_story] * len(urls), f"day {day + 1}: {found}"
    (view,) = [v for v in store.stories_by_id([first_story]) if v.id == first_story]
    assert sorted(a.url for a in view.articles) == sorted(urls)


def test_a_story_past_the_window_still_takes_the_days_later_reports(store: Store) -> None:
    """Collected four times a day: once the story has reports of three days (the first two days
    ago, outside the fade), another outlet's report six hours after the day's first joins it."""
    urls = []
    for day, (outlet, title, lede) in enumerate(DANA[:3]):
        noon = NOON + day * DAY
        store.upsert_items([report(outlet, title, lede, f"dana{day}", noon)], seen_at=noon)
        cluster_category(store, "world", now=noon + timedelta(minutes=5), config=CONFIG)
        urls.append(report(outlet, title, lede, f"dana{day}", noon).headline.url)
    afternoon = NOON + 2 * DAY + timedelta(hours=6)
    outlet, title, lede = DANA[3]
    later = report(outlet, title, lede, "dana3", afternoon)
    store.upsert_items([later], seen_at=afternoon)
    cluster_category(store, "world", now=afternoon + timedelta(minutes=5), config=CONFIG)
    found = stories_of(store, [*urls, later.headline.url])
    assert found[0] is not None
    assert found == [found[0]] * 4


def test_two_earthquakes_on_consecutive_days_stay_two_stories(store: Store) -> None:
    urls = []
    for day, (outlet, title, lede) in enumerate(QUAKES):
        noon = NOON + day * DAY
        arriving = report(outlet, title, lede, f"quake{day}", noon)
        store.upsert_items([arriving], seen_at=noon + timedelta(hours=10))
        cluster_category(store, "world", now=noon + timedelta(hours=11), config=CONFIG)
        urls.append(arriving.headline.url)
    first, second = stories_of(store, urls)
    assert first is not None and second is not None and first != second


# Syria on two days: the day before's stories all say "Siria"; what tells an event is the rarer
# name ("Duma", "Alepo").
SYRIA_DAY = [
    (
        "El Periódico",
        "Rusia veta en la ONU una resolución sobre Siria",
        "Moscú bloqueó en el Consejo de Seguridad el texto occidental; su embajador lo llamó "
        "una provocación y pidió esperar al informe de los inspectores.",
    ),
    (
        "La Razón",
        "Miles de refugiados cruzan a Turquía",
        "Ankara abre tres pasos fronterizos para familias que huyen de Siria con lo puesto; "
        "los campamentos de Kilis ya acogen a más de veinte mil personas.",
    ),
    (
        "Público",
        "La oposición pide negociaciones en Ginebra",
        "Los rebeldes reclaman a Naciones Unidas una nueva ronda de conversaciones de paz y un "
        "gobierno de transición para Siria sin el presidente.",
    ),
    (
        "El Confidencial",
        "Israel bombardea posiciones iraníes cerca de Damasco",
        "Sus aviones atacaron depósitos de misiles de la Guardia Revolucionaria en las afueras "
        "de la capital de Siria, según el ejército israelí.",
    ),
    (
        "Europa Press",
        "La ayuda humanitaria llega a Idlib tras semanas de bloqueo",
        "Un convoy de la Media Luna Roja con harina, medicinas y mantas entra en la provincia "
        "del noroeste de Siria, donde viven tres millones de desplazados.",
    ),
    (
        "La Vanguardia",
        "El petróleo sube por el temor a una escalada",
        "El barril de Brent se encarece un 2 % en Londres: los inversores temen que la guerra "
        "de Siria arrastre a las potencias del Golfo.",
    ),
]
DUMA = (
    "RTVE",
    "Decenas de muertos en un ataque con gas en Duma",
    "Un ataque con gas tóxico en Duma, en Siria, deja decenas de muertos según los socorristas.",
)
# German: every noun is capitalized, so a shared capitalized word is no rare name.
GERMANY_DAY = [
    (
        "Tagesschau",
        "Bundestag beschließt neues Heizungsgesetz",
        "Der Bundestag in Berlin hat am Freitag das umstrittene Gesetz verabschiedet.",
    ),
    (
        "Spiegel",
        "Streik bei der Bahn legt Fernverkehr lahm",
        "Die Lokführer der GDL streiken in ganz Deutschland, der Fernverkehr steht still.",
    ),
    (
        "Zeit",
        "Inflation in Deutschland sinkt auf zwei Prozent",
        "Die Preise in Deutschland steigen langsamer, meldet das Statistische Bundesamt.",
    ),
    (
        "FAZ",
        "Kanzler reist zum Gipfel nach Brüssel",
        "Der Kanzler trifft in Brüssel die Regierungschefs der Europäischen Union.",
    ),
    (
        "Süddeutsche",
        "Hochwasser in Bayern: Pegel steigen weiter",
        "In Bayern steigen die Pegel an der Donau, die Behörden rufen den Katastrophenfall aus.",
    ),
    (
        "Handelsblatt",
        "DAX schließt auf Rekordhoch",
        "Der Leitindex DAX hat in Frankfurt erstmals über 20.000 Punkten geschlossen.",
    ),
]
HAMBURG_FIRE = (
    "NDR",
    "Großbrand in Lagerhalle in Hamburg",
    "Ein Großbrand in einer Lagerhalle im Hamburger Hafen hat die Feuerwehr die ganze Nacht "
    "beschäftigt.",
)


def two_days(
    store: Store, day_one: list, first: tuple, second: tuple, *, other_news: bool = True
) -> tuple[int, int]:
    """`first` among `day_one`'s stories (and other news) on one day, `second` the next, each
    collected and clustered once that evening: the stories of the two."""
    urls = []
    others = [(line.outlet, line.title, line.text) for line in H.SINGLES if other_news]
    for day, reports in enumerate(([first, *day_one, *others], [second])):
        noon = NOON + day * DAY
        arriving = [
            report(o, t, lede, f"d{day}r{n}", noon) for n, (o, t, lede) in enumerate(reports)
        ]
        store.upsert_items(arriving, seen_at=noon + timedelta(hours=10))
        cluster_category(store, "world", now=noon + timedelta(hours=11), config=CONFIG)
        urls.append(arriving[0].headline.url)
    a, b = stories_of(store, urls)
    assert a is not None and b is not None
    return a, b


def test_a_next_days_report_in_few_common_words_continues_on_a_rare_name(store: Store) -> None:
    """Russia's denial shares few words with the day before's attack (0.33 alike, under the
    usual 0.40) but names Duma, which no other Syria story of those days names."""
    denial = (
        "El País",
        "Rusia niega el ataque con gas en Duma",
        "Moscú asegura que no hubo armas químicas en Duma.",
    )
    first, second = two_days(store, SYRIA_DAY, DUMA, denial)
    assert first == second


def test_german_nouns_do_not_count_as_rare_names(store: Store) -> None:
    """A fire in Cologne the day after one in Hamburg (0.33 alike) shares "Großbrand" and
    "Feuerwehr", which no other German story names: capitalized nouns, not names."""
    cologne = (
        "WDR",
        "Großbrand in Köln: Anwohner sollen Fenster schließen",
        "Ein Großbrand in einem Lager in Köln, die Feuerwehr warnt die Anwohner.",
    )
    first, second = two_days(store, GERMANY_DAY, HAMBURG_FIRE, cologne)
    assert first != second


def test_two_attacks_in_one_country_on_consecutive_days_stay_two_stories(store: Store) -> None:
    """A feed of Syria news only: an air strike on Aleppo the day after the gas attack on
    Duma, told in like words, shares only "Siria" with it, which every story of those days
    says."""
    aleppo = (
        "El País",
        "Un bombardeo en Alepo deja decenas de muertos",
        "Un ataque aéreo en Alepo, en Siria, deja decenas de muertos según los socorristas.",
    )
    first, second = two_days(store, SYRIA_DAY, DUMA, aleppo, other_news=False)
    assert first != second
