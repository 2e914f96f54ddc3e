"""People's data in the forms agents see: names and postal addresses (opt-in per route,
`privacy_detect: [person, address]`), phones and national ids named by a table's column, and
the look-alikes that are none of them (log timestamps, versions, dashed IPs, product names)."""

from __future__ import annotations

import itertools

import httpx
import pytest

from router.metrics.route_series import SeriesScope
from router.privacy.detect import detect
from router.privacy.reported import reported_kinds
from router.settings import ConfigError
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for

PEOPLE = frozenset({"person", "address"})


def found(text: str, optional: frozenset[str] = PEOPLE) -> set[tuple[str, str]]:
    return {(f.type, f.value) for f in (detect(text, optional) if optional else detect(text))}


def test_customer_csv_export_names_and_streets() -> None:
    text = (
        "id,first_name,last_name,email,street,city\n"
        "1001,Oluwadamilola,Achterberg,o.a@example.com,14 Juniper Close,Leeds\n"
        "1002,Saoirse,Wainwright,s.w@example.com,Lindenstraße 7,Bonn\n"
    )
    assert {("PERSON", "Oluwadamilola"), ("PERSON", "Achterberg"), ("PERSON", "Saoirse")} <= found(text)
    assert {("ADDRESS", "14 Juniper Close"), ("ADDRESS", "Lindenstraße 7")} <= found(text)
    assert not {f for f in found(text) if f[1] in ("Leeds", "Bonn", "city")}  # a city alone is no address


def test_sql_insert_with_a_column_list() -> None:
    text = (
        "INSERT INTO customers (id, full_name, tel, address_line1) VALUES\n"
        "  (1, 'Radhika Bonaventura', '+44 20 7946 0958', '221B Baker Street'),\n"
        "  (2, 'Tom O''Brien', '4155552671', '12 bis rue de la Paix');\n"
    )
    assert {("PERSON", "Radhika Bonaventura"), ("PERSON", "Tom O''Brien")} <= found(text)
    assert {("ADDRESS", "221B Baker Street"), ("ADDRESS", "12 bis rue de la Paix")} <= found(text)
    # The phone column names an unseparated national number no label stands beside.
    assert ("PHONE", "4155552671") in found(text, frozenset())


def test_psql_output_under_its_rule_line() -> None:
    # psql prints a rule of dashes and `+` under the header: the rows below it are the table's
    # (read as a row, the rule ended the table, and no cell was read).
    text = (
        " id | first_name | last_name  |    phone\n"
        "----+------------+------------+-------------\n"
        "  1 | Mei        | Qureshi    | 4155552671\n"
        "  2 | Rafael     | Whitcombe  | 4155550198\n"
        "(2 rows)\n"
    )
    assert {("PERSON", "Mei"), ("PERSON", "Qureshi"), ("PERSON", "Rafael"), ("PERSON", "Whitcombe")} <= found(text)
    assert {("PHONE", "4155552671"), ("PHONE", "4155550198")} <= found(text, frozenset())
    assert not {f for f in found(text) if f[1] in ("1", "2", "(2 rows)")}


def test_a_place_field_holds_no_person() -> None:
    # `Austin` and `Madison` are given names too; under `city:` they are places.
    text = "{ _id: 7, name: 'Esther Goldberg', address: { street: '812 Elm Street', city: 'Madison' } }"
    assert ("PERSON", "Esther Goldberg") in found(text)
    assert not {f for f in found(text) if f[1] == "Madison"}
    assert not {f for f in found('{"customer": "Hannah Okafor", "city": "Austin", "state": "TX"}') if f[1] == "Austin"}


def test_support_ticket() -> None:
    text = (
        "Ticket #4821 opened by Xanthe Nakashima (xanthe@example.org).\n"
        "Customer: Miyu Cavendish\nShipping address: 1600 Pennsylvania Avenue NW, Washington, DC 20500\n"
        "Case 13026: spoke with Mr. Wadsworth about the refund.\n"
    )
    assert {("PERSON", "Xanthe Nakashima"), ("PERSON", "Miyu Cavendish"), ("PERSON", "Wadsworth")} <= found(text)
    assert ("ADDRESS", "1600 Pennsylvania Avenue NW, Washington, DC 20500") in found(text)


def test_email_headers_greeting_and_signature() -> None:
    text = (
        "From: Jens Becker <jens@example.de>\nTo: Support Team <support@example.com>\n\n"
        "Dear Ms. Okafor,\n\nplease send it to Karl-Marx-Allee 90, 10243 Berlin.\n\n"
        "Mit freundlichen Grüßen,\nDorothea Eberhardt\n"
    )
    people = {value for kind, value in found(text) if kind == "PERSON"}
    assert people == {"Jens Becker", "Okafor", "Dorothea Eberhardt"}  # not the team
    assert ("ADDRESS", "Karl-Marx-Allee 90, 10243 Berlin") in found(text)


def test_json_api_record_and_yaml_contacts() -> None:
    record = (
        '{"customer": {"first_name": "Ilse", "last_name": "Kettleborough", "phone": "+14155552671",'
        ' "address": {"street": "742 Evergreen Terrace"}}, "product": {"name": "Widget Pro"}}'
    )
    assert {("PERSON", "Ilse"), ("PERSON", "Kettleborough"), ("ADDRESS", "742 Evergreen Terrace")} <= found(record)
    assert ("PERSON", "Widget Pro") not in found(record)
    config = 'oncall:\n  - name: Yevgenia Eberhardt\n    phone: "+447911123456"\noffice:\n  address: Via Roma 10, 00184 Roma\n'
    assert {("PERSON", "Yevgenia Eberhardt"), ("ADDRESS", "Via Roma 10, 00184 Roma")} <= found(config)


def test_log_lines() -> None:
    text = (
        '2024-03-02T10:11:12Z INFO order=4821 customer="Ingeborg Cardenas" ship_to="Keizersgracht 123, 1015 CJ Amsterdam"\n'
        "[2024-03-02 10:11:12] app.INFO: user Violeta Pennington (id=42) changed address\n"
    )
    assert {("PERSON", "Ingeborg Cardenas"), ("PERSON", "Violeta Pennington")} <= found(text)
    assert ("ADDRESS", "Keizersgracht 123, 1015 CJ Amsterdam") in found(text)


def test_names_and_addresses_are_opt_in() -> None:
    text = "Customer: Miyu Cavendish\naddress: 742 Evergreen Terrace\n"
    assert found(text, frozenset()) == set()
    assert {kind for kind, _value in found(text, frozenset({"address"}))} == {"ADDRESS"}


