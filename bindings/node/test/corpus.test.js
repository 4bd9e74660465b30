// The binding agrees with the command line, field by field, on every corpus body: check --json,
// repair (body bytes and --report), inspect --json, classify --json, recover --report.
'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const tk = require('..')
const { CORPUS, CI, CLI, NO_CLI, cli, bodies, errors, tmpdir } = require('./helpers')

const BODIES = bodies('damaged', 'anthropic', 'gemini')
const EXPORTS = bodies(path.join('opencode', 'export'))
const rel = (p) => path.relative(CORPUS, p)

// Without the command line there is nothing to compare with: skip (fail under CI).
const skip = CLI ? false : CI ? false : NO_CLI
if (!CLI && CI) {
  test('the command line is there', () => assert.fail(NO_CLI))
}

test('the corpus is there', () => {
  // Guards against a listing that silently matches nothing.
  assert.ok(BODIES.length > 100, `${BODIES.length} bodies`)
  assert.ok(EXPORTS.length > 0)
  // Every family is there: inspect names Anthropic, Gemini and Chat bodies, and refuses a
  // Responses or Converse body by naming its format.
  const formats = new Set(BODIES.map((p) => {
    try {
      return tk.inspect(fs.readFileSync(p)).format
    } catch (e) {
      const m = /^a (\w+) body/.exec(e.message)
      return m ? m[1] : 'unreadable'
    }
  }))
  for (const f of ['anthropic', 'gemini', 'responses', 'converse']) assert.ok(formats.has(f), `no ${f} body`)
  assert.ok([...formats].some((f) => f.includes('chat')), [...formats].join(', '))
})

test('check agrees with the command line', { skip }, async (t) => {
  for (const p of BODIES) {
    await t.test(rel(p), () => {
      const run = cli(['check', '--json', p])
      const raw = fs.readFileSync(p)
      if (run.status === 2) {
        // unreadable for the command line (e.g. a response body): a typed error here
        assert.throws(() => tk.check(raw), (e) => /^ERR_TURNKEEPER_(READ|FORMAT)$/.test(e.code))
        return
      }
      assert.ok([0, 1].includes(run.status), run.stderr)
      const expected = JSON.parse(run.stdout)
      const got = tk.check(raw)
      assert.deepStrictEqual(got, expected)
      // a string and a Buffer read the same
      assert.deepStrictEqual(tk.check(raw.toString('utf8')), expected)
      assert.equal(run.status === 1, got.findings.some((f) => f.severity === 'error'))
    })
  }
})

test('repair agrees with the command line', { skip }, async (t) => {
  const dir = tmpdir()
  const out = path.join(dir, 'out.json')
  const report = path.join(dir, 'report.json')
  for (const p of BODIES) {
    await t.test(rel(p), () => {
      fs.rmSync(out, { force: true })
      const run = cli(['repair', p, '-o', out, '--report', report])
      const raw = fs.readFileSync(p)
      if (run.status === 2) {
        assert.throws(() => tk.repair(raw), (e) => /^ERR_TURNKEEPER_/.test(e.code))
        return
      }
      assert.ok([0, 3].includes(run.status), run.stderr)
      const expected = JSON.parse(fs.readFileSync(report, 'utf8'))
      const got = tk.repair(raw)
      const { body, ...rest } = got
      assert.deepStrictEqual(rest, expected)
      assert.ok(Buffer.isBuffer(body))
      assert.ok(body.equals(fs.readFileSync(out)), 'the repaired bytes differ from the CLI')
      if (expected.changes.length === 0 && expected.request_changes.length === 0) {
        // nothing to repair: the very Buffer passed in comes back
        assert.equal(body, raw)
      }
      const asText = tk.repair(raw.toString('utf8'))
      assert.equal(typeof asText.body, 'string')
      assert.ok(Buffer.from(asText.body, 'utf8').equals(body))
    })
  }
  fs.rmSync(dir, { recursive: true, force: true })
})

