"""Issue 43: harmless shapes other scanners flag, and the values vendors publish on purpose.

Each shape is written fresh for memoryd; each stays quiet, and beside it the nearest real
secret is still found, so the exception is no wider than the shape.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.secrets.published import PUBLISHED, PUBLISHED_VALUES, published_by_design
from memoryd.secrets.scanner import SecretFinding, scan
from tests.secrets.fake_tokens import ALNUM, HEX, github, rand

URLSAFE = ALNUM + "-_"
PW = rand("pub-pw", 11) + "%3"


def covered(text: str, f: SecretFinding) -> str:
    return text.split("\n")[f.line - 1][f.start - 1 : f.end - 1]


def found(text: str) -> list[tuple[str, str]]:
    return [(f.rule, covered(text, f)) for f in scan(text)]


def uuid(seed: str) -> str:
    h = rand(seed, 32, HEX)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


FIREBASE_KEY = "AIza" + rand("fb-web", 35, URLSAFE)
SEARCH_KEY = rand("algolia-search", 32, HEX)
HARMLESS = {
    "slack-words": "SLACK_BOT_TOKEN=xoxb-my-bot-token",
    "slack-words-long": "export SLACK_TOKEN=xoxb-your-workspace-bot-token",
    "slack-refresh-here": "SLACK_REFRESH_TOKEN=xoxe.xoxp-1-PasteTheRefreshTokenHere",
    "curl-angle-pair": "curl -u <user:password> https://api.example.org/v1/me",
    "curl-angle-parts": "curl -u <username>:<password> https://api.example.org/v1/me",
    "truncated-dots": "OPENAI_API_KEY=sk-proj-" + rand("tr1", 10) + "...",
    "truncated-ellipsis": "STRIPE_SECRET_KEY=sk_live_" + rand("tr2", 14) + "\u2026",
    "truncated-password": "DB_PASSWORD=Xk9#" + rand("tr3", 4) + "...",
    "truncated-github": "the token starts " + github("tr4")[:20] + "...",
    "maven-xml": "<groupId>io.jsonwebtoken</groupId>\n<artifactId>jjwt-api</artifactId>",
    "maven-gradle": "implementation 'io.jsonwebtoken:jjwt-api:0.12.6'",
    "maven-coordinate": "io.jsonwebtoken:jjwt-impl:0.11.5",
    "header-bearer-alone": "Authorization: Bearer",
    "header-basic-realm": 'WWW-Authenticate: Basic realm="api"',
    "header-websocket-key": "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "header-websocket-accept": "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
    "header-name-only": "X-Api-Key:",
    "build-secret-env": "docker buildx build --secret id=npm_token,env=NPM_TOKEN .",
    "build-secret-src": "docker build --secret id=aws,src=$HOME/.aws/credentials .",
    "build-secret-flag": "--secret id=github_token,env=GITHUB_TOKEN",
    "dotenv-empty-then-name": "DB_PASSWORD=\nDB_HOST=db.internal\n",
    "dotenv-empty-then-random": "SECRET_KEY=\n" + rand("de1", 40) + "\n",
    "dotenv-empty-then-password": "PASSWORD=\nHarbor1987!x\n",
    "dotenv-empty-export": "export AWS_SECRET_ACCESS_KEY=\nexport AWS_REGION=us-east-1\n",
    "firebase-web-config": (
        "const firebaseConfig = {\n"
        f'  apiKey: "{FIREBASE_KEY}",\n'
        '  authDomain: "notes-demo.firebaseapp.com",\n'
        '  projectId: "notes-demo",\n'
        "};"
    ),
    "firebase-google-services": f'"api_key": [{{"current_key": "{FIREBASE_KEY}"}}]',
    "algolia-jsx": (
        f'<DocSearch appId="{rand("aa1", 10, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}" '
        f'apiKey="{SEARCH_KEY}" indexName="handbook" />'
    ),
    "algolia-json": f'{{"appId": "QX2B7", "apiKey": "{SEARCH_KEY}", "indexName": "docs"}}',
    "launchdarkly-mobile": "mobileKey: mob-" + uuid("ld-mob"),
}


@pytest.mark.parametrize("name", sorted(HARMLESS))
def test_each_harmless_shape_stays_quiet(name: str) -> None:
    assert found(HARMLESS[name]) == [], name


@pytest.mark.parametrize(("value", "source"), PUBLISHED, ids=[v[:12] for v, _s in PUBLISHED])
def test_each_published_value_is_quiet_and_names_its_source(value: str, source: str) -> None:
    assert len(source) > 10
    for line in (f"API_KEY={value}", f'"token": "{value}"', value):
        assert found(line) == [], line
    assert value in PUBLISHED_VALUES


def test_the_aws_documentation_keys_stay_let_through() -> None:
    text = "aws configure\nAKIAIOSFODNN7EXAMPLE\nwJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
    assert found(text) == []


def test_the_exceptions_are_no_wider_than_their_shapes() -> None:
    slack = "xoxb-" + rand("s1", 12, "0123456789") + "-" + rand("s2", 24)
    assert found(f"SLACK_BOT_TOKEN={slack}") == [("slack-token", slack)]
    token = github("full")
    assert found(f"GITHUB_TOKEN={token}.") == [("github-token", token)]  # a full stop
    assert found(f"curl -u deploy:{PW} https://api.example.org") == [("cli-password", PW)]
    assert found(f"GEMINI_API_KEY={FIREBASE_KEY}") == [("gcp-api-key", FIREBASE_KEY)]
    admin = f'{{"appId": "QX2B7", "adminApiKey": "{SEARCH_KEY}", "indexName": "docs"}}'
    assert found(admin) == [("generic-secret", SEARCH_KEY)]
    env = f"ALGOLIA_APP_ID=QX2B7\nALGOLIA_API_KEY={SEARCH_KEY}\n"  # no index: a server key
    assert found(env) == [("generic-secret", SEARCH_KEY)]
    assert found(f"--secret {PW}") == [("generic-secret", PW)]
    assert found(f"DB_PASSWORD=\nDB_PASSWORD={PW}\n") == [("generic-password", PW)]


def test_published_by_design_reads_the_config_around_the_key() -> None:
    text = HARMLESS["firebase-web-config"]
    start = text.index(FIREBASE_KEY)
    assert published_by_design(text, start, start + len(FIREBASE_KEY), "gcp-api-key")
    alone = f"key = {FIREBASE_KEY}"
    assert not published_by_design(alone, 6, 6 + len(FIREBASE_KEY), "gcp-api-key")


_NEXT_LINE = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=60
)


@settings(max_examples=150, deadline=None)
@given(
    key=st.sampled_from(["DB_PASSWORD", "SECRET_KEY", "API_TOKEN", "JWT_SECRET", "password"]),
    op=st.sampled_from(["=", "=  ", " = ", "::=", "?="]),
    following=_NEXT_LINE,
)
def test_an_empty_dotenv_value_never_borrows_the_next_line(key: str, op: str, following: str) -> None:
    """Whatever the next line holds, it is judged as itself, never as ``key``'s value."""
    text = f"{key}{op}\n{following}\n"
    alone = [(f.rule, f.start, f.end) for f in scan(following + "\n")]
    assert [(f.rule, f.start, f.end) for f in scan(text) if f.line == 2] == alone
    assert [f for f in scan(text) if f.line == 1] == []
