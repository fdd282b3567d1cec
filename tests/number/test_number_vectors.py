"""Random vectors for number.c, checked against Python's decimal module: thousands of
number texts and operand pairs (38-digit values, extremes near 1E-130 and 9.99...E+125,
cancellations, negatives, zero spelled many ways) run through
`$QUARRY_BUILD/tests/test_number --vectors FILE`; parse results and messages, text,
size, key round trips and order, compare, add and subtract must match an exact
reference. It does not test JSON handling or storage."""

import os
import random
import subprocess
from decimal import Context, Decimal

import pytest

MSG_NAN = "The parameter cannot be converted to a numeric value"
MSG_DIGITS = "Attempting to store more than 38 significant digits in a Number"
MSG_OVERFLOW = ("Number overflow. Attempting to store a number with magnitude larger "
                "than supported range")
MSG_UNDERFLOW = ("Number underflow. Attempting to store a number with magnitude smaller "
                 "than supported range")

# Exact for everything generated here: operands are within 1E-168..1E+126.
CTX = Context(prec=2000, Emax=10**6, Emin=-10**6)


def binary():
    build = os.environ.get("QUARRY_BUILD", os.path.join(os.getcwd(), "build"))
    path = os.path.join(build, "tests", "test_number")
    if not os.path.exists(path):
        pytest.fail(f"{path} not built (run make with the same BUILD first)")
    return path


def plain(d):
    """DynamoDB's normalised text for a nonzero or zero Decimal."""
    if d == 0:
        return "0"
    return format(d.normalize(CTX), "f")


def check_range(d):
    """The error DynamoDB reports for an exact value, or None."""
    if d == 0:
        exp = d.as_tuple().exponent
        if exp > 125:
            return MSG_OVERFLOW
        if exp < -130:
            return MSG_UNDERFLOW
        return None
    adj = d.adjusted()
    if adj > 125:
        return MSG_OVERFLOW
    if adj < -130:
        return MSG_UNDERFLOW
    return None


def sig_digits(d):
    return len(d.normalize(CTX).as_tuple().digits)


def size(text):
    """The billed size measured against DynamoDB, from normalised text."""
    if text == "0":
        return 1
    neg = text.startswith("-")
    t = text.lstrip("-")
    ip, _, fp = t.partition(".")
    ip = ip.lstrip("0")
    if fp:
        isig, fsig = len(ip), len(fp if ip else fp.lstrip("0"))
    else:
        isig, fsig = len(ip.rstrip("0")), 0
    return 1 + (isig + 1) // 2 + (fsig + 1) // 2 + (1 if neg else 0)


def expect_parse(text):
    d = Decimal(text)
    err = check_range(d)
    if err is None and d != 0 and sig_digits(d) > 38:
        err = MSG_DIGITS
    if err:
        return f"ERR {err}"
    out = plain(d)
    return f"OK {out} {size(out)} key-ok"


def expect_arith(d):
    if d == 0:
        return "OK 0"
    err = check_range(d)
    if err is None and sig_digits(d) > 38:
        err = MSG_OVERFLOW  # DynamoDB's answer for an inexact sum
    return f"ERR {err}" if err else f"OK {plain(d)}"


def spell(rng, digits, point, sign, exp):
    """Text for sign · digits with the point after `point` digits, times 10^exp, in a
    randomly chosen but valid DynamoDB spelling."""
    lead = "0" * rng.choice([0, 0, 0, 1, 3])
    trail = "0" * rng.choice([0, 0, 0, 1, 4])
    body = lead + digits + trail
    point += len(lead)
    if rng.random() < 0.3:
        # Move the point and compensate in the exponent.
        shift = rng.randint(-3, 3)
        point += shift
        exp -= shift
    if point <= 0:
        body = "0" * (1 - point) + body
        point = 1
    if point > len(body):
        body = body + "0" * (point - len(body))
    mant = body[:point]
    frac = body[point:]
    if frac or rng.random() < 0.1:
        mant = mant + "." + frac
        if frac and mant.startswith("0.") and rng.random() < 0.2:
            mant = mant[1:]
    text = sign + mant
    if exp != 0 or rng.random() < 0.1:
        e = rng.choice("eE")
        es = "-" if exp < 0 else rng.choice(["", "+"])
        text += e + es + "0" * rng.choice([0, 0, 1]) + str(abs(exp))
    return text


def random_text(rng):
    kind = rng.random()
    sign = rng.choice(["", "", "-", "+"])
    if kind < 0.05:
        return spell(rng, "0", 1, sign, rng.randint(-140, 140))
    if kind < 0.35:
        n = 38
    elif kind < 0.45:
        n = rng.randint(39, 45)
    else:
        n = rng.randint(1, 37)
    digits = str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(n - 1))
    if rng.random() < 0.2:
        digits = digits.rstrip("0") or "1"
    # Choose the adjusted exponent: mostly ordinary, often near the limits.
    r = rng.random()
    if r < 0.25:
        adj = rng.randint(118, 128)
    elif r < 0.5:
        adj = rng.randint(-133, -122)
    elif r < 0.55:
        adj = rng.choice([125, 126, -130, -131])
    else:
        adj = rng.randint(-20, 40)
    # value = 0.digits × 10^(adj+1); write it as digits[:1].digits[1:] × 10^adj
    return spell(rng, digits, 1, sign, adj)


