// Real OpenCode (npm `opencode-ai`, offline) with the plugin, against the local mock of
// Anthropic's API (mock-anthropic.mjs): a stored session whose latest assistant turn was damaged
// (a tool call stored before the thinking block, its result lost, and a whitespace-only text
// part: OpenCode sends `[tool_use, thinking, " ", ...]`, which the API rejects) fails without
// the plugin and continues with it, and the request the mock accepts carries the thinking block
// byte-identical (the mock checks its signature, an HMAC of the text).
//
//   e2e/run.sh              installs opencode-ai into the target directory and runs this
//   OPENCODE_BIN=... node --test e2e/
// Skipped when no OpenCode binary is found.
import test from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import { TURNKEEPER, cleanup, opencode, pluginDir, scratch, skip } from './harness.mjs'
import { rejection, server, sign } from './mock-anthropic.mjs'

test('a damaged stored session continues with the plugin, thinking untouched', { skip, timeout: 600_000 }, async () => {
  const { root, proj, env, configFile } = scratch('turnkeeper-opencode-')
  const log = path.join(root, 'mock.jsonl')
  process.env.MOCK_LOG = log
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const port = server.address().port
  const config = (plugin) => JSON.stringify({
    $schema: 'https://opencode.ai/config.json',
    plugin: plugin ? [pathToFileURL(pluginDir).href] : [],
    provider: { anthropic: { options: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-ant-mock' } } },
    model: 'anthropic/claude-sonnet-4-5',
    autoupdate: false,
    share: 'disabled',
  })
  const received = () => fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l).body)
  try {
    // 1. a healthy session: one turn, with a signed thinking block
    fs.writeFileSync(configFile, config(true))
    const first = await opencode(['run', '--variant', 'high', '--format', 'json', 'hello'], { cwd: proj, env })
    assert.equal(first.code, 0, `${first.stdout.slice(-1500)}\n${first.stderr.slice(-1500)}`)
    const sessionID = first.stdout.split('\n').map((l) => { try { return JSON.parse(l).sessionID } catch { return undefined } }).find(Boolean)
    assert.ok(sessionID, first.stdout.slice(0, 2000))

    // 2. damage its latest assistant turn in storage: export, add a whitespace-only text part
    //    after the reasoning part and a tool part before it, import it back
    const exported = await opencode(['export', sessionID], { cwd: proj, env })
    assert.equal(exported.code, 0, exported.stderr.slice(-2000))
    const doc = JSON.parse(exported.stdout.slice(exported.stdout.indexOf('{')))
    const assistant = doc.messages.findLast((m) => m.info.role === 'assistant')
    const reasoning = assistant.parts.find((p) => p.type === 'reasoning')
    assert.ok(reasoning, 'the mock answered with thinking')
    const thinkingBlock = { type: 'thinking', thinking: reasoning.text, signature: reasoning.metadata.anthropic.signature }
    assert.equal(thinkingBlock.signature, sign(thinkingBlock.thinking))
    const at = assistant.parts.indexOf(reasoning)
    assistant.parts.splice(at + 1, 0, {
      id: `${reasoning.id.slice(0, -4)}zzzz`,
      sessionID,
      messageID: assistant.info.id,
      type: 'text',
      text: ' ',
    })
    // ...and a tool call before the thinking block (so the thinking comes after its tool_use)
    // whose result was lost (the part left `running`, as a crash leaves it)
    assistant.parts.splice(at, 0, {
      id: `${reasoning.id.slice(0, -4)}0000`,
      sessionID,
      messageID: assistant.info.id,
      type: 'tool',
      callID: 'toolu_01E2eLostResult000000001',
      tool: 'bash',
      state: { status: 'running', input: { command: 'ls', description: 'List files' }, time: { start: assistant.info.time.created } },
    })
    const damaged = path.join(root, 'damaged.json')
    fs.writeFileSync(damaged, JSON.stringify(doc))
    const imported = await opencode(['import', damaged], { cwd: proj, env })
    assert.equal(imported.code, 0, `${imported.stdout.slice(-2000)}\n${imported.stderr.slice(-2000)}`)

    // 3. without the plugin the next request is rejected, as the real API rejects it
    fs.writeFileSync(configFile, config(false))
    const before = received().length
    const broken = await opencode(['run', '--pure', '--print-logs', '--variant', 'high', '-s', sessionID, 'continue'], {
      cwd: proj,
      env,
      stopWhen: (out, err) => /level=ERROR .*non-whitespace text/.test(err),
    })
    assert.notEqual(broken.code, 0, 'the damaged session should fail without the plugin')
    assert.match(broken.stderr, /level=ERROR .*text content blocks must contain non-whitespace text/)
    assert.ok(received().length > before)

    // 4. with the plugin it continues; the request it sent is valid and carries the thinking
    //    block byte for byte, and the mock's answer is stored as the session's next turn.
    //    (`opencode run -s` does not always exit by itself once its loop is done, here with or
    //    without a plugin: it is ended once OpenCode logs the end of its loop.)
    fs.writeFileSync(configFile, config(true))
    const sentBefore = received().length
    const fixed = await opencode(['run', '--print-logs', '--variant', 'high', '-s', sessionID, 'continue'], {
      cwd: proj,
      env,
      stopWhen: (out, err) => /message="exiting loop"/.test(err),
    })
    if (process.env.E2E_DEBUG) fs.writeFileSync(process.env.E2E_DEBUG, `code ${fixed.code}\n` + fixed.stdout + '\n----\n' + fixed.stderr + '\n----\n' + fs.readFileSync(log, 'utf8'))
    assert.equal(received().length, sentBefore + 1, 'the run with the plugin sent one request')
    assert.match(fixed.stderr, /turnkeeper: AN-05 removed_part/)
    assert.match(fixed.stderr, /turnkeeper: AN-08 changed_part/)
    assert.match(fixed.stderr, /turnkeeper: AN-18 added_part/)
    assert.doesNotMatch(fixed.stderr, /level=ERROR/)
    const sent = received().at(-1)
    assert.equal(rejection(sent), null, 'the mock accepted the request')
    const after = await opencode(['export', sessionID], { cwd: proj, env })
    assert.equal(after.code, 0, after.stderr.slice(-2000))
    const stored = JSON.parse(after.stdout.slice(after.stdout.indexOf('{')))
    const last = stored.messages.at(-1)
    assert.equal(last.info.role, 'assistant')
    assert.equal(last.info.error, undefined, JSON.stringify(last.info.error))
    assert.ok(last.parts.some((p) => p.type === 'text' && /^Reply \d+\.$/.test(p.text)), JSON.stringify(last.parts))
    const blocks = sent.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    assert.ok(!blocks.some((b) => b.type === 'text' && b.text.trim() === ''))
    const thinking = blocks.filter((b) => b.type === 'thinking')
    assert.ok(thinking.some((b) => JSON.stringify({ type: b.type, thinking: b.thinking, signature: b.signature }) === JSON.stringify(thinkingBlock)))

    // 5. the command-line doctor repairs the stored session in place (OpenCode is not running),
    //    and OpenCode without the plugin continues from the repaired store: the new ids it wrote
    //    are read back in order, and the request is valid with the thinking block byte-identical
    const repaired = spawnSync(TURNKEEPER, ['opencode', 'repair', '--session', sessionID], { env, encoding: 'utf8' })
    assert.equal(repaired.status, 0, `${repaired.stdout}\n${repaired.stderr}`)
    assert.match(repaired.stdout, /AN-18/, repaired.stdout)
    assert.match(repaired.stdout, /AN-05/, repaired.stdout)
    fs.writeFileSync(configFile, config(false))
    const sentBeforePlain = received().length
    const plain = await opencode(['run', '--pure', '--print-logs', '--variant', 'high', '-s', sessionID, 'again'], {
      cwd: proj,
      env,
      stopWhen: (out, err) => /message="exiting loop"|level=ERROR/.test(err),
    })
    assert.doesNotMatch(plain.stderr, /level=ERROR/, plain.stderr.slice(-3000))
    assert.equal(received().length, sentBeforePlain + 1, 'the run without the plugin sent one request')
    const plainSent = received().at(-1)
    assert.equal(rejection(plainSent), null, 'the mock accepted the request from the repaired store')
    const plainBlocks = plainSent.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    assert.ok(plainBlocks.some((b) => b.type === 'thinking' && JSON.stringify({ type: b.type, thinking: b.thinking, signature: b.signature }) === JSON.stringify(thinkingBlock)))
  } finally {
    server.close()
    cleanup(root)
  }
})
