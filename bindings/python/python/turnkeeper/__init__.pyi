"""Type stubs of turnkeeper (the functions are implemented in Rust, turnkeeper._native)."""

import os
import pathlib
from typing import Literal, Optional, Sequence, TypedDict, TypeVar, Union

from ._errors import (
    AttemptsError as AttemptsError,
    FormatError as FormatError,
    OptionError as OptionError,
    ReadError as ReadError,
    RepairError as RepairError,
    StoreError as StoreError,
    TurnkeeperError as TurnkeeperError,
)

__version__: str

Body = TypeVar("Body", str, bytes)
FormatName = Literal["auto", "anthropic", "opencode", "gemini", "chat", "responses", "converse"]
Thinking = Literal["enabled", "adaptive", "disabled"]
MissingThinking = Literal["restore", "disable-thinking", "adaptive", "close-loop", "fail"]
PrefixEdit = Literal["strip-after-edit", "drop-block", "fail"]
StoreLike = Union["TurnStore", str, os.PathLike[str]]

class Finding(TypedDict, total=False):
    """One finding, as `turnkeeper check --json` prints it. An OpenCode export's findings also
    carry the OpenCode message and part they come from."""

    rule: str
    severity: Literal["error", "warning", "info"]
    path: str
    message_index: Optional[int]
    block_index: Optional[int]
    message: str
    repair: Optional[str]

class CheckResult(TypedDict, total=False):
    findings: list[Finding]
    # An OpenCode export only: the model it was checked against.
    model: Optional[str]

class Change(TypedDict, total=False):
    """One change a repair made: rule, action, location, reason (and the thinking block's
    fingerprint when one was removed whole)."""

    rule: str
    action: str
    path: str
    reason: str
    fingerprint: str

class RequestChange(TypedDict, total=False):
    """A change outside the messages: ``{"kind": "set_param", "key", "value", "rule"}`` (the
    body already carries it) or ``{"kind": "add_beta", "value", "rule"}`` (send the header)."""

    kind: Literal["set_param", "add_beta"]
    key: str
    value: str
    rule: str

class RepairResult(TypedDict):
    """`turnkeeper repair --report`'s fields and the body: of the caller's type, and the very
    object passed in when nothing needed repair."""

    body: Union[str, bytes]
    changes: list[Change]
    request_changes: list[RequestChange]
    findings_left: list[Finding]

class Location(TypedDict):
    message: Optional[int]
    block: Optional[int]

class Action(TypedDict, total=False):
    """The planner's next step: ``type`` is one of retry, repair, restore_from_store,
    disable_thinking, use_adaptive, strip_thinking, request_drop_block, fix_config, compact,
    give_up; the other keys depend on it."""

    type: str

class Diagnosis(TypedDict, total=False):
    """`turnkeeper classify --json`'s fields (with ``action``, the plan with no attempts yet)."""

    kind: str
    retryable: bool
    provider: str
    status: Optional[int]
    location: Location
    message: str
    tool_use_ids: list[str]
    reasoning_ids: list[str]
    item_ids: list[str]
    tokens: Optional[dict[str, Optional[int]]]
    prefix_binding: bool
    quota_exhausted: bool
    retry_after_ms: Optional[int]
    config: Optional[str]
    param: Optional[str]
    action: Action

class Header(TypedDict):
    name: str
    value: str

class RecoverResult(TypedDict):
    """`turnkeeper recover --report`'s fields, and ``body``: what to send (with ``headers``),
    ``None`` when the outcome is to hand back."""

    body: Optional[Union[str, bytes]]
    diagnosis: Diagnosis
    action: Action
    outcome: Literal["send", "hand_back"]
    wait_ms: Optional[int]
    headers: list[Header]
    changes: list[Change]
    request_changes: list[RequestChange]
    addressing: list[int]
    findings_left: list[Finding]
    skipped: list[dict]
    notes: list[str]
    attempts: int

class InspectResult(TypedDict, total=False):
    """`turnkeeper inspect --json`'s fields. Block transcripts: format, why, body, model,
    messages, blocks, thinking. Chat bodies also: provider, routed, tools, rows."""

    format: str
    why: str
    body: Literal["request", "response"]
    model: Optional[str]
    messages: int
    blocks: dict[str, int]
    thinking: Optional[str]
    provider: str
    routed: Optional[str]
    tools: int
    rows: list[dict]

def check(
    body: Union[str, bytes],
    model: Optional[str] = None,
    thinking: Optional[Thinking] = None,
    format: Optional[FormatName] = None,
    store: Optional[StoreLike] = None,
    *,
    betas: Optional[Sequence[str]] = None,
    profile: Optional[Union[str, os.PathLike[str]]] = None,
    on_missing_thinking: Optional[Sequence[MissingThinking]] = None,
    on_prefix_edit: Optional[PrefixEdit] = None,
) -> CheckResult:
    """Checks a transcript (Anthropic, Gemini, OpenCode export, OpenAI Chat or Responses,
    Bedrock Converse; told from the body unless ``format`` says). The GIL is released.

    Raises ReadError, FormatError, OptionError, StoreError."""

def repair(
    body: Body,
    model: Optional[str] = None,
    thinking: Optional[Thinking] = None,
    format: Optional[FormatName] = None,
    store: Optional[StoreLike] = None,
    *,
    betas: Optional[Sequence[str]] = None,
    profile: Optional[Union[str, os.PathLike[str]]] = None,
    on_missing_thinking: Optional[Sequence[MissingThinking]] = None,
    on_prefix_edit: Optional[PrefixEdit] = None,
) -> RepairResult:
    """Repairs a transcript; never alters a thinking block. The GIL is released.

    Raises ReadError, FormatError (an OpenCode export too: check it instead), RepairError,
    OptionError, StoreError."""

def inspect(body: Union[str, bytes], format: Optional[FormatName] = None) -> InspectResult:
    """Format, model, messages, blocks by type, thinking mode."""

def classify(error: Union[str, bytes], status: Optional[int] = None) -> Diagnosis:
    """What a provider error (however wrapped) means, where it points and what to do."""

def recover(
    request: Body,
    error: Union[str, bytes],
    attempts: Optional[Attempts] = None,
    status: Optional[int] = None,
    *,
    model: Optional[str] = None,
    betas: Optional[Sequence[str]] = None,
    store: Optional[StoreLike] = None,
) -> RecoverResult:
    """Classifies ``error``, plans the next step (escalating with ``attempts``, which is
    updated) and applies it to ``request``, the body that failed."""

class TurnStore:
    """Provider responses as they arrived, so that a repair can put back a turn an agent
    altered. With a path, a directory kept in step (as `turnkeeper store add`)."""

    def __init__(self, path: Optional[Union[str, os.PathLike[str]]] = None) -> None: ...
    def add(self, response: Union[str, bytes]) -> Optional[str]:
        """Records a response (JSON or its SSE stream); returns its id. Raises StoreError."""
    @property
    def path(self) -> Optional[pathlib.Path]: ...
    @property
    def problems(self) -> list[str]: ...
    def __len__(self) -> int: ...

class Attempts:
    """The attempts made at one conversation's errors (the CLI's attempts file)."""

    def __init__(self) -> None: ...
    @staticmethod
    def from_json(text: str) -> Attempts: ...
    def to_json(self) -> str: ...
    @property
    def sent(self) -> int: ...
    def __len__(self) -> int: ...
