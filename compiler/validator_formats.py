"""What every validator users run accepts for a ``format``: the portable reading.

``compiler.formats`` reads each format as python-jsonschema's checker does. Ajv (with ajv-formats
3, full mode: JavaScript's validator) is stricter on some: a URI needs more than its scheme
(``a:`` fails), an email a dotted domain of letters, digits and hyphens, a duration whole numbers
and no sign. jsonschema-rs (Rust's) holds an email to RFC 5321's lengths (a local part of at most
64 characters, a domain label of 63) and a hostname to no final dot. Generation keeps to the
intersection, so a document passes whichever validator the user's stack runs
(``benchmarks/validators.py`` checks it). Ajv also checks formats the other two leave open (its
``url`` and ``byte``): the portable reading enforces those too.

Ajv's expressions below are its own (``i`` flag: ASCII letters in either case), compiled by
``compiler.regex`` and intersected with ours; the duration one is Ajv's without its two
lookaheads (``P`` alone, ``T`` without a digit), which our own reading already excludes.
"""

from __future__ import annotations

import functools

from compiler import chardfa, prebuilt
from compiler.formats import KNOWN_FORMATS, Terms, format_terms, terms_match
from compiler.regex import pattern_dfa

# ajv-formats 3.0.1, fullFormats (the one for uri is its URI expression, which ``uri`` also needs
# to contain a "/" or ":", as every absolute URI does)
_AJV = {
    'uri': r'''^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$''',
    'uri-reference': r'''^(?:[a-z][a-z0-9+\-.]*:)?(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'"()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\?(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?$''',
    'email': r'''^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$''',
    'ipv6': r'''^((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:)))$''',
    "duration": r"^P(?:(?:\d+Y)?(?:\d+M)?(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+S)?)?|(?:\d+W)?)$",
    "uri-template": r"""^(?:(?:[^\x00-\x20"'<>%\\^`{|}]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?)*\})*$""",
}
# Ajv's own formats that python-jsonschema and jsonschema-rs leave open (annotations to them and
# to us under "spec"): url (a subset of Ajv's: its hostname branch with an alphabetic top label,
# which needs none of its lookaheads) and byte (base64)
_AJV_ONLY = {
    "url": r"^(?:https?|ftp)://[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)*\.[a-z]{2,}(?:/\S*)?$",
    "byte": r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
}
# jsonschema-rs's lengths, kept simple: the whole domain within one label's 63 characters; its
# URI templates' literals leave out DEL too
_RS = {"email": r"^[^@]{1,64}@[^@]{1,63}$", "uri-template": r"^[^\x7f]*$"}
_IGNORE_CASE = {"uri", "uri-reference", "email", "ipv6", "url", "uri-template"}
_AS = {"idn-email": "email"}  # read as: Ajv has no idn-email; jsonschema-rs's needs an email's shape

# Numbers as Ajv checks them: OpenAPI's integer formats (an integer, int32 within its range), and
# multipleOf as x/step read through its decimal text, which turns exponential from 1e21
INTEGER_FORMATS = {"int32": (-(2**31), 2**31 - 1), "int64": None}
QUOTIENT_LIMIT = 10**21


def portable_terms(name: str) -> Terms | None:
    """``format_terms(name)`` cut down to what Ajv and jsonschema-rs accept too (None for a format
    no validator we follow enforces). Cached and shared, like ``format_terms``: callers must not
    mutate it."""
    if _cut_down(name):
        return _cut(name)
    return format_terms(name)


def _cut_down(name: str) -> bool:
    """Whether the portable reading of ``name`` differs from ``format_terms``'s."""
    return name in _AJV_ONLY or (name in KNOWN_FORMATS and (name in _AJV or name in _AS or name == "hostname"))


@functools.lru_cache(maxsize=None)  # known formats only
def _cut(name: str) -> Terms:
    return prebuilt.load("portable", name) or build_portable(name)


def portable_names() -> list[str]:
    """The formats whose portable reading is its own automaton."""
    return sorted(name for name in KNOWN_FORMATS | _AJV_ONLY.keys() if _cut_down(name))


def build_portable(name: str) -> Terms:
    """``portable_terms(name)`` for a name of ``portable_names``, built from the code."""
    if name in _AJV_ONLY:
        return ((pattern_dfa(_AJV_ONLY[name], ignore_case=name in _IGNORE_CASE, max_states=50_000), 0, None),)
    terms = format_terms(name)
    if name == "hostname":  # (labels, labels and a final dot): jsonschema-rs refuses the dot
        return terms[:1]
    like = _AS.get(name, name)
    ajv = ajv_dfa(name)
    if like in _RS:
        ajv = chardfa.intersect(ajv, pattern_dfa(_RS[like]))
    return tuple((chardfa.intersect(dfa, ajv).trimmed().frozen(), lo, hi) for dfa, lo, hi in terms)


def loose_matches(name: str, text: str) -> bool:
    """Whether a validator besides python-jsonschema takes ``text`` as a ``name`` (what a ``not``
    of the format must keep out, beside python-jsonschema's reading): Ajv's expression where it
    has one. (Ajv's own formats need no look: python-jsonschema takes any string there.)
    jsonschema-rs's readings that differ from python-jsonschema's are narrower (an email's
    lengths, a hostname's final dot)."""
    dfa = ajv_dfa(name)
    return dfa is not None and dfa.matches(text)


@functools.lru_cache(maxsize=None)  # known formats only
def ajv_dfa(name: str):
    """Ajv's own reading of ``name`` as an automaton (None where it has no expression of its own)."""
    like = _AS.get(name, name)
    if like not in _AJV:
        return None
    found = prebuilt.load("ajv", like)
    return found[0][0] if found else build_ajv(like)


def build_ajv(like: str):
    """``ajv_dfa`` for a name of ``_AJV``, built from the code (``compiler.prebuilt`` ships it built)."""
    return pattern_dfa(_AJV[like], ignore_case=like in _IGNORE_CASE, max_states=50_000)


def ajv_names() -> list[str]:
    return sorted(_AJV)


def portable_matches(name: str, text: str) -> bool:
    """Whether ``text`` is in ``portable_terms(name)`` (True for a format no validator enforces)."""
    terms = portable_terms(name)
    return terms is None or terms_match(terms, text)
