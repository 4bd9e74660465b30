// What the turnkeeper plugin for OpenCode does (index.js exports only the plugin: OpenCode calls
// every function a plugin module exports as a plugin).
//
// At `experimental.chat.messages.transform` (the messages OpenCode is about to convert and send,
// as `{info, parts}[]`), it asks the turnkeeper OpenCode doctor for the repairs the session's
// real target needs (the model of the last user message: Anthropic's rules for Claude, only the
// provider-neutral repairs for any other model) and applies them to the messages in place: whole
// parts removed, replaced or added, never an edited reasoning part. Each change is logged with
// its rule, message, part and reason. Nothing is written to OpenCode's storage at this hook.
//
// On `session.error` it classifies the provider's error (however OpenCode wrapped it) and logs
// the kind, where it points and the recovery turnkeeper would take; when that recovery is a
// repair, it repairs the stored session through the doctor's write layer (`turnkeeper opencode
// repair`: a backup first, every write atomic, `turnkeeper opencode undo` takes it back), so that
// the session is sound in storage too, and logs each change and the backup.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const tk = require('turnkeeper')

const SERVICE = 'turnkeeper'

/** A logger writing through OpenCode's `client.app.log` when there is one. */
export function openCodeLogger(client) {
  return (level, message, extra) => {
    const log = client?.app?.log
    if (typeof log !== 'function') return
    // Fire and forget: logging must not hold up the request, nor fail it.
    Promise.resolve()
      .then(() => log.call(client.app, { body: { service: SERVICE, level, message, extra } }))
      .catch(() => {})
  }
}

/** Logs one of the doctor's repairs with its rule, action, message, part and reason; `where`
 * follows the part (` (in storage)` for a repair written to the store). */
function logRepair(log, r, where) {
  log('info', `turnkeeper: ${r.rule} ${r.action} ${r.message_id}/${r.part_id}${where}: ${r.reason}`, {
    rule: r.rule,
    kind: r.kind,
    action: r.action,
    messageID: r.message_id,
    partID: r.part_id,
  })
}

/** Where `part` sits among `parts` sorted by id (OpenCode orders a message's parts by id). */
function insertionIndex(parts, id) {
  const i = parts.findIndex((p) => typeof p?.id === 'string' && p.id > id)
  return i === -1 ? parts.length : i
}

/**
 * Checks and repairs `messages` (OpenCode's `{info, parts}[]`) in place.
 *
 * @param {Array<{info: object, parts: object[]}>} messages
 * @param {{ log?: (level: string, message: string, extra?: object) => void, model?: string }} [options]
 *   `model` overrides the target (`providerID/modelID`); by default the session's own.
 * @returns {{ plan: object | null, applied: object[], skipped: object[], error?: Error }}
 */
