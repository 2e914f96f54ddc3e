"""Credentials of hosting platforms and smaller clouds that no name beside the value gives away:
Backblaze B2's application key as `b2 authorize-account`'s second argument, Fly.io's
macaroon tokens (`FlyV1 fm2_…`, a space inside), Doppler's tokens (`dp.st.prd.…`: service,
personal, CLI, service-account, SCIM and audit tokens) and Algolia's key as `algoliasearch`'s
second argument (its admin and search keys share a shape; the index's owner decides which a
page may show, so both are taken, as gitleaks' Algolia rule takes them)."""

from __future__ import annotations

import re

from router.privacy.credentials import ARG, command_rule
from router.privacy.detector import Detector

DETECTORS: tuple[Detector, ...] = (
    command_rule(
        "b2-application-key",
        r"\bb2[ \t]+authorize[-_]account(?:[ \t]+--\w[\w-]*)*[ \t]+[0-9a-fA-F]{12,40}[ \t]+" + ARG,
        rb"b2[ \t]+authorize[-_]account[ \t]",
        24,
    ),
    Detector(
        "API_KEY",
        re.compile(r"(?<![\w-])(FlyV1[ \t]+fm[12][a-z]?_[A-Za-z0-9_+/=,.-]{20,4096})"),
        rb"FlyV1[ \t]+fm[12]",
        group=1,
        reach=4100,
        rule="fly-token",
        keyword_core=10,
    ),
    Detector(
        "API_KEY",
        re.compile(
            r"(?<![\w.])(dp\.(?:st|pt|ct|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44})(?![A-Za-z0-9])"
        ),
        rb"dp\.(?:st|pt|ct|sa|scim|audit)\.",
        group=1,
        reach=100,
        rule="doppler-token",
        keyword_core=10,
    ),
    Detector(
        "API_KEY",
        re.compile(r"\balgoliasearch\([ \t]*[\"'][A-Z0-9]{10}[\"'][ \t]*,[ \t]*[\"']([a-f0-9]{32})[\"']"),
        rb"algoliasearch\(",
        group=1,
        reach=80,
        rule="algolia-key",
        keyword_core=14,
    ),
)
