"""docs/reference.md names everything an author can write or type, read from the engine itself:
an option, key, block or attribute added without a line in the reference fails here."""

import dataclasses
import re
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT))
from lessonkit import command as build  # noqa: E402
from lessonkit.load import content, texts  # noqa: E402
from lessonkit.markdown.plugins import blocks, spans  # noqa: E402

REFERENCE = (ROOT / "docs" / "reference.md").read_text("utf-8")


def _section(title: str) -> str:
    """The text of a `## title` section (up to the next `## `)."""
    start = REFERENCE.index(f"\n## {title}")
    end = REFERENCE.find("\n## ", start + 1)
    return REFERENCE[start:end if end > 0 else None]


def _options(parser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings if s.startswith("--") and s != "--help"}


@pytest.mark.parametrize("option", sorted(_options(build.arg_parser()) | _options(build.new_parser())))
def test_every_command_line_option_is_documented(option):
    assert re.search(rf"`[^`\n]*{re.escape(option)}\b", _section("Command line")), option


def test_the_new_command_is_documented():
    assert "build.py new" in _section("Command line")


@pytest.mark.parametrize("subcommand", sorted(build.SUBCOMMANDS))
def test_every_subcommand_of_the_lessonkit_command_is_documented(subcommand):
    assert f"`lessonkit {subcommand}`" in _section("Command line"), subcommand


def test_the_site_yaml_table_is_the_schema_the_loader_walks():
    """docs/reference.md's site.yaml table says what content.SITE says, key by key, in its order."""
    rows = re.findall(r"^\| `([a-z_]+)` \| (.+) \|$", _section("`content/site.yaml`"), re.M)
    assert rows == [(key.name, key.help) for key in content.SITE]


def test_every_site_yaml_key_has_a_default_and_a_check():
    for key in content.SITE:
        assert callable(key.check) and key.help, key.name
    assert {key.name for key in content.SITE} == content.SITE_KEYS


@pytest.mark.parametrize("key", sorted(texts.PAGE_KEYS))
def test_every_front_matter_field_is_documented(key):
    assert f"`{key}`" in _section("Front matter"), key


@pytest.mark.parametrize("kind", sorted(blocks.KINDS))
def test_every_block_is_documented(kind):
    assert f"`{kind}`" in _section("Markdown") or f"::: {kind}" in _section("Markdown"), kind


@pytest.mark.parametrize("attribute", sorted(spans.ALLOWED["span_open"] - {"class", "id"}))
def test_every_span_attribute_is_documented(attribute):
    assert re.search(rf"\b{attribute}=", _section("Markdown")), attribute


@pytest.mark.parametrize("status", sorted(spans.AUDITS))
def test_every_audit_status_is_documented(status):
    assert f"audit={status}" in _section("Markdown"), status


@pytest.mark.parametrize("role", ["val", "claim", "ref"])
def test_every_role_is_documented(role):
    assert f"{{{role}}}`" in _section("Markdown"), role


def test_every_claim_field_and_bound_is_documented():
    sys.path.insert(0, str(ROOT / "experiments"))
    import harness

    section = _section("Experiments and figures")
    fields = {f.name for f in dataclasses.fields(harness.Claim)} - {"line"}  # line is recorded, not written
    missing = [f for f in sorted(fields) if not re.search(rf"\b{f}\b", section)]
    assert not missing, missing
    assert "harness.below(" in REFERENCE and "harness.above(" in REFERENCE
    assert "run_as_script" in section  # what experiments end with, as the harness docstring says
    assert "run_as_script" in harness.__doc__


def test_the_language_file_keys_that_are_not_interface_words_are_documented():
    import yaml

    strings = yaml.safe_load((ROOT / "templates" / "i18n" / "en.yaml").read_text("utf-8"))
    for key in ("tag", "lang_name", "list_sep", "label_sep", "comma", "closing"):
        assert key in strings and f"`{key}`" in REFERENCE, key


def test_the_reference_links_resolve():
    prose = re.sub(r"``.*?``|`[^`\n]*`", "", REFERENCE)  # links shown as examples are not links
    for target in re.findall(r"\]\(([^)#]+)\)", prose):
        if not target.startswith("http"):
            assert (ROOT / "docs" / target).exists(), target