@pytest.mark.parametrize(
    "text",
    [
        "jobs:\n  build:\n    steps:\n      - name: Check Out Code\n      - name: Run Unit Tests\n",
        '{"name": "Widget Pro", "owner": "Platform Team", "contact": "support@example.com"}',
        "| Name | Owner |\n|---|---|\n| Billing Service | Payments Team |\n",
        "The Release Manager approved Long Term Support; Grant Access to Data Readers. Mark Complete.",
        "Dear Customer,\nyour order has shipped.\n\nBest regards,\nThe Northwind Team\n",
        # what follows a weak cue (a lower-case title, a one-line sign-off, a ticket's role)
        "the query took 5 ms. Then we went on",
        "Thanks, Merged",
        "Thanks, Team",
        "Created by: github-actions[bot]",
        "Assigned to: QA Team",
        "Approved by: Release Manager",
    ],
)
def test_look_alikes_of_names_are_not_taken(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "PERSON"}


def test_a_greeting_or_a_possessive_ending_is_not_part_of_the_name() -> None:
    assert ("PERSON", "Oskar Lindqvist") in found("Reviewed: Oskar Lindqvist's patch.")
    assert ("PERSON", "Oskar Lindqvist's") not in found("Reviewed: Oskar Lindqvist's patch.")
    # Nor does a greeting before it.
    assert {f for f in found("Hi Teodora, can you rerun the job?") if f[0] == "PERSON"} == {("PERSON", "Teodora")}
    assert {f for f in found("Hey Priya, the logs are fine.") if f[0] == "PERSON"} == {("PERSON", "Priya")}
    # An apostrophe inside a name stays.
    assert ("PERSON", "Siobhan O'Connor") in found("The customer, Siobhan O'Connor, called twice.")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Contact Priya Raman at the front desk.", "Priya Raman"),
        ("Patient Maria Gonzalez, DOB 03/14/1985, was admitted.", "Maria Gonzalez"),
        ("Ask Svetlana Petrova to review PR #42.", "Svetlana Petrova"),
        # A listed name that is also an everyday word is a name's first word, not a sentence's.
        ("Rose Whitfield said she would call back about the invoice.", "Rose Whitfield"),
    ],
)
def test_a_sentence_first_word_is_not_part_of_the_name(text: str, name: str) -> None:
    """A capitalised run at a sentence's start holds its first word: an everyday word that is no
    listed name is left out of the name (the placeholder keeps it in the text)."""
    assert {f for f in found(text) if f[0] == "PERSON"} == {("PERSON", name)}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Warrane, can I please speak to your boss?", "Warrane"),
        ("Thanks for the logs. Łukasz, can you rebase onto main?", "Łukasz"),
        ("Priya Raman, could you review the patch?", "Priya Raman"),
        ("ok\nDanial, please call me back when the job ends.", "Danial"),
    ],
)
def test_a_person_addressed_at_the_head_of_a_request_is_a_name(text: str, name: str) -> None:
    assert ("PERSON", name) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "Also, can we merge this? Hello, I need help. Thanks, I will. However, we should wait.",
        "Team, please review. Folks, can someone look? Everyone, please stop the job.",
        "Kubernetes, can you believe it? Python, can it do that? Nginx, would it reload?",
        "x = foo(Bar, can) and the list Alpha, Beta, we saw",  # not the head of a sentence
        "Will, can you",  # a listed name that is also an everyday word: not at a sentence's head
    ],
)
def test_an_everyday_word_or_software_before_a_request_is_no_name(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "PERSON"}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I'd like to join accounts with ms. Marcela", "Marcela"),  # a title typed in lower case
        ("Thanks, Oluwaseun", "Oluwaseun"),  # a sign-off on the name's line
        ("Great work on the fix.\nThanks, Katrine Holm\n", "Katrine Holm"),
        ("Status: open\nAssigned to: Dmitri\nPriority: P2", "Dmitri"),  # a ticket's people
        ("Reviewed by: Ana Lima", "Ana Lima"),
    ],
)
def test_a_name_after_a_title_a_sign_off_or_a_ticket_role(text: str, name: str) -> None:
    assert ("PERSON", name) in found(text)


def test_every_listed_name_is_an_anchor_however_long_the_lists_grow() -> None:
    """The listed names are split over several hyperscan expressions (one is bounded in length):
    a name of each part is found as a listed name in free text."""
    from router.privacy.names.free_text import _LISTED_CHUNK, _listed_ends
    from router.privacy.names.lists import given_names, raw_names

    listed = raw_names()
    assert len(listed) > 2 * _LISTED_CHUNK
    for name in (listed[0], listed[_LISTED_CHUNK], listed[-1]):
        text = f"we asked {name} about it"
        assert _listed_ends(text) == ([len("we asked ") + len(name) + 1], []), name
    # Lower-case given names, followed by a lower-case word, have expressions of their own.
    lower = sorted({n.lower() for n in listed if n.lower() in given_names()})
    assert len(lower) > 2 * _LISTED_CHUNK
    for name in (lower[0], lower[_LISTED_CHUNK], lower[-1]):
        assert _listed_ends(f"we asked {name} okonkwo") == ([], [len("we asked ") + len(name)]), name
    assert ("PERSON", "Kristian Herzog") in found("Please add Kristian Herzog as guardian on the account.")


def test_phone_csv_columns_and_whatsapp_uris() -> None:
    assert found("name,phone\nAnn,4155552671\n", frozenset()) == {("PHONE", "4155552671")}
    # A +CC number between digit-led fields of a CSV row.
    assert ("PHONE", "+44 20 7946 0958") in found("id,name,phone,visits\n1,Ann,+44 20 7946 0958,3\n", frozenset())
    assert ("PHONE", "+14155238886") in found("2024-03-02 INFO sent to whatsapp:+14155238886 sid=SM12", frozenset())
    assert ("PHONE", "+14155552671") in found("call tel:+14155552671 now", frozenset())
    assert found("name,phone\nAnn,not set\nBob,12\n", frozenset()) == set()  # the column's values are validated


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("Contact card\nPhone:\n418 2207\n\nE-mail:\nrk@example.org", "418 2207"),  # local, no area code
        ("Name: Rhiannon Keel\nPhone: (31) 402-877", "(31) 402-877"),
        ('{"mobile": "58-21-93-40", "id": 4417}', "58-21-93-40"),
        ("phone_number=73 904418", "73 904418"),
        ("Tel.:\n  +41 (0)58 312 40 17", "+41 (0)58 312 40 17"),  # a range not issued yet
        # A business card's lines name phones by where they ring.
        ("Mobile: 737 219 628\nDesk: 5403926876\nFax: 463-612-6138", "5403926876"),
        ("Office: 1234567", "1234567"),
        # A signature's lines named by what they reach (`line` alone names code's lines).
        ("Kind regards,\nDirect line: 020 7946 0958", "020 7946 0958"),
        ("Support line: (415) 555-0199 (24/7)", "(415) 555-0199"),
        ("Main line: 06 12 34 56 78", "06 12 34 56 78"),
        # Sentences that say a phone number follows.
        ("I didn't get any message on my registered 6685702. Could you look?", "6685702"),
        ("reach me at 5403926876 after six", "5403926876"),
        ("my mobile number is 0412345678", "0412345678"),
        # Grouped by spaces as an amount may be, but a field's or a said phone's value.
        ("Name: Emilie Broberg\nPhone: 72 128 827", "72 128 827"),
        ("They're not answering at 78 651 450", "78 651 450"),
        # Named by the word after it, at its line's or item's end (a signature, a contact card).
        ("Dreux Joly\nPSC 3294, Box 9168\n416 60 039 office\n(579)888-3058 fax", "416 60 039"),
        ("emidio lombardo\n781 1704 office\n", "781 1704"),
        ("+1-984-182-0190 mobile\n28-64-66-98 office", "28-64-66-98"),
        ("Portugal 30971\n21 253 109 8211-Office\\,+447700 208 815-Fax", "21 253 109 8211"),
        ("Portugal 30971\n21 253 109 8211-Office\\,+447700 208 815-Fax", "+447700 208 815"),
        ("Ana Lima — 0412 345 678 (mobile), ana@example.org", "0412 345 678"),
        # Filipino and Turkish phone words.
        ("Telepono: 09171234567", "09171234567"),
        ("Cep no: 05321234567", "05321234567"),
    ],
)
def test_the_value_of_a_phone_field_is_a_phone_where_no_numbering_plan_says_so(text: str, phone: str) -> None:
    assert ("PHONE", phone) in found(text, frozenset())


