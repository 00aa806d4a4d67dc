"""A tiny registry mapping short names to classes (policies, tools, sandboxes)."""

from __future__ import annotations

from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Short name -> class, filled by a decorator at import time."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, type[T]] = {}

    def register(self, name: str) -> Callable[[type[T]], type[T]]:
        """Decorator: register ``cls`` under ``name``."""

        def deco(cls: type[T]) -> type[T]:
            if name in self._items and self._items[name] is not cls:
                raise ValueError(f"{self.what} {name!r} registered twice")
            self._items[name] = cls
            cls.name = name  # type: ignore[attr-defined]
            return cls

        return deco

    def get(self, name: str) -> type[T]:
        """The class registered as ``name``; a one-line error listing the known names otherwise."""
        from codeagent.errors import InputError

        try:
            return self._items[name]
        except KeyError:
            from codeagent.suggest import did_you_mean

            known = ", ".join(sorted(self._items))
            raise InputError(f"unknown {self.what} {name!r}{did_you_mean(str(name), self._items)} (known: {known})") from None

    def names(self) -> list[str]:
        """All registered names, sorted."""
        return sorted(self._items)
