"""Claims: stop the build on a failed one; index values and claims for the pages.

The experiments evaluate their own criteria (so a standalone run prints the same
PASS/FAIL); this stage refuses to publish unless every claim passed, and keeps
each claim's provenance beside its values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import BuildError
from .experiments import Report


@dataclass
class Claim:
    key: str  # "multires.p2.vanishing"
    criterion: str
    text: dict
    shows: list  # full value keys
    refuted: bool
    note: dict
    passed: bool
    experiment: str  # "experiments/multires.py"
    seed: int
    params: dict
    source_lines: list
    versions: dict


@dataclass
class Measurements:
    values: dict = field(default_factory=dict)  # full key -> value
    claims: dict = field(default_factory=dict)  # full key -> Claim
    claim_of_value: dict = field(default_factory=dict)  # value key -> claim key
    reports: list = field(default_factory=list)

    def value(self, key: str):
        try:
            return self.values[key]
        except KeyError:
            raise BuildError(f"unknown value key {key!r}{_suggest(key, self.values)}") from None

    def claim(self, key: str) -> Claim:
        try:
            return self.claims[key]
        except KeyError:
            raise BuildError(f"unknown claim {key!r}{_suggest(key, self.claims)}") from None


def _suggest(key: str, known) -> str:
    import difflib

    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _shown(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in value) + "]"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def collect(reports: list[Report]) -> Measurements:
    """Index every value and claim; raise on the first claim that failed."""
    m = Measurements(reports=reports)
    for report in reports:
        data, name = report.data, report.name
        for vid, value in data["values"].items():
            m.values[f"{name}.{vid}"] = value
        passed = 0
        for c in data["claims"]:
            claim = Claim(
                key=f"{name}.{c['id']}", criterion=c["criterion"], text=c["text"],
                shows=[f"{name}.{v}" for v in c["shows"]], refuted=c["refuted"], note=c.get("note") or {},
                passed=c["passed"], experiment=str(report.path), seed=data["seed"], params=data["params"],
                source_lines=data["source_lines"], versions=data["versions"],
            )
            if not claim.passed:
                measured = ", ".join(f"{k} = {_shown(m.values.get(k))}" for k in claim.shows) or "see the values"
                verb = "the refuted criterion now holds" if claim.refuted else "criterion failed"
                raise BuildError(
                    f"claim {claim.key} failed: {verb}: {claim.criterion}; measured {measured} (seed {claim.seed})",
                    report.path)
            passed += 1
            m.claims[claim.key] = claim
            for vkey in claim.shows:
                m.claim_of_value.setdefault(vkey, claim.key)
        m.values[f"{name}.claims.passed"] = passed
        m.values[f"{name}.claims.total"] = len(data["claims"])
    return m