@pytest.mark.parametrize(
    "text",
    [
        "Phone: 2024-03-02",  # a date
        "phone: 123-45-6789",  # an SSN's shape
        "Fax: 10.0.12.7",
        "Phone: 1,250,000",
        "call 4182207 times in the loop",  # `call` names no field
        "phone: +999 412 8831",  # no country has that calling code
        "registered 1234567 users; Registered 20240105 users",  # no one's registered number
        "office: 2045 and Office 365 build 16.0.12345",
        "call me at 10:30, reach us at 2024-01-05",
        "answering at 1,234,567 requests a day",
        "error at line 1234 5678; see line 120 450 789",
        "pipeline: 2019 2020 2021",
        "Phone: 250 000",  # a round amount
        # A word after that a sentence goes on from, or a number no phone is.
        "we bought 12 345 678 office chairs",
        "ordered 2024-01-05 office",
        "released 10.0.12.7 home",
        "+999 412 8831 mobile",  # no country has that calling code
    ],
)
def test_a_phone_field_does_not_make_every_number_a_phone(text: str) -> None:
    assert not {f for f in found(text, frozenset()) if f[0] == "PHONE"}


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("Ingrid lives on Vestre Ringvei 41 since May.", "Vestre Ringvei 41"),
        ("Please ship it to 18 Tammsaare, Tartu 50409 by Monday", "18 Tammsaare, Tartu 50409"),
        ("The clinic is at Piazza dei Martiri 7, Napoli.", "Piazza dei Martiri 7, Napoli"),
        ("Can you book a taxi to 3310 Koivukuja 12 Apt. 5, Vantaa?", "3310 Koivukuja 12 Apt. 5, Vantaa"),
        ("we meet at the corner of Rysensteensgade 9 and Tietgens Passage", "Rysensteensgade 9 and Tietgens Passage"),
        ("my address is Hollandse Kade 114, Weesp", "Hollandse Kade 114, Weesp"),
        ("Please update the billing address with 4241 Steinfelden 73, Savonlinna", "4241 Steinfelden 73, Savonlinna"),
        ("change my shipping address to Hollandse Kade 114, Weesp", "Hollandse Kade 114, Weesp"),
    ],
)
def test_a_street_line_of_any_country_after_a_phrase_that_says_a_place_follows(text: str, address: str) -> None:
    assert ("ADDRESS", address) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "the error is located at Line 42 of main.py",
        "we moved to Python 3 and send the logs to Grafana 10 dashboards",
        "ship it to Step 2 of the pipeline, then meet me at 5 PM",
        "deliver to 3 workers in the pool",
        "the build lives on Node 18 for now",
    ],
)
def test_what_follows_such_a_phrase_is_not_always_a_street(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "ADDRESS"}


def test_an_address_field_whose_value_is_on_the_next_line() -> None:
    text = "Personal info:\nAddress:\n212 Kaivokatu 9 Apt. 31, Vantaa.\n\nWebsite:\nhttps://example.org/"
    assert ("ADDRESS", "212 Kaivokatu 9 Apt. 31, Vantaa.") in found(text)
    # A key on the next line is a field of its own, not the label's value.
    assert ("ADDRESS", "14 Juniper Close") in found("address:\n  street: 14 Juniper Close\n  city: Leeds\n")


@pytest.mark.parametrize(
    "text",
    [
        "081109 203615 148 INFO dfs.DataNode$PacketResponder: Received block",  # HDFS date and time
        "2024-01-02 12:34:56 INFO started in 1234 567 ms",
        "epoch_ms=1709374271123 build 10.0.19041.1 version 1.2.3.4",
        "connection from 82-68-222-194.dsl.in-addr.example.net",  # an IP written with dashes in a host name
        "Fan speeds ( 3552 3534 3375 **** 3515 3479 )",
        "178176 2428 boot_cmd success 10",
        "Berlin 10115, 75002 Paris, SW1A 2AA London, 90210-1234",
    ],
)
def test_log_look_alikes_are_not_phones(text: str) -> None:
    assert not {f for f in found(text, frozenset()) if f[0] == "PHONE"}


def test_national_ids_in_labelled_columns() -> None:
    text = "customer_id,name,ssn,steuer-id,bsn,nin\n7,Ann,536225481,65929970489,111222333,AB 12 34 56 C\n"
    assert found(text, frozenset()) == {
        ("US_SSN", "536225481"),
        ("NATIONAL_ID", "65929970489"),
        ("NATIONAL_ID", "111222333"),
        ("NATIONAL_ID", "AB 12 34 56 C"),
    }
    assert found("id,ssn\n1,000000000\n2,12\n", frozenset()) == set()  # invalid for the column: kept
    assert found("score,ssn_verified\n1,true\n", frozenset()) == set()


def test_route_setting_is_validated_and_its_kinds_have_series() -> None:
    settings = settings_for(
        "http://127.0.0.1:1",
        "http://127.0.0.1:2",
        routes={"tandem": {"strategy": "cloud", "privacy": "redact", "privacy_detect": ["person", "address"]}},
    )
    assert {"PERSON", "ADDRESS"} <= set(SeriesScope.of(settings, reported_kinds(settings)).privacy_kinds)
    with pytest.raises(ConfigError, match="privacy_detect"):
        settings_for(
            "http://127.0.0.1:1", "http://127.0.0.1:2", routes={"t": {"strategy": "cloud", "privacy_detect": ["names"]}}
        )


