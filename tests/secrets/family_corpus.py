"""Labelled memory notes per secret family, generated from templates at run time.

Two template sets use this machinery: ``family_cases`` (the development set the rules
are tested and tuned on) and ``family_heldout`` (written before any tuning, never
tuned on, only measured by ``bench/secrets_quality.py --heldout``). A template is
one way people write a thing down (a ``.pgpass`` line, "密码是 X", a ``curl -u``
call); each rendering draws fresh values (passwords of several styles, users,
hosts, companion ids) and a fresh placement: frontmatter, a paragraph with English
or Chinese prose around it, a fenced block, a list item.

Fields in a template are ``{name}`` with ``name`` one of :data:`FIELDS`; any other
brace (JSON, shell ``${X}``) is left alone. ``{s}`` is the secret: the finding must
cover exactly it. Fake values are random per seed and never real.
"""

from __future__ import annotations

import base64
import random
import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
UPPER_ALNUM = string.ascii_uppercase + string.digits
DJANGO = string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)"

# Families holding secrets (recall and false positives are measured), then the harmless
# shapes (false positives only).
SECRET_FAMILIES = ("url", "cli", "config", "signing", "paired", "prose")
HARMLESS_FAMILIES = ("reference", "keygen", "harmless")
FAMILIES = SECRET_FAMILIES + HARMLESS_FAMILIES


@dataclass(frozen=True)
class Template:
    family: str
    text: str
    rule: str | None = None  # the rule that must report {s}; None: a harmless note
    secret: str = "password"  # the generator of {s} (a key of GENERATORS)
    code: bool = False  # a snippet of a file or a command: fenced or indented, never prose


@dataclass(frozen=True)
class Labelled:
    family: str
    id: str
    text: str
    rule: str | None = None
    secret: str = ""  # the exact text the finding covers; "" when harmless
    others: tuple[tuple[str, str], ...] = ()  # companion ids reported too: (rule, text)


def pos(family: str, rule: str, text: str, secret: str = "password", code: bool = True) -> Template:
    return Template(family, text, rule, secret, code)


def neg(family: str, text: str, code: bool = True) -> Template:
    return Template(family, text, None, "password", code)


# --- values --------------------------------------------------------------------

_WORDS = (
    "Falcon", "Maple", "Harbor", "Copper", "Violet", "Thunder", "Orchid", "Granite", "Meadow",
    "Saturn", "Pepper", "Lantern", "Breeze", "Cobalt", "Juniper", "Walnut", "Summit", "Ember",
)  # fmt: skip
_SYMBOLS = "!@#$%^&*-_+=?."


def _password(rng: random.Random) -> str:
    """One of eight styles people and generators use (never starting like ``$VAR`` or ``-x``)."""
    while True:
        value = _password_style(rng)
        if value[0] not in "$-*&":
            return value


def _password_style(rng: random.Random) -> str:
    word, other = rng.sample(_WORDS, 2)
    style = rng.randrange(8)
    if style == 0:  # a word, a year, a symbol
        return word + str(rng.randint(1975, 2031)) + rng.choice("!@#$%&*")
    if style == 1:  # generated, with symbols
        alphabet = ALNUM + _SYMBOLS
        while True:
            value = "".join(rng.choice(alphabet) for _ in range(rng.randint(12, 22)))
            if any(c in _SYMBOLS for c in value) and any(c.isdigit() for c in value):
                return value
    if style == 2:  # pwgen: pronounceable, mixed case and a digit
        value = "".join(rng.choice("bcdfghjkmnpqrstvwxz") + rng.choice("aeiou") for _ in range(4))
        return value[:3].capitalize() + value[3:] + str(rng.randint(0, 9))
    if style == 3:  # leetspeak of two words
        table = str.maketrans("aeios", "43105")
        return (word + other).translate(table) + rng.choice("!?#")
    if style == 4:  # lower case and digits, 16
        return _rand(rng, 16, string.ascii_lowercase + string.digits, need_digit=True)
    if style == 5:  # two words and digits
        return f"{word.lower()}{rng.choice('-_.')}{other.lower()}{rng.randint(10, 99)}"
    if style == 6:  # alnum mixed case, 20
        return _rand(rng, 20, ALNUM, need_digit=True)
    return word + rng.choice("#@!") + str(rng.randint(100, 9999)) + other[:3].lower()


