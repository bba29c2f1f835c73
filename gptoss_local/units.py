"""Byte counts and durations as people read them."""

from __future__ import annotations

from gptoss_local.i18n import _, ngettext

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30


def size_text(n: float) -> str:
    """Bytes in the largest binary unit that keeps one digit before the point: '11.3 GiB'."""
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return ngettext("{n} byte", "{n} bytes", int(n)).format(n=int(n))


def gib(n: float) -> str:
    """Bytes as GiB with one decimal, e.g. '11.3 GiB' (also for small amounts: '0.4 GiB')."""
    return f"{n / GIB:.1f} GiB"


def duration(seconds: float) -> str:
    """'45 s', '3 min 5 s', '1 h 12 min' (in the user's language)."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return _("{seconds} s").format(seconds=seconds)
    if seconds < 3600:
        return _("{minutes} min {seconds} s").format(minutes=seconds // 60, seconds=seconds % 60)
    return _("{hours} h {minutes} min").format(hours=seconds // 3600, minutes=seconds % 3600 // 60)
