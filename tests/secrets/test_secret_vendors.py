"""Issue 43: the vendors' keys and the assignment syntaxes other scanners' suites hold.

Every case is written fresh for memoryd (values built at run time from seeded random
characters): each family as a memory note and as a bare line, each syntax with its exact
finding. The harmless shapes and the published values are in test_secret_published.py.
"""

from __future__ import annotations

import pytest

from memoryd.secrets.scanner import SecretFinding, scan
from tests.secrets.fake_tokens import ALNUM, HEX, rand

UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
B32_LOWER = "abcdefghijklmnopqrstuvwxyz234567"
URLSAFE = ALNUM + "-_"


def uuid(seed: str) -> str:
    h = rand(seed, 32, HEX)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def covered(text: str, f: SecretFinding) -> str:
    return text.split("\n")[f.line - 1][f.start - 1 : f.end - 1]


def found(text: str) -> list[tuple[str, str]]:
    return [(f.rule, covered(text, f)) for f in scan(text)]


def note(line: str) -> str:
    return f"---\nid: facts/keys\nkind: fact\nsummary: service keys\n---\nFor the deploy:\n\n{line}\n"


TEAMS = (
    "https://contoso.webhook.office.com/webhookb2/" + uuid("t1") + "@" + uuid("t2")
    + "/IncomingWebhook/" + rand("t3", 32, HEX) + "/" + uuid("t4")
)  # fmt: skip
# (family, the token, a line holding it, the rule)
FAMILIES = [
    ("xai", "xai-" + rand("xai", 80), "XAI_API_KEY={t}", "prefixed-api-token"),
    ("langsmith", "lsv2_pt_" + rand("ls1", 32, HEX) + "_" + rand("ls2", 10, HEX),
     "LANGSMITH_API_KEY={t}", "langsmith-api-key"),
    ("langsmith-service", "lsv2_sk_" + rand("ls3", 32, HEX) + "_" + rand("ls4", 10, HEX),
     "tracing key {t}", "langsmith-api-key"),
    ("teams-webhook", TEAMS, "alerts go to {t}", "teams-webhook-url"),
    ("teams-webhook-v2", TEAMS + "/V2" + rand("t5", 44, URLSAFE), "TEAMS_HOOK={t}",
     "teams-webhook-url"),
    ("azure-devops-pat", rand("ado1", 76) + "AZDO" + rand("ado2", 4), "{t}", "azure-devops-pat"),
    ("azure-devops-pat-legacy", rand("ado3", 52, B32_LOWER),
     "Azure DevOps PAT for the build agent: {t}", "azure-devops-pat"),
    ("azure-function-key", rand("fk1", 44, URLSAFE) + "AzFu" + rand("fk2", 5, URLSAFE) + "Q==",
     "x-functions-key: {t}", "azure-function-key"),
    ("azure-function-url", rand("fk3", 54, URLSAFE) + "==",
     "curl 'https://ingest-prod.azurewebsites.net/api/Ingest?code={t}'", "azure-function-key"),
    ("mapbox-secret", "sk.eyJ1IjoiYWNtZS1tYXBzIiwiYSI6I" + rand("mb1", 20) + "." + rand("mb2", 22),
     "MAPBOX_DOWNLOADS_TOKEN={t}", "mapbox-secret-token"),
    ("facebook-app-token", "1" + rand("fb1", 15, "0123456789") + "|" + rand("fb2", 32, HEX),
     "graph token {t}", "facebook-access-token"),
    ("facebook-user-token", "EAAG" + rand("fb3", 120), "FB_ACCESS_TOKEN={t}",
     "facebook-access-token"),
    ("newrelic-user", "NRAK-" + rand("nr1", 27, UPPER_DIGITS), "{t}", "newrelic-user-api-key"),
    ("newrelic-insert", "NRII-" + rand("nr2", 32, URLSAFE), "insights: {t}",
     "newrelic-insert-key"),
    ("newrelic-license", rand("nr3", 36, HEX) + "NRAL", "license_key: {t}",
     "newrelic-license-key"),
    ("launchdarkly-api", "api-" + uuid("ld1"), "LD_ACCESS_TOKEN={t}", "launchdarkly-key"),
    ("launchdarkly-sdk", "sdk-" + uuid("ld2"), "server SDK key {t}", "launchdarkly-key"),
    ("salesforce", "00D" + rand("sf1", 12) + "!" + rand("sf2", 96, ALNUM + "._"),
     "SF_ACCESS_TOKEN={t}", "salesforce-access-token"),
]  # fmt: skip


