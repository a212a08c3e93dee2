"""The one tokenizer, used for indexing and for queries (pure functions of text).

SQLite's own tokenizers cannot search Chinese: ``unicode61`` turns a whole run
like ``部署脚本用`` into one token and ``trigram`` needs three characters, so the
two-character words that dominate Chinese (部署, 配置, 依赖) are never found.
So the text is tokenized here, and FTS5 only splits the result on spaces:

* NFKC, then case folding;
* runs of Han, Hiragana, Katakana and Hangul become overlapping bigrams, and a
  one-character run is the character itself;
* other runs of letters, digits and ``_`` stay whole words (``npm`` is not
  found inside ``pnpm``), and a Latin-script word becomes its Snowball English
  stem (``commits``, ``committed`` → ``commit``), so word forms find each other.
  The stemmer is PyStemmer (Snowball's own C code: half a millisecond to import,
  a quarter of a microsecond a word) behind an LRU cache, as a cold index stems
  millions of words drawn from a vocabulary of thousands.

A query drops English stop words (:data:`STOP_WORDS`) unless it has nothing
else: "when is the merge freeze" searches ``merge freez``. The index keeps them.

The index additionally stores the last character of every CJK run of two or
more (:func:`index_tokens`), so a one-character query, searched as an FTS5
prefix, finds a character wherever it stands in a run: as the first half of a
bigram or as the run's last character.
"""

from __future__ import annotations

import functools
import itertools
import operator
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # not typing's: the lean recall imports neither typing nor re
if TYPE_CHECKING:
    import re

# Bump when the output for some text changes: the index is rebuilt from the files.
# 3: a compiled ROOT.md or index.md gives FTS5 no text (memoryd.index.store.compiled).
# 4: a frontmatter holding a date that does not exist (2023-02-30) is read, the date kept as
#    text (memoryd.frontmatter.pyyaml_load): its id, summary and load_when are indexed.
# 5: a fence with spaces or tabs after its '---' opens and closes a frontmatter
#    (memoryd.memory.is_fence): such a file was all body, without its fields.
# 6: UTF-16 text after its byte order mark is read as text (memoryd.memory.utf16_codec),
#    not as UTF-8 with a replacement character for every other byte.
# 7: irregular English forms become their base word's stem (went, gone -> go; :data:`IRREGULAR`).
# 8: a summary that is the whole body over again gives FTS5 no tokens of its own
#    (memoryd.index.store.fts_tokens): such a memory counted every word twice.
TOKENIZER_VERSION = 8
# Function words a query does not search for (unless it is made of nothing else): articles,
# conjunctions, prepositions, auxiliaries, pronouns, question words, and what an apostrophe
# leaves of a contraction or a possessive ("Kate's" -> kate s, "didn't" -> didn t). In a
# question these match short memories everywhere ("What did you get?") and push the one
# holding the answer down (bench/conversations.py; docs/search.md).
_STOP_LIST = """
a an and are as at be but by for from has have how i if in into is it its of on or so than
that the their then there these they this to was we were what when where which who why will
with you your
am been being do does did doing done had having can could would should shall might must
me my mine myself he him his himself she her hers herself our ours ourselves us them theirs
themselves yours yourself itself whom whose s t d ll m re ve don didn doesn isn wasn aren
weren hasn haven hadn wouldn couldn shouldn just really very also
about any some
"""
STOP_WORDS = frozenset(_STOP_LIST.split())
# Chinese particles, question words and pronouns: a query's bigram holding one (什么, 用什,
# 了吗, 我的) is left out, as a stop word is. Chinese has no spaces, so these characters
# glue to the words beside them and every such bigram matches all over a memory store.
ZH_STOP_CHARS = frozenset("了的吗呢吧啊呀哦嘛么什哪谁怎")
# A query of this many Chinese bigrams or more is prose (a sentence, a prompt, a dialog), not
# a few keywords: its characters are searched too, as the character+bigram baseline of
# Chinese retrieval does. Most of a sentence's bigrams straddle two words (我今 天早 上吃),
# so a memory about the same things in other words (争吵 for 吵架) shared none; a few
# keywords keep bigrams alone, so a two-character word never finds its characters apart.
PROSE_BIGRAMS = 8
# Characters too common to search alone (pronouns, 是 在 有 不 这 一 个), besides
# :data:`ZH_STOP_CHARS`: as a single character each matches most memories.
ZH_COMMON_CHARS = ZH_STOP_CHARS | frozenset("我你他她它们是在有不这那一个")
# Irregular English forms and the base word whose stem they take: Snowball's suffix rules
# leave "went" apart from "go" and "bought" from "buy", so a question in one tense missed a
# memory written in another. Only forms that are seldom another word are listed (not
# "left", "rose", "saw" is: as a tool it is rare in memories and as "see" it is common).
_IRREGULAR_LIST = """
go went gone|eat ate eaten|see saw seen|buy bought|bring brought|think thought|teach taught
catch caught|fight fought|seek sought|make made|take took taken|give gave given|get got gotten
come came|become became|begin began begun|know knew known|grow grew grown|throw threw thrown
fly flew flown|draw drew drawn|write wrote written|drive drove driven|ride rode ridden
speak spoke spoken|break broke broken|choose chose chosen|freeze froze frozen|steal stole stolen
wake woke woken|wear wore worn|swear swore sworn|sing sang sung|drink drank drunk|swim swam swum
win won|sell sold|tell told|hold held|keep kept|sleep slept|feel felt|lose lost|mean meant
meet met|pay paid|say said|send sent|spend spent|build built|lend lent|stand stood
understand understood|hear heard|find found|fall fell fallen|hide hid hidden|forget forgot
forgotten|forgive forgave forgiven|lead led|feed fed|flee fled|deal dealt|dig dug|hang hung
sit sat|shake shook shaken|strike struck|stick stuck|sweep swept|weep wept|learn learnt
burn burnt|dream dreamt|run ran|begin began|child children|man men|woman women|foot feet
tooth teeth|mouse mice
"""
IRREGULAR = {
    form: forms[0]
    for forms in (group.split() for group in _IRREGULAR_LIST.replace("\n", " ").split("|"))
    for form in forms[1:]
}
_LATIN_END = "\u024f"  # Basic Latin to Latin Extended-B: the words the English stemmer gets

CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK radicals, Kangxi radicals
    "\u3005-\u3007"  # 々 〆 〇
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # Hangul Jamo extended A
    "\uac00-\ud7ff"  # Hangul syllables, Jamo extended B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003ffff"  # CJK extensions B and later
)
# CJK_RANGES is made of "lo-hi" triples of characters.
_CJK_BOUNDS = tuple(
    (ord(CJK_RANGES[at]), ord(CJK_RANGES[at + 2])) for at in range(0, len(CJK_RANGES), 3)
)
# Each range's first code point and the one after its last, in order (the ranges are sorted
# and apart): a code point is CJK when an odd number of these are at or below it.
_CJK_EDGES = tuple(code for lo, hi in _CJK_BOUNDS for code in (lo, hi + 1))


def is_cjk(char: str) -> bool:
    """Whether a character is Han, Kana, Hangul (a range check: no regex to compile)."""
    code = ord(char)
    return code >= 0x1100 and bisect_right(_CJK_EDGES, code) & 1 == 1


@functools.cache
def _stemmer() -> Callable[[str], str]:
    import Stemmer  # PyStemmer; imported when the first word is stemmed

    snowball: Callable[[str], str] = Stemmer.Stemmer("english").stemWord
    irregular = IRREGULAR.get

    def stem(word: str) -> str:
        return snowball(irregular(word, word))

    return stem


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The Snowball English stem of a Latin-script word; any other word as it is."""
    if word.isascii() or max(word) <= _LATIN_END:
        return _stemmer()(word)
    return word


def normalize(text: str) -> str:
    """NFKC, then case folded: what every token is made of."""
    if text.isascii():
        return text.lower()  # the same, for ASCII, and several times faster
    return unicodedata.normalize("NFKC", text).casefold()


def _tokens(text: str, tails: bool, stemmed: bool = True) -> list[str]:
    """The tokens of ``text``; with ``tails``, also each CJK run's last character.

    A query's (the index's text is cut by :func:`index_text`), so it is cut without a
    regex: importing ``re`` and compiling the CJK classes cost a ``memoryd recall`` a
    sixth of its instructions. An ASCII text is cut as :func:`index_text` cuts it
    (``bytes.translate``: ``\\w`` in ASCII is ``[A-Za-z0-9_]``), any other by
    :func:`split_run`, a Python loop per character.
    """
    word_of = stem if stemmed else str
    folded = normalize(text)
    if folded.isascii():
        return list(map(word_of, folded.encode("ascii").translate(_PIECES).decode("ascii").split()))
    out: list[str] = []
    append, extend = out.append, out.extend
    for cjk, word in split_run(folded):
        if word or len(cjk) == 1:
            append(word_of(word) if word else cjk)
        else:
            extend(map(operator.add, cjk, cjk[1:]))  # overlapping bigrams
            if tails:
                append(cjk[-1])
    return out


def split_run(text: str) -> list[tuple[str, str]]:
    """``text`` cut into its runs of CJK characters and its runs of other word characters
    (``\\w``: alphanumeric or ``_``), in order, as ``(cjk, "")`` and ``("", word)``; any
    other character only parts them (what :func:`_index_re` finds, as pairs)."""
    return [
        ("".join(chars), "") if kind == CJK_CHAR else ("", "".join(chars))
        for kind, chars in itertools.groupby(text, char_kind)
        if kind
    ]


NOT_A_WORD, WORD_CHAR, CJK_CHAR = 0, 1, 2  # what char_kind says of a character


def char_kind(char: str) -> int:
    """:data:`CJK_CHAR` for a CJK character, :data:`WORD_CHAR` for another character of a
    word token (what ``\\w`` matches: alphanumeric or ``_``), else :data:`NOT_A_WORD`."""
    if is_cjk(char):
        return CJK_CHAR
    return WORD_CHAR if char.isalnum() or char == "_" else NOT_A_WORD


RUN_MEMO_SIZE = 1 << 16  # runs remembered by index_text (a few MB at most)
MEMO_RUN = 32  # longer runs are not remembered
_INDEX_RE: list[re.Pattern[str]] = []  # _index_re's pattern, once something indexed CJK


def _index_re() -> re.Pattern[str]:
    """A CJK run or a run of other word characters (no groups: findall gives strings):
    the parts :func:`split_run` cuts, found by a regex, as indexing cuts whole files."""
    if not _INDEX_RE:
        import re

        _INDEX_RE.append(re.compile(f"[{CJK_RANGES}]+|[^\\W{CJK_RANGES}]+"))
    return _INDEX_RE[0]


_HAN_RE: list[re.Pattern[str]] = []  # _han_re's pattern, once something indexed CJK


def _han_re() -> re.Pattern[str]:
    """A piece that is one run of common Han (U+4E00-U+9FFF), maybe ending in 。, the run
    in group 1: what :func:`_index_re` cuts into that run alone (。 is neither a word nor
    a CJK character), found without cutting. A Chinese clause is most often such a piece,
    and none of it is in the memo."""
    if not _HAN_RE:
        import re

        _HAN_RE.append(re.compile("([\u4e00-\u9fff]+)\u3002?"))
    return _HAN_RE[0]


def _cjk_text(run: str) -> str:
    """A CJK run's index text: its overlapping bigrams, then its last character.

    ``ab bc cd d`` is ``a`` + ``b b`` + ``c c`` + ``d d``: each character's doubled form,
    joined, less the first two characters. The doubled forms are made once (a few
    thousand characters recur), where making each bigram took a fifth longer, and
    ``str.translate`` looks them up by code point: iterating the run instead made a new
    one-character string for every CJK character (only Latin-1 ones are shared), a
    quarter of the run's cost.
    """
    return run.translate(_DOUBLED)[2:]


class _Doubled(dict[int, str]):
    """A code point's doubled character, ``c c`` (:func:`_cjk_text`); emptied when full."""

    def __missing__(self, code: int) -> str:
        if len(self) >= RUN_MEMO_SIZE:
            self.clear()
        char = chr(code)
        text = self[code] = f"{char} {char}"
        return text


