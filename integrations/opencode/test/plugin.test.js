// The plugin's hooks, run as OpenCode runs them, on exported sessions (corpus/opencode/export:
// the `{info, parts}[]` OpenCode hands `experimental.chat.messages.transform`).
import test from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import * as plugin from '../index.js'

const require = createRequire(import.meta.url)
const tk = require('turnkeeper')
const here = path.dirname(fileURLToPath(import.meta.url))
const EXPORTS = path.resolve(here, '..', '..', '..', 'corpus', 'opencode', 'export')
/** The `{info, parts}[]` of an export (a bare array, or the `messages` of `opencode export`'s
 * document). */
function load(name) {
  const doc = JSON.parse(fs.readFileSync(path.join(EXPORTS, name), 'utf8'))
  return Array.isArray(doc) ? doc : doc.messages
}

/** The plugin's hooks with a mock OpenCode client that keeps what is logged. */
async function hooks() {
  const logged = []
  const client = { app: { log: async ({ body }) => { logged.push(body) } } }
  const h = await plugin.TurnkeeperPlugin({ client, directory: here, worktree: here })
  return { h, logged }
}

/** Lets the fire-and-forget log calls land. */
const settle = () => new Promise((r) => setImmediate(r))

/** Every reasoning part, by id, as JSON text. */
function reasoning(messages) {
  const out = new Map()
  for (const m of messages) for (const p of m.parts) if (p.type === 'reasoning') out.set(p.id, JSON.stringify(p))
  return out
}

test('the module exports only the plugin (OpenCode calls every exported function)', () => {
  assert.deepStrictEqual(Object.keys(plugin), ['TurnkeeperPlugin'])
})

test('a damaged session is repaired in place, each change logged, no thinking altered', async () => {
  const { h, logged } = await hooks()
  const before = load('broken.json')
  const planned = tk.opencodeDoctor(JSON.stringify(before))
  assert.ok(planned.findings.some((f) => f.severity === 'error'), 'the corpus session is damaged')
  const output = { messages: load('broken.json') }
  const array = output.messages
  await h['experimental.chat.messages.transform']({}, output)
  await settle()
  assert.equal(output.messages, array, 'the messages are changed in place')

  // what OpenCode now sends passes the checks of its target, and nothing is left to repair
  const after = tk.opencodeDoctor(JSON.stringify(output.messages))
  assert.deepStrictEqual(after.findings, [])
  assert.deepStrictEqual(after.repairs, [])

  // every change is logged, with its rule, message and part
  const changes = logged.filter((l) => l.level === 'info' && l.extra?.rule)
  assert.deepStrictEqual(
    changes.map((l) => [l.extra.rule, l.extra.action, l.extra.messageID, l.extra.partID]),
    planned.repairs.map((r) => [r.rule, r.action, r.message_id, r.part_id]),
  )
  for (const l of changes) assert.equal(l.service, 'turnkeeper')

  // thinking leaves byte for byte as it came, or not at all and the removal logged
  const was = reasoning(before)
  const now = reasoning(output.messages)
  for (const [id, text] of now) assert.equal(text, was.get(id), `reasoning part ${id} changed`)
  for (const id of was.keys()) {
    if (!now.has(id)) assert.ok(changes.some((l) => l.extra.partID === id && l.extra.action === 'removed_part'), `${id} removed silently`)
  }
  // every other part not named by a repair is untouched
  const named = new Set(planned.repairs.map((r) => r.part_id))
  const parts = (ms) => new Map(ms.flatMap((m) => m.parts.map((p) => [p.id, JSON.stringify(p)])))
  const old = parts(before)
  for (const [id, text] of parts(output.messages)) if (!named.has(id)) assert.equal(text, old.get(id), id)
})

test('a healthy session goes through untouched and nothing is logged', async () => {
  const { h, logged } = await hooks()
  const output = { messages: load('healthy.json') }
  await h['experimental.chat.messages.transform']({}, output)
  await settle()
  assert.deepStrictEqual(output.messages, load('healthy.json'))
  // one debug line saying what was checked, nothing else
  assert.deepStrictEqual(logged.map((l) => l.level), ['debug'])
  assert.match(logged[0].message, /anthropic\/claude-sonnet-4-5 \(anthropic\): 0 repair/)
})

test('a session bound for another provider gets only the provider-neutral repairs', async () => {
  const { h, logged } = await hooks()
  const before = load('kimi_session.export.json')
  const output = { messages: load('kimi_session.export.json') }
  await h['experimental.chat.messages.transform']({}, output)
  await settle()
  const rules = logged.filter((l) => l.extra?.rule && l.level === 'info').map((l) => l.extra.rule)
  assert.ok(rules.every((r) => r === 'AN-08'), rules.join(','))
  // Kimi's whitespace text parts are valid for Kimi: still there
  const texts = (ms) => ms.flatMap((m) => m.parts.filter((p) => p.type === 'text').map((p) => p.id))
  assert.deepStrictEqual(texts(output.messages), texts(before))
  assert.deepStrictEqual(reasoning(output.messages), reasoning(before))
})

