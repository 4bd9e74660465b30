// What the plugin adds to a request: `experimental.chat.messages.transform` on a session of about
// 1 MB (issue 23: under 2 ms). The session is corpus/opencode/export/healthy.json repeated, each
// copy's ids (`id`, `messageID`, `parentID`, `callID`) suffixed so they stay unique and in order.
// Printed: the median of N runs of the plugin's transform, of the binding's doctor call alone,
// and of the `JSON.stringify` of the messages that the transform needs (part of its cost).
//
//   node integrations/opencode/bench/transform.mjs [TARGET_BYTES] [RUNS]
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { transformMessages } from '../lib.js'

const require = createRequire(import.meta.url)
const tk = require('turnkeeper')
const here = path.dirname(fileURLToPath(import.meta.url))
const target = Number(process.argv[2] ?? 1_000_000)
const runs = Number(process.argv[3] ?? 31)

const seed = JSON.parse(fs.readFileSync(path.resolve(here, '../../../corpus/opencode/export/healthy.json'), 'utf8'))
const base = Array.isArray(seed) ? seed : seed.messages
const RENAME = new Set(['id', 'messageID', 'parentID', 'callID'])
function suffixed(v, k) {
  if (Array.isArray(v)) return v.map((x) => suffixed(x, k))
  if (v && typeof v === 'object') {
    const o = {}
    for (const [key, x] of Object.entries(v)) o[key] = RENAME.has(key) && typeof x === 'string' ? `${x}_${String(k).padStart(4, '0')}` : suffixed(x, k)
    return o
  }
  return v
}
const messages = []
for (let k = 0; JSON.stringify(messages).length < target; k++) messages.push(...suffixed(base, k))
const bytes = JSON.stringify(messages).length

function median(f) {
  const times = []
  for (let i = 0; i < runs; i++) {
    const input = structuredClone(messages)
    const t = process.hrtime.bigint()
    f(input)
    times.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  times.sort((a, b) => a - b)
  return times[times.length >> 1]
}

const stringify = median((m) => JSON.stringify(m))
const doctor = median((m) => tk.opencodeDoctor(JSON.stringify(m)))
const transform = median((m) => transformMessages(m))
console.log(`session: ${messages.length} messages, ${(bytes / 1e6).toFixed(2)} MB; median of ${runs} runs`)
console.log(`| step | ms |\n|---|---:|`)
console.log(`| JSON.stringify of the messages | ${stringify.toFixed(2)} |`)
console.log(`| binding: opencodeDoctor(JSON.stringify(messages)) | ${doctor.toFixed(2)} |`)
console.log(`| plugin: transformMessages (what the hook adds) | ${transform.toFixed(2)} |`)
