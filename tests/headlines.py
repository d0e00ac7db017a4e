"""Headline sets with known answers for the clustering and ranking tests.

Written for these tests in the style of real agency and newspaper copy: each event is told by
several outlets in different words; the singles share common words ("market", "new", "rates",
"cuts") with the events and with each other, and must stay alone. `EVENT` names the story each
headline belongs to (None: a story of its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from digest.models import Item
from tests.storefixtures import item


@dataclass(frozen=True)
class Line:
    event: str | None
    outlet: str
    title: str
    text: str


FED = [
    Line(
        "fed",
        "Reuters",
        "Fed cuts interest rates by a quarter point, signals caution on further easing",
        "The U.S. Federal Reserve lowered its benchmark interest rate by 25 basis points on "
        "Wednesday to a range of 4.25%-4.50%, but policymakers signaled they would slow the pace "
        "of cuts next year as inflation remains stubborn.",
    ),
    Line(
        "fed",
        "AP News",
        "Federal Reserve lowers its key rate again but foresees fewer cuts next year",
        "The Federal Reserve cut its key interest rate by a quarter-point Wednesday, its third "
        "cut this year, and signaled it expects to reduce rates more slowly in 2025.",
    ),
    Line(
        "fed",
        "CNBC",
        "Powell says Fed will be more cautious after third straight rate cut",
        "Federal Reserve Chair Jerome Powell said Wednesday the central bank will be more careful "
        "about further reductions after it cut its benchmark rate by a quarter percentage point.",
    ),
]

QUAKE = [
    Line(
        "quake",
        "NHK World",
        "Magnitude 7.1 earthquake strikes off southern Japan, tsunami advisory issued",
        "A powerful earthquake with a magnitude of 7.1 struck off the coast of Miyazaki "
        "Prefecture in southern Japan on Thursday, prompting a tsunami advisory for coastal areas.",
    ),
    Line(
        "quake",
        "The Guardian",
        "Strong quake jolts Japan's Kyushu island as tsunami warning sounded",
        "A strong earthquake measuring 7.1 shook the island of Kyushu in southern Japan, the "
        "Japan Meteorological Agency said, and residents were told to move away from the coast.",
    ),
]

SINGLES = [
    Line(
        None,
        "MarketWatch",
        "Stock market rallies as tech shares rebound from selloff",
        "Wall Street stocks closed higher on Tuesday as investors bought back into technology "
        "shares after last week's steep decline.",
    ),
    Line(
        None,
        "CNN",
        "Housing market cools as mortgage rates climb to seven-month high",
        "Sales of previously owned homes fell in November as the average 30-year mortgage rate "
        "rose, according to the National Association of Realtors.",
    ),
    Line(
        None,
        "BBC News",
        "New study links daily coffee to a longer life",
        "People who drink two to three cups of coffee a day live longer on average than those "
        "who drink none, a large study of health records suggests.",
    ),
    Line(
        None,
        "Bloomberg",
        "Oil prices jump after OPEC+ announces new output cuts",
        "Brent crude rose more than 3% after the producer group agreed to extend and deepen "
        "production cuts into the first quarter of next year.",
    ),
    Line(
        None,
        "The Verge",
        "Apple unveils new iPad Air with faster M3 chip",
        "Apple on Monday announced a refreshed iPad Air powered by its M3 processor, with "
        "prices starting at $599 and shipping next week.",
    ),
    Line(
        None,
        "CoinDesk",
        "Bitcoin market slumps to three-month low as traders cut risk",
        "The largest cryptocurrency fell below $80,000 on Friday as leveraged traders unwound "
        "positions across crypto exchanges.",
    ),
    Line(
        None,
        "ESPN",
        "Lakers beat Celtics in overtime thriller behind LeBron James' 38 points",
        "LeBron James scored 38 points and hit the go-ahead jumper with 12 seconds left in "
        "overtime as Los Angeles beat Boston 119-115.",
    ),
    Line(
        None,
        "Financial Times",
        "Bank of England holds rates as inflation edges up",
        "The Bank of England kept its benchmark rate at 4.75% on Thursday, with policymakers "
        "split over how fast to cut borrowing costs as price growth picked up.",
    ),
    Line(
        None,
        "Reuters",
        "Japan's exports rise for third month on strong chip demand",
        "Japanese exports rose 3.8% in November from a year earlier, driven by shipments of "
        "semiconductor equipment to China and the United States.",
    ),
    Line(
        None,
        "TechCrunch",
        "OpenAI launches new reasoning model for developers",
        "OpenAI released a new model aimed at coding and math tasks through its API on "
        "Thursday, priced below its previous flagship.",
    ),
]

ECB_DE = [
    Line(
        "ezb",
        "tagesschau.de",
        "EZB senkt Leitzins erneut um 0,25 Prozentpunkte",
        "Die Europäische Zentralbank (EZB) hat den Leitzins zum vierten Mal in diesem Jahr "
        "gesenkt. Der Einlagensatz sinkt um 0,25 Prozentpunkte auf 3,0 Prozent.",
    ),
    Line(
        "ezb",
        "Spiegel",
        "Europäische Zentralbank senkt die Zinsen – Lagarde warnt vor Risiken",
        "Die EZB senkt ihren Leitzins um 0,25 Prozentpunkte auf 3,0 Prozent. EZB-Präsidentin "
        "Christine Lagarde sieht weiter Risiken für die Konjunktur im Euroraum.",
    ),
    Line(
        "ezb",
        "Handelsblatt",
        "Zinsentscheid der EZB: Notenbank lockert Geldpolitik weiter",
        "Die Europäische Zentralbank hat am Donnerstag den Einlagensatz gesenkt und ihre "
        "Geldpolitik damit weiter gelockert, wie von Ökonomen erwartet.",
    ),
]

# The Japan earthquake of QUAKE as German outlets tell it: one event. Words alone may join
# them, by the n-grams they share ("Japan"/"Japans", "Tsunami", "7.1"/"7,1"); vectors do.
QUAKE_DE = [
    Line(
        "quake",
        "Zeit Online",
        "Schweres Erdbeben erschüttert den Süden Japans",
        "Ein Erdbeben der Stärke 7,1 hat den Süden Japans erschüttert. Die Behörden gaben eine "
        "Tsunami-Warnung für die Küste von Miyazaki heraus.",
    ),
    Line(
        "quake",
        "FAZ",
        "Erdbeben der Stärke 7,1 vor Japans Küste – Tsunamiwarnung",
        "Vor der Südküste Japans hat sich ein Erdbeben der Stärke 7,1 ereignet. Die japanische "
        "Wetterbehörde warnte vor einem Tsunami.",
    ),
]

# The Japan earthquake of QUAKE and QUAKE_DE as French outlets tell it: the same event in a
# third language (vectors join them; words alone need not).
QUAKE_FR = [
    Line(
        "quake",
        "Le Monde",
        "Un séisme de magnitude 7,1 frappe le sud du Japon, alerte au tsunami",
        "Un puissant séisme de magnitude 7,1 a secoué jeudi le sud du Japon, au large de la "
        "préfecture de Miyazaki. Les autorités ont émis une alerte au tsunami pour les côtes.",
    ),
    Line(
        "quake",
        "France 24",
        "Japon : fort tremblement de terre sur l'île de Kyushu, les habitants appelés à fuir",
        "Un tremblement de terre de magnitude 7,1 a frappé l'île de Kyushu, dans le sud du "
        "Japon, selon l'agence météorologique japonaise, qui a demandé aux habitants de quitter "
        "les côtes.",
    ),
]

# Other news in French; and DISASTERS, other disasters in three languages, which vectors must
# not take for the earthquake.
SINGLES_FR = [
    Line(
        None,
        "Les Echos",
        "Le gouvernement présente un budget de rigueur pour l'an prochain",
        "Le ministre de l'Economie a présenté mercredi un projet de loi de finances qui prévoit "
        "40 milliards d'euros d'économies, dont une baisse des dépenses des ministères.",
    ),
    Line(
        None,
        "Le Parisien",
        "Grève à la SNCF : le trafic sera très perturbé ce week-end",
        "Les syndicats de cheminots ont appelé à une grève de trois jours pour protester contre "
        "la réforme des retraites; un TGV sur deux circulera samedi.",
    ),
    Line(
        None,
        "Le Figaro",
        "Le CAC 40 termine en hausse, porté par les valeurs du luxe",
        "La Bourse de Paris a fini la séance en hausse de 1,2 % vendredi, portée par les "
        "résultats trimestriels des grands groupes du luxe.",
    ),
]

DISASTERS = [
    Line(
        None,
        "Ouest-France",
        "Inondations dans le sud-ouest de la France : des milliers d'habitants évacués",
        "Après des pluies torrentielles, les crues ont submergé plusieurs villages du Gers et "
        "des Landes; les pompiers ont évacué plus de 3 000 personnes.",
    ),
    Line(
        None,
        "BR24",
        "Hochwasser in Bayern: Pegel steigen weiter, erste Orte evakuiert",
        "Nach tagelangem Dauerregen sind in Niederbayern mehrere Flüsse über die Ufer getreten; "
        "die Behörden haben erste Ortschaften evakuiert.",
    ),
    Line(
        None,
        "AP News",
        "Wildfire forces thousands to flee homes in southern California",
        "A fast-moving wildfire fanned by strong winds forced thousands of residents to evacuate "
        "in the hills east of Los Angeles on Thursday, fire officials said.",
    ),
]

SINGLES_DE = [
    Line(
        None,
        "Süddeutsche",
        "Bundestag beschließt neues Heizungsgesetz nach langem Streit",
        "Nach monatelangem Streit in der Koalition hat der Bundestag das neue Gebäudeenergiegesetz "
        "verabschiedet.",
    ),
    Line(
        None,
        "n-tv",
        "Deutsche Bahn: Neue Streiks legen den Fernverkehr lahm",
        "Die Lokführergewerkschaft GDL hat erneut zu Streiks aufgerufen; der Fernverkehr der "
        "Deutschen Bahn steht weitgehend still.",
    ),
    Line(
        None,
        "Handelsblatt",
        "DAX schließt auf Rekordhoch – Anleger setzen auf Zinssenkungen",
        "Der deutsche Leitindex hat am Freitag ein neues Rekordhoch erreicht, getragen von der "
        "Hoffnung auf weitere Zinssenkungen in den USA.",
    ),
]

TESLA = [
    Line(
        "tesla",
        "Reuters",
        "Tesla recalls over 2 million vehicles to fix Autopilot safety controls",
        "Tesla is recalling more than 2 million vehicles in the United States to install new "
        "safeguards in its Autopilot advanced driver-assistance system, the U.S. auto safety "
        "regulator said.",
    ),
    Line(
        "tesla",
        "The Verge",
        "Tesla issues software update for 2 million cars after NHTSA Autopilot probe",
        "Tesla will push an over-the-air software update to more than 2 million vehicles after "
        "a two-year investigation by the National Highway Traffic Safety Administration into "
        "crashes involving Autopilot.",
    ),
    Line(
        "tesla",
        "BBC News",
        "Tesla recall: Autopilot fix for almost every car sold in US",
        "Electric car maker Tesla is recalling nearly all of the vehicles it has sold in the US, "
        "more than two million, to fix a defective system meant to ensure drivers pay attention.",
    ),
]

BOEING = [
    Line(
        "boeing",
        "CNBC",
        "Boeing machinists vote to end strike, accept 38% wage increase",
        "Boeing's factory workers voted on Monday to accept a contract offer and end a "
        "seven-week strike that halted production of the 737 MAX and other jetliners.",
    ),
    Line(
        "boeing",
        "Seattle Times",
        "Striking Boeing workers approve new contract, ending walkout",
        "Members of the International Association of Machinists approved the deal with 59% of "
        "the vote, ending a strike by 33,000 workers in the Seattle area.",
    ),
]

FINAL = [
    Line(
        "final",
        "ESPN",
        "Real Madrid beat Dortmund 2-0 to win 15th Champions League title",
        "Dani Carvajal and Vinicius Junior scored late as Real Madrid beat Borussia Dortmund 2-0 "
        "at Wembley to win the Champions League for a record 15th time.",
    ),
    Line(
        "final",
        "Reuters",
        "Carvajal, Vinicius strike as Real Madrid claim Champions League crown",
        "Real Madrid won a record-extending 15th European Cup, beating Borussia Dortmund 2-0 "
        "in the final at Wembley Stadium.",
    ),
    Line(
        "final",
        "The Athletic",
        "Dortmund heartbreak at Wembley as Real Madrid win again",
        "Borussia Dortmund missed a string of first-half chances before goals from Dani "
        "Carvajal and Vinicius Jr handed Real Madrid the trophy.",
    ),
]

NVIDIA = [
    Line(
        "nvidia",
        "Reuters",
        "Nvidia revenue nearly doubles on AI chip demand, beats estimates",
        "Nvidia reported third-quarter revenue of $35.1 billion, up 94% from a year earlier and "
        "above Wall Street estimates, as demand for its AI data center chips stayed strong.",
    ),
    Line(
        "nvidia",
        "CNBC",
        "Nvidia's quarterly sales soar 94% but stock slips on outlook",
        "Nvidia shares fell in extended trading even though the chipmaker's revenue rose 94% to "
        "$35.1 billion in the quarter, as its forecast failed to impress investors.",
    ),
]

DECOYS = [
    Line(
        None,
        "The Verge",
        "Nvidia unveils new GeForce gaming GPUs at CES",
        "Nvidia announced its RTX 50-series graphics cards at CES in Las Vegas, with the top "
        "model priced at $1,999.",
    ),
    Line(
        None,
        "Bloomberg",
        "Tesla shares hit record high as investors bet on robotaxis",
        "Tesla stock closed at an all-time high, lifting the electric carmaker's market value "
        "above $1.3 trillion.",
    ),
    Line(
        None,
        "Reuters",
        "Boeing 737 MAX deliveries to China resume after pause",
        "Boeing has resumed deliveries of 737 MAX jets to Chinese airlines after a pause of "
        "several months, people familiar with the matter said.",
    ),
    Line(
        None,
        "Sky Sports",
        "Real Madrid sign teenage striker from Brazilian club Palmeiras",
        "Real Madrid have completed the signing of 17-year-old forward Endrick, who will join "
        "the club when he turns 18.",
    ),
]

ALL = (
    FED
    + QUAKE
    + SINGLES
    + ECB_DE
    + QUAKE_DE
    + SINGLES_DE
    + TESLA
    + BOEING
    + FINAL
    + NVIDIA
    + DECOYS
)


def world_news(lines: list[Line], published: datetime) -> list[Item]:
    """`lines` as today's world news, each from its outlet's own site."""
    return [
        item(
            f"https://{line.outlet.lower().replace(' ', '')}.example/{n}",
            title=line.title,
            lede=line.text,
            category="world",
            published=published,
            source=line.outlet,
        )
        for n, line in enumerate(lines)
    ]


def expected_partition(lines: list[Line], first_id: int = 1) -> frozenset[frozenset[int]]:
    """The right answer for `lines` numbered from `first_id` in order."""
    groups: dict[object, set[int]] = {}
    for n, line in enumerate(lines, start=first_id):
        key: object = line.event if line.event is not None else ("single", n)
        groups.setdefault(key, set()).add(n)
    return frozenset(frozenset(g) for g in groups.values())
