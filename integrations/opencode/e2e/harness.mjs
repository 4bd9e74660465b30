// What the end-to-end tests share: running real agents (npm `opencode-ai` and `@openai/codex`,
// offline) in a scratch home and project, the turnkeeper command line and proxy, and a recording
// pass-through.
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
export const pluginDir = path.resolve(here, '..')
export const BIN = process.env.OPENCODE_BIN || null
export const skip = BIN && fs.existsSync(BIN) ? false : 'no OpenCode binary: set OPENCODE_BIN (e2e/run.sh installs opencode-ai)'
// The turnkeeper command line (the node step of `cargo xtask verify` builds it).
export const TURNKEEPER = process.env.TURNKEEPER_BIN || path.resolve(pluginDir, '../../target/debug/turnkeeper')

/**
 * Runs OpenCode with `args`: { code, stdout, stderr } (async: the mocks answer in this process).
 * `stopWhen(stdout, stderr)`: once true, OpenCode is ended (after a moment to finish writing):
 * `opencode run` does not always exit by itself once its loop is done.
 */
export function opencode(args, options) {
  return agent(BIN, args, options)
}

/** Runs the agent `bin` with `args` as {@link opencode} runs OpenCode; killed after 90 s. */
export function agent(bin, args, { cwd, env, stopWhen }) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let stopping = false
    const look = () => {
      if (!stopping && stopWhen && stopWhen(stdout, stderr)) {
        stopping = true
        setTimeout(() => child.kill('SIGTERM'), 2000)
      }
    }
    child.stdout.on('data', (d) => { stdout += d; look() })
    child.stderr.on('data', (d) => { stderr += d; look() })
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000)
    child.on('error', reject)
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }) })
  })
}

/**
 * A scratch home and project (a git repository, as OpenCode is used: outside one it does not
 * exit after a failed turn here): { root, home, proj, env, configFile }. `configFile` is the
 * user's global opencode.json.
 */
export function scratch(prefix) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const home = path.join(root, 'home')
  const proj = path.join(root, 'proj')
  fs.mkdirSync(proj, { recursive: true })
  spawnSync('git', ['init', '-q', proj])
  spawnSync('git', ['-C', proj, '-c', 'user.name=t', '-c', 'user.email=t@t.invalid', 'commit', '-q', '--allow-empty', '-m', 'start'])
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
  }
  const configFile = path.join(env.XDG_CONFIG_HOME, 'opencode', 'opencode.json')
  fs.mkdirSync(path.dirname(configFile), { recursive: true })
  return { root, home, proj, env, configFile }
}

/** Removes a scratch root, unless $E2E_KEEP asks to keep it (printed). */
export function cleanup(root) {
  if (process.env.E2E_KEEP) console.log(`kept ${root}`)
  else fs.rmSync(root, { recursive: true, force: true })
}

/**
 * Starts `turnkeeper proxy` on a free loopback port with `args`: { url, child, log() }. The
 * proxy prints its address first.
 */
export function proxy(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(TURNKEEPER, ['proxy', '--listen', '127.0.0.1:0', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    const onData = (d) => {
      out += d
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m) resolve({ url: m[1], child, log: () => out })
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.on('error', reject)
    child.on('close', (code) => reject(new Error(`the proxy exited (${code}): ${out}`)))
  })
}

/**
 * A recording pass-through on loopback: every request's bytes are kept in `raw` and forwarded
 * to `target` (a base URL), its answer streamed back. It stands between a client and the proxy,
 * so that what the client sent can be compared with what the upstream received.
 */
export function recorder(target) {
  const raw = []
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      raw.push(body.toString('utf8'))
      const url = new URL(req.url, target)
      const headers = { ...req.headers, host: url.host, 'content-length': String(body.length) }
      delete headers['transfer-encoding']
      const up = http.request(url, { method: req.method, headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers)
        r.pipe(res)
      })
      up.on('error', () => { res.writeHead(502).end() })
      up.end(body)
    })
  })
  return { server, raw }
}