_DOUBLED = _Doubled()


class _RunText(dict[bytes, str]):
    """Each piece's index text, computed once: natural text repeats a few thousand words
    millions of times, so a cold index looks most of them up instead of stemming them again.

    A piece is what lies between ASCII characters that are not word characters, as UTF-8
    bytes (see :func:`index_text`): an ASCII word, or a run of non-ASCII text (a CJK
    clause, 部署, café, 脚本。). Long CJK runs (most are whole clauses) and long numbers (ids)
    are seldom seen twice and are not kept, so they do not push the words out; short ones
    (``000``, ``utf8``, 部署) recur and are. Emptied when full, so a daemon reading ever-new
    words keeps a bounded memo.
    """

    def __missing__(self, piece: bytes) -> str:
        if piece.isascii():
            # A number (an id's, a count) is its own stem: Snowball's rules take letters.
            text = piece.decode("ascii") if piece.isdigit() else _stemmer()(piece.decode("ascii"))
            keep = len(piece) <= 4 or (len(piece) <= MEMO_RUN and piece.isalpha())
        else:
            run = piece.decode("utf-8", "surrogatepass")
            han = _han_re().fullmatch(run)
            if han:  # a clause of common Han (most text a memo lacks), maybe ending in 。
                text = _cjk_text(han[1])
                keep = len(run) <= 4
                if keep:
                    self._keep(piece, text)
                return text
            parts = _index_re().findall(run)
            keep = len(run) <= 4
            if len(parts) == 1 and len(parts[0]) == len(run):  # a CJK run or a word, alone
                text = _part_text(run)
                keep = keep or (len(run) <= MEMO_RUN and not is_cjk(run[0]))  # café, not a clause
            else:  # parts apart, or none (punctuation only: an empty text, see index_text)
                text = " ".join(map(_part_text, parts))
        if keep:
            self._keep(piece, text)
        return text

    def _keep(self, piece: bytes, text: str) -> None:
        if len(self) >= RUN_MEMO_SIZE:
            self.clear()
        self[piece] = text


