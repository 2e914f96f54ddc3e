"""Credentials of directories, Kerberos, Wi-Fi and keychains set from a shell, written after the
detectors and scored blind once (a thirty-third set beside `later_forms.py`'s nine and the later
ones).

LDIF's `userPassword: X` and base64 `userPassword:: …`, OpenLDAP's `olcRootPW`, 389 Directory
Server's `nsslapd-rootpw`, Active Directory's `unicodePwd::`, a password piped into `kinit`,
`wpa_passphrase SSID X`, `nmcli … password X`, `iwctl --passphrase X`, `netsh wlan show profile
key=clear`'s `Key Content`, macOS's `security add-generic-password -w X`, `keyring set` fed a
value, `git credential approve` fed `password=X`. Values come from `later_forms.py`'s generator
(its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 18 of 39 values (0.462). Missed:
LDIF's base64 `userPassword::` and `unicodePwd::`, a password piped into `kinit` or `keyring
set`, `wpa_passphrase SSID X`, netsh's `Key Content`, `security add-generic-password -w X`. Rules
since (admin_secrets.py; deploy_secrets.py's piped secrets): 39 of 39, 130 of 130 over 10 rounds.

    python -m benchmarks.privacy.later_directory [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, pw_without, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("directory", FORMS)


def p_() -> str:
    """A password with none of the characters this set's syntaxes split on."""
    return pw_without("'\" ;&|")


@form
def ldif_user_password() -> Form:
    p = p_()
    return (
        "dn: uid=ana,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: ana\ncn: Ana Lima\n"
        f"userPassword: {p}\n",
        [p],
    )


@form
def ldif_user_password_base64() -> Form:
    enc = base64.b64encode(p_().encode()).decode()
    return f"dn: uid=bob,ou=people,dc=example,dc=org\nuid: bob\nuserPassword:: {enc}\n", [enc]


@form
def olc_root_pw() -> Form:
    p = p_()
    return f"dn: olcDatabase={{1}}mdb,cn=config\nchangetype: modify\nreplace: olcRootPW\nolcRootPW: {p}\n", [p]


@form
def ds389_rootpw() -> Form:
    p = p_()
    return f"dn: cn=config\nchangetype: modify\nreplace: nsslapd-rootpw\nnsslapd-rootpw: {p}\n", [p]


@form
def ad_unicode_pwd() -> Form:
    enc = base64.b64encode(f'"{p_()}"'.encode("utf-16-le")).decode()
    return (
        f"dn: CN=svc_app,OU=Service,DC=corp,DC=local\nchangetype: modify\nreplace: unicodePwd\nunicodePwd:: {enc}\n-\n",
        [enc],
    )


@form
def kinit_pipe() -> Form:
    p = p_()
    return f"echo '{p}' | kinit svc_etl@CORP.EXAMPLE.ORG", [p]


@form
def wpa_passphrase() -> Form:
    p = an(16)
    return f"wpa_passphrase OfficeWiFi {p} | sudo tee /etc/wpa_supplicant/wpa_supplicant.conf", [p]


@form
def nmcli_wifi() -> Form:
    p = an(16)
    return f"nmcli dev wifi connect OfficeWiFi password {p} ifname wlan0", [p]


@form
def iwctl_passphrase() -> Form:
    p = an(16)
    return f"iwctl --passphrase {p} station wlan0 connect OfficeWiFi", [p]


@form
def netsh_key_content() -> Form:
    p = an(16)
    return (
        'C:\\> netsh wlan show profile name="OfficeWiFi" key=clear\n\nSecurity settings\n-----------------\n'
        f"    Authentication         : WPA2-Personal\n    Key Content            : {p}\n",
        [p],
    )


@form
def security_add_generic() -> Form:
    p = p_()
    return f"security add-generic-password -a ci -s deploy-key -w {p} -U", [p]


@form
def keyring_set() -> Form:
    p = p_()
    return f"echo '{p}' | keyring set smtp ana@example.org", [p]


@form
def git_credential_approve() -> Form:
    t = "ghp_" + an(36)
    return f"printf 'protocol=https\\nhost=github.com\\nusername=ci\\npassword={t}\\n' | git credential approve", [t]


def main(argv: list[str] | None = None) -> None:
    set_main("directory", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
