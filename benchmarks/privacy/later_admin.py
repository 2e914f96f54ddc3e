"""Passwords and tokens on system administrators' and package publishers' command lines, written
after the detectors and scored blind once (a thirty-second set beside `later_forms.py`'s nine and
the later ones).

Windows' `net use … /user:u X`, `net user u X /add`, `cmdkey /pass:X`; Samba's `smbclient -U
u%X`; `chpasswd` fed `u:X`; RabbitMQ's `add_user` and `change_password`; Vault's `login` with a
token or `password=`; `etcdctl --user u:X`; `skopeo --creds u:X`; NuGet's `-ApiKey`; `cargo
publish --token`; GnuPG's `--passphrase`; `ssh-keygen -N`; `helm repo add --password`; Maven's
`-Dpassword=`; Consul's and Nomad's `-token`. Values come from `later_forms.py`'s generator (its
`R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 44 of 57 values (0.772). Missed:
`net user NAME X /add`, `vault login TOKEN`, `etcdctl --user u:X`, Nomad's `-token X`, skopeo's
`--src-creds u:X`. Rules since (admin_secrets.py): 57 of 57, 190 of 190 over 10 rounds.

    python -m benchmarks.privacy.later_admin [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, an, pw_without, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("admin", FORMS)


def p_() -> str:
    """A password with none of the characters this set's syntaxes split on."""
    return pw_without("'\"%:/ ;&|")


def uid() -> str:
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


@form
def net_use() -> Form:
    p = p_()
    return f"net use Z: \\\\fileserver\\share /user:CORP\\svc_backup {p} /persistent:no", [p]


@form
def net_user_add() -> Form:
    p = p_()
    return f"net user deploy {p} /add /expires:never", [p]


@form
def cmdkey() -> Form:
    p = p_()
    return f"cmdkey /add:fileserver.corp.local /user:CORP\\svc_backup /pass:{p}", [p]


@form
def smbclient() -> Form:
    p = p_()
    return f"smbclient //fileserver/share -U svc_backup%{p} -c 'ls'", [p]


@form
def chpasswd_echo() -> Form:
    p = p_()
    return f"echo 'deploy:{p}' | sudo chpasswd", [p]


@form
def rabbitmq_add_user() -> Form:
    p = p_()
    return f"rabbitmqctl add_user orders {p}\nrabbitmqctl set_permissions -p / orders '.*' '.*' '.*'", [p]


@form
def rabbitmq_change_password() -> Form:
    p = p_()
    return f"rabbitmqctl change_password admin {p}", [p]


@form
def vault_login_token() -> Form:
    t = "hvs." + an(24)
    return f"vault login {t}", [t]


@form
def vault_login_userpass() -> Form:
    p = p_()
    return f"vault login -method=userpass username=ops password={p}", [p]


@form
def etcdctl_user() -> Form:
    p = p_()
    return f"etcdctl --endpoints=https://10.0.0.5:2379 --user root:{p} get /config", [p]


@form
def skopeo_creds() -> Form:
    p = p_()
    return f"skopeo copy --src-creds ci-bot:{p} docker://registry.example.org/app:1.2 dir:/tmp/app", [p]


@form
def nuget_push() -> Form:
    k = "oy2" + an(43).lower()
    return f"nuget push Acme.Ledger.1.3.0.nupkg -Source https://api.nuget.org/v3/index.json -ApiKey {k}", [k]


@form
def cargo_publish() -> Form:
    t = "cio" + an(32)
    return f"cargo publish --token {t}", [t]


@form
def gpg_passphrase() -> Form:
    p = p_()
    return f"gpg --batch --yes --pinentry-mode loopback --passphrase {p} --decrypt secrets.tar.gpg", [p]


@form
def ssh_keygen_passphrase() -> Form:
    p = p_()
    return f"ssh-keygen -t ed25519 -N {p} -f ~/.ssh/deploy_ed25519 -C deploy", [p]


@form
def helm_repo_add() -> Form:
    p = p_()
    return f"helm repo add internal https://charts.example.org --username ci --password {p}", [p]


@form
def maven_password_property() -> Form:
    p = p_()
    return f"mvn deploy -DaltDeploymentRepository=internal::https://repo.example.org -Dusername=ci -Dpassword={p}", [p]


@form
def consul_token() -> Form:
    t = uid()
    return f"consul kv get -token={t} config/app/db", [t]


@form
def nomad_token() -> Form:
    t = uid()
    return f"nomad job run -token {t} web.nomad", [t]


def main(argv: list[str] | None = None) -> None:
    set_main("admin", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
