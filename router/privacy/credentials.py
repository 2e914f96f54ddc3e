"""Credentials in the forms agents see them: command lines and shell history, `.netrc`,
`.pgpass`, escaped JSON (a Secrets Manager `SecretString`), cloud CLI outputs where the secret
sits beside a recognisable name or id (AWS `SecretAccessKey`/`SessionToken`, Azure storage keys
and SAS signatures, Google OAuth tokens), `Authorization: Bearer` headers and short passwords
under a password name.

Each detector's hyperscan core is a literal label (a tool's name and flag, a field name), so the
cost on text without one is nothing; the exact pattern and the validator run only where one is.
A value that is a reference or a stand-in (`$PGPASSWORD`, `${VAR}`, `<password>`, `changeme`,
`xxxx`, `****`) is never a finding (validators.is_reference).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from router.privacy import validators
from router.privacy.detector import Detector

# A value on a command line: quoted (anything up to the closing quote) or bare (up to a space or
# a shell operator).
ARG = r"""(?:"(?P<dq>[^"\n]{1,200})"|'(?P<sq>[^'\n]{1,200})'|(?P<bare>[^\s"'|;&<>`]{1,200}))"""
_PASSWORD_NAMES = r"(?:pass(?:word|wd|[_-]?phrase)?|pwd)"  # (`pass_phrase`: OCI's config)
_TOOLS = r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)"


def argument_span(match: re.Match[str]) -> tuple[int, int]:
    groups = match.groupdict()  # a rule whose value is never quoted has `bare` only
    for group in ("dq", "sq", "bare", "mq"):
        if groups.get(group) is not None:
            return match.span(group)
    return match.span()


def command_password(value: str) -> bool:
    """A password given on a command line: the flag says what it is, so any value that is not a
    reference, a stand-in or another flag stands (`-p` alone asks for it at a prompt)."""
    if len(value) < 4 or _FLAG.match(value) or validators.is_reference(value):
        return False
    return not (value.isalpha() and value.islower())  # a word (`--password options` in help text)


def attached_password(value: str) -> bool:
    """`command_password` of a value attached to what names it (after `user:`, inside an
    element): a leading `-` is its first character there, not the next flag."""
    return command_password(value) or (value[:1] == "-" and command_password("x" + value[1:]))


_C_LITERAL = re.compile(r"0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+[uUlL]*|[{(].*")


def constant_password(value: str) -> bool:
    """A macro's or a setting's value that is a password, not a number, an initialiser or a word
    in capitals (a statement's keyword, `SET PASSWORD FROM …`; a stand-in, `"PASSWORD"`)."""
    return command_password(value) and _C_LITERAL.fullmatch(value) is None and not (value.isalpha() and value.isupper())


def password_value(value: str) -> bool:
    """An unquoted value under a password name (`DB_PASS=Tr0ub4dor`, `password: s3cr3t!x`):
    shorter and less random than a token may be, but it must look like one (a digit, a symbol
    or an inner capital) and not be code, a reference or a YAML tag."""
    # (`&`, `?`: the next parameter of a query string whose password is empty.)
    if validators.is_reference(value) or value.startswith(("!", "-", "/", "&", "?")) or not 6 <= len(value) <= 256:
        return False
    if "(" in value or ")" in value or "[" in value or value.endswith((":", ",")):
        return False  # code: `password=base64.b16encode(raw[8:])`, `pwd=None):`
    if "===" in value or "!==" in value or "?." in value:
        return False  # minified JavaScript: `auth_password:s?.type==="basic"?…`
    if value.isalpha() and not validators.looks_random(value):
        return False
    if validators.is_code(value) and not (any(c.isdigit() for c in value) or validators.looks_random(value)):
        return False  # `password = user.password`, `pwd=getPassword()`
    if not (any(c.isdigit() for c in value) or not value.isalnum() or any(c.isupper() for c in value[1:])):
        return False
    return validators.entropy(value) >= 2.2


# A test's status line (`PASS: .a/foo.py was ignored`): `pass` alone as the label and words after
# the value on its line. `PASS: hunter22` alone on its line, `DB_PASS=…`, stay passwords.
_STATUS_LABEL = re.compile(r"(?i)(?<![\w-])pass[ \t]*:[ \t]*$")
# (Or the string it is printed from closing after it: `print("PASS: 1e-200")`.)
_WORDS_AFTER = re.compile(r"[ \t]+[A-Za-z]{2,}|[\"')]")


# Names in a list of names (`("edge-password", "query-secret")`, `("DB_PASSWORD", "DB_USER")`,
# a lexer's keywords `"EXPASS", "*EXPORT"`): one case of letters, joined by `-`, `_` or `.`,
# maybe after one symbol.
_NAME_LIST_ITEM = re.compile(r"[*/$@#!%&-]?(?:[a-z]+(?:[-_.][a-z]+)*|[A-Z]+(?:[-_.][A-Z]+)*)")


def argument_password(value: str) -> bool:
    """A call's quoted argument after a password's name: a password, not the next name of a list."""
    return _NAME_LIST_ITEM.fullmatch(value) is None and password_value(value)


def not_a_status(text: str, start: int, end: int) -> bool:
    """Whether a password label's value is not a test's status line's subject."""
    if _STATUS_LABEL.search(text, max(0, start - 16), start) is None:
        return True
    return _WORDS_AFTER.match(text, end) is None


def opaque_token(value: str) -> bool:
    """A bearer token: long, varied, not a reference (`Bearer $TOKEN`)."""
    if validators.is_reference(value) or len(value) < 16:
        return False
    return validators.entropy(value) >= 3.0 and not value.isalpha()


def command_rule(
    rule: str,
    pattern: str,
    core: bytes,
    span: int,
    validate: Callable[[str], bool] = command_password,
    *,
    lead: int = 0,
    reach: int = 210,
) -> Detector:
    """A detector of a secret given as a command's or a statement's argument: `pattern` ends in
    `ARG` (or its groups), `core` is what hyperscan looks for, `span` bounds how far before its
    end a match starts, `lead` how far before the core it may start (a value echoed before a pipe)."""
    return Detector(
        "SECRET_ASSIGNMENT",
        re.compile(pattern),
        core,
        validate=validate,
        group=0,
        reach=reach,
        lead=lead,
        rule=rule,
        keyword_core=span,
        value_span=argument_span,
    )


