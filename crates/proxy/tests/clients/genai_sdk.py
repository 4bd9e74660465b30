"""Google's `google-genai` Python SDK against the proxy's Gemini route.

Run by tests/real_clients.rs with GENAI_BASE_URL pointing at the proxy (in front of the mock),
GENAI_MODEL naming a Gemini 3 model, and GENAI_FIRST / GENAI_NEXT / GENAI_STREAM naming the
recorded exchanges the mock replays (sent as `x-mock-reply`, a header the proxy forwards). Every
request body the SDK sends is captured with an httpx request hook; prints one JSON line per
call with what the SDK parsed and what it sent.

1. `generate_content` of a question with a tool: the recorded answer is a signed functionCall
   (the proxy records it in its turn store).
2. `generate_content_stream` (`:streamGenerateContent?alt=sse`) of the same question.
3. The follow-up an agent sends: the question, the model content as the SDK parsed it (its
   `thought_signature` kept), and the function's result.
4. The same follow-up with the call's `thought_signature` dropped.
"""
import base64
import json
import os
import sys
import time

import httpx

from google import genai
from google.genai import types

sent = []


def capture(request):
    sent.append({"path": request.url.path, "query": request.url.query.decode(), "body": request.read().decode()})


model = os.environ["GENAI_MODEL"]


clients = []


def client(reply):
    # Kept: a Client closes its httpx client when it is collected, under a stream being read.
    clients.append(genai.Client(
        api_key="test",
        http_options={
            "base_url": os.environ["GENAI_BASE_URL"],
            "headers": {"x-mock-reply": reply},
            "client_args": {"event_hooks": {"request": [capture]}, "trust_env": False},
            "timeout": 30_000,
        },
    ))
    return clients[-1]


weather = types.FunctionDeclaration(
    name="weather",
    description="Get weather information for a location",
    parameters=types.Schema(
        type="OBJECT",
        properties={"location": types.Schema(type="STRING", description="the city")},
        required=["location"],
    ),
)
config = types.GenerateContentConfig(
    system_instruction="You are a helpful assistant",
    max_output_tokens=4000,
    tools=[types.Tool(function_declarations=[weather])],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)
question = types.Content(role="user", parts=[types.Part(text="What's the weather in Florence,Italy?")])
out = []


def calls(content):
    return [p for p in content.parts or [] if p.function_call is not None]


first = client(os.environ["GENAI_FIRST"]).models.generate_content(
    model=model, contents=[question], config=config
)
content = first.candidates[0].content
call = calls(content)[0]
out.append(
    {
        "call": "generate_content",
        "function": call.function_call.name,
        "args": call.function_call.args,
        "signature": base64.b64encode(call.thought_signature).decode() if call.thought_signature else None,
        "sent": sent[-1],
    }
)

chunks = 0
stream_calls = 0
for chunk in client(os.environ["GENAI_STREAM"]).models.generate_content_stream(
    model=model, contents=[question], config=config
):
    chunks += 1
    for cand in chunk.candidates or []:
        if cand.content is not None:
            stream_calls += len(calls(cand.content))
out.append({"call": "generate_content_stream", "chunks": chunks, "function_calls": stream_calls, "sent": sent[-1]})


def wait_recorded(n):
    """Waits (up to 5 s) until the proxy has recorded `n` Gemini responses (its /metrics)."""
    line = 'turnkeeper_proxy_records_total{route="gemini",result="stored"} '
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text = httpx.get(os.environ["GENAI_BASE_URL"] + "/metrics", trust_env=False).text
        got = [int(l[len(line):]) for l in text.splitlines() if l.startswith(line)]
        if got and got[0] >= n:
            return
        time.sleep(0.02)
    raise SystemExit(f"the proxy did not record {n} Gemini responses")


# The answer to the first request (and the stream) are in the turn store before a follow-up.
wait_recorded(2)


def follow_up(model_content):
    result = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.function_call.id, name="weather", response={"result": "40 C"}
                )
            )
        ],
    )
    r = client(os.environ["GENAI_NEXT"]).models.generate_content(
        model=model, contents=[question, model_content, result], config=config
    )
    return r.text


text = follow_up(content)
out.append({"call": "follow_up_signed", "text": text, "sent": sent[-1]})

unsigned = content.model_copy(deep=True)
for p in unsigned.parts:
    if p.function_call is not None:
        p.thought_signature = None
text = follow_up(unsigned)
out.append({"call": "follow_up_unsigned", "text": text, "sent": sent[-1]})

for o in out:
    print(json.dumps(o))
sys.stdout.flush()