def _rand(rng: random.Random, n: int, alphabet: str, need_digit: bool = False) -> str:
    """``n`` characters of ``alphabet`` using at least two of its letter/digit classes."""
    groups = [g for g in (string.ascii_lowercase, string.ascii_uppercase, string.digits)
              if any(c in g for c in alphabet)]  # fmt: skip
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if need_digit and not any(c.isdigit() for c in value):
            continue
        if sum(any(c in g for c in value) for g in groups) >= min(2, len(groups)):
            return value


def _url_password(rng: random.Random) -> str:
    """A password as it appears inside a URL: the reserved characters left out."""
    while True:
        value = _password(rng)
        if not set(value) & set("@#?/:%&=+"):
            return value


def _docker_auth(rng: random.Random) -> str:
    user = rng.choice(["ci-bot", "deploy", "jenkins", "robot$acme+ci", "svc-build"])
    return base64.b64encode(f"{user}:{_password(rng)}".encode()).decode()


def _gen(n: int, alphabet: str, need_digit: bool = True) -> Callable[[random.Random], str]:
    return lambda rng: _rand(rng, n, alphabet, need_digit=need_digit)


GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "password": _password,
    "urlpassword": _url_password,
    "dockerauth": _docker_auth,
    "hex20": _gen(20, HEX),
    "hex32": _gen(32, HEX),
    "hex64": _gen(64, HEX),
    "hex128": _gen(128, HEX),
    "b64_40": _gen(40, B64),
    "alnum30": _gen(30, ALNUM),
    "alnum32": _gen(32, ALNUM),
    "alnum40": _gen(40, ALNUM),
    "urlsafe43": _gen(43, URLSAFE),
    "django": lambda rng: _rand(rng, 50, DJANGO, need_digit=True),
    "django-insecure": lambda rng: "django-" + "insecure-" + _rand(rng, 50, DJANGO, True),
    "laravel": lambda rng: base64.b64encode(rng.randbytes(32)).decode(),
    "b64_32": lambda rng: base64.b64encode(rng.randbytes(32)).decode(),
    "b64_48": lambda rng: base64.b64encode(rng.randbytes(48)).decode(),
    "uuid_token": lambda rng: "-".join(_rand(rng, n, HEX, True) for n in (8, 4, 4, 4, 12)),
}

_USERS = ["app", "deploy", "svc_reporting", "jenkins", "admin", "etl", "liwei", "grafana", "ops"]
_HOSTS = [
    "db.prod.internal", "pg-main.acme-corp.net", "10.0.12.7", "mysql01.shop.lan",
    "cache.eu-west-1.acme.io", "warehouse.corp.acme.com", "192.168.50.20", "nas.home.arpa",
]  # fmt: skip
_DBS = ["orders", "analytics", "app_prod", "billing", "crm", "inventory"]
_CORPS = ["acme", "globex", "initech", "umbrella", "hooli", "zhiyun"]
FIELDS = (
    "s", "u", "h", "db", "corp", "port", "aws_id", "twilio_sid", "ali_id", "tc_id", "algolia_app", "ak20",
    "uuid", "sha", "sha7", "hex64", "b64img", "b64_64", "acct", "word", "n",
)  # fmt: skip
_FIELD_RE = re.compile(r"\{(" + "|".join(FIELDS) + r")\}")


def _fields(rng: random.Random, secret: str) -> dict[str, str]:
    b32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    return {
        "s": secret,
        "u": rng.choice(_USERS),
        "h": rng.choice(_HOSTS),
        "db": rng.choice(_DBS),
        "corp": rng.choice(_CORPS),
        "port": str(rng.choice([5432, 3306, 6379, 1433, 5672, 27017, 8443])),
        "aws_id": rng.choice(["AK", "AS"]) + "IA" + _rand(rng, 16, b32),
        "twilio_sid": "AC" + _rand(rng, 32, HEX),
        "ali_id": "LT" + "AI" + _rand(rng, 20, ALNUM),
        "tc_id": "AK" + "ID" + _rand(rng, 32, ALNUM),
        "algolia_app": _rand(rng, 10, UPPER_ALNUM),
        "ak20": _rand(rng, 20, UPPER_ALNUM),
        "uuid": "-".join(_rand(rng, n, HEX) for n in (8, 4, 4, 4, 12)),
        "sha": _rand(rng, 40, HEX),
        "sha7": _rand(rng, 7, HEX),
        "hex64": _rand(rng, 64, HEX),
        "b64img": "iVBORw0KGgoAAAANSUhEUgAA" + base64.b64encode(rng.randbytes(90)).decode(),
        "b64_64": base64.b64encode(rng.randbytes(64)).decode(),
        "acct": str(rng.randint(10**11, 10**12 - 1)),
        "word": rng.choice(_WORDS).lower(),
        "n": str(rng.randint(2, 90)),
    }


