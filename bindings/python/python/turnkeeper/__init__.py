"""turnkeeper: check, repair and recover LLM conversation transcripts before they are sent.

Every function takes the body as ``str`` or ``bytes`` and returns plain dicts whose fields are
those of the command line's ``--json`` / ``--report`` output. The GIL is released while the Rust
library works. A thinking block is never altered: it leaves byte for byte as it came, or not at
all, and every change is reported.

Helpers for the SDKs: :mod:`turnkeeper.httpx` (a transport for the ``anthropic`` and ``openai``
clients) and :mod:`turnkeeper.litellm` (a LiteLLM callback).
"""

from ._errors import (
    AttemptsError,
    FormatError,
    OptionError,
    ReadError,
    RepairError,
    StoreError,
    TurnkeeperError,
)
from ._native import (
    Attempts,
    TurnStore,
    __version__,
    check,
    classify,
    inspect,
    recover,
    repair,
)

__all__ = [
    "check",
    "repair",
    "inspect",
    "classify",
    "recover",
    "TurnStore",
    "Attempts",
    "TurnkeeperError",
    "ReadError",
    "FormatError",
    "RepairError",
    "StoreError",
    "AttemptsError",
    "OptionError",
    "__version__",
]
