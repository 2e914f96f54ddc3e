"""Train and evaluate the prose name model (router/privacy/names_model.py) on the GUM corpus.

    python -m benchmarks.privacy.names_model train --gum DIR [--out router/privacy/data/names_model.json]
    python -m benchmarks.privacy.names_model evaluate --gum DIR [--json FILE]

DIR: a checkout of github.com/amir-zeldes/gum, or its bare git directory (the `fetch` mirror);
`--commit` picks the revision (default HEAD). Only the genres whose texts are under attribution
licences are read (GENRES: academic and court, CC BY 4.0; Wikinews news and interviews, CC BY
2.5; GUM's annotations are CC BY 4.0). A name label is a proper noun (UPOS PROPN) whose innermost
entity mention is a person, titles (`Mr.`, `President`) aside; neighbouring labelled words make
one name. Whole documents are held out (one in four, by a hash of the document's name): the
model, its regularisation and its threshold are fitted on the rest only.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GENRES = ("academic", "court", "news", "interview")
LICENCES = {"academic": "CC BY 4.0", "court": "CC BY 4.0", "news": "CC BY 2.5", "interview": "CC BY 2.5"}
# Words GUM tags as proper nouns inside a person's mention that are titles, not names.
TITLES = frozenset(
    re.findall(
        r"\S+",
        "mr mr. mrs mrs. ms ms. dr dr. prof prof. professor president senator governor judge justice king queen"
        " prince princess sir lord lady saint st st. rev rev. reverend pope general gen. captain sergeant officer"
        " mayor chancellor minister premier secretary ambassador rep. representative congressman congresswoman"
        " chairman ceo coach detective agent uncle aunt dame father brother sister mother doctor wikinews esq miss madam madame monsieur mademoiselle colonel lieutenant major admiral",
    )
)
OUT = Path(__file__).resolve().parents[2] / "router" / "privacy" / "data" / "names_model.json"


@dataclass
class Doc:
    name: str
    genre: str
    text: str = ""
    names: list[tuple[int, int]] = field(default_factory=list)


def _files(source: Path, commit: str) -> list[tuple[str, str]]:
    """(file name, text) of the permitted genres' dep/*.conllu files."""
    wanted = re.compile(rf"GUM_(?:{'|'.join(GENRES)})_\w+\.conllu")
    if (source / "dep").is_dir():
        return [
            (p.name, p.read_text(encoding="utf-8"))
            for p in sorted((source / "dep").iterdir())
            if wanted.fullmatch(p.name)
        ]
    git = ["git", f"--git-dir={source}"]
    listing = subprocess.run(
        [*git, "ls-tree", "--name-only", commit, "dep/"], capture_output=True, text=True, check=True
    )
    out = []
    for path in listing.stdout.split():
        name = path.rsplit("/", 1)[-1]
        if wanted.fullmatch(name):
            shown = subprocess.run([*git, "show", f"{commit}:{path}"], capture_output=True, text=True, check=True)
            out.append((name, shown.stdout))
    return out


