"""Values that vendors publish on purpose, and the shapes of keys meant to ship in apps.

A scanner that flags the AWS documentation's example key, the Firebase SDK's sample API
key or a docs site's Algolia search-only key trains people to allowlist blindly. Two
kinds of knowledge live here, so that they are said once:

* :data:`PUBLISHED`: exact example values from vendor documentation and standards, each
  with where it is published. They are never a live credential anywhere.
* :func:`published_by_design`: keys their vendor documents as public (a Firebase web
  config's ``apiKey``, an Algolia search-only key beside its ``appId`` and
  ``indexName``, a LaunchDarkly mobile key), recognised by the config they sit in.
"""

from __future__ import annotations

import re

# (value, where it is published). Add a value only with its source.
PUBLISHED: tuple[tuple[str, str], ...] = (
    ("AKIAIOSFODNN7EXAMPLE", "AWS IAM docs, 'Managing access keys' example access key id"),
    ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS IAM docs, example secret access key"),
    ("sk_test_4eC39HqLyjWDarjtT1zdp7dc", "Stripe API reference, the docs' sample test key"),
    ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "GitHub docs, sample personal access token"),
    (
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        "Azurite / Azure Storage Emulator docs, the well-known development account key",
    ),
    ("SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "jwt.io, the sample token's signature"),
    ("123e4567-e89b-12d3-a456-426614174000", "RFC 4122 / Wikipedia, the sample UUID"),
    ("2YotnFZFEjr1zCsicMWpAA", "RFC 6749 section 4.1.4, sample access token"),
    ("tGzv3JOkF0XG5Qx2TlKWIA", "RFC 6749 section 4.1.4, sample refresh token"),
    ("czZCaGRSa3F0MzpnWDFmQmF0M2JW", "RFC 6749 section 2.3.1, sample client credentials"),
    ("SplxlOBeZQQYbYS6WxSbIA", "RFC 6749 section 4.1.1, sample authorization code"),
    (
        "AIzaSyDOCAbC123dEf456GhI789jKl012-MnO",
        "Firebase JS SDK, FirebaseOptions.apiKey doc comment (@firebase/app app-public.d.ts)",
    ),
    ("dGhlIHNhbXBsZSBub25jZQ==", "RFC 6455 section 1.3, sample Sec-WebSocket-Key"),
    ("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "RFC 6455 section 1.3, sample Sec-WebSocket-Accept"),
)
PUBLISHED_VALUES = frozenset(value for value, _source in PUBLISHED)

# How far around a key its config's other fields are looked for (one config object).
_NEAR = 600
# A Firebase web config (firebaseConfig / initializeApp), google-services.json or
# GoogleService-Info.plist: the API key there is an identifier the browser or app sends.
_FIREBASE_RE = re.compile(
    r"authDomain|firebaseapp\.com|messagingSenderId|firebaseio\.com|current_key|"
    r"GOOGLE_APP_ID|mobilesdk_app_id|GCM_SENDER_ID|firebase_?config|initializeApp\("
)
# DocSearch / InstantSearch / algoliasearch clients take the app id, the search-only key
# and an index: the key a docs site ships to every visitor.
_ALGOLIA_APP_RE = re.compile(r"(?i)app_?id\b|applicationId")
_ALGOLIA_SEARCH_RE = re.compile(
    r"(?i)index_?name|docsearch|instantsearch|search_?(?:only|api)?_?key"
)
_ADMIN_RE = re.compile(r"(?i)admin|write")
_HEX32_RE = re.compile(r"^[0-9a-f]{32}$")
_LD_MOBILE_RE = re.compile(r"^mob-[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$")


def published_by_design(text: str, start: int, end: int, rule: str) -> bool:
    """Whether the value at ``text[start:end]`` is a key its vendor publishes on purpose."""
    value = text[start:end]
    if value in PUBLISHED_VALUES or _LD_MOBILE_RE.match(value):
        return True
    lo, hi = max(0, start - _NEAR), min(len(text), end + _NEAR)
    if value.startswith("AIza"):
        return bool(_FIREBASE_RE.search(text, lo, hi))
    if _HEX32_RE.match(value) and rule in ("generic-secret", "generic-password"):
        line_start = text.rfind("\n", 0, start) + 1
        name = text[max(line_start, start - 60) : start]
        if _ADMIN_RE.search(name) or not _ALGOLIA_APP_RE.search(text, lo, hi):
            return False
        return bool(_ALGOLIA_SEARCH_RE.search(text, lo, hi))
    return False
