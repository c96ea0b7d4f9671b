"""Every Python code block of README.md and docs/*.md runs on its own, and prints what it shows.

A block either defines everything it uses, or its first line says where the rest comes from
(``# continues the block above (X, y)``): then it runs after the blocks before it, in their
namespace, as a reader pasting them in order would. Each chain of blocks runs in a fresh
Python process (blocks change process-wide settings and environment variables) in a
temporary folder (blocks write files).

Shown output is checked in two forms: comment lines right under a statement that prints
(``print(...)`` then ``# test accuracy 0.987``), and a ```` ```text ```` block right under a
code block (its whole output). Text must match; numbers within 1 % or two units of their last
printed digit, whichever is more (scores on held-out rows move by one prediction when another
BLAS rounds differently), and numbers in scientific notation — rounding-level values such as
2e-11 — within a factor of 100 (or exactly 0). A shown line with ``...`` matches any text
in its place (doctest's ELLIPSIS), for values another CPU's rounding changes by more (or
timings); the numbers around it are compared as numbers.

docs/kernel_methods.md runs in tests/test_kernel_methods_guide.py, which also asserts its
claims; here only its blocks' headers are checked. No document holds a placeholder
(``MEASURED_TABLE``, ``TODO``, ``XXX``, ``TBD``, ``FIXME``): a number still to be measured
is a missing number, whatever the text around it says. The Dask examples run on fewer rows
(``SHRINK``): the same code, sized for a test.
"""

from __future__ import annotations

import ast
import builtins
import doctest
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Documents whose blocks another test runs (with their claims asserted).
DEDICATED = {"docs/kernel_methods.md": "tests/test_kernel_methods_guide.py"}
#: The first line of a block that continues the ones before it.
CONTINUES = re.compile(r"^# .*\b(from|continues)\b.*\babove\b")
#: Row counts of the Dask examples, made smaller for the test: {document: {text: text}},
#: applied to the blocks that use Dask.
SHRINK = {
    "README.md": {"400_000": "20_000", "50_000": "5_000"},
    "docs/dask.md": {"5_000_000": "40_000", "100_000": "10_000"},
}
#: In shown output, stands for any text (doctest's ELLIPSIS).
ELLIPSIS = "..."
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
       "MPLBACKEND": "Agg"}


@dataclass
class Step:
    """One statement (or doctest example) and the output the document shows for it."""

    source: str
    shown: str | None = None


@dataclass
class Block:
    document: str
    line: int
    code: str
    shown: str | None = None  # a ```text block right under it
    steps: list[Step] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.document}:{self.line}"

    @property
    def continues(self) -> bool:
        return bool(CONTINUES.match(self.code.lstrip()))


# ------------------------------------------------------------------ reading the documents
def _steps(code: str) -> list[Step]:
    """The block's statements with the comment lines that show their printed output."""
    if code.lstrip().startswith(">>>"):
        examples = doctest.DocTestParser().get_examples(code)
        return [Step(e.source, e.want or None) for e in examples]
    lines = code.splitlines()
    tree = ast.parse(code)
    steps = []
    for statement in tree.body:
        source = "\n".join(lines[statement.lineno - 1:statement.end_lineno])
        shown = []
        if "print(" in source:
            for line in lines[statement.end_lineno:]:
                if not line.startswith("#"):
                    break
                shown.append(line[2:] if line.startswith("# ") else line[1:])
        steps.append(Step(source, "\n".join(shown) if shown else None))
    return steps


def read_blocks(path: Path) -> list[Block]:
    text = path.read_text()
    document = str(path.relative_to(ROOT))
    blocks: list[Block] = []
    previous_end = -1
    for fence in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.M | re.S):
        language, body = fence.group(1), fence.group(2)
        if language == "python":
            line = text.count("\n", 0, fence.start()) + 1
            blocks.append(Block(document, line, body, steps=_steps(body)))
        elif (language == "text" and blocks and previous_end >= 0
              and not text[previous_end:fence.start()].strip()):
            blocks[-1].shown = body
        previous_end = fence.end() if language == "python" else -1
    return blocks


