"""The forms agents see, holding people's data (benchmarks/privacy/people.py): customer CSV
exports, SQL INSERTs, support tickets, e-mails with signatures, JSON API records, YAML configs
with contacts, logs. Each form has several wordings: the development part uses the even ones,
the held-out part the odd ones, so the held-out wordings were not seen while tuning.

Labelled kinds: PERSON (each name as written: a full name, or a first and a last name in their
own cells), ADDRESS (the street line: number and street; a city or postcode alone is not
labelled), PHONE, US_SSN and NATIONAL_ID. Look-alikes that are not values (product and team
names, versions, timestamps, postcodes, cities) are part of the text, unlabelled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks.privacy.people_values import Values


@dataclass
class Item:
    form: str
    text: str = ""
    truth: list[tuple[str, int, int]] = field(default_factory=list)

    def add(self, text: str) -> Item:
        self.text += text
        return self

    def value(self, kind: str, value: str) -> Item:
        self.truth.append((kind, len(self.text), len(self.text) + len(value)))
        self.text += value
        return self


PRODUCTS = ["Widget Pro", "Cloud Backup Plus", "Starter Plan", "Team Edition", "Northwind Coffee", "Solar Kit 3"]
NOISE = [
    "081109 203615 148 INFO dfs.DataNode: Receiving block",
    "2024-03-02 12:34:56,789 DEBUG urllib3 Starting new HTTPS connection (1): api.example.com:443",
    "version 4.2.1.7 (build 20240302) released",
    "epoch_ms=1709374271123 latency_ms=35",
    "Release Manager: Build Status green",
]


def _name_cells(item: Item, values: Values, first: str, last: str) -> None:
    item.value("PERSON", first).add(",").value("PERSON", last)


def csv_export(values: Values, variant: int) -> Item:
    item = Item("csv")
    rows = values.rng.randint(3, 7)
    if variant % 4 == 0:
        item.add("id,first_name,last_name,email,phone,street,city,postcode\n")
        for i in range(rows):
            first, last = values.person()
            street, rest = values.address()
            item.add(f"{1000 + i},")
            _name_cells(item, values, first, last)
            item.add(f",{first.lower()}.{last.lower()}@example.com,").value("PHONE", values.phone(False)).add(",")
            item.value("ADDRESS", street).add(f",{rest.split(' ')[-1]},{values.rng.randint(10000, 99999)}\n")
    elif variant % 4 == 1:
        item.add('"Customer Name";"Telefon";"Adresse";"Produkt"\n')
        for _ in range(rows):
            first, last = values.person()
            street, rest = values.address()
            item.add('"').value("PERSON", f"{first} {last}").add('";"').value("PHONE", values.phone()).add('";"')
            item.value("ADDRESS", street).add(f', {rest}";"{values.rng.choice(PRODUCTS)}"\n')
    elif variant % 4 == 2:
        item.add("| Name | Mobile | Address | Plan |\n|---|---|---|---|\n")
        for _ in range(rows):
            first, last = values.person()
            street, rest = values.address()
            item.add("| ").value("PERSON", f"{first} {last}").add(" | ").value("PHONE", values.phone()).add(" | ")
            item.value("ADDRESS", street).add(f", {rest} | {values.rng.choice(PRODUCTS)} |\n")
    else:
        header, _value, _kind = values.national_id()
        item.add(f"customer_id\tfull_name\ttel\t{header}\tsignup\n")
        for i in range(rows):
            first, last = values.person()
            _header, value, kind = values.national_id()
            while _header.split("_")[0].lower() != header.split("_")[0].lower():
                _header, value, kind = values.national_id()
            item.add(f"C{i:05d}\t").value("PERSON", f"{first} {last}").add("\t").value("PHONE", values.phone(False))
            item.add("\t").value(kind, value).add(f"\t2024-01-0{1 + i % 9} 10:00:00\n")
    return item


def sql_insert(values: Values, variant: int) -> Item:
    item = Item("sql")
    columns = [
        "(id, first_name, last_name, phone, address_line1, city)",
        "(`id`, `full_name`, `mobile`, `street`, `created_at`)",
        "(customer_id, name, tel, address, plan)",
        "(patient_id, Name, Telephone, Address, Plan)",
    ][variant % 4]
    item.add(f"INSERT INTO customers {columns} VALUES\n")
    rows = values.rng.randint(2, 5)
    for i in range(rows):
        first, last = values.person()
        street, rest = values.address()
        item.add(f"  ({i + 1}, '")
        if variant % 4 == 0:
            item.value("PERSON", first).add("', '").value("PERSON", last).add("', '").value("PHONE", values.phone())
            item.add("', '").value("ADDRESS", street).add(f"', '{rest.split(' ')[-1]}')")
        elif variant % 4 == 1:
            item.value("PERSON", f"{first} {last}").add("', '").value("PHONE", values.phone(False)).add("', '")
            item.value("ADDRESS", street).add("', '2024-02-01 09:30:00')")
        else:
            item.value("PERSON", f"{first} {last}").add("', '").value("PHONE", values.phone()).add("', '")
            item.value("ADDRESS", street).add(f", {rest}', '{values.rng.choice(PRODUCTS)}')")
        item.add(",\n" if i < rows - 1 else ";\n")
    return item


def ticket(values: Values, variant: int) -> Item:
    item = Item("ticket")
    first, last = values.person()
    street, rest = values.address()
    number = values.rng.randint(1000, 99999)
    texts: list[Callable[[], None]] = [
        lambda: (
            item.add(f"Ticket #{number} opened by ")
            .value("PERSON", f"{first} {last}")
            .add(f" ({first.lower()}@example.org).\nThe parcel for ")
            .value("ADDRESS", street)
            .add(f", {rest} never arrived. Please call back on ")
            .value("PHONE", values.phone())
            .add(".\n")
        ),
        lambda: (
            item.add(f"[#{number}] Customer: ")
            .value("PERSON", f"{first} {last}")
            .add("\nPhone: ")
            .value("PHONE", values.phone())
            .add("\nShipping address: ")
            .value("ADDRESS", street)
            .add(f", {rest}\nIssue: {values.rng.choice(PRODUCTS)} stopped syncing after 4.2.1 update.\n")
        ),
        lambda: (
            item.add("Hi team,\n")
            .value("PERSON", f"{first} {last}")
            .add(" from Northwind Traders says her invoice lists the old address. New one is ")
            .value("ADDRESS", street)
            .add(f", {rest}. Reach her at ")
            .value("PHONE", values.phone())
            .add(".\n")
        ),
        lambda: (
            item.add(f"Case {number}: spoke with Mr. ")
            .value("PERSON", last)
            .add(" about the refund; he moved to ")
            .value("ADDRESS", street)
            .add(f" ({rest}).\n")
        ),
    ]
    texts[variant % len(texts)]()
    return item


def email(values: Values, variant: int) -> Item:
    item = Item("email")
    first, last = values.person()
    agent_first, agent_last = values.person()
    street, rest = values.address()
    closing = ["Best regards,", "Kind regards,", "Thanks,", "Cheers,", "Mit freundlichen Grüßen,", "Cordialement,"][
        variant % 6
    ]
    item.add("From: ").value("PERSON", f"{first} {last}").add(f" <{first.lower()}.{last.lower()}@example.net>\n")
    item.add("To: Support Team <support@example.com>\nSubject: Order 55123 — wrong delivery address\n\n")
    item.add("Dear ").value("PERSON", agent_first).add(",\n\nmy order went to my old flat. Please use ")
    item.value("ADDRESS", street).add(f", {rest} from now on.\n\n{closing}\n").value("PERSON", f"{first} {last}")
    item.add("\nSenior Buyer, Northwind Traders\n").value("ADDRESS", street).add(f"\n{rest}\nTel: ")
    item.value("PHONE", values.phone()).add("\n")
    if variant % 2:
        item.add("\nOn Tue, ").value("PERSON", f"{agent_first} {agent_last}").add(
            " <help@example.com> wrote:\n> Thanks for reaching out.\n"
        )
    return item


def json_record(values: Values, variant: int) -> Item:
    item = Item("json")
    first, last = values.person()
    street, rest = values.address()
    product = values.rng.choice(PRODUCTS)
    if variant % 2 == 0:
        item.add('{"id": 8812, "customer": {"first_name": "').value("PERSON", first).add('", "last_name": "').value(
            "PERSON", last
        ).add('", "phone": "')
        item.value("PHONE", values.phone()).add('", "address": {"street": "').value("ADDRESS", street)
        item.add(f'", "city": "{rest}"}}}}, "product": {{"name": "{product}", "version": "4.2.1"}}}}\n')
    else:
        item.add('{"data": [{"type": "contact", "attributes": {"fullName": "').value("PERSON", f"{first} {last}")
        item.add('", "mobile": "').value("PHONE", values.phone()).add('", "shippingAddress": "').value(
            "ADDRESS", street
        )
        item.add(f', {rest}", "plan": "{product}", "updated_at": "2024-03-02T12:34:56Z"}}}}]}}\n')
    return item


def yaml_config(values: Values, variant: int) -> Item:
    item = Item("yaml")
    first, last = values.person()
    other_first, other_last = values.person()
    street, rest = values.address()
    item.add("service: billing-api\nversion: 2.14.3\noncall:\n  - name: ").value("PERSON", f"{first} {last}")
    item.add('\n    phone: "').value("PHONE", values.phone()).add('"\n')
    if variant % 2:
        item.add("  - name: ").value("PERSON", f"{other_first} {other_last}").add("\n    email: ops@example.com\n")
    item.add("owner: ").value("PERSON", f"{other_first} {other_last}") if variant % 2 == 0 else None
    item.add("\noffice:\n  address: ").value("ADDRESS", street).add(f", {rest}\n  timezone: Europe/London\n")
    return item


def log_lines(values: Values, variant: int) -> Item:
    item = Item("log")
    first, last = values.person()
    street, rest = values.address()
    item.add(values.rng.choice(NOISE) + "\n")
    if variant % 2 == 0:
        item.add('2024-03-02T10:11:12Z INFO order=4821 customer="').value("PERSON", f"{first} {last}")
        item.add('" ship_to="').value("ADDRESS", street).add(f', {rest}" status=shipped\n')
        item.add("2024-03-02T10:11:13Z INFO twilio sent to whatsapp:").value(
            "PHONE", values.phone(True).replace(" ", "")
        )
        item.add(" sid=SM1234\n")
    else:
        item.add("[2024-03-02 10:11:12] app.INFO: user ").value("PERSON", f"{first} {last}")
        item.add(" (id=42) changed address to ").value("ADDRESS", street).add(f", {rest}\n")
        item.add("[2024-03-02 10:11:14] sms.DEBUG: delivered to ").value("PHONE", values.phone(True)).add(" in 35 ms\n")
    item.add(values.rng.choice(NOISE) + "\n")
    return item


def prose(values: Values, variant: int) -> Item:
    """Names in running text with no label, header or greeting beside them: only the name lists
    can tell (the ceiling of rules without a model)."""
    item = Item("prose")
    first, last = values.person()
    other_first, other_last = values.person()
    wordings: list[Callable[[], object]] = [
        lambda: (
            item.add("Spoke to ")
            .value("PERSON", f"{first} {last}")
            .add(" yesterday; she confirmed the migration can wait until Friday.\n")
        ),
        lambda: (
            item.add("Escalated by ")
            .value("PERSON", f"{first} {last}")
            .add(": the export job fails on large tenants since 2.14.3.\n")
        ),
        lambda: (
            item.value("PERSON", f"{first} {last}")
            .add(" and ")
            .value("PERSON", f"{other_first} {other_last}")
            .add(" will review the pull request after lunch.\n")
        ),
        lambda: (
            item.add("According to ")
            .value("PERSON", f"{first} {last}")
            .add(", the staging cluster was rebuilt on Monday.\n")
        ),
    ]
    wordings[variant % len(wordings)]()
    return item


def look_alikes(values: Values, variant: int) -> Item:
    """No person and no address: step names, products, teams, capitalised phrases, numbers
    before capitalised words (every finding here is a false positive)."""
    item = Item("look-alikes")
    wordings = [
        "jobs:\n  build:\n    steps:\n      - name: Check Out Code\n      - name: Set Up Python\n"
        "      - name: Run Unit Tests\n      - name: Upload Coverage Report\n",
        '{"name": "Widget Pro", "owner": "Platform Team", "contact": "support@example.com", "tier": "Gold Plus"}\n',
        "The Release Manager approved Long Term Support for Red Hat Enterprise Linux 9; Grant Access to Data Readers.\n",
        "2024-03-02 10:11:12 INFO Mark Complete: 3 Main Tasks done, 12 Open Items left; Will Retry in 5 s.\n",
        "| Name | Owner | Status |\n|---|---|---|\n| Billing Service | Payments Team | Green |\n| Search Index | Data Team | Amber |\n",
        "INSERT INTO products (id, name, category) VALUES (1, 'Solar Kit', 'Energy'), (2, 'Garden Hose', 'Outdoor');\n",
        "Dear Customer,\nyour order 55123 has shipped.\n\nBest regards,\nThe Northwind Team\n",
        "See chapter 4 Main Concepts and 12 Best Practices; version 3 Release Notes.\n",
    ]
    # Written after the rules were tuned on the ones above, never looked at while tuning.
    held_out = [
        "steps:\n  - name: Deploy Staging Cluster\n    run: make deploy\n  - name: Notify Slack Channel\n",
        '{"items": [{"name": "Premium Support", "phone_support": true, "email": "care@example.com"}]}\n',
        "customer_name,plan,city\nAcme Holdings,Gold,Springfield\nGlobex Systems,Silver,Shelbyville\n",
        "Meeting notes: Apple Pay rollout; Google Cloud Run costs up; Amazon Web Services credits expire.\n",
        "Dear Valued Customer,\nthanks for choosing Northwind.\n\nKind regards,\nCustomer Success\n",
        "ERROR at line 42 in Parser Module: unexpected token; 7 Elm Street Fixtures loaded\n",
    ]
    item.add(wordings[variant % len(wordings)] if variant % 2 == 0 else held_out[variant // 2 % len(held_out)])
    item.add(values.rng.choice(NOISE) + "\n")
    return item


FORMS: dict[str, Callable[[Values, int], Item]] = {
    "csv": csv_export,
    "sql": sql_insert,
    "ticket": ticket,
    "email": email,
    "json": json_record,
    "yaml": yaml_config,
    "log": log_lines,
    "prose": prose,
    "look-alikes": look_alikes,
}


def items(count: int, seed: int, part: int) -> list[Item]:
    """`count` items of every form in turn, for one part (0: development, 1: held-out)."""
    values = Values(seed, part)
    out = []
    for i in range(count):
        form = list(FORMS.values())[i % len(FORMS)]
        variant = 2 * values.rng.randint(0, 5) + part  # even wordings: development; odd: held-out
        out.append(form(values, variant))
    return out
