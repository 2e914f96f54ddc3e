"""The scripts written without a space between a word and a number, for the detectors' boundaries.

A value's boundary (`(?<![\\w.+-])`: not inside a longer token) reads Python's `\\w`, which
matches Chinese, Japanese, Korean and Thai letters as it matches Latin ones. Those scripts write
a number right against the words around it (`我的电话号是+49 171 1234567.`, `8.8.8.8是IP地址`,
`私のIPは1.1.1.1です`, `전화번호는010-1234-5678입니다`), so a boundary that refuses a letter
beside a value refused every such value. A boundary written with `WORD` instead of `\\w` holds
next to these scripts and still refuses the letters and digits of the others (`id4155552671`,
`v1.2.3.4`, `ab4111…`).
"""

from __future__ import annotations

# Hangul Jamo; CJK symbols and punctuation, kana, Bopomofo, Hangul compatibility Jamo, enclosed
# and compatibility CJK, the CJK ideographs (and extension A); Hangul Jamo extended A; Hangul
# syllables and Jamo extended B; CJK compatibility ideographs; the full-width and half-width
# forms but their letters and digits (U+FF10–FF19, FF21–FF3A, FF41–FF5A: detect reads them as
# ASCII, one for one, and they stay part of a token); Thai's letters and marks (not its digits);
# the ideographs of the supplementary planes (extensions B to H).
CJK = (
    "\u1100-\u11ff\u3000-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff"
    "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uffef"
    "\u0e01-\u0e4f\u0e5a-\u0e7f"
    "\U00020000-\U0003ffff"
)
# A word character that joins a value to its neighbour: `\w` but these scripts.
WORD = f"[^\\W{CJK}]"
