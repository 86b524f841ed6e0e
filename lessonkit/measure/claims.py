"""Claims: re-evaluate every criterion on every seed, stop the build on a claim that does not hold,
and index values, claims and their spread over the seeds for the pages.

The experiments evaluate their own criteria (so that a standalone run prints PASS/FAIL); the
build evaluates them again from the reported values and trusts only its own verdict.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from lessonkit import criteria, io
from lessonkit.errors import BuildError, NotChecked
from lessonkit.io import read_cache
from lessonkit.measure import declared, falsifiable
from lessonkit.measure.experiments import Report
from lessonkit.names import did_you_mean


@dataclass
class Claim:
    key: str  # "multires.p2.vanishing"
    criterion: str
    text: dict
    shows: list  # full value keys
    refuted: bool
    note: dict
    experiment: str  # "experiments/multires.py"
    seed: int  # the course seed: the pages show its numbers
    params: dict
    source_lines: list
    versions: dict
    line: int | None = None  # where the Claim is written in the experiment file
    holds_on: float = 1.0  # the share of the seeds on which it must hold
    seeds: int = 1  # seeds it ran on
    held: int = 1  # seeds on which it held
    failed_seeds: list = field(default_factory=list)
    # False only for a claim allowed to fail on some seeds (holds_on < 1) that fails on the course seed:
    # the page's numbers are a counterexample, so they carry no tick for it.
    on_course_seed: bool = True
    # False when every value the criterion reads is a parameter: it tests nothing measured.
    measures: bool = True
    # How its verdict changes when a measured value it reads moves ("p2.ratio halved"); "" when no move
    # (halved, doubled, negated, zeroed, swapped) changes it: a criterion that cannot fail verifies nothing.
    fails_when: str = ""

    @property
    def required(self) -> int:
        return required(self.holds_on, self.seeds)

    @property
    def passed(self) -> bool:
        return self.held >= self.required


def required(share: float, seeds: int) -> int:
    return max(1, math.ceil(share * seeds - 1e-9))


@dataclass
class Value:
    """A value the pages may show: the course seed's number, and all the build knows of it."""

    key: str  # "multires.p2.ratio"
    number: object  # int, float or a list of them: the course seed's
    file: str  # the experiment that stores it
    line: int | None = None  # the line that stores it
    bound: object = None  # [op, limit] (the value, or each element) or a list of [op, limit] / None per element
    tiny: str = ""  # why a float below the noise floor is a measurement
    parameter: tuple | None = None  # ("set" | "computed", line): not measured
    counted: bool = False  # counted by the build from the claims (claims.held …)
    range: tuple | None = None  # a scalar's (min, max) over the seeds
    claim: str | None = None  # the claim whose tick it carries
    listing: str | None = None  # the first claim that lists it (its row)


@dataclass
class Measurements:
    values: dict = field(default_factory=dict)  # full key -> Value
    claims: dict = field(default_factory=dict)  # full key -> Claim
    seeds: list = field(default_factory=list)
    reports: list = field(default_factory=list)
    failures: list = field(default_factory=list)  # claims that do not hold (collect(gather=True)): BuildErrors
    unmeasured: dict = field(default_factory=dict)  # experiment -> why it has no values (it failed)

    def entry(self, key: str) -> Value:
        """The Value a key (or an element's key, `key[i]`) belongs to."""
        base = split_index(key)[0]
        try:
            return self.values[base]
        except KeyError:
            self._unmeasured(base)
            raise BuildError(f"unknown value key {base!r}{suggest(base, self.values)}") from None

    def _unmeasured(self, key: str) -> None:
        """A key of an experiment that failed is neither known nor unknown: that check is not made."""
        why = self.unmeasured.get(key.split(".", 1)[0])
        if why:
            raise NotChecked(why)

    def bound_of(self, key: str):
        """The bound `key` is shown as: the whole value's, or its element's (None: shown as digits)."""
        base, index = split_index(key)
        entry = self.values.get(base)
        bound = entry and entry.bound
        if not bound or index is None or isinstance(bound[0], str):
            return bound or None
        return bound[index]

    def value(self, key: str):
        """A value by key; `key[i]` is element i of a list value (negative counts from the end)."""
        base, index = split_index(key)
        value = self.entry(key).number
        if index is None:
            return value
        if not isinstance(value, list):
            raise BuildError(f"value {base!r} is a single number: it has no element [{index}]")
        if not -len(value) <= index < len(value):
            raise BuildError(f"value {base!r} has {len(value)} elements: [{index}] is out of range")
        return value[index]

    def numbers(self) -> dict:
        """Every value's number by full key, as figure recipes read them."""
        return {k: v.number for k, v in self.values.items()}

    def over_seeds(self) -> dict:
        """Every measured value's numbers on each seed the build ran, the course seed first, by full key."""
        return {f"{r.name}.{key.removeprefix(SWEEP + '.')}": numbers
                for r in self.reports for key, numbers in sweep_values(r).items()}

    def numbers_of(self, experiment: str) -> dict:
        """An experiment's values' numbers by id, as its criteria read them."""
        return {k.split(".", 1)[1]: v.number for k, v in self.values.items() if k.startswith(experiment + ".")}

    def claim(self, key: str) -> Claim:
        try:
            return self.claims[key]
        except KeyError:
            self._unmeasured(key)
            raise BuildError(f"unknown claim {key!r}{suggest(key, self.claims)}") from None


