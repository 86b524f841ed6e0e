"""The markup contract (lessonkit/markup.py): what a value's element is written with is what the reader reads."""

from __future__ import annotations

from lessonkit import markup
from lessonkit.markup import Shown


def test_a_shown_value_reads_back_as_it_was_written_with_its_text_and_language():
    written = Shown(key='e.x[1]', value="[0.5, 1e-20]", format=".2f", bound='[null, "<1e-12"]', tiny=True,
                    low="0.25", high="0.75", claim="e.c")
    html = (f'<html lang="en"><p lang="zh-CN"><span class="value" {written.attrs()}><span class="num">0.50</span>'
            f'<button class="mark">✓</button></span></p></html>')
    (read,) = markup.scan(html).values
    assert read == Shown(**{**written.__dict__, "text": "0.50", "lang": "zh-CN"})
    assert read.parsed_bound() == [None, ["<", 1e-12]] and read.number() == [0.5, 1e-20]


def test_attributes_are_escaped_and_in_a_fixed_order():
    attrs = Shown(key="e.x", value="1", claim='a"b').attrs()
    assert attrs == 'data-key="e.x" data-value="1" data-claim="a&quot;b"'
    assert Shown(key="e.x", value="1", bound="<1e-09").parsed_bound() == ["<", 1e-9]


def test_a_value_without_its_number_is_not_read_as_shown():
    assert markup.scan('<span class="value" data-key="e.x" data-value="1">1</span>').values == []


def test_a_summary_row_reads_back_as_it_was_written():
    written = markup.Row("e.c", passed=True, seeds=20, held=19, fails_on_course_seed=True, refuted=True)
    (read,) = markup.scan(f"<table><tr id=\"claim-e-c\" {written.attrs()}><td>held on 19 of 20</td></tr></table>").rows
    assert read == markup.Row(**{**written.__dict__, "text": "held on 19 of 20"})
    assert markup.Row.from_attrs({"data-claim": "e.c", "data-seeds": "x"}).seeds == -1
