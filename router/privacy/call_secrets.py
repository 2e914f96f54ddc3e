"""Credentials that code passes by position or encodes on the spot, and defaults under a declared
secret's name: the call's or the declaration's shape, not a name beside the value, says which
value is the password.

An SSH client's `.connect(host, 22, "user", "X")`, Ruby's `Net::SMTP.start(…, "user", "X",
:login)`, redis-py's `Redis(host, 6379, 0, "X")`; a Basic credential encoded in code
(`btoa('user:X')`, `base64.b64encode(b"user:X")`); a default under a declared secret
(Terraform's `variable "db_password" { default = "X" }`, CloudFormation's parameter or a GitHub
Action's input whose name holds a secret's word, then `Default:` below it); Twilio's auth token
beside its account SID (`Client("AC…", "X")`); a C++ string constructed or assigned with the
literal under a secret's name (`std::string secret("X")`, `QString token{"X"}`,
`api_key.assign("X")`); the second value of a parallel assignment whose second name is a
secret's (`user, password = "admin", "X"`, Go's `id, secret := "…", "X"`). Go's `SetBasicAuth`
and JDBC's `getConnection(url, "user", "X")` are credentials.py's call rule."""

from __future__ import annotations

import re

from router.privacy import validators
from router.privacy.credentials import argument_span, command_password, password_value
from router.privacy.detector import Detector
from router.privacy.patterns import SECRET_WORDS

_Q = r"(?:\"[^\"\n]{1,100}\"|'[^'\n]{1,100}')"  # a quoted argument (a host, a user)
_PW = r"([\"'])((?:(?!\1)[^\\\n]){4,200})\1"  # the quoted password: groups 1 (quote), 2 (value)


def _default_value(value: str) -> bool:
    """A declared secret's default: a password's or a token's shape, not a placeholder."""
    return password_value(value) or validators.secret_value(value)


_CXX_STRING = r"(?:std::)?(?:w?string|u(?:8|16|32)string|string_view|QString|CString|String)"

