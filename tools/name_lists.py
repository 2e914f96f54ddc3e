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
`Jenkins` are words before they are names.

(The US Census Bureau's 2010 surnames, taken the same way, were tried as a family-name list
too: on held-out prose they found one name more for one to three false ones.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from router.privacy import names, names_model

_DICTIONARY = Path("/usr/share/dict/american-english")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("commit")
    args = parser.parse_args(argv)
    if not _DICTIONARY.exists():
        sys.exit(f"{_DICTIONARY} is missing: install Debian's wamerican (apt-get install wamerican)")
    everyday = {w for w in _DICTIONARY.read_text(encoding="utf-8").split() if w.islower()}
    lexicon: frozenset[str] = names_model.model()["lexicon"]
    listed = names.hand_given_names()
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