# Companion ids that are reported on their own (an access key id is not harmless either).
_ID_RULES = {
    "aws_id": "aws-access-key-id",
    "ali_id": "alibaba-access-key-id",
    "tc_id": "tencent-secret-id",
}


def render(template: str, fields: dict[str, str]) -> str:
    return _FIELD_RE.sub(lambda m: fields[m.group(1)], template)


# --- placement -----------------------------------------------------------------

_LEADS_EN = [
    "Notes from setting up the box today.",
    "Pasting this so the next session does not have to dig for it.",
    "What I ran while fixing the nightly job:",
    "Handover from the on-call week.",
    "For the migration checklist.",
]
_LEADS_ZH = [
    "今天排查问题时记下的：",
    "交接给下一位同事，省得再问。",
    "迁移清单里的一项。",
    "部署时用到的配置，先记在这里。",
]
_TAILS = [
    "Rotate after the audit.",
    "Restart the service afterwards.",
    "记得之后轮换。",
    "",
    "Ask in #infra if this breaks.",
]
_FENCES = ["", "bash", "ini", "yaml", "text", "sh", "conf", "json", "xml"]


def place(snippet: str, code: bool, rng: random.Random, slug: str) -> str:
    """``snippet`` inside a memory note: frontmatter, a fenced block, a paragraph or a list."""
    summary = rng.choice(["setup notes", "db access", "部署记录", "ci pipeline", "server login"])
    head = f"id: facts/{slug}\nkind: {rng.choice(['fact', 'howto', 'log'])}\n"
    lead = rng.choice(_LEADS_ZH if rng.random() < 0.3 else _LEADS_EN)
    tail = rng.choice(_TAILS)
    roll = rng.random()
    if roll < 0.3:  # frontmatter: a one-line value, or a block scalar
        if "\n" not in snippet and ": " not in snippet and not snippet.startswith(("-", "{", "[")):
            front = f"{head}summary: {snippet}\n"
        else:
            block = "\n".join("  " + line for line in snippet.split("\n"))
            front = f"{head}summary: {summary}\ndetails: |\n{block}\n"
        return f"---\n{front}tags: [infra]\n---\n{lead}\n\n{tail}\n"
    body = f"---\n{head}summary: {summary}\n---\n{lead}\n\n"
    if code or "\n" in snippet:
        if roll < 0.8:
            return f"{body}```{rng.choice(_FENCES)}\n{snippet}\n```\n\n{tail}\n"
        indented = "\n".join("    " + line for line in snippet.split("\n"))
        return f"{body}{indented}\n\n{tail}\n"
    if roll < 0.65:
        return f"{body}{snippet}\n\n{tail}\n"
    return f"{body}- {rng.choice(['', 'TODO: '])}{snippet}\n- {tail or 'done'}\n"


def generate(templates: Iterable[Template], per: int, seed: str) -> list[Labelled]:
    """``per`` renderings of every template, deterministic for ``seed``."""
    out = []
    for index, template in enumerate(templates):
        for k in range(per):
            rng = random.Random(f"{seed}/{index}/{k}")
            secret = GENERATORS[template.secret](rng)
            fields = _fields(rng, secret)
            snippet = render(template.text, fields)
            others = tuple(
                (rule, fields[name])
                for name, rule in _ID_RULES.items()
                if f"{{{name}}}" in template.text
            )
            case_id = f"{template.family}-{index}-{k}"
            text = place(snippet, template.code, rng, f"{template.family}-{index}")
            if template.rule is None:
                assert not others, (case_id, "an id alone is reported: not a harmless note")
                out.append(Labelled(template.family, case_id, text))
            else:
                assert secret in text, (case_id, template.text)
                out.append(Labelled(template.family, case_id, text, template.rule, secret, others))
    return out
