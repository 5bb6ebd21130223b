"""Properties every correct answer has, checked on the student's own pieces: each is written once
here and named after what it asks.
"""
from __future__ import annotations

from typing import Any

from course.handles import watching


def on_another_device(call: Any, *args: Any, mixing: str = "", **kwargs: Any) -> Any:
    """What `call` makes of arguments on another device (``meta``: shapes and devices, no numbers),
    described (device, dtype, shape) rather than sent; fails with `mixing` when its work mixed that
    device with the CPU (a tensor made in forward without ``device=``)."""
    with watching() as seen:
        described = call.describe(*args, **kwargs)
    assert not seen.mixed_devices, mixing or f"mixed devices in {sorted(seen.mixed_devices)}"
    return described
