// The functions' contract beyond the command line's fields: types in and out, typed errors
// (a `code` on every error), options, the turn store and attempts objects.
'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const tk = require('..')
const { CORPUS, CLI, cli, tmpdir } = require('./helpers')

const VALID = path.join(CORPUS, 'anthropic', 'tool_loop_manual.json')
const DAMAGED = path.join(CORPUS, 'damaged', 'an08_aborted_turn.json')
const OPEN_LOOP = path.join(CORPUS, 'damaged', 'an16_thinking_stripped_open_loop.json')

test('a valid body comes back as it came', () => {
  const raw = fs.readFileSync(VALID)
  assert.deepStrictEqual(tk.check(raw), { findings: [] })
  const r = tk.repair(raw)
  assert.equal(r.body, raw) // the very Buffer
  assert.deepStrictEqual(r.changes, [])
  const text = raw.toString('utf8')
  assert.equal(tk.repair(text).body, text)
})

test('a repaired body keeps the caller\'s type', () => {
  const raw = fs.readFileSync(DAMAGED)
  const r = tk.repair(raw)
  assert.ok(Buffer.isBuffer(r.body))
  assert.notEqual(r.body, raw)
  assert.equal(typeof tk.repair(raw.toString('utf8')).body, 'string')
  assert.deepStrictEqual(Object.keys(r).sort(), ['body', 'changes', 'findings_left', 'request_changes'])
  assert.ok(r.changes.length > 0)
  for (const c of r.changes) {
    assert.equal(typeof c.rule, 'string')
    assert.equal(typeof c.path, 'string')
    assert.equal(typeof c.reason, 'string')
  }
})

test('bad input throws an error with a code', () => {
  const cases = [
    [Buffer.from([0xff, 0x7b, 0x7d]), 'ERR_TURNKEEPER_READ', /invalid UTF-8 at byte 0/],
    ['{"messages": [', 'ERR_TURNKEEPER_READ', /invalid JSON/],
    ['{"hello": 1}', 'ERR_TURNKEEPER_FORMAT', /cannot tell the format/],
    ['[1, 2]', 'ERR_TURNKEEPER_FORMAT', /./],
  ]
  for (const [body, code, message] of cases) {
    for (const f of [tk.check, tk.repair, tk.inspect]) {
      assert.throws(() => f(body), (e) => {
        assert.ok(e instanceof Error)
        assert.equal(e.code, code)
        assert.match(e.message, message)
        return true
      })
    }
  }
})

test('wrong types and options are refused', () => {
  const raw = fs.readFileSync(VALID)
  // not a string or a Buffer: napi's own argument error
  assert.throws(() => tk.check(3), (e) => e instanceof Error && e.code !== undefined && !/^ERR_TURNKEEPER_/.test(e.code))
  const option = (f, opts, message) =>
    assert.throws(() => f(raw, opts), { code: 'ERR_TURNKEEPER_OPTION', message })
  option(tk.check, { thinking: 'maybe' }, /thinking "maybe"/)
  option(tk.repair, { format: 'xml' }, /format "xml"/)
  option(tk.repair, { onPrefixEdit: 'sometimes' }, /onPrefixEdit/)
  option(tk.check, { store: 42 }, /options.store must be a TurnStore or the path/)
  option(tk.check, { model: 4 }, /options.model must be a string/)
  option(tk.check, { modle: 'claude-opus-4-5' }, /unknown option "modle"/)
  assert.throws(() => tk.classify('x', { status: 'four hundred' }), { code: 'ERR_TURNKEEPER_OPTION' })
  assert.throws(() => tk.classify('x', { status: 70000 }), { code: 'ERR_TURNKEEPER_OPTION' })
  // undefined and null mean "not given"
  assert.deepStrictEqual(tk.check(raw, { model: undefined, store: null }), { findings: [] })
})

test('options change the judgement', () => {
  const body = fs.readFileSync(OPEN_LOOP)
  const on = tk.check(body).findings
  const off = tk.check(body, { thinking: 'disabled' }).findings
  assert.ok(on.some((f) => f.rule === 'AN-16'))
  assert.ok(!off.some((f) => f.rule === 'AN-16'))
  // AN-16 with only `fail` left: nothing is repaired, the finding is left for the caller
  const r = tk.repair(body, { onMissingThinking: ['fail'] })
  assert.ok(r.findings_left.some((f) => f.rule === 'AN-16'))
  // an explicit format reads the body as that format only
  assert.deepStrictEqual(tk.check(fs.readFileSync(VALID), { format: 'anthropic' }), { findings: [] })
  assert.throws(() => tk.check(fs.readFileSync(VALID), { format: 'gemini' }), { code: 'ERR_TURNKEEPER_FORMAT' })
})

