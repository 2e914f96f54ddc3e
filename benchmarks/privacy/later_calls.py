"""Credentials given to calls by position, and defaults under a declared secret's name, written
after the detectors and scored blind once (a twenty-seventh set beside `later_forms.py`'s nine
and the later ones).

Code agents read: the password as a call's positional argument after a user (`server.login("ops",
"X")`, `requests.get(url, auth=("ops", "X"))`, `HTTPBasicAuth`, `SetBasicAuth`, `new
NetworkCredential`, `UsernamePasswordCredentials`, `new PDO($dsn, 'u', 'X')`,
`DriverManager.getConnection(url, "u", "X")`, `FTP(...).login`, `IMAP4_SSL(...).login`, Ruby's
`Net::SMTP.start`), a Basic header built in code (`btoa('u:X')`,
`base64.b64encode(b"u:X")`), PowerShell's `ConvertTo-SecureString 'X' -AsPlainText`, and a
default under a secret's declared name (Terraform's `variable "db_password" { default = "X" }`,
CloudFormation's `Parameters` `Default`, a GitHub Action's input `default:`). Values come from
`later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 30 of 60 values (0.500). Missed:
Go's `SetBasicAuth`, JDBC's `getConnection(url, "u", "X")`, Ruby's `Net::SMTP.start`, an SSH
client's `.connect(host, 22, "u", "X")`, redis-py's positional password, `btoa('u:X')` and
`b64encode(b"u:X")`, Terraform's `variable` default, CloudFormation's and an Action's `Default`
under a secret's name. Rules since (credentials.py's call rule, call_secrets.py): 60 of 60, 199
of 200 over 10 rounds (a default of letters alone is refused by design). On the way: the
`NoEcho` rule took the next parameter's `Default` for the hidden one's (`t3.medium`), fixed.

    python -m benchmarks.privacy.later_calls [--seeds 3] [--show-missed]
"""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("calls", FORMS)


def p_() -> str:
    return pw().replace('"', "").replace("'", "").replace("\\", "")


@form
def smtplib_login() -> Form:
    p = p_()
    return f'server = smtplib.SMTP_SSL("smtp.example.org", 465)\nserver.login("alerts@example.org", "{p}")', [p]


@form
def requests_auth_tuple() -> Form:
    p = p_()
    return f'resp = requests.get(f"{{BASE}}/api/v2/jobs", auth=("ci-bot", "{p}"), timeout=10)', [p]


@form
def http_basic_auth() -> Form:
    p = p_()
    return f"session.auth = HTTPBasicAuth('svc_reports', '{p}')", [p]


@form
def go_set_basic_auth() -> Form:
    p = p_()
    return f'req, _ := http.NewRequest("GET", url, nil)\nreq.SetBasicAuth("deploy", "{p}")', [p]


@form
def csharp_network_credential() -> Form:
    p = p_()
    return f'client.Credentials = new NetworkCredential("svc_sharepoint", "{p}");', [p]


@form
def java_credentials() -> Form:
    p = p_()
    return (
        f'provider.setCredentials(AuthScope.ANY, new UsernamePasswordCredentials("jenkins", "{p}"));',
        [p],
    )


@form
def php_pdo() -> Form:
    p = p_()
    return f"$pdo = new PDO('mysql:host=db.internal;dbname=shop', 'shop_app', '{p}');", [p]


@form
def jdbc_get_connection() -> Form:
    p = p_()
    return f'Connection c = DriverManager.getConnection("jdbc:postgresql://db:5432/app", "app", "{p}");', [p]


@form
def ftp_login() -> Form:
    p = p_()
    return f"ftp = ftplib.FTP('ftp.example.org')\nftp.login('uploader', '{p}')", [p]


@form
def imap_login() -> Form:
    p = p_()
    return f"mail = imaplib.IMAP4_SSL('imap.example.org')\nmail.login('inbox@example.org', '{p}')", [p]


@form
def ruby_smtp() -> Form:
    p = p_()
    return f"Net::SMTP.start('smtp.example.org', 587, 'example.org', 'mailer', '{p}', :login) do |smtp|", [p]


@form
def js_btoa_basic() -> Form:
    p = p_().replace(":", "")
    return f"headers: {{ Authorization: 'Basic ' + btoa('api-user:{p}') }},", [p]


@form
def python_b64_basic() -> Form:
    p = p_().replace(":", "")
    return f'token = base64.b64encode(b"svc_export:{p}").decode()\nheaders = {{"Authorization": f"Basic {{token}}"}}', [
        p
    ]


@form
def powershell_securestring() -> Form:
    p = p_()
    return (
        f"$secure = ConvertTo-SecureString '{p}' -AsPlainText -Force\n"
        "$cred = New-Object System.Management.Automation.PSCredential('CORP\\svc_backup', $secure)",
        [p],
    )


@form
def terraform_variable_default() -> Form:
    p = p_()
    return (
        f'variable "db_password" {{\n  type      = string\n  sensitive = true\n  default   = "{p}"\n}}',
        [p],
    )


@form
def cloudformation_default() -> Form:
    p = p_()
    return (
        f"Parameters:\n  DBPassword:\n    Type: String\n    NoEcho: false\n    Default: '{p}'\n    MinLength: 8\n",
        [p],
    )


@form
def action_input_default() -> Form:
    t = an(36)
    return (
        "inputs:\n  api-token:\n    description: 'Token for the release API'\n    required: false\n"
        f"    default: '{t}'\n",
        [t],
    )


@form
def mongo_client_positional() -> Form:
    p = p_()
    return f'client = MongoClient("mongodb.internal", 27017, username="reporter", password="{p}")', [p]


@form
def paramiko_positional() -> Form:
    p = p_()
    return f"ssh.connect('bastion.example.org', 22, 'ops', '{p}')", [p]


@form
def redis_positional() -> Form:
    p = p_()
    return f"r = redis.Redis('cache.internal', 6379, 0, '{p}')", [p]


def main(argv: list[str] | None = None) -> None:
    set_main("calls", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
