"""Output capped while it streams: the head and tail are kept, the middle only counted."""

from __future__ import annotations


class CappedOutput:
    """Keeps the first and last ``limit // 2`` bytes of a stream and counts what falls between."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit - limit // 2
        self.tail_limit = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Add ``chunk``; memory stays bounded by the limit whatever the stream's size."""
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self.tail_limit:
            self.tail += chunk[-self.tail_limit:]
            if len(self.tail) > 2 * self.tail_limit:  # trim rarely, keep feeds O(chunk)
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def cut_bytes(self) -> int:
        """Bytes dropped from the middle."""
        return self.total - len(self.head) - min(len(self.tail), self.tail_limit)

    def text(self) -> str:
        """Decoded output, with one marker line where the middle was cut."""
        tail = bytes(self.tail[-self.tail_limit:]) if self.tail_limit else b""
        head = self.head.decode("utf-8", errors="replace")
        if self.cut_bytes <= 0:
            return head + tail.decode("utf-8", errors="replace")
        return (
            head
            + f"\n[... {self.cut_bytes} bytes of output cut ...]\n"
            + tail.decode("utf-8", errors="replace")
        )