test('inspect agrees with the command line', { skip }, async (t) => {
  for (const p of [...BODIES, ...EXPORTS]) {
    await t.test(rel(p), () => {
      const run = cli(['inspect', '--json', p])
      const raw = fs.readFileSync(p)
      if (run.status === 2) {
        assert.throws(() => tk.inspect(raw), { code: 'ERR_TURNKEEPER_FORMAT' })
        return
      }
      assert.equal(run.status, 0, run.stderr)
      assert.deepStrictEqual(tk.inspect(raw), JSON.parse(run.stdout))
    })
  }
})

test('check of an OpenCode export agrees with the command line', { skip }, async (t) => {
  for (const p of EXPORTS) {
    await t.test(rel(p), () => {
      const run = cli(['check', '--json', p])
      assert.ok([0, 1].includes(run.status), run.stderr)
      const got = tk.check(fs.readFileSync(p))
      assert.deepStrictEqual(got, JSON.parse(run.stdout))
      assert.ok('model' in got)
      assert.throws(() => tk.repair(fs.readFileSync(p)), {
        code: 'ERR_TURNKEEPER_FORMAT',
        message: /OpenCode export/,
      })
    })
  }
})

test('classify agrees with the command line', { skip }, async (t) => {
  const cases = errors()
  assert.ok(cases.length > 400, `${cases.length} errors`)
  for (const e of cases) {
    await t.test(e.name, () => {
      const args = ['classify', '--json', ...(e.status ? ['--status', String(e.status)] : [])]
      const run = cli(args, Buffer.from(e.body, 'utf8'))
      assert.equal(run.status, 0, run.stderr)
      const expected = JSON.parse(run.stdout)
      const opts = e.status ? { status: e.status } : undefined
      assert.deepStrictEqual(tk.classify(e.body, opts), expected)
      assert.deepStrictEqual(tk.classify(Buffer.from(e.body, 'utf8'), opts), expected)
    })
  }
})

function recoverCases() {
  const dir = path.join(CORPUS, 'damaged')
  const out = []
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.expect.json')).sort()) {
    const error = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).error
    const body = path.join(dir, f.replace('.expect.json', '.json'))
    if (error && fs.existsSync(body)) out.push({ body, error })
  }
  return out
}

test('recover agrees with the command line', { skip }, async (t) => {
  const cases = recoverCases()
  assert.ok(cases.length > 30, `${cases.length} recover cases`)
  const dir = tmpdir()
  const [err, out, report, attempts] = ['err.txt', 'out.json', 'report.json', 'attempts.json'].map((n) => path.join(dir, n))
  for (const { body: p, error } of cases) {
    await t.test(rel(p), () => {
      fs.writeFileSync(err, error)
      for (const f of [out, report, attempts]) fs.rmSync(f, { force: true })
      const raw = fs.readFileSync(p)
      const tried = new tk.Attempts()
      for (let round = 0; round < 2; round++) {
        // the same error twice escalates, in both
        const run = cli(['recover', '--request', p, '--error', err, '--status', '400',
          '--attempts', attempts, '--report', report, '-o', out])
        if (run.status === 2) {
          assert.throws(() => tk.recover(raw, error, tried, { status: 400 }), (e) => /^ERR_TURNKEEPER_/.test(e.code))
          return
        }
        assert.ok([0, 3].includes(run.status), run.stderr)
        const expected = JSON.parse(fs.readFileSync(report, 'utf8'))
        const { body, ...got } = tk.recover(raw, error, tried, { status: 400 })
        assert.deepStrictEqual(got, expected, `round ${round}`)
        assert.equal(tried.length, expected.attempts)
        assert.deepStrictEqual(JSON.parse(tried.toJson()), JSON.parse(fs.readFileSync(attempts, 'utf8')))
        if (run.status === 0) {
          assert.ok(Buffer.isBuffer(body))
          assert.ok(body.equals(fs.readFileSync(out)), `round ${round}: the body to send differs`)
        } else {
          assert.equal(body, null)
        }
      }
    })
  }
  fs.rmSync(dir, { recursive: true, force: true })
})