SWEEP = falsifiable.SWEEP  # the name a criterion reads a value's list over the seeds by: sweep.p3.norm_last


def split_index(key: str) -> tuple[str, int | None]:
    """"p3.norms[0]" -> ("p3.norms", 0); "p2.ratio" -> ("p2.ratio", None)."""
    if key.endswith("]") and "[" in key:
        base, _, index = key[:-1].rpartition("[")
        try:
            return base, int(index)
        except ValueError:
            raise BuildError(f"value key {key!r}: the index in [] must be a whole number") from None
    return key, None


def suggest(key: str, known) -> str:
    return did_you_mean(key, known)


def _shown(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in value) + "]"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class Verdicts:
    """Verdicts already reached, by (report digest, criterion): a rebuild need not import numpy to
    re-evaluate `np.` criteria on values it has judged before. A changed value changes the digest."""

    def __init__(self, path: Path | None = None):
        self.path, self.seen, self.used, self.moves_digest = path, {}, {}, ""
        if path is not None:
            self.seen = read_cache(path, {})
            if not isinstance(self.seen, dict):
                self.seen = {}

    def holds(self, digest: str, criterion: str, refuted: bool, values: dict) -> bool:
        key = io.digest(digest, str(refuted), criterion)
        verdict = self.seen.get(key)
        if not isinstance(verdict, bool):
            verdict = criteria.holds(criterion, refuted, values)
        self.used[key] = verdict
        return verdict

    def fails_when(self, digest: str, claim: Claim, values: dict, moved: list) -> str:
        """The first move of a measured value that changes the claim's verdict ("" if none): see `moves`."""
        if not self.moves_digest:  # a change of the moves tried is a change of the answer
            self.moves_digest = io.digest(Path(falsifiable.__file__).read_bytes(), length=16)
        key = io.digest("fails-when", self.moves_digest, digest, str(claim.refuted), claim.criterion)
        found = self.seen.get(key)
        if not isinstance(found, str):
            found = falsifiable.fails_when(claim.criterion, claim.refuted, values, moved,
                                           reads(claim.criterion, values))
        self.used[key] = found
        return found

    def save(self) -> None:
        if self.path is None or self.used == self.seen:
            return
        io.write_cache(self.path, self.used)  # a cache that cannot be written only costs time


def collect(reports: list[Report], verdicts: Verdicts | None = None, gather: bool = False) -> Measurements:
    """Index every value and claim; raise on the first claim that does not hold, or with `gather` keep every
    such failure in .failures (the build reports them with the pages' errors, so the pages are still parsed)."""
    verdicts = verdicts or Verdicts()
    m = Measurements(reports=reports, seeds=list(reports[0].seeds) if reports else [])
    for report in reports:
        name, data = report.name, report.data
        for vid, value in data["values"].items():
            m.values[f"{name}.{vid}"] = Value(f"{name}.{vid}", value, str(report.path), data.get("lines", {}).get(vid))
        declared.check(m.values, report)
        declared.spread(m.values, report)
        passed = 0
        for c in data["claims"]:
            _check_claim_id(m, name, c, report)
            claim = Claim(
                key=f"{name}.{c['id']}", criterion=c["criterion"], text=c["text"],
                shows=[f"{name}.{v}" for v in c["shows"]], refuted=c["refuted"], note=c.get("note") or {},
                experiment=str(report.path), seed=data["seed"], params=data["params"],
                source_lines=data["source_lines"], versions=data["versions"], line=c.get("line"),
                holds_on=float(c.get("holds_on", 1.0)), seeds=len(report.seeds),
            )
            try:
                _judge(claim, c, report, verdicts)
            except BuildError as exc:
                if not gather:
                    raise
                m.failures.append(exc)
                claim.held = 0
            read = reads(claim.criterion, data["values"])
            measured = sorted(vid for vid in read if not m.values[f"{name}.{vid}"].parameter)
            claim.measures = bool(measured)
            if measured and claim.on_course_seed:
                claim.fails_when = verdicts.fails_when(report.digests[report.seeds[0]] + _everyone(report, claim),
                                                       claim, _judged_values(report, claim), measured)
            passed += claim.passed
            m.claims[claim.key] = claim
            for vkey in claim.shows if claim.on_course_seed else ():
                entry = m.values.get(vkey)
                if entry is None:
                    continue
                entry.listing = entry.listing or claim.key
                if not entry.parameter:  # a parameter is set, not verified: it carries no tick
                    entry.claim = entry.claim or claim.key
        # Counts a page can state honestly: claims that hold, and first criteria the data still refutes.
        refuted = sum(1 for c in data["claims"] if c["refuted"])
        counts = {"passed": passed, "total": len(data["claims"]), "held": len(data["claims"]) - refuted,
                  "refuted": refuted}
        for k, n in counts.items():
            m.values[f"{name}.claims.{k}"] = Value(f"{name}.claims.{k}", n, str(report.path), counted=True)
    return m


