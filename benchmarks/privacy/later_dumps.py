"""Secrets inside objects printed by a language's own dump or `toString`, written after the
detectors and scored blind once (a thirty-first set beside `later_forms.py`'s nine and the later
ones).

What logs and debuggers print of a settings object: Java's Lombok `toString` (`User(name=ana,
password=X)`) and an IDE's `User{name='ana', password='X'}`, Kotlin's data class, Go's `%+v`
(`{Username:ana Password:X}`) and `%#v`, PHP's `print_r` (`[password] => X`) and `var_dump`
(`["password"]=> string(10) "X"`), .NET's anonymous types (`{ Password = X }`), Python's
dataclass repr and a dict in a log's `extra`, Ruby's `inspect`, Elixir's `inspect`, Rust's
`{:?}`, Swift's `dump`, a Netscape cookie file's session cookie, an `Authorization` header in a
Python dict repr. Values come from `later_forms.py`'s generator (its `R`, reseeded each round by
its `score`).

Scored blind, before any rule was written for them (3 rounds): 38 of 45 values (0.844). Missed:
PHP's `var_dump` (`["password"]=>` then `string(N) "X"`), a Netscape cookie file's session
cookie; over 10 rounds also `print_r`'s `[password] => X` with a short password. Rules since
(dump_secrets.py; the password rule reads a bracket after its name): 44 of 45, 148 of 150 over
10 rounds (the rest: passwords of letters alone, refused by design).

    python -m benchmarks.privacy.later_dumps [--seeds 3] [--show-missed]
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("dumps", FORMS)


def p_() -> str:
    return pw().replace("'", "").replace('"', "").replace(",", "").replace(")", "").replace("}", "").replace("]", "")


@form
def lombok_to_string() -> Form:
    p = p_()
    return f"2026-03-02 10:00:01 DEBUG c.a.UserService - saving User(id=42, name=ana, password={p}, role=ADMIN)", [p]


@form
def ide_to_string() -> Form:
    p = p_()
    return f"DataSourceConfig{{url='jdbc:postgresql://db/app', username='app', password='{p}'}}", [p]


@form
def kotlin_data_class() -> Form:
    t = an(32)
    return f"I/Auth: Session(userId=42, accessToken={t}, expiresIn=3600)", [t]


@form
def go_plus_v() -> Form:
    p = p_()
    return f"2026/03/02 10:00:01 config: {{Host:db.internal Port:5432 Username:app Password:{p} SSLMode:require}}", [p]


@form
def go_sharp_v() -> Form:
    t = an(40)
    return f'main.Config{{Endpoint:"https://api.example.org", APIKey:"{t}", Timeout:30}}', [t]


@form
def php_print_r() -> Form:
    p = p_()
    return f"Array\n(\n    [host] => db.internal\n    [user] => shop\n    [password] => {p}\n)\n", [p]


@form
def php_var_dump() -> Form:
    p = p_()
    return f'array(2) {{\n  ["user"]=>\n  string(4) "shop"\n  ["password"]=>\n  string({len(p)}) "{p}"\n}}', [p]


@form
def dotnet_anonymous() -> Form:
    p = p_()
    return f"info: Startup[0] Settings: {{ Server = db.internal, User = sa, Password = {p} }}", [p]


@form
def python_dataclass_repr() -> Form:
    p = p_()
    return f"Settings(database_url='postgresql://db/app', db_password='{p}', debug=False)", [p]


@form
def python_log_extra() -> Form:
    t = an(36)
    return (
        f"INFO:sync:calling upstream {{'url': 'https://api.example.org', 'headers': {{'Authorization': 'Bearer {t}'}}}}",
        [t],
    )


@form
def ruby_inspect() -> Form:
    p = p_()
    return f'#<Account id: 7, email: "ana@example.com", password: "{p}", created_at: "2026-03-02">', [p]


@form
def elixir_inspect() -> Form:
    t = an(32)
    return f'%MyApp.Config{{api_secret: "{t}", region: "eu", retries: 3}}', [t]


@form
def rust_debug() -> Form:
    t = an(40)
    return f'Config {{ endpoint: "https://api.example.org", token: "{t}", retries: 3 }}', [t]


@form
def swift_dump() -> Form:
    t = an(40)
    return f'▿ App.Credentials\n  - username: "ana"\n  - apiToken: "{t}"\n', [t]


@form
def netscape_cookie_file() -> Form:
    c = an(32)
    return (
        "# Netscape HTTP Cookie File\n"
        f".example.org\tTRUE\t/\tTRUE\t1767225600\tsessionid\t{c}\n"
        ".example.org\tTRUE\t/\tFALSE\t1767225600\ttheme\tdark\n",
        [c],
    )


def main(argv: list[str] | None = None) -> None:
    set_main("dumps", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