def read(source: Path, commit: str = "HEAD") -> list[Doc]:
    """The documents' text (tokens joined as written) and their names' character spans."""
    docs = []
    for file_name, conllu in _files(source, commit):
        doc = Doc(file_name.removesuffix(".conllu"), file_name.split("_")[1])
        parts: list[str] = []
        length = 0
        stack: list[tuple[str, str]] = []
        current: tuple[int, int] | None = None
        skip_until = 0
        for line in conllu.splitlines():
            if line.startswith("# newpar") and parts:
                parts.append("\n\n")
                length += 2
            if not line or line.startswith("#"):
                if not line and parts and not parts[-1].endswith(("\n", " ")):
                    parts.append(" ")
                    length += 1
                continue
            cols = line.split("\t")
            misc = dict(m.split("=", 1) for m in cols[9].split("|") if "=" in m)
            entity = misc.get("Entity", "")
            stack.extend(re.findall(r"\((\d+)-([a-z]+)", entity))
            if "-" in cols[0]:  # a multi-word token: its surface form, its words' lines skipped
                last = cols[0].split("-")[1]
                skip_until = int(last)
                form, upos = cols[1], "MWT"
            elif "." in cols[0]:
                continue
            elif int(cols[0]) <= skip_until:
                form, upos = "", "SKIP"
            else:
                form, upos = cols[1], cols[3]
            is_name = (
                upos == "PROPN"
                and bool(stack)
                and stack[-1][1] == "person"
                and form[:1].isupper()
                and form.lower() not in TITLES
            )
            if form:
                start = length
                parts.append(form)
                length += len(form)
                if is_name:
                    current = (
                        (current[0], length) if current is not None and current[1] >= start - 1 else (start, length)
                    )
                    if doc.names and doc.names[-1][0] == current[0]:
                        doc.names[-1] = current
                    else:
                        doc.names.append(current)
                if misc.get("SpaceAfter") != "No" and upos != "SKIP":
                    parts.append(" ")
                    length += 1
            for closed in re.findall(r"(\d+)\)", entity):
                for index in range(len(stack) - 1, -1, -1):
                    if stack[index][0] == closed:
                        del stack[index]
                        break
        doc.text = "".join(parts)
        docs.append(doc)
    return docs


# Other public corpora with person labels under CC BY 4.0, in CoNLL columns (token, tag): the
# Broad Twitter Corpus (github.com/GateNLP/broad_twitter_corpus) and WNUT 2017 emerging
# entities (github.com/leondz/emerging_entities_17). Each tweet or post is one document.
CONLL = {
    "btc": ("a.conll", "b.conll", "e.conll", "f.conll", "g.conll", "h.conll"),
    "wnut17": ("emerging.dev.conll", "emerging.test.annotated"),
}


def _git_show(source: Path, commit: str, path: str) -> str:
    if (source / path).is_file():
        return (source / path).read_text(encoding="utf-8")
    git = ["git", f"--git-dir={source}", "show", f"{commit}:{path}"]
    return subprocess.run(git, capture_output=True, text=True, check=True).stdout


def read_conll(corpus: str, source: Path, commit: str = "HEAD") -> list[Doc]:
    """Tweets and posts as documents: tokens joined by spaces, person tags as name spans."""
    docs = []
    for file_name in CONLL[corpus]:
        tokens: list[tuple[str, str]] = []
        lines = [*_git_show(source, commit, file_name).splitlines(), ""]
        for line in lines:
            cols = line.split()
            if len(cols) >= 2:
                tokens.append((cols[0], cols[-1]))
                continue
            if not tokens:
                continue
            doc = Doc(f"{corpus}:{file_name}:{len(docs)}", corpus)
            parts: list[str] = []
            length = 0
            for form, tag in tokens:
                start = length
                parts.append(form + " ")
                length += len(form) + 1
                if tag.endswith(("-PER", "-person")):
                    if tag.startswith("I-") and doc.names and doc.names[-1][1] == start - 1:
                        doc.names[-1] = (doc.names[-1][0], start + len(form))
                    else:
                        doc.names.append((start, start + len(form)))
            doc.text = "".join(parts)
            docs.append(doc)
            tokens = []
    return docs


