"""Credentials in password managers' exports and saved connections, written after the detectors
and scored blind once (a twenty-fifth set beside `later_forms.py`'s nine and the later ones).

What an agent reads when it is asked to migrate, audit or clean up someone's logins: a
browser's password export (CSV), 1Password's, Bitwarden's (JSON and CSV), LastPass's and
KeePass's (XML, its `ProtectInMemory` values) exports, `pass show`'s output, FileZilla's
`sitemanager.xml` (base64 `Pass`), WinSCP's `WinSCP.ini`, Remmina's connection file, a
`.rdp` file's `password 51:b:`, Cyberduck's bookmark, the macOS `security` tool's
`find-generic-password -w` output, `secret-tool lookup`, a messaging broker's (Redis Sentinel's
`auth-pass`, ActiveMQ's `authenticationUser`, NATS's `.creds` seed). Values come from
`later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 34 of 57 values (0.596). Missed:
a key element then its value element (KeePass's `<Key>Password</Key>` and `<Value
ProtectInMemory="True">`, Cyberduck's plist), what `pass show`, `security find-generic-password
-w` and `secret-tool lookup` print, FileZilla's `<Pass encoding="base64">`, Sentinel's
`auth-pass`, a NATS seed; over 10 rounds also a CSV export's password opening with `!`. Rules
since (router/privacy/saved_logins.py, the column pass): 57 of 57, 190 of 190 over 10 rounds.

    python -m benchmarks.privacy.later_vaults [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, R, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("vaults", FORMS)


def site() -> str:
    return R.choice(
        ["https://accounts.example.com/login", "https://mail.example.org/", "https://git.example.net/users/sign_in"]
    )


@form
def chrome_export() -> Form:
    a, b = pw().replace(",", ""), pw().replace(",", "")
    text = (
        "name,url,username,password,note\n"
        f"accounts.example.com,{site()},ana.lima@example.com,{a},\n"
        f"git.example.net,{site()},alima,{b},work\n"
    )
    return text, [a, b]


@form
def firefox_export() -> Form:
    a = pw().replace(",", "").replace('"', "")
    text = (
        '"url","username","password","httpRealm","formActionOrigin","guid","timeCreated"\n'
        f'"{site()}","ops@example.com","{a}",,"https://accounts.example.com","{{{hexs(8)}}}","1700000000000"\n'
    )
    return text, [a]


@form
def onepassword_csv() -> Form:
    a = pw().replace(",", "").replace('"', "")
    return f'Title,Website,Username,Password,OTPAuth,Notes\n"Mail",{site()},ana,"{a}",,\n', [a]


@form
def bitwarden_json() -> Form:
    a = pw().replace('"', "").replace("\\", "")
    item = {
        "type": 1,
        "name": "Mail",
        "login": {"uris": [{"uri": site()}], "username": "ana", "password": a, "totp": None},
    }
    return json.dumps({"encrypted": False, "items": [item]}, indent=2), [a]


@form
def bitwarden_csv() -> Form:
    a = pw().replace(",", "")
    return (
        f"folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n,,login,Mail,,,0,{site()},ana,{a},\n",
        [a],
    )


@form
def lastpass_csv() -> Form:
    a = pw().replace(",", "")
    return f"url,username,password,totp,extra,name,grouping,fav\n{site()},ana,{a},,,Mail,Email,0\n", [a]


@form
def keepass_xml() -> Form:
    a = pw().replace("<", "").replace("&", "")
    text = (
        "<Entry>\n\t<String>\n\t\t<Key>Title</Key>\n\t\t<Value>Mail</Value>\n\t</String>\n"
        "\t<String>\n\t\t<Key>UserName</Key>\n\t\t<Value>ana</Value>\n\t</String>\n"
        f'\t<String>\n\t\t<Key>Password</Key>\n\t\t<Value ProtectInMemory="True">{a}</Value>\n\t</String>\n</Entry>'
    )
    return text, [a]


@form
def pass_show() -> Form:
    a = pw()
    return f"$ pass show work/vpn\n{a}\nusername: ana\nurl: vpn.example.org\n", [a]


@form
def filezilla_sitemanager() -> Form:
    raw = pw()
    enc = base64.b64encode(raw.encode()).decode()
    text = (
        "<Server>\n\t<Host>ftp.example.org</Host>\n\t<Port>21</Port>\n\t<User>deploy</User>\n"
        f'\t<Pass encoding="base64">{enc}</Pass>\n\t<Name>prod</Name>\n</Server>'
    )
    return text, [enc]


@form
def winscp_ini() -> Form:
    a = hexs(48).upper()
    return f"[Sessions\\deploy@prod]\nHostName=sftp.example.org\nUserName=deploy\nPassword={a}\n", [a]


@form
def remmina_file() -> Form:
    a = an(24)
    return f"[remmina]\nname=prod-rdp\nprotocol=RDP\nserver=10.0.4.12\nusername=admin\npassword={a}\n", [a]


@form
def rdp_file() -> Form:
    a = hexs(64).upper()
    return f"full address:s:10.0.4.12\nusername:s:CORP\\admin\npassword 51:b:{a}\n", [a]


@form
def cyberduck_bookmark() -> Form:
    a = pw().replace("<", "").replace("&", "")
    text = (
        "<dict>\n\t<key>Hostname</key>\n\t<string>sftp.example.org</string>\n"
        f"\t<key>Password</key>\n\t<string>{a}</string>\n</dict>"
    )
    return text, [a]


@form
def macos_security() -> Form:
    a = pw()
    return f"$ security find-generic-password -s 'deploy-key' -w\n{a}\n", [a]


@form
def secret_tool() -> Form:
    a = an(20)
    return f"$ secret-tool lookup service smtp user ana\n{a}\n$ ", [a]


@form
def sentinel_auth_pass() -> Form:
    a = an(18)
    return f"sentinel monitor mymaster 10.0.0.5 6379 2\nsentinel auth-pass mymaster {a}\n", [a]


@form
def activemq_users() -> Form:
    a = pw().replace('"', "")
    return (
        "<simpleAuthenticationPlugin>\n  <users>\n"
        f'    <authenticationUser username="system" password="{a}" groups="users,admins"/>\n  </users>\n'
        "</simpleAuthenticationPlugin>",
        [a],
    )


@form
def nats_creds() -> Form:
    seed = "SUA" + "".join(R.choice(string.ascii_uppercase + "234567") for _ in range(55))
    text = (
        "-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.sig\n------END NATS USER JWT------\n\n"
        "-----BEGIN USER NKEY SEED-----\n"
        f"{seed}\n------END USER NKEY SEED------\n"
    )
    return text, [seed]


def main(argv: list[str] | None = None) -> None:
    set_main("vaults", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
