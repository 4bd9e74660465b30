// Shared by the tests: the repository's corpus and the turnkeeper command line the binding is
// compared with.
'use strict'
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.resolve(__dirname, '..', '..', '..')
const CORPUS = path.join(ROOT, 'corpus')

/** Whether this is CI, where a missing command line fails instead of skipping. */
const CI = ['true', '1'].includes(process.env.CI || '')

/** The command to compare with: $TURNKEEPER_CLI, else the workspace's debug (or release) build. */
function cliPath() {
  if (process.env.TURNKEEPER_CLI) return process.env.TURNKEEPER_CLI
  const target = process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target')
  for (const p of [path.join(target, 'debug', 'turnkeeper'), path.join(target, 'release', 'turnkeeper')]) {
    if (fs.existsSync(p)) return p
  }
  return null
}

const CLI = cliPath()
const NO_CLI =
  'the turnkeeper command is absent: build it with `cargo build -p turnkeeper-cli` (or set TURNKEEPER_CLI) to compare the binding with it'

/** Runs the command line: { status, stdout, stderr } (stdout as a string). */
function cli(args, input) {
  const run = spawnSync(CLI, args, { input, maxBuffer: 64 << 20, timeout: 60_000 })
  if (run.error) throw run.error
  return { status: run.status, stdout: run.stdout.toString('utf8'), stderr: run.stderr.toString('utf8') }
}

/** The `.json` bodies of corpus folders (not the `.after.json` / `.expect.json` / stored `.response.json` beside them). */
function bodies(...dirs) {
  const out = []
  for (const d of dirs) {
    for (const f of fs.readdirSync(path.join(CORPUS, d)).sort()) {
      if (f.endsWith('.json') && !f.endsWith('.after.json') && !f.endsWith('.expect.json') && !f.endsWith('.response.json')) {
        out.push(path.join(CORPUS, d, f))
      }
    }
  }
  return out
}

/** The provider error corpus: [{ name, body, status }]. */
function errors() {
  const dir = path.join(CORPUS, 'errors')
  const out = []
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      if (!line.trim()) continue
      const e = JSON.parse(line)
      out.push({ name: `${f}:${e.id}`, body: e.body ?? '', status: e.status ?? null })
    }
  }
  return out
}

/** A fresh temporary directory. */
function tmpdir() {
  return fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'turnkeeper-node-'))
}

module.exports = { ROOT, CORPUS, CI, CLI, NO_CLI, cli, bodies, errors, tmpdir }
