"""The fixed vocabulary of kinds of sensitive value.

Every detector (Tandem's own, the provider secret rules, an optional backend) reports one of
these kinds; placeholders (`[EMAIL_1]`), `privacy_weights` and the `type` label of the privacy
metrics use them, so the label set stays small however many rules there are. The rule that
found a value is kept beside it (`Finding.rule`) for evaluation and logs.
"""

from __future__ import annotations

KINDS: tuple[str, ...] = (
    "EMAIL",
    "PHONE",
    "CARD",
    "IBAN",
    "US_SSN",
    "NATIONAL_ID",  # a national id, tax or insurance number other than the US SSN; a passport's, a licence's
    "IP_ADDRESS",
    "URL_CREDENTIALS",  # a URL with a user and password
    "PRIVATE_KEY",
    "JWT",
    "CLOUD_KEY",  # cloud and infrastructure providers (AWS, Google, Azure, Cloudflare, …)
    "CODE_TOKEN",  # code hosting, CI, package registries, developer tools
    "AI_KEY",  # model providers
    "MESSAGING_TOKEN",  # chat, mail, social and webhook services
    "PAYMENT_KEY",  # payment, commerce and exchange services
    "API_KEY",  # any other provider's key
    "SECRET_ASSIGNMENT",  # a high-entropy value assigned to a password/secret/token/key name
    "ENCODED_SECRET",  # a base64 value whose decoded text holds a secret (router/privacy/encoded.py)
    "PERSON",  # a person's name: opt-in per route (`privacy_detect: [person]`) or a backend
    "ADDRESS",  # a postal address: opt-in per route (`privacy_detect: [address]`), or a place (Presidio)
)