def _part_text(part: str) -> str:
    """The index text of one :func:`_index_re` part: a CJK run's bigrams, or a word's stem."""
    if "\u4e00" <= part[0] <= "\u9fff" or is_cjk(part[0]):  # all CJK, or none of it
        return _cjk_text(part)
    return stem(part)


_RUN_TEXT = _RunText()
# A text's pieces are cut out in C: each ASCII byte that is not a word character
# ([A-Za-z0-9_] is all \w holds in ASCII) becomes a space, and bytes.split() cuts the rest.
# The bytes of non-ASCII characters stay: :func:`_index_re` cuts those pieces, one by one.
_PIECES = bytes(c if c >= 0x80 or chr(c).isalnum() or c == 0x5F else 0x20 for c in range(256))


def tokenize(text: str) -> list[str]:
    """The tokens of ``text`` in order (duplicates kept)."""
    return _tokens(text, tails=False)


def index_tokens(text: str) -> list[str]:
    """:func:`tokenize` plus the last character of each CJK run of two or more."""
    return _tokens(text, tails=True)


def index_text(text: str | None) -> str:
    """What FTS5 stores for one column: the index tokens, separated by spaces.

    Its words (``str.split()``) are :func:`index_tokens`, and FTS5 reads nothing else
    from it (it splits on spaces); where a piece of the text has no token (``。`` or ``→``
    between spaces) two spaces stand in a row. The text is cut into pieces by
    ``bytes.translate`` and ``bytes.split`` (C), and each piece is looked up in a memo
    (:class:`_RunText`) by C code (``map``) instead of walked in a Python loop: a third
    of a cold index's CPU before. Only a piece the memo lacks (a CJK clause, a new word)
    costs Python; cutting a Chinese text by one regex instead took a tenth more.
    """
    if not text:
        return ""
    if text.isascii():
        data = text.encode("ascii").lower()
    else:
        data = normalize(text).encode("utf-8", "surrogatepass")
    return " ".join(map(_RUN_TEXT.__getitem__, data.translate(_PIECES).split()))


