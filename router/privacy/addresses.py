"""Postal addresses (opt-in per route: `privacy_detect: [address]`), by grammars of the common
countries' street lines, on CPU and with no model.

- US, UK, Canada, Australia, Ireland: `1600 Pennsylvania Avenue NW`, `221B Baker Street`,
  `Flat 3, 12 Rose Close`, `PO Box 1234`, with a unit, then `, City, ST 12345` or a UK postcode.
- Germany, Austria, Switzerland: `Hauptstraße 12a`, `Karl-Marx-Allee 90, 10243 Berlin`.
- France, Belgium: `12 bis rue de la Paix, 75002 Paris`.
- Spain, Italy, Portugal, Latin America: `Calle Mayor 5, 28013 Madrid`, `Via Roma 10`.
- Netherlands: `Keizersgracht 123, 1015 CJ Amsterdam`.
- Sweden, Norway, Denmark, Finland: `Kungsgatan 44, 111 35 Stockholm`, `Vesterbrogade 3`.
- Poland: `ul. Marszałkowska 1, 00-624 Warszawa`; Hungary: `Andrássy út 60.`, `Váci utca 12`.
- Labelled fields and named columns (`address`, `street`, `address_line1`, `Anschrift`, …) whose
  value holds a number and a word.
- Any country's street line, before the unit, place and postcode lines of an envelope, or after a
  phrase that says a place follows (`lives on`, `ship it to`, `the corner of`).

A finding is the street line and, where it follows, the city and postcode. A city or postcode
alone is not taken (it names thousands of homes).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from importlib import resources

from router.privacy import names_model
from router.privacy.anchors import LINE_MARKS, Anchor, Anchors, longest_first, merged, search, windows
from router.privacy.detector import Finding
from router.privacy.tables import Columns
from router.privacy.taken import Taken

_CAP = r"[A-ZÀ-ÖØ-Þ\u0100-\u017F](?:[^\W\d_]|['’.](?=[^\W\d_])|-(?=[^\W\d_\d]))*"
_ORDINAL = r"\d{1,3}(?:st|nd|rd|th)"
_EN_TYPES = (
    r"Street|St|Avenue|Ave|Av|Road|Rd|Boulevard|Blvd|Drive|Dr|Lane|Ln|Way|Court|Ct|Place|Pl|Terrace|Ter|Parkway"
    r"|Pkwy|Highway|Hwy|Circle|Cir|Square|Sq|Trail|Trl|Close|Crescent|Cres|Gardens|Gdns|Grove|Mews|Row|Hill"
    r"|Walk|Green|Rise|Vale|View|Parade|Esplanade|Loop|Alley|Pike|Plaza|Ridge|Path|Crossing|Wharf|Quay|Gate"
    # USPS's other street suffixes that are no count's noun after a number and a name (`842 Nolan
    # Expressway`, `856 Bridget Dale`; singular only: `3 Paper Mills`, `4 Oil Wells` are counts).
    r"|Expressway|Expy|Freeway|Fwy|Throughway|Turnpike|Tpke|Trafficway|Stravenue|Causeway|Viaduct|Overpass"
    r"|Underpass|Skyway|Motorway|Bypass|Dale|Oval|Manor|Meadow|Orchard|Knoll|Hollow|Glen|Harbou?r|Haven"
    r"|Junction|Summit|Trace|Vista|Crest|Creek|Brook|Burg|Cove|Ferry|Forge|Inlet|Isle|Lodge|Prairie|Ranch"
    r"|Rapid|Shoal|Shore|Tunnel|Valley|Village|Ville|Crossroad|Landing"
)
_UNIT = r"(?:,?[ \t]*(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl|Room|Rm|#)\.?[ \t]*#?[\w-]{1,6})"
_UK_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}"
_CITY = rf"{_CAP}(?:[ \t-]{_CAP}){{0,3}}"
# `, Springfield, IL 62704`, `, London SW1A 2AA`, `, Toronto, ON M5V 2T6`, `, Sydney NSW 2000`.
_EN_TAIL = (
    rf"(?:,?[ \t]*{_CITY},?[ \t]+(?:[A-Z]{{2,3}}[ \t]+(?:\d{{4,5}}(?:-\d{{4}})?|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d)"
    rf"|{_UK_POSTCODE})"
    # `, Te Aro, Wellington 6011`, `, Cape Town City Centre, Cape Town, 8001`: a suburb or two,
    # then a 4-digit postcode.
    rf"|(?:,[ \t]*{_CITY}){{1,2}},?[ \t]+\d{{4}}(?![\d-]))?"
)
_EN = re.compile(
    rf"(?<![\w.,:/-])(?:(?:Flat|Apt|Unit|Suite)[ \t]+[\w-]{{1,5}},?[ \t]+)?\d{{1,6}}[A-Za-z]?(?:-\d{{1,6}})?,?[ \t]+"
    rf"(?:(?:N|S|E|W|North|South|East|West)\.?[ \t]+)?(?:(?:{_CAP}|{_ORDINAL})[ \t]+){{1,4}}(?:{_EN_TYPES})\.?"
    rf"(?:[ \t]+(?:NW|NE|SW|SE|N|S|E|W|Upper|Lower))?(?![\w-]){_UNIT}?{_EN_TAIL}"
)
_PO_BOX = re.compile(r"(?<![\w.])(?:P\.?[ \t]?O\.?[ \t]?Box|Postfach|Apartado|Casella Postale)[ \t]+\d{1,7}(?!\d)")
_DE = re.compile(
    rf"(?<![\w-])(?:(?:{_CAP}[ \t-])?{_CAP}-?(?i:straße|strasse|str\.|weg|allee|platz|gasse|ring|damm|ufer|chaussee"
    r"|steig|pfad|markt|graben|kai|zeile)"
    # The type as a word of its own after an adjective of a place (`Berliner Straße 12`,
    # `Schönhauser Allee 86`); not `Ring` (`Boxing Ring 3`).
    rf"|{_CAP}[ \t](?:Straße|Strasse|Str\.|Allee|Weg|Platz|Gasse|Damm|Ufer|Chaussee|Steig|Markt|Graben|Kai|Zeile))"
    r"(?:[ \t]+\d{1,4}(?:[ \t]?[a-zA-Z])?(?:[-/]\d{1,4})?)(?![\w-])"
    rf"(?:,?[ \t]+(?:[A-Z]-)?\d{{4,5}}[ \t]+{_CITY})?"
)
_DE_WORDS = re.compile(
    rf"(?<![\w-])(?:Am|An der|Auf der|Im|In der|Unter den|Zum|Zur)[ \t]+{_CAP}[ \t]+\d{{1,4}}[a-z]?(?![\w-])"
    rf",?[ \t]+\d{{5}}[ \t]+{_CITY}"
)
_FR = re.compile(
    r"(?<![\w.,-])\d{1,4}(?:[ \t]?(?:bis|ter|[A-B]))?,?[ \t]+(?i:rue|avenue|av\.|boulevard|bd|place|allée|allee|chemin"
    r"|impasse|quai|route|cours|passage|square|rond-point|faubourg|voie)[ \t]+"
    r"(?:(?:de|du|des|la|le|l'|d'|l’|d’)[ \t]*){0,2}"
    rf"{_CAP}(?:[ \t-]+(?:(?:de|du|des|la|le|l'|d'|sur|en)[ \t]*)?{_CAP}){{0,4}}"
    rf"(?:,?[ \t]+\d{{5}}[ \t]+{_CITY}(?:[ \t]+Cedex(?:[ \t]+\d{{1,2}})?)?)?"
)
# (A name may be a date, `Calle 5 de Mayo`; the number may follow `#`, `nº`; Brazil writes the
# district after a dash, `Av. Paulista, 1578 - Bela Vista`, Mexico the colonia, `, Col. Centro`.)
_SOUTH = re.compile(
    r"(?<![\w.-])(?:Calle|C/|Avenida|Avda\.|Av\.|Paseo|Plaza|Plaça|Carrer|Camino|Ronda|Via|Viale|Piazza|Piazzale|Corso"
    r"|Largo|Vicolo|Rua|Travessa|Praça|Alameda|Estrada|Jirón|Carrera)[ \t]+(?:(?:de|del|la|las|los|dos|das|da|do|di"
    rf"|della|dei|delle|degli)[ \t]+){{0,2}}(?:\d{{1,2}}[ \t]+de[ \t]+)?{_CAP}"
    rf"(?:[ \t]+(?:(?:de|del|la|da|do|di|della|dei)[ \t]+)?{_CAP}){{0,3}}"
    r",?[ \t]+(?:n[º°o.]?[ \t]*|#[ \t]*)?\d{1,4}[A-Za-z]?(?:[ \t]*[,-][ \t]*\d{1,2}º?[ \t]*[A-Za-z]?)?(?![\w-])"
    rf"(?:[ \t]+[-–][ \t]+{_CITY}|,[ \t]*Col\.[ \t]+{_CITY})?"
    rf"(?:,?[ \t]+\d{{4,5}}(?:-\d{{3}})?[ \t]+{_CITY})?"
)
_NL = re.compile(
    rf"(?<![\w-]){_CAP}(?:straat|weg|laan|plein|gracht|kade|singel|dijk|steeg|hof|markt)[ \t]+\d{{1,4}}[a-zA-Z]?"
    r"(?:[ \t-]?\d{1,3})?(?![\w-])"
    rf"(?:,?[ \t]+\d{{4}}[ \t]?[A-Z]{{2}}[ \t]+{_CITY})?"
)
# Sweden, Norway, Denmark, Finland: the street type is the end of a word of eight letters or more
# (`Kungsgatan 44, 111 35 Stockholm`, `Vesterbrogade 3, 1620 København V`, `Mannerheimintie 12,
# 00100 Helsinki`), or in Norway and Denmark a word after a name in the genitive (`Karl Johans gate
# 22, 0159 Oslo`); a building's number before it, as some records add, goes with it. A street
# word that is an everyday English one is none (`_spans`).
_NORDIC_ENDINGS = (
    r"gatan|gata|vägen|gränd|torget|stigen|backen|allén|gaten|veien|vegen|plassen|vej|gade|stræde|torv|katu"
    r"|ntie|kuja|polku|kaari|tori"
)
_NORDIC = re.compile(
    rf"(?<![\w-])(?:\d{{1,6}}[ \t]+)?(?:(?:{_CAP}[ \t])?(?=[^\W\d_]{{8}}){_CAP}(?:{_NORDIC_ENDINGS})"
    rf"|(?:{_CAP}[ \t]){{0,2}}{_CAP}s[ \t]+(?:gate|gata|vei|veg|gade|vej|väg|allé))"
    rf"[ \t]+\d{{1,4}}[ \t]?[A-Za-z]?(?![\w-])(?:,?[ \t]+(?:\d{{3}}[ \t]\d{{2}}|\d{{4,5}})[ \t]+{_CITY})?"
)
# Hungary: the type after the name, the number often with a dot (`Váci utca 12.`, `Andrássy út
# 60.`, `Árpád fejedelem útja 3.`, `Kossuth Lajos tér 1`), then `, 1052 Budapest`.
_HU = re.compile(
    rf"(?<![\w-]){_CAP}(?:[ \t]+(?:{_CAP}|[a-zà-öø-ÿ\u0100-\u017F]{{3,}})){{0,3}}[ \t]+"
    r"(?:utca|út|útja|tér|tere|körút|krt\.|sétány|rakpart)[ \t]+\d{1,4}\.?(?:[/-]\d{1,4}\.?)?(?![\w-])"
    rf"(?:,?[ \t]+\d{{4}}[ \t]+{_CITY})?"
)
# Poland: `ul. Marszałkowska 1, 00-624 Warszawa`, `al. Jerozolimskie 65/79` (the type first).
_PL = re.compile(
    rf"(?<![\w.-])(?:ul|al|pl|os)\.[ \t]*{_CAP}(?:[ \t]+{_CAP}){{0,3}}[ \t]+\d{{1,4}}[A-Za-z]?(?:/\d{{1,4}})?(?![\w-])"
    rf"(?:,?[ \t]+\d{{2}}-\d{{3}}[ \t]+{_CITY})?"
)
# A rural route (`RR 2 Box 152`, `Rural Route 4, Box 17`, `HC 64 Box 3`).
_RURAL = re.compile(
    r"(?<![\w.])(?:RR|R\.R\.|Rural[ \t]+Route|HC|Star[ \t]+Route)[ \t]+\d{1,3},?[ \t]+Box[ \t]+\d{1,5}(?!\d)"
)
# India: a flat or a house, its building, a landmark and a locality, then the city and its PIN
# (`Flat 9A, Sunrise Apartments, near City Mall, Andheri West, Mumbai 400053`).
_IN = re.compile(
    r"(?<![\w.])(?:Flat|House|H\.[ \t]?No\.?|Plot|Door|Shop|Room)[ \t]*(?:No\.?[ \t]*)?[\w/-]{1,8},[ \t]*"
    rf"(?:[^,\n]{{2,48}},[ \t]*){{1,5}}{_CITY}[ \t]*[-–]?[ \t]*\d{{3}}[ \t]?\d{{3}}(?!\d)"
)
# Korea in Latin letters: the building number, the road (`-ro`, `-gil`, `-daero`), the district
# (`170 Teheran-ro, Gangnam-gu`).
_KR = re.compile(
    rf"(?<![\w.-])\d{{1,4}}(?:-\d{{1,4}})?[ \t]+{_CAP}-(?:ro|daero|gil)(?:[ \t]+\d{{1,3}}(?:beon)?-gil)?,[ \t]*"
    rf"{_CAP}-(?:gu|si|gun|dong)(?![\w-])"
)
# Russia, Ukraine, Belarus in Cyrillic: the street's type, its name, `д.` and the house, a flat
# (`ул. Тверская, д. 7, кв. 12`).
_CYR_CAP = r"[А-ЯЁЇІЄҐ][а-яёїієґ'’-]+"
_RU = re.compile(
    r"(?<![\w.])(?:ул\.|улица|пр\.|просп\.|проспект|пер\.|переулок|ш\.|шоссе|наб\.|набережная|бульв\.|б-р|бульвар"
    rf"|пл\.|площадь|вул\.|вулиця)[ \t]*{_CYR_CAP}(?:[ \t]+{_CYR_CAP}){{0,2}},?[ \t]+(?:д\.|дом|буд\.)[ \t]*\d{{1,4}}"
    r"[а-я]?(?:,?[ \t]*(?:корп\.|к\.|стр\.)[ \t]*\d{1,3})?(?:,?[ \t]*(?:кв\.|квартира|оф\.|офис)[ \t]*\d{1,4})?"
)
# A street line in a map link's query, its spaces written `+` or `%20`
# (`maps/search/?api=1&query=9174+Bramblewood+Drive+Austin+TX`).
_SEP = r"(?:\+|%20)"
_MAP_QUERY = re.compile(
    rf"(?:[?&](?:q|query|daddr|saddr|destination|origin)=|/maps/(?:place|dir|search)/)(\d{{1,6}}{_SEP}"
    rf"(?:[A-Za-z][a-z]+{_SEP}){{1,4}}(?:{_EN_TYPES})(?![A-Za-z]))"
)
_LABEL_KEYS = (
    r"(?:street|home|postal|mailing|shipping|billing|delivery|residential|business|work|customer|contact)?"
    r"[_ -]?(?:address|addr)(?:[_ -]?(?:line)?[_ -]?1)?|street(?:[_ -]?address)?|address[_ -]?line[_ -]?1"
    r"|adresse|anschrift|straße|strasse|dirección|direccion|domicilio|indirizzo|endereço|endereco|adres"
)
# An address of something else (`IP address:`, `Bitcoin address:`, `MAC address:`, `wallet
# address:`): its value is a network's or a ledger's, and the sentence after it no street.
_OTHER_WORDS = re.split(
    r"\s+",
    "ip ipv4 ipv6 mac mail bitcoin btc ethereum eth litecoin coin wallet crypto contract deposit server"
    " network host memory web node hardware virtual link broadcast proxy gateway base",
)
_OTHER_ADDRESS = "".join(rf"(?<!{word}[ _-])" for word in _OTHER_WORDS)
_LABELLED = re.compile(
    rf"(?i:(?<![A-Za-z]){_OTHER_ADDRESS}(?:{_LABEL_KEYS}))[\"']?[ \t]*(?::|=|=>)[ \t]*"
    # The value on the label's line, or alone on the next (a form, a CV: `Address:` then the
    # street line), unless that line is a key of its own (YAML's `address:` over `street: …`).
    r"(?:\r?\n(?![ \t]*[\w-]+[ \t]*[:=])[ \t]*)?[\"']?"
    rf"([^\"'\n<>{{}}\[\]]{{5,120}})(?=[\"'\n<]|$)",
    re.MULTILINE,
)

# US military addresses (USPS): `PSC 1234, Box 5678` or `Unit 2050 Box 4190` or a ship
# (`USNS Comfort`), then `APO AE 09021` (APO/FPO/DPO and AA/AE/AP), on one line or two.
_MILITARY = re.compile(
    r"(?<![\w.])(?:(?:PSC|CMR|Unit)[ \t]+\d{1,5},?[ \t]+Box[ \t]+\d{1,5}|(?:USNS|USNV|USS|USCGC)[ \t]+"
    rf"{_CAP}(?:[ \t]+{_CAP})?)(?:,[ \t]*|[ \t]*\r?\n[ \t]*|[ \t]+)(?:APO|FPO|DPO)[ \t]+(?:AA|AE|AP)[ \t]+\d{{5}}(?!\d)"
)
# The lines that follow a street line on an envelope or a record: units (`Apt. 4`), a place
# line or two (`Springfield`, `, IL`, `Cyprus (Greek)`), then a line ending in a postcode
# (`Denmark 35018`, `St Georges, QC 54256`, `0184 Oslo`; a postcode with no place before it
# ends its line). Taken only when the postcode line comes.
_UNIT_WORD = r"(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl|Room|Rm)\.?[ \t]*#?[\w-]{1,6}"
_PLACE_LINE = r"[^\W\d_][^\n\d:;=@/\\{}<>|\[\]\"`]{0,40}"
# A line's end and the next line's start (after its quote marks or bullet, if any).
_MARKS = LINE_MARKS
_BREAK = rf"[ \t]*\r?\n[ \t]*{_MARKS}"
_POSTCODE = r"\d{4,5}(?:-\d{3,4})?(?![\w-])"


def countries() -> list[str]:
    """Country names in English (data/countries.txt), as an address's last line names them."""
    text = resources.files("router.privacy").joinpath("data", "countries.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


# A country's name (data/countries.txt), the longest first, as an address's last line names it.
_COUNTRY = (
    "(?:" + "|".join(re.escape(c).replace("\\ ", "[ \t]+") for c in sorted(countries(), key=len, reverse=True)) + ")"
)
# (An address label may leave a blank line above its last line, the country's: `Riisa\n\n Estonia
# 62488`.)
_LAST_BREAK = rf"[ \t]*\r?\n(?:[ \t]*{_MARKS}\r?\n)?[ \t]*{_MARKS}"
_CONTINUATION = re.compile(
    rf"(?:{_BREAK}{_UNIT_WORD}){{0,2}}(?:{_BREAK},?[ \t]*{_PLACE_LINE}){{0,2}}{_LAST_BREAK},?[ \t]*"
    rf"(?:(?:{_PLACE_LINE}?[ \t,]+)?{_POSTCODE}(?=[ \t]*(?:$|\r?\n|[,.;!?)]))"
    rf"|{_PLACE_LINE}[ \t,]+{_POSTCODE}(?=[ \t]+[a-z])"
    rf"|{_POSTCODE}[ \t]+{_CITY}(?=[ \t]*(?:$|\r?\n|[,.;]))"
    rf"|(?i:{_COUNTRY})(?=[ \t]*(?:$|\r?\n|[,.;!?)])))"
)
# A street line of any country's words, `Søndergade 52`, `Allika 46 Suite 5`, `12 Rose Lane 3`:
# words and a house number, ending its line; an address only with the continuation after it.
# (After a house number any words; with none, capitalised words and particles: `Send it to
# Storgata 14` is `Storgata 14`.)
# Words that join the words of a street's name (`Rua da Prata`, `Via della Scala`).
_PARTICLES = r"de|del|la|las|los|da|do|dos|das|di|della|van|von|der|den|du|le|y|e|i"
# Words that number things in documents, code and logs, never a street's name (`Version 12`,
# `Step 2`, `Python 3`, `Total 12`): no street line begins with one.
_NOT_STREET = (
    r"(?!(?:Line|Lines|Page|Pages|Step|Steps|Version|Chapter|Section|Figure|Table|Item|Items|Row|Column|Port"
    r"|Level|Phase|Stage|Python|Node|Java|Windows|Ubuntu|Debian|Gate|Terminal|Platform|Floor|Room|Building"
    r"|Block|Unit|Day|Week|Month|Year|Slot|Seat|Track|Tab|Task|Issue|Ticket|Total|Count|Build|Release|Run|Job"
    r"|Test|Tests|Error|Errors)\b)"
)
# A street's words before its house number: capitalised words and the particles that join them.
_STREET_WORDS = rf"{_NOT_STREET}{_CAP}(?:[ \t]+(?:{_CAP}|{_PARTICLES})){{0,4}}"
# A house number, then words (`12 Rose Lane`, `9383 ul. Chrzanowska`).
_NUMBER_WORDS = r"\d{1,6}[A-Za-z]?[ \t]+[^\W\d_][\w'’.-]*(?:[ \t]+[^\W\d_][\w'’.-]*){0,4}"
_STREET_LINE = re.compile(
    rf"(?<![\w.,:/#-])((?:{_NUMBER_WORDS}|{_STREET_WORDS})"
    rf"[ \t]+\d{{1,5}}(?:[A-Za-z]|[ \t][A-Z](?![\w.]))?\.?(?:[ \t]+{_UNIT_WORD}){{0,2}})(?=[ \t]*\r?\n)"
)

_BLOCK = re.compile(_STREET_LINE.pattern + f"(?:{_CONTINUATION.pattern})")
# An address on one line that ends in its country (`5586 Þórunnarstræti 31, Arnsdorf, Germany`,
# `Kiannonkatu 98 Apt. 105, Isham, United Kingdom`): a street (a number, words and a house
# number; a number and capitalised words; or words and a house number), its units, one or two
# places, the country and its postcode, where the clause ends. (`Found 3 errors, fix them,
# France` has no street.)
_PLACE = r"[^\W\d_][^\n\d,:;=@/\\{}<>|\[\]\"`]{0,40}"
_COUNTRY_LINE = re.compile(
    rf"(?<![\w.,:/#-])((?:{_NUMBER_WORDS}[ \t]+\d{{1,5}}[A-Za-z]?\.?"
    rf"|\d{{1,6}}[A-Za-z]?[ \t]+{_STREET_WORDS}"
    rf"|{_STREET_WORDS}[ \t]+\d{{1,5}}[A-Za-z]?\.?)"
    rf"(?:{_UNIT}){{0,2}}(?:,[ \t]*{_PLACE}){{1,2}},[ \t]*(?i:{_COUNTRY})(?:[ \t]+{_POSTCODE})?)"
    r"(?=[ \t]*(?:$|\r?\n|[,.;!?)]))"
)
# A street line of any country on one line with the postcode and city after it, as most of
# Europe writes them (`Overtoom 409, 1016 GV Amsterdam`, `Rådhusgata 5, 0151 Oslo`): words then a
# house number, a comma, a Dutch, 5-digit, Polish or Swedish postcode and a city that is no
# everyday word (`_spans`: not `Chapter 3, 12000 Miles`).
_EU_POSTCODE = r"\d{4}[ \t]?[A-Z]{2}|\d{5}|\d{2}-\d{3}|\d{3}[ \t]\d{2}"
_EU_LINE = re.compile(
    rf"(?<![\w.,:/#-]){_STREET_WORDS}[ \t]+\d{{1,4}}[a-zA-Z]?(?:[-/]\d{{1,4}})?,[ \t]*(?:{_EU_POSTCODE})[ \t]+({_CITY})"
    r"(?=[ \t]*(?:$|\r?\n|[,.;!?)]))"
)
# Japan in Latin letters: block numbers, the district, its ward or city (`5-30-18 Ebisu,
# Shibuya-ku, Tokyo 150-0013`).
_JP = re.compile(
    rf"(?<![\w.-])\d{{1,2}}-\d{{1,3}}(?:-\d{{1,3}})?[ \t]+{_CAP}(?:[ \t-]{_CAP})?,[ \t]*{_CAP}-(?:ku|shi|cho|machi|gun)"
    rf"(?![\w-])(?:,[ \t]*{_CITY})?(?:[ \t]+\d{{3}}-\d{{4}}(?!\d))?"
)
# How a street line of `_BLOCK` ends (its house number, a unit or two, the line's end): an
# anchor of its own, so that the block's pattern runs only after a postcode line that one of the
# lines before it could start. Text whose every line holds a 4-digit number (a CSV export)
# makes every line a postcode line; few of its lines end like a street line.
_STREET_END = rf"[0-9]{{1,5}}(?:[A-Za-z]|[ \t][A-Z])?\.?(?:[ \t]+{_UNIT_WORD}){{0,2}}[ \t]*\r?\n"
_BLOCK_LINES = 6  # a street line, two unit lines, two place lines and a blank one before the postcode line
_BLOCK_REACH = 600  # characters those lines may take at the most (a bound to look in first)


# A street line of any country after a phrase that says a place follows (`lives on`, `deliver
# it to`, `meet me at`, `the corner of`, `my address is`): a house number then capitalised words
# (`692 Kuuse 53`, `9383 ul. Chrzanowska 61`), or words then a house number (`Via dei Fiorentini
# 17`, `Árpád fejedelem útja 3.`), a unit and `, City, Country 12345` after it; a second street
# after `and` on a corner. Without the phrase such lines are too like other text to be taken
# (`Python 3`, `Step 2`); with it, words that number things in documents and code are not
# streets (`located at Line 42`).
_CUE = (
    r"(?:\b(?:live[sd]?|living|reside[sd]?|residing|stay(?:s|ed|ing)?)[ \t]+(?:on|at)"
    r"|\blocated[ \t]+(?:at|on)"
    r"|\b(?:deliver(?:ed|y)?|ship(?:ped|ping)?|send|sent|mail(?:ed)?|post(?:ed)?)"
    r"(?:[ \t]+(?:it|this|them|me|us|everything|the[ \t]+[a-z]+|a[ \t]+new[ \t]+one|a[ \t]+[a-z]+))?[ \t]+to"
    r"|\b(?:taxi|cab|ride|drive|driving|directions)[ \t]+to"
    r"|\bmeet(?:ing)?(?:[ \t]+(?:me|you|us|them))?[ \t]+at"
    r"|\b(?:drops?|dropped|drop)[ \t]+(?:you|me|us|them)[ \t]+off[ \t]+at"
    r"|\bpick(?:s|ed)?[ \t]+(?:me|you|us|them)[ \t]+up[ \t]+at"
    r"|\b(?:office|restaurant|shop|store|house|home|flat|apartment|venue|clinic|hotel|warehouse)[ \t]+is[ \t]+(?:at|on)"
    r"|\baddress[ \t]+(?:is|to|with|as|should[ \t]+be)|\benter[ \t]+on|\bthe[ \t]+corner[ \t]+of)"
)
# ... and, after a phrase, also the words of street types written lower case (`ul.`, `útja`).
_PARTICLE = rf"(?:{_PARTICLES}|dei|ul\.|al\.|út|utca|útja|tér|u\.)"
# Where a street line ends: the clause ends, or a unit, a street word or a word that goes on
# the sentence follows (`Grafana 10 dashboards` is no street).
_CLAUSE_END = (
    r"(?=[ \t]*(?:[,.;:!?)\n]|$|(?i:street|st|road|rd|apt|apartment|suite|ste|unit|flat|floor|and|in|on|for|by|after"
    r"|before|the|please|tomorrow|today|tonight|at|is|was|since|from|until|near|next|opposite|behind|with|if|when"
    r"|where|which|who|that|as|so|but|or|because|every|each|this)\b))"
)
# (Typed in lower case after a cue, with an English street type: `update my address to 7811
# bramblewood lane`.)
_EN_TYPES_LOWER = _EN_TYPES.lower()
_CUED_STREET = (
    rf"(?:\d{{1,6}}[a-z]?[ \t]+(?:[a-z]{{3,}}[ \t]+){{1,3}}(?:{_EN_TYPES_LOWER})\.?(?![\w-]){_CLAUSE_END}"
    rf"|\d{{1,6}}[A-Za-z]?(?:[ \t]+\d{{1,5}})?[ \t]+{_NOT_STREET}{_CAP}(?:[ \t]+(?:{_CAP}|{_PARTICLE})){{0,4}}"
    rf"(?:[ \t]+\d{{1,5}}[A-Za-z]?\.?)?{_CLAUSE_END}"
    rf"|{_NOT_STREET}{_CAP}(?:[ \t]+(?:{_CAP}|{_PARTICLE}|[a-zà-ÿ]{{2,}})){{0,3}}[ \t]+\d{{1,5}}[A-Za-z]?\.?"
    rf"(?![\w/:-]|[.,]\d){_CLAUSE_END})"
)
_CUED = re.compile(
    rf"(?i:{_CUE})[ \t]+((?:{_CUED_STREET})(?:{_UNIT}){{0,2}}(?:,[ \t]*{_CITY}){{0,2}}(?:,?[ \t]+\d{{4,5}}(?!\d))?"
    rf"(?:[ \t]+and[ \t]+(?:{_CUED_STREET}|{_CAP}(?:[ \t]+{_CAP}){{0,3}}))?)"
)


def _street_value(value: str) -> bool:
    """A labelled or column value that is a street line: a number and a word, not an e-mail,
    an IP address, a URL or a bare number."""
    value = value.strip()
    if "@" in value or "://" in value or len(value) < 5:
        return False
    # A house number stands alone: a digit glued to a letter or `_` is an identifier's (`_ipv6`).
    if not re.search(r"(?<![^\W\d])\d", value) or not re.search(r"[^\W\d_]{3,}", value):
        return False
    if re.search(r"[a-z]\.[A-Za-z]|[|=(){}]", value):  # code: `ipaddress.IPv4Address | …`
        return False
    return not re.fullmatch(r"[\d.:/ -]+|[0-9a-f:]+", value)


def _column_kind(header: str) -> tuple[str, str] | None:
    if re.fullmatch(rf"(?:{_LABEL_KEYS})", header, re.IGNORECASE) or header in ("street", "address_1", "line1"):
        return "ADDRESS", "address-column"
    return None


COLUMNS = Columns(
    ("address", "addr", "street", "adresse", "anschrift", "strasse", "direccion", "indirizzo", "endereco"),
    _column_kind,
    lambda _kind, _rule, value: _street_value(value),
)


_DE_SUFFIXES = r"straße|strasse|str\.|weg|allee|platz|gasse|ring|damm|ufer|chaussee|steig|pfad|markt|graben|kai|zeile"
# (pattern, rule, anchor, caseless, characters before the anchor's end, after it)
_RULES: tuple[tuple[re.Pattern[str], str, str, bool, int, int], ...] = (
    (_EN, "address-en", rf"(?:{_EN_TYPES})(?:[^A-Za-z]|$)", False, 140, 120),
    (_PO_BOX, "address-po-box", r"P\.?[ \t]?O\.?[ \t]?Box|Postfach|Apartado|Casella Postale", True, 30, 20),
    (_DE, "address-de", rf"(?:{_DE_SUFFIXES})[ \t]+\d", True, 80, 100),
    (
        _DE_WORDS,
        "address-de",
        r"(?:^|[^A-Za-z])(?:Am|An der|Auf der|Im|In der|Unter den|Zum|Zur)[ \t]+[A-Z]",
        False,
        20,
        120,
    ),
    (
        _FR,
        "address-fr",
        r"(?:^|[^A-Za-z])(?:rue|avenue|av\.|boulevard|bd|place|allée|allee|chemin|impasse|quai|route|cours|passage"
        r"|square|rond-point|faubourg|voie)[ \t]",
        True,
        30,
        140,
    ),
    (
        _SOUTH,
        "address-es-it-pt",
        r"(?:^|[^A-Za-z])(?:Calle|C/|Avenida|Avda\.|Av\.|Paseo|Plaza|Plaça|Carrer|Camino|Ronda|Via"
        r"|Viale|Piazza|Piazzale|Corso|Largo|Vicolo|Rua|Travessa|Praça|Alameda|Estrada|Jirón|Carrera)[ \t]",
        False,
        16,
        140,
    ),
    (_NL, "address-nl", r"(?:straat|weg|laan|plein|gracht|kade|singel|dijk|steeg|hof|markt)[ \t]+\d", False, 60, 80),
    (
        _NORDIC,
        "address-nordic",
        rf"(?:{_NORDIC_ENDINGS}|s[ \t]+(?:gate|gata|vei|veg|gade|vej|väg|allé))[ \t]+\d",
        False,
        70,
        80,
    ),
    (
        _HU,
        "address-hu",
        r"[ \t](?:utca|út|útja|tér|tere|körút|krt\.|sétány|rakpart)[ \t]+\d",
        False,
        80,
        40,
    ),
    (_PL, "address-pl", r"(?:^|[^\w.-])(?:ul|al|pl|os)\.[ \t]*[^\W\d_]", False, 8, 120),
    (
        _BLOCK,
        "address-block",
        rf"\n[ \t]*{_MARKS},?[ \t]*(?:[^\n\d:;=@/\\{{}}<>|\[\]\"`]{{1,40}}[ \t,])?\d{{4,5}}(?:-\d{{3,4}})?(?:[^\w-]|$)",
        False,
        400,
        4,
    ),
    (_COUNTRY_LINE, "address-country", rf",[ \t]*{_COUNTRY}(?:[^\w]|$)", True, 160, 12),
    # ... or a country's name alone (`ARENDAL\n Norway`).
    (_BLOCK, "address-block", rf"\n[ \t]*{_MARKS},?[ \t]*{_COUNTRY}(?:[^\w]|$)", True, 400, 4),
    (
        _CUED,
        "address-cue",
        _CUE + r"[ \t]",
        True,
        48,
        160,
    ),
    (
        _RURAL,
        "address-rural",
        r"(?:RR|R\.R\.|Rural[ \t]+Route|HC|Star[ \t]+Route)[ \t]+\d{1,3},?[ \t]+Box",
        False,
        24,
        12,
    ),
    (
        _IN,
        "address-in",
        r"(?:^|[^\w.])(?:Flat|House|H\.[ \t]?No|Plot|Door|Shop|Room)[ \t]*(?:No\.?[ \t]*)?[\w/-]{1,8},",
        False,
        12,
        260,
    ),
    (_KR, "address-kr", r"-(?:ro|daero|gil),[ \t]*[A-Z][a-z]+-(?:gu|si|gun|dong)", False, 60, 4),
    (_RU, "address-ru", r"(?:д\.|дом|буд\.)[ \t]*\d", False, 80, 60),
    (
        _MAP_QUERY,
        "address-map",
        r"(?:[?&](?:q|query|daddr|saddr|destination|origin)=|/maps/(?:place|dir|search)/)\d",
        False,
        60,
        120,
    ),
    (_MILITARY, "address-military", r"(?:APO|FPO|DPO)[ \t]+(?:AA|AE|AP)[ \t]+\d", False, 60, 8),
    (_EU_LINE, "address-eu", rf"\d,[ \t]*(?:{_EU_POSTCODE})[ \t]+[A-ZÀ-ÖØ-Þ]", False, 110, 60),
    (_JP, "address-jp", r"[a-z],[ \t]*[A-Z][a-z]+-(?:ku|shi|cho|machi|gun)(?:[^\w-]|$)", False, 60, 60),
    (
        _LABELLED,
        "address-label",
        r"(?:addr(?:ess)?|street|adresse|anschrift|stra(?:ß|ss)e|direcci[oó]n|domicilio|indirizzo|endere[cç]o|adres)"
        r"(?:[_ -]?(?:line)?[_ -]?[12])?[\"']?[ \t]*(?::|=)",
        True,
        50,
        160,
    ),
)
_ANCHORS = Anchors([*(Anchor(anchor, caseless) for _p, _r, anchor, caseless, _b, _f in _RULES), Anchor(_STREET_END)])
_STREET_ENDS = len(_RULES)  # the index of the street lines' ends among the anchors


def _block_spans(text: str, ends: list[int], forward: int, street_ends: list[int]) -> Iterator[tuple[int, int]]:
    """Spans for `_BLOCK` around its anchors' ends (postcode lines), to be merged: from the
    earliest of the lines before each that ends like a street line, to the postcode line; none
    where no line before it does."""
    size = len(text)
    street_set = set(street_ends)
    for end in ends:
        # No street line's end in reach before it: not a block (the common case, read first).
        before = bisect.bisect_right(street_ends, end) - 1
        if before < 0 or street_ends[before] < end - _BLOCK_REACH:
            continue
        line_start = text.rfind("\n", 0, max(0, end - 1))  # the newline the postcode line follows
        start = -1
        for _ in range(_BLOCK_LINES):
            if line_start < 0:
                break
            previous = text.rfind("\n", 0, line_start) + 1
            if line_start + 1 in street_set:  # the line before ends like a street line
                start = previous
            line_start = previous - 1
        if start >= 0:
            yield start, min(size, end + forward)


def _lexicon() -> frozenset[str]:
    lexicon: frozenset[str] = names_model.model()["lexicon"]
    return lexicon


def _everyday_street(value: str) -> bool:
    """Whether a Nordic street line's first word is an everyday English one (`Delegate 12`)."""
    street = next((word for word in value.split() if word[:1].isalpha()), "")
    return street.lower() in names_model.model()["lexicon"]


_DE_TYPED_WORD = re.compile(rf"(?i)\w*?(?:{_DE_SUFFIXES})(?=[ \t]+\d)")


def _english_de_type(value: str) -> bool:
    """Whether a German street line's typed word is an English word that ends like a type
    (`During 1971`, `Spring 2024`, `Docstring 2`, `Ignoring 815`): an everyday word, the `-ing`
    form of one or a word glued to `string`; the type alone and German compounds (`Kaiserring`,
    `Goethering`, `Westring`, `Kurfürstendamm`) stand."""
    typed = _DE_TYPED_WORD.search(value)
    if typed is None:
        return False
    word = typed.group().lower()
    if word in _DE_TYPES:
        return False
    lexicon = names_model.model()["lexicon"]

    def everyday(low: str) -> bool:
        return names_model.everyday(low, lexicon)

    # (`substring`, `docstring`: an English or code word before `string`; `Westring` is a street,
    # `we` too short to count)
    before = word[:-6] if word.endswith("string") else ""
    glued = len(before) >= 3 and (everyday(before) or before in ("doc", "docs"))
    # An `-ing` form of an everyday verb (`ignoring`, `comparing`; not `Goethering`).
    gerund = word.endswith("ing") and (everyday(word[:-3]) or everyday(word[:-3] + "e"))
    return everyday(word) or glued or gerund


_DE_TYPES = frozenset(_DE_SUFFIXES.replace("\\", "").split("|"))
# Words of a sentence about code or numbers, never of a street, unit or place line: a block whose
# lines hold one is prose (`1038 matches 1024.` then `So I need to delete lines 1034`).
_PROSE_WORD = re.compile(
    r"\b(?:is|are|was|were|be|been|became|becomes|matches|than|now|line|lines|index|will|would|should|we"
    r"|have|has|had|then|if|so|to|it|this|that|deleted|inserted|removed|added|down|up)\b"
)


def _spans(text: str) -> Iterator[tuple[int, int, str]]:
    hits = _ANCHORS.ends(text)
    for index, (pattern, rule, _anchor, _caseless, back, forward) in enumerate(_RULES):
        if index not in hits:
            continue
        spans = (
            merged(text, _block_spans(text, hits[index], forward, hits.get(_STREET_ENDS, [])))
            if rule == "address-block"
            else windows(text, hits[index], back, forward)
        )
        for match in search(pattern, text, spans):
            if rule == "address-block" and (
                not re.search(r"[^\W\d_]{3,}", match.group(1)) or _PROSE_WORD.search(match.group())
            ):
                continue
            if pattern is _DE and _english_de_type(match.group()):
                continue
            if rule == "address-nordic" and _everyday_street(match.group()):
                continue
            if rule == "address-eu" and names_model.everyday(match.group(1).split()[0].lower(), _lexicon()):
                continue
            if rule == "address-map":  # the query's street line, not its key
                yield match.start(1), match.end(1), rule
                continue
            if rule not in ("address-label", "address-cue"):
                yield match.start(), match.end(), rule
                continue
            value = match.group(1)
            if _street_value(value):
                start, end = match.span(1)
                yield start, end - (len(value) - len(value.rstrip(" \t,;"))), rule


def find(text: str) -> list[Finding]:
    """Every postal address found in `text` (non-overlapping, earliest first; the longest span
    where two overlap). The grammars' findings stand over a street line of any country found by
    the lines after it (`address-block`), and are carried on over those lines."""
    found = [(f.start, f.end, f.rule) for f in COLUMNS.find(text)]
    blocks: list[tuple[int, int, str]] = []
    for span in _spans(text):
        (blocks if span[2] == "address-block" else found).append(span)
    kept = longest_first("ADDRESS", text, found)
    if "\n" not in text:
        return kept
    kept = [_continued(text, f) for f in kept]
    taken = Taken()
    for finding in kept:
        taken.take(finding.start, finding.end)
    extra = [f for f in longest_first("ADDRESS", text, blocks) if taken.take(f.start, f.end)]
    return sorted(kept + extra, key=lambda f: f.start) if extra else kept


def _continued(text: str, finding: Finding) -> Finding:
    """A finding carried on over the unit, place and postcode lines that follow it (not one that
    ends in its postcode already)."""
    if re.search(rf"\d{{4,5}}(?:-\d{{3,4}})?$|{_UK_POSTCODE}$|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d$", finding.value):
        return finding
    tail = _CONTINUATION.match(text, finding.end)
    if tail is None:
        return finding
    return Finding(finding.type, text[finding.start : tail.end()], finding.start, tail.end(), finding.rule)