def test_redact_route_keeps_names_and_streets_from_the_cloud_and_restores_them(
    make_gateway: type[GatewayServer], client: httpx.Client, cloud: FakeUpstream
) -> None:
    routes = {
        "tandem": {"strategy": "cloud", "privacy": "redact", "privacy_detect": ["person", "address"]},
        "plain": {"strategy": "cloud", "privacy": "redact"},
    }
    server = make_gateway(routes=routes)  # type: ignore[call-arg]
    export = (
        "Update the CRM from this export:\n"
        "id,full_name,street,city\n1,Oluwadamilola Achterberg,14 Juniper Close,Leeds\n"
    )
    cloud.push({"text": "Updated [PERSON_1] at [ADDRESS_1]."})
    answer = client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": [{"role": "user", "content": export}]},
        headers={"X-Session-ID": "people"},
    )
    assert answer.status_code == 200, answer.text
    sent = str(cloud.received[0].body["messages"])
    assert "Oluwadamilola" not in sent and "Achterberg" not in sent and "Juniper Close" not in sent
    assert "[PERSON_1]" in sent and "[ADDRESS_1]" in sent
    assert answer.json()["choices"][0]["message"]["content"] == "Updated Oluwadamilola Achterberg at 14 Juniper Close."
    # A route that did not opt in sends them as they are.
    cloud.push({"text": "ok"})
    client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "plain", "messages": [{"role": "user", "content": export}]},
        headers={"X-Session-ID": "plain"},
    )
    assert "Oluwadamilola Achterberg" in str(cloud.received[1].body["messages"])


# Forms of Presidio's public labelled sentences (benchmarks/privacy/presidio_corpus.py), written
# here with our own values.
@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hello, my name is Ottilie Brandauer and I need help with my bill.", "Ottilie Brandauer"),
        ("What's your last name? Vanterpool", "Vanterpool"),
        ("Bot: What is your full name? User: Radomir K. Petrov", "Radomir K. Petrov"),
        ("my name is emma richter.", "emma richter"),
        ("Security question: her maiden name is Castellanos", "Castellanos"),
        ("I'm Lucinda Q. Ferreira, calling about order 5521.", "Lucinda Q. Ferreira"),
        ("A 1994 drama directed by Marek Wolanski, shot in Gdansk.", "Marek Wolanski"),
        ("Date: 2021-03-04\nName: Ines T. Okonkwo\nPhone: +44 20 7946 0958", "Ines T. Okonkwo"),
    ],
)
def test_names_after_a_cue_phrase(text: str, name: str) -> None:
    assert ("PERSON", name) in found(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Luiza is from Xignite", "Luiza"),
        ("Catherine is a very sympathetic person.", "Catherine"),
        ("The deploy failed twice last night, said Oksana.", "Oksana"),
        ("Hi team, Carlos here.", "Carlos"),
        ("Morning all - Priya here, quick question about the flaky test", "Priya"),
    ],
)
def test_a_listed_given_name_doing_what_people_do(text: str, name: str) -> None:
    """A single word is a name when it is a listed given name followed by what a person does
    (`is from`, `spent`, `said`), or after `said`; the lists make it a name, not the verb."""
    assert ("PERSON", name) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "Docker is running again after the restart.",
        "Python was upgraded to 3.12 on the runner.",
        "Version is 3, said Redis.",
        "Victoria is a state in Australia.",  # a listed given name that is also a place's
        "Python here is fine; click here. Jordan here.",
    ],
)
def test_a_word_that_is_no_listed_given_name_doing_something_is_no_name(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "PERSON"}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("INC-4411 was reassigned to Rubija Liberšar after the on-call handover.", "Rubija Liberšar"),
        ("Escalated to Priya for approval; no reply yet.", "Priya"),
        ("I spoke with Tomasz Wrzesniewski about the failing migration.", "Tomasz Wrzesniewski"),
        ("Change reviewed by Ngozi Adeyemi-Okafor, merged Tuesday.", "Ngozi Adeyemi-Okafor"),
        ("Patch signed off by Declan O'Rourke.", "Declan O'Rourke"),
        ("Please follow up with Ilse Vandenberghe before the release.", "Ilse Vandenberghe"),
        ('Radka Holubová, the on-call engineer, said: "the queue drained at 04:10".', "Radka Holubová"),
        ('"The fundamentals are not right yet," Ilunga said after the review.', "Ilunga"),
        ("“Nothing is deployed,” Harrowgate told the channel on Monday.", "Harrowgate"),
        ('"Why is it red?" Mary Jo asked.', "Mary Jo"),
        ('"You always were a shocking liar," said Biscuit severely, "though you meant well."', "Biscuit"),
    ],
)
def test_a_name_work_is_handed_to_or_from(text: str, name: str) -> None:
    """Tickets, reviews and notes name the person work goes to or comes from (`assigned to`,
    `reviewed by`, `spoke with`), and reports the person they quote with their role (`X, the
    on-call engineer, said`): two words cased as names, or one listed given name."""
    assert ("PERSON", name) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "The job was assigned to Release Bot.",
        "Opened by Dependabot Preview, approved by Legal.",
        "Reviewed by Jenkins Pipeline, written by Claude Code.",
        "Created by GitHub Actions on behalf of Acme Corp.",
        "Escalated to Customer Success and forwarded to Product Owner.",
        "Checked with the team; met with Security Council.",
        "Release Pipeline, the nightly one, said nothing; GitHub Actions, the CI, wrote logs.",
        '"Build passed," Jenkins said. "Done!" Docker reported. "Fine," He said. "ok," Python added.',
    ],
)
def test_machines_and_groups_work_is_handed_to_are_no_names(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "PERSON"}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("He was the assistant to Alvir D. Pušaver, and later a partner.", "Alvir D. Pušaver"),
        ("The name on the account is wrong, please change it to Soib K. Kishiev", "Soib K. Kishiev"),
        ("The parcel may be filed under Orsolya V Nakashima, not under my name.", "Orsolya V Nakashima"),
    ],
)
def test_a_name_with_an_initial_in_prose(text: str, name: str) -> None:
    assert ("PERSON", name) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "We chose Plan B. Then we left.",
        "Take vitamin C. Then rest.",
        "See Appendix B. Results follow.",
        "We chose Plan B Options and Class A Shares.",
        "link training failed: wanted: B C X+ X- Y+ Y- got: B C",
    ],
)
def test_a_sentence_ending_in_a_capital_is_no_initial(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "PERSON"}


def test_speakers_of_a_dialogue() -> None:
    text = "Oksana: Are you coming tonight?\nThaddeus: Only if it stops raining.\nOksana: Fine, bring the umbrella."
    assert {("PERSON", "Oksana"), ("PERSON", "Thaddeus")} <= found(text)


@pytest.mark.parametrize(
    "text",
    [
        "Date: 2024-01-01\nSubject: Invoice\nSummary: Paid in full.",
        "Question: Why does it fail?\nAnswer: The cache is stale.",
        "Emma: hello",  # one line is no dialogue
        "I'm Happy to help. I am Done.",
        "call me Maybe",
    ],
)
def test_label_lines_and_cue_look_alikes_are_not_names(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "PERSON"}


