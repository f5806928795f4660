"""Every key of every screen, in one table: the help screen shows it and the README's
key table is checked against it."""

from __future__ import annotations

STUDY: list[tuple[str, str]] = [
    ("space / enter", "reveal the answer, with follow-ups and references under it"),
    ("1 2 3 4", "after the reveal: Again / Hard / Good / Easy; each button shows its interval"),
    ("t then 1-9", "tick key point N (or click it); the count ticked shows by the rating bar"),
    ("u", "undo the last rating, suspend or bury (the card returns to its exact state)"),
    ("s", "suspend the card"),
    ("b", "bury the card until tomorrow (the day starts at 4 am)"),
    ("e", "the linked coding exercise and the command that starts it"),
    ("up / down, pgup / pgdn, home / end", "scroll the card"),
    ("?", "all keys"),
    ("q", "end the session and see the summary"),
    ("escape", "close a message or dialog; otherwise ask before ending the session"),
]

HOME: list[tuple[str, str]] = [
    ("enter", "study the highlighted topic or company"),
    ("s / c", "study / cram everything"),
    ("r", "browse and search every card"),
    ("t", "stats"),
    ("p", "the study plan to the interview date"),
    ("o", "settings"),
    ("ctrl+p", "command palette"),
    ("q", "quit"),
]

BROWSE: list[tuple[str, str]] = [
    ("type", "search; filters: topic:kv company:bytedance tier:T0 state:leech diff:hard"),
    ("up / down", "move through the results"),
    ("ctrl+s", "suspend / unsuspend"),
    ("ctrl+x", "reset the card's schedule (asks first; its history is kept)"),
    ("ctrl+z", "undo the last action"),
    ("escape", "back"),
]

SETTINGS: list[tuple[str, str]] = [
    ("tab / shift+tab", "next / previous field; space ticks a company or topic"),
    ("ctrl+s / enter", "save (nothing is saved while a field is wrong)"),
    ("escape", "cancel (asks first when something changed)"),
]

SCREENS: dict[str, list[tuple[str, str]]] = {
    "Study": STUDY,
    "Home": HOME,
    "Browse": BROWSE,
    "Settings": SETTINGS,
}


def help_text() -> str:
    """The key table as the help screen's markup."""
    width = max(len(key) for keys in SCREENS.values() for key, _ in keys) + 2
    lines: list[str] = []
    for screen, keys in SCREENS.items():
        lines.append(f"[b]{screen}[/b]")
        lines += [f"  {key.ljust(width)}{does}" for key, does in keys]
        lines.append("")
    lines.append("Press any key to close.")
    return "\n".join(lines)