# A legacy Azure DevOps PAT is 52 base32 letters, a legacy function key 54 random
# characters: without "DevOps" or the azurewebsites.net URL they are just random text.
NEEDS_CONTEXT = {"azure-devops-pat-legacy", "azure-function-url"}


@pytest.mark.parametrize(("family", "token", "line", "rule"), FAMILIES, ids=[f[0] for f in FAMILIES])
@pytest.mark.parametrize("shape", ["note", "bare"])
def test_each_family_is_found_in_a_note_and_as_a_bare_line(
    family: str, token: str, line: str, rule: str, shape: str
) -> None:
    text = token if shape == "bare" else note(line.format(t=token))
    if shape == "bare" and family in NEEDS_CONTEXT:
        assert found(text) == []  # no prefix: only its name or URL says what it is
    else:
        assert found(text) == [(rule, token)], family


PW = rand("syn-pw", 11) + "#7"
TOKEN = rand("syn-token", 40)
# (syntax, the line, the rule, the covered value)
SYNTAXES = [
    ("go-var", f'var dbPassword string = "{PW}"', "generic-password", PW),
    ("go-const", f'const apiToken string = "{TOKEN}"', "generic-secret", TOKEN),
    ("java-setProperty", f'System.setProperty("db.password", "{PW}");', "generic-password", PW),
    ("java-props", f"props.setProperty('mail.smtp.password', '{PW}')", "generic-password", PW),
    ("nuget", f'<add key="ClearTextPassword" value="{PW}" />', "generic-password", PW),
    ("web-config", f"<add key='ApiToken' value='{TOKEN}'/>", "generic-secret", TOKEN),
    ("curl-dollars", "curl -u admin:pa$$W0rd" + rand("c1", 4) + " https://ci.example.org",
     "cli-password", "pa$$W0rd" + rand("c1", 4)),
    ("curl-continued", f"curl -X POST https://ci.example.org/build \\\n  -u builder:{PW} \\\n"
     "  -d ref=main", "cli-password", PW),
    ("curl-u-continued", f"curl -u \\\n  builder:{PW} https://ci.example.org", "cli-password", PW),
    ("make-::=", f"DB_PASSWORD ::= {PW}", "generic-password", PW),
    ("make-:::=", f"API_TOKEN :::= {TOKEN}", "generic-secret", TOKEN),
    ("make-?=", f"DB_PASSWORD ?= {PW}", "generic-password", PW),
    ("php-.=", f"$password .= '{PW}';", "generic-password", PW),
    ("php-.=-subscript", f'$config["db_password"] .= "{PW}";', "generic-password", PW),
]  # fmt: skip


@pytest.mark.parametrize(("syntax", "line", "rule", "value"), SYNTAXES, ids=[s[0] for s in SYNTAXES])
def test_each_syntax_reports_exactly_its_value(syntax: str, line: str, rule: str, value: str) -> None:
    assert found(note(line)) == [(rule, value)], syntax


def test_a_call_pair_needs_the_call_and_a_secret_name() -> None:
    assert found(f'props.setProperty("db.host", "{PW}")') == []  # not a secret name
    assert found(f'pairs = ["password", "{PW}"]') == []  # a list, not a call's arguments
    assert found(f'<add key="ClearTextUsername" value="{PW}" />') == []


def test_curl_stops_at_the_end_of_its_command() -> None:
    """A continuation joins lines; without one, ``-u`` on the next line is another command."""
    assert found(f"curl https://ci.example.org\nssh -u builder:{PW} ci") == []