def read_litbank(source: Path, commit: str = "HEAD") -> list[Doc]:
    """LitBank (github.com/dbamman/litbank, CC BY 4.0): the first ~2,000 words of 100 public
    domain novels, with entity mentions (brat files). A name label is a capitalised word inside
    a person's mention and in no other kind of mention within it (`South Park` in `James
    Stevenson, Esq. of South Park`), not a title, and not a word the book also writes in lower
    case (`His wife`)."""
    folder = "entities/brat"
    if (source / folder).is_dir():
        files = sorted(p.name for p in (source / folder).iterdir())
    else:
        git = ["git", f"--git-dir={source}", "ls-tree", "--name-only", commit, f"{folder}/"]
        files = [
            p.rsplit("/", 1)[-1] for p in subprocess.run(git, capture_output=True, text=True, check=True).stdout.split()
        ]
    docs = []
    for name in files:
        if not name.endswith(".ann"):
            continue
        text = _git_show(source, commit, f"{folder}/{name[:-4]}.txt")
        mentions = []
        for line in _git_show(source, commit, f"{folder}/{name}").splitlines():
            cols = line.split("\t")
            if len(cols) >= 2 and cols[0].startswith("T"):
                kind, start, end = cols[1].split()[:3]
                mentions.append((kind, int(start), int(end)))
        lower = collections.Counter(re.findall(r"(?<![\w'])[a-z]+(?![\w'])", text))
        doc = Doc(f"litbank:{name[:-4]}", "litbank", text)
        for match in re.finditer(r"[A-Z][\w'-]*\.?", text):
            start, end = match.span()
            word = match.group().rstrip(".")
            end = start + len(word)
            covering = [m for m in mentions if m[1] <= start and end <= m[2]]
            if not covering:
                continue
            innermost = min(covering, key=lambda m: m[2] - m[1])
            if innermost[0] != "PER" or word.lower() in TITLES or lower[word.lower()] > 0:
                continue
            if doc.names and text[doc.names[-1][1] : start].strip() == "":
                doc.names[-1] = (doc.names[-1][0], end)
            else:
                doc.names.append((start, end))
        docs.append(doc)
    return docs


# Universal NER's English Web Treebank (github.com/UniversalNER/UNER_English-EWT, CC BY-SA 4.0):
# questions and answers, e-mails, newsgroups, reviews and blogs, the kind of text users write.
# Its files hold tokens only (`do n't`, `Arafat 's`): each sentence is read as written from the
# treebank it labels (github.com/UniversalDependencies/UD_English-EWT, CC BY-SA 4.0, at the
# commit UNER names), its paragraphs a line each. Each `# newdoc` is a document; a `PER` span is a
# name. The test file is scored only: never trained on, never read to write a rule.
UNER_FILES = {"dev": "en_ewt-ud-dev.iob2", "test": "en_ewt-ud-test.iob2"}
UD_EWT_COMMIT = "c491d62a7a0447946ac85b11308083ea61328ece"


def _ud_sentences(source: Path, part: str) -> dict[str, tuple[str, bool]]:
    """sent_id -> (the sentence as written, whether it opens a paragraph)."""
    out: dict[str, tuple[str, bool]] = {}
    sent_id, opens = "", False
    for line in _git_show(source, UD_EWT_COMMIT, f"en_ewt-ud-{part}.conllu").splitlines():
        if line.startswith("# sent_id = "):
            sent_id, opens = line.removeprefix("# sent_id = "), False
        elif line.startswith("# newpar"):
            opens = True
        elif line.startswith("# text = "):
            out[sent_id] = (line.removeprefix("# text = "), opens)
    return out


def read_uner(source: Path, ud: Path, part: str, commit: str = "HEAD") -> list[Doc]:
    sentences = _ud_sentences(ud, part)
    docs: list[Doc] = []
    doc: Doc | None = None
    cursor = 0
    for line in _git_show(source, commit, UNER_FILES[part]).splitlines():
        if line.startswith("# newdoc id = "):
            doc = Doc(f"uner-{part}:{line.removeprefix('# newdoc id = ')}", f"uner-{part}")
            docs.append(doc)
        elif line.startswith("# sent_id = ") and doc is not None:
            sentence, opens = sentences[line.removeprefix("# sent_id = ")]
            if doc.text:
                doc.text += "\n" if opens else " "
            cursor = len(doc.text)
            doc.text += sentence
        elif line and not line.startswith("#") and doc is not None:
            cols = line.split("\t")
            form, tag = cols[1], cols[2]
            found = doc.text.find(form, cursor)
            if found < 0:  # a token the sentence writes otherwise: its place unknown
                continue
            start, cursor = found, found + len(form)
            if tag.endswith("-PER"):
                if tag.startswith("I-") and doc.names and doc.text[doc.names[-1][1] : start].strip() == "":
                    doc.names[-1] = (doc.names[-1][0], cursor)
                else:
                    doc.names.append((start, cursor))
    return docs


