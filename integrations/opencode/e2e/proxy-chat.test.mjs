// Real OpenCode (npm `opencode-ai`, offline) with DeepSeek- and Kimi-style providers
// (OpenAI-compatible, thinking mode) against a local mock of their API (mock-deepseek.mjs),
// straight and through `turnkeeper proxy`:
// - DeepSeek: a valid conversation (a tool call, its result, the answer) reaches the mock through
//   the proxy byte for byte as OpenCode sends it straight. With a plugin that drops reasoning
//   from what OpenCode sends (strip-reasoning.mjs, as the thinking "fixers" users install do),
//   OpenCode sends its own DeepSeek stand-in, `reasoning_content: ""` (anomalyco/opencode PR
//   #24180), which DeepSeek accepts (DS-04): valid, so the proxy forwards it as it is.
// - Kimi: with that plugin OpenCode sends the tool turn without `reasoning_content`, and
//   Moonshot's rule rejects it (KM-01); through the proxy, which recorded the streamed turn, the
//   same turn arrives with the reasoning the mock sent, byte for byte, and the session goes on.
//
//   e2e/run.sh              installs opencode-ai into the target directory and runs this
// Skipped when no OpenCode binary is found.
import test from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { cleanup, opencode, proxy, scratch, skip } from './harness.mjs'
import { mockDeepSeek, reasoningOf, rejection } from './mock-deepseek.mjs'

const STRIP = pathToFileURL(path.join(path.dirname(new URL(import.meta.url).pathname), 'strip-reasoning.mjs')).href
const PROMPT = 'List the markdown files of this project.'

/**
 * A scratch project, the mock, and a proxy in front of it, for `model` (an id of the custom
 * provider `mockseek`): `run(baseURL, plugins)` runs the prompt once and returns the requests
 * the mock received meanwhile ({ run, bodies, raw }); `done()` stops everything.
 */
async function setting(model) {
  const { root, proj, env, configFile } = scratch('turnkeeper-opencode-chat-')
  fs.writeFileSync(path.join(proj, 'README.md'), '# a project\n')
  const mock = mockDeepSeek()
  await new Promise((r) => mock.server.listen(0, '127.0.0.1', r))
  const upstream = `http://127.0.0.1:${mock.server.address().port}`
  const tk = await proxy(['--upstream-openai', upstream, '--store', path.join(root, 'turns')], env)
  const config = (baseURL, plugins) => JSON.stringify({
    $schema: 'https://opencode.ai/config.json',
    plugin: plugins,
    provider: {
      mockseek: {
        npm: '@ai-sdk/openai-compatible',
        name: 'OpenAI-compatible (mock)',
        options: { baseURL, apiKey: 'sk-mock' },
        models: { [model]: { name: model, tool_call: true, reasoning: true } },
      },
    },
    model: `mockseek/${model}`,
    small_model: `mockseek/${model}`,
    autoupdate: false,
    share: 'disabled',
  })
  const stopWhen = (out, err) => /message="exiting loop"|level=ERROR/.test(err)
  const run = async (where, plugins) => {
    fs.writeFileSync(configFile, config(where === 'proxy' ? `${tk.url}/v1` : `${upstream}/v1`, plugins))
    const from = mock.requests.length
    const r = await opencode(['run', '--print-logs', PROMPT], { cwd: proj, env, stopWhen })
    return { run: r, bodies: mock.requests.slice(from), raw: mock.raw.slice(from) }
  }
  const done = () => {
    if (process.env.E2E_DEBUG) fs.writeFileSync(process.env.E2E_DEBUG, JSON.stringify(mock.requests, null, 1))
    tk.child.kill('SIGTERM')
    mock.server.close()
    cleanup(root)
  }
  return { run, done, proxyLog: tk.log }
}

/** The request that carries the tool's result (OpenCode ran the tool and asked again). */
function toolTurn(r) {
  const b = r.bodies.find((x) => x.messages.some((m) => m.role === 'tool'))
  assert.ok(b, `OpenCode ran the tool and asked again\n${r.run.stderr.slice(-3000)}`)
  return b
}

/** The raw bytes of the tool-result requests. */
const toolTurnBytes = (r) => r.raw.filter((t) => t.includes('"role":"tool"'))

const callOf = (b) => b.messages.find((m) => m.role === 'assistant' && Array.isArray(m.tool_calls))

test('OpenCode with a DeepSeek provider through the proxy: what is valid is forwarded as it is', { skip, timeout: 600_000 }, async () => {
  const s = await setting('deepseek-reasoner')
  try {
    const straight = await s.run('mock', [])
    assert.doesNotMatch(straight.run.stderr, /level=ERROR/, straight.run.stderr.slice(-3000))
    assert.equal(rejection(toolTurn(straight)), null)
    assert.equal(callOf(toolTurn(straight)).reasoning_content, reasoningOf(false))
    const proxied = await s.run('proxy', [])
    assert.doesNotMatch(proxied.run.stderr, /level=ERROR/, `${proxied.run.stderr.slice(-3000)}\n--- proxy\n${s.proxyLog().slice(-2000)}`)
    assert.deepStrictEqual(toolTurnBytes(proxied), toolTurnBytes(straight), 'the tool turn is forwarded byte-identical')

    // reasoning dropped by a plugin: OpenCode's DeepSeek stand-in "", accepted, and forwarded
    const stripped = await s.run('mock', [STRIP])
    assert.equal(callOf(toolTurn(stripped)).reasoning_content, '')
    assert.equal(rejection(toolTurn(stripped)), null)
    const strippedProxied = await s.run('proxy', [STRIP])
    assert.doesNotMatch(strippedProxied.run.stderr, /level=ERROR/)
    assert.deepStrictEqual(toolTurnBytes(strippedProxied), toolTurnBytes(stripped), 'a valid request is forwarded as it is')
  } finally {
    s.done()
  }
})

test('OpenCode with a Kimi provider through the proxy: a tool turn without its reasoning gets it back', { skip, timeout: 600_000 }, async () => {
  const s = await setting('kimi-k2-thinking')
  try {
    // straight: rejected as Moonshot rejects it
    const stripped = await s.run('mock', [STRIP])
    assert.equal('reasoning_content' in callOf(toolTurn(stripped)), false)
    assert.match(rejection(toolTurn(stripped)) ?? '', /reasoning_content is missing in assistant tool call message at index \d+/)
    assert.match(stripped.run.stderr, /level=ERROR .*reasoning_content is missing in assistant tool call message/)

    // through the proxy: the reasoning the mock streamed for the call is put back, and accepted
    const restored = await s.run('proxy', [STRIP])
    assert.doesNotMatch(restored.run.stderr, /level=ERROR/, `${restored.run.stderr.slice(-3000)}\n--- proxy\n${s.proxyLog().slice(-2000)}`)
    const fixed = toolTurn(restored)
    assert.equal(rejection(fixed), null, 'the mock accepted the tool turn')
    assert.equal(callOf(fixed).reasoning_content, reasoningOf(false))
  } finally {
    s.done()
  }
})
