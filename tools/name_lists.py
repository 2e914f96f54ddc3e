"""Writes router/privacy/data/given_names_us.txt: given names from the US Social Security
Administration's baby-name records (a US government work, in the public domain), less the words
that are also everyday English.

    python -m tools.name_lists FILE COMMIT > router/privacy/data/given_names_us.txt

FILE: `atleast100.txt` of github.com/hackerb9/ssa-baby-names (every name given to at least 100
babies of one sex in some year since 1880, one a line); COMMIT: the commit it was read at.
Left out: names of one or two letters, names the hand-written list (first_names.txt) holds,
words the prose model's lexicon holds (written in lower case in its training prose), words
`/usr/share/dict/american-english` (Debian's `wamerican`) lists in lower case, and the software
words the prose model never takes (names_model.NEVER): `Will`, `Chase`, `Summer`, `Ruby`,
`Jenkins` are words before they are names. Places too: the words of the time zone database's
names (Python's `zoneinfo`: `Rome`, `Denver`, `America`), the US states and the countries and
continents (`Arizona`, `Egypt`, `Boston` as in `Boston Dynamics`): `America` and `Brooklyn` are
given names, but in an agent's text they are places far more often.

(The US Census Bureau's 2010 surnames, taken the same way, were tried as a family-name list
too: on held-out prose they found one name more for one to three false ones.)
"""

from __future__ import annotations

import argparse
import sys
import zoneinfo
from pathlib import Path

from router.privacy import names_model
from router.privacy.names.lists import hand_given_names

_DICTIONARY = Path("/usr/share/dict/american-english")
# US states, countries, continents and large cities that are also given names in the records.
_PLACE_WORDS = """
    alabama alaska arizona arkansas california carolina colorado dakota delaware florida georgia hawaii
    idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan
    minnesota mississippi missouri montana nebraska nevada jersey mexico york ohio oklahoma oregon
    pennsylvania rhode tennessee texas utah vermont virginia washington wisconsin wyoming
    africa america asia europe oceania antarctica argentina australia austria belgium bolivia brazil
    canada chad chile china colombia cuba denmark ecuador egypt england eritrea ethiopia finland france
    germany ghana greece guinea haiti holland india indonesia iran iraq ireland israel italy jamaica
    japan jordan kenya korea lebanon liberia libya malaysia mali nigeria norway pakistan panama peru
    poland portugal russia rwanda scotland senegal somalia spain sudan sweden switzerland syria
    tunisia turkey uganda ukraine venezuela vietnam wales yemen zambia zimbabwe
    atlanta austin baltimore berlin boston brooklyn bristol camden charlotte chicago cleveland dallas
    dayton detroit houston london madrid memphis miami milan moscow nashville oakland orlando paris
    phoenix pittsburgh portland raleigh rome sacramento seattle tokyo tulsa
    american african asian british christian danish dutch english french german irish italian
"""
_PLACES = frozenset(_PLACE_WORDS.split())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("commit")
    args = parser.parse_args(argv)
    if not _DICTIONARY.exists():
        sys.exit(f"{_DICTIONARY} is missing: install Debian's wamerican (apt-get install wamerican)")
    everyday = {w for w in _DICTIONARY.read_text(encoding="utf-8").split() if w.islower()}
    lexicon: frozenset[str] = names_model.model()["lexicon"]
    listed = hand_given_names()
    places = set(_PLACES)
    for zone in zoneinfo.available_timezones():
        places.update(word.lower() for word in zone.replace("/", " ").replace("_", " ").replace("-", " ").split())
    kept = sorted(
        {
            name
            for name in (line.strip() for line in args.file.read_text(encoding="utf-8").splitlines())
            if len(name) > 2
            and name.isalpha()
            and name.lower() not in listed
            and name.lower() not in lexicon
            and name.lower() not in everyday
            and name.lower() not in names_model.NEVER
            and name.lower() not in places
        }
    )
    print(
        "# Given names from the US Social Security Administration's baby-name records (public domain),"
        f"\n# read from github.com/hackerb9/ssa-baby-names@{args.commit} ({args.file.name});"
        " written by tools/name_lists.py."
    )
    for start in range(0, len(kept), 12):
        print(" ".join(kept[start : start + 12]))


if __name__ == "__main__":
    main()
