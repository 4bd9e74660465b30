/* The shapes of the objects turnkeeper returns: the fields of the command line's `--json` and
 * `--report` output. This header is prepended by `napi build` to the generated definitions. */

/** A body format, as the command line's `--format` names it. */
export type Format = 'auto' | 'anthropic' | 'opencode' | 'gemini' | 'chat' | 'responses' | 'converse'

/** The options of `check` and `repair` (the command line's flags); every one is optional. */
export interface BodyOptions {
  /** The model the request goes to, when the body does not name it (or to judge by another). */
  model?: string
  /** The thinking mode, as `--thinking`. */
  thinking?: 'enabled' | 'adaptive' | 'disabled'
  /** The body's format; sniffed when absent or `'auto'`. */
  format?: Format
  /** A turn store, or the path of a store directory (opened for the call). */
  store?: TurnStore | string
  /** The `anthropic-beta` values the request is sent with. */
  betas?: string[]
  /** A profile overrides file (TOML), as `--profile`. */
  profile?: string
  /** What to do when thinking is missing, in order, as `--on-missing-thinking`. */
  onMissingThinking?: Array<'restore' | 'disable-thinking' | 'adaptive' | 'close-loop' | 'fail'>
  /** What to do when a repair would edit the prefix a signature is bound to. */
  onPrefixEdit?: 'strip-after-edit' | 'drop-block' | 'fail'
}

/** The options of `recover`. */
export interface RecoverOptions {
  /** The HTTP status of the error. */
  status?: number
  model?: string
  betas?: string[]
  store?: TurnStore | string
}

/** One problem found. */
export interface Finding {
  /** The rule, e.g. `AN-16`. */
  rule: string
  severity: 'error' | 'warning' | 'info'
  /** Where, e.g. `messages[4].content[1]`. */
  path: string
  message: string
  message_index: number | null
  block_index: number | null
  /** What `repair` would do about it. */
  repair: string | null
  [field: string]: unknown
}

/** One change `repair` made to the messages. */
export interface Change {
  rule: string
  action: string
  path: string
  reason: string
  [field: string]: unknown
}

/** One change `repair` made to the request outside the messages. */
export interface RequestChange {
  [field: string]: unknown
}

/** `check`'s result: `turnkeeper check --json`. */
export interface CheckResult {
  findings: Finding[]
  /** For an OpenCode export: the model its request goes to. */
  model?: string | null
}

/** `inspect`'s result: `turnkeeper inspect --json`. */
export interface InspectResult {
  format: string
  why: string
  body: 'request' | 'response'
  model: string | null
  messages: number
  thinking: string | null
  [field: string]: unknown
}

/** The planned next step after an error. */
export interface Action {
  type: string
  [field: string]: unknown
}

/** `classify`'s result: `turnkeeper classify --json`. */
export interface Diagnosis {
  kind: string
  provider: string
  status: number | null
  message: string
  retryable: boolean
  location: { message: number; block: number | null } | null
  action: Action
  [field: string]: unknown
}

/** `recover`'s result: `turnkeeper recover --report`, and the body to send. */
export interface RecoverResult {
  diagnosis: Omit<Diagnosis, 'action'>
  action: Action
  outcome: string
  wait_ms: number | null
  headers: Array<{ name: string; value: string }>
  changes: Change[]
  request_changes: RequestChange[]
  addressing: unknown
  findings_left: Finding[]
  skipped: unknown[]
  notes: string[]
  attempts: number
  /** What to send (the request's type), or `null` when nothing is to be sent. */
  body: string | Buffer | null
}

/** The `code` of every error turnkeeper throws (a wrong argument type throws a `TypeError`-like
 * error of napi's own). */
export type ErrorCode =
  | 'ERR_TURNKEEPER_READ'
  | 'ERR_TURNKEEPER_FORMAT'
  | 'ERR_TURNKEEPER_REPAIR'
  | 'ERR_TURNKEEPER_STORE'
  | 'ERR_TURNKEEPER_ATTEMPTS'
  | 'ERR_TURNKEEPER_OPTION'

/** Where an OpenCode session's next request goes. */
export interface OpencodeTarget {
  provider: string | null
  model: string | null
  /** Whose rules apply: Anthropic's, or another provider's (not checked). */
  family: 'anthropic' | 'other'
}

/** A finding on an OpenCode session, with the message and part behind it. */
export interface SessionFinding extends Finding {
  message_id: string | null
  part_id: string | null
}

/** One part repair the OpenCode doctor plans. */
export interface PartRepair {
  rule: string
  kind: string
  action: 'removed_part' | 'changed_part' | 'added_part'
  message_id: string
  part_id: string
  reason: string
  /** The new part as JSON text (for `changed_part` and `added_part`), else `null`. */
  part: string | null
}

/** `opencodeDoctor`'s result. */
/** What `opencodeRepairStored` did to a stored session. */
export interface OpencodeStoredRepair {
  session_id: string
  target: OpencodeTarget
  /** The repairs planned (and written, unless `dryRun`). */
  repairs: PartRepair[]
  left_alone: string[]
  /** True when the store was written. */
  written: boolean
  /** The backup directory of this repair (`turnkeeper opencode undo` takes it back), or null. */
  backup: string | null
  /** The findings on the session as read back from the store (as planned, with `dryRun`). */
  findings_left: SessionFinding[]
}

export interface OpencodePlan {
  session_id: string
  target: OpencodeTarget
  /** The model the request was checked against. */
  model: string | null
  /** The findings on the request OpenCode would send now. */
  findings: SessionFinding[]
  repairs: PartRepair[]
  left_alone: string[]
  /** The findings once the repairs are applied. */
  findings_left: SessionFinding[]
}