export function transformMessages(messages, options = {}) {
  const log = options.log ?? (() => {})
  const result = { plan: null, applied: [], skipped: [] }
  if (!Array.isArray(messages) || messages.length === 0) return result
  let plan
  try {
    plan = tk.opencodeDoctor(JSON.stringify(messages), options.model ? { model: options.model } : undefined)
  } catch (e) {
    log('warn', `turnkeeper: the messages could not be checked (${e.code ?? e.name}): ${e.message}`)
    result.error = e
    return result
  }
  result.plan = plan
  const t = plan.target
  log('debug', `turnkeeper: ${messages.length} message(s) for ${t.provider ?? '?'}/${t.model ?? '?'} (${t.family}): ${plan.repairs.length} repair(s) planned`)
  const byId = new Map(messages.map((m) => [m?.info?.id, m]))
  for (const r of plan.repairs) {
    const m = byId.get(r.message_id)
    const parts = m?.parts
    if (!Array.isArray(parts)) {
      result.skipped.push({ ...r, why: 'message not found' })
      continue
    }
    const at = parts.findIndex((p) => p?.id === r.part_id)
    if (r.action === 'removed_part') {
      if (at === -1) {
        result.skipped.push({ ...r, why: 'part not found' })
        continue
      }
      parts.splice(at, 1)
    } else if (r.action === 'changed_part') {
      if (at === -1) {
        result.skipped.push({ ...r, why: 'part not found' })
        continue
      }
      // Never alter a thinking block: a reasoning part leaves as it came, or not at all.
      if (parts[at]?.type === 'reasoning') {
        result.skipped.push({ ...r, why: 'a reasoning part is never edited' })
        continue
      }
      parts[at] = JSON.parse(r.part)
    } else if (r.action === 'added_part') {
      if (at !== -1) {
        result.skipped.push({ ...r, why: 'part exists already' })
        continue
      }
      const part = JSON.parse(r.part)
      parts.splice(insertionIndex(parts, r.part_id), 0, part)
    } else {
      result.skipped.push({ ...r, why: `unknown action ${r.action}` })
      continue
    }
    result.applied.push(r)
    logRepair(log, r, '')
  }
  for (const s of result.skipped) {
    log('warn', `turnkeeper: ${s.rule} ${s.action} ${s.message_id}/${s.part_id} not applied: ${s.why}`)
  }
  if (plan.target.family === 'anthropic') {
    for (const f of plan.findings_left) {
      log(f.severity === 'error' ? 'warn' : 'info', `turnkeeper: ${f.rule} left at ${f.path}: ${f.message}`, {
        rule: f.rule,
        messageID: f.message_id,
        partID: f.part_id,
      })
    }
  }
  return result
}

/**
 * Classifies the error of a `session.error` event (`properties.error`, OpenCode's `APIError`
 * or another named error) with turnkeeper: `null` when the event carries no error.
 */
export function classifySessionError(properties) {
  const error = properties?.error
  if (!error) return null
  const data = error.data ?? {}
  // The provider's own body says the most; OpenCode's message is the fallback.
  const text =
    typeof data.responseBody === 'string' && data.responseBody
      ? data.responseBody
      : typeof data.message === 'string'
        ? data.message
        : JSON.stringify(error)
  const status = Number.isInteger(data.statusCode) ? data.statusCode : undefined
  return tk.classify(text, status === undefined ? undefined : { status })
}

/**
 * Repairs the stored session `sessionID` with the turnkeeper OpenCode doctor (backup first,
 * every write atomic) and logs each change and the backup. The store is the one
 * `options.storage` (or `$TURNKEEPER_OPENCODE_STORAGE`) names, else OpenCode's own. A failure is
 * logged and `null` returned: the plugin never fails OpenCode on its own account.
 *
 * @param {string} sessionID
 * @param {{ log?: Function, model?: string, storage?: string }} [options]
 * @returns {object | null} what `opencodeRepairStored` returned
 */
export function repairStoredSession(sessionID, options = {}) {
  const log = options.log ?? (() => {})
  const storage = options.storage ?? (process.env.TURNKEEPER_OPENCODE_STORAGE || undefined)
  let r
  try {
    r = tk.opencodeRepairStored(sessionID, { storage, model: options.model })
  } catch (e) {
    log('warn', `turnkeeper: session ${sessionID} could not be repaired in storage (${e.code ?? e.name}): ${e.message}`)
    return null
  }
  for (const c of r.repairs) logRepair(log, c, ' (in storage)')
  if (r.written) {
    const left = r.findings_left.filter((f) => f.severity === 'error').length
    log('info', `turnkeeper: session ${sessionID} repaired in storage (${r.repairs.length} change(s), ${left} error(s) left); backup ${r.backup}; undo with \`turnkeeper opencode undo --session ${sessionID}\``, {
      backup: r.backup,
      errorsLeft: left,
    })
  } else {
    log('info', `turnkeeper: session ${sessionID}: nothing to repair in storage`)
  }
  return r
}
