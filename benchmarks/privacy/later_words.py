"""Passwords told in other words and other languages, written after the detectors and scored
blind once (a fourteenth credential set; `later_forms.py`'s ninth set was English prose's).

A password named in the language of the people who type it (German, French, Spanish,
Portuguese, Italian, Dutch, Polish, Turkish, Swedish, Russian, Ukrainian, Greek, Japanese,
Chinese, Korean, Arabic, Hindi, Vietnamese, Indonesian) as a label or in a sentence, and English
phrasings the ninth set lacked: a password given after `as the password`, `reset to`, `set to`,
`changed it to`, a `u:`/`p:` note, `sudo` asking for one in a chat. Values come from
`later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 0 of 78 values. Not one: no
rule read a word for a password in another language, nor these English phrasings. Rules since
(router/privacy/prose_passwords.py): 75 of 78 (253 of 260 over ten rounds; left: values of
letters alone, which no prose rule takes, as in English); then the login note's rule was taken
out for its cost (prose_passwords.py): 72 of 78. On 2.8 MB of a web framework's
translations of its password pages into 46 languages (django-allauth's `locale/`, MIT) the rules
first took three words for passwords (a compound's dash, `er` inside a word, read as "is"); none
since.

    python -m benchmarks.privacy.later_words [--seeds 3] [--show-missed]
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("words", FORMS)


def _said(template: str) -> Form:
    p = pw()
    return template.format(p), [p]


@form
def german() -> Form:
    return _said("Das Passwort für den Server ist {} – bitte nicht weitergeben.")


@form
def german_label() -> Form:
    return _said("Benutzer: admin\nKennwort: {}")


@form
def french() -> Form:
    return _said("Le mot de passe du wifi est {} pour les invités.")


@form
def french_label() -> Form:
    return _said("Identifiant : admin\nMot de passe : {}")


@form
def spanish() -> Form:
    return _said("La contraseña de la base de datos es {}, cámbiala mañana.")


@form
def portuguese() -> Form:
    return _said("Usuário: suporte / Senha: {}")


@form
def italian() -> Form:
    return _said("La password dell'account è {} (temporanea).")


@form
def dutch() -> Form:
    return _said("Het wachtwoord is {} voor de testomgeving.")


@form
def polish() -> Form:
    return _said("Login: admin, hasło: {}")


@form
def turkish() -> Form:
    return _said("Kullanıcı adı: yonetici, şifre: {}")


@form
def swedish() -> Form:
    return _said("Lösenordet till routern är {}.")


@form
def russian() -> Form:
    return _said("Логин: admin, пароль: {}")


@form
def ukrainian() -> Form:
    return _said("Пароль від сервера: {}")


@form
def greek() -> Form:
    return _said("Ο κωδικός πρόσβασης είναι {}")


@form
def japanese() -> Form:
    return _said("ユーザー名: admin\nパスワード: {}")


@form
def chinese() -> Form:
    return _said("数据库密码：{}，请勿外传。")


@form
def korean() -> Form:
    return _said("관리자 비밀번호는 {} 입니다.")


@form
def arabic() -> Form:
    return _said("كلمة المرور: {}")


@form
def hindi() -> Form:
    return _said("पासवर्ड: {}")


@form
def vietnamese() -> Form:
    return _said("Mật khẩu wifi là {} nhé.")


@form
def indonesian() -> Form:
    return _said("Kata sandi untuk server staging: {}")


@form
def as_the_password() -> Form:
    return _said("Use {} as the password for the new admin account.")


@form
def reset_to() -> Form:
    return _said("I reset your password to {} – please change it after logging in.")


@form
def changed_to() -> Form:
    return _said("FYI I changed the root password to {} yesterday.")


@form
def up_note() -> Form:
    return _said("grafana prod\nu: admin\np: {}")


@form
def sudo_chat() -> Form:
    return _said("it asks for the sudo password, it's {}")


def main(argv: list[str] | None = None) -> None:
    set_main("words", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
