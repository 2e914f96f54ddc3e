"""Credentials in mobile app development, written after the detectors and scored blind once (a
twentieth set beside `later_forms.py`'s nine and the later ones).

Android's `keystore.properties` and `local.properties`, a manifest's `meta-data` key, Flutter's
`--dart-define`, Expo's `eas secret:create --value`, Fastlane's match password and Apple's
app-specific password, `xcrun altool` and `notarytool` passwords, `sentry.properties`, an
`Info.plist` key, Firebase's `google-services.json` key, CocoaPods' trunk session, App Center's
token, React Native's `.env`, Codemagic's and Bitrise's variables. Values come from
`later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 45 of 57 values (0.789). Missed:
an Android manifest's `<meta-data>` token, `eas secret:create --name … --value X`, `altool -p
X`, an `Info.plist` secret. Rules since (router/privacy/app_secrets.py, and a secret named by
`--name` and given by `--value` in deploy_secrets.py): 57 of 57.

    python -m benchmarks.privacy.later_mobile [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("mobile", FORMS)


def app_specific() -> str:
    return "-".join("".join(R.choice(string.ascii_lowercase) for _ in range(4)) for _ in range(4))


@form
def keystore_properties() -> Form:
    store, key = pw(), pw()
    return f"storeFile=../upload.jks\nstorePassword={store}\nkeyAlias=upload\nkeyPassword={key}\n", [store, key]


@form
def local_properties() -> Form:
    key = "AIza" + an(35)
    return f"sdk.dir=/opt/android-sdk\nMAPS_API_KEY={key}\n", [key]


@form
def manifest_meta_data() -> Form:
    key = an(32)
    return (
        f'<meta-data\n    android:name="com.mapbox.token"\n    android:value="{key}" />',
        [key],
    )


@form
def dart_define() -> Form:
    key = an(40)
    return f"flutter build apk --release --dart-define=PAYMENTS_SECRET={key} --dart-define=ENV=prod", [key]


@form
def eas_secret() -> Form:
    value = an(36)
    return f"eas secret:create --scope project --name SENTRY_AUTH_TOKEN --value {value} --type string", [value]


@form
def fastlane_match() -> Form:
    value = pw()
    return f"export MATCH_PASSWORD='{value}'\nbundle exec fastlane match appstore --readonly", [value]


@form
def apple_app_specific() -> Form:
    value = app_specific()
    return f"FASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD={value} bundle exec fastlane pilot upload", [value]


@form
def altool() -> Form:
    value = app_specific()
    return f'xcrun altool --upload-app -f App.ipa -t ios -u dev@example.com -p "{value}"', [value]


@form
def notarytool() -> Form:
    value = app_specific()
    return (
        'xcrun notarytool store-credentials "AC_PASSWORD" --apple-id dev@example.com '
        f"--team-id ABCDE12345 --password {value}",
        [value],
    )


@form
def sentry_properties() -> Form:
    token = "sntrys_" + an(60)
    return f"defaults.org=acme\ndefaults.project=mobile\nauth.token={token}\n", [token]


@form
def info_plist() -> Form:
    key = an(32)
    return f"<key>CLOUDINARY_API_SECRET</key>\n<string>{key}</string>", [key]


@form
def google_services_json() -> Form:
    key = "AIza" + an(35)
    body = {"client": [{"api_key": [{"current_key": key}], "client_info": {"mobilesdk_app_id": "1:1234:android:ab12"}}]}
    return json.dumps(body, indent=2), [key]


@form
def cocoapods_trunk() -> Form:
    token = hexs(32)
    return f"machine trunk.cocoapods.org\n  login dev@example.com\n  password {token}\n", [token]


@form
def appcenter_token() -> Form:
    token = hexs(40)
    return f"appcenter login --token {token}", [token]


@form
def react_native_env() -> Form:
    key = an(40)
    return f"API_URL=https://api.example.com\nSTRIPE_SECRET_KEY={key}\n", [key]


@form
def codemagic_yaml() -> Form:
    value = pw()
    return (
        f"workflows:\n  ios-release:\n    environment:\n      vars:\n        APP_STORE_CONNECT_KEY_PASSWORD: {value}\n",
        [value],
    )


@form
def bitrise_secrets() -> Form:
    value = pw()
    return f"envs:\n- BITRISEIO_ANDROID_KEYSTORE_PASSWORD: {value}\n  opts:\n    is_expand: false\n", [value]


@form
def gradle_cli_signing() -> Form:
    value = pw()
    return f"./gradlew bundleRelease -Pandroid.injected.signing.store.password={value}", [value]


def main(argv: list[str] | None = None) -> None:
    set_main("mobile", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
