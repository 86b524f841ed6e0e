"""The interface strings of each language (templates/i18n/<lang>.yaml): the words of the pages' chrome,
the same keys in every language, plain {name} fields only."""

from __future__ import annotations

from pathlib import Path

from lessonkit import names
from lessonkit.errors import BuildError
from lessonkit.load import theme
from lessonkit.load.texts import line_of_key, parse_yaml, read_text

# What each language's strings must say about the language itself (see templates/i18n/).
LANGUAGE_KEYS = ("tag", "lang_name", "list_sep", "label_sep", "comma", "closing")


def load_strings(root: Path, languages: list[str]) -> dict:
    strings = {}
    for lang in languages:
        path = theme.find(root, f"i18n/{lang}.yaml")
        shown = theme.shown(root, path)
        if not path.is_file():
            raise BuildError(f"no interface strings for {lang!r}", shown)
        strings[lang] = _read(path, shown)
        base = theme.DEFAULT / "i18n" / f"{lang}.yaml"
        if path.resolve() != base.resolve() and base.is_file():
            # A course's file over the theme's, key by key: it says only what it changes.
            strings[lang] = {**_read(base, base), **_known(strings[lang], _read(base, base), path, shown)}
        lacking = [k for k in LANGUAGE_KEYS if not isinstance(strings[lang].get(k), str)]
        if lacking:
            raise BuildError(f"the language's own entries are missing: {', '.join(lacking)}", shown)
        _plain_fields(strings[lang], read_text(path, shown), shown)
        try:
            names.check("tag", strings[lang]["tag"], names.LANG_TAG)
        except BuildError as exc:
            raise exc.located(shown, line_of_key(read_text(path, shown), "tag")) from None
    first, *rest = languages
    for lang in rest:
        missing = set(strings[first]) ^ set(strings[lang])
        if missing:
            # Named at the file that lacks the first of them (a course's override, more often than the theme's).
            lacking = lang if sorted(missing)[0] in strings[first] else first
            raise BuildError(f"interface strings differ between {first} and {lang}: {', '.join(sorted(missing))}",
                             theme.shown(root, theme.find(root, f"i18n/{lacking}.yaml")))
    return strings


def _read(path: Path, shown) -> dict:
    out = parse_yaml(read_text(path, shown), shown, 1)
    if not isinstance(out, dict):
        raise BuildError("expected 'key: text' lines", shown, 1)
    return out


def _known(own: dict, base: dict, path: Path, shown) -> dict:
    """A course's strings over the theme's: each key one the theme has (a misspelt key would change nothing)."""
    from lessonkit.names import did_you_mean

    for key in own:
        if key not in base:
            raise BuildError(f"{key!r} is not an interface string of the theme{did_you_mean(str(key), base)}: it "
                             f"would change nothing", shown, line_of_key(read_text(path, shown), str(key)))
    return own


def _plain_fields(strings: dict, text: str, shown) -> None:
    """Interface strings fill in plain {name} fields: a format spec ({seed:>300000000}) could make a
    page of any size, and a field like {0.__class__} reads what it should not."""
    import string

    for key, value in strings.items():
        if not isinstance(value, str):
            continue
        try:
            fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(value) if name is not None]
        except ValueError as exc:
            raise BuildError(f"{key}: {exc}", shown, line_of_key(text, key)) from None
        for name, spec, conv in fields:
            if spec or conv or (name and not name.isidentifier()):
                raise BuildError(f"{key}: {{{name}{'!' + conv if conv else ''}{':' + spec if spec else ''}}}: interface "
                                 f"strings take plain fields such as {{n}}", shown, line_of_key(text, key))
