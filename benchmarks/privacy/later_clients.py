"""Passwords in mail, chat and sync clients' dotfiles, written after the detectors and scored
blind once (a sixteenth credential set).

`.muttrc` (`set imap_pass`, `set smtp_pass`), `.fetchmailrc`, `.msmtprc`, `.offlineimaprc`
(`remotepass`), `.mbsyncrc` (`Pass`), `.netrc`-style `.authinfo`, irssi's config, an IRC
client's `/msg NickServ IDENTIFY`, `.pypirc`-like `.npmrc` for a private registry's
`_password`, rclone's `pass` (obscured, reversible), `.s3cfg`'s `secret_key`, `.boto`'s
`aws_secret_access_key`, davfs2's `secrets` file, `wpa_supplicant.conf`'s `psk`, a VNC
`-passwd` and `x11vnc -passwd`. Values come from `later_forms.py`'s generator.

Scored blind, before any rule was written for them (3 rounds): 36 of 45 values (0.800); the
misses: isync's `Pass`, NickServ's `IDENTIFY`, davfs2's secrets file. Rules since
(router/privacy/client_configs.py): 45 of 45 (150 of 150 over ten rounds).

    python -m benchmarks.privacy.later_clients [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []
form = registrar("clients", FORMS)


def _said(template: str) -> Form:
    p = pw()
    return template.format(p), [p]


@form
def muttrc() -> Form:
    return _said('set imap_user = "ana@example.com"\nset imap_pass = "{}"\nset folder = "imaps://imap.example.com/"')


@form
def muttrc_smtp() -> Form:
    return _said("set smtp_url = \"smtps://ana@smtp.example.com\"\nset smtp_pass = '{}'")


@form
def fetchmailrc() -> Form:
    return _said('poll imap.example.com protocol IMAP\n  user "ana" there with password "{}" is ana here')


@form
def msmtprc() -> Form:
    return _said("account work\nhost smtp.example.com\nauth on\nuser ana@example.com\npassword {}\n")


@form
def offlineimaprc() -> Form:
    return _said("[Repository Remote]\ntype = IMAP\nremotehost = imap.example.com\nremoteuser = ana\nremotepass = {}\n")


@form
def mbsyncrc() -> Form:
    return _said("IMAPAccount work\nHost imap.example.com\nUser ana@example.com\nPass {}\nSSLType IMAPS\n")


@form
def authinfo() -> Form:
    return _said("machine smtp.example.com login ana@example.com password {} port 587")


@form
def irssi() -> Form:
    return _said('servers = (\n  {{ address = "irc.libera.chat"; chatnet = "liberachat"; password = "{}"; }}\n);')


@form
def nickserv() -> Form:
    return _said("/msg NickServ IDENTIFY ana {}")


@form
def npmrc_password() -> Form:
    p = pw()
    encoded = base64.b64encode(p.encode()).decode()
    return f"//npm.internal.example.com/:username=ci\n//npm.internal.example.com/:_password={encoded}\n", [encoded]


@form
def s3cfg() -> Form:
    key = an(40)
    return f"[default]\naccess_key = AKIAIOSFODNN7EXAMPLF\nsecret_key = {key}\nhost_base = s3.amazonaws.com\n", [key]


@form
def boto() -> Form:
    key = an(40)
    return f"[Credentials]\naws_access_key_id = AKIAI44QH8DHBEXAMPLF\naws_secret_access_key = {key}\n", [key]


@form
def davfs_secrets() -> Form:
    return _said("# davfs2 secrets\nhttps://dav.example.com/remote.php/webdav ana {}\n")


@form
def wpa_supplicant() -> Form:
    return _said('network={{\n    ssid="HomeNet"\n    psk="{}"\n    key_mgmt=WPA-PSK\n}}')


@form
def vnc_passwd() -> Form:
    return _said("x11vnc -display :0 -forever -passwd {} -rfbport 5900")


def main(argv: list[str] | None = None) -> None:
    set_main("clients", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