def test_a_record_heading_above_its_contact_fields_or_address() -> None:
    card = "Ingeborg Thaulow\nQuality engineer\nNordlys Logistics\nMobile: +47 412 34 567"
    assert ("PERSON", "Ingeborg Thaulow") in found(card)
    label = "Ingeborg Thaulow\n\nStorgata 14\n0184 Oslo"
    assert ("PERSON", "Ingeborg Thaulow") in found(label)
    heading = "Getting Started\n\nInstall the package and run it."
    assert not {f for f in found(heading) if f[0] == "PERSON"}


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("Storgata 14\n0184 Oslo", "Storgata 14\n0184 Oslo"),
        ("Send it to Kirkeveien 221 Suite 4\nBergen, 5003 please.", "Kirkeveien 221 Suite 4\nBergen, 5003"),
        (
            "Ship it to 1420 Maple Avenue\nApt 5\nSpringfield, IL 62704 by Friday.",
            "1420 Maple Avenue\nApt 5\nSpringfield, IL 62704",
        ),
        ("Töölönkatu 12 B\n Apt. 7\n Helsinki\n Finland 00260", "Töölönkatu 12 B\n Apt. 7\n Helsinki\n Finland 00260"),
        ("Mail: PSC 4410, Box 2215\nAPO AE 09012", "PSC 4410, Box 2215\nAPO AE 09012"),
        ("Unit 3050 Box 118, DPO AP 96522", "Unit 3050 Box 118, DPO AP 96522"),
        ("USNS Mercy\nFPO AP 96672", "USNS Mercy\nFPO AP 96672"),
    ],
)
def test_multi_line_and_military_addresses(text: str, address: str) -> None:
    assert ("ADDRESS", address) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "Total items 42\n12345 records",
        "node-[1-3] child of command 1964\n70088 2206 shutdown_cmd new 1074297389",
        "Step 3 of 12\nElapsed 10240",
    ],
)
def test_numbered_lines_are_not_multi_line_addresses(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "ADDRESS"}


def test_given_names_from_the_us_records_are_taken_in_free_text_and_everyday_words_are_not() -> None:
    from router.privacy import names_model
    from router.privacy.names.lists import given_names, hand_given_names

    # Listed only by the US records' list (data/given_names_us.txt), not the hand-written one.
    assert "leland" in given_names() and "leland" not in hand_given_names()
    assert ("PERSON", "Leland Achterberg") in found("The invoice was approved by Leland Achterberg yesterday.")
    # Names that are everyday or software words first are left out of the list.
    assert not {"chase", "summer", "jenkins", "will", "ruby"} & (given_names() - hand_given_names())
    assert not [f for f in found("Chase the Summer release with Jenkins before Ruby upgrades.") if f[0] == "PERSON"]
    # ... and so are places that are given names too (`Boston Dynamics`, `Arizona State`).
    assert not {"boston", "arizona", "america", "rome", "brooklyn"} & given_names()
    assert not [f for f in found("Boston Dynamics and Arizona State met in Rome.") if f[0] == "PERSON"]
    # The prose model reads the list it was trained with.
    assert names_model._lists()[0] == hand_given_names()


def test_a_gateway_builds_the_opt_in_finders_tables_at_its_start() -> None:
    import subprocess
    import sys

    # In a fresh process: the listed names' database is built by the engine's start for a route
    # that asks for names, and not for one that does not.
    script = """
import asyncio, sys
from router.engine import Engine
from router.privacy.names import free_text
from tests.gateway_server import settings_for
detect = sys.argv[1].split(",") if sys.argv[1] else []
settings = settings_for("http://127.0.0.1:1", "http://127.0.0.1:2",
                        routes={"t": {"strategy": "cloud", "privacy": "redact", "privacy_detect": detect}})
engine = Engine(settings)
async def main():
    await engine.start()
    await engine.close()
asyncio.run(main())
print(free_text._listed_anchor.cache_info().currsize)
"""
    built = [
        subprocess.run(
            [sys.executable, "-c", script, kinds], capture_output=True, text=True, check=True
        ).stdout.split()[-1]
        for kinds in ("person,address", "")
    ]
    assert built == ["1", "0"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("pls follow up with priya okonkwo next week", "priya okonkwo"),
        ("tell patricia a desrosiers-vale the build is green.", "patricia a desrosiers-vale"),
        ("ask maria lópez for the ticket", "maria lópez"),
        ("the refund goes to monika žilková's account", "monika žilková"),
    ],
)
def test_a_name_written_in_lower_case_after_a_listed_given_name(text: str, name: str) -> None:
    assert ("PERSON", name) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "from jose import jwt",
        "        elif encoding == 'gzip':",
        "        del batch, first",
        "maria.lopez = load(path)",  # code, not prose
        "call emma(value) twice",
        "set anna maria as the default",  # two given names, no family name
        "the dana server restarts nightly",  # an everyday word after the name
    ],
)
def test_lower_case_words_of_code_and_prose_are_not_names(text: str) -> None:
    assert not [f for f in found(text) if f[0] == "PERSON"]


@pytest.mark.parametrize(
    ("text", "address"),
    [
        # A label's lines with a blank line above the country's.
        ("Ines Varga\n4410 Sørlandsveien 17\nApt. 12\nKristiansand\n\nNorway 4631", None),
        # A block that ends in the country's name alone.
        ("Ines Varga\n7 Kauppakatu 41\nSuite 3\nTAMPERE\nFinland", "7 Kauppakatu 41\nSuite 3\nTAMPERE\nFinland"),
        # One line ending in its country.
        ("Please ship to 2281 Hverfisgata 12, Reykjavík, Iceland.", "2281 Hverfisgata 12, Reykjavík, Iceland"),
        ("new address: 12 Baker Road, Leeds, United Kingdom", "12 Baker Road, Leeds, United Kingdom"),
    ],
)
def test_addresses_that_end_in_their_country(text: str, address: str | None) -> None:
    addresses = {value for kind, value in found(text) if kind == "ADDRESS"}
    if address is None:  # the whole block, from its street line to the postcode line
        assert any(value.startswith("4410 Sørlandsveien 17") and value.endswith("Norway 4631") for value in addresses)
    else:
        assert address in addresses


@pytest.mark.parametrize(
    "text",
    [
        "Found 3 errors, fix them, France",
        "Version 12\nrelease\nGermany",
        "Total 12\n\nCount 12345",
        "3 Errors, then, Spain",
    ],
)
def test_numbered_lines_before_a_country_are_no_address(text: str) -> None:
    assert not [f for f in found(text) if f[0] == "ADDRESS"]


