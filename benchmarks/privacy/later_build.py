"""Credentials in build, package and release tooling, written after the detectors and scored
blind once (an eleventh set beside `later_forms.py`'s nine and `later_web.py`).

Android's Gradle signing configs and `gradle.properties`, Gradle's and sbt's repository
credentials, Fastlane's environment, an Xcode build setting, Composer's `auth.json`, NuGet's
`ClearTextPassword`, Maven's encrypted master password, Poetry's and twine's logins, Conda's
channel tokens, JFrog's CLI and Artifactory's API-key header, Helm's and conan's repository
logins, a Gemfile's source with credentials, Cargo's credentials, a Jenkinsfile's literal, a
Bitbucket pipeline's variable, a keystore made on the command line. Values come from
`later_forms.py`'s generator (its `R`, reseeded each round by its `score`).

Scored blind, before any rule was written for them (3 rounds): 60 of 84 values (0.714). Missed:
Gradle's signing passwords written as calls (`storePassword 'X'`), keytool's second password
flag (only a command's first was read), twine's and conan's `-p`, Poetry's `config http-basic`,
Maven's master password, Anaconda's channel token. Rules since (router/privacy/build_secrets.py,
the tools' flags in credentials.py): 84 of 84 (280 of 280 over ten rounds).

    python -m benchmarks.privacy.later_build [--seeds 3] [--show-missed]
"""

from __future__ import annotations

import json
from collections.abc import Callable

from benchmarks.privacy.later_forms import Form, an, hexs, pw, registrar, set_main

FORMS: list[tuple[str, Callable[[], Form]]] = []


form = registrar("build", FORMS)


@form
def gradle_signing() -> Form:
    store, key = pw(), pw()
    return (
        "android {\n    signingConfigs {\n        release {\n            storeFile file('release.jks')\n"
        f"            storePassword '{store}'\n            keyAlias 'upload'\n            keyPassword '{key}'\n"
        "        }\n    }\n}",
        [store, key],
    )


@form
def gradle_signing_kts() -> Form:
    store = pw()
    return f'signingConfigs {{\n    create("release") {{\n        storePassword = "{store}"\n    }}\n}}', [store]


@form
def gradle_properties() -> Form:
    a, b = pw(), pw()
    return f"org.gradle.jvmargs=-Xmx2g\nsigning.keyId=24875D73\nsigning.password={a}\nossrhPassword={b}\n", [a, b]


@form
def gradle_repo_credentials() -> Form:
    p = pw()
    return (
        "repositories {\n    maven {\n        url 'https://nexus.example.com/repository/maven-releases/'\n"
        f"        credentials {{\n            username 'ci-bot'\n            password '{p}'\n        }}\n    }}\n}}",
        [p],
    )


@form
def sbt_credentials() -> Form:
    p = pw()
    return f"realm=Sonatype Nexus Repository Manager\nhost=nexus.example.com\nuser=deployer\npassword={p}\n", [p]


@form
def fastlane_env() -> Form:
    a, b = pw(), pw()
    return f"FASTLANE_USER=ios@example.com\nFASTLANE_PASSWORD={a}\nMATCH_PASSWORD={b}\n", [a, b]


@form
def xcconfig() -> Form:
    key = an(32)
    return f"PRODUCT_BUNDLE_IDENTIFIER = com.example.app\nAPI_SECRET = {key}\nSWIFT_VERSION = 5.0\n", [key]


@form
def composer_auth() -> Form:
    p = pw()
    body = {"http-basic": {"repo.example.com": {"username": "deploy", "password": p}}}
    return json.dumps(body, indent=4), [p]


@form
def nuget_config() -> Form:
    p = pw()
    return (
        '<packageSourceCredentials>\n  <Internal>\n    <add key="Username" value="builder" />\n'
        f'    <add key="ClearTextPassword" value="{p}" />\n  </Internal>\n</packageSourceCredentials>',
        [p],
    )


@form
def maven_security() -> Form:
    p = pw()
    return f"<settingsSecurity>\n  <master>{p}</master>\n</settingsSecurity>", [p]


@form
def poetry_config() -> Form:
    p = pw()
    return f"$ poetry config http-basic.internal ci-user {p}", [p]


@form
def twine_upload() -> Form:
    p = pw()
    return f"twine upload --repository-url https://pypi.example.com/ -u ci -p {p} dist/*", [p]


@form
def conda_channel() -> Form:
    token = f"ab-{an(30)}"
    return f"channels:\n  - https://conda.anaconda.org/t/{token}/internal\n  - conda-forge\n", [token]


@form
def jfrog_cli() -> Form:
    p = pw()
    return f"jfrog rt c art1 --url=https://art.example.com/artifactory --user=ci --password={p} --interactive=false", [
        p
    ]


@form
def artifactory_header() -> Form:
    key = "AKCp" + an(69)
    return f"curl -H 'X-JFrog-Art-Api:{key}' -T app.tgz https://art.example.com/artifactory/npm-local/app.tgz", [key]


@form
def helm_repo_add() -> Form:
    p = pw()
    return f"helm repo add internal https://charts.example.com --username ci --password {p}", [p]


@form
def conan_login() -> Form:
    p = pw()
    return f"conan remote login artifactory ci-user -p {p}", [p]


@form
def gemfile_source() -> Form:
    p = an(20)
    return f'source "https://deploy:{p}@gems.example.com/"\ngem "rails", "~> 7.1"', [p]


@form
def cargo_credentials() -> Form:
    token = "cio" + an(32)
    return f'[registries.internal]\ntoken = "{token}"\n', [token]


@form
def jenkinsfile_literal() -> Form:
    p = pw()
    return (
        "pipeline {\n  agent any\n  environment {\n"
        f"    REGISTRY_PASSWORD = '{p}'\n  }}\n  stages {{ stage('push') {{ steps {{ sh 'make push' }} }} }}\n}}",
        [p],
    )


@form
def bitbucket_pipeline() -> Form:
    p = pw()
    return (
        "pipelines:\n  default:\n    - step:\n        script:\n"
        f"          - docker login -u ci -p '{p}' registry.example.com\n          - docker push registry.example.com/app",
        [p],
    )


@form
def keytool_genkey() -> Form:
    a, b = pw(), pw()
    return (
        f"keytool -genkeypair -v -keystore release.jks -alias upload -keyalg RSA -keysize 2048 -validity 10000 "
        f"-storepass {a} -keypass {b} -dname 'CN=Example'",
        [a, b],
    )


@form
def npm_token_env() -> Form:
    token = "npm_" + an(36)
    return f"//registry.npmjs.org/:_authToken=${{NPM_TOKEN}}\n# NPM_TOKEN={token}", [token]


@form
def sonar_scanner() -> Form:
    token = "squ_" + hexs(40)
    return f"sonar-scanner -Dsonar.projectKey=app -Dsonar.host.url=https://sonar.example.com -Dsonar.token={token}", [
        token
    ]


def main(argv: list[str] | None = None) -> None:
    set_main("build", FORMS, __doc__ or "", argv)


if __name__ == "__main__":
    main()
