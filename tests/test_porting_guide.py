"""Every ```python block in docs/porting.md runs (standalone, in a fresh namespace), so the guide's before/after code
stays true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "porting.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", GUIDE.read_text(), flags=re.S | re.M)


def _block_id(index: int, code: str) -> str:
    heading = [h for h in re.findall(r"^#+ (.*?)(?: \{#(.*?)\})?$", GUIDE.read_text().split(code)[0], re.M)]
    anchor = heading[-1][1] or heading[-1][0] if heading else "intro"
    return f"{index}-{anchor}"


@pytest.mark.parametrize("code", BLOCKS, ids=[_block_id(i, c) for i, c in enumerate(BLOCKS)])
def test_guide_block_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(GUIDE), "exec"), {"__name__": "__porting_guide__"})


def test_the_guide_has_code_and_is_linked_from_the_readme():
    assert len(BLOCKS) >= 20
    assert "docs/porting.md" in (GUIDE.parents[1] / "README.md").read_text()
