"""The course's own checks, read from content/site.yaml: every experiment it lists follows the contract,
runs on its own, and holds its claims on every seed of the build's sweep. A new experiment is checked
here as soon as site.yaml lists it; nothing in this file names one."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT

CONFIG = yaml.safe_load((ROOT / "content" / "site.yaml").read_text("utf-8"))
EXPERIMENTS = CONFIG.get("experiments", [])
LANGUAGES = CONFIG.get("languages", ["zh", "en"])


def load(name: str):
    sys.path.insert(0, str(ROOT / "experiments"))
    spec = importlib.util.spec_from_file_location(f"course_{name}", ROOT / "experiments" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_contract(name):
    module = load(name)
    assert module.NAME == name
    assert (module.__doc__ or "").strip().splitlines()[0], "a docstring whose first line says what it measures"
    assert isinstance(module.PARAMS, dict) and module.CLAIMS
    ids = [c.id for c in module.CLAIMS]
    assert len(ids) == len(set(ids)), "claim ids are unique"
    for claim in module.CLAIMS:
        assert set(claim.text) >= set(LANGUAGES) and all(claim.text[lang] for lang in LANGUAGES), claim.id
        assert claim.shows, f"{claim.id} shows no value"
        if claim.holds_on < 1:
            assert all(claim.note.get(lang) for lang in LANGUAGES), f"{claim.id}: say in its note why it may fail"


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_runs_on_its_own(name):
    script = ROOT / "experiments" / f"{name}.py"
    done = subprocess.run([sys.executable, str(script), "--seed", "1"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout and done.stdout.count("PASS") == len(load(name).CLAIMS)
    done = subprocess.run([sys.executable, str(script), "--seed", "1", "--json"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    values = json.loads(done.stdout)
    assert values and all(key.startswith(name + ".") for key in values)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_claim_holds_on_every_seed_of_the_sweep(name, site):
    """The build swept the seeds; each summary row says on how many its claim held."""
    manifest = json.loads((site / "lessonkit.json").read_text("utf-8"))
    assert len(manifest["seeds"]) == CONFIG.get("seeds", 20)
    rows = {}
    for page in site.rglob("*.html"):
        for key, seeds, held in re.findall(r'<tr id="[^"]+" data-claim="([^"]+)" data-passed="true" '
                                           r'data-seeds="(\d+)" data-held="(\d+)"', page.read_text("utf-8")):
            rows[key] = (int(seeds), int(held))
    claims = load(name).CLAIMS
    for claim in claims:
        key = f"{name}.{claim.id}"
        assert key in rows, f"{key} is shown in no verification summary"
        seeds, held = rows[key]
        assert seeds == len(manifest["seeds"])
        assert held >= claim.holds_on * seeds and (claim.holds_on < 1 or held == seeds), (key, held, seeds)
