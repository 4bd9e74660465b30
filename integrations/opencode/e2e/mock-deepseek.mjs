// A local stand-in for DeepSeek's (and, for a `kimi` model, Moonshot's) Chat Completions API in
// thinking mode, for running real OpenCode offline. It streams as DeepSeek does (the chunk shape of the recorded DeepSeek V4
// exchanges in ../shared/real-traffic/openai-chat: `reasoning_content` deltas, then content or
// `tool_calls` deltas, then `finish_reason`, then `[DONE]`), records each request body in
// `requests`, and rejects, as DeepSeek and Moonshot do (api-rules-reasoning-2026-11.md DS-03,
// KM-01), a tool turn whose `reasoning_content` was not passed back:
//   400 "Missing `reasoning_content` field in the assistant message at message index N"
//   400 "thinking is enabled but reasoning_content is missing in assistant tool call message at index N"
// A prompt that mentions "markdown" gets a `glob` tool call first; the turn after its result, and
// any other prompt, gets a text answer.
import { jsonServer, reject } from './mock-http.mjs'

/** What the provider would say about `body`, or null when it would accept it: for a Kimi model
 * (`kimi` in its id), Moonshot's KM-01 (every assistant message with `tool_calls` carries
 * `reasoning_content`); for any other, DeepSeek's DS-03 (every tool-calling assistant message
 * since the last user message does). The key must be there; `""` is accepted (DS-04, KM-07). */
export function rejection(body) {
  const msgs = body.messages || []
  const kimi = /kimi/i.test(body.model || '')
  let lastUser = -1
  msgs.forEach((m, i) => { if (m.role === 'user') lastUser = i })
  for (const [i, m] of msgs.entries()) {
    const calls = m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0
    if (!calls || typeof m.reasoning_content === 'string') continue
    if (kimi) return `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${i}`
    if (i > lastUser) return `Missing \`reasoning_content\` field in the assistant message at message index ${i}`
  }
  return null
}

/** The reasoning the mock thinks for a turn: the same in every run, so that two runs of one
 * conversation send the same bytes. */
export const reasoningOf = (afterTool) =>
  afterTool ? 'The glob ran; now I answer.' : 'Let me look for the markdown files first.'

/** The text of a user message (a string, or its text parts joined). */
export function promptOf(m) {
  if (typeof m?.content === 'string') return m.content
  return (Array.isArray(m?.content) ? m.content : []).map((c) => c.text ?? '').join('')
}

/** The mock: `requests` holds each request's parsed body, `raw` its bytes as received. */
export function mockDeepSeek() {
  const requests = []
  const raw = []
  const server = jsonServer('/chat/completions', (body, data, res) => {
    requests.push(body)
    raw.push(data)
    const n = requests.length
    const why = rejection(body)
    if (why) {
      reject(res, { error: { message: why, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } })
      return
    }
    const last = body.messages.at(-1)
    const lastUser = body.messages.findLast((m) => m.role === 'user')
    const userText = promptOf(lastUser)
    const callTool = last?.role === 'user' && Array.isArray(body.tools) && body.tools.some((t) => t.function?.name === 'glob') && /markdown/.test(userText)
    const id = `chatcmpl-mock${n}`
    // ids the same in two runs of one conversation
    const callId = `call_mock${Buffer.from(userText).toString('hex').slice(0, 16)}`
    const created = 1787170385
    const chunk = (delta, finish = null) => ({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })
    const afterTool = last?.role === 'tool'
    const reasoning = reasoningOf(afterTool)
    const chunks = [chunk({ role: 'assistant' })]
    for (const w of reasoning.split(/(?= )/)) chunks.push(chunk({ reasoning_content: w }))
    if (callTool) {
      chunks.push(chunk({ tool_calls: [{ id: callId, type: 'function', index: 0, function: { name: 'glob', arguments: '' } }] }))
      chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pattern":"' } }] }))
      chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '**/*.md"}' } }] }))
      chunks.push(chunk({}, 'tool_calls'))
    } else {
      chunks.push(chunk({ content: afterTool ? 'One: README.md.' : 'Done.' }))
      chunks.push(chunk({}, 'stop'))
    }
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, completion_tokens_details: { reasoning_tokens: 3 } }
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`)
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`)
      res.end('data: [DONE]\n\n')
    } else {
      const message = { role: 'assistant', content: callTool ? null : afterTool ? 'One: README.md.' : 'Done.', reasoning_content: reasoning }
      if (callTool) message.tool_calls = [{ id: callId, type: 'function', function: { name: 'glob', arguments: '{"pattern":"**/*.md"}' } }]
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, finish_reason: callTool ? 'tool_calls' : 'stop' }], usage }))
    }
  })
  return { server, requests, raw }
}
