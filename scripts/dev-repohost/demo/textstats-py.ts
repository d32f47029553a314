import type { DemoRepo } from "./demo-repo.js";

const PYPROJECT = `[project]
name = "textstats"
version = "0.1.0"
description = "Small text statistics"
requires-python = ">=3.9"

[tool.pytest.ini_options]
testpaths = ["tests"]
pythonpath = ["src"]
`;

const COUNTS = `"""Counting words and sentences."""
from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9']+")
_SENTENCE_END = re.compile(r"[.!?]+")


def words(text: str) -> list[str]:
    """The words of a text, in order."""
    return _WORD.findall(text)


def word_count(text: str) -> int:
    return len(words(text))


def sentence_count(text: str) -> int:
    return len([part for part in _SENTENCE_END.split(text) if part.strip()])


def average_word_length(text: str) -> float:
    found = words(text)
    if not found:
        return 0.0
    return sum(len(word) for word in found) / len(found)
`;

const INIT_BASE = `"""Small text statistics."""
from textstats.counts import average_word_length, sentence_count, word_count, words

__all__ = ["average_word_length", "sentence_count", "word_count", "words"]
`;

const INIT_READING = `"""Small text statistics."""
from textstats.counts import average_word_length, sentence_count, word_count, words
from textstats.reading import reading_time

__all__ = ["average_word_length", "reading_time", "sentence_count", "word_count", "words"]
`;

const READING = `"""Estimated reading time."""
from __future__ import annotations

import math

from textstats.counts import word_count


def reading_time(text: str, words_per_minute: int = 200) -> int:
    """Whole minutes needed to read a text, rounded up; 0 for a text without words."""
    if words_per_minute <= 0:
        raise ValueError("words_per_minute must be positive")
    return math.ceil(word_count(text) / words_per_minute)
`;

const TEST_COUNTS = `import pytest

import textstats


def test_word_count_ignores_punctuation():
    assert textstats.word_count("Hello, world! It's fine.") == 4


def test_word_count_of_empty_text_is_zero():
    assert textstats.word_count("") == 0


def test_sentence_count():
    assert textstats.sentence_count("One. Two! Three? ") == 3


def test_sentence_count_without_final_stop():
    assert textstats.sentence_count("Just one sentence") == 1


def test_average_word_length():
    assert textstats.average_word_length("ab abcd") == pytest.approx(3.0)


def test_average_word_length_of_empty_text_is_zero():
    assert textstats.average_word_length("   ") == 0.0
`;

// The module is used through the package so that, before the change, each test fails on
// its own (AttributeError) instead of the whole file failing to import.
const TEST_READING = `import pytest

import textstats


def test_reading_time_rounds_up_to_whole_minutes():
    assert textstats.reading_time("word " * 201) == 2


def test_reading_time_of_empty_text_is_zero():
    assert textstats.reading_time("") == 0


def test_reading_time_with_custom_speed():
    assert textstats.reading_time("word " * 100, words_per_minute=50) == 2


def test_reading_time_rejects_non_positive_speed():
    with pytest.raises(ValueError):
        textstats.reading_time("text", words_per_minute=0)
`;

const README = `# textstats

Word, sentence and average word length counts for plain text.

Run the tests with \`pytest\`.
`;

/** A Python package tested with pytest whose PR 1 adds reading_time with its tests. */
export function textstatsDemo(): DemoRepo {
  return {
    owner: "assay-demo",
    name: "textstats-py",
    files: {
      "pyproject.toml": PYPROJECT,
      "README.md": README,
      ".gitignore": "__pycache__/\n.pytest_cache/\n",
      "src/textstats/__init__.py": INIT_BASE,
      "src/textstats/counts.py": COUNTS,
      "tests/test_counts.py": TEST_COUNTS,
    },
    pulls: [
      {
        number: 1,
        title: "Add reading_time estimate",
        body: "Estimates whole minutes of reading at a given speed (200 words per minute by default).",
        changes: {
          "src/textstats/__init__.py": INIT_READING,
          "src/textstats/reading.py": READING,
          "tests/test_reading.py": TEST_READING,
          "README.md": README.replace("average word length counts", "average word length counts, and reading time"),
        },
      },
    ],
  };
}
