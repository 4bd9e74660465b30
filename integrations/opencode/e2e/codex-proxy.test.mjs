// Real Codex (npm `@openai/codex`, offline) through `turnkeeper proxy` against a local mock of
// the Responses API (mock-responses.mjs), with a recording pass-through between Codex and the
// proxy: a turn with a tool call (reasoning with `encrypted_content`, an `exec_command` call),
// then the turn carrying the call's output (the reasoning item and the call sent back, as Codex
// does with `store: false`). Every request reaches the mock byte for byte as Codex sent it, the
// mock accepts each, and Codex ends with the mock's answer.
//
//   e2e/run.sh              installs @openai/codex (and opencode-ai) and runs this
// Skipped when no Codex binary is found.
import test from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { agent, cleanup, proxy, recorder, scratch } from './harness.mjs'
import { mockResponses } from './mock-responses.mjs'

const CODEX = process.env.CODEX_BIN || null
const skip = CODEX && fs.existsSync(CODEX) ? false : 'no Codex binary: set CODEX_BIN (e2e/run.sh installs @openai/codex)'

/** Runs `codex exec` with `args`: { code, stdout, stderr }. */
const codex = (args, options) => agent(CODEX, ['exec', '--skip-git-repo-check', ...args], options)

test('Codex through the proxy: a tool loop forwarded byte for byte, and accepted', { skip, timeout: 300_000 }, async () => {
  const { root, home, proj, env } = scratch('turnkeeper-codex-')
  const codexHome = path.join(home, '.codex')
  fs.mkdirSync(codexHome, { recursive: true })
  const mock = mockResponses()
  await new Promise((r) => mock.server.listen(0, '127.0.0.1', r))
  const upstream = `http://127.0.0.1:${mock.server.address().port}`
  const tk = await proxy(['--upstream-openai', upstream, '--store', path.join(root, 'turns')], env)
  const rec = recorder(tk.url)
  await new Promise((r) => rec.server.listen(0, '127.0.0.1', r))
  const base = `http://127.0.0.1:${rec.server.address().port}/v1`
  try {
    const r = await codex(
      [
        '-c', 'model_provider=turnkeeper',
        '-c', `model_providers.turnkeeper={name="turnkeeper",base_url="${base}",wire_api="responses",env_key="MOCK_KEY"}`,
        '-m', 'gpt-5.5',
        'List the files here.',
      ],
      { cwd: proj, env: { ...env, CODEX_HOME: codexHome, MOCK_KEY: 'sk-mock' } },
    )
    assert.equal(r.code, 0, `${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}\n--- proxy\n${tk.log().slice(-2000)}`)
    assert.match(r.stdout, /Done\./)
    assert.equal(mock.raw.length, 2, 'the call, then the turn with its output')
    const second = JSON.parse(mock.raw[1])
    assert.ok(second.input.some((it) => it.type === 'reasoning' && it.encrypted_content), 'Codex sent its reasoning back')
    assert.ok(second.input.some((it) => it.type === 'function_call_output'))
    assert.deepStrictEqual(mock.statuses, [200, 200], 'the mock accepted both')
    assert.deepStrictEqual(mock.raw, rec.raw, 'each request reaches the upstream as Codex sent it')
  } finally {
    rec.server.close()
    tk.child.kill('SIGTERM')
    mock.server.close()
    cleanup(root)
  }
})
