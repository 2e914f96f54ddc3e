"""Passwords told in other languages and English phrasings (router/privacy/prose_passwords.py),
and the set of forms that found them missing (benchmarks/privacy/later_words.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PW = "Tr0ub4dor&3x"


def test_the_word_forms_written_after_the_detectors() -> None:
    # Scored blind once: 0 of 78 values; rules since. Left: values of letters alone (inner
    # capitals), which no prose rule takes (`the password is Secret` is a word), and a login
    # note's `p:` line (its rule cost too much: prose_passwords.py).
    from benchmarks.privacy import later_forms, later_words

    found, _missed, misses = later_forms.score(3, later_words.FORMS)
    assert found["words"] >= 72, misses
    assert all(value.isalpha() or name == "up_note" for name, value in misses), misses


@pytest.mark.parametrize(
    "template",
    [
        "Das Passwort für den Server ist {} – bitte nicht weitergeben.",
        "Identifiant : admin\nMot de passe : {}",
        "La contraseña de la base de datos es {}, cámbiala mañana.",
        "Usuário: suporte / Senha: {}",
        "La password dell'account è {} (temporanea).",
        "Login: admin, hasło: {}",
        "Kullanıcı adı: yonetici, Şifre: {}",
        "Пароль от сервера: {}",
        "Ο κωδικός πρόσβασης είναι {}",
        "ユーザー名: admin\nパスワード: {}",
        "数据库密码：{}，请勿外传。",
        "관리자 비밀번호는 {} 입니다.",
        "Mật khẩu wifi là {} nhé.",
        "I reset your password to {} – please change it after logging in.",
        "Use {} as the password for the new admin account.",
        "it asks for the sudo password, it's {}",
    ],
)
def test_passwords_in_other_words_are_found(template: str) -> None:
    assert PW in [f.value for f in detect(template.format(PW))]


@pytest.mark.parametrize(
    "text",
    [
        # Translations of a site's password pages (the words, never a password after them).
        "verwende bitte das Passwort-Vergessen-Verfahren, um es zurückzusetzen",
        "réinitialisation de mot de passe pour votre compte utilisateur.",
        "använd proceduren för glömt lösenord för att återställa",
        "Das Passwort ist zu kurz.",
        "Le mot de passe est incorrect.",
        "密码：********",
        "I reset your password to the default.",
    ],
)
def test_password_words_without_a_password(text: str) -> None:
    assert not detect(text), detect(text)


def test_an_english_on_after_password_is_no_copula() -> None:
    # `on`, `er`, `es` are copulas in other languages but words in English prose: after
    # `password` they said a host was one (`the password on server-01`).
    assert not detect("we rotate the password on prod-db-02 weekly")
    assert not detect("reset the password on server-01 yesterday")
