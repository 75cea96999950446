"""A project's own comparison for the tests of commands that judge as the project's crawl does:
the built-in content comparison, registered under its name, whose parts are of another version
(as any comparison of a project's own stores them); the built-in one cannot read them."""

from __future__ import annotations

from typing import ClassVar

from changewatch.core.comparisons.content import ContentComparison


class TunedContent(ContentComparison):
    part_version: ClassVar[int] = ContentComparison.part_version + 100