test('the turn store puts back an altered turn, in memory and on disk', () => {
  const dir = tmpdir()
  const thinking = { type: 'thinking', thinking: 'Look at the files first.', signature: 'c2lnbmF0dXJlIG9mIHRoZSB0aGlua2luZw==' }
  const toolUse = { type: 'tool_use', id: 'toolu_01', name: 'ls', input: {} }
  const response = {
    id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
    content: [thinking, toolUse], stop_reason: 'tool_use',
  }
  const where = path.join(dir, 'store')
  const store = new tk.TurnStore(where)
  assert.equal(store.add(Buffer.from(JSON.stringify(response))), 'msg_01')
  assert.equal(store.length, 1)
  assert.deepStrictEqual(store.problems, [])
  assert.equal(store.path, where)
  assert.equal(new tk.TurnStore(where).length, 1) // reloaded from its files
  assert.throws(() => store.add('{"not": "a response"}'), { code: 'ERR_TURNKEEPER_STORE' })
  const memory = new tk.TurnStore()
  assert.equal(memory.path, null)
  memory.add(JSON.stringify(response))

  const body = JSON.stringify({
    model: 'claude-sonnet-4-5', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 },
    messages: [
      { role: 'user', content: 'ls' },
      { role: 'assistant', content: [toolUse, thinking] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'a' }] },
    ],
  })
  for (const s of [store, memory, where]) {
    const r = tk.repair(body, { store: s })
    assert.deepStrictEqual(r.changes.map((c) => c.rule), ['AN-22'])
    // the stored turn comes back as it arrived, its thinking block byte for byte
    assert.deepStrictEqual(JSON.parse(r.body).messages[1].content, response.content)
    assert.ok(r.body.includes(JSON.stringify(thinking)))
  }
  fs.rmSync(dir, { recursive: true, force: true })
})

test('attempts escalate and round-trip', () => {
  const body = fs.readFileSync(DAMAGED)
  const error =
    'messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified.'
  const a = new tk.Attempts()
  const first = tk.recover(body, error, a, { status: 400 })
  const second = tk.recover(body, error, a, { status: 400 })
  assert.equal(a.length, second.attempts)
  assert.ok(a.length >= 2)
  assert.notDeepStrictEqual(first.action, second.action)
  const again = tk.Attempts.fromJson(a.toJson())
  assert.equal(again.toJson(), a.toJson())
  assert.throws(() => tk.Attempts.fromJson('[not json'), { code: 'ERR_TURNKEEPER_ATTEMPTS' })
})

test('recover hands back with no body', () => {
  const r = tk.recover(fs.readFileSync(VALID), 'prompt is too long: 250000 tokens > 200000 maximum', null, { status: 400 })
  assert.equal(r.action.type, 'compact')
  assert.equal(r.outcome, 'hand_back')
  assert.equal(r.body, null)
  assert.throws(() => tk.recover('{"hello":1}', 'overloaded'), { code: 'ERR_TURNKEEPER_FORMAT', message: /not a readable request/ })
})

test('classify reads the status and a wrapped error', () => {
  const text = JSON.stringify({
    type: 'error',
    error: { type: 'invalid_request_error', message: 'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.' },
  })
  const d = tk.classify(text, { status: 400 })
  assert.equal(d.kind, 'thinking_block_order')
  assert.equal(d.status, 400)
  assert.deepStrictEqual(d.location, { message: 1, block: 0 })
  assert.equal(d.action.type, 'repair')
  assert.equal(tk.classify(Buffer.from(text)).status, null)
})

test('the package declares what it exports', () => {
  const dts = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8')
  for (const name of ['check', 'repair', 'inspect', 'classify', 'recover']) {
    assert.equal(typeof tk[name], 'function', name)
    assert.match(dts, new RegExp(`export declare function ${name}\\(`), name)
  }
  for (const name of ['TurnStore', 'Attempts']) {
    assert.equal(typeof tk[name], 'function', name)
    assert.match(dts, new RegExp(`export declare class ${name}\\b`), name)
  }
  assert.match(dts, /export interface BodyOptions/)
  assert.equal(tk.version(), require('../package.json').version)
})

