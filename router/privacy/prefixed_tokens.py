"""Service tokens known by a prefix of their own, found on the prefix with a body of any length
from the documented one on.

A provider rule written to a token's exact length misses the token when the service lengthens
its format, and the ones in tests and examples, whose made-up bodies are rarely the right
length; a prefix as long and as particular as these (`NRII-`, `CFPAT-`, `lin_oauth_`, `PMAK-`,
`SG.` and two parts) says what the value is on its own. Gitleaks' rules take some of them only
beside the provider's name (`newrelic`, `contentful`) or at one length; some they lack. Each
core is the literal prefix, so text without one costs nothing; a stand-in in the token's shape
(`NRII-xxxx…`, a documented example, a tail typed in order) is none (validators.prefixed_token).
"""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.detector import Detector

# A body: letters, digits, `_` and `-`, from the documented length on, up to a sane bound.
_BODY = "[A-Za-z0-9_-]"
_END = r"(?![\w-])"

DETECTORS: tuple[Detector, ...] = (
    Detector(
        "API_KEY",
        # New Relic's user, admin, REST API, insert and query keys (`NRAK-`, `NRAA-`, `NRRA-`,
        # `NRII-`, `NRIQ-`; not the browser's `NRJS-`, written into web pages); Contentful's
        # personal access tokens; Linear's OAuth tokens; Mapbox's secret tokens (`sk.eyJ…`, a
        # JSON head in base64, then a dot and a signature; its `pk.` tokens are public).
        re.compile(
            rf"(?<![\w-])(?:NR(?:AK|AA|RA|II|IQ)-{_BODY}{{27,80}}|CFPAT-{_BODY}{{43,100}}"
            rf"|lin_oauth_[A-Za-z0-9]{{64,100}}|sk\.eyJ[A-Za-z0-9_-]{{20,400}}\.[A-Za-z0-9_-]{{20,100}}){_END}"
        ),
        rb"NR(?:AK|AA|RA|II|IQ)-|CFPAT-|lin_oauth_|sk\.eyJ",
        validate=validators.prefixed_token,
        reach=520,
        keyword_core=10,
        rule="prefixed-service-token",
    ),
    Detector(
        "PAYMENT_KEY",
        # Flutterwave's secret keys, live and test (`FLWSECK-…-X`; its `FLWPUBK` keys are
        # public), Amazon Marketplace Web Service's auth tokens (`amzn.mws.` and a UUID), Global
        # Payments' (Heartland's) secret API keys (`skapi_cert_…`, `skapi_prod_…`).
        re.compile(
            rf"(?<![\w-])(?:FLWSECK(?:_TEST)?-[A-Za-z0-9-]{{24,80}}|amzn\.mws\.[A-Za-z0-9-]{{36,60}}"
            rf"|skapi_(?:cert|prod)_{_BODY}{{20,100}}){_END}"
        ),
        rb"FLWSECK|amzn\.mws\.|skapi_(?:cert|prod)_",
        validate=validators.prefixed_token,
        reach=120,
        keyword_core=12,
        rule="prefixed-payment-key",
    ),
    Detector(
        "CODE_TOKEN",
        # A Python package index's upload token, any index's (a macaroon: `pypi-AgE` then the
        # index's host in base64, `test.pypi.org`, a private index's), as twine and uv are given
        # them; Postman's API keys (`PMAK-`, 24 and 34 hex digits at least).
        re.compile(rf"(?<![\w-])(?:pypi-AgE{_BODY}{{50,1000}}|PMAK-[A-Za-z0-9]{{24}}-[A-Za-z0-9]{{34,80}}){_END}"),
        rb"pypi-AgE|PMAK-",
        validate=validators.prefixed_token,
        reach=1010,
        keyword_core=8,
        rule="prefixed-code-token",
    ),
    Detector(
        "MESSAGING_TOKEN",
        # SendGrid's API keys (`SG.`, 22 characters, a dot, 43 or more); Firebase Cloud
        # Messaging's server keys and device registration tokens (`AAAA…:APA91b…`: the key sends
        # to every device of the app, the token is one device's address for it).
        re.compile(
            r"(?<![\w.-])(?:SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43,100}"
            r"|[A-Za-z0-9_-]{7,11}:APA91b[A-Za-z0-9_-]{100,400})(?![\w-])"
        ),
        rb"SG\.[A-Za-z0-9_-]{22}\.|:APA91b",
        validate=validators.prefixed_token,
        reach=420,
        lead=12,
        keyword_core=28,
        rule="prefixed-messaging-token",
    ),
    Detector(
        "CLOUD_KEY",
        # Terraform Cloud's (HCP Terraform's) API tokens: an id, `.atlasv1.`, the secret.
        re.compile(r"(?<![\w.-])[A-Za-z0-9]{6,20}\.atlasv1\.[A-Za-z0-9_=-]{40,120}(?![\w-])"),
        rb"\.atlasv1\.",
        validate=validators.prefixed_token,
        reach=130,
        lead=20,
        keyword_core=9,
        rule="prefixed-cloud-token",
    ),
)
