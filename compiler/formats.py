"""JSON Schema ``format`` → ``CharDFA``, exact against python-jsonschema's FormatChecker.

python-jsonschema (with its ``format`` extras: rfc3339-validator, fqdn, rfc3987, isoduration,
jsonpointer) is our oracle, so soundness comes first: every string accepted here passes its
checker. Where the checker is looser than the standard we follow the checker (``email`` only needs
an ``@``); where it is stricter we follow it too (seconds stop at 59: rfc3339-validator has no leap
second; ``relative-json-pointer`` rejects a digit after a ``0`` anywhere, as its loop does).

Most formats are ECMA regexes compiled by ``compiler.regex``; the Gregorian leap rule is spelled
out in the year digits. ``hostname`` is built by hand: its labels as an automaton, its 253-character
total as a length range, which the lowering counts (``compiler.counting``).
"""

from __future__ import annotations

import functools
import re

from compiler import prebuilt
from compiler.chardfa import CharDFA
from compiler.regex import pattern_dfa

_D = "[0-9]"
_YEAR = f"(?:{_D}{{3}}[1-9]|{_D}{{2}}[1-9]0|{_D}[1-9]00|[1-9]000)"  # 0001-9999: no year 0
_LEAP_YEAR = (f"(?:{_D}{{2}}(?:0[48]|[2468][048]|[13579][26])"  # divisible by 4, not by 100
              "|(?:0[48]|[2468][048]|[13579][26])00)")  # or by 400 (0400 ... 9600; not 0000)
_DATE = (f"(?:{_YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]{_D}|3[01])"
         f"|(?:0[469]|11)-(?:0[1-9]|[12]{_D}|30)"
         f"|02-(?:0[1-9]|1{_D}|2[0-8]))"
         f"|{_LEAP_YEAR}-02-29)")
_TIME = (f"(?:[01]{_D}|2[0-3]):[0-5]{_D}:[0-5]{_D}(?:\\.{_D}+)?"
         f"(?:[Zz]|[+-](?:[01]{_D}|2[0-3]):[0-5]{_D})")

_NUM = f"{_D}+(?:[.,]{_D}+)?"  # isoduration reads each value with Decimal ("," becomes ".")
_DURATION_DATE = f"(?:{_NUM}Y(?:{_NUM}M)?(?:{_NUM}D)?|{_NUM}M(?:{_NUM}D)?|{_NUM}D)"
_DURATION_TIME = f"T(?:{_NUM}H(?:{_NUM}M)?(?:{_NUM}S)?|{_NUM}M(?:{_NUM}S)?|{_NUM}S)"
_DURATION = f"[+-]?P(?:{_DURATION_DATE}(?:{_DURATION_TIME})?|{_DURATION_TIME}|{_NUM}W)"

_OCTET = f"(?:25[0-5]|2[0-4]{_D}|1{_D}{{2}}|[1-9]{_D}|{_D})"  # ipaddress: no leading zeros
_IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"


def _ipv6() -> str:
    """Every hextet layout ``ipaddress.IPv6Address`` accepts: 8 groups, or ``::`` standing for at
    least one group (left + right <= 7), an IPv4 tail counting as two groups. No zone ids."""
    def groups(k: int) -> str:
        return ":".join(["[0-9A-Fa-f]{1,4}"] * k)
    alts = [groups(8), groups(6) + ":" + _IPV4]
    for left in range(8):
        for right in range(8 - left):
            alts.append(f"{groups(left)}::{groups(right)}")
            if right >= 2:
                alts.append(f"{groups(left)}::{groups(right - 2)}{':' if right > 2 else ''}{_IPV4}")
    return "(?:" + "|".join(alts) + ")"


