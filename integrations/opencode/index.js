// The turnkeeper plugin for OpenCode: add `"plugin": ["opencode-turnkeeper"]` to opencode.json
// (or a `file://` path to this folder). What it does is in lib.js. A failure inside the plugin
// is logged and the messages are left as they were: the plugin never breaks a request on its own
// account. Only the plugin is exported, since OpenCode calls every exported function as one.
import { classifySessionError, openCodeLogger, repairStoredSession, transformMessages } from './lib.js'

/** The plugin: `"plugin": ["opencode-turnkeeper"]` in opencode.json. */
export const TurnkeeperPlugin = async ({ client } = {}) => {
  const log = openCodeLogger(client)
  const model = process.env.TURNKEEPER_OPENCODE_MODEL || undefined
  return {
    'experimental.chat.messages.transform': async (_input, output) => {
      try {
        transformMessages(output?.messages, { log, model })
      } catch (e) {
        log('error', `turnkeeper: transform failed, messages left as they were: ${e.message}`)
      }
    },
    event: async ({ event } = {}) => {
      if (event?.type !== 'session.error') return
      try {
        const d = classifySessionError(event.properties)
        if (!d) return
        log('info', `turnkeeper: session ${event.properties?.sessionID ?? '?'} error: ${d.kind}; next: ${d.action.type}`, {
          kind: d.kind,
          status: d.status,
          provider: d.provider,
          location: d.location,
          retryable: d.retryable,
          action: d.action,
        })
        // The planner says the request itself was wrong: repair the stored session, so that it
        // is sound in storage too (the transform hook repairs what is sent either way).
        const sessionID = event.properties?.sessionID
        if (d.action?.type === 'repair' && typeof sessionID === 'string') {
          repairStoredSession(sessionID, { log, model })
        }
      } catch (e) {
        log('error', `turnkeeper: the session error could not be classified: ${e.message}`)
      }
    },
  }
}