def free_names(code: str) -> set[str]:
    """Names a block reads without defining or importing them (builtins aside)."""
    if code.lstrip().startswith(">>>"):
        code = "\n".join(e.source for e in doctest.DocTestParser().get_examples(code))
    tree = ast.parse(code)
    defined, used = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
    return used - defined


ALL_BLOCKS = [block for path in DOCUMENTS for block in read_blocks(path)]


def chains() -> list[list[Block]]:
    """Blocks grouped as they run: each standalone block with the blocks continuing it."""
    groups: list[list[Block]] = []
    for block in ALL_BLOCKS:
        if block.document in DEDICATED:
            continue
        if block.continues and groups and groups[-1][0].document == block.document:
            groups[-1].append(block)
        else:
            groups.append([block])
    return groups


# ------------------------------------------------------------------ running them
DRIVER = r'''
import contextlib, io, json, sys

def main():
    steps, out = json.loads(sys.stdin.read()), []
    namespace = {"__name__": "__main__"}
    for step in steps:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(compile(step["source"], step["where"], "exec"), namespace)
        out.append(buffer.getvalue())
    print(json.dumps(out))

if __name__ == "__main__":  # worker processes (Dask) import this file: run nothing there
    main()
'''


def run_chain(chain: list[Block], folder: Path) -> list[list[str]]:
    """Each block's per-step output, from one fresh Python process."""
    steps = []
    for block in chain:
        shrink = SHRINK.get(block.document, {}) if "dask" in block.code else {}
        for step in block.steps:
            source = step.source
            if source.startswith((">>>", "...")):  # never: doctest sources come unprefixed
                raise AssertionError(source)
            for old, new in shrink.items():
                source = source.replace(old, new)
            steps.append({"source": source, "where": block.name})
    driver = folder / "run_doc_blocks.py"
    driver.write_text(DRIVER)
    result = subprocess.run([sys.executable, str(driver)], input=json.dumps(steps),
                            capture_output=True, text=True, cwd=folder, env=ENV, timeout=600)
    assert result.returncode == 0, f"{chain[0].name} failed:\n{result.stderr[-3000:]}"
    outputs = json.loads(result.stdout.strip().splitlines()[-1])
    per_block, start = [], 0
    for block in chain:
        per_block.append(outputs[start:start + len(block.steps)])
        start += len(block.steps)
    return per_block


def assert_number_agrees(got: str, want: str, where: Any) -> None:
    """A printed number against the shown one (the tolerances of the module docstring)."""
    if "e" in want.lower():
        # A rounding-level value: within a factor of 100, or exactly 0 (arithmetic that
        # happens to be exact on this CPU).
        ratio_ok = abs(float(want)) / 100 <= abs(float(got)) <= abs(float(want)) * 100
        assert float(got) == 0 or ratio_ok, where
    else:
        decimals = len(want.split(".")[1]) if "." in want else 0
        tolerance = max(2 * 10.0 ** -decimals, 0.01 * abs(float(want))) + 1e-12
        assert abs(float(got) - float(want)) <= tolerance, where


def assert_same_output(printed: str, shown: str, where: str) -> None:
    printed_lines = [line.rstrip() for line in printed.strip().splitlines()]
    shown_lines = [line.rstrip() for line in shown.strip().splitlines()]
    assert len(printed_lines) == len(shown_lines), (where, printed, shown)
    for got, want in zip(printed_lines, shown_lines, strict=True):
        if ELLIPSIS in want:
            # Doctest's convention: "..." stands for text that depends on the machine (a ratio of
            # two rounding errors, which another CPU's BLAS kernels change by tens of per cent).
            # The numbers around it are still numbers: compared with the tolerances below.
            numbers = [NUMBER.findall(part) for part in want.split(ELLIPSIS)]
            pattern = ".*?".join("".join(
                f"({NUMBER.pattern})" if i % 2 else re.escape(piece)
                for i, piece in enumerate(_split_numbers(part))) for part in want.split(ELLIPSIS))
            match = re.fullmatch(pattern, got)
            assert match, (where, got, want)
            shown_numbers = [n for part in numbers for n in part]
            for a, b in zip(match.groups(), shown_numbers, strict=True):
                assert_number_agrees(a, b, (where, got, want))
            continue
        assert NUMBER.sub("#", got).split() == NUMBER.sub("#", want).split(), (where, got, want)
        for a, b in zip(NUMBER.findall(got), NUMBER.findall(want), strict=True):
            assert_number_agrees(a, b, (where, got, want))