def held_out(doc: Doc) -> bool:
    if doc.genre.startswith("uner-"):
        return doc.genre == "uner-test"
    return int(hashlib.sha1(doc.name.encode()).hexdigest(), 16) % 4 == 0


def examples(
    docs: list[Doc], words: frozenset[str]
) -> tuple[list[list[str]], list[int], list[int], list[tuple[int, int]]]:
    """Features and labels of every candidate word, its document's index (for grouped CV) and
    its span."""
    from router.privacy import names_model

    rows, labels, groups, spans = [], [], [], []
    for index, doc in enumerate(docs):
        found = list(names_model.candidates(doc.text, words))
        cued = names_model.cues(doc.text, found, [names_model.near(doc.text, s, e) for s, e in found])
        for start, end in found:
            rows.append(names_model.features(doc.text, start, end, words, cued))
            labels.append(int(any(s <= start and end <= e for s, e in doc.names)))
            groups.append(index)
            spans.append((start, end))
    return rows, labels, groups, spans


def _thresholds(
    docs: list[Doc], groups: list[int], spans: list[tuple[int, int]], predicted: Any
) -> tuple[float, float]:
    """The thresholds (one word, a run of words) with the most names found in the prose of the
    training documents (GUM, LitBank), from cross-validated probabilities, at a precision of at
    least 0.92 there (tweets train the model but do not set its thresholds: their capitals are
    no guide)."""
    from router.privacy import names_model

    by_doc: dict[int, list[tuple[int, int, float]]] = collections.defaultdict(list)
    for group, (start, end), p in zip(groups, spans, predicted, strict=True):
        by_doc[group].append((start, end, float(p)))
    best = (0, 0.9, 0.9)
    for single in [x / 100 for x in range(50, 100, 3)]:
        for several in [x / 100 for x in range(30, 100, 5)]:
            tp = fp = 0
            for index, scored in by_doc.items():
                doc = docs[index]
                if doc.genre not in (*GENRES, "litbank"):
                    continue
                found = list(names_model.runs(doc.text, scored, single, several))
                found_tp, found_fp, _fn = _spans_score(found, doc.names)
                tp += found_tp
                fp += found_fp
            if tp / max(1, tp + fp) >= 0.92 and tp > best[0]:
                best = (tp, single, several)
    print(
        f"  thresholds: one word {best[1]}, a run {best[2]} ({best[0]} names found in cross-validation)",
        file=sys.stderr,
    )
    return best[1], best[2]


def lexicon(docs: list[Doc]) -> list[str]:
    """Everyday words: written in lower case at least twice in the prose of the training
    documents (GUM, LitBank; tweets write names in lower case too)."""
    prose = [doc for doc in docs if doc.genre in (*GENRES, "litbank")]
    counts = collections.Counter(w for doc in prose for w in re.findall(r"(?<![\w'])[a-z]{2,}(?![\w'])", doc.text))
    return sorted(w for w, n in counts.items() if n >= 2)