def is_cjk_char(token: str) -> bool:
    """A one-character CJK token (searched as a prefix)."""
    return len(token) == 1 and is_cjk(token)


def query_words(query: str) -> dict[str, str]:
    """The distinct search terms of a query, in first-seen order, each with the word it
    came from as written (normalized): stop words left out unless there is nothing else."""
    words = _tokens(query, tails=False, stemmed=False)
    content = [w for w in words if not _is_stop(w)] or words
    forms: dict[str, str] = {}
    for word in content:
        forms.setdefault(stem(word) if not is_cjk(word[0]) else word, word)
    bigrams = [w for w in forms if len(w) == 2 and is_cjk(w[0])]
    if len(bigrams) >= PROSE_BIGRAMS:  # prose: its characters too (searched as prefixes)
        for char in itertools.chain.from_iterable(bigrams):
            if char not in ZH_COMMON_CHARS:
                forms.setdefault(char, char)
    return forms


def _is_stop(word: str) -> bool:
    """A stop word, or a CJK token holding a character of :data:`ZH_STOP_CHARS`."""
    if word in STOP_WORDS:
        return True
    return is_cjk(word[0]) and not ZH_STOP_CHARS.isdisjoint(word)


def query_terms(query: str) -> list[str]:
    """The distinct search terms of a query (:func:`query_words`' keys)."""
    return list(query_words(query))


def phrase(term: str) -> str:
    """A term as an FTS5 phrase: quoted, a CJK character as a prefix (``"部"*``).

    Tokens hold only letters, digits and ``_``, so quoting makes every FTS5
    operator in user input (``AND``, ``NEAR``, ``*``, ``(``, ``"``) a plain word.
    """
    return f'"{term}"*' if is_cjk_char(term) else f'"{term}"'


def phrases(terms: Sequence[str]) -> list[str]:
    """The phrases a query's ``terms`` are searched by (:func:`phrase`): in a prose query
    (:data:`PROSE_BIGRAMS` Chinese bigrams or more), each term but the characters twice.

    FTS5's bm25 is a sum over the expression's phrases, so a phrase given twice counts
    twice: a prose query's bigrams and words weigh twice what its characters do. The
    characters are a fallback for a memory telling the same thing in other words; a
    bigram matched is a word matched, and at the weight of one character a memory
    matching a dozen scattered characters (开 心 很 起) beat one holding the query's words
    (MADial zh hit@1 0.344 -> 0.362, hit@10 0.794 -> 0.800). Repeating a phrase changes
    neither which memories match nor, with every phrase doubled, any order: a query
    without characters is given each term once.
    """
    quoted = [phrase(t) for t in terms]
    if sum(1 for t in terms if len(t) == 2 and is_cjk(t[0])) < PROSE_BIGRAMS:
        return quoted
    chars = [q for q, t in zip(quoted, terms, strict=True) if is_cjk_char(t)]
    if not chars:
        return quoted
    return quoted + [q for q, t in zip(quoted, terms, strict=True) if not is_cjk_char(t)]


def fts_expression(terms: Sequence[str], operator: str = "OR") -> str | None:
    """An FTS5 MATCH expression: the terms' :func:`phrases` joined by OR (None when there
    are none)."""
    return f" {operator} ".join(phrases(terms)) or None