def valid_text(rng):
    while True:
        t = random_text(rng)
        if expect_parse(t).startswith("OK"):
            return t


def perturb(rng, text):
    """A value close to text's: last digits changed, so sums cancel heavily."""
    d = Decimal(text)
    if d == 0:
        return valid_text(rng)
    t = d.as_tuple()
    ulp = Decimal((0, (1,), t.exponent))
    k = rng.choice([1, 1, 2, 9, 10, 123])
    other = CTX.add(d, CTX.multiply(ulp, k * rng.choice([-1, 1])))
    if rng.random() < 0.3:
        other = -other
    if other == 0 or check_range(other) or sig_digits(other) > 38:
        return text
    return format(other, "E")


def respell(rng, text):
    """The same value as text, spelled another way."""
    d = Decimal(text)
    if d == 0:
        return spell(rng, "0", 1, rng.choice(["", "-", "+"]), rng.randint(-120, 120))
    t = d.normalize(CTX).as_tuple()
    digits = "".join(map(str, t.digits))
    return spell(rng, digits, 1, "-" if t.sign else rng.choice(["", "+"]),
                 t.exponent + len(digits) - 1)


def build_cases(seed=20261129, count=6000):
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        t = random_text(rng)
        cases.append((f"P\t{t}", expect_parse(t)))
    for _ in range(count):
        a = valid_text(rng)
        r = rng.random()
        if r < 0.3:
            b = perturb(rng, a)
        elif r < 0.4:
            b = respell(rng, a)
        elif r < 0.5:
            b = format(-Decimal(a), "E")
        else:
            b = valid_text(rng)
        da, db = Decimal(a), Decimal(b)
        c = (da > db) - (da < db)
        cases.append((f"C\t{a}\t{b}", f"{c} {c} {-c}"))
        cases.append((f"A\t{a}\t{b}", expect_arith(CTX.add(da, db))))
        cases.append((f"S\t{a}\t{b}", expect_arith(CTX.subtract(da, db))))
    # Fixed edge cases.
    top = "9.9999999999999999999999999999999999999E+125"
    for a, b in [(top, top), (top, "-" + top), ("1E-130", "1E-130"), ("1E-130", "-1E-130"),
                 ("-1E-130", "1E-130"), ("9e125", "9e125"), ("1e50", "1"), ("1", "1e-50"),
                 ("99999999999999999999999999999999999999", "1"),
                 ("1.0000000000000000000000000000000000001e-123", "1e-123"),
                 ("0", "0"), ("0", "-5"), ("1e125", "1E-130")]:
        da, db = Decimal(a), Decimal(b)
        c = (da > db) - (da < db)
        cases.append((f"C\t{a}\t{b}", f"{c} {c} {-c}"))
        cases.append((f"A\t{a}\t{b}", expect_arith(CTX.add(da, db))))
        cases.append((f"S\t{a}\t{b}", expect_arith(CTX.subtract(da, db))))
    for bad in ["NaN", "Infinity", "-Infinity", "dog", "1e", "e1", ".", "-", "1..2", "1e1.5",
                "0x1F", "1_0", "++1", "1e9223372036854775808"]:
        cases.append((f"P\t{bad}", f"ERR {MSG_NAN}: {bad}"))
    return cases


def test_number_vectors(tmp_path):
    cases = build_cases()
    path = tmp_path / "vectors.txt"
    path.write_text("".join(line + "\n" for line, _ in cases))
    res = subprocess.run([binary(), "--vectors", str(path)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    got = res.stdout.splitlines()
    assert len(got) == len(cases)
    bad = [f"{line!r}: got {g!r}, want {want!r}"
           for (line, want), g in zip(cases, got) if g != want]
    assert not bad, f"{len(bad)} of {len(cases)} vectors disagree:\n" + "\n".join(bad[:20])


def test_vectors_cover_the_edges():
    """The generator really produces the cases the vectors are meant to cover."""
    cases = build_cases(count=2000)
    want = [w for line, w in cases if line.startswith("P\t")]
    assert sum(w.startswith("OK") for w in want) > 800
    assert any(MSG_OVERFLOW in w for w in want)
    assert any(MSG_UNDERFLOW in w for w in want)
    assert any(MSG_DIGITS in w for w in want)
    arith = [w for line, w in cases if line[0] in "AS"]
    assert any(w == "OK 0" for w in arith)
    assert any(MSG_OVERFLOW in w for w in arith)
    assert any(w.startswith("OK 0.000") for w in arith)