# RFC 3986 / 3987 appendix-A grammar, transcribed rule by rule from the rfc3987 package that
# jsonschema calls (including its IPv6 rule and leading-zero-tolerant dec-octet). `<name>` is
# replaced by the rule's regex; `iri` swaps in the IRI character sets.
_RFC3986 = (
    ("hexdig", "[0-9A-Fa-f]"),
    ("sub_delims", "[!$&'()*+,;=]"),
    ("pct_encoded", "%<hexdig><hexdig>"),
    ("pchar", "(?:<unreserved>|<pct_encoded>|<sub_delims>|[:@])"),
    ("h16", "<hexdig>{1,4}"),
    ("dec_octet", "(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"),
    ("IPv4address", "(?:<dec_octet>\\.){3}<dec_octet>"),
    ("ls32", "(?:<h16>:<h16>|<IPv4address>)"),
    ("IPv6address", "(?:(?:<h16>:){6}<ls32>|::(?:<h16>:){5}<ls32>|(?:<h16>)?::(?:<h16>:){4}<ls32>"
                    "|(?:(?:<h16>:)?<h16>)?::(?:<h16>:){3}<ls32>"
                    "|(?:(?:<h16>:){0,2}<h16>)?::(?:<h16>:){2}<ls32>"
                    "|(?:(?:<h16>:){0,3}<h16>)?::<h16>:<ls32>|(?:(?:<h16>:){0,4}<h16>)?::<ls32>"
                    "|(?:(?:<h16>:){0,5}<h16>)?::<h16>|(?:(?:<h16>:){0,6}<h16>)?::)"),
    ("IPvFuture", "v<hexdig>+\\.(?:[a-zA-Z0-9_.~-]|<sub_delims>|:)+"),
    ("IP_literal", "\\[(?:<IPv6address>|<IPvFuture>)\\]"),
    ("scheme", "[a-zA-Z][a-zA-Z0-9+.-]*"),
    ("userinfo", "(?:<unreserved>|<pct_encoded>|<sub_delims>|:)*"),
    ("reg_name", "(?:<unreserved>|<pct_encoded>|<sub_delims>)*"),
    ("host", "(?:<IP_literal>|<IPv4address>|<reg_name>)"),
    ("authority", "(?:<userinfo>@)?<host>(?::[0-9]*)?"),
    ("segment", "<pchar>*"),
    ("segment_nz", "<pchar>+"),
    ("segment_nz_nc", "(?:<unreserved>|<pct_encoded>|<sub_delims>|@)+"),
    ("path_abempty", "(?:/<segment>)*"),
    ("path_absolute", "/(?:<segment_nz>(?:/<segment>)*)?"),
    ("path_noscheme", "<segment_nz_nc>(?:/<segment>)*"),
    ("path_rootless", "<segment_nz>(?:/<segment>)*"),
    ("query", "(?:<pchar>|<private>|[/?])*"),
    ("fragment", "(?:<pchar>|[/?])*"),
    ("hier_part", "(?://<authority><path_abempty>|<path_absolute>|<path_rootless>|)"),
    ("relative_part", "(?://<authority><path_abempty>|<path_absolute>|<path_noscheme>|)"),
    ("absolute", "<scheme>:<hier_part>(?:\\?<query>)?(?:#<fragment>)?"),
    ("relative", "<relative_part>(?:\\?<query>)?(?:#<fragment>)?"),
    ("reference", "(?:<absolute>|<relative>)"),
)
_UCSCHAR = ("\\u00A0-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFEF" + "".join(
    f"\\u{{{p:X}0000}}-\\u{{{p:X}FFFD}}" for p in range(1, 14)) + "\\u{E1000}-\\u{EFFFD}")
_IPRIVATE = "[\\uE000-\\uF8FF\\u{F0000}-\\u{FFFFD}\\u{100000}-\\u{10FFFD}]"


def _rfc3986(rule: str, iri: bool) -> str:
    rules = {"unreserved": f"[a-zA-Z0-9._~{_UCSCHAR if iri else ''}-]",
             "private": _IPRIVATE if iri else "[]"}
    for name, body in _RFC3986:
        rules[name] = re.sub(r"<(\w+)>", lambda m: rules[m.group(1)], body)
    return rules[rule]


_JSON_POINTER = "(?:/(?:[^~/]|~[01])*)*"


