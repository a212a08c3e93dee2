"""Properties of the family detectors that must hold for every value, not only the corpus's.

Whenever a value looks like a password (and starts with a letter or digit: a leading
``_``/``*`` reads as Markdown emphasis, a leading ``$`` as a variable; and does not end
with ``.``/``,``, which prose reads as punctuation), every password
slot of every family reports exactly that value; whatever the names, a reference to where a secret lives reports
nothing. Hypothesis prints the failing example and its seed (``--hypothesis-seed``).
"""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from memoryd.secrets.scanner import scan
from memoryd.secrets.values import is_placeholder, looks_like_password

SLOTS = {
    "url": ("url-credentials", "DATABASE_URL=postgres://app:{p}@db.prod.internal:5432/orders"),
    "ado": ("connection-string-password", "Server=sql01;Database=crm;User Id=app;Password={p};"),
    "jdbc": ("connection-string-password", "jdbc:mysql://db1:3306/shop?user=etl&password={p}"),
    "curl": ("cli-password", "curl -u ops:{p} https://api.acme.com/v1"),
    "pgpassword": ("cli-password", "PGPASSWORD={p} psql -h pg1 -U etl app"),
    "sshpass": ("cli-password", "sshpass -p '{p}' ssh ops@nas"),
    "redis": ("config-credential", "requirepass {p}"),
    "pgpass": ("config-credential", "pg1.acme.net:5432:orders:etl:{p}"),
    "netrc": ("config-credential", "machine git.acme.com login ops password {p}"),
    "zh-prose": ("generic-password", "测试机的 root 口令：{p}，用完记得改。"),
}
_URL_SAFE = string.ascii_letters + string.digits + "!*-_.~^$"
passwords = (
    st.text(_URL_SAFE, min_size=8, max_size=30)
    .filter(lambda p: any(c.isdigit() for c in p) and any(c.isalpha() for c in p))
    .filter(lambda p: p[0].isalnum() and p[-1] not in ".,")
    .filter(lambda p: looks_like_password(p) and not is_placeholder(p))
)
names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,30}", fullmatch=True)
parts = st.from_regex(r"[a-z0-9][a-z0-9_\-]{0,20}", fullmatch=True)


def _covered(text: str) -> list[tuple[str, str]]:
    lines = text.split("\n")
    return [(f.rule, lines[f.line - 1][f.start - 1 : f.end - 1]) for f in scan(text)]


@given(passwords, st.sampled_from(sorted(SLOTS)))
def test_every_slot_reports_exactly_a_password_like_value(password: str, slot: str) -> None:
    rule, template = SLOTS[slot]
    note = f"---\nid: facts/x\n---\nFrom the handover:\n\n{template.format(p=password)}\n"
    assert _covered(note) == [(rule, password)]


@given(names, parts, parts, st.sampled_from(["password", "DB_PASSWORD", "token", "SECRET_KEY"]))
def test_references_to_a_secret_store_report_nothing(
    name: str, first: str, second: str, key: str
) -> None:
    for value in (
        f"${{{{ secrets.{name} }}}}",
        f"$(cat /run/secrets/{first})",
        f"op://{first}/{second}/{name}",
        f"arn:aws:secretsmanager:eu-west-1:123456789012:secret:{first}/{second}-AbC123",
        f"arn:aws:ssm:eu-west-1:123456789012:parameter/{first}/{second}",
        f"vault:secret/data/{first}/{second}#{name}",
    ):
        assert scan(f"{key}: {value}\n{key}={value}\n") == [], value
