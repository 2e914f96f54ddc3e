"""Writes router/privacy/data/code_words.txt: everyday words of the prose that goes with code.

    python -m tools.code_words NAMES COMMIT > router/privacy/data/code_words.txt

The prose name model's lexicon holds the words written in lower case in its training prose
(news, fiction, interviews): `returns`, `invalid`, `constructor`, `convert` are not among them,
so a docstring's or an agent's sentence that opens with one (`Returns the function…`, `Okay, I
will…`) made it a candidate name. These are the words written in lower case (three letters or
more) in the comments and strings of two files or more of this Python's standard library (PSF
licence; only which words occur is read, no text is kept), less every given name of the US
Social Security Administration's records: NAMES is `atleast100.txt` of
github.com/hackerb9/ssa-baby-names (public domain records; read at COMMIT), as for
`tools.name_lists` (`bob`, `mike`, `sue` are written in lower case in examples and are names
first). The finders skip a capitalised candidate whose lower case is one of them unless a name
list holds it.
"""

from __future__ import annotations

import argparse
import collections
import io
import re
import sys
import sysconfig
import tokenize
from pathlib import Path

_WORD = re.compile(r"(?<![\w'])[a-z]{3,}(?![\w'])")
_PROSE = (tokenize.COMMENT, tokenize.STRING)


def words(root: Path, files_at_least: int = 2) -> list[str]:
    """The lower-case words of the comments and strings of the `.py` files under `root`, each in
    `files_at_least` files or more."""
    seen: collections.Counter[str] = collections.Counter()
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
            found = {word for token in tokens if token.type in _PROSE for word in _WORD.findall(token.string)}
        except (OSError, UnicodeDecodeError, SyntaxError, tokenize.TokenError):
            continue  # a file of another encoding or a test's broken source
        seen.update(found)
    return sorted(word for word, count in seen.items() if count >= files_at_least)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", type=Path, help="atleast100.txt of github.com/hackerb9/ssa-baby-names")
    parser.add_argument("commit", help="the commit it was read at (for the record)")
    args = parser.parse_args(argv)
    given = {line.strip().lower() for line in args.names.read_text(encoding="utf-8").splitlines()}
    root = Path(sysconfig.get_paths()["stdlib"])
    found = [word for word in words(root) if word not in given]
    print(f"{len(found)} words from {root.name}, names of {args.commit} left out", file=sys.stderr)
    sys.stdout.write("".join(f"{word}\n" for word in found))


if __name__ == "__main__":
    main()