test('the transform never throws: unreadable messages are left as they were and logged', async () => {
  const { h, logged } = await hooks()
  const output = { messages: [{ info: { role: 'nobody' }, parts: 'not an array' }] }
  const copy = structuredClone(output)
  await h['experimental.chat.messages.transform']({}, output)
  await settle()
  assert.deepStrictEqual(output, copy)
  assert.ok(logged.some((l) => l.level === 'warn' && /could not be checked/.test(l.message)), JSON.stringify(logged))
  await h['experimental.chat.messages.transform']({}, {})
  await h['experimental.chat.messages.transform']({}, { messages: [] })
})

/** A copy of the doctor corpus's broken stores (corpus/opencode/doctor/before) in a temporary
 * directory, as `$TURNKEEPER_OPENCODE_STORAGE` for the plugin: { dir, ids } */
function storeCopy() {
  const src = path.resolve(here, '..', '..', '..', 'corpus', 'opencode', 'doctor', 'before')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'turnkeeper-plugin-'))
  fs.cpSync(src, dir, { recursive: true })
  const ids = JSON.parse(fs.readFileSync(path.join(dir, 'sessions.json'), 'utf8'))
  return { dir, ids }
}

/** Runs `f` with `$TURNKEEPER_OPENCODE_STORAGE` set to `storage`. */
async function withStorage(storage, f) {
  const old = process.env.TURNKEEPER_OPENCODE_STORAGE
  process.env.TURNKEEPER_OPENCODE_STORAGE = storage
  try {
    return await f()
  } finally {
    if (old === undefined) delete process.env.TURNKEEPER_OPENCODE_STORAGE
    else process.env.TURNKEEPER_OPENCODE_STORAGE = old
  }
}

test('session.error: the provider error is classified and logged', async () => {
  const { h, logged } = await hooks()
  // A store that does not hold the session: the repair in storage is tried, and its failure
  // logged (never thrown).
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'turnkeeper-plugin-empty-'))
  const body = JSON.stringify({
    type: 'error',
    error: { type: 'invalid_request_error', message: 'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.' },
  })
  await withStorage(empty, async () => {
    await h.event({
      event: {
        type: 'session.error',
        properties: {
          sessionID: 'ses_1',
          error: { name: 'APIError', data: { message: 'Bad Request', statusCode: 400, isRetryable: false, responseBody: body } },
        },
      },
    })
    await h.event({ event: { type: 'session.idle', properties: { sessionID: 'ses_1' } } })
  })
  await settle()
  fs.rmSync(empty, { recursive: true, force: true })
  assert.equal(logged.length, 2, JSON.stringify(logged))
  assert.equal(logged[1].level, 'warn')
  assert.match(logged[1].message, /session ses_1 could not be repaired in storage \(ERR_TURNKEEPER_STORE\)/)
  const [l] = logged
  assert.equal(l.extra.kind, 'thinking_block_order')
  assert.equal(l.extra.status, 400)
  assert.deepStrictEqual(l.extra.location, { message: 1, block: 0 })
  assert.equal(l.extra.action.type, 'repair')
  assert.match(l.message, /ses_1/)
  // agrees with the binding's classify of the same body
  assert.equal(tk.classify(body, { status: 400 }).kind, l.extra.kind)
})

for (const store of ['storage', 'opencode.db']) {
  test(`session.error asking for a repair repairs the stored session (${store}), backup kept`, async () => {
    const { h, logged } = await hooks()
    const { dir, ids } = storeCopy()
    const storage = path.join(dir, store)
    const id = ids.broken
    const before = tk.opencodeRepairStored(id, { storage, dryRun: true })
    assert.ok(before.repairs.length > 0, 'the corpus session needs repairs')
    assert.equal(before.written, false)
    const body = JSON.stringify({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'messages.3.content.1: text content blocks must contain non-whitespace text' },
    })
    await withStorage(storage, () =>
      h.event({
        event: {
          type: 'session.error',
          properties: {
            sessionID: id,
            error: { name: 'APIError', data: { message: 'Bad Request', statusCode: 400, isRetryable: false, responseBody: body } },
          },
        },
      }),
    )
    await settle()
    // every change is logged, then the backup; the same repairs the dry run planned
    const stored = logged.filter((l) => / \(in storage\): /.test(l.message))
    assert.deepStrictEqual(
      stored.map((l) => `${l.extra.rule} ${l.extra.action} ${l.extra.partID}`),
      before.repairs.map((r) => `${r.rule} ${r.action} ${r.part_id}`),
    )
    const done = logged.find((l) => /repaired in storage/.test(l.message))
    assert.ok(done, JSON.stringify(logged))
    assert.equal(done.extra.errorsLeft, 0)
    assert.ok(fs.existsSync(done.extra.backup), done.extra.backup)
    // the store now holds the repaired session: nothing left to do, no error left
    const after = tk.opencodeRepairStored(id, { storage, dryRun: true })
    assert.deepStrictEqual(after.repairs, [])
    assert.ok(after.findings_left.every((f) => f.severity !== 'error'), JSON.stringify(after.findings_left))
    fs.rmSync(dir, { recursive: true, force: true })
  })
}

test('a plugin without a client logs nowhere and still works', async () => {
  const h = await plugin.TurnkeeperPlugin({})
  const output = { messages: load('broken.json') }
  await h['experimental.chat.messages.transform']({}, output)
  assert.deepStrictEqual(tk.opencodeDoctor(JSON.stringify(output.messages)).repairs, [])
})
