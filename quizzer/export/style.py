"""Card CSS: readable on a phone, in light mode and in Anki's night mode."""

from __future__ import annotations

from quizzer.export.render import code_css

_BASE = """
.card { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  font-size: 17px; line-height: 1.5; text-align: left; color: #1d1d1f; background: #fff;
  max-width: 46em; margin: 0 auto; padding: 0 12px; }
.nightMode.card, .card.nightMode { color: #e6e6e6; background: #1e1e1e; }
.meta { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; color: #6b7280; }
.question { font-size: 1.15em; font-weight: 600; margin: .4em 0; }
.asked { font-size: 13px; color: #6b7280; }
.section h4 { margin: 1em 0 .2em; font-size: 13px; text-transform: uppercase; color: #6b7280; }
.qid { margin-top: 1.5em; font-size: 11px; color: #9ca3af; }
pre.hl { overflow-x: auto; padding: .6em .8em; border-radius: 6px; font-size: 13px;
  background: #f6f8fa; white-space: pre; }
.nightMode pre.hl { background: #272822; }
code { font-family: "SF Mono", Menlo, Consolas, monospace; font-size: .92em; }
table { border-collapse: collapse; } td, th { border: 1px solid #d0d7de; padding: 2px 6px; }
a { color: #2563eb; } .nightMode a { color: #93c5fd; }
@media (max-width: 480px) { .card { font-size: 16px; padding: 0 4px; } pre.hl { font-size: 12px; } }
"""

CARD_CSS = _BASE + code_css()
