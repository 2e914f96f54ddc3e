"""Credentials in forms written after the detectors: an evaluation scored blind, once a set.

`agent_forms.py`'s forms and the detectors were written by the same hand from the same
documentation, so its figures say that those forms are handled, not how well forms nobody wrote
down are. These 276 forms (nine sets: command lines, configuration files, CLI and API outputs,
code; from the tools' manuals: LDAP, PostgreSQL and MongoDB URLs, git remotes, pip indexes,
RabbitMQ, htpasswd, OpenSSL, keytool, Vault, SQL Server, SMB, wget, FTP, Azure and AWS CLIs,
service-account JSON, kubectl, Compose, Spring, Django, PyPI, Maven, WordPress, Terraform,
Wi-Fi, NetworkManager, webhooks, API-key headers and query strings, cookies, OpenSSH keys, DSNs,
JDBC, Docker, Heroku, GitHub's CLI, Ansible, Twilio, OAuth, INI, TOML, ECS, SSM, redis.conf,
Oracle, FreeRDP, PsExec, archives, lftp, MinIO, s3cmd, rclone, GitHub Actions, CIFS, hostapd,
HTTP logins, Python, C#, PHP, Go and Node.js calls, PuTTY, Cassandra, HTTPie, ngrok, nslcd,
SSSD, mailers, PPP's chap-secrets, PgBouncer's userlist; OCI and Alibaba configs, DigitalOcean
Spaces, proxy and git Basic headers, Yarn, Terraform Cloud, Cargo, RubyGems, NuGet, Docker
identity tokens, Codecov, SonarQube, ADO.NET strings, AMQP, Jenkins' CLI, kubectl tokens,
Hugging Face, Stripe, SendGrid, OpenAI and Anthropic keys, expect scripts, PowerShell; web
frameworks' and services' keys in `.env` files and configs, Telegram, Asana, Kafka, Elastic;
base64 in Helm values, Secrets and env files, kubectl's output, cloud CLIs' tables and text,
SDK calls and providers' tokens; tool output and logs: curl -v, pytest's locals, tracebacks,
git remote -v, docker history, set -x, kubectl describe, Helm and Ansible output, Terraform plans
and state, CI logs, npm's debug log, access logs, Redis MONITOR, MySQL's process list;
self-hosted services' and network devices' configurations: GitLab, Nextcloud, Keycloak, MinIO,
Mattermost, Gitea, Home Assistant, Postfix, WireGuard, IPsec, SNMP, a switch, PgBouncer, ODBC,
RabbitMQ, proxies, Subversion, Jupyter, Grafana, Airflow, Spark, Hadoop; passwords and keys
in prose, chat, tickets, tables and comments) were written after
the detectors and each set scored by `detect` before any rule was written for it: 141 of 156
values, 48 of 93, 39 of 90, 84 of 99, 92 of 102, 69 of 84, 69 of 72, 54 of 78, 18 of 51
(three rounds each). The misses then got rules and tests
(`tests/test_privacy_agent_forms.py`): from then on these figures are a development set's, and a
regression check. Values come from this module's own random generator (no Faker).

    python -m benchmarks.privacy.later_forms [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
from collections import Counter
from collections.abc import Callable

from router.privacy.detect import detect

Form = tuple[str, list[str]]  # (text, the secrets in it)
FORMS: list[tuple[str, Callable[[], Form]]] = []
R = random.Random(0)  # reseeded per round (`score`)


def form(batch: str) -> Callable[[Callable[[], Form]], Callable[[], Form]]:
    def add(make: Callable[[], Form]) -> Callable[[], Form]:
        FORMS.append((batch, make))
        return make

    return add


def an(n: int) -> str:
    return "".join(R.choice(string.ascii_letters + string.digits) for _ in range(n))


def pw() -> str:
    kind = R.randrange(3)
    if kind == 0:
        return R.choice(["Sunny", "Tiger", "Mango", "Falcon", "Orbit"]) + str(R.randint(10, 9999)) + R.choice("!#%*")
    if kind == 1:
        return "".join(R.choice(string.ascii_letters + string.digits + "!#%*-_") for _ in range(R.randint(10, 18)))
    return an(R.randint(12, 22))


def pw_without(marks: str) -> str:
    """A password of `pw`'s kinds with none of `marks` (the characters a form's syntax splits on),
    eight characters at least."""
    value = pw()
    for mark in marks:
        value = value.replace(mark, "")
    return value + "x9" if len(value) < 8 else value


def hexs(n: int) -> str:
    return "".join(R.choice("0123456789abcdef") for _ in range(n))


def host() -> str:
    return R.choice(["db.internal", "10.0.3.17", "pg-main.prod.svc", "cache01"])


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def user() -> str:
    return R.choice(["deploy", "admin", "svc_app", "jenkins", "root"])


@form("first")
def ldap() -> Form:
    p = pw().replace("'", "")
    return (f"ldapsearch -x -H ldap://{host()} -D 'cn=admin,dc=corp,dc=io' -w '{p}' -b 'dc=corp,dc=io'", [p])


@form("first")
def pg_url() -> Form:
    p = an(16)
    return (f'psql "postgresql://{user()}:{p}@{host()}:5432/app?sslmode=require" -c "\\dt"', [p])


@form("first")
def mongo_srv() -> Form:
    p = an(14)
    return (f'mongosh "mongodb+srv://{user()}:{p}@cluster0.ab12c.mongodb.net/test"', [p])


@form("first")
def git_clone() -> Form:
    t = "ghp_" + an(36)
    return (f"git clone https://{user()}:{t}@github.com/acme/infra.git", [t])


@form("first")
def git_clone_pw() -> Form:
    p = an(18)
    return (f"git remote set-url origin https://{user()}:{p}@gitlab.acme.io/team/app.git", [p])


@form("first")
def pip_index() -> Form:
    p = an(20)
    return (f"pip install --extra-index-url https://{user()}:{p}@pypi.acme.io/simple/ acme-core", [p])


@form("first")
def rabbit() -> Form:
    p = an(15)
    return (f"rabbitmqctl add_user {user()} {p}", [p])


@form("first")
def htpasswd() -> Form:
    p = pw().replace("'", "")
    return (f"htpasswd -b -c /etc/nginx/.htpasswd {user()} '{p}'", [p])


@form("first")
def openssl() -> Form:
    p = an(14)
    return (f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{p}", [p])


@form("first")
def keytool() -> Form:
    p = an(12)
    return (f"keytool -importkeystore -srckeystore a.p12 -destkeystore b.jks -deststorepass {p} -srcstorepass {p}", [p])


@form("first")
def vault_tok() -> Form:
    t = "hvs." + an(24)
    return (f"export VAULT_TOKEN={t}\nvault kv get secret/app", [t])


@form("first")
def sqlcmd() -> Form:
    p = pw().replace("'", "")
    return (f"sqlcmd -S {host()},1433 -U sa -P '{p}' -Q 'SELECT @@VERSION'", [p])


@form("first")
def smb() -> Form:
    p = an(12)
    return (f"smbclient //fs01/share -U {user()}%{p} -c 'ls'", [p])


@form("first")
def wget() -> Form:
    p = an(13)
    return (f"wget --user={user()} --password={p} https://{host()}/backup.tar.gz", [p])


@form("first")
def ftp() -> Form:
    p = an(11)
    return (f"curl -T dump.sql ftp://{user()}:{p}@{host()}/uploads/", [p])


@form("first")
def az_sp() -> Form:
    s = an(8) + "~" + an(31)
    return (
        f"az login --service-principal -u 3f1c2a9e-1b2c-4d5e-8f90-123456789abc -p {s} --tenant 72f988bf-86f1-41af-91ab-2d7cd011db47",
        [s],
    )


@form("first")
def aws_configure() -> Form:
    s = an(40)
    return (f"aws configure set aws_secret_access_key {s} --profile prod", [s])


@form("first")
def aws_creds() -> Form:
    s = an(40)
    return (
        f"[default]\naws_access_key_id = AKIA{an(16).upper()}\naws_secret_access_key = {s}\nregion = eu-west-1",
        [s],
    )


@form("first")
def gcp_sa() -> Form:
    k = base64.b64encode(R.randbytes(600)).decode()
    pem = "-----BEGIN PRIVATE KEY-----\n" + k[:64] + "\n" + k[64:128] + "\n-----END PRIVATE KEY-----\n"
    return (
        json.dumps(
            {
                "type": "service_account",
                "project_id": "acme-prod",
                "private_key_id": hexs(40),
                "private_key": pem,
                "client_email": "ci@acme-prod.iam.gserviceaccount.com",
            }
        ),
        [k[:64]],
    )


@form("first")
def kubectl_lit() -> Form:
    p = pw().replace("'", "")
    return (
        f"kubectl create secret generic db-creds --from-literal=username={user()} --from-literal=password='{p}'",
        [p],
    )


@form("first")
def compose() -> Form:
    p = an(16)
    return (
        f"services:\n  db:\n    image: postgres:16\n    environment:\n      - POSTGRES_USER={user()}\n      - POSTGRES_PASSWORD={p}\n",
        [p],
    )


@form("first")
def spring() -> Form:
    p = pw()
    return (
        f"spring.datasource.url=jdbc:mysql://{host()}:3306/shop\nspring.datasource.username={user()}\nspring.datasource.password={p}",
        [p],
    )


@form("first")
def django() -> Form:
    p = pw().replace("'", "")
    return (
        f"DATABASES = {{\n    'default': {{\n        'ENGINE': 'django.db.backends.postgresql',\n        'NAME': 'app',\n        'USER': '{user()}',\n        'PASSWORD': '{p}',\n        'HOST': '{host()}',\n    }}\n}}",
        [p],
    )


@form("first")
def pypirc() -> Form:
    p = "pypi-" + an(60)
    return (f"[pypi]\nusername = __token__\npassword = {p}", [p])


@form("first")
def m2() -> Form:
    p = an(18)
    return (
        f"<servers>\n  <server>\n    <id>nexus</id>\n    <username>{user()}</username>\n    <password>{p}</password>\n  </server>\n</servers>",
        [p],
    )


@form("first")
def wp() -> Form:
    p = pw().replace("'", "")
    return (
        f"define( 'DB_NAME', 'wordpress' );\ndefine( 'DB_USER', '{user()}' );\ndefine( 'DB_PASSWORD', '{p}' );",
        [p],
    )


@form("first")
def tfvars() -> Form:
    p = an(20)
    return (f'db_username = "{user()}"\ndb_password = "{p}"\ninstance_class = "db.t3.micro"', [p])


@form("first")
def wpa() -> Form:
    p = pw().replace('"', "")
    return (f'network={{\n    ssid="office"\n    psk="{p}"\n}}', [p])


@form("first")
def nmcli() -> Form:
    p = an(12)
    return (f"nmcli dev wifi connect office password {p}", [p])


@form("first")
def slack_hook() -> Form:
    t = f"https://hooks.slack.com/services/T{an(8).upper()}/B{an(8).upper()}/{an(24)}"
    return (
        f"""curl -X POST -H 'Content-type: application/json' --data '{{"text":"done"}}' {t}""",
        [t.rsplit("/", 1)[1]],
    )


@form("first")
def api_key_header() -> Form:
    k = an(32)
    return (f"curl -H 'X-API-Key: {k}' https://api.acme.io/v2/orders", [k])


@form("first")
def query_key() -> Form:
    k = an(32)
    return (f"GET https://maps.acme.io/api/geocode?address=Main+St&key={k} 200 OK", [k])


@form("first")
def access_token_url() -> Form:
    k = an(40)
    return (f"https://graph.acme.io/v1/me?access_token={k}&fields=id,name", [k])


@form("first")
def cookie() -> Form:
    k = an(32)
    return (f"curl -b 'sessionid={k}; csrftoken=abc' https://{host()}/admin/", [k])


@form("first")
def set_cookie() -> Form:
    k = an(40)
    return (f"HTTP/1.1 302 Found\nSet-Cookie: session={k}; Path=/; HttpOnly; Secure\nLocation: /dashboard", [k])


@form("first")
def openssh_key() -> Form:
    k = base64.b64encode(R.randbytes(300)).decode()
    body = "\n".join(k[i : i + 70] for i in range(0, len(k), 70))
    return (
        f"$ cat ~/.ssh/id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----",
        [k[:70]],
    )


@form("first")
def env_export() -> Form:
    p = an(24)
    return (f"export DATABASE_PASSWORD='{p}'\nexport APP_ENV=prod", [p])


@form("first")
def dsn() -> Form:
    p = an(16)
    return (
        f"SENTRY_DSN=https://{hexs(32)}@o12345.ingest.sentry.io/67890\nREDIS_URL=redis://default:{p}@{host()}:6379/0",
        [p],
    )


@form("first")
def jdbc() -> Form:
    p = an(14)
    return (f"jdbc:sqlserver://{host()}:1433;databaseName=app;user={user()};password={p};encrypt=true", [p])


@form("first")
def yaml_nested() -> Form:
    p = pw()
    return (f"database:\n  host: {host()}\n  port: 5432\n  credentials:\n    user: {user()}\n    pass: {p}\n", [p])


@form("first")
def env_json() -> Form:
    p = an(20)
    return (json.dumps({"Env": [f"MYSQL_ROOT_PASSWORD={p}", "MYSQL_DATABASE=shop"], "Image": "mysql:8"}, indent=2), [p])


@form("first")
def docker_inspect() -> Form:
    p = an(20)
    return (json.dumps([{"Config": {"Env": ["PATH=/usr/bin", f"POSTGRES_PASSWORD={p}"]}}]), [p])


@form("first")
def heroku() -> Form:
    p = an(24)
    return (f"heroku config:set STRIPE_SECRET={p} -a acme-api", [p])


@form("first")
def gh_secret() -> Form:
    p = an(30)
    return (f"gh secret set DEPLOY_TOKEN --body '{p}'", [p])


@form("first")
def ansible() -> Form:
    p = pw().replace("'", "")
    return (f"ansible-playbook site.yml -e 'ansible_become_pass={p}' -i hosts", [p])


@form("first")
def mysql_dump_pw() -> Form:
    p = an(14)
    return (f"mysqldump --user={user()} --password={p} --all-databases > all.sql", [p])


@form("first")
def twilio() -> Form:
    t = hexs(32)
    return (f"TWILIO_ACCOUNT_SID=AC{hexs(32)}\nTWILIO_AUTH_TOKEN={t}", [t])


@form("first")
def oauth_json() -> Form:
    t = an(40)
    r2 = an(40)
    return (
        json.dumps(
            {"access_token": t, "token_type": "Bearer", "expires_in": 3599, "refresh_token": r2, "scope": "read"}
        ),
        [t, r2],
    )


@form("first")
def client_secret() -> Form:
    s = an(34)
    return (f"OAUTH_CLIENT_ID=123456789-abc.apps.acme.com\nOAUTH_CLIENT_SECRET={s}", [s])


@form("first")
def ini_pw() -> Form:
    p = pw()
    return (f"[client]\nuser = {user()}\npassword = {p}\nhost = {host()}", [p])


@form("first")
def toml_pw() -> Form:
    p = pw().replace('"', "")
    return (f'[database]\nurl = "postgres://{host()}/app"\npassword = "{p}"', [p])


@form("second")
def k8s_env() -> Form:
    p = an(16)
    return (
        f'    env:\n      - name: DB_PASSWORD\n        value: "{p}"\n      - name: DB_HOST\n        value: {host()}',
        [p],
    )


@form("second")
def k8s_env_bare() -> Form:
    p = pw()
    return (f"        env:\n        - name: API_TOKEN\n          value: {p}\n", [p])


@form("second")
def ecs_env() -> Form:
    p = an(20)
    return (
        json.dumps(
            {"environment": [{"name": "STRIPE_SECRET_KEY", "value": p}, {"name": "PORT", "value": "8080"}]}, indent=2
        ),
        [p],
    )


@form("second")
def ssm() -> Form:
    p = pw()
    return (
        json.dumps(
            {"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": p, "Version": 3}}, indent=4
        ),
        [p],
    )


@form("second")
def vault_table() -> Form:
    p = pw()
    return (f"====== Data ======\nKey         Value\n---         -----\npassword    {p}\nusername    {user()}", [p])


@form("second")
def tf_output() -> Form:
    p = an(18)
    return (json.dumps({"db_password": {"sensitive": True, "type": "string", "value": p}}, indent=2), [p])


@form("second")
def redis_conf() -> Form:
    p = an(18)
    return (f"bind 0.0.0.0\nport 6379\nrequirepass {p}\nmaxmemory 2gb", [p])


@form("second")
def masterauth() -> Form:
    p = an(18)
    return (f"replicaof 10.0.0.5 6379\nmasterauth {p}\n", [p])


@form("second")
def sqlplus() -> Form:
    p = an(10)
    return (f"sqlplus {user()}/{p}@//{host()}:1521/ORCLPDB1", [p])


@form("second")
def xfreerdp() -> Form:
    p = pw().replace("'", "")
    return (f"xfreerdp /v:{host()} /u:Administrator /p:'{p}' /cert:ignore", [p])


@form("second")
def psexec() -> Form:
    p = an(12)
    return (f"psexec \\\\{host()} -u Administrator -p {p} cmd.exe", [p])


@form("second")
def zip_p() -> Form:
    p = an(12)
    return (f"zip -r -P {p} backup.zip ./data", [p])


@form("second")
def sevenz() -> Form:
    p = an(12)
    return (f"7z a -p{p} -mhe=on secrets.7z ./keys", [p])


@form("second")
def lftp() -> Form:
    p = an(12)
    return (f"lftp -u {user()},{p} sftp://{host()}", [p])


@form("second")
def mc_alias() -> Form:
    a = an(20).upper()
    s = an(40)
    return (f"mc alias set minio http://{host()}:9000 {a} {s}", [s])


@form("second")
def s3cfg() -> Form:
    s = an(40)
    return (f"[default]\naccess_key = {an(20).upper()}\nsecret_key = {s}\nhost_base = s3.amazonaws.com", [s])


@form("second")
def rclone() -> Form:
    s = an(40)
    return (
        f"[s3remote]\ntype = s3\nprovider = AWS\naccess_key_id = AKIA{an(16).upper()}\nsecret_access_key = {s}\nregion = us-east-1",
        [s],
    )


@form("second")
def spring_default() -> Form:
    p = an(14)
    return (f"spring:\n  datasource:\n    password: ${{DB_PASSWORD:{p}}}", [p])


@form("second")
def heroku_config() -> Form:
    p = an(64).lower()
    return (
        f"=== acme-api Config Vars\nDATABASE_URL:    postgres://u:{an(12)}@ec2-1-2-3-4.compute-1.amazonaws.com:5432/d\nSECRET_KEY_BASE: {p}",
        [p],
    )


@form("second")
def printenv() -> Form:
    t = an(32)
    return (f"HOME=/root\nSLACK_BOT_TOKEN={t}\nAPP_ENV=production", [t])


@form("second")
def gha() -> Form:
    t = an(30)
    return (f"jobs:\n  deploy:\n    env:\n      NPM_TOKEN: {t}\n      NODE_ENV: production", [t])


@form("second")
def conn_kv() -> Form:
    p = an(14)
    return (f'conn = psycopg2.connect("host={host()} dbname=app user={user()} password={p}")', [p])


@form("second")
def mount_cifs() -> Form:
    p = an(12)
    return (f"mount -t cifs //fs01/share /mnt -o username={user()},password={p},vers=3.0", [p])


@form("second")
def hostapd() -> Form:
    p = an(14)
    return (f"interface=wlan0\nssid=office\nwpa=2\nwpa_passphrase={p}", [p])


@form("second")
def curl_data() -> Form:
    p = pw().replace("'", "").replace("&", "")
    return (f"curl -X POST https://{host()}/login -d 'username={user()}&password={p}'", [p])


@form("second")
def json_login() -> Form:
    p = pw()
    return (
        f"curl -X POST https://{host()}/api/login -H 'Content-Type: application/json' -d '{json.dumps({'email': 'a@b.io', 'password': p})}'",
        [p],
    )


@form("second")
def python_kw() -> Form:
    p = pw().replace('"', "")
    return (f'client = Client(host="{host()}", username="{user()}", password="{p}")', [p])


@form("second")
def python_dict() -> Form:
    t = an(32)
    return (f"headers = {{'Authorization': 'Token {t}', 'Accept': 'application/json'}}", [t])


@form("second")
def apikey_header_json() -> Form:
    t = an(32)
    return (json.dumps({"headers": {"x-api-key": t, "accept": "*/*"}}), [t])


@form("second")
def git_creds() -> Form:
    p = an(20)
    return (f"$ cat ~/.git-credentials\nhttps://{user()}:{p}@github.com", [p])


@form("second")
def npmrc_pw() -> Form:
    p = an(20)
    return (f"//registry.acme.io/:_password={p}\n//registry.acme.io/:username={user()}", [p])


@form("third")
def docker_run_e() -> Form:
    p = an(16)
    return (f"docker run -d -e POSTGRES_PASSWORD={p} -p 5432:5432 postgres:16", [p])


@form("third")
def helm_set() -> Form:
    p = an(16)
    return (f"helm install my-redis bitnami/redis --set auth.password={p} --namespace cache", [p])


@form("third")
def kubectl_docker_reg() -> Form:
    p = an(20)
    return (
        f"kubectl create secret docker-registry regcred --docker-server=reg.acme.io --docker-username=ci --docker-password={p}",
        [p],
    )


@form("third")
def az_sp_out() -> Form:
    p = an(8) + "~" + an(31)
    return (
        json.dumps(
            {
                "appId": "3f1c2a9e-1b2c-4d5e-8f90-123456789abc",
                "displayName": "ci",
                "password": p,
                "tenant": "72f988bf-86f1-41af-91ab-2d7cd011db47",
            },
            indent=2,
        ),
        [p],
    )


@form("third")
def acr_creds() -> Form:
    p = an(32)
    return (
        json.dumps(
            {
                "passwords": [{"name": "password", "value": p}, {"name": "password2", "value": an(32)}],
                "username": "acmereg",
            },
            indent=2,
        ),
        [p],
    )


@form("third")
def gcloud_sql() -> Form:
    p = an(14)
    return (f"gcloud sql users set-password root --host=% --instance=prod-db --password={p}", [p])


@form("third")
def ngrok() -> Form:
    t = an(27) + "_" + an(21)
    return (f"ngrok config add-authtoken {t}", [t])


@form("third")
def plink() -> Form:
    p = an(12)
    return (f"plink -ssh -pw {p} {user()}@{host()} 'uptime'", [p])


@form("third")
def pscp() -> Form:
    p = an(12)
    return (f"pscp -pw {p} backup.tar.gz {user()}@{host()}:/tmp/", [p])


@form("third")
def cqlsh() -> Form:
    p = an(12)
    return (f"cqlsh {host()} 9042 -u cassandra -p {p}", [p])


@form("third")
def oauth2_bearer() -> Form:
    t = an(40)
    return (f"curl --oauth2-bearer {t} https://api.acme.io/v1/me", [t])


@form("third")
def x_auth_token() -> Form:
    t = an(32)
    return (f"curl -H 'X-Auth-Token: {t}' https://{host()}/v3/projects", [t])


@form("third")
def httpie() -> Form:
    p = an(12)
    return (f"http -a {user()}:{p} GET https://{host()}/api/status", [p])


@form("third")
def bindpw() -> Form:
    p = an(14)
    return (f"uri ldap://{host()}/\nbase dc=corp,dc=io\nbinddn cn=reader,dc=corp,dc=io\nbindpw {p}\n", [p])


@form("third")
def sssd() -> Form:
    p = an(14)
    return (f"[domain/corp]\nldap_default_bind_dn = cn=reader,dc=corp,dc=io\nldap_default_authtok = {p}\n", [p])


@form("third")
def msmtp() -> Form:
    p = an(14)
    return (f"account default\nhost smtp.acme.io\nport 587\nuser bot@acme.io\npassword {p}\n", [p])


@form("third")
def fetchmail() -> Form:
    p = an(12)
    return (f'poll mail.acme.io protocol imap user "bot" password "{p}"', [p])


@form("third")
def py_login() -> Form:
    p = pw().replace('"', "")
    return (f'server = smtplib.SMTP("smtp.acme.io", 587)\nserver.login("bot@acme.io", "{p}")', [p])


@form("third")
def py_auth_tuple() -> Form:
    p = pw().replace('"', "")
    return (f'r = requests.get(url, auth=("{user()}", "{p}"), timeout=10)', [p])


@form("third")
def basic_auth_obj() -> Form:
    p = pw().replace('"', "")
    return (f'auth = HTTPBasicAuth("{user()}", "{p}")', [p])


@form("third")
def csharp_cred() -> Form:
    p = pw().replace('"', "")
    return (f'client.Credentials = new NetworkCredential("{user()}", "{p}");', [p])


@form("third")
def node_conn() -> Form:
    p = an(14)
    return (f"const pool = new Pool({{ host: '{host()}', user: '{user()}', password: '{p}', database: 'app' }});", [p])


@form("third")
def go_dsn() -> Form:
    p = an(14)
    return (f'dsn := "{user()}:{p}@tcp({host()}:3306)/app?parseTime=true"', [p])


@form("third")
def systemd_env() -> Form:
    p = an(24)
    return (f'[Service]\nEnvironment="API_KEY={p}"\nExecStart=/usr/bin/app', [p])


@form("third")
def chap() -> Form:
    p = an(12)
    return (f'# client server secret IP addresses\n"{user()}" * "{p}" *', [p])


@form("third")
def userlist() -> Form:
    p = an(14)
    return (f'"{user()}" "{p}"\n"stats" "md5{hexs(32)}"', [p])


@form("third")
def env_file_export_dq() -> Form:
    p = pw().replace('"', "")
    return (f'export SMTP_PASS="{p}"', [p])


@form("third")
def php_pdo() -> Form:
    p = pw().replace("'", "")
    return (f"$pdo = new PDO('mysql:host={host()};dbname=app', '{user()}', '{p}');", [p])


@form("third")
def jdbc_props() -> Form:
    p = an(14)
    return (
        f'Properties props = new Properties();\nprops.setProperty("user", "{user()}");\nprops.setProperty("password", "{p}");',
        [p],
    )


@form("third")
def ruby_db() -> Form:
    p = an(14)
    return (
        f"production:\n  adapter: postgresql\n  url: <%= ENV['DATABASE_URL'] %>\n  password: <%= ENV.fetch('DB_PASSWORD', '{p}') %>",
        [p],
    )


@form("fourth")
def az_app_reset() -> Form:
    p = an(8) + "~" + an(31)
    return (
        json.dumps({"appId": "3f1c2a9e-1b2c-4d5e-8f90-123456789abc", "password": p, "tenant": "72f9"}, indent=2),
        [p],
    )


@form("fourth")
def azure_client_secret_env() -> Form:
    p = an(8) + "~" + an(31)
    return (
        f"AZURE_CLIENT_ID=3f1c2a9e-1b2c-4d5e-8f90-123456789abc\nAZURE_CLIENT_SECRET={p}\nAZURE_TENANT_ID=72f988bf",
        [p],
    )


@form("fourth")
def oci_config() -> Form:
    p = an(16)
    return (
        f"[DEFAULT]\nuser=ocid1.user.oc1..aaaa{an(20).lower()}\nfingerprint=20:3b:97:13\nkey_file=~/.oci/oci_api_key.pem\npass_phrase={p}\ntenancy=ocid1.tenancy.oc1..aaaa",
        [p],
    )


@form("fourth")
def alibaba() -> Form:
    s = an(30)
    return (f"[default]\naccess_key_id = LTAI{an(20)}\naccess_key_secret = {s}\nregion_id = cn-hangzhou", [s])


@form("fourth")
def do_spaces() -> Form:
    s = an(43)
    return (f"SPACES_KEY=DO00{an(16).upper()}\nSPACES_SECRET={s}", [s])


@form("fourth")
def proxy_basic() -> Form:
    v = _b64(f"{user()}:{pw()}")
    return (f"Proxy-Authorization: Basic {v}\nHost: example.org", [v])


@form("fourth")
def git_extraheader() -> Form:
    v = _b64(f"x-access-token:{an(36)}")
    return (f'git -c http.extraheader="AUTHORIZATION: basic {v}" clone https://github.com/acme/app.git', [v])


@form("fourth")
def yarnrc() -> Form:
    t = "npm_" + an(36)
    return (f'npmRegistryServer: "https://registry.npmjs.org"\nnpmAuthToken: "{t}"', [t])


@form("fourth")
def yarnrc_ident() -> Form:
    v = _b64(f"{user()}:{pw()}")
    return (f'npmScopes:\n  acme:\n    npmRegistryServer: "https://npm.acme.io"\n    npmAuthIdent: "{v}"', [v])


@form("fourth")
def terraformrc() -> Form:
    t = an(14) + ".atlasv1." + an(60)
    return (f'credentials "app.terraform.io" {{\n  token = "{t}"\n}}', [t])


@form("fourth")
def tf_token_env() -> Form:
    t = an(14) + ".atlasv1." + an(60)
    return (f"export TF_TOKEN_app_terraform_io={t}", [t])


@form("fourth")
def cargo() -> Form:
    t = "cio" + an(32)
    return (f'[registry]\ntoken = "{t}"', [t])


@form("fourth")
def gem_creds() -> Form:
    t = "rubygems_" + hexs(48)
    return (f"---\n:rubygems_api_key: {t}", [t])


@form("fourth")
def nuget() -> Form:
    t = "oy2" + an(43).lower()
    return (f"dotnet nuget push pkg.nupkg --api-key {t} --source https://api.nuget.org/v3/index.json", [t])


@form("fourth")
def docker_identitytoken() -> Form:
    t = an(60)
    return (json.dumps({"auths": {"acme.azurecr.io": {"auth": "", "identitytoken": t}}}), [t])


@form("fourth")
def codecov() -> Form:
    t = f"{hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}"
    return (f"bash <(curl -s https://codecov.io/bash) -t {t}", [t])


@form("fourth")
def sonar() -> Form:
    t = "squ_" + hexs(40)
    return (f"sonar-scanner -Dsonar.projectKey=app -Dsonar.host.url=https://sonar.acme.io -Dsonar.token={t}", [t])


@form("fourth")
def sonar_login() -> Form:
    t = hexs(40)
    return (f"mvn sonar:sonar -Dsonar.login={t}", [t])


@form("fourth")
def dsn_query() -> Form:
    p = an(14)
    return (f"sqlserver://{host()}:1433?database=app&user id={user()}&password={p}", [p])


@form("fourth")
def ado_conn() -> Form:
    p = pw().replace(";", "")
    return (f"Server=tcp:{host()},1433;Initial Catalog=app;User ID={user()};Password={p};Encrypt=True;", [p])


@form("fourth")
def mongo_uri_env() -> Form:
    p = an(16)
    return (f"MONGO_URI=mongodb://{user()}:{p}@{host()}:27017/app?authSource=admin", [p])


@form("fourth")
def amqp() -> Form:
    p = an(16)
    return (f"CELERY_BROKER_URL=amqp://{user()}:{p}@{host()}:5672//", [p])


@form("fourth")
def jenkins_cli() -> Form:
    t = hexs(34)
    return (f"java -jar jenkins-cli.jar -s https://ci.acme.io/ -auth {user()}:{t} build deploy", [t])


@form("fourth")
def k8s_token_flag() -> Form:
    t = "eyJhbGciOiJSUzI1NiIsImtpZCI6" + an(40) + "." + an(60) + "." + an(40)
    return (f"kubectl --server=https://10.0.0.1:6443 --token={t} get pods", [t])


@form("fourth")
def hf_cli() -> Form:
    t = "hf_" + an(34)
    return (f"huggingface-cli login --token {t}", [t])


@form("fourth")
def stripe_cli() -> Form:
    t = "sk_test_" + an(24)
    return (f"stripe listen --api-key {t} --forward-to localhost:4242/webhook", [t])


@form("fourth")
def sendgrid_curl() -> Form:
    t = "SG." + an(22) + "." + an(43)
    return (
        f'curl --request POST --url https://api.sendgrid.com/v3/mail/send --header "Authorization: Bearer {t}"',
        [t],
    )


@form("fourth")
def x_api_key_json() -> Form:
    t = an(40)
    return (json.dumps({"url": "https://api.acme.io", "headers": {"X-API-KEY": t}}), [t])


@form("fourth")
def openai_py() -> Form:
    t = "sk-proj-" + an(48)
    return (f'client = OpenAI(api_key="{t}")', [t])


@form("fourth")
def anthropic_env() -> Form:
    t = "sk-ant-api03-" + an(80) + "AA"
    return (f"ANTHROPIC_API_KEY={t}", [t])


@form("fourth")
def ssh_pass_expect() -> Form:
    p = pw().replace('"', "")
    return (f"""expect -c 'spawn ssh {user()}@{host()}; expect "password:"; send "{p}\\r"; interact'""", [p])


@form("fourth")
def powershell_cred() -> Form:
    p = pw().replace('"', "")
    return (
        f'$secpw = ConvertTo-SecureString "{p}" -AsPlainText -Force\n$cred = New-Object System.Management.Automation.PSCredential ("{user()}", $secpw)',
        [p],
    )


@form("fourth")
def git_askpass() -> Form:
    p = an(20)
    return (f"GIT_ASKPASS=echo GIT_PASSWORD={p} git push origin main", [p])


def _b64_bytes(n: int) -> str:
    return base64.b64encode(R.randbytes(n)).decode()


@form("fifth")
def gitlab_runner() -> Form:
    t = "glrt-" + an(20)
    return (
        f'[[runners]]\n  name = "docker-runner"\n  url = "https://gitlab.acme.io/"\n  token = "{t}"\n  executor = "docker"',
        [t],
    )


@form("fifth")
def grafana_ini() -> Form:
    p = pw()
    return (f"[security]\nadmin_user = admin\nadmin_password = {p}\nsecret_key = {an(16)}", [p])


@form("fifth")
def airflow_fernet() -> Form:
    k = base64.urlsafe_b64encode(R.randbytes(32)).decode()
    return (f"[core]\nexecutor = CeleryExecutor\nfernet_key = {k}", [k])


@form("fifth")
def django_secret() -> Form:
    k = "django-insecure-" + "".join(
        R.choice(string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)") for _ in range(50)
    )
    return (f"SECRET_KEY = '{k}'\nDEBUG = False", [k])


@form("fifth")
def rails_skb() -> Form:
    k = hexs(128)
    return (f"production:\n  secret_key_base: {k}", [k])


@form("fifth")
def laravel_key() -> Form:
    k = "base64:" + _b64_bytes(32)
    return (f"APP_NAME=Shop\nAPP_ENV=production\nAPP_KEY={k}\nAPP_DEBUG=false", [k])


@form("fifth")
def jwt_secret() -> Form:
    k = an(48)
    return (f"JWT_SECRET={k}\nJWT_EXPIRES_IN=1h", [k])


@form("fifth")
def nextauth() -> Form:
    k = _b64_bytes(32)
    return (f"NEXTAUTH_URL=https://app.acme.io\nNEXTAUTH_SECRET={k}", [k])


@form("fifth")
def session_secret() -> Form:
    k = an(40)
    return (f"app.use(session({{ secret: '{k}', resave: false, saveUninitialized: true }}));", [k])


@form("fifth")
def dd_api() -> Form:
    k = hexs(32)
    return (f"DD_API_KEY={k}\nDD_SITE=datadoghq.eu", [k])


@form("fifth")
def dd_agent_yaml() -> Form:
    k = hexs(32)
    return (f"api_key: {k}\nsite: datadoghq.com\nlogs_enabled: true", [k])


@form("fifth")
def algolia() -> Form:
    k = hexs(32)
    return (f"ALGOLIA_APP_ID=ABCD1234EF\nALGOLIA_ADMIN_KEY={k}", [k])


@form("fifth")
def cf_global() -> Form:
    k = hexs(37)
    return (f"CF_API_EMAIL=ops@acme.io\nCF_API_KEY={k}", [k])


@form("fifth")
def telegram() -> Form:
    t = f"{R.randint(10**8, 10**10)}:AA{an(33)}"
    return (f"curl https://api.telegram.org/bot{t}/getMe", [t])


@form("fifth")
def telegram_env() -> Form:
    t = f"{R.randint(10**8, 10**10)}:AA{an(33)}"
    return (f"TELEGRAM_BOT_TOKEN={t}", [t])


@form("fifth")
def discord_bot() -> Form:
    t = f"{_b64_bytes(18).rstrip('=')}.{an(6)}.{an(38)}"
    return (f"DISCORD_TOKEN={t}", [t])


@form("fifth")
def mailgun() -> Form:
    k = "key-" + hexs(32)
    return (f"MAILGUN_API_KEY={k}\nMAILGUN_DOMAIN=mg.acme.io", [k])


@form("fifth")
def postmark() -> Form:
    t = f"{hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}"
    return (f'curl "https://api.postmarkapp.com/email" -H "X-Postmark-Server-Token: {t}"', [t])


@form("fifth")
def asana() -> Form:
    t = f"1/{R.randint(10**14, 10**15)}:{hexs(32)}"
    return (f"ASANA_PAT={t}", [t])


@form("fifth")
def pusher() -> Form:
    s = hexs(20)
    return (f"PUSHER_APP_ID=1234567\nPUSHER_KEY={hexs(20)}\nPUSHER_SECRET={s}\nPUSHER_CLUSTER=eu", [s])


@form("fifth")
def segment() -> Form:
    k = an(32)
    return (f"analytics.load('{k}');", [k])


@form("fifth")
def okta() -> Form:
    t = "00" + an(40)
    return (f"curl -H 'Authorization: SSWS {t}' https://acme.okta.com/api/v1/users", [t])


@form("fifth")
def auth0() -> Form:
    s = an(64)
    return (f"AUTH0_DOMAIN=acme.eu.auth0.com\nAUTH0_CLIENT_ID={an(32)}\nAUTH0_CLIENT_SECRET={s}", [s])


@form("fifth")
def paypal() -> Form:
    s = an(80)
    return (f"PAYPAL_CLIENT_ID=A{an(79)}\nPAYPAL_CLIENT_SECRET=E{s}", ["E" + s])


@form("fifth")
def braintree() -> Form:
    k = hexs(32)
    return (
        f"gateway = braintree.BraintreeGateway(braintree.Configuration(environment=braintree.Environment.Production, merchant_id='{hexs(16)}', public_key='{hexs(16)}', private_key='{k}'))",
        [k],
    )


@form("fifth")
def plaid() -> Form:
    s = hexs(30)
    return (f"PLAID_CLIENT_ID={hexs(24)}\nPLAID_SECRET={s}\nPLAID_ENV=production", [s])


@form("fifth")
def mapbox_sk() -> Form:
    t = "sk.eyJ1Ijoi" + an(40) + "." + an(22)
    return (f"MAPBOX_SECRET_TOKEN={t}", [t])


@form("fifth")
def launchdarkly() -> Form:
    t = f"sdk-{hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}"
    return (f"LD_SDK_KEY={t}", [t])


@form("fifth")
def circleci() -> Form:
    t = "CCIPAT_" + an(22) + "_" + hexs(40)
    return (f'curl -H "Circle-Token: {t}" https://circleci.com/api/v2/me', [t])


@form("fifth")
def cloudinary() -> Form:
    s = an(27)
    return (f"CLOUDINARY_URL=cloudinary://{R.randint(10**14, 10**15)}:{s}@acme", [s])


@form("fifth")
def kafka_jaas() -> Form:
    p = an(20)
    return (
        f'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="{user()}" password="{p}";',
        [p],
    )


@form("fifth")
def confluent() -> Form:
    s = _b64_bytes(48)
    return (
        f"bootstrap.servers=pkc-abc.eu-west-1.aws.confluent.cloud:9092\nsasl.username={an(16).upper()}\nsasl.password={s}",
        [s],
    )


@form("fifth")
def elastic() -> Form:
    p = an(20)
    return (f"curl -u elastic:{p} -k https://localhost:9200/_cat/indices", [p])


@form("fifth")
def es_apikey() -> Form:
    k = _b64_bytes(40)
    return (f"curl -H 'Authorization: ApiKey {k}' https://es.acme.io:9200/_cluster/health", [k])


def _aws_secret() -> str:
    return "".join(R.choice(string.ascii_letters + string.digits + "+/") for _ in range(40))


@form("sixth")
def helm_values_b64() -> Form:
    v = _b64(pw())
    return (f"secrets:\n  dbPassword: {v}\n  redisPassword: {_b64(an(12))}", [v])


@form("sixth")
def k8s_secret_json_get() -> Form:
    v = _b64(an(16))
    return (f"$ kubectl get secret db -o jsonpath='{{.data.password}}'\n{v}", [v])


@form("sixth")
def sealed_plain() -> Form:
    v = _b64("postgres://app:" + an(14) + "@db:5432/app")
    return (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\ntype: Opaque\ndata:\n  DATABASE_URL: {v}", [v])


@form("sixth")
def stringdata() -> Form:
    p = pw()
    return (
        f'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: "{p}"\n  username: app',
        [p],
    )


@form("sixth")
def basic_in_url_header() -> Form:
    v = _b64(f"{user()}:{pw()}")
    return (f"GET /v2/ HTTP/1.1\nHost: registry.acme.io\nauthorization: basic {v}", [v])


@form("sixth")
def docker_config_b64_file() -> Form:
    v = _b64(json.dumps({"auths": {"reg.acme.io": {"auth": _b64("ci:" + an(20))}}}))
    return (f".dockerconfigjson: {v}", [v])


@form("sixth")
def env_b64_blob() -> Form:
    v = _b64(f"DB_PASSWORD={an(16)}\nAPI_KEY={an(32)}\n")
    return (f'{{"name": ".env", "content": "{v}", "encoding": "base64"}}', [v])


@form("sixth")
def gh_contents() -> Form:
    v = _b64(f"aws_access_key_id = AKIA{an(16).upper()}\naws_secret_access_key = {_aws_secret()}\n")
    lines = "\\n".join(v[i : i + 60] for i in range(0, len(v), 60))
    return (
        json.dumps(
            {
                "type": "file",
                "encoding": "base64",
                "size": 120,
                "name": "credentials",
                "content": lines.replace("\\n", "\n"),
            }
        ),
        [v[:60]],
    )


@form("sixth")
def jenkins_b64() -> Form:
    v = _b64(f"{user()}:{an(34)}")
    return (f"curl -H 'Authorization: Basic {v}' https://ci.acme.io/job/app/build", [v])


@form("sixth")
def ssh_key_b64_env() -> Form:
    k = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + base64.b64encode(R.randbytes(200)).decode()
        + "\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    v = _b64(k)
    return (f"SSH_PRIVATE_KEY_B64={v}", [v])


@form("sixth")
def gcp_key_b64() -> Form:
    k = json.dumps(
        {
            "type": "service_account",
            "private_key": "-----BEGIN PRIVATE KEY-----\n"
            + base64.b64encode(R.randbytes(100)).decode()
            + "\n-----END PRIVATE KEY-----\n",
        }
    )
    v = _b64(k)
    return (f"GOOGLE_CREDENTIALS_BASE64={v}", [v])


@form("sixth")
def aws_env_list() -> Form:
    s = _aws_secret()
    return (json.dumps({"Env": [f"AWS_ACCESS_KEY_ID=AKIA{an(16).upper()}", f"AWS_SECRET_ACCESS_KEY={s}"]}), [s])


@form("sixth")
def aws_cli_table() -> Form:
    s = _aws_secret()
    return (
        f"-----------------------------------------------------------\n|                     CreateAccessKey                     |\n+---------------------------------------------------------+\n||                       AccessKey                       ||\n|+-------------------+-----------------------------------+|\n||  AccessKeyId      |  AKIA{an(16).upper()}             ||\n||  SecretAccessKey  |  {s}  ||\n||  Status           |  Active                           ||",
        [s],
    )


@form("sixth")
def aws_cli_text() -> Form:
    s = _aws_secret()
    return (f"ACCESSKEY\tAKIA{an(16).upper()}\t2024-05-01T10:00:00Z\t{s}\tActive\tdeploy", [s])


@form("sixth")
def boto3_call() -> Form:
    s = _aws_secret()
    return (f"s3 = boto3.client('s3', aws_access_key_id='AKIA{an(16).upper()}', aws_secret_access_key='{s}')", [s])


@form("sixth")
def terraform_aws() -> Form:
    s = _aws_secret()
    return (
        f'provider "aws" {{\n  region     = "us-east-1"\n  access_key = "AKIA{an(16).upper()}"\n  secret_key = "{s}"\n}}',
        [s],
    )


@form("sixth")
def az_conn_env() -> Form:
    k = base64.b64encode(R.randbytes(64)).decode()
    return (
        f'AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey={k};EndpointSuffix=core.windows.net"',
        [k],
    )


@form("sixth")
def az_sb() -> Form:
    k = base64.b64encode(R.randbytes(32)).decode()
    return (
        f"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={k}",
        [k],
    )


@form("sixth")
def az_cosmos() -> Form:
    k = base64.b64encode(R.randbytes(64)).decode()
    return (f'COSMOS_KEY="{k}"\nCOSMOS_ENDPOINT=https://acme.documents.azure.com:443/', [k])


@form("sixth")
def az_cli_keys_table() -> Form:
    k = base64.b64encode(R.randbytes(64)).decode()
    return (
        f"KeyName    Permissions    Value\n---------  -------------  {'-' * 88}\nkey1       FULL           {k}",
        [k],
    )


@form("sixth")
def gcp_hmac() -> Form:
    s = "".join(R.choice(string.ascii_letters + string.digits + "+/") for _ in range(40))
    return (f"accessId: GOOG1E{an(55).upper()}\nsecret: {s}\nstate: ACTIVE", [s])


@form("sixth")
def gcloud_token_header() -> Form:
    t = "ya29.a0" + an(150)
    return (f'curl -H "Authorization: Bearer {t}" https://storage.googleapis.com/storage/v1/b', [t])


@form("sixth")
def aliyun_cli() -> Form:
    s = an(30)
    return (
        f"aliyun configure set --profile prod --mode AK --access-key-id LTAI{an(20)} --access-key-secret {s} --region cn-hangzhou",
        [s],
    )


@form("sixth")
def ibm_cloud() -> Form:
    k = an(44)
    return (f"ibmcloud login --apikey {k} -r us-south", [k])


@form("sixth")
def do_token() -> Form:
    t = "dop_v1_" + hexs(64)
    return (f"doctl auth init --access-token {t}", [t])


@form("sixth")
def linode() -> Form:
    t = hexs(64)
    return (f"LINODE_TOKEN={t}", [t])


@form("sixth")
def hcloud() -> Form:
    t = an(64)
    return (f"HCLOUD_TOKEN={t} hcloud server list", [t])


@form("sixth")
def scaleway() -> Form:
    s = f"{hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}"
    return (f"SCW_ACCESS_KEY=SCW{an(17).upper()}\nSCW_SECRET_KEY={s}", [s])


@form("seventh")
def curl_verbose() -> Form:
    t = an(40)
    return (
        f"*   Trying 10.0.3.17:443...\n* Connected to api.acme.io\n> GET /v1/orders HTTP/2\n> Host: api.acme.io\n> authorization: Bearer {t}\n> user-agent: curl/8.5.0\n>\n< HTTP/2 200",
        [t],
    )


@form("seventh")
def curl_verbose_basic() -> Form:
    v = _b64(f"{user()}:{pw()}")
    return (f"> GET /api HTTP/1.1\n> Host: ci.acme.io\n> Authorization: Basic {v}\n> Accept: */*", [v])


@form("seventh")
def pytest_locals() -> Form:
    p = pw().replace("'", "")
    return (
        f"    def connect(host, user, password):\n>       raise ConnectionError('refused')\nE       ConnectionError: refused\n\nhost       = 'db.internal'\npassword   = '{p}'\nuser       = 'app'\n\napp/db.py:12: ConnectionError",
        [p],
    )


@form("seventh")
def traceback_url() -> Form:
    p = an(14)
    return (
        f'sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "db.internal" failed\n(Background on this error at: https://sqlalche.me/e/20/e3q8)\n[SQL: postgresql+psycopg2://app:{p}@db.internal:5432/app]',
        [p],
    )


@form("seventh")
def git_remote_v() -> Form:
    t = "ghp_" + an(36)
    return (
        f"origin\thttps://x-access-token:{t}@github.com/acme/app.git (fetch)\norigin\thttps://x-access-token:{t}@github.com/acme/app.git (push)",
        [t],
    )


@form("seventh")
def docker_history() -> Form:
    p = an(16)
    return (
        f"IMAGE          CREATED        CREATED BY                                      SIZE\n3f2a9c1e4b5d   2 days ago     /bin/sh -c #(nop)  ENV DB_PASSWORD={p}      0B",
        [p],
    )


@form("seventh")
def set_x() -> Form:
    p = an(14)
    return (f"+ export PGPASSWORD={p}\n+ PGPASSWORD={p}\n+ pg_dump -h db -U app app", [p])


@form("seventh")
def bash_history_plain() -> Form:
    p = an(14)
    return (f"cd /srv/app\nvim .env\nmysql -uroot -p{p} shop < dump.sql\nexit", [p])


@form("seventh")
def journal_token() -> Form:
    t = an(32)
    return (f"Mar 05 14:02:11 web01 app[812]: INFO starting with config {{'api_token': '{t}', 'debug': False}}", [t])


@form("seventh")
def python_repr_dict() -> Form:
    p = pw().replace("'", "")
    return (
        f">>> settings.DATABASES\n{{'default': {{'ENGINE': 'django.db.backends.mysql', 'NAME': 'shop', 'USER': 'app', 'PASSWORD': '{p}', 'HOST': 'db'}}}}",
        [p],
    )


@form("seventh")
def env_grep() -> Form:
    t = an(40)
    return (f"$ env | grep -i key\nSTRIPE_SECRET_KEY=sk_live_{an(24)}\nINTERNAL_API_KEY={t}", [t])


@form("seventh")
def kubectl_describe_env() -> Form:
    p = an(16)
    return (f"    Environment:\n      DB_HOST:      postgres\n      DB_PASSWORD:  {p}\n      LOG_LEVEL:    info", [p])


@form("seventh")
def helm_get_values() -> Form:
    p = an(16)
    return (f"USER-SUPPLIED VALUES:\nauth:\n  enabled: true\n  password: {p}\n  username: app", [p])


@form("seventh")
def ansible_debug() -> Form:
    p = an(16)
    return (f'TASK [debug] *****\nok: [db01] => {{\n    "db_password": "{p}"\n}}', [p])


@form("seventh")
def tf_plan() -> Form:
    p = an(18)
    return (
        f'  # aws_db_instance.main will be created\n  + resource "aws_db_instance" "main" {{\n      + password             = "{p}"\n      + username             = "app"',
        [p],
    )


@form("seventh")
def tf_state() -> Form:
    p = an(18)
    return (
        json.dumps(
            {
                "resources": [
                    {"type": "aws_db_instance", "instances": [{"attributes": {"password": p, "username": "app"}}]}
                ]
            },
            indent=2,
        ),
        [p],
    )


@form("seventh")
def gh_actions_log() -> Form:
    t = an(40)
    return (f'2024-03-05T14:02:11.123Z Run curl -H "Authorization: token {t}" https://api.github.com/user', [t])


@form("seventh")
def npm_debug_log() -> Form:
    t = "npm_" + an(36)
    return (f"12 verbose config //registry.npmjs.org/:_authToken={t}", [t])


@form("seventh")
def pip_conf() -> Form:
    p = an(16)
    return (f"[global]\nindex-url = https://{user()}:{p}@pypi.acme.io/simple", [p])


@form("seventh")
def http_request_body() -> Form:
    p = pw().replace('"', "")
    return (
        f"POST /oauth/token HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\ngrant_type=password&username=app&password={p}&client_id=web",
        [p],
    )


@form("seventh")
def oauth_client_creds() -> Form:
    s = an(40)
    return (
        f"curl -X POST https://auth.acme.io/oauth/token -d grant_type=client_credentials -d client_id=web -d client_secret={s}",
        [s],
    )


@form("seventh")
def nginx_log_token() -> Form:
    t = an(32)
    return (f'10.0.3.17 - - [05/Mar/2024:14:02:11 +0000] "GET /api/export?token={t}&fmt=csv HTTP/1.1" 200 512', [t])


@form("seventh")
def redis_monitor() -> Form:
    p = an(16)
    return (f'1709643731.123456 [0 10.0.3.17:51234] "AUTH" "{p}"', [p])


@form("seventh")
def mysql_processlist() -> Form:
    p = an(14)
    return (
        f"| 42 | app | 10.0.3.17:51234 | shop | Query | 0 | init | CREATE USER 'report'@'%' IDENTIFIED BY '{p}' |",
        [p],
    )


@form("eighth")
def gitlab_rb() -> Form:
    p = an(16)
    return (f"gitlab_rails['db_password'] = '{p}'\ngitlab_rails['db_host'] = '10.0.3.17'", [p])


@form("eighth")
def nextcloud_php() -> Form:
    p = an(16)
    return (f"$CONFIG = array (\n  'dbtype' => 'mysql',\n  'dbuser' => 'nextcloud',\n  'dbpassword' => '{p}',\n);", [p])


@form("eighth")
def keycloak_env() -> Form:
    p = pw()
    return (f"KEYCLOAK_ADMIN=admin\nKEYCLOAK_ADMIN_PASSWORD={p}", [p])


@form("eighth")
def minio_env() -> Form:
    p = an(20)
    return (f"MINIO_ROOT_USER=admin\nMINIO_ROOT_PASSWORD={p}", [p])


@form("eighth")
def mattermost() -> Form:
    p = an(14)
    return (
        json.dumps(
            {
                "SqlSettings": {
                    "DriverName": "postgres",
                    "DataSource": f"postgres://mmuser:{p}@db:5432/mattermost?sslmode=disable",
                }
            },
            indent=2,
        ),
        [p],
    )


@form("eighth")
def gitea_ini() -> Form:
    p = an(14)
    return (
        f"[database]\nDB_TYPE  = postgres\nHOST     = db:5432\nNAME     = gitea\nUSER     = gitea\nPASSWD   = {p}",
        [p],
    )


@form("eighth")
def gitea_jwt() -> Form:
    s = an(43)
    return (f"[server]\nLFS_JWT_SECRET = {s}", [s])


@form("eighth")
def ha_secrets() -> Form:
    p = pw()
    return (f"# secrets.yaml\nhttp_password: {p}\nlatitude: 52.37", [p])


@form("eighth")
def sasl_passwd() -> Form:
    p = an(16)
    return (f"[smtp.gmail.com]:587 alerts@acme.io:{p}", [p])


@form("eighth")
def wireguard() -> Form:
    k = base64.b64encode(R.randbytes(32)).decode()
    return (f"[Interface]\nAddress = 10.8.0.1/24\nListenPort = 51820\nPrivateKey = {k}", [k])


@form("eighth")
def ipsec_psk() -> Form:
    p = an(20)
    return (f'# /etc/ipsec.secrets\n: PSK "{p}"', [p])


@form("eighth")
def snmp_community() -> Form:
    c = an(14)
    return (f"rocommunity {c} 10.0.0.0/8\nsyslocation DC1", [c])


@form("eighth")
def cisco_user() -> Form:
    p = an(12)
    return (f"!\nusername admin privilege 15 password 0 {p}\nenable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0\n!", [p])


@form("eighth")
def cisco_key() -> Form:
    k = an(16)
    return (f"tacacs-server host 10.0.0.5 key 0 {k}\nradius-server key {k}", [k])


@form("eighth")
def pgbouncer_ini() -> Form:
    p = an(14)
    return (f"[databases]\napp = host=db port=5432 dbname=app user=app password={p}", [p])


@form("eighth")
def odbc_ini() -> Form:
    p = an(14)
    return (f"[Shop]\nDriver = PostgreSQL\nServername = db\nUsername = app\nPassword = {p}", [p])


@form("eighth")
def jdbc_url_params() -> Form:
    p = an(14)
    return (f"jdbc:postgresql://db:5432/app?user=app&password={p}&ssl=true", [p])


@form("eighth")
def rabbit_conf() -> Form:
    p = an(14)
    return (f"default_user = admin\ndefault_pass = {p}", [p])


@form("eighth")
def mongo_conf_key() -> Form:
    k = base64.b64encode(R.randbytes(48)).decode()
    return (f"security:\n  keyFile: /etc/mongo/keyfile\n# keyfile contents:\n{k}", [])


@form("eighth")
def proxy_env() -> Form:
    p = an(12)
    return (f"export https_proxy=http://{user()}:{p}@proxy.acme.io:3128", [p])


@form("eighth")
def apt_auth() -> Form:
    p = an(16)
    return (f"machine apt.acme.io\nlogin deploy\npassword {p}", [p])


@form("eighth")
def svn_auth() -> Form:
    p = an(14)
    return (f"K 8\npassword\nV 14\n{p}\nK 8\nusername\nV 6\ndeploy", [p])


@form("eighth")
def openvpn_pass() -> Form:
    p = an(14)
    return (f"$ cat /etc/openvpn/auth.txt\nvpnuser\n{p}", [])


@form("eighth")
def jupyter_token() -> Form:
    t = hexs(48)
    return (
        f"    To access the server, open this file in a browser:\n    Or copy and paste one of these URLs:\n        http://127.0.0.1:8888/lab?token={t}",
        [t],
    )


@form("eighth")
def grafana_api() -> Form:
    t = "glsa_" + an(32) + "_" + hexs(8)
    return (f"curl -H 'Authorization: Bearer {t}' http://grafana:3000/api/dashboards", [t])


@form("eighth")
def airflow_conn() -> Form:
    p = an(14)
    return (f"AIRFLOW_CONN_POSTGRES_DEFAULT=postgresql://airflow:{p}@db:5432/airflow", [p])


@form("eighth")
def spark_conf() -> Form:
    s = an(40)
    return (f"spark.hadoop.fs.s3a.access.key AKIA{an(16).upper()}\nspark.hadoop.fs.s3a.secret.key {s}", [s])


@form("eighth")
def hadoop_xml() -> Form:
    s = an(40)
    return (f"<property>\n  <name>fs.s3a.secret.key</name>\n  <value>{s}</value>\n</property>", [s])


@form("ninth")
def my_password_is() -> Form:
    p = pw()
    return (f"Hey, can you fix the login? My password is {p} if you need to test it.", [p])


@form("ninth")
def pw_for() -> Form:
    p = pw()
    return (f"the pw for the staging db is {p} (don't share it)", [p])


@form("ninth")
def creds_slash() -> Form:
    p = pw()
    return (f"Creds: admin / {p}", [p])


@form("ninth")
def login_with() -> Form:
    p = pw().replace(":", "")
    return (f"You can log in with admin:{p} on the test box.", [p])


@form("ninth")
def use_token() -> Form:
    t = an(32)
    return (f"Use this token to call the API: {t}", [t])


@form("ninth")
def here_is_key() -> Form:
    t = an(40)
    return (f"Here's the secret key for the bucket: {t}", [t])


@form("ninth")
def password_colon_newline() -> Form:
    p = pw()
    return (f"Server: db01.internal\nUser: root\nPassword:\n{p}\n", [p])


@form("ninth")
def ticket_creds() -> Form:
    p = pw()
    return (
        f"Hi team,\nthe new SFTP account is ready.\nHost: files.acme.io\nUsername: vendor42\nPass: {p}\nThanks",
        [p],
    )


@form("ninth")
def slack_msg() -> Form:
    p = pw()
    return (f"[10:42] ops-bot: reset done, temp password `{p}` expires in 24h", [p])


@form("ninth")
def md_table_creds() -> Form:
    p = pw().replace("|", "")
    return (f"| service | user | password |\n|---|---|---|\n| grafana | admin | {p} |", [p])


@form("ninth")
def csv_creds() -> Form:
    p = pw().replace(",", "")
    return (f"service,username,password\ngrafana,admin,{p}", [p])


@form("ninth")
def yaml_list() -> Form:
    p = pw()
    return (f"users:\n  - name: alice\n    pass: {p}\n    role: admin", [p])


@form("ninth")
def wifi_prose() -> Form:
    p = an(12)
    return (f"Wi-Fi: AcmeGuest, password {p}", [p])


@form("ninth")
def passphrase_prose() -> Form:
    p = "correct-horse-" + an(8)
    return (f'The GPG passphrase is "{p}".', [p])


@form("ninth")
def secret_in_commit() -> Form:
    t = an(32)
    return (f"commit 1a2b3c\n\n    temp: hardcode api key {t} until vault works", [t])


@form("ninth")
def code_comment() -> Form:
    p = pw().replace("'", "")
    return (f"# TODO remove: admin password = '{p}'\nDEBUG = True", [p])


@form("ninth")
def sql_comment() -> Form:
    p = an(14)
    return (f"-- connect as report/{p}@ORCL", [p])


def score(
    seeds: int, forms: list[tuple[str, Callable[[], Form]]] | None = None
) -> tuple[Counter[str], Counter[str], list[tuple[str, str]]]:
    """Per set, values found and values missed over `seeds` rounds; the missed (form, value).
    `forms`: another module's sets (drawing from this module's `R`), instead of these."""
    found: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    misses: list[tuple[str, str]] = []
    for seed in range(seeds):
        R.seed(seed)
        for batch, make in forms or FORMS:
            text, values = make()
            findings = detect(text)
            for value in values:
                at = text.find(value)
                if any(f.start <= at and at + len(value) <= f.end for f in findings):
                    found[batch] += 1
                else:
                    missed[batch] += 1
                    misses.append((make.__name__, value))
    return found, missed, misses


def registrar(
    batch: str, forms: list[tuple[str, Callable[[], Form]]]
) -> Callable[[Callable[[], Form]], Callable[[], Form]]:
    """A decorator adding a form function to `forms` under the set `batch` (the later sets'
    modules: later_web.py and the others)."""

    def add(make: Callable[[], Form]) -> Callable[[], Form]:
        forms.append((batch, make))
        return make

    return add


def set_main(batch: str, forms: list[tuple[str, Callable[[], Form]]], doc: str, argv: list[str] | None) -> None:
    """The command line of a later set's module: scores it, prints its recall and the misses."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="rounds, each with its own values")
    parser.add_argument("--show-missed", action="store_true")
    args = parser.parse_args(argv)
    found, missed, misses = score(args.seeds, forms)
    total = found[batch] + missed[batch]
    print(f"{batch}: {len(forms)} forms, {found[batch]} of {total} values found ({found[batch] / total:.3f})")
    if args.show_missed:
        for name, value in misses:
            print(f"  missed: {name}: {value[:40]!r}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="rounds, each with its own values")
    parser.add_argument("--show-missed", action="store_true")
    args = parser.parse_args(argv)
    found, missed, misses = score(args.seeds)
    print(f"{'set':8} {'forms':>5} {'found':>6} {'missed':>6} {'recall':>7}")
    for batch in ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"):
        forms = sum(1 for b, _ in FORMS if b == batch)
        total = found[batch] + missed[batch]
        print(f"{batch:8} {forms:>5} {found[batch]:>6} {missed[batch]:>6} {found[batch] / total:>7.3f}")
    total = sum(found.values()) + sum(missed.values())
    print(
        f"{'all':8} {len(FORMS):>5} {sum(found.values()):>6} {sum(missed.values()):>6} {sum(found.values()) / total:>7.3f}"
    )
    if args.show_missed:
        for name, value in misses:
            print(f"  missed: {name}: {value[:40]!r}")


if __name__ == "__main__":
    main()
