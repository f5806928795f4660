"""`quizzer bank validate`: every problem, located by file:line and question id."""

from __future__ import annotations

import pytest

from quizzer.bank.loader import check_bank
from quizzer.cli.main import entry

from .conftest import FIXTURES

BROKEN = FIXTURES / "broken"

CASES = {
    "syntax.yaml": [(6, None, "YAML syntax error: found unexpected end of stream")],
    "missing_field.yaml": [(1, "b-missing", "missing field 'answer'")],
    "unknown_field.yaml": [(7, "b-unknown-field", "unknown field 'hint'")],
    "wrong_type.yaml": [(6, "b-wrong-type", "field 'key_points': Input should be a valid list")],
    "bad_refs.yaml": [
        (1, "b-refs", "unknown topic 'gpuu' (did you mean 'gpu'?)"),
        (1, "b-refs", "unknown theme 'no-such-theme'"),
        (1, "b-refs", "unknown company 'bytedanse' (did you mean 'bytedance'?)"),
        (1, "b-refs", "unknown exercise 'no-such-exercise'"),
    ],
    "python_tag.yaml": [(4, None, "unsafe tag !!python/object/apply:os.system is not allowed")],
    "three_problems.yaml": [
        (3, "b-three-1", "field 'difficulty'"),
        (7, "b-three-2", "unknown topic 'nope'"),
        (13, "b-three-3", "missing field 'answer'"),
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_error_kind_is_located(name: str) -> None:
    _, problems = check_bank([BROKEN / name])
    expected = CASES[name]
    found = [(p.line, p.qid, p.message) for p in problems]
    for line, qid, message in expected:
        assert any((fl, fq) == (line, qid) and fm.startswith(message) for fl, fq, fm in found), (
            f"expected {line} {qid} {message!r} in {found}"
        )
    assert all(p.path.endswith(name) for p in problems)


def test_python_tag_is_never_constructed(tmp_path) -> None:
    marker = tmp_path / "pwned"
    bad = tmp_path / "q.yaml"
    bad.write_text(
        "- id: x-tag\n  topic: gpu\n  difficulty: easy\n"
        f"  question: !!python/object/apply:os.system ['touch {marker}']\n"
        "  answer: Thirty-two threads.\n  key_points: [a]\n"
    )
    _, problems = check_bank([bad])
    assert problems and not marker.exists()


def test_duplicates_across_files_and_aliases() -> None:
    _, problems = check_bank([BROKEN / "dup"])
    messages = [(p.path.rsplit("/", 1)[-1], p.line, p.message) for p in problems]
    assert any(
        (f, ln) == ("b.yaml", 8)
        and m.startswith("duplicate id 'b-dup' (first defined at ")
        and m.endswith("dup/a.yaml:1)")
        for f, ln, m in messages
    ), messages
    assert any(m.startswith("duplicate id 'b-old'") and ln == 15 for _, ln, m in messages)


def test_cli_reports_all_three_and_exits_1(capsys) -> None:
    code = entry(["bank", "validate", str(BROKEN / "three_problems.yaml")])
    err = capsys.readouterr().err
    assert code == 1
    lines = [line for line in err.splitlines() if "three_problems.yaml:" in line]
    assert len(lines) == 3
    assert "three_problems.yaml:13: [b-three-3] missing field 'answer'" in err


def test_builtin_bank_is_valid_with_reference_counts(capsys) -> None:
    code = entry(["bank", "validate"])
    out = capsys.readouterr()
    assert code == 0, out.err
    for part in ("65 companies", "28 topics", "329 themes", "181 interviews"):
        assert part in out.out


def test_companies_derived_from_writeups(small_bank) -> None:
    q = small_bank.questions["t-lru"]
    asking = [i for i in small_bank.interviews.values() if "algo-code-lru-cache" in i.themes]
    assert q.times_asked == len(asking) > 0
    assert sum(q.asked_by.values()) == len(asking)
    theme = small_bank.themes["algo-code-lru-cache"]
    assert q.asked_by == theme.asked_by  # one theme: exactly the theme's counts