# Markdown's bullets, and `•` decoded with the wrong codec (its three UTF-8 bytes each read as `?`
# or as U+FFFD), as text pasted through a tool that lost it shows it.
_BULLETS = ["- ", "* ", "+ ", "– ", "▪ ", "◦ ", "??? ", "? ", "\ufffd\ufffd\ufffd ", "\ufffd "]


@pytest.mark.parametrize("mark", ["> ", ">", "> > ", "• ", *_BULLETS])
def test_an_address_block_quoted_in_a_reply_or_bulleted(mark: str) -> None:
    lines = ["Ines Varga", "4410 Sørlandsveien 17", "Apt. 12", "Kristiansand", "Norway 4631"]
    text = "On Monday Ines wrote:\n" + "\n".join(mark + line for line in lines)
    addresses = [value for kind, value in found(text) if kind == "ADDRESS"]
    assert any(value.startswith("4410 Sørlandsveien 17") and value.endswith("Norway 4631") for value in addresses)


@pytest.mark.parametrize("mark", ["> ", ">", "• ", *_BULLETS])
def test_a_record_heading_quoted_in_a_reply_or_bulleted(mark: str) -> None:
    # (A name in no list: only its place above the record says it is one.)
    lines = ["Zorath Quellmane", "Acme Ltd", "4410 Sørlandsveien 17", "Kristiansand", "Norway 4631"]
    blank = mark.rstrip() if mark.strip() in (">", "•") else ""  # a list's items follow a blank line
    text = "On Monday she wrote:\n" + blank + "\n" + "\n".join(mark + line for line in lines)
    assert ("PERSON", "Zorath Quellmane") in found(text)
    assert not [f for f in found("> Release notes\n> 12 fixes in total\n") if f[0] == "PERSON"]


@pytest.mark.parametrize(
    "text",
    [
        # A hyphen, an asterisk or a question mark glued to what follows is no bullet.
        "Ines Varga\n4410 Sørlandsveien 17\n-Apt. 12\n-Kristiansand\n-Norway 4631",
        "Ines Varga\n4410 Sørlandsveien 17\n*Apt. 12\n*Kristiansand\n*Norway 4631",
    ],
)
def test_a_mark_glued_to_its_line_is_no_bullet(text: str) -> None:
    assert ("ADDRESS", "4410 Sørlandsveien 17") in found(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Don't merge it yet, Brandon!", "Brandon"),
        ("Did the deploy finish, Priya? I see no logs.", "Priya"),
        ("Thanks, Oksana.", "Oksana"),
    ],
)
def test_a_person_addressed_at_the_end_of_a_sentence(text: str, name: str) -> None:
    assert ("PERSON", name) in found(text)


@pytest.mark.parametrize("text", ["Hello, World!", "Acme, Inc. shipped it.", "It failed, Python.", "Yes, Will."])
def test_words_after_a_comma_at_a_sentence_end_that_are_no_names(text: str) -> None:
    assert not [f for f in found(text) if f[0] == "PERSON"]


def test_a_heading_name_with_two_particles() -> None:
    text = "Maika van de Noort\nEmployment manager\nOpportunityspace Inc.\n590 Edington Drive\nToronto, ON M4B 1B3\n"
    assert ("PERSON", "Maika van de Noort") in found(text)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "Attendees: Ilse Vandenberghe, Priya, Tomasz Wrzesniewski and Ngozi Adeyemi-Okafor.",
            {"Ilse Vandenberghe", "Priya", "Tomasz Wrzesniewski", "Ngozi Adeyemi-Okafor"},
        ),
        ("Acme was started by its 3 founders: Kónya, Becker and Vasquez.", {"Kónya", "Becker", "Vasquez"}),
        ("Reviewers for this PR: Hannah, Gaetane, Derek & Anna", {"Hannah", "Gaetane", "Derek", "Anna"}),
        # An item with a word that is a make of car too, or a short given name no list holds.
        (
            "Members: Mary John, Russell Dyk, Webb Jennings, Martin Gonzales",
            {"Mary John", "Russell Dyk", "Webb Jennings", "Martin Gonzales"},
        ),
        ("Attendees: Pam Butler, Renee Ratcliff, Larry Lewis and Tom Martin", {"Tom Martin", "Pam Butler"}),
    ],
)
def test_a_list_of_people_after_a_colon(text: str, names: set[str]) -> None:
    """A list after a colon, two items or more of it listed names and every item a name in form:
    each item is a name, those the lists do not hold (`Kónya`, `Gaetane`) too."""
    assert names <= {value for kind, value in found(text) if kind == "PERSON"}


@pytest.mark.parametrize(
    "text",
    [
        "Languages: Python, Go, Rust and Ruby.",
        "Owners: Platform Team, Release Bot and Jenkins Pipeline.",
        "Regions: Europe, Asia and Africa.",
        "Labels: Bug, Feature, Docs and Good First Issue",
        "Stack: React, Redux, Jest and Cypress",
        "Colours: Red Orange, Deep Blue, Forest Green and Sky Blue",
    ],
)
def test_a_list_that_is_not_of_people_is_no_list_of_names(text: str) -> None:
    """One item that is an everyday word or a machine's, and the list is none."""
    assert not {value for kind, value in found(text) if kind == "PERSON"}


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("Leveransadress: Kungsgatan 44, 111 35 Stockholm", "Kungsgatan 44, 111 35 Stockholm"),
        ("Kontor: Karl Johans gate 22, 0159 Oslo", "Karl Johans gate 22, 0159 Oslo"),
        ("Send the contract to Vesterbrogade 3, 1620 København V", "Vesterbrogade 3, 1620 København V"),
        ("office,Mannerheimintie 12, 00100 Helsinki", "Mannerheimintie 12, 00100 Helsinki"),
        ("Adres: ul. Marszałkowska 1, 00-624 Warszawa", "ul. Marszałkowska 1, 00-624 Warszawa"),
        ("Szállítási cím: Váci utca 12., 1052 Budapest", "Váci utca 12., 1052 Budapest"),
        ("The office moved to Andrássy út 60. last spring", "Andrássy út 60."),
    ],
)
def test_nordic_polish_and_hungarian_street_lines(text: str, address: str) -> None:
    """The street type at a word's end (`-gatan`, `-gade`, `-ntie`) or after a name in the
    genitive (`Karl Johans gate`), Poland's type first (`ul.`, `al.`), Hungary's after the name
    (`utca`, `út`), with the postcode."""
    assert ("ADDRESS", address) in found(text)


@pytest.mark.parametrize(
    "text", ["Delegate 12 tasks; Aggregate 10 rows; Navigate 3 pages", "Login gate 3 failed", "Stargate 2 and Bowtie 3"]
)
def test_english_words_ending_like_a_nordic_street_are_no_streets(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "ADDRESS"}


