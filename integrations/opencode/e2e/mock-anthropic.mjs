// A local stand-in for Anthropic's Messages API, for running real OpenCode offline: it answers
// every request with a streamed turn (a signed thinking block, then text), records each request
// body it received in $MOCK_LOG (one JSON per line), and rejects with a 400, as the real API does,
// a request whose thinking blocks were altered, with a whitespace-only text block, or whose latest assistant turn with a tool call
// does not start with thinking. Signatures are an HMAC of the thinking text.
//   node mock-anthropic.mjs   -> prints the port it listens on (127.0.0.1)
import crypto from 'node:crypto'
import fs from 'node:fs'
import { jsonServer, reject } from './mock-http.mjs'

const KEY = 'turnkeeper-mock'
export const sign = (text) => crypto.createHmac('sha256', KEY).update(text).digest('base64')

/** What the real API would say about `body`, or null when it would accept it. */
export function rejection(body) {
  const thinkingOn = body.thinking && body.thinking.type !== 'disabled'
  const msgs = body.messages || []
  let lastAssistant = -1
  msgs.forEach((m, i) => { if (m.role === 'assistant') lastAssistant = i })
  for (const [i, m] of msgs.entries()) {
    const blocks = Array.isArray(m.content) ? m.content : []
    for (const [j, b] of blocks.entries()) {
      if (b.type === 'text' && typeof b.text === 'string' && b.text.trim() === '') {
        return `messages.${i}.content.${j}: text content blocks must contain non-whitespace text`
      }
      if (b.type === 'thinking' && b.signature !== sign(b.thinking)) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`
      }
    }
    if (thinkingOn && i === lastAssistant && blocks.some((b) => b.type === 'tool_use')) {
      const first = blocks[0]?.type
      if (first !== 'thinking' && first !== 'redacted_thinking') {
        return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`
      }
    }
  }
  return null
}

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
  res.end()
}

let turn = 0
const server = jsonServer('/messages', (body, _raw, res, req) => {
  if (process.env.MOCK_LOG) fs.appendFileSync(process.env.MOCK_LOG, JSON.stringify({ url: req.url, body }) + '\n')
  const why = rejection(body)
  if (why) {
    reject(res, { type: 'error', error: { type: 'invalid_request_error', message: why } })
    return
  }
  turn += 1
  const thinking = `Thinking about turn ${turn}.`
  const id = `msg_mock_${turn}`
  const events = [
    { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } },
  ]
  let index = 0
  if (body.thinking && body.thinking.type !== 'disabled') {
    events.push(
      { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } },
      { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: sign(thinking) } },
      { type: 'content_block_stop', index },
    )
    index += 1
  }
  events.push(
    { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index, delta: { type: 'text_delta', text: `Reply ${turn}.` } },
    { type: 'content_block_stop', index },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } },
    { type: 'message_stop' },
  )
  sse(res, events)
})

if (import.meta.url === `file://${process.argv[1]}`) {
  server.listen(0, '127.0.0.1', () => console.log(server.address().port))
}
export { server }
