"""Shape tests and checksums behind the scanner, and how key names are read."""

from __future__ import annotations

import zlib

import pytest

from memoryd.secrets.kinds import classify_key
from memoryd.secrets.values import (
    base62,
    crc32_token_ok,
    is_identifier,
    is_placeholder,
    is_reference,
    is_repetitive,
    looks_like_password,
    looks_like_token,
    shannon,
)
from tests.secrets.fake_tokens import bad_checksum, github, npm, rand


def test_base62_matches_the_github_alphabet() -> None:
    assert base62(0, 6) == "000000"
    assert base62(61, 1) == "z" and base62(62, 2) == "10"
    body = "a" * 30
    token = f"ghp_{body}{base62(zlib.crc32(body.encode()), 6)}"
    assert crc32_token_ok(token)


def test_crc32_checksum_accepts_real_shapes_and_rejects_edits() -> None:
    for token in (github("v1"), github("v2", "gho"), npm("v3")):
        assert crc32_token_ok(token)
        assert not crc32_token_ok(bad_checksum(token))
    assert not crc32_token_ok("ghp_short")


def test_entropy_and_repetition() -> None:
    assert shannon("aaaa") == 0.0
    assert shannon(rand("e", 32)) > 4.0
    for value in ("aaaaaaaa", "abcdefghijkl", "123456789012", "abcabcabcabc"):
        assert is_repetitive(value), value
    assert not is_repetitive(rand("r", 24))


@pytest.mark.parametrize(
    "value",
    ["<YOUR_TOKEN>", "${API_KEY}", "****", "sk-xxxxxxxx", "your_api_key_here", "changeme",
     "AKIAIOSFODNN7EXAMPLE", "{{ vault_pw }}", "[REDACTED]", "postgres", "ENC[AES256,x]"],
)  # fmt: skip
def test_placeholders(value: str) -> None:
    assert is_placeholder(value)


@pytest.mark.parametrize(
    "value",
    ["$DB_PASSWORD", "os.environ['X']", "settings.SECRET_KEY", "getenv(", "/run/secrets/db",
     "~/.ssh/id_ed25519", "arn:aws:kms:eu-west-1:1:key/x", "*default_password", "sha256:abc",
     "AAAAC3NzaC1lZDI1NTE5AAAAIabc"],
)  # fmt: skip
def test_references(value: str) -> None:
    assert is_reference(value)


@pytest.mark.parametrize(
    "value",
    ["SSHPrivateKeyTypes", "old_refresh_token", "pydantic-mypy-metadata", "IAmSensitive",
     "io.modelcontextprotocol/protocolVersion", "Ed25519PrivateKey", "cryptography_has_raw_key"],
)  # fmt: skip
def test_identifiers_are_names(value: str) -> None:
    assert is_identifier(value)


def test_random_tokens_are_rarely_names() -> None:
    names = sum(is_identifier(rand(f"id{i}", 32)) for i in range(500))
    assert names <= 5


def test_password_and_token_shapes() -> None:
    assert looks_like_password("Tr0ub4dor&3") and looks_like_password("Winter2024!")
    for value in ("hunter2", "password", "letters", "pass_fds", "12345", "get_password"):
        assert not looks_like_password(value), value
    assert looks_like_token(rand("t", 32)) and looks_like_token(rand("h", 40, "0123456789abcdef"))
    for value in ("SecretManagerClient", "short1", "x" * 40, "1" * 20):
        assert not looks_like_token(value), value


@pytest.mark.parametrize(
    ("key", "kind"),
    [("DB_PASSWORD", "password"), ("dbPassword", "password"), ("--password", "password"),
     ("redis_pass", "password"), ("client_secret", "secret"), ("AWS_SECRET_ACCESS_KEY", "token"),
     ("OPENAI_API_KEY", "token"), ("accountkey", "token"), ("auth_token", "token"),
     ("Authorization", "token"), ("key", "key"), ("secret_key_base", "token"),
     ("password_hash", None), ("max_tokens", None), ("public_key", None), ("token_url", None),
     ("first_pass", None), ("cache_key", None), ("csrf_token", None), ("secretName", None),
     ("keyboard", None), ("passport", None), ("bypass", None), ("KeyError", None)],
)  # fmt: skip
def test_key_names_are_read_word_by_word(key: str, kind: str | None) -> None:
    assert classify_key(key) == kind
