"""An httpx transport that repairs each request body before it is sent, for the ``anthropic`` and
``openai`` SDKs (and anything else built on httpx or its successor httpx2)::

    import anthropic
    from turnkeeper.httpx import RepairTransport

    client = anthropic.Anthropic(http_client=anthropic.DefaultHttpxClient(transport=RepairTransport()))

The ``anthropic`` (2.x) and ``openai`` (3.x) SDKs are built on ``httpx2``, older ones and LiteLLM
on ``httpx``. :class:`RepairTransport` and :class:`AsyncRepairTransport` are built on ``httpx2``
when it is installed, else on ``httpx``; :func:`transports` gives the pair for either module
(``transports(httpx)`` for a client of the ``httpx`` package when both are installed).

For each ``POST`` with a JSON body of a format turnkeeper reads (Anthropic Messages, OpenAI Chat
or Responses, Bedrock Converse, Gemini):

* the body is repaired (:func:`turnkeeper.repair`); a body that needs nothing goes out as the
  very bytes the SDK made. A repair that needs a header (an ``anthropic-beta`` value) adds it.
  Each change is logged on the ``turnkeeper`` logger at INFO.
* when the provider answers 400 and :func:`turnkeeper.classify` says a change to the body can
  fix it, :func:`turnkeeper.recover` makes that change and the request is sent once more; the
  second answer, whatever it is, goes back to the SDK. 429, 5xx and every other answer go back
  as they came (the SDK's own retries handle those).

Bodies turnkeeper cannot read go out unchanged. A thinking block is never altered.
:class:`AsyncRepairTransport` is the same for an ``AsyncClient`` (``AsyncAnthropic``,
``AsyncOpenAI``).
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType
from typing import Any, Callable, Optional, Union

from . import _errors
from ._native import Attempts, TurnStore, classify, recover, repair

__all__ = ["RepairTransport", "AsyncRepairTransport", "RepairEvent", "transports"]

log = logging.getLogger("turnkeeper")

# Actions of the planner that change the body: worth a second try. `retry` (the same body),
# `compact`, `fix_config` and `give_up` are for the caller.
_BODY_ACTIONS = frozenset(
    {
        "repair",
        "restore_from_store",
        "disable_thinking",
        "use_adaptive",
        "strip_thinking",
        "request_drop_block",
    }
)


class RepairEvent(dict):
    """What the transport did to one request, passed to ``on_event``: ``{"kind": "repair" |
    "recover", "url", "changes", "request_changes", "findings_left"}``, and for ``recover`` also
    ``diagnosis``, ``action`` and ``status`` (that of the retried request)."""


def _is_json(request: Any) -> bool:
    ctype = request.headers.get("content-type", "")
    return request.method == "POST" and ctype.split(";")[0].strip().lower() in (
        "application/json",
        "",
    )


def _with_body(request: Any, body: bytes, headers: list[tuple[str, str]]) -> Any:
    """A copy of ``request`` (of its own module's ``Request`` class) with a new body and extra
    headers (``anthropic-beta`` values are added to those already there)."""
    new_headers = type(request.headers)(request.headers)
    new_headers["content-length"] = str(len(body))
    for name, value in headers:
        old = new_headers.get(name)
        if name.lower() == "anthropic-beta" and old:
            values = [v.strip() for v in old.split(",")]
            if value not in values:
                new_headers[name] = f"{old},{value}"
        else:
            new_headers[name] = value
    return type(request)(
        request.method,
        request.url,
        headers=new_headers,
        content=body,
        extensions=request.extensions,
    )


class _Core:
    """What the sync and async transports share: everything but the sending."""

    def __init__(
        self,
        *,
        model: Optional[str],
        thinking: Optional[str],
        store: Union[TurnStore, str, None],
        recover: bool,
        on_event: Optional[Callable[[RepairEvent], Any]],
        options: dict[str, Any],
    ) -> None:
        self.model = model
        self.thinking = thinking
        self.store = TurnStore(store) if isinstance(store, str) else store
        self.recover = recover
        self.on_event = on_event
        self.options = options

    def _emit(self, event: RepairEvent) -> None:
        for c in event.get("changes", []):
            log.info(
                "turnkeeper %s %s %s: %s (%s)",
                event["kind"],
                c.get("rule"),
                c.get("path"),
                c.get("reason"),
                event.get("url"),
            )
        if self.on_event is not None:
            self.on_event(event)

    def prepare(self, request: Any) -> Any:
        """The request to send: repaired, or ``request`` itself."""
        if not _is_json(request):
            return request
        body = request.content
        if not body:
            return request
        try:
            fixed = repair(
                body,
                model=self.model,
                thinking=self.thinking,
                store=self.store,
                **self.options,
            )
        except _errors.TurnkeeperError as e:
            # Not a body turnkeeper reads (an embeddings call, a count_tokens body...): as it is.
            log.debug("turnkeeper: %s left as it is: %s", request.url, e)
            return request
        if fixed["body"] is body:
            return request
        headers = [
            ("anthropic-beta", rc["value"])
            for rc in fixed["request_changes"]
            if rc.get("kind") == "add_beta"
        ]
        self._emit(
            RepairEvent(
                kind="repair",
                url=str(request.url),
                changes=fixed["changes"],
                request_changes=fixed["request_changes"],
                findings_left=fixed["findings_left"],
            )
        )
        return _with_body(request, fixed["body"], headers)

    def retry_for(self, sent: Any, response: Any) -> Optional[tuple[Any, dict]]:
        """For a 400 a body change can fix: the request to send once more, and the recovery
        report. ``response`` has been read."""
        if not self.recover or response.status_code != 400 or not _is_json(sent):
            return None
        error = response.content
        diagnosis = classify(error, status=400)
        if diagnosis["action"]["type"] not in _BODY_ACTIONS:
            return None
        try:
            done = recover(
                sent.content,
                error,
                Attempts(),
                400,
                model=self.model,
                store=self.store,
            )
        except _errors.TurnkeeperError as e:
            log.debug("turnkeeper: no recovery for %s: %s", sent.url, e)
            return None
        if done["body"] is None or done["body"] is sent.content:
            return None
        headers = [(h["name"], h["value"]) for h in done["headers"]]
        return _with_body(sent, done["body"], headers), done

    def recovered(self, sent: Any, done: dict, status: int) -> None:
        self._emit(
            RepairEvent(
                kind="recover",
                url=str(sent.url),
                diagnosis=done["diagnosis"],
                action=done["action"],
                changes=done["changes"],
                request_changes=done["request_changes"],
                findings_left=done["findings_left"],
                status=status,
            )
        )

    def record(self, response: Any) -> None:
        """Keeps a whole JSON response in the turn store (streams are not read here)."""
        if self.store is None or response.status_code != 200:
            return
        if not response.headers.get("content-type", "").startswith("application/json"):
            return
        try:
            self.store.add(response.content)
        except _errors.TurnkeeperError:
            pass  # not a Messages response (a Chat completion, say): nothing to keep


_BUILT: dict[str, tuple[type, type]] = {}


def transports(mod: ModuleType) -> tuple[type, type]:
    """The ``(RepairTransport, AsyncRepairTransport)`` classes for the httpx-like module
    ``mod`` (``httpx`` or ``httpx2``): subclasses of its ``BaseTransport`` and
    ``AsyncBaseTransport``, sending through its ``HTTPTransport`` by default."""
    name = mod.__name__
    if name in _BUILT:
        return _BUILT[name]

    class RepairTransport(mod.BaseTransport):  # type: ignore[name-defined]
        """A sync httpx transport that repairs request bodies and recovers a fixable 400.

        ``transport`` is the transport to send through (default: ``mod.HTTPTransport()``).
        ``model`` and ``thinking`` override what the body says (as :func:`turnkeeper.repair`);
        ``store`` (a :class:`turnkeeper.TurnStore` or a directory) lets a repair put back an
        assistant turn the agent altered, and whole JSON responses are recorded in it; ``recover``
        turns the retry on a 400 off; ``on_event`` is called with a :class:`RepairEvent` for each
        repair and recovery. Other keyword arguments go to :func:`turnkeeper.repair` (``betas``,
        ``on_missing_thinking``, ...).
        """

        def __init__(
            self,
            transport: Optional[Any] = None,
            *,
            model: Optional[str] = None,
            thinking: Optional[str] = None,
            store: Union[TurnStore, str, None] = None,
            recover: bool = True,
            on_event: Optional[Callable[[RepairEvent], Any]] = None,
            **options: Any,
        ) -> None:
            self._inner = transport if transport is not None else mod.HTTPTransport()
            self._core = _Core(
                model=model,
                thinking=thinking,
                store=store,
                recover=recover,
                on_event=on_event,
                options=options,
            )

        def handle_request(self, request: Any) -> Any:
            request.read()
            sent = self._core.prepare(request)
            response = self._inner.handle_request(sent)
            if response.status_code == 400 and self._core.recover:
                response.read()
                again = self._core.retry_for(sent, response)
                if again is not None:
                    retry, done = again
                    response.close()
                    response = self._inner.handle_request(retry)
                    self._core.recovered(retry, done, response.status_code)
            if self._core.store is not None and response.status_code == 200:
                if response.headers.get("content-type", "").startswith("application/json"):
                    response.read()
                    self._core.record(response)
            return response

        def close(self) -> None:
            self._inner.close()


    class AsyncRepairTransport(mod.AsyncBaseTransport):  # type: ignore[name-defined]
        """:class:`RepairTransport` for an ``AsyncClient``; the same arguments, ``transport``
        being an async one (default: ``mod.AsyncHTTPTransport()``)."""

        def __init__(
            self,
            transport: Optional[Any] = None,
            *,
            model: Optional[str] = None,
            thinking: Optional[str] = None,
            store: Union[TurnStore, str, None] = None,
            recover: bool = True,
            on_event: Optional[Callable[[RepairEvent], Any]] = None,
            **options: Any,
        ) -> None:
            self._inner = transport if transport is not None else mod.AsyncHTTPTransport()
            self._core = _Core(
                model=model,
                thinking=thinking,
                store=store,
                recover=recover,
                on_event=on_event,
                options=options,
            )

        async def handle_async_request(self, request: Any) -> Any:
            await request.aread()
            sent = self._core.prepare(request)
            response = await self._inner.handle_async_request(sent)
            if response.status_code == 400 and self._core.recover:
                await response.aread()
                again = self._core.retry_for(sent, response)
                if again is not None:
                    retry, done = again
                    await response.aclose()
                    response = await self._inner.handle_async_request(retry)
                    self._core.recovered(retry, done, response.status_code)
            if self._core.store is not None and response.status_code == 200:
                if response.headers.get("content-type", "").startswith("application/json"):
                    await response.aread()
                    self._core.record(response)
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

    RepairTransport.__module__ = AsyncRepairTransport.__module__ = __name__
    RepairTransport.__qualname__ = f"RepairTransport[{name}]"
    AsyncRepairTransport.__qualname__ = f"AsyncRepairTransport[{name}]"
    _BUILT[name] = (RepairTransport, AsyncRepairTransport)
    return _BUILT[name]


def _default_module() -> ModuleType:
    try:
        return importlib.import_module("httpx2")
    except ImportError:
        return importlib.import_module("httpx")


RepairTransport, AsyncRepairTransport = transports(_default_module())
