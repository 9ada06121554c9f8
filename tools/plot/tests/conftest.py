"""Fixtures shared by the tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from synthetic import document, write


@pytest.fixture
def make_json(tmp_path: Path) -> Callable[..., Path]:
    """Write a synthetic document (with overrides) and return its path."""
    counter = iter(range(1000))

    def make(**kwargs: Any) -> Path:
        return write(tmp_path / f"run{next(counter)}.json", document(**kwargs))

    return make