test('the OpenCode doctor plans part repairs for the session\'s target', () => {
  const dir = path.join(CORPUS, 'opencode', 'export')
  const broken = tk.opencodeDoctor(fs.readFileSync(path.join(dir, 'broken.json')))
  assert.deepStrictEqual(broken.target, { family: 'anthropic', model: 'claude-sonnet-4-5', provider: 'anthropic' })
  assert.ok(broken.findings.some((f) => f.severity === 'error'))
  assert.ok(broken.repairs.length > 0)
  assert.deepStrictEqual(broken.findings_left, [])
  for (const r of broken.repairs) {
    assert.match(r.rule, /^AN-\d+$/)
    assert.equal(r.part === null, r.action === 'removed_part')
    if (r.part !== null) assert.equal(JSON.parse(r.part).type === 'reasoning', false, 'a reasoning part is never rewritten')
  }
  // the same findings as `check` of the export (the command line's check --json)
  assert.deepStrictEqual(broken.findings, tk.check(fs.readFileSync(path.join(dir, 'broken.json'))).findings)
  const healthy = tk.opencodeDoctor(fs.readFileSync(path.join(dir, 'healthy.json'), 'utf8'))
  assert.deepStrictEqual([healthy.findings, healthy.repairs], [[], []])
  // a Kimi session: only the provider-neutral repairs; the Anthropic-only ones are not planned
  const kimi = tk.opencodeDoctor(fs.readFileSync(path.join(dir, 'kimi_session.export.json')))
  assert.equal(kimi.target.family, 'other')
  assert.ok(kimi.repairs.every((r) => r.rule === 'AN-08'))
  assert.throws(() => tk.opencodeDoctor('{"messages":[]}'), { code: 'ERR_TURNKEEPER_FORMAT' })
})

test('a stored OpenCode session is repaired in place, with a backup, as the command line does', { skip: CLI ? false : 'no turnkeeper command line to compare with' }, () => {
  const src = path.join(CORPUS, 'opencode', 'doctor', 'before')
  const ids = JSON.parse(fs.readFileSync(path.join(src, 'sessions.json'), 'utf8'))
  for (const store of ['storage', 'opencode.db']) {
    const dir = tmpdir()
    fs.cpSync(src, dir, { recursive: true })
    const storage = path.join(dir, store)
    const dry = tk.opencodeRepairStored(ids.broken, { storage, dryRun: true })
    assert.equal(dry.written, false)
    assert.equal(dry.backup, null)
    assert.ok(dry.repairs.length > 0)
    // the command line's dry run plans the same repairs
    const planned = cli(['opencode', 'repair', '--dry-run', '--session', ids.broken, '--storage', storage])
    assert.equal(planned.status, 0, planned.stderr)
    for (const r of dry.repairs) assert.ok(planned.stdout.includes(`part ${r.part_id}`), `${r.part_id} in\n${planned.stdout}`)
    const done = tk.opencodeRepairStored(ids.broken, { storage })
    assert.equal(done.written, true)
    assert.ok(fs.existsSync(done.backup), done.backup)
    assert.deepStrictEqual(done.repairs, dry.repairs)
    assert.ok(done.findings_left.every((f) => f.severity !== 'error'), JSON.stringify(done.findings_left))
    assert.deepStrictEqual(tk.opencodeRepairStored(ids.broken, { storage, dryRun: true }).repairs, [])
    // the command line undoes it
    const undo = cli(['opencode', 'undo', '--session', ids.broken, '--storage', storage])
    assert.equal(undo.status, 0, undo.stderr)
    assert.deepStrictEqual(tk.opencodeRepairStored(ids.broken, { storage, dryRun: true }).repairs, dry.repairs)
    assert.throws(() => tk.opencodeRepairStored('ses_nope', { storage }), { code: 'ERR_TURNKEEPER_STORE' })
    assert.throws(() => tk.opencodeRepairStored(ids.broken, { storage, dryrun: true }), { code: 'ERR_TURNKEEPER_OPTION' })
  }
})