@lru_cache(maxsize=4096)
def _parsed(criterion: str):
    """A criterion's syntax tree, parsed once per build (read only: several readers share it)."""
    import ast

    return ast.parse(criterion, mode="eval")


def uses_sweep(criterion: str) -> bool:
    """Whether a criterion reads `sweep.x`: the list of the value x over every seed the build ran."""
    return isinstance(criterion, str) and _sweeps(criterion)  # (a report's criterion is the experiment's word)


@lru_cache(maxsize=4096)
def _sweeps(criterion: str) -> bool:
    import ast

    try:
        return any(isinstance(n, ast.Name) and n.id == SWEEP for n in ast.walk(_parsed(criterion)))
    except (SyntaxError, ValueError):
        return False


def sweep_values(report: Report) -> dict:
    """`sweep.x` for every value x of an experiment: its values over the seeds, the course seed first."""
    return {f"{SWEEP}.{vid}": [report.runs[s]["values"].get(vid) for s in report.seeds] for vid in report.data["values"]}


def _check_claim_id(m: Measurements, name: str, c: dict, report: Report) -> None:
    """A claim id is a name, and no two claims may make the same anchor (sp.read and sp_read): one ✓ would
    open the other's panel."""
    from lessonkit import names
    from lessonkit.names import claim_anchor

    try:
        names.check("claim id", c.get("id"))
    except BuildError as exc:
        raise exc.located(report.path, c.get("line")) from None
    key = f"{name}.{c['id']}"
    twin = next((k for k in m.claims if claim_anchor(k) == claim_anchor(key)), None)
    if twin:
        raise BuildError(f"claim {key} makes the same anchor {claim_anchor(key)!r} as claim {twin}; rename one",
                         report.path, c.get("line"))


def _everyone(report: Report, claim: Claim) -> str:
    """A sweep criterion reads every seed: the digest of all their reports (else "")."""
    if not uses_sweep(claim.criterion):
        return ""
    return hashlib.sha256("".join(report.digests[s] for s in report.seeds).encode()).hexdigest()


def _judged_values(report: Report, claim: Claim) -> dict:
    """What the criterion reads on the course seed: its values, and the sweep's when it reads that."""
    return {**report.data["values"], **(sweep_values(report) if uses_sweep(claim.criterion) else {})}


