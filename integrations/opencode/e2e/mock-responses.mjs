// A local stand-in for OpenAI's Responses API, for running real Codex offline. It streams as the
// API does (`response.created`, one `response.output_item.done` per item, `response.completed`),
// records each request's bytes in `raw`, and rejects, as OpenAI does (api-rules-2026-11.md
// OR-01, OR-05):
//   400 "Item 'rs_…' of type 'reasoning' was provided without its required following item."
//   400 "The encrypted content for item rs_… could not be verified."  (content it never issued)
// A first request gets reasoning (with `encrypted_content`) and an `exec_command` call; the
// request that carries the call's output gets reasoning and the answer "Done.".
import { jsonServer, reject } from './mock-http.mjs'

/** What the API would say about `body`, or null when it would accept it. */
export function rejection(body, issued) {
  const input = Array.isArray(body.input) ? body.input : []
  for (const [i, it] of input.entries()) {
    if (it.type !== 'reasoning') continue
    if (i + 1 >= input.length || input[i + 1].type === 'reasoning') {
      return `Item '${it.id}' of type 'reasoning' was provided without its required following item.`
    }
    if (typeof it.encrypted_content === 'string' && !issued.has(it.encrypted_content)) {
      return `The encrypted content for item ${it.id} could not be verified.`
    }
  }
  return null
}

/** The mock: `raw` holds each request's bytes, `statuses` the status it answered. */
export function mockResponses() {
  const raw = []
  const statuses = []
  const issued = new Set()
  const server = jsonServer('/responses', (body, data, res) => {
    raw.push(data)
    const n = raw.length
    const why = rejection(body, issued)
    statuses.push(why ? 400 : 200)
    if (why) {
      reject(res, { error: { message: why, type: 'invalid_request_error', param: 'input', code: null } })
      return
    }
    const input = Array.isArray(body.input) ? body.input : []
    const afterCall = input.some((it) => it.type === 'function_call_output')
    const encrypted = `gAAAAB-mock-${n}-${Buffer.from(String(Math.random())).toString('base64')}`
    issued.add(encrypted)
    const reasoning = { id: `rs_mock${n}`, type: 'reasoning', summary: [], encrypted_content: encrypted }
    const out = afterCall
      ? { id: `msg_mock${n}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }
      : { id: `fc_mock${n}`, type: 'function_call', status: 'completed', call_id: `call_mock${n}`, name: 'exec_command', arguments: JSON.stringify({ cmd: 'ls' }) }
    const id = `resp_mock${n}`
    const resp = (status, output) => ({
      id, object: 'response', created_at: 1787170385, status, model: body.model, output,
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 15 },
    })
    const events = [
      { type: 'response.created', response: resp('in_progress', []) },
      { type: 'response.output_item.done', output_index: 0, item: reasoning },
      { type: 'response.output_item.done', output_index: 1, item: out },
      { type: 'response.completed', response: resp('completed', [reasoning, out]) },
    ]
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    events.forEach((e, k) => res.write(`event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: k })}\n\n`))
    res.end()
  })
  return { server, raw, statuses }
}