DETECTORS: tuple[Detector, ...] = (
    Detector(
        "SECRET_ASSIGNMENT",
        # Two names and two values (Python's, Go's, Ruby's, Lua's parallel assignment; Go's with a
        # type after the names): the second name a secret's, the second value its literal.
        re.compile(
            r"(?<![\w.])[\w.]{1,40}[ \t]*,[ \t]*[\w.]{0,40}?(?i:" + SECRET_WORDS + r")[0-9]{0,2}(?![A-Za-z0-9])"
            r"(?:[ \t]+[A-Za-z_][\w.]{0,30})?[ \t]*:?=(?!=)[ \t]*"
            r"(?:[bru]?\"[^\"\n]{0,200}\"|[bru]?'[^'\n]{0,200}'|[\w.]{1,40})[ \t]*,[ \t]*"
            r"[bru]?([\"'])((?:(?!\1)[^\\\n]){6,200})\1"
        ),
        # (The core starts at the secret's word: led by the comma and the name's first characters,
        # it cost hyperscan's pass ~3 % of typical text.)
        b"(?i)"
        + SECRET_WORDS.encode()
        + rb"[0-9]{0,2}(?:[ \t]+[A-Za-z_][\w.]{0,30})?[ \t]*:?=[ \t]*[^\n,=]{1,203},[ \t]*[bru]?[\"']",
        validate=validators.quoted_secret,
        group=2,
        lead=100,
        reach=220,
        keyword_core=300,
        rule="parallel-assignment-secret",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # C++'s direct initialisation of a string named for a secret, and `assign` of a literal.
        re.compile(
            r"(?:\b" + _CXX_STRING + r"[ \t]*&?[ \t]+[\w]{0,40}?(?i:" + SECRET_WORDS + r")[0-9]{0,2}[ \t]*[({]"
            r"|(?<![\w.])[\w]{0,40}?(?i:" + SECRET_WORDS + r")[0-9]{0,2}\.assign\()"
            r"[ \t]*(?:L|u8|u|U)?\"((?:[^\"\\\n]|\\.){6,4096})\""
        ),
        b"(?i)" + SECRET_WORDS.encode() + rb"[0-9]{0,2}(?:[ \t]*[({]|\.assign\()[ \t]*(?:L|u8|u|U)?\"",
        validate=validators.quoted_secret,
        group=1,
        lead=90,
        reach=4100,
        keyword_core=60,
        rule="string-constructed-secret",
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(rf"\.connect\([ \t]*{_Q}[ \t]*,[ \t]*\d{{1,5}}[ \t]*,[ \t]*{_Q}[ \t]*,[ \t]*{_PW}[ \t]*[,)]"),
        rb"\.connect\([ \t]*[\"']",
        validate=command_password,
        group=2,
        reach=420,
        rule="ssh-connect-password",
        keyword_core=16,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            rf"\bNet::SMTP\.start\([^()\n]{{0,240}}?,[ \t]*{_Q}[ \t]*,[ \t]*{_PW}[ \t]*,[ \t]*:(?:login|plain|cram_md5)"
        ),
        rb"Net::SMTP\.start\(",
        validate=command_password,
        group=2,
        reach=640,
        rule="ruby-smtp-password",
        keyword_core=20,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(rf"\b(?:Strict)?Redis\([ \t]*{_Q}[ \t]*,[ \t]*\d{{1,5}}[ \t]*,[ \t]*\d{{1,2}}[ \t]*,[ \t]*{_PW}"),
        rb"Redis\([ \t]*[\"']",
        validate=command_password,
        group=2,
        reach=420,
        rule="redis-positional-password",
        keyword_core=16,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # `user:password` encoded into a Basic header in code: the password after the colon.
        re.compile(
            r"\b(?:btoa|b64encode|base64_encode|encode64|strict_encode64|Buffer\.from)\([ \t]*b?([\"'`])"
            r"[^\"'`:\s]{1,100}:((?:(?!\1)[^\\\n]){4,200})\1"
        ),
        rb"(?:btoa|b64encode|base64_encode|encode64|Buffer\.from)[ \t]*\([ \t]*b?[\"'`]",
        validate=command_password,
        group=2,
        reach=320,
        rule="basic-credentials-encoded",
        keyword_core=24,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        re.compile(
            r"\bvariable[ \t]+\"[\w-]*?(?i:" + SECRET_WORDS + r")[\w-]*\"[ \t]*\{[^{}]{0,400}?\bdefault[ \t]*=[ \t]*"
            r"\"([^\"\n]{4,200})\""
        ),
        rb"variable[ \t]+\"",
        validate=_default_value,
        group=1,
        reach=700,
        rule="terraform-variable-default",
        keyword_core=16,
    ),
    Detector(
        "SECRET_ASSIGNMENT",
        # A YAML declaration named for a secret, its `Default:` a few lines below at a deeper indent
        # (CloudFormation's `Parameters`, a GitHub Action's `inputs`).
        re.compile(
            r"(?m)^([ \t]*)[\w-]*?(?i:" + SECRET_WORDS + r")[\w-]*:[ \t]*\r?\n(?:\1[ \t]+[^\n]*\r?\n){0,8}?"
            r"\1[ \t]+[Dd]efault:[ \t]*"
            r"(?:\"(?P<dq>[^\"\n]{4,200})\"|'(?P<sq>[^'\n]{4,200})'|(?P<bare>[^\s\"'#]{4,200}))"
            r"[ \t]*\r?$"
        ),
        rb"(?:Default|default):[ \t]*[\"']?[^\s\"']{4}",
        validate=_default_value,
        group=0,
        value_span=argument_span,
        lead=900,
        reach=220,
        rule="declared-secret-default",
        keyword_core=24,
    ),
    Detector(
        "MESSAGING_TOKEN",
        # Twilio's client made with its account SID and auth token by position (`Client("AC…",
        # "…")`, `TwilioRestClient(sid, token)` written out): the 32 hex digits after the SID are
        # its auth token, which has no mark of its own.
        re.compile(
            r"(?<![0-9A-Za-z])AC[0-9a-f]{32}([\"'])[ \t]*,[ \t]*(?:\w{1,30}[ \t]*=[ \t]*)?([\"'])([0-9a-f]{32})\2"
        ),
        rb"AC[0-9a-f]{32}[\"'][ \t]{0,8},",
        group=3,
        reach=120,
        rule="twilio-auth-token-by-position",
        keyword_core=48,
    ),
)
