"""The held-out corpus reader of Universal NER's English Web Treebank: the sentences as written
(from the treebank's own `# text` lines, paragraphs a line each), the `PER` spans on them, and
the test half kept out of every training split."""

from __future__ import annotations

from pathlib import Path

from benchmarks.privacy import names_model

UNER = """# newdoc id = email-001
# sent_id = email-001-0001
# text = Renee , I do n't know .
1	Renee	B-PER	-	-
2	,	O	-	-
3	I	O	-	-
4	do	O	-	-
5	n't	O	-	-
6	know	O	-	-
7	.	O	-	-

# sent_id = email-001-0002
# text = Ask Mary Jo 's brother .
1	Ask	O	-	-
2	Mary	B-PER	-	-
3	Jo	I-PER	-	-
4	's	O	-	-
5	brother	O	-	-
6	.	O	-	-

# newdoc id = reviews-002
# sent_id = reviews-002-0001
# text = Great place in Miramar .
1	Great	O	-	-
2	place	O	-	-
3	in	O	-	-
4	Miramar	B-LOC	-	-
5	.	O	-	-
"""

UD = """# newdoc id = email-001
# sent_id = email-001-0001
# newpar id = email-001-p0001
# text = Renee, I don't know.
1	Renee	Renee	PROPN	_	_	0	root	_	_

# sent_id = email-001-0002
# newpar id = email-001-p0002
# text = Ask Mary Jo's brother.
1	Ask	ask	VERB	_	_	0	root	_	_

# newdoc id = reviews-002
# sent_id = reviews-002-0001
# newpar id = reviews-002-p0001
# text = Great place in Miramar.
1	Great	great	ADJ	_	_	0	root	_	_
"""


def test_sentences_are_read_as_written_with_their_names(tmp_path: Path) -> None:
    uner, ud = tmp_path / "uner", tmp_path / "ud"
    uner.mkdir()
    ud.mkdir()
    (uner / "en_ewt-ud-test.iob2").write_text(UNER, encoding="utf-8")
    (ud / "en_ewt-ud-test.conllu").write_text(UD, encoding="utf-8")
    docs = names_model.read_uner(uner, ud, "test")
    assert [d.name for d in docs] == ["uner-test:email-001", "uner-test:reviews-002"]
    mail = docs[0]
    assert mail.text == "Renee, I don't know.\nAsk Mary Jo's brother."
    assert [mail.text[s:e] for s, e in mail.names] == ["Renee", "Mary Jo"]
    assert docs[1].names == []
    assert all(names_model.held_out(d) for d in docs)


def test_the_development_half_is_never_held_out_and_the_test_half_always_is() -> None:
    dev = names_model.Doc("uner-dev:x", "uner-dev")
    test = names_model.Doc("uner-test:x", "uner-test")
    assert not names_model.held_out(dev)
    assert names_model.held_out(test)
