"""Markdown to Anki-ready HTML: escaped raw HTML, highlighted code, Anki's math delimiters."""

from __future__ import annotations

import html
import re
from functools import lru_cache

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound

# Code first (so `$` inside code is left alone), then display math, then inline math.
_PROTECT = re.compile(
    r"(```.*?```|`[^`\n]+`)|\$\$(.+?)\$\$|(?<![\\$\w])\$([^$\n]+?)\$(?![\w$])", re.S
)
_PLACEHOLDER = "QZMATH{}QZ"


@lru_cache(maxsize=64)
def _lexer(lang: str) -> Lexer:
    try:
        return get_lexer_by_name(lang) if lang else TextLexer()
    except ClassNotFound:
        return TextLexer()


@lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(nowrap=True)


def _highlight(code: str, lang: str, _attrs: str) -> str:
    body = highlight(code, _lexer(lang), _formatter())
    language = html.escape(lang or "text", quote=True)
    return f'<pre class="hl"><code class="language-{language}">{body}</code></pre>\n'


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # html=False: raw HTML in bank text is escaped, so no script reaches Anki.
    return MarkdownIt("commonmark", {"html": False, "highlight": _highlight}).enable("table")


def render_markdown(text: str) -> str:
    """HTML for Anki; `$..$` becomes \\( .. \\) and `$$..$$` becomes \\[ .. \\]."""
    math: list[str] = []

    def protect(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(1)
        if match.group(2) is not None:
            math.append(r"\[" + html.escape(match.group(2).strip()) + r"\]")
        else:
            math.append(r"\(" + html.escape(match.group(3).strip()) + r"\)")
        return _PLACEHOLDER.format(len(math) - 1)

    source = _PROTECT.sub(protect, text)
    rendered = _markdown().render(source)
    for index, formula in enumerate(math):
        rendered = rendered.replace(_PLACEHOLDER.format(index), formula)
    return rendered


def render_list(items: tuple[str, ...] | list[str], ordered: bool = False) -> str:
    if not items:
        return ""
    tag = "ol" if ordered else "ul"
    body = "".join(f"<li>{_inline(item)}</li>" for item in items)
    return f"<{tag}>{body}</{tag}>"


def _inline(text: str) -> str:
    return _markdown().renderInline(text)


def code_css() -> str:
    """Pygments styles for light mode, with a dark variant under Anki's night mode."""
    light = HtmlFormatter(style="friendly").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai").get_style_defs(".nightMode .hl")
    return light + "\n" + dark
