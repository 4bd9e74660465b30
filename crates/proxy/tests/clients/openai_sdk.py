"""The `openai` Python SDK against the proxy: Chat and Responses, streaming and not.

Run by tests/real_clients.rs with OPENAI_BASE_URL pointing at the proxy (in front of the mock);
prints one JSON line per call with what the SDK parsed.
"""
import json
import sys

import openai

client = openai.OpenAI(api_key="sk-test-not-a-key", max_retries=0, timeout=30)
out = []

chat = client.chat.completions.create(
    model="gpt-5", messages=[{"role": "user", "content": "What is 2 + 3?"}]
)
out.append({"call": "chat", "id": chat.id, "choices": len(chat.choices)})

chunks = 0
with client.chat.completions.create(
    model="gpt-5", messages=[{"role": "user", "content": "Stream it"}], stream=True
) as stream:
    for c in stream:
        chunks += 1
out.append({"call": "chat_stream", "chunks": chunks})

resp = client.responses.create(model="gpt-5", input="What is 2 + 3?")
out.append({"call": "responses", "id": resp.id, "output": len(resp.output)})

events = 0
kinds = set()
with client.responses.create(model="gpt-5", input="Stream it", stream=True) as stream:
    for ev in stream:
        events += 1
        kinds.add(ev.type)
out.append({"call": "responses_stream", "events": events, "completed": "response.completed" in kinds})

for o in out:
    print(json.dumps(o))
sys.stdout.flush()
