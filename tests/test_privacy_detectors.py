"""The detector set at the field's standard: library-validated phones and ids, provider secret
rules, one small vocabulary of kinds, precision on code and logs, bounded time on bad input."""

from __future__ import annotations

import time
from typing import Any

import pytest

from router.privacy import detect as detection
from router.privacy.detect import DETECTORS, detect
from router.privacy.kinds import KINDS
from router.privacy.secret_rules import RULES


def found(text: str) -> list[tuple[str, str]]:
    return [(f.type, f.value) for f in detect(text)]


def test_every_rule_maps_onto_the_small_vocabulary() -> None:
    assert len(KINDS) <= 20
    assert {d.type for d in DETECTORS} <= set(KINDS)
    assert len(RULES) >= 100 and len({rule[0] for rule in RULES}) == len(RULES)


FOUND = [
    # Phones: international, national with separators, or beside a label (libphonenumber).
    ("PHONE", "call +44 20 7946 0958 after 5", "+44 20 7946 0958"),
    ("PHONE", "office (415)555-2671", "(415)555-2671"),
    ("PHONE", "dial 001-415-555-2671", "001-415-555-2671"),
    ("PHONE", "phone 4155552671", "4155552671"),
    ("PHONE", "Tel. 030 12345678", "030 12345678"),
    ("PHONE", "portable 06 12 34 56 78", "06 12 34 56 78"),
    ("PHONE", "móvil 612 345 678", "612 345 678"),
    ("PHONE", "cell 098765 43210", "098765 43210"),
    ("PHONE", "电话 138 0013 8000", "138 0013 8000"),
    ("PHONE", "電話 03-1234-5678", "03-1234-5678"),
    ("PHONE", "celular (11) 91234-5678", "(11) 91234-5678"),
    # Cards: 15-digit JCB, 12-digit Maestro beside a card word.
    ("CARD", "card 2131 0000 0000 001", "2131 0000 0000 001"),
    ("CARD", "maestro 501800000009", "501800000009"),
    # Mastercard's 2-series ends at 2720: 16 digits, like the rest of the series.
    ("CARD", "card 2720 9900 0000 0007", "2720 9900 0000 0007"),
    # A number a sentence calls a card's, its check digit or issuer range wrong (mistyped, made up).
    ("CARD", "card number 3598899323053410 is lost", "3598899323053410"),
    ("CARD", "my credit card 4111 1111 1111 1112 was declined", "4111 1111 1111 1112"),
    ("CARD", "the last billed amount for cc 3509413199654323", "3509413199654323"),
    # IBANs of the full registry, printed in groups.
    ("IBAN", "IBAN ES91 2100 0418 4502 0005 1332", "ES91 2100 0418 4502 0005 1332"),
    ("IBAN", "iban: NO9386011117947", "NO9386011117947"),
    # National ids (python-stdnum): distinctive shapes alone, plain digit runs beside a label.
    ("NATIONAL_ID", "codice fiscale RSSMRA85T10A562S", "RSSMRA85T10A562S"),
    ("NATIONAL_ID", "CPF 390.533.447-05", "390.533.447-05"),
    ("NATIONAL_ID", "NIE X-1234567-L", "X-1234567-L"),
    ("NATIONAL_ID", "BSN 111222333", "111222333"),
    ("NATIONAL_ID", "Aadhaar 2345 6789 0124", "2345 6789 0124"),
    ("NATIONAL_ID", "PAN ABCPE1234F", "ABCPE1234F"),
    ("NATIONAL_ID", "주민등록번호 900101-1234568", "900101-1234568"),
    ("NATIONAL_ID", "NHS number 943 476 5919", "943 476 5919"),
    # UK National Insurance numbers beside their label, US ITINs as they are written (dashed).
    ("NATIONAL_ID", "National Insurance No. AB123456C", "AB123456C"),
    ("NATIONAL_ID", "employee,ni number\n4411,NI number: JG 10 37 59 A", "JG 10 37 59 A"),
    ("NATIONAL_ID", "ITIN 912-70-1234 on the W-7", "912-70-1234"),
    # Forms from Presidio's recognizer tests: a Swedish personnummer with its century (with a
    # hyphen alone, 12 plain digits beside a label), documents named in Spanish and German.
    ("NATIONAL_ID", "19910924-2397 är mitt pnr.", "19910924-2397"),
    ("NATIONAL_ID", "Here's my personnummer 200109022392.", "200109022392"),
    ("NATIONAL_ID", "Mi pasaporte es AAA123456", "AAA123456"),
    ("NATIONAL_ID", "Pass-Nr.: F12345671", "F12345671"),
    ("NATIONAL_ID", "Fahrerlaubnis MU12345678B wurde ausgestellt.", "MU12345678B"),
    # Turkish and Thai national ids (strong checks, but plain digits: beside a label only).
    ("NATIONAL_ID", "TC Kimlik No: 10000000146", "10000000146"),
    ("NATIONAL_ID", "Başvuru sahibinin TCKN numarası 10000000146 olarak", "10000000146"),
    ("NATIONAL_ID", "Thai National ID 1234567890121", "1234567890121"),
    ("NATIONAL_ID", "เลขบัตรประชาชน 2345678901234", "2345678901234"),
    # A Korean RRN issued since October 2020 has no check digit: beside a label it stands.
    ("NATIONAL_ID", "His Korean RRN is 960121-1234567", "960121-1234567"),
    ("NATIONAL_ID", "주민등록번호: 000505-3637892", "000505-3637892"),
    # An IPv4 address at a sentence's end; a Dankort card.
    ("IP_ADDRESS", "unknown lease 10.100.4.251.", "10.100.4.251"),
    ("IP_ADDRESS", "The server is at 203.0.113.7. It is down.", "203.0.113.7"),
    ("CARD", "paid with 5019 7170 1010 3742 on Monday", "5019 7170 1010 3742"),
    # A password after a bare `PASS:` alone on its line (a credentials note, not a test status).
    ("SECRET_ASSIGNMENT", "USER: bob\nPASS: hunter22\n", "hunter22"),
    ("SECRET_ASSIGNMENT", "my password is Fake!2024x", "Fake!2024x"),
    # Provider keys (gitleaks' rule data and Tandem's own).
    ("CLOUD_KEY", "aws_access_key_id=ABIAIOSFODNN7EXAMPLQ", "ABIAIOSFODNN7EXAMPLQ"),
    (
        "MESSAGING_TOKEN",
        "SLACK_APP_TOKEN=xapp-1-A0123456789-1234567890123-abcdef",
        "xapp-1-A0123456789-1234567890123-abcdef",
    ),
    ("PAYMENT_KEY", "stripe sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"),
    ("AI_KEY", "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
    ("CODE_TOKEN", "glpat-xYz12345678901234567 for gitlab", "glpat-xYz12345678901234567"),
    (
        "JWT",
        "token eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0. done",
        "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.",
    ),
    # Assignments with quoted and escaped values, and passwords in prose.
    ("SECRET_ASSIGNMENT", "SECRET_KEY = '192b9bdd22ab9ed4d12e236c78afcb9a'", "192b9bdd22ab9ed4d12e236c78afcb9a"),
    ("SECRET_ASSIGNMENT", "app.secret_key = b'_5#y2L\"F4Q8z'", '_5#y2L"F4Q8z'),
    ("SECRET_ASSIGNMENT", 'password: "open {sesame} $42"', "open {sesame} $42"),
    ("SECRET_ASSIGNMENT", "the password for bob is Xy7!kq2m, keep it", "Xy7!kq2m"),
    # Short prose passwords, PINs, and what a sentence says a password was set to.
    ("SECRET_ASSIGNMENT", "My password is hunter2, can you log in?", "hunter2"),
    ("SECRET_ASSIGNMENT", "my PIN is 4821.", "4821"),
    ("SECRET_ASSIGNMENT", "Your password has been reset to Xy7#kq2m.", "Xy7#kq2m"),
    ("SECRET_ASSIGNMENT", "the password is: S3cure!Pass", "S3cure!Pass"),
    ("SECRET_ASSIGNMENT", "passcode was “7Rq-44x”", "7Rq-44x"),
    # Forms of detect-secrets' keyword tests: a secret compared with its name (either side), a C
    # array, an Objective-C string, the name `secrete`.
    ("SECRET_ASSIGNMENT", 'if (api_key == "Xk29aLqZp0Wm") {', "Xk29aLqZp0Wm"),
    ("SECRET_ASSIGNMENT", 'if (db_pass !== "m{{h}o)p${e]nob(ody") {', "m{{h}o)p${e]nob(ody"),
    ("SECRET_ASSIGNMENT", 'if ("Xk29aLqZp0Wm" === my_private_key) {', "Xk29aLqZp0Wm"),
    ("SECRET_ASSIGNMENT", 'char secrete[25] = "Xk29aLqZp0Wm";', "Xk29aLqZp0Wm"),
    ("SECRET_ASSIGNMENT", 'password = @"Xk29aLqZp0Wm";', "Xk29aLqZp0Wm"),
    # A name with words after the secret's, its value a secret's look.
    ("SECRET_ASSIGNMENT", 'apikey_myservice: "m{{h}o)p${e]nob(ody"', "m{{h}o)p${e]nob(ody"),
    ("SECRET_ASSIGNMENT", 'DB_PASSWORD_PROD = "Xk29aLqZp0Wm!"', "Xk29aLqZp0Wm!"),
    # A fallback written into code (whispers' fixtures), a value shaped as a name but generated.
    (
        "SECRET_ASSIGNMENT",
        'const STATIC_TOKEN = process.env.API_TOKEN || "ea3314920e4ed4dabb16b8a44254958a01";',
        "ea3314920e4ed4dabb16b8a44254958a01",
    ),
    ("SECRET_ASSIGNMENT", 'api_key = os.getenv("API_KEY", "sk9a8s7d6f5g4h3j2k1l")', "sk9a8s7d6f5g4h3j2k1l"),
    ("SECRET_ASSIGNMENT", "apikey: YXNkZmZmZmZm_HARDcoded", "YXNkZmZmZmZm_HARDcoded"),
    # A name field holding a secret's name, its value field after it (Kubernetes, ECS, Postman).
    ("SECRET_ASSIGNMENT", 'env:\n  - name: DB_PASSWORD\n    value: "s3cr3tP4ssw0rd!"\n', "s3cr3tP4ssw0rd!"),
    ("SECRET_ASSIGNMENT", '{"key": "token", "value": "ab12cd34ef56gh78ij90"}', "ab12cd34ef56gh78ij90"),
    # A Ruby symbol as the name (an ARN's `:secret:` is none).
    (
        "SECRET_ASSIGNMENT",
        'auth = {:user => "admin", :token => "ea3314920e4ed4dabb16b8a4425"}',
        "ea3314920e4ed4dabb16b8a4425",
    ),
    # An XML element named as a key, holding a generated value.
    ("SECRET_ASSIGNMENT", "<GITLAB_KEY>glx8a7sd6f5g4h3j2k1l</GITLAB_KEY>", "glx8a7sd6f5g4h3j2k1l"),
    # Declarations typed as strings (Go, Kotlin, Scala, Python), an f-string, a password's hash.
    ("SECRET_ASSIGNMENT", 'const STATIC_TOKEN string = "ea3314920e4ed4dabb16b8a4425"', "ea3314920e4ed4dabb16b8a4425"),
    ("SECRET_ASSIGNMENT", 'val API_TOKEN:String = "ea3314920e4ed4dabb16b8a4425"', "ea3314920e4ed4dabb16b8a4425"),
    ("SECRET_ASSIGNMENT", 'auth = password == f"Xk29aLqZp0Wm"', "Xk29aLqZp0Wm"),
    ("SECRET_ASSIGNMENT", "$config['db'][$passcode] = 'Xk29aLqZp0Wm';", "Xk29aLqZp0Wm"),
    (
        "SECRET_ASSIGNMENT",
        "admin:$apr1$l0cpzs5a$vQK3lmgMGvcXcRP8b0y1Z/",
        "$apr1$l0cpzs5a$vQK3lmgMGvcXcRP8b0y1Z/",
    ),
    # A Telegram bot token by its shape, a Discord one under a secret's name (its dotted parts
    # generated, no attribute path); a Mailchimp key with its data centre.
    (
        "MESSAGING_TOKEN",
        "bot 110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw",
        "110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw",
    ),
    (
        "SECRET_ASSIGNMENT",
        "DISCORD_BOT_TOKEN=MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
        "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    ),
    ("API_KEY", "key 343ea45721923ed956e2b38c31db76aa-us30", "343ea45721923ed956e2b38c31db76aa-us30"),
    # Tokens of hosting, developer-tool, payment and model services by their published
    # prefixes (values of our own making).
    *(
        (kind, f"export TOKEN_VALUE={value}  # from the dashboard", value)
        for kind, value in (
            ("CLOUD_KEY", "cfat_aUANbbO0zC6KlgH0JPRe7O8RqjJbzBz5AvYovgcm1rVuH24K"),
            ("CLOUD_KEY", "vcp_m6QGRy9fEBfMKaGVu1WRMHNQWGDpedwFAdmihHWY5g3SLxnmBNMr1Co5"),
            ("CLOUD_KEY", "nfp_2pSD5i7IEmgKYVO1ko9vAnNa0aRQruusfcQY"),
            ("CLOUD_KEY", "HRKU-lDuv1ZNFE27bemvB7KuIFW1MOlKE2YsaeDio-m_7UmE6dQR4lJfPRzesrc98"),
            ("CLOUD_KEY", "sbp_c7ec090d7d3fdd49ff311309ae654d8d8fe7c6a2"),
            ("CLOUD_KEY", "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"),
            (
                "CLOUD_KEY",
                "SWMTKN-1-xul5pv4xg4kwcscrsueg0h5fa06b71hy8mxl6qvnrva8sasqv1-l2py2q6sorags63fdr28llpyx",
            ),
            ("CLOUD_KEY", "NRAK-6FNKHNWZRGWNZSP2BLS8PYNOUGF"),
            ("CODE_TOKEN", "dckr_pat_NXWrAYJG05n_970l_SXgruTt9B-"),
            ("CODE_TOKEN", "figd_XykW9vOccjQp_5zkk49ND-auT8VZpaMJmXzQrybW"),
            ("CODE_TOKEN", "ATBBZJjhO8blWJsFPGfpXdQVhSLC2M5drtfi"),
            ("CODE_TOKEN", "PMAT-V9FIJ373D95VSPX2XBXGZHFSMI"),
            ("PAYMENT_KEY", "whsec_OO9dvvs1CdEtZi9HnCJ6gY9VJGpHhiJa"),
            ("AI_KEY", "tgp_v1_ZWrNnRV1u3Mo32hGSQ7dgo3VNAf9Nk0pCnR2eXuUVga"),
            ("AI_KEY", "llx-OE50Pdz3JbAzOicBNXJ5zcbsueUTWlrEUUEOg88SAtuGbKGH"),
            ("AI_KEY", "bedrock-api-key-Gf1rB853IgN95Dci7xD93lgWk7J6rWs7"),
            ("CLOUD_KEY", "ops_eyJGPzEyoL8EsaJd-wyXxQPplH8ACyjkz4jmBQlm7knI4pShZFC8ZrXbeg-fT3p"),
            ("CLOUD_KEY", "akab-q65d4gjt7fb5w0ad-4jbapf3hy4gipqnf"),
            ("CLOUD_KEY", "dnkey-KKJBDOY27RG62SRS5MB7ECBJAF-GNF3KGYS57ZM3QSFUUMRX6ZZQYTFRGJIXDNDBHIRKVDYFTFX5AD4"),
            ("CLOUD_KEY", "SWMKEY-1-9APP8Dy+3XzZmBNQR2yTBGTCuSsH5LM/Em9iJLwbL13"),
            ("CODE_TOKEN", "BBDC-V1jFzYI20eBahcyXic6YOZq0M7qO60lI5QfecJUyGTel"),
            ("CODE_TOKEN", "glrtr-2Zn4T8_WvXX2HdNK44cj"),
            (
                "CODE_TOKEN",
                "sntrys_eyJQQYK8TUkl1JYnrw8tdVIIfHmxOCTQE8phIECUyUALDgxkhOFosZYG9uVqv8ExVuo5Zbcb99JpX9M02bB",
            ),
            ("API_KEY", "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"),
            ("API_KEY", "phx_3f8nUVRBoMFTXptvp7WhPvFMKFl8zE8Ajlb0cdkbx9ZFqJD"),
            ("API_KEY", "cosmo_3b80598e7d8a50f510dc6c4393a96e78"),
        )
    ),
    # Command lines: flags in any case and with words before them, PowerShell's parameters and
    # SecureStrings; C macros, RPM spec macros, batch SET, libcurl's options.
    ("SECRET_ASSIGNMENT", "gpg --batch --passphrase Qm4!zR8tLw file.gpg", "Qm4!zR8tLw"),
    ("SECRET_ASSIGNMENT", "deploy --Password Xc7$pW2nKe", "Xc7$pW2nKe"),
    ("SECRET_ASSIGNMENT", "agent --super-secret_token 5e8f1c2a-9b7d-4e3f", "5e8f1c2a-9b7d-4e3f"),
    (
        "SECRET_ASSIGNMENT",
        'New-LocalUser -Name svc -Password (ConvertTo-SecureString "Wn5#kTq8Lz" -AsPlainText -Force)',
        "Wn5#kTq8Lz",
    ),
    ("SECRET_ASSIGNMENT", '#define DB_PASSWORD "Rt6@hVm3Qs"', "Rt6@hVm3Qs"),
    ("SECRET_ASSIGNMENT", "%define api_token 7d3f9a1c5e2b8a4f", "7d3f9a1c5e2b8a4f"),
    ("SECRET_ASSIGNMENT", 'SET password "Kp2.bat93Xv"', "Kp2.bat93Xv"),
    ("SECRET_ASSIGNMENT", 'curl_easy_setopt(c, CURLOPT_USERPWD, "admin:Jz4%nQw8Yt");', "admin:Jz4%nQw8Yt"),
    # A key's name written as words; a single dash before a secret's name, at a line's start.
    ("SECRET_ASSIGNMENT", "SECRET KEY:Bq7Xyb1Gga9Q3zT", "Bq7Xyb1Gga9Q3zT"),
    ("SECRET_ASSIGNMENT", "Authentication key: Bq7Xyb1Gga9Q35", "Bq7Xyb1Gga9Q35"),
    ("SECRET_ASSIGNMENT", 'run it with\n-password "Nw4#pLr2Xs"', "Nw4#pLr2Xs"),
    ("SECRET_ASSIGNMENT", "tool -secret Bq7Xyb1Gga9Q10", "Bq7Xyb1Gga9Q10"),
    # SQL with the password unquoted.
    ("SECRET_ASSIGNMENT", "ALTER USER app IDENTIFIED BY Zp4rT8wQx2;", "Zp4rT8wQx2"),
    ("SECRET_ASSIGNMENT", "CREATE ROLE app_admin WITH LOGIN PASSWORD Hw7kR2mQz9;", "Hw7kR2mQz9"),
    # The short ways to write `password`, in login notes and scripts.
    ("SECRET_ASSIGNMENT", "ID:admin,PW:Vq7#mLr2Tz", "Vq7#mLr2Tz"),
    ("SECRET_ASSIGNMENT", "export DB_PSWD=k8Yt1Jnv0-zQ", "k8Yt1Jnv0-zQ"),
    ("SECRET_ASSIGNMENT", 'smtp_pw: "Hq3!xLp9Wd"', "Hq3!xLp9Wd"),
    ("SECRET_ASSIGNMENT", "ADMIN_PSWRD:=Fl7geGe8eImEn05", "Fl7geGe8eImEn05"),
    ("SECRET_ASSIGNMENT", "passwords:Tq4#nLw8Rz", "Tq4#nLw8Rz"),
    # Coloured terminal output: a colour code's final letter stuck to a key, codes between a
    # name and its value, and the same codes as a JSON string escapes them.
    ("AI_KEY", "key: \x1b[93msk-proj-Zk3Qw7Rt9Yp2Ls5Dn8Hm1Vc4Ab12\x1b[0m", "sk-proj-Zk3Qw7Rt9Yp2Ls5Dn8Hm1Vc4Ab12"),
    ("SECRET_ASSIGNMENT", "\x1b[1mpassword\x1b[0m=\x1b[32mXk29aLqZp0Wm!\x1b[0m", "Xk29aLqZp0Wm!"),
    (
        "AI_KEY",
        '{"stdout": "\\u001b[93msk-proj-Zk3Qw7Rt9Yp2Ls5Dn8Hm1Vc4Ab12\\u001b[0m \\"ok\\""}',
        "sk-proj-Zk3Qw7Rt9Yp2Ls5Dn8Hm1Vc4Ab12",
    ),
]


@pytest.mark.parametrize(("kind", "text", "value"), FOUND)
def test_found(kind: str, text: str, value: str) -> None:
    assert (kind, value) in found(text), found(text)


def test_private_pgp_key_block() -> None:
    block = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0x\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----"
    assert found(f"key:\n{block}\n") == [("PRIVATE_KEY", block)]


NOT_FOUND = [
    "Version 10.0.19041.1 and pkg==1.2.3.4 and Chrome/120.0.61.109 and build 4.3.2.1",
    "message id 1143291876543219712 from discord",  # a snowflake id, not a card
    "self._cv_token = _cv_app.set(self)",
    "token = some_call(x)",
    "password = user.password",
    "api_key = get_api_key()",
    "DB_PASSWORD=${DB_PASSWORD} and secret: {{ secret }} and token: $TOKEN",
    "password: '<your password here>' and SECRET_KEY = 'changeme'",
    "the password is required",
    "the password is incorrect; password is too short (min 8) and Password is 8 characters long",
    "if password is not None and pin is valid: password was changed to ********",
    "The PIN is 0000. GPIO pin 5 is high; set pin 13 to OUTPUT; pin: 17",
    "password is md5(salt+pw)",
    "Authorization: Bearer abc.def",  # a bearer token is 8 characters or more
    # Not said to be a card's, too short for one unchecked, or not a card industry's digits.
    "ticket 3598899323053410, company 3598899323053410, Trello card 4398046511104 moved",
    "card 1700000000000000 and card 5555-5555-5555-5555",
    "2026-11-29 12:00:01 took 1732891234567 ms, order 20261129120001",
    "commit 4f3a2b1c9d8e7f60a1b2c3d4e5f60718293a4b5c merged",
    "account 1234 5698 7654 32 and GB00 WEST 1234 5698 7654 32",
    # Part and order codes in a NINO's shape without its label; HMRC's example prefix (QQ); an
    # ITIN's filler.
    "part AB123456C in stock, order JG103759A shipped; NI number: QQ 12 34 56 C",
    "ITIN: 999-99-9999 (placeholder) and 912-70-0000",
    # A dotted run longer than an address's, an address inside a host name, 12 digits that are a
    # time with no label, `pass` as a verb.
    "see 192.168.1.1.1 and 10.0.0.5.example.com; built 202401051234; the pass nr 12 is fine",
    "order 10000000146 shipped; trace 1234567890121",  # valid Turkish and Thai ids, unlabelled
    # From public agent runs: a test's status line, a literal read out of escaped text, values
    # that say they are fake, an RFC's section number at a sentence's end.
    'print("PASS: .a/foo.py was ignored")',
    "if username is None or password is None:\\\n    return",
    "SECRET_KEY = 'fake-key'; token: 'dummy_secret_123'; password: 'not-a-real-password'",
    "Parse a date format as specified by HTTP RFC7231 section 7.1.1.1.",
    # An RRN's shape with a wrong check digit and no label, a label before a date that is none.
    "ref 960121-1234567; RRN: 961321-1234567",
    # A comparison with a name or an unquoted value is code; a value of symbols alone, `fake`
    # inside a value, an attribute path under a secret's name.
    'if token == expected_token12: pass; if ("Xk29" == password) {',
    'password = ",.:-@*?!" and password = "somefakekey"',
    "token = self.settings.credentials_provider_name; secret_key=app.config.secretKeyRotation2",
    "password = models.CharField(max_length=100)",
    # Names with words after the secret's that name something else, or values that are no secret.
    'password_hash = "5f4dcc3b5aa765d61d8327deb882cf99"; token_count: "abc123def456"',
    "pgpass_string = 'somehost:444:dbname:%s:%s' % (username, password)",
    'password_super_secure = "value with quotes and spaces"; secret_name = "prod-db-secret-2"',
    # A fallback that is no literal, or a call's argument with no fallback; a variable's name.
    'token = request.headers.get("Authorization", "") or default_token; token = f(bar, "sk9a8s7d6f5g4h3j2k1l")',
    "token: some_variable_name; api_key = getApiKeyFromHeader",
    # Format strings' slots, an escaped reference, shell positional arguments.
    'password = "prefix_{}".format(n); secret_key = "host:5432:db:%s"; password: $${PYPI_PASSWORD}',
    'echo "$1$2$3" and $6$x',
    # A plist's key names a setting; a public key is public.
    "<key>CFBundleIdentifier</key><PublicKey>MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA</PublicKey>",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf1234",
    # A secret's name whose value comes from elsewhere, or a name field of no secret.
    "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}\n- name: DB_HOST\n  value: db.internal",
    # A Stripe publishable key: public by design.
    "Stripe.setPublishableKey('pk_live_j5krY8XTgIcDaHDb3YrsAfCl')",
    # A macro's number, length or initialiser; a flag's file; a variable.
    "#define PASSWORD_LEN 32\n#define TOKEN_MAX 16\n#define PASSWORD 0x0dead1beef7cafe2\n#define password {0x48,",
    "cmd --password-file /etc/pw; Get-Credential -Password $secure; set password expiry",
    # A key's name in words before a placeholder, a name or words.
    "the API key: your-api-key-here; Access key: ACCESS_KEY_ID; a secret key: is needed",
    # SQL's keywords and prose after the same words.
    "ALTER USER scott IDENTIFIED BY VALUES; CREATE ROLE r WITH LOGIN PASSWORD NULL;",
    "The field can be identified by `field.primary_key`; users are identified by their e-mail address.",
    # `pw` names no secret where its value is code or a type.
    "pw = getpass.getpass(); pw: str = field(default_factory=str)",
    # Service tokens' shapes filled in by hand: a documented example, a typed tail.
    "docker login -u me --password-stdin <<< dckr_pat_EXAMPLE-EXAMPLE-EXAMPLE-123",
    "the sample sbp_c7ec090d7d3fdd49ff311309ae654d8d8fabcdef from the docs",
    "tgp_v1_ZWrNnRV1u3Mo32hGSQ7dgo3VNAf9Nk0pCnR2xxxxxxxxxx",
]


@pytest.mark.parametrize("text", NOT_FOUND)
def test_not_found(text: str) -> None:
    assert found(text) == []


def _scan_seconds(text: str) -> tuple[float, list[Any]]:
    started = time.process_time()
    findings = detect(text)
    return time.process_time() - started, findings


@pytest.mark.parametrize(
    "text",
    [
        "\x00\x01\x02binary\xff\xfe" * 1000,
        b"\xff\xfe\xfd invalid utf-8 a@b.example".decode("utf-8", "surrogateescape"),
        "1" * 2_000_000,
        "a" * 2_000_000 + "@",
        "a@" * 500_000,
        "1 " * 1_000_000,
        "+1" * 1_000_000,
        ("x" * 1_000_000 + " jane@example.com ") * 50,  # 50 MB on one line
    ],
)
def test_bad_input_is_bounded_and_never_raises(text: str) -> None:
    # The half is scanned first: the first scan of a process pays once for what later scans
    # reuse (the scanner's tables, the allocator growing to tens of MB), which would otherwise
    # land on the full text's side of the ratio.
    half = _scan_seconds(text[: len(text) // 2])[0] if len(text) >= 1_000_000 else 0.0
    elapsed, findings = _scan_seconds(text)
    if "jane@" in text:
        assert len(findings) == 50
    # Linear: about 1 µs per character even where every position is a candidate (digits split
    # by spaces), ~0.1 µs on ordinary text. A loaded machine slows both halves of the check
    # alike: twice the text takes about twice the time (a quadratic scan would take four
    # times), and the absolute bound leaves room for a busy CI core.
    assert elapsed < 0.5 + 5 * len(text) / 1e6, elapsed
    if half and elapsed >= 3 * half + 0.25:
        elapsed = min(elapsed, _scan_seconds(text)[0])  # once more before failing: a quadratic stays so
    if half:
        assert elapsed < 3 * half + 0.25, (elapsed, half)


def test_backends_plug_in_and_take_free_places(monkeypatch: pytest.MonkeyPatch) -> None:
    def names(text: str) -> list[detection.Finding]:
        start = text.find("Ada Lovelace")
        return [detection.Finding("PERSON", "Ada Lovelace", start, start + 12, "test")] if start >= 0 else []

    monkeypatch.setattr(detection, "_BACKENDS", [])
    detection.register(names)
    assert found("Ada Lovelace <ada@example.com>") == [("PERSON", "Ada Lovelace"), ("EMAIL", "ada@example.com")]


def test_a_text_sent_again_is_not_scanned_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: trajectories resend the same texts (system prompts); each is scanned once while
    it is kept, with the same findings, and scanned afresh once the backends change."""
    scanned: list[str] = []
    real = detection._own

    def counting(text: str, data: bytes) -> list[detection.Finding]:
        scanned.append(text)
        return real(text, data)

    monkeypatch.setattr(detection, "_own", counting)
    # Unseen by the cache of earlier tests, and letters only: a run of digits (an object's id)
    # may pass a national id's checksum (a French NIR has 15 digits).
    text = "You are an agent. Mail ops@example.com when stuck. " + "".join(chr(97 + int(d)) for d in str(id(scanned)))
    first = detection.detect(text)
    again = detection.detect("".join([text[:10], text[10:]]))  # an equal text, another object
    assert again == first and [f.value for f in first] == ["ops@example.com"]
    assert scanned == [text]
    again.clear()  # a caller's list is its own
    assert detection.detect(text) == first

    def names(text: str) -> list[detection.Finding]:
        return [detection.Finding("PERSON", "agent", 12, 17, "test")] if "agent" in text else []

    monkeypatch.setattr(detection, "_BACKENDS", [])
    detection.register(names)
    assert [f.type for f in detection.detect(text)] == ["PERSON", "EMAIL"]
    assert len(scanned) == 2


def test_presidio_backend_is_off_by_default_and_a_clear_error_when_missing() -> None:
    from router.privacy import backends
    from router.settings import Settings

    assert Settings().privacy_backends == []
    with pytest.raises(RuntimeError, match="presidio-analyzer is not installed"):
        backends.enable(["presidio"])


def test_scans_from_many_threads_at_once_find_the_same_values() -> None:
    """Hyperscan's scratch space serves one scan at a time: threads must not share one."""
    from concurrent.futures import ThreadPoolExecutor

    from router.privacy.detect import detect

    text = "write to alice.smith@example.com or bob@example.org, card 4111 1111 1111 1111 " * 200
    expected = sorted((f.type, f.value) for f in detect(text))
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: sorted((f.type, f.value) for f in detect(text)), range(64)))
    assert expected and all(result == expected for result in results)
