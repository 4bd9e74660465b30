"""A LiteLLM callback that repairs each request's messages before LiteLLM sends them.

In a LiteLLM proxy (``config.yaml``)::

    litellm_settings:
      callbacks: turnkeeper_hook.callback     # turnkeeper_hook.py: callback = TurnkeeperCallback()

With the LiteLLM SDK::

    import litellm
    from turnkeeper.litellm import TurnkeeperCallback
    litellm.callbacks = [TurnkeeperCallback()]

``async_pre_call_hook`` (the proxy, before a deployment is chosen) and
``async_pre_call_deployment_hook`` (the SDK and the router, just before the call) both repair
``messages``: OpenAI Chat messages for the chat and completion routes, Anthropic messages (with
``system`` beside them) for ``/v1/messages``. The body turnkeeper judges is the request's
``model``, ``messages`` and the parameters the rules read (``tools``, ``thinking``,
``reasoning_effort``, ...). A request that needs nothing is returned untouched, so LiteLLM sends
the bytes it would have sent without the callback; a repaired one gets the new ``messages`` (and
any parameter the repair set, such as ``thinking``). Every change is logged on the
``turnkeeper`` logger at INFO. A thinking block is never altered.

``async_post_call_failure_hook`` classifies a failed call and logs what turnkeeper would do
(LiteLLM gives a callback no way to send the request again; the next request of the
conversation is repaired on its way).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Optional, Union

import litellm as _litellm
from litellm.integrations.custom_logger import CustomLogger

from . import _errors
from ._native import TurnStore, classify, repair

__all__ = ["TurnkeeperCallback"]

log = logging.getLogger("turnkeeper")

# Request parameters the rules read besides the messages.
_PARAMS = (
    "system",
    "tools",
    "tool_choice",
    "thinking",
    "reasoning_effort",
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
)


def _plain(o: Any) -> Any:
    """JSON for the objects LiteLLM lets into messages (pydantic models of earlier responses)."""
    dump = getattr(o, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True)
    return dict(o)


def _target_model(model: str, data: dict) -> str:
    """The model as the provider sees it: LiteLLM's ``deepseek/deepseek-reasoner`` is
    DeepSeek's ``deepseek-reasoner`` (turnkeeper would read the prefix as a router's, and a
    router is judged more leniently), ``openrouter/anthropic/claude-...`` is OpenRouter's
    ``anthropic/claude-...``. A name LiteLLM does not know (a proxy alias) is kept."""
    try:
        bare = _litellm.get_llm_provider(
            model=model,
            custom_llm_provider=data.get("custom_llm_provider"),
            api_base=data.get("api_base"),
        )[0]
    except Exception:  # noqa: BLE001 - LiteLLM raises several kinds for an unknown name
        return model
    return bare if isinstance(bare, str) and bare else model


def _call_type_name(call_type: Any) -> str:
    return str(getattr(call_type, "value", call_type) or "")


class TurnkeeperCallback(CustomLogger):
    """Repairs ``messages`` before LiteLLM sends them (see the module's documentation).

    ``model`` overrides the model the rules are chosen by (a proxy alias tells turnkeeper
    nothing: give the real model here); ``thinking`` and ``store`` are as for
    :func:`turnkeeper.repair`; other keyword arguments go to :func:`turnkeeper.repair`.
    """

    def __init__(
        self,
        model: Optional[str] = None,
        thinking: Optional[str] = None,
        store: Union[TurnStore, str, None] = None,
        **options: Any,
    ) -> None:
        super().__init__()
        self.model = model
        self.thinking = thinking
        self.store = TurnStore(store) if isinstance(store, str) else store
        self.options = options
        #: What the last repair did (its ``changes``, ``request_changes``, ``findings_left``),
        #: or ``None`` when it changed nothing.
        self.last_report: Optional[dict] = None

    def repair_request(self, data: dict, call_type: Any = None) -> Optional[dict]:
        """The repaired request (a new dict), or ``None`` when ``data`` needs no change."""
        messages = data.get("messages")
        if not isinstance(messages, list) or not messages:
            return None
        anthropic = "anthropic_messages" in _call_type_name(call_type)
        body: dict[str, Any] = {}
        model = self.model or data.get("model")
        if isinstance(model, str):
            if self.model is None:
                model = _target_model(model, data)
            body["model"] = model
        for key in _PARAMS:
            if data.get(key) is not None:
                body[key] = data[key]
        body["messages"] = messages
        try:
            text = json.dumps(body, ensure_ascii=False, default=_plain)
            fixed = repair(
                text,
                thinking=self.thinking,
                format="anthropic" if anthropic else "chat",
                store=self.store,
                **self.options,
            )
        except (TypeError, ValueError, _errors.TurnkeeperError) as e:
            log.debug("turnkeeper: request left as it is: %s", e)
            return None
        if fixed["body"] is text:
            self.last_report = None
            return None
        self.last_report = {k: fixed[k] for k in ("changes", "request_changes", "findings_left")}
        for c in fixed["changes"]:
            log.info(
                "turnkeeper repair %s %s: %s (model %s)",
                c.get("rule"),
                c.get("path"),
                c.get("reason"),
                model,
            )
        new = json.loads(fixed["body"])
        out = dict(data)
        out["messages"] = new["messages"]
        for rc in fixed["request_changes"]:
            if rc.get("kind") == "set_param" and rc.get("key") in new:
                out[rc["key"]] = new[rc["key"]]
        return out

    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict, call_type: Any
    ) -> Optional[dict]:
        """The proxy's hook: returns the repaired request, or ``data`` as it came."""
        fixed = self.repair_request(data, call_type)
        return data if fixed is None else fixed

    async def async_pre_call_deployment_hook(
        self, kwargs: dict, call_type: Any
    ) -> Optional[dict]:
        """The SDK's and router's hook, after the deployment is chosen: the repaired call
        arguments, or ``None`` to leave them."""
        return self.repair_request(kwargs, call_type)

    async def async_post_call_failure_hook(
        self,
        request_data: dict,
        original_exception: Exception,
        user_api_key_dict: Any,
        traceback_str: Optional[str] = None,
    ) -> None:
        """Logs what the failure was and what turnkeeper would do about it."""
        status = getattr(original_exception, "status_code", None)
        d = classify(str(original_exception), status=status if isinstance(status, int) else None)
        log.warning(
            "turnkeeper: %s (%s) at %s; next: %s",
            d["kind"],
            d["provider"],
            d["location"],
            d["action"]["type"],
        )
        return None
