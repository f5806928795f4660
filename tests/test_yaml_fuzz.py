"""Tagged, malformed and oversized YAML gives located problems, never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizzer.bank import cache, loader
from quizzer.bank.parse import MAX_FILE_BYTES
from quizzer.cli.main import entry

# The smallest reference data a question can point at, so each example parses in ~1 ms.
REFERENCE = {
    "companies.yaml": "- {id: acme, name: Acme, tier: T0, interviews: 1}\n",
    "topics.yaml": "- {id: gpu, name: GPU, interviews: 1}\n",
    "themes.yaml": "- {id: gpu-warps, topic: gpu, theme: Warps, interviews: 1, asked_by: {acme: 1}}\n",
    "interviews.yaml": "- {id: acme-1, company: acme, tier: T0, type: intern, themes: [gpu-warps]}\n",
}

QUESTION = [
    "- id: fz-question",
    "  topic: gpu",
    "  themes: [gpu-warps]",
    "  difficulty: easy",
    "  question: What is a warp, and how wide is it?",
    "  answer: Thirty-two threads that the SM schedules together.",
    "  key_points: [32 threads]",
]

TAGS = [
    "!!python/tuple",
    "!!python/object/apply:os.system",
    "!!python/name:os.system",
    "!foo",
    "!",
    "!!float",
    "!!bool",
    "!!int",
    "!!timestamp",
    "!!binary",
    "!!set",
    "!!omap",
    "!!pairs",
    "!!merge",
    "!!value",
    "!!str",
    "!!seq",
    "!!map",
    "!!null",
    "!<tag:yaml.org,2002:int>",
    "!<tag:example.com,2026:x>",
]
SCALARS = [
    "aGVsbG8=",
    "1e99999",
    "0x_ff",
    ".nan",
    "0b_",
    "0x_",
    "2026-02-30",
    "2026-01-01 25:61:61",
    "=",
    "~",
    "yes",
    "1:2:3",
    "-.inf",
    "'quoted'",
    '"\\x00 escaped"',
    "[a, b]",
    "{a: 1}",
    "[]",
    "{}",
    "*nowhere",
    "&anchor x",
    "*anchor",
    "|",
    ">-",
    "'unclosed",
    "[unclosed",
    "- item",
    "x: y: z",
    "@reserved",
    "%",
]
KEYS = [
    "id",
    "topic",
    "question",
    "answer",
    "key_points",
    "references",
    "exercise",
    "hint",
    "<<",
    "1",
    "2026-02-30",
    "? !!python/tuple [a, b]\n  ",
    "? !foo [a, b]\n  ",
    "? [a, b]\n  ",
    "? {a: 1}\n  ",
    "!!int 1e99999",
    "!!bool 0x_ff",
    "&k id",
    "*k",
]

scalars = st.one_of(
    st.sampled_from(SCALARS),
    st.builds(lambda tag, value: f"{tag} {value}", st.sampled_from(TAGS), st.sampled_from(SCALARS)),
    st.text(alphabet="ab:-[]{}!&*#'\"|>?,%@ \t\\", max_size=12),
)
entries = st.builds(
    lambda indent, key, value: f"{indent}{key}: {value}",
    st.sampled_from(["", " ", "  ", "   ", "    ", "\t", "  - "]),
    st.sampled_from(KEYS),
    scalars,
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """Real question lines, some dropped, mixed with tagged, malformed and mis-indented ones."""
    lines = [line for line in QUESTION if draw(st.integers(0, 9))]
    for _ in range(draw(st.integers(1, 5))):
        lines.insert(draw(st.integers(0, len(lines))), draw(entries))
    if draw(st.booleans()):
        lines += [line.replace("fz-question", "fz-second") for line in QUESTION]
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n---\n- x\n", "\n..."]))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A bank folder with tiny reference files and no questions, used as the built-in bank."""
    root = tmp_path_factory.mktemp("reference")
    for name, text in REFERENCE.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "questions").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "bank_dir", lambda: root)
        patch.setattr(cache, "bank_dir", lambda: root)
        yield root


