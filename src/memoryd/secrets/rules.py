"""Provider-specific token formats: prefixes, lengths, checksums.

Each rule names the literal keywords (lower case) that must occur in the text
before its regular expression runs, so a note without ``ghp_`` never pays for
the GitHub pattern. Formats follow the vendors' documentation and the public
rule sets of gitleaks and trufflehog; checksums are verified where the format
has one (GitHub classic, npm).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from memoryd.secrets.values import (
    KNOWN_EXAMPLES,
    crc32_token_ok,
    decode_b64url,
    is_identifier,
    is_placeholder,
    is_repetitive,
    shannon,
    wordset,
)

Validator = Callable[[str], bool]

# A token ends where a token character does not follow.
_END = r"(?![A-Za-z0-9_\-])"
_START = r"(?<![A-Za-z0-9_\-])"


@dataclass(frozen=True)
class Rule:
    id: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...]  # lower-case literals; the rule runs only if one occurs
    check: Validator | None = None
    group: int = 0  # the part of the match that is the secret
    priority: int = 3  # provider 3 > structural 2 > generic 1 when findings overlap
    context: bool = False  # needs the surrounding text (a key name, spaces, quotes)


def random_check(min_entropy: float = 3.0, skip: int = 0) -> Validator:
    """The part after the prefix is random: not a placeholder, a sequence or a repeat."""

    def check(value: str) -> bool:
        body = value[skip:]
        if value in KNOWN_EXAMPLES or is_placeholder(body) or is_repetitive(body):
            return False
        return shannon(body) >= min_entropy

    return check


_random = random_check


def _github_classic(value: str) -> bool:
    return value not in KNOWN_EXAMPLES and crc32_token_ok(value)


def _jwt(value: str) -> bool:
    header_b64, payload_b64, _sig = value.split(".", 2)
    header, payload = decode_b64url(header_b64), decode_b64url(payload_b64)
    if header is None or payload is None or KNOWN_EXAMPLES & {_sig}:
        return False
    try:
        head = json.loads(header)
        claims = json.loads(payload)
    except (UnicodeDecodeError, ValueError):
        return False
    if not isinstance(head, dict) or not isinstance(claims, dict):
        return False
    if str(head.get("alg", "")).lower() == "none":
        return False
    # Supabase and similar "anon" keys are publishable by design; a payload without any
    # registered or identity claim is a documentation toy ({"some": "payload"}).
    return claims.get("role") != "anon" and not _JWT_CLAIMS.isdisjoint(claims)


_JWT_CLAIMS = wordset(
    "iss sub aud exp nbf iat jti role scope scp uid user_id email azp client_id tid oid"
)


_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{1,9}[_\-](?:[a-z0-9]{1,8}[_\-])?")


def _prefixed_tail(value: str) -> bool:
    """The random tail of ``prefix_tail``: all three character classes, high entropy, no words."""
    tail = _PREFIX_RE.sub("", value, count=1)
    mixed = any(c.isupper() for c in tail) and any(c.islower() for c in tail)
    mixed = mixed and any(c.isdigit() for c in tail)
    return mixed and shannon(tail) >= 4.0 and not is_identifier(tail) and _random(4.0)(tail)


def _slack_webhook(value: str) -> bool:
    tail = value.rsplit("/", 1)[-1]
    return len(tail) >= 16 and _random(3.0)(tail)


_SLACK_HEAD_RE = re.compile(r"^xox[a-z](?:\.xox[a-z])?-(?:\d+-)*")


def _slack_token(value: str) -> bool:
    """Not ``xoxb-my-bot-token`` nor ``xoxe.xoxp-1-PasteYourTokenHere``: a tail of words."""
    tail = _SLACK_HEAD_RE.sub("", value, count=1)
    if is_identifier(tail) or tail.lower().endswith("here"):
        return False
    return _random(3.0, 5)(value)


def _aws_key_id(value: str) -> bool:
    return not value.endswith("EXAMPLE") and _random(2.8, 4)(value)


def _re(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def token_rule(
    rule_id: str, pattern: str, *keywords: str, entropy: float = 3.0, skip: int = 0
) -> Rule:
    """A prefixed token: ``pattern`` is anchored on token boundaries."""
    regex = _re(_START + "(" + pattern + ")" + _END)
    return Rule(rule_id, regex, keywords, _random(entropy, skip), group=1)


_token = token_rule  # short names for the table below


RULES: tuple[Rule, ...] = (
    # --- cloud ---
    Rule(
        "aws-access-key-id",
        _re(r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b"),
        ("akia", "asia", "abia", "acca", "a3t"),
        _aws_key_id,
        group=1,
    ),
    Rule(
        "aws-secret-access-key",
        _re(
            r"(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"'\]]{0,2}\s{0,3}"
            r"(?:=>|:=|=|:)\s{0,3}[\"'`]?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        ("secret_access_key", "secretaccesskey", "aws_secret", "secret_key", "secretkey"),
        _random(3.5),
        group=1,
        context=True,
    ),
    _token("gcp-api-key", r"AIza[0-9A-Za-z_\-]{35}", "aiza", entropy=3.5, skip=4),
    _token("gcp-oauth-client-secret", r"GOCSPX-[0-9A-Za-z_\-]{28}", "gocspx-", skip=7),
    _token("gcp-oauth-access-token", r"ya29\.[0-9A-Za-z_\-]{30,}", "ya29.", skip=5),
    Rule(
        "azure-storage-key",
        _re(
            r"(?i)\b(?:AccountKey|SharedAccessKey|azure_?storage_?key)[\"']?\s*[=:]\s*[\"']?([A-Za-z0-9+/]{40,88}={0,2})"
        ),
        ("accountkey", "sharedaccesskey", "storage_key", "storagekey"),
        _random(3.5),
        group=1,
        context=True,
    ),
    Rule(
        "azure-sas-token",
        _re(r"[?&]sv=\d{4}-\d\d-\d\d[^\s\"'<>]*?[?&]sig=([A-Za-z0-9%+/]{30,}(?:%3[dD]|=){0,2})"),
        ("sig=",),
        _random(3.5),
        group=1,
    ),
    _token("azure-ad-client-secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}", "q~", skip=6),
    _token("alibaba-access-key-id", r"LTAI[A-Za-z0-9]{12,20}", "ltai", skip=4),
    _token("tencent-secret-id", r"AKID[A-Za-z0-9]{32}", "akid", skip=4),
    _token("volcengine-access-key", r"AKLT[A-Za-z0-9_\-]{32,60}", "aklt", skip=4),
    _token("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}", "_v1_", skip=7),
    _token("heroku-api-key", r"HRKU-AA[0-9A-Za-z_\-]{58}", "hrku-", skip=7),
    Rule(
        "heroku-api-key",
        _re(
            r"(?i)heroku[\w.\-]{0,20}(?:key|token)[\"'\]]{0,2}\s{0,3}(?:=>|:=|=|:)\s{0,3}[\"'`]?"
            r"([0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12})\b"
        ),
        ("heroku",),
        _random(3.0),
        group=1,
        context=True,
    ),
    _token("cloudflare-origin-ca-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-", skip=5),
    Rule(
        "cloudflare-api-token",
        _re(
            r"(?i)(?:cloudflare|\bcf)[\w.\-]{0,20}(?:key|token)[\"'\]]{0,2}\s{0,3}(?:=>|:=|=|:)"
            r"\s{0,3}[\"'`]?([A-Za-z0-9_\-]{37,40})" + _END
        ),
        ("cloudflare", "cf_", "cf-"),
        _random(3.3),
        group=1,
        context=True,
    ),
    Rule(
        "algolia-admin-key",
        _re(
            r"(?i)algolia[^\n]{0,40}?admin[\w \-]{0,12}?key[\"'\]]{0,2}[ \t]*(?:=>|=|:|：|is)?"
            r"[ \t]*[\"'`]?([a-f0-9]{32})" + _END
        ),
        ("algolia",),
        _random(3.0),
        group=1,
        context=True,
    ),
    Rule(
        "datadog-api-key",
        _re(
            r"(?i)(?:datadog|\bdd)[\w.\-]{0,20}(?:api|app|client)[\w.\-]{0,4}key[\"'\]]{0,2}\s{0,3}"
            r"(?:=>|:=|=|:)\s{0,3}[\"'`]?([a-f0-9]{32}|[a-f0-9]{40})\b"
        ),
        ("datadog", "dd_", "dd-"),
        _random(3.0),
        group=1,
        context=True,
    ),
    _token("tailscale-key", r"tskey-[a-z]+-[0-9A-Za-z_]{6,}-[0-9A-Za-z_]{16,}", "tskey-", skip=6),
    _token("supabase-token", r"sbp_[a-f0-9]{40}", "sbp_", skip=4),
    _token("supabase-secret-key", r"sb_secret_[A-Za-z0-9_\-]{20,}", "sb_secret_", skip=10),
    _token("vault-token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,300}", "hvs.", "hvb.", "hvr.", skip=4),
    _token("terraform-cloud-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}", "atlasv1"),
    _token("pulumi-token", r"pul-[a-f0-9]{40}", "pul-", skip=4),
    _token(
        "doppler-token",
        r"dp\.(?:pt|st|sa|ct|scim|audit)(?:\.[a-z0-9_\-]{1,40})?\.[A-Za-z0-9]{40,44}",
        "dp.pt.",
        "dp.st.",
        "dp.sa.",
        "dp.ct.",
        "dp.scim.",
        "dp.audit.",
    ),
    _token("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?", "dapi", skip=4),
    _token("grafana-cloud-token", r"glc_[A-Za-z0-9+/]{32,400}={0,2}", "glc_", skip=4),
    _token(
        "grafana-service-account-token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", "glsa_", skip=5
    ),
    _token("grafana-api-key", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,2}", "eyjrijoi", skip=8),
    # --- code hosting and packages ---
    Rule(
        "github-token",
        _re(r"\b(gh[pousr]_[A-Za-z0-9]{36})\b"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        _github_classic,
        group=1,
    ),
    _token("github-fine-grained-pat", r"github_pat_[A-Za-z0-9_]{82}", "github_pat_", skip=11),
    _token(
        "gitlab-token",
        r"(?:glpat|gldt|glrt|glft|glsoat|glffct|gloas|glimt|glagent|glcbt|glptt)-"
        r"[0-9A-Za-z_\-]{20,300}(?:\.[0-9a-z]{9})?",
        "glpat-",
        "gldt-",
        "glrt-",
        "glft-",
        "glsoat-",
        "glffct-",
        "gloas-",
        "glimt-",
        "glagent-",
        "glcbt-",
        "glptt-",
        skip=6,
    ),
    _token("gitlab-runner-registration-token", r"GR1348941[0-9A-Za-z_\-]{20}", "gr1348941", skip=9),
    Rule(
        "npm-token",
        _re(r"\b(npm_[A-Za-z0-9]{36})\b"),
        ("npm_",),
        crc32_token_ok,
        group=1,
    ),
    _token("pypi-token", r"pypi-AgE[IN][A-Za-z0-9_\-]{60,}", "pypi-age", skip=8),
    _token("dockerhub-token", r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{24,40}", "dckr_", skip=9),
    _token("rubygems-token", r"rubygems_[a-f0-9]{48}", "rubygems_", skip=9),
    _token("artifactory-api-key", r"AKCp[A-Za-z0-9]{69}", "akcp", skip=4),
    # --- AI providers ---
    _token("anthropic-api-key", r"sk-ant-[a-z]{3,6}\d\d-[A-Za-z0-9_\-]{40,}", "sk-ant-", skip=14),
    _token("openrouter-api-key", r"sk-or-v1-[a-f0-9]{64}", "sk-or-", skip=9),
    _token(
        "openai-api-key",
        r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{40,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
        "sk-proj-",
        "sk-svcacct-",
        "sk-admin-",
        "sk-none-",
        "t3blbkfj",
        entropy=3.5,
        skip=3,
    ),
    _token("llm-api-key", r"sk-[A-Za-z0-9]{32,64}", "sk-", entropy=3.3, skip=3),
    _token("groq-api-key", r"gsk_[A-Za-z0-9]{48,52}", "gsk_", skip=4),
    _token("perplexity-api-key", r"pplx-[A-Za-z0-9]{48}", "pplx-", skip=5),
    _token("huggingface-token", r"(?:hf|api_org)_[A-Za-z0-9]{34,40}", "hf_", "api_org_", skip=3),
    _token("replicate-api-token", r"r8_[A-Za-z0-9_\-]{37}", "r8_", skip=3),
    # --- messaging, payments, SaaS ---
    Rule(
        "slack-token",
        _re(_START + r"(xox[abposre](?:\.xox[bp])?-(?:\d+-)*[0-9A-Za-z\-]{10,})" + _END),
        ("xox",),
        _slack_token,
        group=1,
    ),
    _token("slack-app-token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", "xapp-", skip=5),
    Rule(
        "slack-webhook-url",
        _re(r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_\-/+]{20,})"),
        ("hooks.slack.com",),
        _slack_webhook,
        group=1,
    ),
    Rule(
        "discord-webhook-url",
        _re(
            r"(https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{15,20}/"
            r"[A-Za-z0-9_\-]{60,70})"
        ),
        ("discord",),
        _slack_webhook,
        group=1,
    ),
    _token(
        "discord-bot-token",
        r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}",
        "",
        entropy=3.5,
    ),
    _token("telegram-bot-token", r"\d{8,10}:AA[A-Za-z0-9_\-]{33}", ":aa", skip=12),
    _token(
        "stripe-secret-key",
        r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}",
        "sk_",
        "rk_",
        skip=8,
    ),
    _token("stripe-webhook-secret", r"whsec_[A-Za-z0-9+/=]{32,}", "whsec_", skip=6),
    _token("twilio-api-key", r"SK[0-9a-f]{32}", "sk", skip=2),
    _token("sendgrid-api-key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}", "sg.", skip=3),
    _token("mailgun-api-key", r"key-[a-f0-9]{32}", "key-", skip=4),
    _token("mailchimp-api-key", r"[a-f0-9]{32}-us\d{1,2}", "-us"),
    _token("sendinblue-api-key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-", skip=8),
    _token(
        "shopify-token",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        "shpat_",
        "shpca_",
        "shppa_",
        "shpss_",
        skip=6,
    ),
    _token("sentry-token", r"sntry[us]_[A-Za-z0-9+/=_]{40,300}", "sntry", skip=7),
    _token(
        "linear-api-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40,64}", "lin_api_", "lin_oauth_", skip=8
    ),
    _token("notion-token", r"ntn_[0-9]{11}[A-Za-z0-9]{35}", "ntn_", skip=4),
    _token("notion-token", r"secret_[A-Za-z0-9]{43}", "secret_", entropy=3.5, skip=7),
    _token("atlassian-api-token", r"ATATT3[A-Za-z0-9_\-=]{150,}", "atatt3", skip=6),
    _token("postman-api-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", "pmak-", skip=5),
    _token(
        "planetscale-token", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,64}", "pscale_", skip=11
    ),
    _token("dynatrace-token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "dt0c01.", skip=7),
    _token("figma-token", r"figd_[A-Za-z0-9_\-]{40,}", "figd_", skip=5),
    _token("square-secret", r"sq0(?:csp|atp)-[A-Za-z0-9_\-]{22,60}", "sq0", skip=7),
    _token("onepassword-token", r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}", "ops_eyj", skip=4),
    _token(
        "age-secret-key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "age-secret-key-1",
    ),
    # --- any vendor: a short lower-case prefix and a long random tail (xai-, tvly-, nvapi-...) ---
    Rule(
        "prefixed-api-token",
        _re(
            r"(?<![A-Za-z0-9_\-./+])((?!(?:sha\d*|md5|pk|sb_publishable|v\d+|gh[pousr]|npm)[_\-])"
            r"[a-z][a-z0-9]{1,9}[_\-](?:[a-z0-9]{1,8}[_\-])?[A-Za-z0-9][A-Za-z0-9_\-]{31,199})"
            r"(?![A-Za-z0-9_\-+/=.])"
        ),
        ("",),
        _prefixed_tail,
        group=1,
        priority=2,
    ),
    # --- structural ---
    Rule(
        "jwt",
        _re(_START + r"(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,})" + _END),
        ("eyj",),
        _jwt,
        group=1,
        priority=2,
    ),
)
