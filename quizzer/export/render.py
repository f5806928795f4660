"""Markdown to Anki-ready HTML: escaped raw HTML, highlighted code, Anki's math delimiters.

Rendering dominates an export, so three shortcuts keep it fast without changing a byte:
plain one-line text (most questions and list items) skips the parser, each document is
parsed by an instance without the block rules its characters rule out, and the raw-HTML
rules, no-ops with `html=False`, are never run.
"""

from __future__ import annotations

import html
import re
from functools import cache, lru_cache

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

# Text markdown-it would pass through untouched: letters, digits, spaces and punctuation
# that starts no inline construct (no `*_[]!<>&~\` or backtick, no quote it would escape,
# no line break). As a paragraph it must also start with a letter (no list, heading or
# quote marker) and end without a space (the parser trims the paragraph).
_PLAIN = r"(?:[^\W_]|[ ,.;:?'()/%+=#@^{}|-])"
_PLAIN_INLINE = re.compile(rf"{_PLAIN}*")
_PLAIN_PARAGRAPH = re.compile(rf"[^\W\d_](?:{_PLAIN}*(?! ){_PLAIN})?")

# With html=False these rules return False at once; leaving them out changes nothing.
_HTML_RULES = ("html_block", "html_inline")
_LIST_MARKER = re.compile(r"[*+-]|[0-9][.)]")


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


@cache
def _markdown(off: frozenset[str] = frozenset()) -> MarkdownIt:
    # html=False: raw HTML in bank text is escaped, so no script reaches Anki.
    md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight}).enable("table")
    return md.disable([*_HTML_RULES, *sorted(off)])


def _rules_off(src: str) -> frozenset[str]:
    """Block rules that cannot match `src`: each needs a character `src` lacks."""
    off = []
    if "|" not in src:
        off.append("table")
    if "\t" not in src and "    " not in src:
        off.append("code")  # indented code needs 4 columns of indentation
    if "```" not in src and "~~~" not in src:
        off.append("fence")
    if ">" not in src:
        off.append("blockquote")
    if "*" not in src and "-" not in src and "_" not in src:
        off.append("hr")
    if not _LIST_MARKER.search(src):
        off.append("list")
    if "[" not in src:
        off.append("reference")
    if "#" not in src:
        off.append("heading")
    if "=" not in src and "-" not in src:
        off.append("lheading")
    return frozenset(off)


def _render_block(src: str) -> str:
    if _PLAIN_PARAGRAPH.fullmatch(src):
        return f"<p>{src}</p>\n"
    return _markdown(_rules_off(src)).render(src)


def render_markdown(text: str) -> str:
    """HTML for Anki; `$..$` becomes \\( .. \\) and `$$..$$` becomes \\[ .. \\]."""
    if "$" not in text:  # nothing to protect: every match would be left as it is
        return _render_block(text)
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
    rendered = _render_block(source)
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
    if _PLAIN_INLINE.fullmatch(text):
        return text
    return _markdown().renderInline(text)


def code_css() -> str:
    """Pygments styles for light mode, with a dark variant under Anki's night mode."""
    light = HtmlFormatter(style="friendly").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai").get_style_defs(".nightMode .hl")
    return light + "\n" + dark
