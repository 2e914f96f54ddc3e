"""Secrets given to CI/CD systems and deployment platforms on their command lines
(router/privacy/deploy_secrets.py) and the set of forms that found them missing
(benchmarks/privacy/later_deploy.py)."""

from __future__ import annotations

import pytest

from router.privacy.detect import detect

PASSWORD = "Kv7#pQ2mZ9xL"


def test_the_deploy_forms_written_after_the_detectors() -> None:
    # Scored blind once: 51 of 66 values; rules since.
    from benchmarks.privacy import later_deploy, later_forms

    found, missed, misses = later_forms.score(3, later_deploy.FORMS)
    assert not missed["deploy"], misses
    assert found["deploy"] == 66


@pytest.mark.parametrize(
    "text",
    [
        f"netlify env:set SUPABASE_SERVICE_KEY {PASSWORD}",
        f"echo -n '{PASSWORD}' | vercel env add DATABASE_PASSWORD production",
        f"printf '%s' {PASSWORD} | npx wrangler secret put API_TOKEN",
        f"drone secret add --repository acme/api --name docker_password --data {PASSWORD}",
        f"az pipelines variable create --name sqlPassword --secret true --value '{PASSWORD}'",
        f"fly -t ci login -c https://ci.example.com -u admin -p {PASSWORD}",
    ],
)
def test_deploy_secrets_are_found(text: str) -> None:
    assert PASSWORD in [f.value for f in detect(text)]


@pytest.mark.parametrize(
    "text",
    [
        "heroku config:set NODE_ENV=production",
        "git config set core.editor vim",
        "netlify env:set API_KEY $API_KEY",
        "You can set it with `mini-extra config set KEY VALUE`.",
        "echo hello | gh secret set GREETING",
        "az pipelines variable create --name region --value westeurope",  # no --secret true
        "fly -t ci login -c https://ci.example.com",
    ],
)
def test_deploy_look_alikes(text: str) -> None:
    assert [f for f in detect(text) if f.type == "SECRET_ASSIGNMENT"] == []