def _regex_syntax(depth: int) -> str:
    """Regexes Python's ``re``, Ajv (``new RegExp(s, "u")``) and jsonschema-rs all compile, groups
    nested ``depth`` deep (a sound, regular subset): literals but ``\\^$.|?*+()[]{}`` and controls,
    escapes of the syntax characters and of the classes ``\\d\\w\\s``, classes of literals,
    escapes and ascending digit or letter ranges, one quantifier per atom (counts of up to two
    digits, ascending, maybe lazy), anchors and word boundaries unquantified, ``(...)`` and
    ``(?:...)``. Left out: what one of them refuses (a lone ``{`` or ``]``, ``\\-`` outside a class,
    ``a{,3}``, ``[]``, possessive ``*+``) and what Python only warns of (``[[``, ``&&``, ``--``)."""
    lit = """[A-Za-z0-9 !"#%&',\\-/:;<=>@_`~\\u00A0-\\uD7FF\\uE000-\\u{10FFFF}]"""
    esc = """\\\\[dDwWsSntr^$\\\\.*+?()\\[\\]{}|/]"""
    assertion = """(?:\\^|\\$|\\\\[bB])"""
    class_char = """[A-Za-z0-9 !"#%',/:;<=>@_`.$*+?(){}\\u00A0-\\uD7FF\\uE000-\\u{10FFFF}]"""
    class_esc = """\\\\[dDwWsSntr\\\\\\]\\[\\-^.]"""
    ranges = "|".join(f"{c}-[{c}-{hi}]" for lo, hi in (("0", "9"), ("a", "z"), ("A", "Z"))
                      for c in map(chr, range(ord(lo), ord(hi) + 1)))
    klass = f"\\[\\^?(?:{class_char}|{class_esc}|{ranges})+\\]"
    pairs = "|".join(f"{n},[{max(n, 1)}-9]" for n in range(10))
    quant = f"(?:[*+?]|\\{{(?:[0-9]{{1,2}},?|[0-9],[1-9][0-9]|{pairs})\\}})\\??"
    alt = ""
    for level in range(depth + 1):
        group = f"|\\((?:\\?:)?{alt}\\)" if level else ""
        atom = f"(?:{lit}|{esc}|\\.|{klass}{group})"
        seq = f"(?:{assertion}|{atom}(?:{quant})?)*"
        alt = f"{seq}(?:\\|{seq})*"
    return alt
# RFC 6570 as the uri-template package reads it (a sound subset): literals hold no brace; an
# expression is an operator of levels 2 and 3, then variables of letters, digits, "_" and
# %-escapes (never first: its Variable refuses that), each with a prefix length of 1 to 999 or "*"
_VARSPEC = "[A-Za-z0-9_](?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})*(?::[1-9][0-9]{0,2}|\\*)?"
_URI_TEMPLATE = f"(?:[^{{}}]|\\{{[+#./;?&]?{_VARSPEC}(?:,{_VARSPEC})*\\}})*"
_HEX = "[0-9a-fA-F]"

_PATTERNS = {
    "date-time": lambda: f"{_DATE}[Tt]{_TIME}",
    "date": lambda: _DATE,
    "time": lambda: _TIME,
    "duration": lambda: _DURATION,
    "ipv4": lambda: _IPV4,
    "ipv6": _ipv6,
    "uuid": lambda: f"{_HEX}{{8}}(?:-{_HEX}{{4}}){{3}}-{_HEX}{{12}}",
    "uri": lambda: _rfc3986("absolute", iri=False),
    "uri-reference": lambda: _rfc3986("reference", iri=False),
    "iri": lambda: _rfc3986("absolute", iri=True),
    "iri-reference": lambda: _rfc3986("reference", iri=True),
    "json-pointer": lambda: _JSON_POINTER,
    "relative-json-pointer": lambda: f"(?:0|[1-9]+0?)(?:#|{_JSON_POINTER})",
    "uri-template": lambda: _URI_TEMPLATE,
    "regex": lambda: _regex_syntax(3),
}

# Formats python-jsonschema checks that we leave open (format_terms returns None): callers that
# want to refuse rather than warn can test membership here.
CHECKED_BUT_OPEN = frozenset({"idn-hostname"})
# Formats whose automaton is a sound subset of the checker's reading: enough to generate from,
# not to take the complement of.
SUBSET_FORMATS = frozenset({"uri-template", "regex"})
UNCOMPLEMENTED = CHECKED_BUT_OPEN | SUBSET_FORMATS  # formats whose 'not' is refused (``ScalarLowering.format_outside``)


HOSTNAME_MAX = 253  # characters, besides an optional final dot
LABEL_MAX = 63


def _labels(final_dot: bool) -> CharDFA:
    """Dot-separated labels of 1-63 ASCII letters, digits and inner hyphens, as ``fqdn.FQDN(s,
    min_labels=1).is_valid`` reads them, with a final dot when ``final_dot`` (and none otherwise).

    The 253-character bound is not in here: crossed with the label bound it was ~24,000 states;
    it is a count (``format_terms``), and this automaton is 128 states.
    """
    letters = ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A))
    dfa = CharDFA()
    start, dot = dfa.add_state(), dfa.add_state(final_dot)
    label = {(n, hyphen): dfa.add_state(not hyphen and not final_dot)
             for n in range(1, LABEL_MAX + 1) for hyphen in (False, True) if not (hyphen and n in (1, LABEL_MAX))}
    for q in (start, dot):
        dfa.edges[q] += [(lo, hi, label[1, False]) for lo, hi in letters]
    for (n, hyphen), q in label.items():
        row = dfa.edges[q]
        if n < LABEL_MAX - 1:  # room for the letter a hyphen needs after it
            row.append((0x2D, 0x2D, label[n + 1, True]))
        if not hyphen:
            row.append((0x2E, 0x2E, dot))
        if n < LABEL_MAX:
            row.extend((lo, hi, label[n + 1, False]) for lo, hi in letters)
        row.sort()
    return dfa


Terms = tuple[tuple[CharDFA, int, "int | None"], ...]

KNOWN_FORMATS = frozenset({*_PATTERNS, "hostname", "email", "idn-email"})
"""The formats enforced exactly (``format_terms``); any other format is an annotation."""


def format_terms(name: str) -> Terms | None:
    """The strings python-jsonschema's FormatChecker accepts for `name`, as a union of scalar
    automata each within a length range ``(dfa, min, max or None)``; None for a format we do not
    enforce (unknown, or listed in CHECKED_BUT_OPEN), which the caller treats as an annotation.

    The result is cached and shared (with the byte templates made from it): callers must not mutate it.
    """
    return _terms(name) if name in KNOWN_FORMATS else None


@functools.lru_cache(maxsize=None)  # a known format's only: names from schemas cannot grow it
def _terms(name: str) -> Terms:
    return prebuilt.load("spec", name) or build_terms(name)


def build_terms(name: str) -> Terms:
    """``format_terms(name)`` built from the code (``compiler.prebuilt`` ships them built)."""
    if name == "hostname":
        return (_labels(False).frozen(), 0, HOSTNAME_MAX), (_labels(True).frozen(), 0, HOSTNAME_MAX + 1)
    if name in ("email", "idn-email"):
        return ((pattern_dfa("@"), 0, None),)  # jsonschema's whole check: the string contains an "@"
    return ((pattern_dfa(f"^(?:{_PATTERNS[name]()})$", max_states=50_000), 0, None),)


def format_matches(name: str, text: str) -> bool:
    """Whether ``text`` is in ``format_terms(name)`` (which must not be None)."""
    return terms_match(format_terms(name), text)


def terms_match(terms: Terms, text: str) -> bool:
    """Whether ``text`` is in one of the length-ranged automata ``terms``."""
    return any(lo <= len(text) and (hi is None or len(text) <= hi) and dfa.matches(text) for dfa, lo, hi in terms)
