"""The detect-secrets benchmark reads a plugin test's cases as written, without running it."""

from __future__ import annotations

from pathlib import Path

from benchmarks.privacy.detect_secrets_cases import cases, found

_PLUGIN = """
import pytest
from detect_secrets.plugins.x import X  # not installed here: never imported

TOKEN = '110201543'


class TestX:
    @pytest.mark.parametrize(
        'payload, should_flag',
        [
            ('{}:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw'.format(TOKEN), True),
            ('nothing here', False),
        ],
    )
    def test_analyze(self, payload, should_flag):
        pass
"""

_KEYWORD = """
COMMON_SECRET = 'Xk29aLqZp0Wm'
C_TEST_CASES = [
    ('password = "{}";'.format(COMMON_SECRET), COMMON_SECRET),
    ("password = '{}';".format(COMMON_SECRET), None),  # double quotes required in C
    ('api_key = ""', None),
]
GO_TEST_CASES = [
    ('password = "{}";'.format(COMMON_SECRET), COMMON_SECRET),
]
"""


def test_cases_are_read_from_the_plugin_tests(tmp_path: Path) -> None:
    plugins = tmp_path / "tests" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "telegram_token_test.py").write_text(_PLUGIN)
    (plugins / "keyword_test.py").write_text(_KEYWORD)
    read, refused_for_type = cases(tmp_path)
    by_text = {case.text: case for case in read}
    assert by_text["110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw"].positive
    assert not by_text["nothing here"].positive
    # The same keyword line in two file types is one case; a secret refused only for its file
    # type is counted apart, not as a negative.
    keyword = [case for case in read if case.plugin == "keyword"]
    assert [(c.text, c.secret, c.positive) for c in keyword] == [
        ('password = "Xk29aLqZp0Wm";', "Xk29aLqZp0Wm", True),
        ('api_key = ""', None, False),
    ]
    assert refused_for_type == 1
    assert all(found(case) == case.positive for case in read)