@pytest.mark.parametrize(
    "text",
    [
        "During 1971, Mayo-Walters invested heavily in new designs.",
        "Spring 2024 release notes; String 1 and String 2 differ",
        "Monitoring 24 hours a day; Offering 3 plans; Engineering 101",
        "SUCCESS: Docstring 2 trimmed correctly. Comparing 1.14.3 >= 1.14dev",
        "UserWarning: Ignoring 815 rows with NaN times; Bytestring 5 of 9",
    ],
)
def test_english_words_ending_like_a_german_street_are_no_streets(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "ADDRESS"}


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ('ship_to="Goethering 97, 89309 Bonn"', "Goethering 97, 89309 Bonn"),
        ("Westring 12, 24118 Kiel", "Westring 12, 24118 Kiel"),
        ("Kaiserring 12", "Kaiserring 12"),
    ],
)
def test_german_compounds_with_a_type_at_their_end_stay_streets(text: str, address: str) -> None:
    assert ("ADDRESS", address) in found(text)


@pytest.mark.parametrize(
    "text",
    [
        # An agent reasoning about line numbers: a number, words and a number, then a line that
        # ends in a 4-digit number, as a street line and a postcode line would.
        "So 1038 matches 1024.\n\nSo I need to delete lines 1034, 1035.",
        "Original line 4770 is now 4772.\nOriginal line 4780 is now 4782.",
        "But RFC 3986 is newer than RFC 1738.\nDjango seems to follow RFC 1738 for this.",
        # A label's value that is code: its digit is an identifier's.
        "            if self.addr:\n                if _ipv6:\n                    x = 1",
    ],
)
def test_prose_and_code_shaped_like_address_lines_are_no_addresses(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "ADDRESS"}


@pytest.mark.parametrize(
    "text",
    [
        # Words of the prose that goes with code, opening a sentence or a docstring.
        "THOUGHT: Okay, `NDimArray` is defined in `sympy/tensor/array/ndim_array.py`.",
        "Alternatively, we can iterate forward but insert at the beginning.",
        "Currently, I am doing `ax.grid(False, axis=axis)`.",
        '    """\n    Returns the function definition code as a string.\n    """',
        '    """\n    Constructor for the Permutation object from a list.\n    """',
        'raise TypeError("Invalid NaN comparison")\nf(6) failed with Invalid NaN comparison',
        "Additionally, I can help you with changing the flights. Alright, let me check.",
    ],
)
def test_everyday_words_of_code_prose_are_no_names(text: str) -> None:
    assert not {f for f in found(text) if f[0] == "PERSON"}


def test_names_stay_names_beside_the_code_words() -> None:
    from router.privacy import names_model

    words = names_model.code_words()
    assert {"returns", "constructor", "invalid", "okay"} <= words
    assert not {"bob", "mike", "mark", "sue"} & words  # given names in the US records are left out
    assert ("PERSON", "Danial") in found("Danial, please call back.")
    assert ("PERSON", "Mike Okonkwo") in found("Hi team,\nMike Okonkwo here. Can you review my PR?")


def test_header_names_and_software_are_no_names_and_hyphenated_names_stay() -> None:
    text = "Most browsers ignore the Set-Cookie header if the cookie name starts with __Host-."
    assert not {f for f in found(text) if f[0] == "PERSON"}
    assert not {f for f in found("Maybe Sphinx relies on it? Or maybe it uses babel.") if f[0] == "PERSON"}
    assert ("PERSON", "Jean-Pierre Dubois") in found("I spoke with Jean-Pierre Dubois yesterday about the bill.")


def test_a_label_whose_value_is_a_call_or_a_diff_line_is_no_name() -> None:
    # `nome` (Portuguese) labels a model field's class; a diff's hunk header and `+from … import`.
    assert not {f for f in found("class FonteModel(Model):\n    nome = TextField(unique=True)\n") if f[0] == "PERSON"}
    diff = "@@ -25,7 +25,7 @@ from seaborn._marks.base import Mark\n+from seaborn.marks import Mark as the base here"
    assert not {f for f in found(diff) if f[0] == "PERSON"}
    assert ("PERSON", "Ana Lima") in found("name: Ana Lima (id=42)")
    assert ("PERSON", "Maria Lopez") in found("- from the start, Maria Lopez said we should go there.")


def test_the_people_forms_written_after_the_finders() -> None:
    # benchmarks/privacy/later_people.py: 21 forms scored blind once (PERSON 66 of 78, every miss
    # in psql's output), then psql's rule line read as a rule and place fields as places.
    from benchmarks.privacy import later_people

    found_, missed, wrong = later_people.score(3)
    assert not missed, wrong
    assert found_["false"] == 0, wrong
    assert found_["PERSON"] > 60 and found_["ADDRESS"] > 20


def test_names_in_short_messages_written_after_the_finders() -> None:
    # benchmarks/privacy/later_chat.py: 31 forms of short messages scored blind once (PERSON 76
    # of 111), then short sentences read as prose and lists' members as one kind: 95 of 111.
    from benchmarks.privacy import later_chat, later_people

    found_, _missed, wrong = later_people.score(3, later_chat.FORMS, later_chat.R)
    assert found_["PERSON"] >= 98, wrong
    assert found_["false"] <= 1, wrong
    left = {name for name, what, _value in wrong if what.startswith("missed")}
    assert left <= {
        "thanks",
        "possessive",
        "send_to",
        "belongs",
        "birthday",
        "chat_lines",
        "lower_case",
        "tell",
        "surname_said",
        "cc_line",
    }, wrong


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Call Wiremu back tomorrow.", {"Wiremu"}),
        ("Add Amara Okonkwo as a collaborator.", {"Amara Okonkwo"}),
        # (`Sherry` is an everyday word too: never a candidate of the prose model.)
        ("They had 6: Hleb, Sheila, Donna, Sherry, Donald and Shane.", {"Hleb", "Sheila", "Donna", "Donald", "Shane"}),
        ("Dagny and Kenji will pair on the migration.", {"Dagny", "Kenji"}),
        ("Attendees: Farida, Niamh, Yusuf", {"Farida", "Niamh", "Yusuf"}),
    ],
)
def test_names_in_short_sentences_and_lists(text: str, names: set[str]) -> None:
    assert {value for kind, value in found(text) if kind == "PERSON"} == names


@pytest.mark.parametrize(
    "text",
    [
        # A list with a firm in it is no list of people (`Ranku`, listed with `Kenji`, is not
        # taken; `Biovia Labs` is the model's own mistake).
        "Kenji, Ranku and Biovia Labs will bid.",
        "Katrina and Rúa do Paseo 46 is the address on file.",
        # A short line that ends with no sentence mark is a heading or a cell, not prose.
        "Install Werkzeug",
        "Bump Werkzeug to 2.0.",
    ],
)
def test_lists_of_firms_and_places_and_headings_are_not_people(text: str) -> None:
    people = {value for kind, value in found(text) if kind == "PERSON"}
    assert not people & {"Ranku", "Rúa", "Werkzeug"}, people