def _judge(claim: Claim, c: dict, report: Report, verdicts: Verdicts) -> None:
    """Evaluate the claim on every seed's values; raise unless it holds where it must."""
    failed = []
    # A criterion over the sweep reads every seed: its verdict rests on all their reports.
    sweep = sweep_values(report) if uses_sweep(claim.criterion) else {}
    everyone = _everyone(report, claim)
    for seed in report.seeds:
        run = report.runs[seed]
        mine = next((x for x in run["claims"] if x["id"] == c["id"]), None)
        try:
            held = verdicts.holds(report.digests[seed] + everyone, claim.criterion, claim.refuted,
                                  {**run["values"], **sweep})
        except Exception as exc:  # the criterion is the course's code: any error is its error
            why = str(exc) if isinstance(exc, criteria.CriterionError) else f"{type(exc).__name__}: {exc}"
            raise BuildError(f"claim {claim.key}: criterion {claim.criterion!r} cannot be evaluated on seed {seed}: "
                             f"{why}", report.path, claim.line) from None
        # (a run alone judged a sweep criterion on its own seed: only the build sees the whole sweep)
        if mine is None or (not sweep and bool(mine.get("passed")) != held):
            said = "passed" if mine and mine.get("passed") else "failed"
            if seed in report.frozen_at:  # the frozen file is what disagrees with itself
                from lessonkit.measure import frozen

                raise BuildError(f"claim {claim.key}: on seed {seed} the frozen report says {said}, but its "
                                 f"criterion evaluates the other way on the frozen values: edited? python build.py "
                                 f"--refresh {report.name} runs it again", f"{frozen.FOLDER}/{report.name}.json",
                                 frozen.line_of(report.file.parent.parent, report.name, seed))
            raise BuildError(f"claim {claim.key}: on seed {seed} the experiment's report says "
                             f"{said}, but its criterion evaluates "
                             f"the other way on the reported values (an edited cache? python build.py --force "
                             f"runs the experiments again)", report.path, claim.line)
        if not held:
            failed.append(seed)
    claim.held, claim.failed_seeds = len(report.seeds) - len(failed), failed
    claim.on_course_seed = report.seeds[0] not in failed
    if not claim.on_course_seed and claim.holds_on >= 1:
        values = report.data["values"]
        measured = ", ".join(f"{k} = {_shown(values.get(k.split('.', 1)[1]))}" for k in claim.shows) or "see the values"
        verb = "the refuted criterion now holds" if claim.refuted else "criterion failed"
        hint = "" if claim.refuted else " (if the data rejects the statement, keep it on record with refuted=True)"
        raise BuildError(f"claim {claim.key} failed on seed {claim.seed}, the seed the pages show: {verb}: "
                         f"{claim.criterion}; measured {measured}{hint}; re-run: python {report.path} --seed "
                         f"{claim.seed}", report.path, criterion_line(report, claim))
    if not claim.passed:
        shown = ", ".join(map(str, failed[:8])) + (" …" if len(failed) > 8 else "")
        must = "all" if claim.holds_on >= 1 else f"at least {claim.required}"
        raise BuildError(f"claim {claim.key} holds on {claim.held} of {claim.seeds} seeds (fails on seed(s) {shown}); "
                         f"it must hold on {must} — or state holds_on=<share> with the reason in its note; "
                         f"{evidence(report, claim.criterion, failed)}; re-run one: python {report.path} --seed "
                         f"{failed[0]}", report.path, criterion_line(report, claim))


def evidence(report: Report, criterion: str, seeds: list, most: int = 3) -> str:
    """What the criterion read on the first failing seeds: 'on seed 10: grad.rel_err = 0.0711; on seed 13: …'."""
    import re

    keys = [k for k in report.data["values"] if re.search(rf"(?<![\w.]){re.escape(k)}(?![\w])", criterion)]
    if not keys:
        return "the criterion reads no value by name"
    parts = []
    for seed in seeds[:most]:
        values = report.runs[seed]["values"]
        parts.append(f"on seed {seed}: " + ", ".join(f"{k} = {_shown(values.get(k))}" for k in keys))
    return "; ".join(parts) + ("; …" if len(seeds) > most else "")


def criterion_line(report: Report, claim: Claim) -> int | None:
    """The line of the experiment where the claim's criterion is written (`criterion=` after its `Claim(`), so
    that an editor opens at what to change; the Claim( line when it cannot be found."""
    try:
        lines = report.file.read_text("utf-8").splitlines()
    except (OSError, AttributeError):
        return claim.line
    return _criterion_line(lines, claim.line)


def _criterion_line(lines: list[str], start: int | None) -> int | None:
    if not start:
        return start
    for number in range(start, min(len(lines), start + 12) + 1):
        text = lines[number - 1]
        if number > start and "Claim(" in text:
            break
        if "criterion=" in text:
            return number
    return start


def reads(criterion: str, values: dict) -> set[str]:
    """The value ids a criterion reads: its dotted names (p2.ratio, gpt.proj_flops[0]) that name a value,
    or a whole group of them (p3)."""
    import ast

    try:
        tree = _parsed(criterion)
    except (SyntaxError, ValueError, TypeError):
        return set(values)  # an unreadable criterion is judged elsewhere; assume it reads everything
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in inner or not isinstance(node, (ast.Attribute, ast.Name)):
            continue
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):  # p2.ratio, sweep.p2.ratio, or a whole group (p3)
            name = ".".join([node.id, *reversed(parts)]).removeprefix(SWEEP + ".")
            out |= {vid for vid in values if vid == name or vid.startswith(name + ".") or name.startswith(vid + ".")}
    return out
