"""Token formats of AI, Microsoft and common SaaS vendors (issue 43), beside rules.py's.

LangSmith, Microsoft Teams incoming webhooks, Azure DevOps personal access tokens, Azure
Function keys, Mapbox secret tokens, Facebook app and user tokens, New Relic, LaunchDarkly
and Salesforce. Formats follow the vendors' documentation; the legacy forms that are only
random text (a 52-letter DevOps PAT, a function key) need their context to be read.
"""

from __future__ import annotations

import re

from memoryd.secrets.rules import Rule, random_check
from memoryd.secrets.rules import token_rule as _token

_UUID = r"[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}"


def _teams_webhook(value: str) -> bool:
    return random_check(3.0)(value.split("/IncomingWebhook/", 1)[1][:32])


VENDOR_RULES: tuple[Rule, ...] = (
    _token("langsmith-api-key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", "lsv2_", skip=8),
    Rule(
        "teams-webhook-url",
        re.compile(
            r"(https://[a-z0-9\-]+\.webhook\.office\.com/webhookb2/" + _UUID + "@" + _UUID
            + r"/IncomingWebhook/[a-f0-9]{32}/" + _UUID + r"(?:/V2[A-Za-z0-9_\-]{20,})?)"
        ),
        ("webhook.office.com",),
        _teams_webhook,
        group=1,
    ),
    _token("azure-devops-pat", r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}", "azdo"),
    Rule(
        "azure-devops-pat",
        re.compile(
            r"(?i)(?:devops|azdo|\bado)[^\n]{0,40}?(?<![A-Za-z0-9])((?-i:[a-z2-7]{52}))"
            r"(?![A-Za-z0-9])"
        ),
        ("devops", "azdo", "ado"),
        random_check(3.8),
        group=1,
        context=True,
    ),
    _token("azure-function-key", r"[A-Za-z0-9_\-]{44}AzFu[A-Za-z0-9_\-]{5}[A-Za-z0-9]==", "azfu"),
    Rule(
        "azure-function-key",
        re.compile(r"\.azurewebsites\.net/api/[^\s?#]*\?(?:[^\s#]*&)?code=([A-Za-z0-9_\-/+]{40,}={0,2})"),
        ("azurewebsites.net",),
        random_check(3.5),
        group=1,
    ),
    _token("mapbox-secret-token", r"sk\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{20,}", "sk.eyj"),
    Rule(
        "facebook-access-token",
        re.compile(r"(?<![\w|])(\d{15,16}\|[a-f0-9]{32}|\d{15,16}\|[A-Za-z0-9_\-]{27})(?![\w|\-])"),
        ("|",),
        lambda v: random_check(3.0)(v.split("|", 1)[1]),
        group=1,
    ),
    _token("facebook-access-token", r"EAA[A-Z][A-Za-z0-9]{90,}", "eaa", entropy=4.0, skip=4),
    _token("newrelic-user-api-key", r"NRAK-[A-Z0-9]{27}", "nrak-", skip=5),
    _token("newrelic-insert-key", r"NRI[IQ]-[A-Za-z0-9_\-]{32}", "nrii-", "nriq-", skip=5),
    _token("newrelic-license-key", r"[a-f0-9]{36}NRAL", "nral"),
    _token(
        "launchdarkly-key",
        r"(?:api|sdk)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}",
        "api-",
        "sdk-",
        skip=4,
    ),
    _token("salesforce-access-token", r"00D[A-Za-z0-9]{12}![A-Za-z0-9_.]{80,120}", "00d", skip=16),
)
