"""Secrets a command prints (the value alone below its command in a transcript: password
managers, cloud CLIs' tokens, secret stores read raw, a secret's variable echoed, secrets made on
the spot) and the set of forms that found them missing (benchmarks/privacy/later_printed.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

TOKEN = "Q8f2kLw9Zp3Rt6Yx1Vb4Nm7Hc0Jd5Gs2"


def test_the_printed_forms_written_after_the_detectors() -> None:
    # Scored blind once: 6 of 57 values; the rule since.
    from benchmarks.privacy import later_forms, later_printed

    found, missed, misses = later_forms.score(3, later_printed.FORMS)
    assert not missed["printed"], misses
    assert found["printed"] == 57


@pytest.mark.parametrize(
    "text",
    [
        f"$ aws ecr get-login-password --region eu-west-1\n{TOKEN}\n",
        f"ubuntu@ip-10-0-1-5:~$ heroku auth:token\n ›   Warning: token will expire 04/01/2027\n{TOKEN}\n",
        f"(venv) $ vault kv get -field=password secret/prod/db\n{TOKEN}\n",
        f"❯ terraform output -raw db_password\n{TOKEN}\n",
        f"PS C:\\work> gcloud auth print-access-token\n{TOKEN}\n",
        f"$ kubectl get secret db -o jsonpath='{{.data.password}}' | base64 -d\n{TOKEN}\n",
        f"$ echo $DB_PASSWORD\n{TOKEN}\n",
        f'$ echo "${{API_TOKEN}}"\n{TOKEN}\n',
        f"$ docker exec db printenv POSTGRES_PASSWORD\n{TOKEN}\n",
        f"$ openssl rand -hex 32\n{TOKEN}\n",
        f"$ python3 -c 'import secrets; print(secrets.token_urlsafe(32))'\n{TOKEN}\n",
        f"$ jq -r .access_token creds.json\n{TOKEN}\n",
        f"$ pass show work/vpn\n{TOKEN}\n",
        "$ pulumi config get dbPassword\nFalcon6850%\n",
    ],
)
def test_printed_secrets_are_found(text: str) -> None:
    value = text.rstrip("\n").rsplit("\n", 1)[-1]
    assert value in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        "$ echo $HOME\n/home/ana\n",
        "$ echo $DB_PASSWORD\n\n$ ls\n",
        "ubuntu@host:~$ echo $API_TOKEN\nubuntu@host:~$\n",
        "$ openssl rand -hex 32\nusage: rand [options] num\n",
        "$ aws ecr get-login-password | docker login --username AWS --password-stdin 1234.dkr.ecr.aws\nSucceeded\n",
        "# pass the token along\nrequest.send(token)\n",
        "$ pass git push\nEverything-up-to-date\n",
        "$ echo $DB_PASSWORD\n$DB_PASSWORD\n",
        "$ terraform output -raw db_password\n<sensitive>\n",
    ],
)
def test_printed_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.rule == "printed-secret"] == []