def _split_numbers(text: str) -> list[str]:
    """``text`` as [text, number, text, number, …, text]."""
    pieces, start = [], 0
    for match in NUMBER.finditer(text):
        pieces += [text[start:match.start()], match.group()]
        start = match.end()
    return [*pieces, text[start:]]


# ------------------------------------------------------------------ the tests
def test_blocks_are_found():
    documents = {block.document for block in ALL_BLOCKS}
    assert {"README.md", "docs/kernels.md", "docs/dask.md", "docs/kernel_methods.md"} <= documents
    assert len(ALL_BLOCKS) >= 20


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=lambda b: b.name)
def test_every_block_defines_its_names_or_says_where_they_come_from(block):
    names = free_names(block.code)
    assert not names or block.continues, (
        f"{block.name} uses {sorted(names)} without defining them; define them, or start "
        "the block with a comment saying where they come from ('# continues the block above "
        "(X, y)')")
    if block.continues:  # and then there is a block above to continue
        index = ALL_BLOCKS.index(block)
        assert index > 0 and ALL_BLOCKS[index - 1].document == block.document, block.name


def test_printed_output_is_shown_where_numbers_are_claimed():
    # A comment with a number right under a print is output: it must not be a stray note.
    for block in ALL_BLOCKS:
        for step in block.steps:
            if step.shown is not None:
                assert "print(" in step.source or block.code.lstrip().startswith(">>>")


@pytest.mark.parametrize("chain", chains(), ids=lambda chain: chain[0].name)
def test_blocks_run_and_print_what_they_show(chain, tmp_path):
    for block, outputs in zip(chain, run_chain(chain, tmp_path), strict=True):
        for step, printed in zip(block.steps, outputs, strict=True):
            if step.shown is not None:
                assert_same_output(printed, step.shown, f"{block.name}: {step.source[:60]}")
        if block.shown is not None:
            assert_same_output("".join(outputs), block.shown, block.name)


def test_dedicated_documents_have_their_test():
    for document, test in DEDICATED.items():
        assert (ROOT / document).exists() and (ROOT / test).exists()
        assert document.split("/")[-1] in (ROOT / test).read_text()


#: Words that mark text still to be written. An all-caps word with an underscore
#: (``MEASURED_TABLE``, ``RESULTS_HERE``) is one too: the docs' names of constants are in
#: backticks and are checked against the code elsewhere.
PLACEHOLDER = re.compile(r"\b(?:TODO|TBD|FIXME|XXX+)\b"
                         r"|(?<![`\w.])[A-Z]{2,}(?:_[A-Z]{2,})+(?![`\w])")


def placeholders(text: str) -> list[str]:
    """The placeholders of a document's text, outside code spans and code blocks."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return PLACEHOLDER.findall(prose)


def test_no_placeholder_in_readme_or_docs():
    # docs/cli.md showed a literal MEASURED_TABLE where its measured table belonged.
    assert placeholders("Measured:\n\nMEASURED_TABLE\n") == ["MEASURED_TABLE"]
    assert placeholders("TODO: measure. It is TBD, see XXX.") == ["TODO", "TBD", "XXX"]
    assert placeholders("`EXACT_AUTO_MAX_TRAIN` rows; FALKON; K_MM; O(D log d)") == []
    found = {str(path.relative_to(ROOT)): placeholders(path.read_text())
             for path in [*DOCUMENTS, *sorted((ROOT / "docs").glob("*.rst"))]}
    assert not {document: words for document, words in found.items() if words}, found