def train(docs: list[Doc], out: Path, source: str) -> dict[str, Any]:
    import numpy as np
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    from router.privacy import names_model

    training = [d for d in docs if not held_out(d)]
    words = lexicon(training)
    rows, labels, groups, spans = examples(training, frozenset(words))
    counts = collections.Counter(f for row in rows for f in set(row))
    kept = [[f for f in row if counts[f] >= 2] for row in rows]
    vectoriser = DictVectorizer()
    x = vectoriser.fit_transform([dict.fromkeys(row, 1.0) for row in kept])
    y = np.array(labels)
    best: tuple[float, float, np.ndarray] | None = None
    for c in (0.1, 0.3, 1.0, 3.0):
        predicted = np.zeros(len(y))
        for fit, test in GroupKFold(n_splits=5).split(x, y, groups):
            clf = LogisticRegression(C=c, max_iter=2000).fit(x[fit], y[fit])
            predicted[test] = clf.predict_proba(x[test])[:, 1]
        from sklearn.metrics import average_precision_score

        ap = float(average_precision_score(y, predicted))
        print(f"  C={c}: cross-validated average precision {ap:.3f}", file=sys.stderr)
        if best is None or ap > best[0]:
            best = (ap, c, predicted)
    assert best is not None
    _ap, c, predicted = best
    threshold, threshold_run = _thresholds(training, groups, spans, predicted)
    clf = LogisticRegression(C=c, max_iter=2000).fit(x, y)
    weights = {name: round(float(w), 4) for name, w in zip(vectoriser.feature_names_, clf.coef_[0], strict=True)}
    weights = {k: v for k, v in weights.items() if abs(v) >= 0.01}
    weights["bias"] = round(weights.get("bias", 0.0) + float(clf.intercept_[0]), 4)
    model = {
        "about": (
            "Tandem's prose name model (router/privacy/names_model.py): logistic regression weights by feature; "
            f"trained by `python -m benchmarks.privacy.names_model train` on {source} (data/SOURCES.md)"
        ),
        "C": c,
        "threshold": threshold,
        "threshold_run": threshold_run,
        "weights": dict(sorted(weights.items())),
        "lexicon": words,
    }
    out.write_text(json.dumps(model, indent=0, ensure_ascii=False, sort_keys=False) + "\n")
    names_model.model.cache_clear()
    print(
        f"trained on {len(training)} documents, {len(y)} candidate words ({int(y.sum())} names); C={c}, "
        f"thresholds {threshold} (a word), {threshold_run} (a run); {len(weights)} weights, {len(words)} lexicon words -> {out}",
        file=sys.stderr,
    )
    return model


def _spans_score(found: list[tuple[int, int]], truth: list[tuple[int, int]]) -> tuple[int, int, int]:
    """(TP, FP, FN): a name is found when one finding covers it; a finding is false when it
    overlaps no name."""
    tp = sum(any(s <= start and end <= e for s, e in found) for start, end in truth)
    fp = sum(not any(s < end and start < e for s, e in truth) for start, end in found)
    return tp, fp, len(truth) - tp


def evaluate(docs: list[Doc]) -> dict[str, tuple[int, int, int]]:
    from router.privacy import names_model
    from router.privacy.names import person

    test = [d for d in docs if held_out(d)]
    totals: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for doc in test:
        rules = [(f.start, f.end) for f in person.find_rules(doc.text)]
        model = list(names_model.find(doc.text))
        both = [(f.start, f.end) for f in person.find(doc.text)]
        corpus = "GUM" if doc.genre in GENRES else doc.genre.upper()
        for label, found in (("rules", rules), ("model alone", model), ("rules and model", both)):
            for i, n in enumerate(_spans_score(found, doc.names)):
                totals[f"{corpus}, {label}"][i] += n
    return {k: (v[0], v[1], v[2]) for k, v in totals.items()}


