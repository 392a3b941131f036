"""The one atomic writer: the old contents or the new, the mode asked for, no temp file left."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lintaid.files import write_atomic


def test_writes_text_and_bytes_with_the_mode_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        write_atomic(tmp_path / "a.json", '{"k": "é"}')
        write_atomic(tmp_path / "b.service", b"[Unit]\n", mode=0o644)
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == '{"k": "é"}'
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "b.service").stat().st_mode) == 0o644


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "status.json"
    write_atomic(target, "old")
    with pytest.raises(TypeError):
        write_atomic(target, 42)  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["status.json"]
