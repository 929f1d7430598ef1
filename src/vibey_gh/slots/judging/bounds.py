"""The bounds a step is held against (design §5), as the judge names them.

`Bounds` itself lives in `interfaces.bounds`: the config reads it from `[local_models.bounds]`
and the judge receives it, and the config (which `slots allowed` loads on every call) should
not load the judging package to get one data type.
"""

from __future__ import annotations

from ...interfaces.bounds import Bounds

__all__ = ["Bounds"]
