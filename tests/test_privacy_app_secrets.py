"""Credentials in mobile apps' build files and tools (router/privacy/app_secrets.py, the
`--name`/`--value` rule in deploy_secrets.py) and the set of forms that found them missing
(benchmarks/privacy/later_mobile.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

TOKEN = "pk9Fq2LmZ7xWc4Rt8Yb1Nv6Hs3Jd0Kge"
APPLE = "tsdm-cldb-tagf-wdpg"


def test_the_mobile_forms_written_after_the_detectors() -> None:
    # Scored blind once: 45 of 57 values; rules since.
    from benchmarks.privacy import later_forms, later_mobile

    found, missed, misses = later_forms.score(3, later_mobile.FORMS)
    assert not missed["mobile"], misses
    assert found["mobile"] == 57


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f'<meta-data\n    android:name="com.mapbox.token"\n    android:value="{TOKEN}" />', TOKEN),
        (f"<key>CLOUDINARY_API_SECRET</key>\n<string>{TOKEN}</string>", TOKEN),
        (f'xcrun altool --upload-app -f App.ipa -u dev@example.com -p "{APPLE}"', APPLE),
        (f"eas secret:create --scope project --name SENTRY_AUTH_TOKEN --value {TOKEN} --type string", TOKEN),
        (f"az keyvault secret set --vault-name kv1 --name db-password --value '{TOKEN}'", TOKEN),
    ],
)
def test_app_secrets_are_found(text: str, value: str) -> None:
    assert value in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        '<meta-data android:name="com.google.android.geo.API_KEY" android:value="${MAPS_API_KEY}" />',
        '<meta-data android:name="firebase_analytics_collection_enabled" android:value="false" />',
        "<key>NSCameraUsageDescription</key>\n<string>Scan receipts with the camera</string>",
        "<key>KeychainAccessGroup</key>\n<string>com.example.app.shared</string>",
        'xcrun altool --upload-app -f App.ipa -u dev@example.com -p "@keychain:AC_PASSWORD"',
        "eas secret:create --name SENTRY_AUTH_TOKEN --value $SENTRY_AUTH_TOKEN",
        "az group create --name rg-tokens --location westeurope",
    ],
)
def test_app_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []
