"""`format` → CharDFA: never accept what python-jsonschema's format checker rejects; accept what it accepts."""

import functools
import random
import re
import string
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.formats import CHECKED_BUT_OPEN, format_matches, format_terms

jsonschema = pytest.importorskip("jsonschema")
for _checker_package in ("rfc3339_validator", "fqdn", "rfc3987", "isoduration", "jsonpointer", "uri_template"):
    pytest.importorskip(_checker_package)

CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER
ENFORCED = ["date-time", "date", "time", "duration", "email", "idn-email", "hostname", "ipv4",
            "ipv6", "uuid", "uri", "uri-reference", "iri", "iri-reference", "json-pointer",
            "relative-json-pointer", "uri-template", "regex"]


def conforms(text: str, name: str) -> bool:
    return CHECKER.conforms(text, name)


@functools.lru_cache(maxsize=None)
def _distance_to_accept(name: str) -> list:
    """Per state, the next edge on a shortest path to acceptance (None when accepting)."""
    dfa = format_terms(name)[0][0]
    reverse = [[] for _ in dfa.edges]
    for q, row in enumerate(dfa.edges):
        for edge in row:
            reverse[edge[2]].append((q, edge))
    step = [None] * dfa.size
    seen, todo = set(dfa.accepting), deque(dfa.accepting)
    while todo:
        t = todo.popleft()
        for q, edge in reverse[t]:
            if q not in seen:
                seen.add(q)
                step[q] = edge
                todo.append(q)
    return step


def sample(name: str, rnd: random.Random, max_len: int = 40) -> str:
    """A random string the format's DFA accepts: random edges, then a shortest way to acceptance."""
    dfa, step = format_terms(name)[0][0], _distance_to_accept(name)

    def scalar(lo, hi):
        return chr(rnd.choice([lo, hi, rnd.randint(lo, hi), min(hi, lo + rnd.randint(0, 3))]))

    q, out = dfa.start, []
    while len(out) < max_len and dfa.edges[q]:
        if q in dfa.accepting and rnd.random() < 0.15:
            return "".join(out)
        lo, hi, q = rnd.choice(dfa.edges[q])
        out.append(scalar(lo, hi))
    while q not in dfa.accepting:
        lo, hi, q = step[q]
        out.append(scalar(lo, hi))
    return "".join(out)


@pytest.mark.parametrize("name", ENFORCED)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_every_accepted_string_passes_the_checker(name, seed):
    """Random strings drawn from the format's automaton all pass jsonschema's FormatChecker."""
    rnd = random.Random(seed)
    for _ in range(10):
        text = sample(name, rnd)
        assert conforms(text, name), (name, text)


VALID = {
    "date-time": ["2024-02-29T12:00:00Z", "2000-02-29t23:59:59.123456+05:30", "1985-04-12T23:20:50.52z",
                  "0001-01-01T00:00:00-23:59", "9999-12-31T23:59:59Z"],
    "date": ["2024-02-29", "2000-02-29", "2023-02-28", "1600-02-29", "2023-12-31", "0001-01-01"],
    "time": ["12:00:00Z", "23:59:59.5-01:00", "00:00:00+00:00", "08:30:06.283185z"],
    "duration": ["P1D", "PT1H", "P1Y2M3DT4H5M6S", "P1W", "P0D", "PT0.5S", "P3Y6M4DT12H30M5S", "-P1M"],
    "email": ["a@b.c", "joe.bloggs@example.com", "@", "not really@"],
    "hostname": ["example.com", "a", "a.", "xn--bcher-kva.example", "1.2.3.4", "a-b.c-d",
                 "a" * 63 + ".com", ".".join(["a" * 63] * 3 + ["a" * 61]),
                 ".".join(["a" * 63] * 3 + ["a" * 61]) + "."],
    "ipv4": ["0.0.0.0", "255.255.255.255", "192.168.1.1", "10.0.0.254"],
    "ipv6": ["::", "::1", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "fe80::1",
             "::ffff:192.168.1.1", "1:2:3:4:5:6:1.2.3.4", "2001:DB8::8:800:200C:417A"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000"],
    "uri": ["http://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:a@b.c", "a:",
            "http://[::1]:8080/", "ftp://user:pw@host:21/path%20x", "file:///etc/passwd"],
    "uri-reference": ["", "/a/b", "a/b", "#frag", "//host/p", "?q", "http://example.com", "../x"],
    "iri": ["http://例え.jp/パス?ク#エ", "urn:ä"],
    "iri-reference": ["パス", "/ä/ö", ""],
    "json-pointer": ["", "/", "/a~0b/c~1d", "/foo/0", "/ünï/"],
    "relative-json-pointer": ["0", "1/a", "10#", "2/foo/0", "0#"],
    "uri-template": ["", "http://example.com/{id}", "/users/{user_id}/repos{?page,per_page}", "{+path}/x{#frag}",
                     "{.ext*}{/seg:3}{;p}{&q}", "a%41{a%41b}", "a b", "é{x_1}"],
    "regex": ["", "^example$", "^\\s*(it|describe)\\(\\s*['\"]([^'\"]+)['\"]", "^[a-z0-9_\\-]+$",
              "(?:a|b)*?c{2,10}\\.\\d{3}", "^((a|b)c)+$", "[^\\]\\[]|\\bword\\B", "é+|[0-9A-F]{1,2}"],
}
INVALID = {
    "date-time": ["2023-02-29T12:00:00Z", "1900-02-29T00:00:00Z", "2024-01-01T00:00:60Z",
                  "2024-01-01 00:00:00Z", "2024-01-01T24:00:00Z", "0000-01-01T00:00:00Z"],
    "date": ["2023-02-29", "1900-02-29", "2100-02-29", "2024-04-31", "2024-13-01", "0000-01-01", "24-01-01"],
    "time": ["12:00:00", "24:00:00Z", "12:60:00Z", "12:00:60Z", "12:00:00+24:00"],
    "duration": ["P", "PT", "P1DT", "P1W1D", "1D", "P1M1Y", "P1H"],
    "email": ["no at sign", ""],
    "hostname": ["", "-a", "a-", "a..b", ".a", "a" * 64, "a_b", ".".join(["a" * 63] * 3 + ["a" * 62])],
    "ipv4": ["01.2.3.4", "256.1.1.1", "1.2.3", "1.2.3.4.5", " 1.2.3.4"],
    "ipv6": ["1::2:3:4:5:6:7:8", ":::", "1:2:3:4:5:6:7", "fe80::1%eth0", "::01.2.3.4", "12345::"],
    "uuid": ["123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}"],
    "uri": ["/relative", "a b:c", "http://exa mple.com", "1a:b", ""],
    "uri-reference": ["a b", "%zz", "http://[::1"],
    "json-pointer": ["a", "/a~2", "/~"],
    "relative-json-pointer": ["", "01", "100", "1a", "#", "-1"],
    "uri-template": ["{", "}", "{}", "{a", "a}", "{=a}", "{a:0}", "{a:1000}", "{%41}", "{a b}"],
    "regex": ["(", "a)", "[", "[]", "a**", "^*", "a{2,1}", "{", "a{,3}", "\\", "(?<n>a)", "a*+", "[z-a]", "\\-"],
}


@pytest.mark.parametrize("name, text", [(n, t) for n, ts in VALID.items() for t in ts])
def test_known_valid_values_are_accepted(name, text):
    """Hand-picked valid values (leap days, boundary lengths, compressed addresses) are accepted."""
    assert conforms(text, name), "the example itself is wrong"
    assert format_matches(name, text)


@pytest.mark.parametrize("name, text", [(n, t) for n, ts in INVALID.items() for t in ts])
def test_known_invalid_values_are_rejected(name, text):
    """Hand-picked invalid values (non-leap Feb 29, leading zeros, bad escapes, overlong labels) are rejected."""
    assert format_matches(name, text) is False


@pytest.mark.parametrize("day, leap", [("2024-02-29", True), ("2023-02-29", False),
                                       ("1900-02-29", False), ("2000-02-29", True),
                                       ("0400-02-29", True), ("0004-02-29", True), ("2100-02-29", False)])
def test_february_29_follows_the_gregorian_leap_rule(day, leap):
    """Feb 29 exists in years divisible by 4, except centuries not divisible by 400."""
    assert format_matches("date", day) is leap
    assert format_matches("date-time", day + "T00:00:00Z") is leap


def _mutate(text: str, rnd: random.Random, alphabet: str) -> str:
    chars = list(text)
    for _ in range(rnd.randint(1, 3)):
        i = rnd.randint(0, len(chars))
        op = rnd.choice("idr")
        if op == "i":
            chars.insert(i, rnd.choice(alphabet))
        elif chars and i < len(chars):
            if op == "d":
                del chars[i]
            else:
                chars[i] = rnd.choice(alphabet)
    return "".join(chars)


MUTATION_ALPHABET = string.ascii_letters + string.digits + ":-.+/@#?%[]~_ TtZz,é\n"


@pytest.mark.parametrize("name", sorted(VALID))
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_mutated_valid_values_are_accepted_only_if_the_checker_agrees(name, seed):
    """Random edits of valid values: whenever the DFA still accepts, the checker accepts too."""
    rnd = random.Random(seed)
    for _ in range(10):
        text = _mutate(rnd.choice(VALID[name]), rnd, MUTATION_ALPHABET)
        if format_matches(name, text):
            assert conforms(text, name), (name, text)


def _digits(rnd, n):
    return "".join(rnd.choice(string.digits) for _ in range(n))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_date_time_shapes_agree_exactly_with_the_checker(seed):
    """On strings shaped like RFC 3339 timestamps with random digits, DFA and checker agree exactly."""
    rnd = random.Random(seed)
    year = rnd.choice([_digits(rnd, 4), rnd.choice(["2000", "1900", "2024", "2023", "0000", "0400"])])
    date = f"{year}-{rnd.choice(['02', _digits(rnd, 2)])}-{rnd.choice(['29', '28', '30', '31', _digits(rnd, 2)])}"
    frac = rnd.choice(["", "." + _digits(rnd, rnd.randint(1, 4))])
    zone = rnd.choice(["Z", "z", f"{rnd.choice('+-')}{_digits(rnd, 2)}:{_digits(rnd, 2)}"])
    time = f"{_digits(rnd, 2)}:{_digits(rnd, 2)}:{_digits(rnd, 2)}{frac}{zone}"
    assert format_matches("date", date) == conforms(date, "date")
    assert format_matches("time", time) == conforms(time, "time")
    stamp = date + rnd.choice("Tt") + time
    assert format_matches("date-time", stamp) == conforms(stamp, "date-time")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([":", "::", ".", "1.2.3.4", "255.0.0.01", "0", "ffff", "FfFf0", "a", "12",
                                 "0db8", "1:2", "1:2:3:4", "%1"]), max_size=12))
def test_ipv6_agrees_exactly_with_python_ipaddress(parts):
    """Token soups of hextets, colons and dotted quads: DFA and `ipaddress` agree exactly."""
    text = "".join(parts)
    assert format_matches("ipv6", text) == conforms(text, "ipv6"), text


@given(st.ip_addresses(v=6))
@settings(max_examples=150, deadline=None)
def test_ipv6_addresses_are_accepted_in_every_spelling(address):
    """Compressed, exploded and upper-case spellings of real IPv6 addresses are accepted."""
    for text in (str(address), address.exploded, address.exploded.upper()):
        assert format_matches("ipv6", text)


@given(st.lists(st.sampled_from(["0", "1", "9", "25", "255", "256", "01", "199", "249", "1000", "."]), max_size=9))
@settings(max_examples=200, deadline=None)
def test_ipv4_agrees_exactly_with_python_ipaddress(parts):
    """Dotted strings of numbers (leading zeros, >255, wrong counts): DFA and `ipaddress` agree exactly."""
    text = "".join(parts)
    assert format_matches("ipv4", text) == conforms(text, "ipv4"), text


@given(st.lists(st.sampled_from(["a", "Z", "0", "-", ".", "ab", "a" * 20, "b" * 30, "c" * 63]), max_size=14))
@settings(max_examples=300, deadline=None)
def test_hostname_agrees_exactly_with_fqdn(parts):
    """Strings of letters, digits, hyphens and dots up to ~400 characters: DFA and `fqdn` agree exactly."""
    text = "".join(parts)
    assert format_matches("hostname", text) == conforms(text, "hostname"), text


@given(st.text(alphabet="ab1F:/?#[]@%.-_~!$&'()*+,;=v ä", max_size=16))
@settings(max_examples=300, deadline=None)
def test_uri_and_uri_reference_agree_exactly_with_rfc3987(text):
    """URI-ish strings (no newline): DFA and rfc3987 agree exactly, for both rules and their IRI versions."""
    for name in ("uri", "uri-reference", "iri", "iri-reference"):
        assert format_matches(name, text) == conforms(text, name), (name, text)


@given(st.text(alphabet="0123/#~a", max_size=8))
@settings(max_examples=200, deadline=None)
def test_json_pointers_agree_exactly_with_the_checker(text):
    """Strings over digits, slashes, tildes and hashes: both pointer formats agree with jsonschema exactly."""
    for name in ("json-pointer", "relative-json-pointer"):
        assert format_matches(name, text) == conforms(text, name), (name, text)


@given(st.text(alphabet="0123456789abcdefABCDEF-g", max_size=40), st.uuids())
@settings(max_examples=200, deadline=None)
def test_uuid_agrees_exactly_with_the_checker(text, uuid):
    """Hex-and-hyphen strings agree with the checker exactly, and every real UUID is accepted in either case."""
    assert format_matches("uuid", text) == conforms(text, "uuid")
    assert format_matches("uuid", str(uuid)) and format_matches("uuid", str(uuid).upper())


@given(st.text(max_size=12))
@settings(max_examples=200, deadline=None)
def test_email_is_any_string_with_an_at_sign(text):
    """jsonschema's email check is "contains @", and so is ours, for any text."""
    assert format_matches("email", text) == ("@" in text) == conforms(text, "email")


@given(st.dates(), st.times(), st.sampled_from(["Z", "+05:30", "-00:00"]))
@settings(max_examples=150, deadline=None)
def test_isoformat_dates_and_times_are_accepted(day, moment, zone):
    """Dates and times printed by Python's isoformat (with a zone) are accepted."""
    assert format_matches("date", day.isoformat())
    assert format_matches("time", moment.isoformat() + zone)
    assert format_matches("date-time", f"{day.isoformat()}T{moment.isoformat()}{zone}")


@pytest.mark.parametrize("name", ["jsonschema", "url", "path", "color", "idn-hostname"])
def test_unenforced_formats_return_none(name):
    """Unknown formats (and checked ones we leave open) give None: the caller treats them as annotations."""
    assert format_terms(name) is None
    assert name not in ENFORCED
    assert "idn-hostname" in CHECKED_BUT_OPEN


def test_format_automata_are_cached():
    """A format is compiled once and shared."""
    assert format_terms("date-time") is format_terms("date-time")


def test_regexes_drawn_compile_in_every_validator():
    """Strings drawn from the ``regex`` format's automaton compile in Python's re (no warning),
    in jsonschema-rs, and in JavaScript with the u flag (Ajv's reading) where Node.js is installed."""
    import json
    import shutil
    import subprocess
    import warnings

    rs = pytest.importorskip("jsonschema_rs").validator_for({"format": "regex"}, validate_formats=True)
    rnd = random.Random(7)
    texts = [sample("regex", rnd, max_len=rnd.choice([8, 30, 120])) for _ in range(1500)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for text in texts:
            re.compile(text)
            assert rs.is_valid(text), text
    if shutil.which("node"):
        script = ("const a=JSON.parse(require('fs').readFileSync(0,'utf8'));const bad=[];"
                  "for(const s of a){try{new RegExp(s,'u')}catch(e){bad.push(s)}}console.log(JSON.stringify(bad))")
        done = subprocess.run(["node", "-e", script], input=json.dumps(texts), capture_output=True, text=True, check=True)
        assert json.loads(done.stdout) == []

