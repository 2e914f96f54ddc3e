"""Values in the forms a probe of agents' tool output found missed or mistaken: a tab escaped in
a tool's JSON output (a tab-separated table) glued its `t` to the next value; passwords that
begin with `.` or `+` were read as code joining strings, and one holding `%d` as a format
string's slot; port ranges and a kernel log's clock were taken for phone numbers."""

from __future__ import annotations

import orjson
import pytest

from router.privacy.detect import detect

TAB_SEPARATED = {
    "PHONE": "+39 312 825 7947",
    "CARD": "4539 1488 0343 6467",
    "US_SSN": "123-45-6789",
    "IBAN": "DE89 3704 0044 0532 0130 00",
    "IP_ADDRESS": "84.17.201.9",
    "EMAIL": "ana.silva@example.org",
}


@pytest.mark.parametrize("kind", sorted(TAB_SEPARATED))
@pytest.mark.parametrize("separator", ["\t", "\r\n", "\t\r"])
def test_a_value_in_a_tab_separated_row_of_json_output_is_found_whole(kind: str, separator: str) -> None:
    value = TAB_SEPARATED[kind]
    text = orjson.dumps({"stdout": separator.join(["1", value, "2"]) + "\n", "exit_code": 0}).decode()
    assert [(f.type, f.value) for f in detect(text)] == [(kind, value)], text


PASSWORDS = [".L26#z*_DA-RyXgH", "+L26#z*_DA-RyXgH", "+YsU4zEtDy9lbSffpmjun81Eybm6Ah6DqiPRgJhh", "p_F3%jIk%dp85"]


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize("form", ['{{"password": "{}"}}', 'PASSWORD = "{}"', "SMTP_PASS='{}'"])
def test_a_password_beginning_with_a_symbol_or_holding_a_percent_is_found(password: str, form: str) -> None:
    text = form.format(password)
    assert [f.value for f in detect(text)] == [password], text


NOT_VALUES = [
    'url = "jdbc:mysql://" + this.host + ":3306/"',
    'query = "password=" + PASSWORD + "&user="',
    "msg = '%s:%s' % (user, password)",
    'line = "%d rows" % count',
    "ephemeral ports 49152-65535 are in use",
    "--service-node-port-range 30000-32767",
    "net.ipv4.ip_local_port_range = 1024-65535",
    "kernel: [ 1234.567890] usb 1-1: new high-speed USB device number 2",
    "[  987.123456] EXT4-fs (sda1): mounted filesystem",
]


@pytest.mark.parametrize("text", NOT_VALUES)
def test_code_joining_strings_port_ranges_and_kernel_clocks_are_no_findings(text: str) -> None:
    assert detect(text) == [], text


def test_a_mobile_written_in_two_groups_of_five_is_still_a_phone() -> None:
    """Two groups of five digits are a port range only when both are ports (at most 65535)."""
    assert [f.type for f in detect("call me on 98765-43210 tomorrow")] == ["PHONE"]


KEYED_IDS = {
    '{"ni_number": "RZ192824C"}': "RZ192824C",
    '{"national_insurance_number": "RZ 19 28 24 C"}': "RZ 19 28 24 C",
    '{"tax_id": "25536451989"}': "25536451989",
    '{"steuer_id": "25536451989"}': "25536451989",
    '{"steuerliche_identifikationsnummer": "25 536 451 989"}': "25 536 451 989",
}


@pytest.mark.parametrize("text", sorted(KEYED_IDS))
def test_a_national_id_under_a_key_naming_it_in_words_joined_by_underscores_is_found(text: str) -> None:
    assert [(f.type, f.value) for f in detect(text)] == [("NATIONAL_ID", KEYED_IDS[text])], text


@pytest.mark.parametrize("text", ['{"order_id": "25536451989"}', '{"tin_foil_count": "25536451989"}'])
def test_other_keys_holding_such_numbers_are_no_findings(text: str) -> None:
    assert detect(text) == [], text


AWS_SECRET = "r0skcDdu/RzoiJrLuYNWzTyxpDP26UuqPBdgKAyT"


@pytest.mark.parametrize(
    "text",
    [
        f"CELERY_BROKER_URL=sqs://AKIAJ2Q3R4S5T6U7V8W2:{AWS_SECRET}@",  # a broker URL with no host
        f"AKIAJ2Q3R4S5T6U7V8W2:{AWS_SECRET}\n",  # s3fs's .passwd-s3fs
        f"s3://ASIAJ2Q3R4S5T6U7V8W2:{AWS_SECRET}@bucket/key",
    ],
)
def test_an_aws_secret_joined_to_its_key_id_by_a_colon_is_found(text: str) -> None:
    assert AWS_SECRET in [f.value for f in detect(text)], detect(text)


def test_the_documented_example_key_pair_is_no_secret() -> None:
    found = detect("AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    assert [f.rule for f in found] == ["aws-access-key"]