_MONTHS = (
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
)  # fmt: skip
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# Date expressions a query may name, most specific first; each group tuple names which
# groups are year, month and day. A span one pattern took is not read again.
_DATE_PATTERNS = (
    (r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})", (1, 2, 3)),  # 2023-05-07, 2023/5/7
    (r"(\d{1,2})\.(\d{1,2})\.(\d{4})", (3, 2, 1)),  # 07.05.2023 (day first)
    (rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})", (3, 2, 1)),
    (rf"{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})", (3, 1, 2)),
    (rf"{_MONTH},?\s+(\d{{4}})", (2, 1, 0)),  # May 2023
    (r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]", (1, 2, 3)),
    (r"(\d{4})\s*年\s*(\d{1,2})\s*月", (1, 2, 0)),
    (r"(\d{4})\s*年", (1, 0, 0)),
    (r"(?<![\d.])((?:19|20)\d\d)(?![\d.])", (1, 0, 0)),  # a year alone
)
_DATE_RE: list[re.Pattern[str]] = []  # compiled on the first query holding a digit
_DATE_GROUPS: list[int] = []  # each pattern's number of groups, in order


def read_query(query: str) -> tuple[dict[str, str], tuple[tuple[int, int], ...]]:
    """A query's search terms (:func:`query_words`) and the date ranges it names
    (:func:`query_dates`). The words of a date expression are not searched in the text
    ("29 Dec 2023": every memory holding a 29 or a 2023 matched) unless nothing else is
    left: the date is matched against ``created`` and ``updated`` instead."""
    dates, rest = _dates(query)
    forms = query_words(rest) if dates else {}
    return forms or query_words(query), dates


def query_dates(query: str) -> tuple[tuple[int, int], ...]:
    """The date ranges a query names, as ``(start, end)`` in ms since the epoch (UTC, end
    excluded): a day (``2023-05-07``, ``7 May 2023``, ``May 7, 2023``, ``07.05.2023``,
    ``2023年5月7日``), a month (``May 2023``, ``2023年5月``) or a year (``2023``,
    ``2023年``). A date without a year is not read: its year is anyone's guess.
    Ranking takes them as a soft signal (:func:`memoryd.index.ranking.dated`)."""
    return _dates(query)[0]


def _dates(query: str) -> tuple[tuple[tuple[int, int], ...], str]:
    """:func:`query_dates`, and the (normalized) query without the dates it read."""
    if not any(c.isdigit() for c in query):
        return (), query
    if not _DATE_RE:
        import re

        _DATE_RE.append(re.compile("|".join(f"(?:{p})" for p, _ in _DATE_PATTERNS)))
        _DATE_GROUPS.extend(re.compile(p).groups for p, _ in _DATE_PATTERNS)
    found: list[tuple[int, int]] = []
    text = normalize(query)
    rest = []
    at_text = 0
    for match in _DATE_RE[0].finditer(text):
        groups = match.groups()
        at = 0
        for (_pattern, order), count in zip(_DATE_PATTERNS, _DATE_GROUPS, strict=True):
            own = groups[at : at + count]
            at += count
            if own[0] is not None:
                span = _date_span(own, order)
                if span is not None:
                    if span not in found:
                        found.append(span)
                    rest.append(text[at_text : match.start()])
                    at_text = match.end()
                break
    rest.append(text[at_text:])
    return tuple(found), " ".join(rest)


def _date_span(
    groups: tuple[str | None, ...], order: tuple[int, int, int]
) -> tuple[int, int] | None:
    """The ``(start, end)`` of one matched date expression, or None if no such date."""
    year_at, month_at, day_at = order
    year = int(groups[year_at - 1] or 0)
    month = 0
    if month_at:
        text = groups[month_at - 1] or ""
        month = _MONTHS.index(text[:3]) + 1 if text[:3] in _MONTHS else int(text)
    day = int(groups[day_at - 1] or 0) if day_at else 0
    if not 1900 <= year <= 2200 or not 0 <= month <= 12 or not 0 <= day <= 31:
        return None
    if not month:
        return _day_ms(year, 1, 1), _day_ms(year + 1, 1, 1)
    if not day:
        return _day_ms(year, month, 1), _day_ms(year + (month == 12), month % 12 + 1, 1)
    if day > _month_days(year, month) or day == 0:
        return None
    start = _day_ms(year, month, day)
    return start, start + 86_400_000


def _month_days(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _day_ms(year: int, month: int, day: int) -> int:
    """Midnight UTC of a date, in ms since the epoch (days from civil: no datetime import,
    which the lean recall would pay for)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return (era * 146097 + doe - 719468) * 86_400_000
