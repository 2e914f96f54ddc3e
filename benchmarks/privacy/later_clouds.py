"""Credentials of the smaller clouds' and hosting platforms' CLIs and configs, written after the
detectors and scored blind once (a twenty-ninth set beside `later_forms.py`'s nine and the later
ones).

IBM Cloud (`ibmcloud login --apikey`), Linode (`linode-cli configure --token`, its config),
Scaleway (`scw init secret-key=`, its `config.yaml`), OVH's `ovh.conf`, Exoscale's `exoscale.toml`,
Backblaze B2 (`b2 authorize-account KEYID KEY`, positional), Cloudinary's URL, Hetzner's
`cli.toml`, Vultr's and UpCloud's environment, Fly.io (`fly auth token` printed), Firebase's CI
token (`firebase login:ci` printed, `--token`), Doppler's service token, Render's and Railway's
API keys, Mapbox's secret token, Algolia's admin key in code, Contabo's OAuth client secret.
Values come from `later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 53 of 63 values (0.841). Missed:
B2's key as `authorize-account`'s second argument, Fly.io's `FlyV1 fm2_…` token (printed by `fly
auth token`), Doppler's `dp.st.…` token, Algolia's key as `algoliasearch`'s second argument.
Rules since (hosting_secrets.py, printed_secrets.py): 63 of 63, 210 of 210 over 10 rounds.

    python -m benchmarks.privacy.later_clouds [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("clouds", FORMS)


def uid() -> str:
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


@form
def ibmcloud_login() -> Form:
    key = an(44)
    return f"ibmcloud login --apikey {key} -r eu-de -g default", [key]


@form
def linode_configure() -> Form:
    t = hexs(64)
    return f"linode-cli configure --token {t}", [t]


@form
def linode_config() -> Form:
    t = hexs(64)
    return f"[DEFAULT]\ndefault-user = ops\n\n[ops]\nregion = eu-central\ntoken = {t}\n", [t]


@form
def scw_init() -> Form:
    s = uid()
    return f"scw init secret-key={s} organization-id={uid()} send-telemetry=false", [s]


@form
def scw_config() -> Form:
    s = uid()
    return f"access_key: SCW{an(17).upper()}\nsecret_key: {s}\ndefault_organization_id: {uid()}\n", [s]


@form
def ovh_conf() -> Form:
    s, c = an(32), an(32)
    return (
        f"[default]\nendpoint=ovh-eu\n\n[ovh-eu]\napplication_key={an(16)}\napplication_secret={s}\nconsumer_key={c}\n",
        [s, c],
    )


@form
def exoscale_toml() -> Form:
    s = an(43)
    return (
        f'defaultaccount = "prod"\n\n[[accounts]]\n  account = "prod"\n  key = "EXO{hexs(24)}"\n  secret = "{s}"\n',
        [s],
    )


@form
def b2_authorize() -> Form:
    key = "K00" + an(28)
    return f"b2 authorize-account 00{hexs(23)} {key}", [key]


@form
def cloudinary_url() -> Form:
    secret = an(27)
    return f"CLOUDINARY_URL=cloudinary://{R.randint(10**14, 10**15)}:{secret}@demo-cloud", [secret]


@form
def hcloud_toml() -> Form:
    t = an(64)
    return f'active_context = "prod"\n\n[[contexts]]\n  name = "prod"\n  token = "{t}"\n', [t]


@form
def vultr_env() -> Form:
    k = an(36).upper()
    return f"export VULTR_API_KEY={k}\nvultr-cli instance list", [k]


@form
def upcloud_env() -> Form:
    p = pw()
    return f"export UPCLOUD_USERNAME=ops-api\nexport UPCLOUD_PASSWORD='{p}'\nupctl server list", [p]


@form
def fly_token_printed() -> Form:
    t = "FlyV1 fm2_" + an(120)
    return f"$ fly auth token\n{t}\n", [t]


@form
def firebase_ci_token() -> Form:
    t = "1//0" + an(96)
    return f'firebase deploy --only hosting --token "{t}"', [t]


@form
def doppler_token() -> Form:
    t = "dp.st.prd." + an(40)
    return f"DOPPLER_TOKEN={t} doppler run -- ./start.sh", [t]


@form
def render_key() -> Form:
    t = "rnd_" + an(32)
    return f"curl -H 'Authorization: Bearer {t}' https://api.render.com/v1/services", [t]


@form
def railway_token() -> Form:
    t = uid()
    return f"RAILWAY_TOKEN={t} railway up --service api", [t]


@form
def mapbox_secret() -> Form:
    t = "sk.eyJ1Ijoib3BzIiwiYSI6Im" + an(20) + "In0." + an(22)
    return f"MAPBOX_DOWNLOADS_TOKEN={t}", [t]


@form
def algolia_admin() -> Form:
    k = hexs(32)
    return f"const client = algoliasearch('{an(10).upper()}', '{k}');\nconst index = client.initIndex('products');", [k]


@form
def contabo_oauth() -> Form:
    s = an(32)
    return (
        "cntb config set-credentials --oauth2-clientid=INT-11833581 "
        f"--oauth2-client-secret={s} --oauth2-user=ops@example.org --oauth2-password='{pw()}'",
        [s],
    )


def main(argv: list[str] | None = None) -> None:
    set_main("clouds", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