def test_the_reference_fixture_loads_a_real_question(reference: Path, tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    path.write_text("\n".join(QUESTION) + "\n", encoding="utf-8")
    bank, problems = loader.check_bank([path])
    assert problems == [] and bank.questions["fz-question"].asked_by == {"acme": 1}


@settings(
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=documents())
def test_any_document_gives_a_bank_or_located_problems(
    reference: Path, tmp_path: Path, text: str
) -> None:
    marker = tmp_path / "constructed"
    path = tmp_path / "q.yaml"
    path.write_text(text.replace("os.system", f"os.system ['touch {marker}']"), encoding="utf-8")
    bank, problems = loader.check_bank([path])
    assert all(p.path.endswith("q.yaml") for p in problems)
    assert problems or "fz-question" in bank.questions or not text.startswith("- id:")
    assert not marker.exists()


REGRESSIONS = {
    "? !!python/tuple [a, b]\n  : 1": (8, "a key must be a single value, not a list"),
    "? !foo [a, b]\n  : 1": (8, "a key must be a single value, not a list; unknown tag !foo"),
    "hint: !!float aGVsbG8=": (8, "'aGVsbG8=' is not a valid float"),
    "hint: !!bool 1e99999": (8, "'1e99999' is not a valid bool"),
    "hint: !!bool 0x_ff": (8, "'0x_ff' is not a valid bool"),
    "hint: !!timestamp .nan": (8, "'.nan' is not a valid timestamp"),
    "hint: !!int 1e99999": (8, "'1e99999' is not a valid int"),
    "hint: 0b_": (8, "'0b_' is not a valid int"),
    "hint: 2026-02-30": (8, "'2026-02-30' is not a valid timestamp"),
    "hint: !!set [a]": (8, "tag !!set is not allowed"),
    "hint: !!str [a]": (8, "tag !!str does not fit a list"),
    "<<: {id: x}": (8, "merge keys ('<<') are not supported"),
    "hint: !!python/object/apply:os.system [true]": (8, "unsafe tag !!python/object/apply"),
}


def question_file(folder: Path, extra: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "q.yaml"
    path.write_text("\n".join(QUESTION) + "\n  " + extra + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("extra", sorted(REGRESSIONS))
def test_each_known_input_is_one_located_problem_in_validate(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str
) -> None:
    line, message = REGRESSIONS[extra]
    path = question_file(tmp_path / "mine", extra)
    code = entry(["bank", "validate", str(path)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert any(f"q.yaml:{line}:" in row and message in row for row in err.splitlines()), err


@pytest.mark.parametrize("extra", sorted(REGRESSIONS))
def test_each_known_input_is_one_line_for_a_command_with_an_extra_bank(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str
) -> None:
    line, message = REGRESSIONS[extra]
    question_file(tmp_path / "mine", extra)
    code = entry(["--bank", str(tmp_path / "mine"), "list"])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: bank is invalid: ") and f"q.yaml:{line}:" in err
    assert message in err


def test_a_file_over_the_size_limit_is_refused_unread(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.yaml"
    with big.open("w", encoding="utf-8") as handle:  # a comment: parsing it finds nothing
        handle.write("#" * (MAX_FILE_BYTES // 2) + "\n")
        handle.write("#" * (MAX_FILE_BYTES - MAX_FILE_BYTES // 2))
    assert big.stat().st_size == MAX_FILE_BYTES + 1
    code = entry(["bank", "validate", str(big)])
    err = capsys.readouterr().err.splitlines()
    assert code == 1
    assert err[0].endswith(
        "big.yaml: file is 4.0 MB; a bank file may be at most 4 MB; split it into several"
    )


def test_a_file_at_the_size_limit_is_parsed(reference: Path, tmp_path: Path) -> None:
    path = tmp_path / "edge.yaml"
    path.write_text("#" * MAX_FILE_BYTES, encoding="utf-8")
    _, problems = loader.check_bank([path])
    assert problems == []


def test_not_utf8_and_deep_nesting_are_located(reference: Path, tmp_path: Path) -> None:
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"- id: x\n  answer: \xff\n")
    deep = tmp_path / "deep.yaml"
    deep.write_text("- " * 3000 + "x\n", encoding="utf-8")
    _, problems = loader.check_bank([binary, deep])
    found = {(Path(p.path).name, p.line, p.message.split(":")[0]) for p in problems}
    assert ("binary.yaml", 2, "not UTF-8 text") in found
    assert ("deep.yaml", 1, "YAML syntax error") in found