_FLAG = re.compile(r"^--?[A-Za-z][\w-]*$")


def _in_command(text: str, start: int, tool: str) -> bool:
    """Whether `tool` runs the command `start` is an argument of: named before it on its line,
    with no pipe or command separator between."""
    line = text.rfind("\n", 0, start) + 1
    at = text.rfind(tool, line, start)
    return at >= 0 and not any(mark in text[at:start] for mark in "|;&")


_AZURE = re.compile(r"(?i)key[12]\b|keyName|AccountKey|storage|azure|primaryKey|secondaryKey|SharedAccessKey|FULL")
_SAS = re.compile(r"[?&;]s[vep]=")


DETECTORS: tuple[Detector, ...] = (
    # --password X, --password=X, --db-password 'X', --requirepass X (redis-server), --masterauth X
    # (any case, words joined by `-` or `_`: `--Password`, `--passphrase`, `--super-secret_token`;
    # or glued to the word before: curl's `--tlspassword`, `--proxy-tlspassword`, `--keystorepassword`,
    # not `pass` glued, `--bypass`, `--compass`). A URL after the flag is the command's next
    # argument: the flag was given no value (`curl --tlspassword https://host`).
    command_rule(
        "password-flag",
        r"(?<![\w-])--(?:[A-Za-z]+[-_])*(?:(?i:[a-z]{0,20}?(?:password|passwd|passphrase|secret|token))"
        r"|(?i:pass|requirepass|masterauth|api-?key|secret-key|access-token|auth-token|client-secret))(?:=|[ \t]+)"
        + ARG,
        rb"--(?:[A-Za-z]+[-_])*(?:(?i:[a-z]{0,20}(?:password|passwd|passphrase|secret|token))"
        rb"|(?i:pass|requirepass|masterauth|api-?key|secret-key|access-token|auth-token|client-secret))(?:=|[ \t])",
        64,
        lambda value: "://" not in value and command_password(value),
    ),
    # A secret named by a C macro or an RPM spec's (`#define DB_PASSWORD "…"`, `%define token …`),
    # a batch file's `SET password "…"`, and libcurl's options (`CURLOPT_USERPWD, "user:…"`).
    command_rule(
        "named-constant",
        r"(?:(?<![\w#%])[#%]define[ \t]+\w{0,40}?(?i:password|passwd|pwd|passphrase|secret|token|api_?key|secret_?key)"
        r"|(?i:(?<![\w-])set)[ \t]+(?i:password|passwd|pwd)"
        r"|CURLOPT_(?:PASSWORD|USERPWD|PROXYPASSWORD|PROXYUSERPWD|KEYPASSWD|XOAUTH2_BEARER|TLSAUTH_PASSWORD)[ \t]*,)"
        r"[ \t]+" + ARG,
        rb"[#%]define[ \t]+\w{0,40}(?i:password|passwd|pwd|passphrase|secret|token|api_?key|secret_?key)[ \t]"
        rb"|(?i:set)[ \t]+(?i:password|passwd|pwd)[ \t]"
        rb"|CURLOPT_(?:PASSWORD|USERPWD|PROXYPASSWORD|PROXYUSERPWD|KEYPASSWD|XOAUTH2_BEARER"
        rb"|TLSAUTH_PASSWORD)[ \t]*,[ \t]",
        80,
        constant_password,
    ),
    # A key's name written as words (`SECRET KEY: …`, `Access key: …`, `Authentication key: …`),
    # as notes and consoles print them; the value must look generated.
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"(?i)(?<![\w-])(?:secret|access|api|private|auth(?:entication)?|encryption|signing|master)[ \t]+key"
            r"[ \t]*[:=][ \t]*([^\s\"'`,;<>]{12,200})"
        ),
        rb"(?i)(?:secret|access|api|private|auth(?:entication)?|encryption|signing|master)[ \t]+key[ \t]*[:=]",
        validate=validators.secret_value,
        group=1,
        reach=220,
        rule="secret-key-words",
        keyword_core=40,
    ),
    # PowerShell: a parameter named as a secret (`New-LocalUser -Password …`), and the plain
    # text made a SecureString (`ConvertTo-SecureString "…" -AsPlainText -Force`).
    command_rule(
        "powershell-password",
        r"(?<![\w-])(?:-(?:Password|Passphrase|ClientSecret|ApiKey|AccessToken)[ \t]+"
        r"(?:\(?ConvertTo-SecureString[ \t]+)?|ConvertTo-SecureString[ \t]+)(?:-(?:String|AsPlainText|Force)[ \t]+)*"
        + ARG,
        rb"-(?:Password|Passphrase|ClientSecret|ApiKey|AccessToken)[ \t]|ConvertTo-SecureString[ \t]",
        32,
    ),
    # mysql -u root -p'X' / -pX (the value glued to the flag)
    command_rule(
        "mysql-password",
        r"\b" + _TOOLS + r"\b[^\n|;&]{0,200}?[ \t]-p" + ARG,
        rb"\b" + _TOOLS.encode() + rb"\b[^\n|;&]{0,200}?[ \t]-p[^\s]",
        240,
    ),
    # sshpass -p X, docker/podman/helm/az login -p X, mongo/mongosh -p X, and Windows' remote
    # shells and desktops: rdesktop -p X, psexec / paexec / winexe -p X; cqlsh -p X (Cassandra)
    command_rule(
        "tool-password",
        r"\b(?:sshpass|(?:docker|podman|helm|buildah|skopeo|oras|az)\s+(?:registry\s+)?login|mongo|mongosh"
        r"|mongodump|mongorestore|mongoexport|mongoimport|rdesktop|psexec(?:64)?(?:\.exe)?|paexec|winexe|cqlsh)\b"
        r"[^\n|;&]{0,200}?[ \t]-p[ \t]+" + ARG,
        rb"\b(?:sshpass|docker|podman|helm|buildah|skopeo|oras|az|mongo|mongosh|mongodump|mongorestore"
        rb"|mongoexport|mongoimport|rdesktop|psexec|paexec|winexe|cqlsh)\b[^\n|;&]{0,220}?[ \t]-p[ \t]+[^\s]",
        260,
    ),
    # redis-cli -a X (its -p is the port)
    command_rule(
        "redis-cli-password",
        r"\bredis-cli\b[^\n|;&]{0,200}?[ \t]-a[ \t]+" + ARG,
        rb"\bredis-cli\b[^\n|;&]{0,200}?[ \t]-a[ \t]+[^\s]",
        230,
    ),
    # curl -u user:X / --user user:X (a password after the colon)
    command_rule(
        "curl-user",
        r"\bcurl\b[^\n|;&]{0,300}?[ \t](?:-u|--user)[ \t]*[\"']?[^\s:\"']{1,100}:" + ARG,
        rb"\bcurl\b[^\n|;&]{0,300}?[ \t](?:-u|--user)[ \t]*[\"']?[^\s:\"']{1,100}:",
        420,
    ),
    # curl's proxy credentials, -U user:X / --proxy-user user:X (`--proxy-user` is curl's alone,
    # so the flag is read on a continued line of the command too)
    command_rule(
        "curl-proxy-user",
        r"(?:\bcurl\b[^\n|;&]{0,300}?[ \t]-U|(?<![\w-])--proxy-user)(?:[ \t]+|=)[\"']?[^\s:\"']{1,100}:" + ARG,
        rb"(?:\bcurl\b[^\n|;&]{0,300}?[ \t]-U|--proxy-user)[ \t=][ \t]*[\"']?[^\s:\"']{1,100}:",
        420,
    ),
    # .netrc: machine host login user password X (one line or several)
    command_rule(
        "netrc",
        r"\blogin[ \t]+\S{1,100}\s+password[ \t]+" + ARG.replace("|;&<>`", ""),
        rb"\blogin[ \t]+[^\s]{1,100}\s+password[ \t]+",
        130,
    ),
    # htpasswd -b[c] file user X (the password on the command line)
    command_rule(
        "htpasswd",
        r"\bhtpasswd(?:[ \t]+-[A-Za-z]+)*[ \t]+-[A-Za-z]*b[A-Za-z]*(?:[ \t]+-[A-Za-z]+)*[ \t]+\S+[ \t]+\S+[ \t]+" + ARG,
        rb"\bhtpasswd(?:[ \t]+-[A-Za-z]+)*[ \t]+-[A-Za-z]*b",
        48,
    ),
    # Go-style single-dash flags: influx -password X, -password=X, keytool's, `-secret X`
    # (`--password` is the rule above; lower case: PowerShell's parameters are below)
    command_rule(
        "password-single-dash",
        r"(?<![\w-])-(?:password|passwd|passphrase|secret|client-secret)(?:=|[ \t]+)" + ARG,
        rb"[\s\"']-(?:password|passwd|passphrase|secret|client-secret)[= \t]",
        20,
        # (`grep -r -password ./src` searches for the flag: a path is no password here)
        validate=lambda value: "/" not in value and command_password(value),
    ),
    # SQL Server's and Sybase's clients: sqlcmd -P X, bcp … -P X
    command_rule(
        "sqlcmd-password",
        r"\b(?:sqlcmd|bcp|osql|isql)\b[^\n|;&]{0,200}?[ \t]-P[ \t]*" + ARG,
        rb"\b(?:sqlcmd|bcp|osql|isql)\b[^\n|;&]{0,200}?[ \t]-P",
        220,
    ),
    # LDAP's clients: the bind password after -w
    command_rule(
        "ldap-bind-password",
        r"\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)\b[^\n|;&]{0,300}?[ \t]-w[ \t]*" + ARG,
        rb"\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)\b[^\n|;&]{0,300}?[ \t]-w",
        330,
    ),
    # smbclient -U user%X
    command_rule(
        "smbclient-password",
        r"\bsmbclient\b[^\n|;&]{0,200}?[ \t](?:-U|--user(?:=|[ \t]))[ \t]*[\"']?[^\s%\"']{1,100}%" + ARG,
        rb"\bsmbclient\b[^\n|;&]{0,200}?[ \t](?:-U|--user)[^\n%]{1,104}%",
        320,
    ),
    # Windows: net use \\server\share /user:DOMAIN\name X
    command_rule(
        "net-use-password",
        r"(?i)\bnet[ \t]+use\b[^\n|;&]{0,200}?[ \t]/user:[^\s]{1,100}[ \t]+" + ARG,
        rb"(?i)\bnet[ \t]+use\b[^\n|;&]{0,200}?[ \t]/user:",
        220,
        validate=lambda value: not value.startswith("/") and command_password(value),
    ),
    # rabbitmqctl add_user NAME X / change_password NAME X
    command_rule(
        "rabbitmqctl-password",
        r"\brabbitmqctl\b[ \t]+(?:add_user|change_password)[ \t]+[^\s]{1,100}[ \t]+" + ARG,
        rb"\brabbitmqctl\b[ \t]+(?:add_user|change_password)[ \t]",
        48,
    ),
    # echo 'user:X' | chpasswd
    command_rule(
        "chpasswd",
        r"\b(?:echo|printf)(?:[ \t]+-[a-z]+)?[ \t]+" + ARG + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd\b",
        rb"\|[ \t]*(?:sudo[ \t]+)?chpasswd",
        320,
        validate=lambda value: command_password(value.partition(":")[2]),  # `user:$PASSWORD` is none
    ),
    # ssh-keygen -N X / -P X (the new and the old passphrase; `-N ''` asks for none)
    command_rule(
        "ssh-keygen-passphrase",
        r"\bssh-keygen\b[^\n|;&]{0,200}?[ \t]-[NP][ \t]*" + ARG,
        rb"\bssh-keygen\b[^\n|;&]{0,200}?[ \t]-[NP]",
        220,
    ),
    # keytool -storepass X -keypass X (-srcstorepass, -deststorepass, -new): each of the
    # command's flags, not its first alone (the pattern starts at the flag; `_in_command` finds
    # keytool before it).
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(r"(?<=[ \t])-(?:src|dest)?(?:store|key)?pass(?:word)?[ \t]+" + ARG),
        rb"\bkeytool\b[^\n|;&]{0,300}?[ \t]-(?:src|dest)?(?:store|key)?pass",
        validate=command_password,
        check=lambda text, start, _end: _in_command(text, start, "keytool"),
        group=0,
        reach=600,
        rule="keytool-pass",
        keyword_core=330,
        value_span=argument_span,
    ),
    # twine upload -p X, conan remote login NAME USER -p X (`--password` too)
    command_rule(
        "package-tool-password",
        r"\b(?:twine|conan)\b[^\n|;&]{0,300}?[ \t](?:-p|--password)(?:[ \t]+|=)" + ARG,
        rb"\b(?:twine|conan)\b[^\n|;&]{0,300}?[ \t](?:-p|--password)[ \t=]",
        330,
    ),
    # wandb login X (an API key of 40 hex digits; flags may come first)
    command_rule(
        "wandb-login",
        r"\bwandb[ \t]+login(?:[ \t]+--?[\w-]+)*[ \t]+(?P<bare>[0-9a-f]{40})(?![\w-])",
        rb"\bwandb[ \t]+login\b",
        20,
    ),
    # poetry config http-basic.REPO USER X
    command_rule(
        "poetry-http-basic",
        r"\bpoetry[ \t]+config[ \t]+http-basic\.[\w.-]{1,64}[ \t]+[^\s]{1,64}[ \t]+" + ARG,
        rb"\bpoetry[ \t]+config[ \t]+http-basic\.",
        40,
    ),
    # Redis's own settings, in redis.conf or at run time (`CONFIG SET requirepass X`): the
    # password clients give and the one a replica gives its primary (`--requirepass` is above).
    command_rule(
        "redis-setting",
        r"(?i)(?<![\w-])(?:requirepass|masterauth)[ \t]+" + ARG,
        rb"(?i)(?:requirepass|masterauth)[ \t]+[^\s]",
        24,
    ),
    # Redis's AUTH command: at redis-cli's prompt (`127.0.0.1:6379> AUTH X`, `AUTH user X`) and
    # as MONITOR prints it (`"AUTH" "X"`, `"auth" "user" "X"`).
    command_rule(
        "redis-auth",
        r"(?:(?<=> )|(?<=\n)|^)AUTH[ \t]+(?:[\w.-]{1,64}[ \t]+(?=\S))?" + ARG + r"[ \t]*(?=\r?\n|$)"
        r"|(?i:\"auth\")[ \t]+(?:\"[^\"\n]{1,64}\"[ \t]+)?\"(?P<mq>[^\"\n]{1,200})\"",
        rb"(?:^|\n|> )AUTH[ \t]+[^\s]|(?i)\"auth\"[ \t]+\"",
        12,
    ),
    # SNMP community strings (the password of v1/v2c): snmpd.conf's `rocommunity X`, a
    # switch's `snmp-server community X RO` (`public` and `private`, the defaults, are words)
    command_rule(
        "snmp-community",
        r"(?i)(?<![\w-])(?:r[ow]community6?|snmp-server[ \t]+community|com2sec[ \t]+\S{1,64}[ \t]+\S{1,64})[ \t]+"
        + ARG,
        rb"(?i)(?:r[ow]community6?|snmp-server[ \t]+community|com2sec[ \t]+[^\s]{1,64}[ \t]+[^\s]{1,64})[ \t]",
        150,
    ),
    # Network devices' configurations with a password in clear (type 0, or 7: reversible):
    # `username admin privilege 15 password 0 X`, `enable password X`, a TACACS+ or RADIUS key.
    command_rule(
        "device-cleartext-password",
        r"(?m)^[ \t]*(?:username[ \t]+\S{1,64}(?:[ \t]+privilege[ \t]+\d{1,2})?[ \t]+(?:password|secret)"
        r"|enable[ \t]+(?:password|secret)|(?:tacacs|radius)-server[^\n]{0,120}?[ \t]key)(?:[ \t]+[07](?=[ \t]))?[ \t]+"
        r"(?P<bare>[^\s\"'`]{1,200})",
        rb"(?:(?:^|\n)[ \t]*(?:username|enable)[ \t]+[^\n]{0,100}?(?:password|secret)[ \t]"
        rb"|(?:tacacs|radius)-server[^\n]{0,120}?[ \t]key[ \t])",
        140,
    ),
    # strongSwan's and Libreswan's ipsec.secrets: `: PSK "X"`, `%any : XAUTH "X"`, EAP
    command_rule(
        "ipsec-secret",
        r"(?<![\w:]):[ \t]*(?:PSK|XAUTH|EAP|NTLM)[ \t]+" + ARG,
        rb":[ \t]*(?:PSK|XAUTH|EAP|NTLM)[ \t]+[\"'0-9A-Za-z]",
        12,
    ),
    # Postfix's sasl_passwd: `[smtp.example.com]:587 user:X` (a host name in the brackets: not a
    # Markdown reference `[2] https://…`)
    command_rule(
        "postfix-sasl-password",
        r"(?m)^\[[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}\](?::\d{1,5})?[ \t]+[^\s:/]{1,100}:"
        r"(?P<bare>[^\s/][^\s]{0,199})[ \t]*\r?$",
        rb"(?:^|\n)\[[\w.-]{1,100}\](?::\d{1,5})?[ \t]+[^\s:]{1,100}:",
        220,
    ),
    # Subversion's credential cache: `K 8` / `password` / `V 14` / X
    command_rule(
        "svn-auth-cache",
        r"(?m)^K \d{1,3}\r?\npassword\r?\nV \d{1,4}\r?\n(?P<bare>[^\n]{1,200})",
        rb"(?:^|\n)K \d{1,3}\r?\npassword\r?\nV ",
        24,
    ),
    # Oracle's tools log in with user/password@database on the command line.
    command_rule(
        "oracle-login",
        # (RMAN names its connections: `rman target sys/X@prod catalog rman/X@rcat`.)
        r"\b(?:sqlplus|rman|expdp|impdp|sqlldr)(?:[ \t]+(?:-\w+|(?i:target|catalog|auxiliary)=?))*"
        r"[ \t]+[\"']?[\w$#.]{1,30}/"
        r"(?P<bare>[^\s@/\"'|;&<>`]{1,100})(?=[@\s\"']|$)",
        rb"\b(?:sqlplus|rman|expdp|impdp|sqlldr)[ \t]",
        8,
    ),
    # RMAN's second and third connections on its line (`… catalog rman/X@rcat`).
    command_rule(
        "rman-catalog-login",
        r"\brman\b[^\n|;&]{0,300}[ \t](?i:catalog|auxiliary)=?[ \t]+[\"']?[\w$#.]{1,30}/"
        r"(?P<bare>[^\s@/\"'|;&<>`]{1,100})(?=[@\s\"']|$)",
        rb"\brman[ \t]",
        8,
        reach=420,
    ),
    # FreeRDP's clients: /p:X (and its older -p: and +p: spellings)
    command_rule(
        "freerdp-password",
        r"\b(?:xfreerdp3?|wlfreerdp|sdl-freerdp3?)\b[^\n|;&]{0,300}?[ \t][/+-]p:" + ARG,
        rb"\b(?:xfreerdp|wlfreerdp|sdl-freerdp)",
        16,
    ),
    # Archives with a password: zip / unzip / zipcloak -P X, 7-Zip's -pX (glued: `-p` alone asks)
    command_rule(
        "archive-password",
        r"\b(?:(?:zip|unzip|zipcloak|funzip)\b[^\n|;&]{0,200}?[ \t]-P[ \t]+|7z[ar]?\b[^\n|;&]{0,200}?[ \t]-p)" + ARG,
        rb"\b(?:(?:zip|unzip|zipcloak|funzip)\b[^\n|;&]{0,200}?[ \t]-P[ \t]+|7z[ar]?\b[^\n|;&]{0,200}?[ \t]-p)"
        rb"[^\s]",
        230,
    ),
    # lftp -u user,X
    command_rule(
        "lftp-user",
        r"\blftp\b[^\n|;&]{0,200}?[ \t](?:-u|--user)[ \t]+[\"']?[^\s,\"']{1,100},"
        r"(?P<bare>[^\s\"'|;&<>`]{1,200})",
        rb"\blftp\b[^\n|;&]{0,200}?[ \t](?:-u|--user)[ \t]",
        220,
    ),
    # MinIO's client: mc alias set NAME URL ACCESS-KEY X (and the older `config host add`)
    command_rule(
        "minio-alias",
        r"\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+\S{1,100}[ \t]+\S{1,300}[ \t]+\S{1,200}[ \t]+"
        + ARG,
        rb"\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]",
        32,
    ),
    # NetworkManager: nmcli … password X, wifi-sec.psk X
    command_rule(
        "nmcli-password",
        r"\bnmcli\b[^\n|;&]{0,300}?[ \t](?:password|wifi-sec\.psk|802-1x\.password|vpn\.secrets\.password)[ \t]+" + ARG,
        rb"\bnmcli\b[^\n|;&]{0,300}?[ \t](?:password|wifi-sec\.psk|802-1x\.password|vpn\.secrets\.password)"
        rb"[ \t]",
        340,
    ),
    # Wi-Fi keys in wpa_supplicant.conf and hostapd.conf: psk="X", sae_password=X
    command_rule(
        "wifi-key",
        r"(?<![\w-])(?:psk|wpa_psk|wpa_passphrase|sae_password)[ \t]*=[ \t]*" + ARG,
        rb"(?:psk|wpa_passphrase|sae_password)[ \t]*=[ \t]*[^\s]",
        40,
    ),
    # GitHub's CLI stores a secret given on its command line: gh secret set NAME --body X
    command_rule(
        "gh-secret-body",
        r"\bgh[ \t]+secret[ \t]+set\b[^\n|;&]{0,200}?[ \t](?:-b|--body)(?:=|[ \t]+)" + ARG,
        rb"\bgh[ \t]+secret[ \t]+set\b",
        24,
    ),
    # PuTTY's command-line tools: plink / pscp / psftp -pw X
    command_rule(
        "putty-password",
        r"\b(?:plink|pscp|psftp|putty)(?:\.exe)?\b[^\n|;&]{0,200}?[ \t]-pw[ \t]+" + ARG,
        rb"\b(?:plink|pscp|psftp|putty)[^\n|;&]{0,220}?[ \t]-pw[ \t]+[^\s]",
        240,
    ),
    # HTTPie: http -a user:X / --auth user:X
    command_rule(
        "httpie-auth",
        r"\bhttps?[ \t](?:[^\n|;&]{0,200}?[ \t])?(?:-a|--auth)(?:=|[ \t]+)[\"']?[^\s:\"']{1,100}:" + ARG,
        rb"\bhttps?[ \t](?:[^\n|;&]{0,200}?[ \t])?(?:-a|--auth)[ \t=]",
        220,
    ),
    # ngrok's account token: ngrok config add-authtoken X, ngrok authtoken X, --authtoken X
    command_rule(
        "ngrok-authtoken",
        r"\bngrok\b[^\n|;&]{0,200}?(?:[ \t]add-authtoken|[ \t]authtoken|[ \t]--authtoken)(?:=|[ \t]+)" + ARG,
        rb"\bngrok\b[^\n|;&]{0,200}?[ \t-](?:add-)?authtoken[ \t=]",
        230,
    ),
    # SSSD's bind password: ldap_default_authtok = X
    command_rule(
        "sssd-authtok",
        r"(?<![\w-])\w{0,30}authtok[ \t]*=[ \t]*" + ARG,
        rb"authtok[ \t]*=[ \t]*[^\s]",
        24,
    ),
    # fetchmail's and other tools' `password "X"`, double-quoted after the bare word
    command_rule(
        "password-quoted-word",
        r"(?i)(?<![\w-])password[ \t]+\"(?P<dq>[^\"\n]{1,200})\"",
        rb"(?i)password[ \t]+\"",
        16,
    ),
    # Jenkins' CLI: -auth user:X (an API token or a password)
    command_rule(
        "jenkins-cli-auth",
        r"\bjenkins-cli(?:\.jar)?\b[^\n|;&]{0,300}?[ \t]-auth[ \t]+[\"']?[^\s:@\"']{1,100}:" + ARG,
        rb"\bjenkins-cli[^\n|;&]{0,310}?[ \t]-auth[ \t]",
        330,
    ),
    # Codecov's uploaders: -t X (the repository's upload token)
    command_rule(
        "codecov-token",
        r"\bcodecov(?:cli)?\b[^\n|;&]{0,200}?[ \t]-t[ \t]+" + ARG,
        rb"\bcodecov[^\n|;&]{0,210}?[ \t]-t[ \t]",
        230,
    ),
    # expect scripts answering a password prompt: expect "password:" then send "X\r"
    command_rule(
        "expect-send-password",
        r"(?i)\bexpect[ \t]+(?:-\w+[ \t]+)*[\"'{][^\"'}\n]{0,40}(?:password|passphrase|passwd)[^\"'}\n]{0,20}[\"'}]"
        r"[ \t]*(?:;[ \t]*|\r?\n[ \t]*)send[ \t]+(?:--[ \t]+)?\"(?P<dq>(?:[^\"\\\n]|\\[^rn])+)(?:\\r|\\n)?\"",
        rb"(?i)\bexpect[ \t]+[^\n]{0,60}(?:password|passphrase|passwd)[^\n]{0,24}[;\n][ \t]*send[ \t]",
        110,
    ),
    # echo 'X' | docker login --password-stdin (the value before the pipe)
    command_rule(
        "password-stdin",
        r"\b(?:echo|printf)(?:[ \t]+-[a-z]+)?[ \t]+"
        + ARG
        + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?[\w./-]+[^\n|;&]{0,200}--password-stdin",
        rb"--password-stdin",
        320,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A password's name as a call's argument and its value the next (`define('DB_PASSWORD',
        # '…')`, `setProperty("password", "…")`, `ENV.fetch('DB_PASSWORD', '…')`): a password
        # may read as words and digits (`Sunny9940*`), which the same rule for tokens
        # (`secret-argument`) does not take.
        re.compile(
            r"(?i)[\"'][\w.-]{0,40}?" + _PASSWORD_NAMES + r"[\"'][ \t]{0,3},[ \t]{0,3}([\"'])([^\"'\s\\]{6,256})\1"
        ),
        rb"(?i)(?:pass(?:word|wd|[_-]?phrase)?|pwd)[\"'][ \t]{0,3},[ \t]{0,3}[\"']",
        validate=argument_password,
        group=2,
        reach=260,
        rule="password-argument",
        keyword_core=32,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # Go's MySQL DSN: user:X@tcp(host:3306)/db (no scheme, so not a URL's credentials).
        re.compile(r"(?<![\w/:@.-])[\w.-]{1,64}:([^\s@/:\"'`]{1,200})@(?:tcp|unix|udp)\("),
        rb"@(?:tcp|unix|udp)\(",
        validate=command_password,
        group=1,
        lead=270,
        rule="go-mysql-dsn",
        keyword_core=6,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A configuration directive and its value apart by spaces, alone on a line: nslcd's and
        # slapd's `bindpw X` / `rootpw X`, msmtp's and other mailers' `password X`. A line of
        # prose after the word is no value (one word, that must look like a password).
        re.compile(
            r"(?im)^[ \t]{0,8}(?:bindpw|rootpw|password|passwd|passphrase|auth_pass|authpass)[ \t]+"
            r"([^\s\"'`]{6,256})[ \t]*\r?$"
        ),
        rb"(?i)(?:^|\n)[ \t]{0,8}(?:bindpw|rootpw|password|passwd|passphrase|auth_pass|authpass)[ \t]+[^\s\"'`]{6}",
        validate=password_value,
        group=1,
        reach=260,
        rule="password-directive",
        keyword_core=40,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A password written into a call beside its user: Python's `smtp.login("u", "X")`,
        # `auth=("u", "X")`, requests' `HTTPBasicAuth("u", "X")`, .NET's `NetworkCredential("u",
        # "X")`, Go's `req.SetBasicAuth("u", "X")`, PHP's `new PDO($dsn, 'u', 'X')` and JDBC's
        # `DriverManager.getConnection(url, "u", "X")` (the DSN or URL first).
        re.compile(
            r"(?:\.login|\bauth[ \t]*=[ \t]*|\bHTTP(?:Basic|Digest|Proxy)Auth|\bNetworkCredential|\bSetBasicAuth"
            r"|\bUsernamePasswordCredentials|\b(?:PDO|getConnection)[ \t]*\([^,\n]{1,300},)"
            r"[ \t]*\(?[ \t]*(?:\"[^\"\n]{1,100}\"|'[^'\n]{1,100}'|[\w.$]{1,100})[ \t]*,[ \t]*"
            r"([\"'])((?:(?!\1)[^\\\n]){4,200})\1[ \t]*[),]"
        ),
        rb"\.login[ \t]*\(|auth[ \t]*=[ \t]*\(|HTTP(?:Basic|Digest|Proxy)Auth[ \t]*\(|NetworkCredential[ \t]*\("
        rb"|UsernamePasswordCredentials[ \t]*\(|PDO[ \t]*\(|SetBasicAuth[ \t]*\(|getConnection[ \t]*\(",
        validate=command_password,
        group=2,
        reach=650,
        rule="password-call-argument",
        keyword_core=40,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # SQL: CREATE USER … IDENTIFIED BY 'X', ALTER ROLE … WITH PASSWORD 'X'
        re.compile(r"(?i)\b(?:identified[ \t]+(?:with[ \t]+\w+[ \t]+)?by|password)[ \t]+'([^'\n]{1,200})'"),
        rb"(?i)(?:identified[ \t]+(?:with[ \t]+\w+[ \t]+)?by|password)[ \t]+'",
        validate=command_password,
        group=1,
        reach=210,
        rule="sql-password",
        keyword_core=48,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # SQL with the password unquoted (Oracle's and PostgreSQL's grammar allows it):
        # `… IDENTIFIED BY X;`, `CREATE ROLE … WITH LOGIN PASSWORD X;`; it must look like a
        # password (not `IDENTIFIED BY VALUES`, `PASSWORD NULL`, prose's "identified by `code`").
        re.compile(r"(?i)\b(?:identified[ \t]+by|(?:with|login)[ \t]+password)[ \t]+([^\s'\"`;\\]{6,200})"),
        rb"(?i)(?:identified[ \t]+by|(?:with|login)[ \t]+password)[ \t]+[^\s'\"`]",
        validate=password_value,
        group=1,
        reach=210,
        rule="sql-password",
        keyword_core=32,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # XML elements (Maven settings.xml, NuGet, Tomcat): <password>X</password>, a key's
        # passphrase (`<passphrase>`), and names in the plural (`<static_passwords>`)
        re.compile(
            r"(?i)<(?:[\w.-]{0,40}:)?[\w.-]{0,40}(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key)s?>"
            r"([^<\n]{1,500})</"
        ),
        rb"(?i)(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key)s?>[^<\n]",
        validate=command_password,
        group=1,
        reach=510,
        rule="xml-secret",
        keyword_core=100,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # Hadoop's and Hive's XML settings: a `<name>` that ends naming a secret, its `<value>`
        # after it (`<name>fs.s3a.secret.key</name><value>…</value>`,
        # `javax.jdo.option.ConnectionPassword`; not `hive.metastore.password.file`).
        re.compile(
            r"(?i)<name>[^<\n]{0,100}(?:secret\.key|access\.key|secret|password|passwd|token|credentials?)"
            r"[^.<\n]{0,20}</name>\s{0,200}"
            r"<value>([^<\n]{1,500})</value>"
        ),
        rb"(?i)<name>[^<\n]{0,100}(?:secret|password|passwd|token|credential|access\.key)",
        validate=command_password,
        group=1,
        reach=900,
        rule="xml-name-value-secret",
        keyword_core=120,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # An XML element named as a key (`<slackKey>`, `<GITLAB_KEY>`, `<license_key>`) holding a
        # generated value; not a public key's, nor a plist's `<key>` (which names a setting).
        re.compile(r"(?i)<(?:[\w.-]{0,40}:)?(?![\w.-]*public)[\w.-]{0,40}key>([^<\s]{16,500})</"),
        rb"(?i)key>[^<\s]{16}",
        validate=validators.service_key,
        group=1,
        lead=90,
        reach=510,
        rule="xml-key",
        keyword_core=24,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # .pgpass: hostname:port:database:username:password, a line each.
        re.compile(r"(?m)^[^\s:#]{1,100}:(?:\d{1,5}|\*):[^\s:]{1,100}:[^\s:]{1,100}:((?:\\:|[^\s:])+)$"),
        rb"(?:^|\n)[^\s:#]{1,64}:(?:\d{1,5}|\*):[^\s:]{1,64}:[^\s:]{1,64}:[^\s:]",
        validate=command_password,
        group=1,
        reach=210,
        rule="pgpass",
        keyword_core=320,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # Escaped JSON (a Secrets Manager SecretString, a JSON string inside a tool result):
        # \"password\":\"X\".
        re.compile(
            r"(?i)[\w-]{0,40}(?:"
            + _PASSWORD_NAMES
            + r"|secret|token|api[_-]?key)\\\\?\"\s*:\s*\\\\?\"([^\\\"\n]{4,500})\\\\?\""
        ),
        rb"(?i)(?:pass(?:word|wd|[_-]?phrase)?|pwd|secret|token|api[_-]?key)\\{1,2}\"\s*:\s*\\{1,2}\"",
        validate=command_password,
        group=1,
        reach=510,
        rule="escaped-json-secret",
        keyword_core=40,
    ),
    Detector(
        "CLOUD_KEY",
        # AWS: the secret access key and the session token beside a (redacted) key id, in CLI
        # JSON, credentials files, environment variables and CLI flags, after its name alone
        # (`aws configure set aws_secret_access_key X`), in the CLI's tables (`| X |`) and as
        # `aws configure` asks for it, in words with the value it holds in brackets (`AWS Secret
        # Access Key [None]: X`, `[****************7t2Q]: X`).
        re.compile(
            r"(?i)(?:secret[_ -]?access[_ -]?key|session[_-]?token|security[_-]?token|s3[an]?\.secret\.key)"
            r"(?:[ \t]*\[[^\]\n]{0,40}\])?"
            r"(?:[\"'\\]{0,2}[ \t]*[:=|][ \t]*[\"'\\]{0,2}|[ \t]+)([A-Za-z0-9/+=]{40,2048})(?![A-Za-z0-9/+=])"
        ),
        rb"(?i)(?:secret[_ -]?access[_ -]?key|session[_-]?token|security[_-]?token|s3[an]?\.secret\.key)",
        validate=lambda value: validators.entropy(value) >= 3.5 and not validators.is_reference(value),
        group=1,
        reach=2070,
        rule="aws-secret",
        keyword_core=24,
        head=re.compile(
            r"(?i)(?:secret[_ -]?access[_ -]?key|session[_-]?token|security[_-]?token|s3[an]?\.secret\.key)"
        ),
    ),
    Detector(
        "CLOUD_KEY",
        # An AWS secret key joined to its key id by a colon: a broker or storage URL's user and
        # password (`sqs://AKIA…:SECRET@`, Celery, kombu, `s3://`) and s3fs's `.passwd-s3fs`.
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}:([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        rb"(?:AKIA|ASIA)[A-Z0-9]{16}:[A-Za-z0-9/+]{40}",
        validate=lambda value: validators.entropy(value) >= 3.5 and not validators.is_reference(value),
        group=1,
        reach=64,
        rule="aws-secret-after-key-id",
    ),
    Detector(
        "CLOUD_KEY",
        # The AWS CLI's text output (`--output text`): `ACCESSKEY <id> <date> <secret> <status>`
        # (iam create-access-key), `CREDENTIALS <id> <expiration> <secret> <token>` (sts).
        re.compile(
            r"\b(?:ACCESSKEY|CREDENTIALS)\t(?:AKIA|ASIA)[A-Z0-9]{16}\t[^\t\n]{0,40}\t([A-Za-z0-9/+=]{40})(?=[\t\r\n]|$)"
        ),
        rb"(?:ACCESSKEY|CREDENTIALS)\t(?:AKIA|ASIA)",
        validate=lambda value: validators.entropy(value) >= 3.5,
        group=1,
        reach=120,
        rule="aws-text-output",
        keyword_core=20,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A Secret's field read out and decoded (`kubectl get secret db -o jsonpath=… | base64 -d`):
        # the password alone on the next line.
        re.compile(
            r"\bkubectl\b[^\n]{0,300}?\bget[ \t]+secrets?\b[^\n]{0,400}?\|[ \t]*base64[ \t]+(?:-d|--decode|-D)\b"
            r"[^\n]{0,40}\r?\n[ \t]*(?P<bare>[^\s]{4,200})[ \t]*(?:\r?\n|$)"
        ),
        rb"\|[ \t]*base64[ \t]+(?:-d|--decode|-D)",
        validate=command_password,
        reach=260,
        rule="kubectl-secret-decoded",
        lead=740,
        keyword_core=40,
        value_span=argument_span,
    ),
    Detector(
        "CLOUD_KEY",
        # Azure storage account keys (64 bytes, base64) as `az storage account keys list` prints
        # them, in JSON, a table or TSV, beside their key name.
        re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/]{86}==(?![\w+/=])"),
        rb"[A-Za-z0-9+/]{86}==",
        check=lambda text, start, end: bool(_AZURE.search(text, max(0, start - 300), start)),
        rule="azure-storage-key",
    ),
    Detector(
        "CLOUD_KEY",
        # A SAS token's signature (`?sv=…&se=…&sig=X`).
        re.compile(r"(?<=[?&;])sig=([A-Za-z0-9%+/=]{16,200})"),
        rb"[?&;]sig=[A-Za-z0-9%+/=]{16}",
        check=lambda text, start, end: bool(_SAS.search(text, max(0, start - 400), start)),
        group=1,
        reach=200,
        rule="azure-sas-signature",
    ),
    Detector(
        "CLOUD_KEY",
        # Google OAuth access tokens (`gcloud auth print-access-token`) and refresh tokens.
        re.compile(r"(?<![\w.-])(?:ya29\.[0-9A-Za-z_-]{20,2048}|1//0[0-9A-Za-z_-]{30,512})"),
        rb"ya29\.[0-9A-Za-z_-]{20}|1//0[0-9A-Za-z_-]{30}",
        reach=2048,
        rule="google-oauth-token",
    ),
    Detector(
        "MESSAGING_TOKEN",
        # A Telegram bot's token (`123456789:AA…`, 35 characters after the colon), bare or in
        # the Bot API's URLs (`https://api.telegram.org/bot<token>/getMe`).
        re.compile(r"(?:(?<=/bot)|(?<![\w:]))\d{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])"),
        rb":AA[A-Za-z0-9_-]{33}",
        lead=11,
        rule="telegram-bot-token",
        keyword_core=36,
    ),
    Detector(
        "MESSAGING_TOKEN",
        # A chat's incoming webhook: whoever holds the URL posts as the integration (Discord's
        # id and token, of any length from 16 characters; a Teams connector's path, and its
        # older form under `outlook.office.com/webhook/`); and Zapier's catch hooks, whose URL
        # starts the integration's workflow with whatever is posted to it.
        re.compile(
            r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{17,20}/[A-Za-z0-9_-]{16,100}"
            r"|https://[\w-]{1,63}\.webhook\.office\.com/webhookb2/[\w@/-]{60,300}"
            r"|https://outlook\.office(?:365)?\.com/webhook/[\w@/-]{40,300}"
            r"|https://hooks\.zapier\.com/hooks/catch/\d{3,12}/[A-Za-z0-9]{5,40}/?"
        ),
        rb"discord(?:app)?\.com/api/webhooks/\d|\.webhook\.office\.com/webhookb2/|outlook\.office(?:365)?\.com/webhook/"
        rb"|hooks\.zapier\.com/hooks/catch/",
        reach=380,
        lead=40,
        rule="chat-webhook-url",
        keyword_core=32,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A session cookie (`Set-Cookie: session=X`, `Cookie: …; PHPSESSID=X`): whoever sends it
        # is logged in as its owner. Other cookies (a theme, a consent flag) are no secrets.
        re.compile(
            r"(?i)\b(?:set-)?cookie[\"']?[ \t]*:[^\n]{0,2000}?(?<![\w.-])"
            r"[\w.-]{0,40}(?:sess|sid|token|auth|jwt|remember|login)[\w.-]{0,64}=\"?([^;\s,\"]{16,4096})"
        ),
        rb"(?i)cookie[\"']?[ \t]{0,3}:",
        validate=opaque_token,
        group=1,
        reach=6200,
        rule="session-cookie",
        keyword_core=16,
        head=re.compile(r"(?i)\b(?:set-)?cookie\b"),
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # The same session cookie given to curl: `curl -b 'sessionid=X; …'`, `--cookie`.
        re.compile(
            r"\bcurl\b[^\n|;&]{0,300}?[ \t](?:-b|--cookie)[ \t]+[\"']?[^\n\"']{0,2000}?(?<![\w.-])"
            r"[\w.-]{0,40}(?i:sess|sid|token|auth|jwt|remember|login)[\w.-]{0,64}=([^;\s,\"']{16,4096})"
        ),
        rb"\bcurl\b[^\n|;&]{0,300}?[ \t](?:-b|--cookie)[ \t]",
        validate=opaque_token,
        group=1,
        reach=6200,
        rule="curl-session-cookie",
        keyword_core=320,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # Authorization: Bearer X (a JWT there is found as one first), and the other schemes that
        # carry a token as it is: `Token X` (Django REST framework, GitHub), `Bot X` (Discord),
        # `SSWS X` (Okta), `GenieKey X` (Opsgenie), `sso-key X` (GoDaddy), `ApiKey X`, `Splunk X`
        # (Splunk's HTTP Event Collector).
        re.compile(
            r"(?i)\bauthorization\b[\"']?\s*[:=]\s*[\"']?\s*(?:bearer|token|bot|ssws|genie ?key|sso-key|api-?key"
            r"|splunk)\s+([A-Za-z0-9._~+/=:-]{16,4096})"
        ),
        rb"(?i)authorization[\"']?\s{0,3}[:=]\s{0,3}[\"']?\s{0,3}"
        rb"(?:bearer|token|bot|ssws|genie ?key|sso-key|api-?key|splunk)\s",
        validate=opaque_token,
        group=1,
        reach=4096,
        rule="bearer-token",
        keyword_core=40,
        head=re.compile(r"(?i)\bauthorization\b"),
    ),
)

# Short passwords under a password name, unquoted (`DBPASS=Tr0ub4dor`), which the assignment
# rule's entropy floor for tokens leaves out; it runs after it.
PASSWORDS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            # (A bracket after the name: PHP's `print_r`, `[password] => X`.)
            r"(?i)(?<![0-9])" + _PASSWORD_NAMES + r"(?![A-Za-z0-9])\\?[\"']?\]?[ \t]{0,32}(?::=|=>|[:=])[ \t]{0,3}"
            r"([^\s\"'`,;}{<>\\]{6,256})"
        ),
        rb"(?i)(?:pass(?:word|wd|[_-]?phrase)?|pwd)\\?[\"']?\]?[ \t]{0,32}(?::=|=>|[:=])[ \t]{0,3}[^\s\"'`,;}{<>\\]{6}",
        validate=password_value,
        check=not_a_status,
        group=1,
        reach=256,
        rule="password-assignment",
        head=re.compile(r"(?i)(?=p)(?<![0-9])" + _PASSWORD_NAMES + r"(?![A-Za-z0-9])"),
    ),
)
