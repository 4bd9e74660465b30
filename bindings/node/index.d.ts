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

/**
 * Which binding artifact the generated loader actually loaded: `'native'` for
 * a native addon, otherwise the `platformArchABI` of the WASI flavor. Every
 * flavor napi-rs can build is listed, because `NAPI_RS_NATIVE_LIBRARY_PATH`
 * can point the loader at a WASI artifact this package does not build itself.
 */
export declare const __napiBindingTarget: 'native' | 'wasm32-wasi' | 'wasm32-wasip1'

/**
 * The attempts made so far at one conversation's errors (`--attempts FILE` of the command
 * line, kept in memory). Pass the same object to each `recover` call of a conversation so that
 * the same error twice escalates.
 */
export declare class Attempts {
  /** No attempts yet. */
  constructor()
  /** Reads the JSON the command line keeps in its attempts file (see `toJson`). */
  static fromJson(text: string): Attempts
  /** The attempts as the command line's attempts file holds them. */
  toJson(): string
  /** How many attempts were sent (not skipped). */
  get sent(): number
  /** How many attempts were made, sent or skipped. */
  get length(): number
}

/**
 * A turn store: the provider's responses as they arrived, so that `check` and `repair` can put
 * back an assistant turn an agent altered (pass it as `options.store`). With a path, every
 * response added is also written there (as `turnkeeper store add` does) and the store is
 * loaded from it.
 */
export declare class TurnStore {
  /** Opens (creating it) the store directory `path`, or an in-memory store without one. */
  constructor(path?: string | undefined | null)
  /**
   * Records a response body (a Messages API response as JSON, or its whole SSE stream);
   * returns its response id (`msg_...`), or `null` when it has none.
   */
  add(response: string | Buffer): string | null
  /** The store directory, or `null` for an in-memory store. */
  get path(): string | null
  /** Files in the directory that could not be read, with the reason. */
  get problems(): Array<string>
  /** How many turns the store holds. */
  get length(): number
}

/**
 * Checks a transcript: the fields of `turnkeeper check --json` (`findings`, and `model` for an
 * OpenCode export).
 */
export declare function check(body: string | Buffer, options?: BodyOptions): CheckResult

/** What a provider error means and what to do: the fields of `turnkeeper classify --json`. */
export declare function classify(error: string | Buffer, options?: { status?: number }): Diagnosis

/**
 * A summary of a transcript: the fields of `turnkeeper inspect --json` (format, model,
 * messages, blocks by type, thinking mode).
 */
export declare function inspect(body: string | Buffer, options?: { format?: Format }): InspectResult

/**
 * The OpenCode doctor on the messages OpenCode is about to send (`{info, parts}[]`, as an
 * export holds them, or as its `experimental.chat.messages.transform` hook sees them): the
 * session's target, the findings on the request it would send, the part repairs the doctor
 * plans for that target (`turnkeeper opencode repair`'s plan, without writing anything), and
 * the findings left once they are applied. A repair removes, replaces or adds whole parts;
 * none edits a reasoning part (one that can never verify is removed, and the removal reported).
 */
export declare function opencodeDoctor(messages: string | Buffer, options?: { model?: string }): OpencodePlan

/**
 * Repairs an OpenCode session where OpenCode stores it (`turnkeeper opencode repair
 * --session ID`): the store is the one `storage` names (a data directory, a `storage/` tree or
 * the database file), else OpenCode's own (`$OPENCODE_DB`, `$XDG_DATA_HOME/opencode`, ...); the
 * doctor plans the part repairs the session's target needs and writes them, a backup and its
 * manifest first, each write atomic (`turnkeeper opencode undo --session ID` takes them back).
 * With `dryRun`, nothing is written. The store is written even while OpenCode has it open: this
 * is for a caller inside OpenCode (its plugin, after a `session.error`), at a moment the session
 * is not running. Returns the repairs made, the backup directory (`null` when nothing was
 * written) and the findings on the session read back from the store.
 */
export declare function opencodeRepairStored(sessionId: string, options?: { storage?: string, model?: string, dryRun?: boolean }): OpencodeStoredRepair

/**
 * Classifies `error`, plans the next step and applies it to `request`, the body that failed:
 * the fields of `turnkeeper recover --report`, and `body`, what to send (`null`: nothing).
 */
export declare function recover(request: string | Buffer, error: string | Buffer, attempts?: Attempts | null, options?: RecoverOptions): RecoverResult

/** Repairs a transcript: the fields of `turnkeeper repair --report`, and `body`. */
export declare function repair(body: string | Buffer, options?: BodyOptions): RepairResult

/** The object `repair` returns. */
export interface RepairResult {
  /** The body to send: the input's type; the very `Buffer` passed in when nothing changed. */
  body: string | Buffer
  /** The changes made to the messages, each with its rule, location and reason. */
  changes: Change[]
  /** The changes made to the request outside the messages (e.g. thinking disabled). */
  request_changes: RequestChange[]
  /** The findings no repair could resolve. */
  findings_left: Finding[]
}

/** The version of the native library. */
export declare function version(): string
