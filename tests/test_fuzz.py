"""Generated Markdown with math, value references and unusual Unicode: rendered, or the build's own error."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_plugins import GLOSSARY, REFS, render

from lessonkit.errors import BuildError

UNICODE = ["注意力", "残差连接", "ｆｕｌｌ－ｗｉｄｔｈ，；", "e\u0301\u0308", "שלום עולם", "مرحبا", "👩🏽‍🔬", "🧮➗",
           "\u200b", "\u202e", "\ufeff", "<script>", "&amp;", "`", "*", "_", "\\", "{", "}", "[", "]", ":::", "$"]
TEX = [r"x", r"\frac{a}{b}", r"W^{K\top}", r"\sigma_{\max}", r"\|I+W\|", r"{", r"}", r"\foo", r"^", r"_",
       r"\mathrm{rank}\,A", r"\text{注意}", r"\sqrt{2}", r"\left(", r"\right)", r"&", r"\\"]
KEYS = ["exp.ratio", "exp.rank", "exp.ranks", "exp.nope", "", "exp.ratio:.2f", "exp.ratio:e.3", "exp.ratio:zz"]

text = st.lists(st.one_of(st.sampled_from(UNICODE), st.text(max_size=8)), max_size=6).map(" ".join)
math = st.lists(st.sampled_from(TEX), min_size=1, max_size=5).map("".join)
inline = st.one_of(
    text,
    math.map(lambda m: f"${m}$"),
    math.map(lambda m: f"$${m}$$"),
    st.sampled_from(KEYS).map(lambda k: f"{{val}}`{k}`"),
    st.sampled_from(["exp.vanish", "exp.none"]).map(lambda k: f"{{claim}}`{k}`"),
    text.map(lambda t: f"[{t}]{{.term}}"),
    st.sampled_from(["verified key=\"exp.vanish\"", "cited ref=michel2019", "unverified", "maybe"]).map(
        lambda a: f"[claim]{{.claim audit={a}}}"),
    text.map(lambda t: f"[{t}](other.md#x)"),
)
line = st.lists(inline, max_size=5).map(" ".join)
block = st.one_of(
    line,
    line.map(lambda t: f"## {t}"),
    line.map(lambda t: f"## {t} {{#sec}}"),
    line.map(lambda t: f"::: note\n{t}\n:::"),
    line.map(lambda t: f":::: exercise\n{t}\n\n::: hint\n{t}\n:::\n::::"),
    line.map(lambda t: f"| a | b |\n|---|---|\n| {t} | x |"),
    math.map(lambda m: f"$$\n{m}\n$$"),
    line.map(lambda t: f"```python\n{t}\n```"),
)
document = st.lists(block, max_size=8).map("\n\n".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document, st.sampled_from(["zh", "en"]))
def test_renderer_renders_or_raises_its_own_error(source, lang):
    try:
        html, _ = render(source, lang=lang, glossary=GLOSSARY, references=REFS)
    except BuildError as exc:  # one line per error of the page (several, gathered: BuildErrors)
        for one in getattr(exc, "errors", [exc]):
            assert str(one).startswith(f"content/{lang}/a.md"), str(one)
            assert "\n" not in str(one).strip()
    else:
        assert "<script>" not in html  # raw HTML never passes through
