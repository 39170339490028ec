"""Whether an autocast region is active (on any device).

Inside an enabled ``torch.autocast`` region eager computes matmuls and convolutions in a lower
precision; native code computes in the annotated dtypes. So ``auto`` mode runs the Python
function (or the module itself) there. The private query costs about 50 ns a call; the public
one is its fallback.
"""

from __future__ import annotations

from typing import Callable


def enabled_query() -> Callable[[], bool]:
    """A function returning whether autocast is enabled now (resolved once; imports torch)."""
    import torch

    return getattr(torch._C, "_is_any_autocast_enabled", None) or (
        lambda: torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda")
    )
