"""What three public labelled corpora found missing or wrong (benchmarks/privacy/public_corpora.py:
Microsoft Recognizers-Text's sequence specs, DataFog's corpus, scrubadub's tests), and the other
corpora the same probe read (CoNLL-2003, piicatcher, earlybird): values and look-alikes written
here in the same forms, with values of our own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from router.privacy.detect import detect

PEOPLE = frozenset({"person"})


def _found(text: str, optional: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    return [(f.type, f.value) for f in detect(text, optional)]


# A. Chinese, Japanese, Korean and Thai write a value right against their own text.
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("我的电话号是+49 171 1234567.", "PHONE", "+49 171 1234567"),
        ("我的电话号是(541) 754-3010.", "PHONE", "(541) 754-3010"),
        ("手机：13812345678", "PHONE", "13812345678"),  # a full-width colon, read as ASCII
        ("电话:+86 138 1234 5678，谢谢", "PHONE", "+86 138 1234 5678"),
        ("联系电话13812345678请回电", "PHONE", "13812345678"),
        ("私の電話番号は03-1234-5678です", "PHONE", "03-1234-5678"),
        ("전화번호는010-1234-5678입니다", "PHONE", "010-1234-5678"),
        ("我的电话号是12345678.", "PHONE", "12345678"),  # "my phone number is": a field's value
        ("8.8.8.8是IP地址", "IP_ADDRESS", "8.8.8.8"),
        ("私のIPは1.1.1.1です", "IP_ADDRESS", "1.1.1.1"),
        ("我电脑的V6地址是2001:db8::1。", "IP_ADDRESS", "2001:db8::1"),
        ("卡号4111111111111111", "CARD", "4111111111111111"),
        ("社会保障号码123-45-6789号", "US_SSN", "123-45-6789"),
        ("身份证号11010519491231002X", "NATIONAL_ID", "11010519491231002X"),
        ("我的邮箱是bob.smith@example.com", "EMAIL", "bob.smith@example.com"),
        ("メールはtaro.yamada@example.jpです", "EMAIL", "taro.yamada@example.jp"),
        ("我的邮箱是jürgen@bücher.de。", "EMAIL", "jürgen@bücher.de"),
        ("jürgen@bücher.de是我的邮箱", "EMAIL", "jürgen@bücher.de"),
        ("邮箱：用户@例子.广告", "EMAIL", "用户@例子.广告"),  # a CJK local part stays whole
        ("Office:(516)733-3989", "PHONE", "(516)733-3989"),
        ("Tel.:+44 20 7946 0958", "PHONE", "+44 20 7946 0958"),
    ],
)
def test_values_written_against_cjk_text_are_found(text: str, kind: str, value: str) -> None:
    assert (kind, value) in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "id4155552671",  # Latin letters still join a number to a token
        "ver1.2.3.4",
        "ab4111111111111111",
        "uid:415-555-2671",  # after a colon only a phone's or a field's word names one
        "ERROR:415-555-2671 at startup",
        "订单号20231207",  # an order number
        "版本号是2.1.3，发布于2023年12月7日",
        "价格是1,250,000元",
        "请在第12345678行查看",
    ],
)
def test_look_alikes_beside_cjk_text_are_not_values(text: str) -> None:
    assert not [f for f in _found(text) if f[0] in ("PHONE", "IP_ADDRESS", "CARD", "US_SSN")]


def test_an_address_after_chinese_prose_is_the_address_alone() -> None:
    # The international e-mail rule took the sentence before it as the local part.
    assert _found("我的邮箱是bob.smith@example.com") == [("EMAIL", "bob.smith@example.com")]


# B. `line` before a phone written as North American phones are is a telephone line.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Main line 415-555-2671 is active.", "415-555-2671"),
        ("Our hot line (415) 555-2671 is open all day", "(415) 555-2671"),
        ("direct line 415.555.2671", "415.555.2671"),
    ],
)
def test_a_phone_after_line_is_found(text: str, value: str) -> None:
    assert ("PHONE", value) in _found(text)


@pytest.mark.parametrize("text", ["error at line 1234 5678; see line 120 450 789", "line 4155552671 of the log"])
def test_a_line_number_is_no_phone(text: str) -> None:
    assert not [f for f in _found(text) if f[0] == "PHONE"]


# C. `aws configure` asks for the key in words, the value it holds in brackets.
_SECRET = "Qm7xL9vR2pT8wZ4kN6bH1cF3jD5sA0gE8yU2iO7t"


@pytest.mark.parametrize(
    "text",
    [
        "$ aws configure\nAWS Access Key ID [None]: AKIA2OGYBAH6TQ3K7ZQX\n"
        f"AWS Secret Access Key [None]: {_SECRET}\nDefault region name [None]: us-east-1\n"
        "Default output format [None]: json\n",
        "AWS Access Key ID [****************7ZQX]: \n"
        f"AWS Secret Access Key [****************iO7t]: {_SECRET}\nDefault region name [us-east-1]: \n",
        f"aws_secret_access_key [None]: {_SECRET}",
    ],
)
def test_aws_configure_prompts_give_the_secret(text: str) -> None:
    found = _found(text)
    assert ("CLOUD_KEY", _SECRET) in found
    assert not [value for _kind, value in found if "us-east-1" in value or value == "json"]
    if "AKIA2OGYBAH6TQ3K7ZQX" in text:
        assert ("CLOUD_KEY", "AKIA2OGYBAH6TQ3K7ZQX") in found


def test_the_secret_access_key_in_prose_is_no_value() -> None:
    assert not _found("The secret access key is shown once, when the key is created [see docs].")


# D. The short name columns of exports and schemas (person is opt-in).
@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("id,lname,fname,email\n1,Okonkwo,Chidera,c@x.io\n", ["Okonkwo", "Chidera"]),
        ("id,l_name,f_name,m_name\n7,Haverkamp,Wendelin,J\n", ["Haverkamp", "Wendelin"]),
        ("first,last,email\nRadka,Holubová,r@x.io\n", ["Radka", "Holubová"]),
        ("| Last | First | Phone |\n|---|---|---|\n| Quispe | Noor | 555-0100 |\n", ["Quispe", "Noor"]),
        ('{"fname": "Priya", "lname": "Oakenshield"}', ["Priya", "Oakenshield"]),
    ],
)
def test_short_name_columns_hold_people(text: str, names: list[str]) -> None:
    found = [value for kind, value in _found(text, PEOPLE) if kind == "PERSON"]
    assert all(name in found for name in names), found


@pytest.mark.parametrize(
    "text",
    [
        "id,first,value\n1,Monday,3\n",  # `first` alone names no person
        "first,last,count\nAlpha,Omega,3\n",  # a pair without a contact column: listed names only
        "first: Install the package\nlast: Restart the service\n",
    ],
)
def test_first_and_last_alone_are_no_name_columns(text: str) -> None:
    assert not [f for f in _found(text, PEOPLE) if f[0] == "PERSON"]


# F. A labelled SSN written with spaces or dots.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("SSN: 109 99 6000", "109 99 6000"),
        ("My social security number is 109.99.6000", "109.99.6000"),
        ("My social security number is 109 99 6000", "109 99 6000"),
        ("ssn=219.09.9991", "219.09.9991"),
    ],
)
def test_a_labelled_ssn_with_spaces_or_dots_is_found(text: str, value: str) -> None:
    assert ("US_SSN", value) in _found(text)


@pytest.mark.parametrize("text", ["Lot 109 99 6000 shipped", "SSN: 109.99 6000", "SSN: 000 12 3456"])
def test_spaced_nine_digits_without_a_label_or_a_valid_ssn_are_none(text: str) -> None:
    assert not [f for f in _found(text) if f[0] == "US_SSN"]


# G. German slash-style phones beside a phone word; Hindi phone words.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Tel. 030/1234567", "030/1234567"),
        ("Handy: 0176/12345678", "0176/12345678"),
        ("Mobil +49 176/12345678", "+49 176/12345678"),
        ("Meu telefone é +49 176/ 12345678.", "+49 176/ 12345678"),
        ("Telefon 0221 / 4711234, Fax 0221 / 4711235", "0221 / 4711234"),
        ("मेरा फोन नंबर 9834257234 है.", "9834257234"),
        ("मेरा फोन नंबर 26741570 है.", "26741570"),
        ("मोबाइल: +91 98342 57234", "+91 98342 57234"),
    ],
)
def test_slashed_and_hindi_labelled_phones_are_found(text: str, value: str) -> None:
    assert ("PHONE", value) in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        "see 0176/12345678 in the ledger",  # no phone word
        "phone: 12/25/2023",
        "Telefon-Rechnung 2023/12345678",
        "फोन नंबर 2024 है",
    ],
)
def test_slashes_without_a_phone_word_are_no_phones(text: str) -> None:
    assert not [f for f in _found(text) if f[0] == "PHONE"]


# I. Look-alikes the corpora flagged as phones.
@pytest.mark.parametrize(
    "text",
    [
        "Indra Wijaya ( Indonesia) beat Ong Ewe Hock ( Malaysia) 5-15 15-11 15-11",
        "Part number: 555-123-4567-A",
        "Part no. 415-555-2671",
        "Model 415-555-2671 ships in May",
        "SKU: 415-555-2671",
        "Order 415-555-2671-B2 is late",
        "Sequence 1234 5678 90 is not a card",
        "Bad SSN 123-45-67890",
    ],
)
def test_scores_part_numbers_and_digit_sequences_are_no_phones(text: str) -> None:
    assert not [f for f in _found(text) if f[0] == "PHONE"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("(37) 788-063-Office", "(37) 788-063"),  # a word after the hyphen names the phone
        ("Call me at 415-555-2671.", "415-555-2671"),
        ("Phone: 1234 5678 90", "1234 5678 90"),  # a phone field's value whatever its groups
    ],
)
def test_phones_beside_those_rules_stay(text: str, value: str) -> None:
    assert ("PHONE", value) in _found(text)


# The benchmark's readers, on files written here in the corpora's layouts.
def test_the_public_corpora_benchmark_reads_and_scores_the_three_layouts(tmp_path: Path) -> None:
    from benchmarks.privacy import public_corpora

    specs = tmp_path / "recognizers" / "Specs" / "Sequence" / "Chinese"
    specs.mkdir(parents=True)
    phones = [
        {"Input": "我的电话号是(541) 754-3010.", "Results": [{"Text": "(541) 754-3010", "TypeName": "phonenumber"}]},
        {"Input": "这不是电话号码", "Results": []},
    ]
    (specs / "PhoneNumberModel.json").write_text(json.dumps(phones, ensure_ascii=False), encoding="utf-8-sig")
    corpus = tmp_path / "datafog" / "tests" / "corpus"
    corpus.mkdir(parents=True)
    entities = [{"type": "EMAIL", "text": "ana@acme.io", "start": 5, "end": 16}]
    entities.append({"type": "PERSON", "text": "Ana", "start": 0, "end": 3})
    cases = [{"id": "a", "input": "Ana, ana@acme.io", "expected_entities": entities}]
    cases.append({"id": "b", "input": "Part number: 555-123-4567-A", "expected_entities": []})
    (corpus / "mixed.json").write_text(json.dumps(cases), encoding="utf-8")
    tests = tmp_path / "scrubadub" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_detector_ssn.py").write_text(
        'def test_ssn():\n    """\n    BEFORE: My social security number is 109 99 6000\n'
        '    AFTER:  My social security number is {{SOCIAL_SECURITY_NUMBER}}\n    """\n'
        "def test_phones(self):\n    self.check_phone_numbers('+1-312-515-2239')\n",
        encoding="utf-8",
    )
    recognizers = public_corpora.score(public_corpora.recognizers_cases(tmp_path / "recognizers"))
    assert (recognizers.found["PHONE Chinese"], recognizers.total["PHONE Chinese"]) == (1, 1)
    assert (recognizers.negatives, recognizers.flagged) == (1, 0)
    datafog = public_corpora.score(public_corpora.datafog_cases(tmp_path / "datafog"))
    assert dict(datafog.total) == {"EMAIL": 1}  # PERSON is not scored (an opt-in kind)
    assert (datafog.found["EMAIL"], datafog.negatives, datafog.flagged) == (1, 1, 0)
    cases_read, unaligned = public_corpora.scrubadub_cases(tmp_path / "scrubadub")
    scrubadub = public_corpora.score(cases_read)
    assert unaligned == 0
    assert dict(scrubadub.found) == {"US_SSN": 1, "PHONE": 1}