def cost(test: list[Doc], logs: Path | None, rounds: int) -> None:
    """CPU time of the name finder with and without the model, side by side in one process
    (rounds interleaved): real text (benchmarks.privacy.people's), the agent forms, and prose
    (the held-out documents)."""
    import statistics

    from benchmarks.privacy.people import real_text
    from benchmarks.privacy.people_forms import items
    from router.privacy.names import person

    texts = {
        "real text": [text for _source, text in real_text(logs)],
        "agent forms": ["\n".join(item.text for item in items(700, seed=1, part=1))],
        "prose (held-out documents)": [doc.text for doc in test],
    }
    finders = {"rules (before)": person.find_rules, "rules and model": person.find}
    person.find(texts["prose (held-out documents)"][0])  # load the model and the lists
    times: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    for round_ in range(rounds):
        for label, parts in texts.items():
            order = list(finders.items()) if round_ % 2 == 0 else list(reversed(finders.items()))
            for finder_label, finder in order:
                started = time.process_time()
                for text in parts:
                    finder(text)
                times[(label, finder_label)].append(time.process_time() - started)
    print(f"cost of the name finder (CPU time, {rounds} rounds interleaved; median, best)")
    for label, parts in texts.items():
        size = sum(len(t.encode()) for t in parts)
        for finder_label in finders:
            runs = times[(label, finder_label)]
            per_kb = [t * 1e6 / (size / 1024) for t in runs]
            print(
                f"  {label:28} {finder_label:16} {statistics.median(per_kb):8.1f} µs per KB (best {min(per_kb):.1f});"
                f" {size / (1 << 20):.2f} MiB"
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("train", "evaluate", "cost"))
    parser.add_argument("--gum", type=Path, required=True)
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument(
        "--btc", type=Path, help="the Broad Twitter Corpus (checkout or git directory), also trained on"
    )
    parser.add_argument("--wnut17", type=Path, help="WNUT 2017 emerging entities (checkout or git directory)")
    parser.add_argument("--litbank", type=Path, help="LitBank (checkout or git directory)")
    parser.add_argument(
        "--uner",
        type=Path,
        help="Universal NER's English-EWT (checkout or git directory): its dev file trained on, its test file held out",
    )
    parser.add_argument(
        "--ud-ewt", type=Path, help="UD English-EWT (checkout or git directory), the text --uner labels"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--logs", type=Path, help="for `cost`: public logs as in benchmarks.privacy.people")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    docs = read(args.gum, args.commit)
    for corpus in ("btc", "wnut17"):
        if getattr(args, corpus) is not None:
            docs.extend(read_conll(corpus, getattr(args, corpus)))
    if args.litbank is not None:
        docs.extend(read_litbank(args.litbank))
    if args.uner is not None:
        if args.ud_ewt is None:
            parser.error("--uner needs --ud-ewt: the sentences as written")
        docs.extend(read_uner(args.uner, args.ud_ewt, "dev") + read_uner(args.uner, args.ud_ewt, "test"))
    test = [d for d in docs if held_out(d)]
    print(
        f"GUM ({', '.join(f'{g}: {LICENCES[g]}' for g in GENRES)}): {len(docs)} documents, "
        f"{sum(len(d.names) for d in docs)} names; held out {len(test)} documents, {sum(len(d.names) for d in test)} names",
        file=sys.stderr,
    )
    if args.command == "train":
        train(docs, args.out, f"GUM ({', '.join(GENRES)}), commit {args.commit}")
        return
    if args.command == "cost":
        cost(test, args.logs, args.rounds)
        return
    started = time.process_time()
    results = evaluate(docs)
    size = sum(len(d.text.encode()) for d in test)
    print(f"held-out documents ({size / 1024:.0f} KB): names found as spans")
    print(f"  {'corpus, finder':26} {'TP':>5} {'FP':>4} {'FN':>4} {'precision':>9} {'recall':>7}")
    for label, (tp, fp, fn) in results.items():
        print(f"  {label:26} {tp:5} {fp:4} {fn:4} {tp / max(1, tp + fp):9.3f} {tp / max(1, tp + fn):7.3f}")
    print(f"  ({time.process_time() - started:.1f} s CPU)")
    if args.json:
        from benchmarks.report import figure, write_result

        figures = []
        for label, (tp, fp, fn) in results.items():
            figures.append(figure(f"held-out names, {label}: precision", f"{tp / max(1, tp + fp):.3f}"))
            figures.append(figure(f"held-out names, {label}: recall", f"{tp / max(1, tp + fn):.3f}"))
        write_result(
            args.json,
            "privacy.names_model",
            "python -m benchmarks.privacy.names_model evaluate --gum DIR --litbank DIR --btc DIR --wnut17 DIR",
            figures,
        )


if __name__ == "__main__":
    main()