def test_the_address_forms_written_after_the_finder() -> None:
    # benchmarks/privacy/later_addresses.py: 30 forms scored blind once (ADDRESS 79 of 87; a
    # German type as a word of its own, a Dutch street on one line, Japan's block numbers, an
    # Irish `Road Upper`; `Te Aro` taken for a person), then each given a grammar.
    from benchmarks.privacy import later_addresses, later_people

    found_, missed, wrong = later_people.score(3, later_addresses.FORMS, later_addresses.R)
    assert not missed, wrong
    assert found_["false"] == 0, wrong
    assert found_["ADDRESS"] == 87


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("Wir wohnen in der Berliner Straße 12, 10119 Berlin.", "Berliner Straße 12, 10119 Berlin"),
        ("Lieferung an Frankfurter Allee 90", "Frankfurter Allee 90"),
        ("Bezorgadres: Overtoom 409, 1016 GV Amsterdam", "Overtoom 409, 1016 GV Amsterdam"),
        ("Biuro: Nowy Świat 15, 00-029 Warszawa.", "Nowy Świat 15, 00-029 Warszawa"),
        ("Deliver to: 5-30-18 Ebisu, Shibuya-ku, Tokyo 150-0013, Japan", "5-30-18 Ebisu, Shibuya-ku, Tokyo 150-0013"),
        ("79 Drumcondra Road Upper, Dublin 9", "79 Drumcondra Road Upper"),
        ("The parcel went to 12 Cuba Street, Te Aro, Wellington 6011.", "12 Cuba Street, Te Aro, Wellington 6011"),
    ],
)
def test_street_lines_of_more_countries(text: str, address: str) -> None:
    people = found(text)
    assert ("ADDRESS", address) in people, people
    assert not [value for kind, value in people if kind == "PERSON"], people


@pytest.mark.parametrize(
    "text",
    [
        "Chapter 3, 12000 Miles Under the Sea",  # a word that numbers things, then a number
        "Release 4, 20000 Users reached",  # the city an everyday word
        "Boxing Ring 3 is booked.",  # `Ring` alone is no German street type
        "Answer 42, 10115 Things to know.",
    ],
)
def test_numbered_words_are_no_street_line(text: str) -> None:
    assert not [value for kind, value in found(text) if kind == "ADDRESS"], found(text)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Thanks Anselm!", {"Anselm"}),
        ("Thanks, Anselm.", {"Anselm"}),
        ("Happy birthday Farida!", {"Farida"}),
        ("Congrats Farida!", {"Farida"}),
        ("Dear Grace,", {"Grace"}),  # an everyday word that is a listed given name
        # Greeted or thanked, but no person: an everyday word, software, a team.
        ("Hello World!", set()),
        ("Thanks Jenkins!", set()),
        ("Thanks Copilot!", set()),
        ("Hi Team,", set()),
        ("Welcome Back!", set()),
        # Asked or told something at a sentence's head.
        ("Tell Anselm the build is green.", {"Anselm"}),
        ("Message Teodora Nakashima about it", {"Teodora Nakashima"}),
        ("Ask Redis for the key.", set()),
        ("Ping Support about it.", set()),
        ("Email Legal about the contract.", set()),
    ],
)
def test_names_greeted_and_thanked(text: str, names: set[str]) -> None:
    assert {value for kind, value in found(text) if kind == "PERSON"} == names


def test_addresses_in_the_forms_left_out_written_after_the_finders() -> None:
    # benchmarks/privacy/later_places.py: 19 forms scored blind once (ADDRESS 30 of 54), then a
    # grammar per kind of miss and a Brazilian CEP alone no phone.
    from benchmarks.privacy import later_people, later_places

    found_, missed, wrong = later_people.score(3, later_places.FORMS, later_places.R)
    assert not missed, wrong
    assert found_["false"] == 0, wrong
    assert found_["ADDRESS"] == 54


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("Send the replacement to RR 7 Box 950, Millbrook, AL 36054.", "RR 7 Box 950"),
        ("hey can u update my address to 7811 bramblewood lane apt 4b, springfield il 62704", "7811 bramblewood lane"),
        (
            "Deliver to: Flat 9A, Sunrise Apartments, near City Mall, Andheri West, Mumbai 400053",
            "Flat 9A, Sunrise Apartments, near City Mall, Andheri West, Mumbai 400053",
        ),
        ("Endereço: Av. Paulista, 2632 - Bela Vista, São Paulo - SP, 01310-200", "Av. Paulista, 2632 - Bela Vista"),
        ("Dirección: Calle 5 de Mayo #828, Col. Centro, 06000 Ciudad de México", "Calle 5 de Mayo #828, Col. Centro"),
        ("Адрес доставки: ул. Тверская, д. 17, кв. 137, Москва, 125009", "ул. Тверская, д. 17, кв. 137"),
        ("Office: 170 Teheran-ro, Gangnam-gu, Seoul 06142", "170 Teheran-ro, Gangnam-gu"),
        ("https://www.google.com/maps/search/?api=1&query=9174+Bramblewood+Drive+Austin+TX", "9174+Bramblewood+Drive"),
    ],
)
def test_addresses_of_the_forms_left_out(text: str, address: str) -> None:
    spans = [(f.start, f.end) for f in detect(text, PEOPLE) if f.type == "ADDRESS"]
    at = text.index(address)
    assert any(start <= at and at + len(address) <= end for start, end in spans), spans


@pytest.mark.parametrize(
    "text",
    [
        "São Paulo - SP, 01310-200",  # a CEP alone is no phone
        "the 2 way handshake took 40 ms on the way back",
        "GET /api/v2/users/42/street HTTP/1.1",
        "Room 404 is on floor 4; Building 7 houses the lab.",
    ],
)
def test_postcodes_and_numbered_things_are_neither_phones_nor_addresses(text: str) -> None:
    assert [f for f in detect(text, PEOPLE) if f.type in ("PHONE", "ADDRESS")] == []


@pytest.mark.parametrize(
    ("text", "address", "phone"),
    [
        ("Address: 221B Baker Street, London NW1 6XE, tel 020 7946 0958", "221B Baker Street", "020 7946 0958"),
        ("Indirizzo: Via Roma 10, 00184 Roma RM 06 1234 5678", "Via Roma 10", "06 1234 5678"),
    ],
)
def test_an_address_that_runs_into_a_phone_keeps_its_street(text: str, address: str, phone: str) -> None:
    # The address's finding overlaps the phone's: the phone stands, and the street before it is
    # still an address (dropped whole, it reached the cloud).
    found_ = detect(text, PEOPLE)
    assert ("PHONE", phone) in [(f.type, f.value) for f in found_]
    assert any(f.type == "ADDRESS" and address in f.value for f in found_), found_
    spans = sorted((f.start, f.end) for f in found_)
    assert all(a_end <= b_start for (_a, a_end), (b_start, _b) in itertools.pairwise(spans))
