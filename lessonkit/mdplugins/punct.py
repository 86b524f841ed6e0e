"""Closing punctuation that may not begin a line (Chinese "。", "，" …): keep it with the math or number
before it. Which marks those are is the language's (its interface strings' `closing`)."""


def glue_closing(tokens, idx: int, html: str, closing: str) -> str:
    """If the text after token idx starts with closing punctuation, move it next to `html`,
    unbreakable. (A browser may otherwise break between an inline element and "。".)"""
    following = tokens[idx + 1] if idx + 1 < len(tokens) else None
    if not closing or following is None or following.type != "text" or not following.content[:1] or \
            following.content[0] not in closing:
        return html
    punct = following.content[0]
    following.content = following.content[1:]
    return f'<span class="nobr">{html}{punct}</span>'
