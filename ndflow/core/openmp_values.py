"""OpenMP's environment values as libgomp reads them (OMP_NUM_THREADS, OMP_WAIT_POLICY,
GOMP_SPINCOUNT): pure parsers, each given the variable's text; core/config.py reads the
environment and calls them. libgomp itself ignores a malformed value with a one-line
complaint and keeps its default; ndflow raises a ValueError naming the variable instead."""

from __future__ import annotations

import re

_POSITIVE_RE = re.compile(r"\s*[+]?[0-9]+\s*\Z")
_SPINCOUNT_RE = re.compile(r"\s*([0-9]+)\s*([kKmMgGtT])?\s*\Z")
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


def _invalid(name: str, value: str, expected: str) -> ValueError:
    return ValueError(f"Invalid value for environment variable ${{{name}}}: {value!r}; "
                      f"expected {expected}")


def num_threads(name: str, value: str | None) -> int:
    """The first nesting level of a comma list of positive integers (0: unset or empty)."""
    if value is None or not value.strip():
        return 0
    levels = value.split(",")
    if not all(_POSITIVE_RE.match(v) and int(v) > 0 for v in levels):
        raise _invalid(name, value, "a positive integer or a comma-separated list of them")
    return int(levels[0])


def wait_policy(name: str, value: str | None) -> str:
    """ACTIVE or PASSIVE, any case ('' when unset)."""
    value = (value or "").strip()
    if value and value.upper() not in ("ACTIVE", "PASSIVE"):
        raise _invalid(name, value, "ACTIVE or PASSIVE")
    return value.upper()


def spin_count(name: str, value: str | None) -> int | None:
    """Spins with an optional k/M/G/T suffix; -1 for 'infinite' (None when unset)."""
    if value is None or not value.strip():
        return None
    if value.strip().lower() in ("infinite", "infinity"):
        return -1
    m = _SPINCOUNT_RE.match(value)
    if not m:
        raise _invalid(name, value, "a non-negative count with an optional k, M, G or T "
                       "suffix, or 'infinite'")
    return int(m.group(1)) * _SCALE[(m.group(2) or "").lower()]
