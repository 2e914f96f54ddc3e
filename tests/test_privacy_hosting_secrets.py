"""Credentials of hosting platforms and smaller clouds (B2's positional key, Fly.io's and
Doppler's tokens, Algolia's key as a call's argument, `fly auth token` printed) and the set of
forms that found them missing (benchmarks/privacy/later_clouds.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

FLY = "FlyV1 fm2_lJPECAAAAAAAAMZZxBBQf0QQgA6nTHRaQbYfxdUwwrVodHRwczovL2FwaS5mbHkuaW8vdjGWAJLOAAQ"


def test_the_cloud_forms_written_after_the_detectors() -> None:
    # Scored blind once: 53 of 63 values; rules since.
    from benchmarks.privacy import later_clouds, later_forms

    found, missed, misses = later_forms.score(3, later_clouds.FORMS)
    assert not missed["clouds"], misses
    assert found["clouds"] == 63


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (
            "b2 authorize-account 0012c3f4e5a6b7c8d9e0f1a2b K001aBcDeFgHiJkLmNoPqRsTuVwXyZ01234",
            "K001aBcDeFgHiJkLmNoPqRsTuVwXyZ01234",
        ),
        (f"$ fly auth token\n{FLY}\n", FLY),
        (f"FLY_API_TOKEN='{FLY}'", FLY),
        (
            "DOPPLER_TOKEN=dp.st.prd.ieGxKZtBGRwWHuahCTCwtIzvYURKFhq2bRXm8pLa1 doppler run -- ./start.sh",
            "dp.st.prd.ieGxKZtBGRwWHuahCTCwtIzvYURKFhq2bRXm8pLa1",
        ),
        (
            "const c = algoliasearch('LATENCY42X', '4d9b27eb1cd0dae6b9f253834ec5dd57');",
            "4d9b27eb1cd0dae6b9f253834ec5dd57",
        ),
    ],
)
def test_hosting_secrets_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        "b2 authorize-account",
        "b2 authorize-account 0012c3f4e5a6b7c8d9e0f1a2b $B2_APPLICATION_KEY",
        "const c = algoliasearch(process.env.APP_ID, process.env.SEARCH_KEY);",
        "See dp.st.prd for the naming of Doppler's service tokens.",
    ],
)
def test_hosting_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type in ("API_KEY", "SECRET_ASSIGNMENT")] == []
