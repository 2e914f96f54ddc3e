"""Names in the source trees agents read (licence headers, package manifests, build files,
maintainers' files, docstrings, configuration of git itself), written after the detectors and
scored blind once.

`later_documents.py` holds documents (minutes, citations, transcripts) and `later_people.py`
records. These are the people a repository names: a licence's copyright line, a module's
`__author__`, Javadoc's `@author`, `package.json`'s `author` and `contributors`, `setup.py` and
`pyproject.toml`, `Cargo.toml`, a gemspec, `composer.json`, R's `Authors@R`, a Helm chart's
`maintainers`, Debian's `control`, an RPM spec's changelog, a PKGBUILD's maintainer line, Perl's
POD and a man page's `AUTHOR` section, Sphinx's `conf.py`, `.mailmap`, `git config user.name`, a
Dockerfile's `LABEL maintainer`, `TODO(name)`; and look-alikes (organisations, teams and
projects named where a person could be). Names are this module's own.

Scored blind, before anything was changed for them (3 rounds): PERSON 80 of 87 (0.920), no
false finding. Missed: R's `person("Given", "Family")`, a `name` in `pyproject.toml`'s
`maintainers` (a generic key, with no contact beside it), Javadoc's `@author` before a name in
no list; over 10 rounds also a string in `package.json`'s `contributors`, a copyright line's
holder before `and contributors`, `TODO(name)`. Then each form got its rule (names/authorship.py
`AT_AUTHOR`, `R_PERSON`, `COPYRIGHT`, `TODO_OWNER`, `PEOPLE_LIST`; names/labels.py `_in_people_array`): 87
of 87, 290 of 290 over 10 rounds, no false finding.

    python -m benchmarks.privacy.later_code_people [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.privacy.later_people import Item, collector, set_main

FORMS: list[Callable[[], Item]] = []
R = random.Random(0)  # reseeded per round (`score`)

FIRST = [
    "Aurelio",
    "Signe",
    "Babajide",
    "Henrike",
    "Tomasz",
    "Mireille",
    "Kwabena",
    "Ilse",
    "Radomir",
    "Saoirse",
    "Haruto",
    "Wilhelmina",
    "Dmitri",
    "Anouk",
    "Cosmin",
    "Priyanka",
    "Eero",
    "Gwendolyn",
    "Nkechi",
    "Lorcan",
]
LAST = [
    "Vasconcelos",
    "Lindqvist",
    "Adeyemi",
    "Brandauer",
    "Wiśniewski",
    "Charbonneau",
    "Asante",
    "Dekker",
    "Petrović",
    "Ní Bhriain",
    "Takahashi",
    "Van der Berg",
    "Sokolov",
    "Jansen",
    "Popescu",
    "Raghunathan",
    "Koskinen",
    "Pryce",
    "Okonkwo",
    "Mulcahy",
]

form = collector(FORMS)


def full() -> tuple[str, str, str]:
    first, last = R.choice(FIRST), R.choice(LAST)
    return f"{first} {last}", first, last


def mail(first: str, last: str) -> str:
    return f"{first.lower()}.{last.lower().replace(' ', '')}@example.org"


def people(*names: str) -> list[tuple[str, str]]:
    return [("PERSON", name) for name in names]


@form
def licence_mit() -> Item:
    name, _f, _l = full()
    text = f"MIT License\n\nCopyright (c) 2021-2024 {name}\n\nPermission is hereby granted, free of charge, ..."
    return text, people(name)


@form
def source_header() -> Item:
    name, _f, _l = full()
    text = f"// Copyright 2023 {name}. All rights reserved.\n// Use of this source code is governed by a BSD-style\n"
    return text, people(name)


@form
def python_dunder() -> Item:
    name, first, last = full()
    text = f'"""Retry helpers."""\n\n__author__ = "{name}"\n__email__ = "{mail(first, last)}"\n__version__ = "0.4.1"\n'
    return text, people(name)


@form
def javadoc() -> Item:
    name, _f, _l = full()
    other, _f2, _l2 = full()
    text = (
        "/**\n * Parses the ledger's CSV exports.\n *\n"
        f" * @author {name}\n * @author {other}\n * @since 2.1\n */\npublic final class LedgerParser {{\n"
    )
    return text, people(name, other)


@form
def package_json() -> Item:
    name, first, last = full()
    other, _f, _l = full()
    text = (
        '{\n  "name": "ledger-tools",\n  "version": "1.3.0",\n'
        f'  "author": "{name} <{mail(first, last)}> (https://example.org)",\n'
        f'  "contributors": [\n    "{other}"\n  ],\n  "license": "MIT"\n}}\n'
    )
    return text, people(name, other)


@form
def setup_py() -> Item:
    name, first, last = full()
    text = (
        "setup(\n    name='ledger-tools',\n    version='1.3.0',\n"
        f"    author='{name}',\n    author_email='{mail(first, last)}',\n    packages=find_packages(),\n)\n"
    )
    return text, people(name)


@form
def pyproject() -> Item:
    name, first, last = full()
    other, _f, _l = full()
    text = (
        '[project]\nname = "ledger-tools"\nversion = "1.3.0"\n'
        f'authors = [{{ name = "{name}", email = "{mail(first, last)}" }}]\n'
        f'maintainers = [{{ name = "{other}" }}]\n'
    )
    return text, people(name, other)


@form
def cargo() -> Item:
    name, first, last = full()
    text = (
        f'[package]\nname = "ledger"\nversion = "0.3.0"\nauthors = ["{name} <{mail(first, last)}>"]\nedition = "2021"\n'
    )
    return text, people(name)


@form
def gemspec() -> Item:
    name, _f, _l = full()
    other, _f2, _l2 = full()
    text = (
        'Gem::Specification.new do |spec|\n  spec.name    = "ledger"\n'
        f'  spec.authors = ["{name}", "{other}"]\n  spec.summary = "Ledger tools"\nend\n'
    )
    return text, people(name, other)


@form
def composer() -> Item:
    name, _f, _l = full()
    text = (
        '{\n    "name": "acme/ledger",\n    "authors": [\n'
        f'        {{\n            "name": "{name}",\n            "role": "Developer"\n        }}\n    ]\n}}\n'
    )
    return text, people(name)


@form
def r_description() -> Item:
    _name, first, last = full()
    text = (
        "Package: ledgr\nVersion: 0.2.0\n"
        f'Authors@R: person("{first}", "{last}", email = "{mail(first, last)}", role = c("aut", "cre"))\n'
        "License: GPL-3\n"
    )
    return text, people(first, last)


@form
def helm_chart() -> Item:
    name, first, last = full()
    text = (
        "apiVersion: v2\nname: ledger\nversion: 0.4.2\nmaintainers:\n"
        f"  - name: {name}\n    email: {mail(first, last)}\n  - name: platform-team\n"
    )
    return text, people(name)


@form
def debian_control() -> Item:
    name, first, last = full()
    other, f2, l2 = full()
    text = (
        "Source: ledger\nSection: utils\nPriority: optional\n"
        f"Maintainer: {name} <{mail(first, last)}>\nUploaders: {other} <{mail(f2, l2)}>\n"
        "Build-Depends: debhelper-compat (= 13)\n"
    )
    return text, people(name, other)


@form
def rpm_changelog() -> Item:
    name, first, last = full()
    text = f"%changelog\n* Mon Mar 02 2026 {name} <{mail(first, last)}> - 1.3.0-1\n- New upstream release\n"
    return text, people(name)


@form
def pkgbuild() -> Item:
    name, first, _last = full()
    text = (
        f"# Maintainer: {name} <{first.lower()} at example dot org>\n"
        "pkgname=ledger\npkgver=1.3.0\npkgrel=1\narch=('x86_64')\n"
    )
    return text, people(name)


@form
def perl_pod() -> Item:
    name, _f, _l = full()
    text = f"=head1 NAME\n\nLedger::Parse - read ledger exports\n\n=head1 AUTHOR\n\n{name}\n\n=cut\n"
    return text, people(name)


@form
def man_page() -> Item:
    name, _f, _l = full()
    text = f'.TH LEDGER 1\n.SH NAME\nledger \\- read exports\n.SH AUTHOR\nWritten by {name}.\n.SH "SEE ALSO"\n'
    return text, people(name)


@form
def sphinx_conf() -> Item:
    name, _f, _l = full()
    text = f"project = 'ledger'\ncopyright = '2024, {name}'\nauthor = '{name}'\nrelease = '1.3.0'\n"
    return text, people(name)


@form
def mailmap() -> Item:
    name, first, last = full()
    text = f"{name} <{mail(first, last)}> <{first.lower()}@old-laptop.local>\n"
    return text, people(name)


@form
def git_config() -> Item:
    name, first, last = full()
    text = (
        f'$ git config --global user.name "{name}"\n$ git config --global user.email {mail(first, last)}\n'
        "$ git config --list\n"
        f"user.name={name}\nuser.email={mail(first, last)}\ncore.editor=vim\n"
    )
    return text, people(name)


@form
def dockerfile_label() -> Item:
    name, first, last = full()
    text = f'FROM python:3.12-slim\nLABEL maintainer="{name} <{mail(first, last)}>"\nWORKDIR /app\n'
    return text, people(name)


@form
def todo_comment() -> Item:
    _name, first, _last = full()
    text = f"def settle(batch):\n    # TODO({first}): retry once the ledger lock is released\n    return batch\n"
    return text, people(first)


@form
def copyright_and_contributors() -> Item:
    name, _f, _l = full()
    text = f"# SPDX-License-Identifier: Apache-2.0\n# Copyright (C) 2019 {name} and contributors\n"
    return text, people(name)


@form
def look_alikes() -> Item:
    text = (
        "// Copyright 2024 The Ledger Authors. All rights reserved.\n"
        "# Copyright (c) Acme Corporation\n"
        '__author__ = "Platform Team"\n'
        '"author": "OpenJS Foundation",\n'
        "Maintainer: Debian Python Team <team+python@tracker.debian.org>\n"
        "maintainers:\n  - name: sre-oncall\n"
        "# TODO(perf): batch the writes\n"
    )
    return text, []


def main(argv: list[str] | None = None) -> None:
    set_main(FORMS, R, __doc__ or "", argv)


if __name__ == "__main__":
    main()
