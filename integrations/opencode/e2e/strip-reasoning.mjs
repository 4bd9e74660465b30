// A stand-in for the OpenCode plugins that "fix" thinking errors by dropping reasoning from the
// messages OpenCode sends (peers.md: thinking-block validators and strippers): at
// `experimental.chat.messages.transform` it removes every reasoning part. Through it, OpenCode
// sends a DeepSeek tool turn without its `reasoning_content`, as users of such plugins see.
export const StripReasoning = async () => ({
  'experimental.chat.messages.transform': async (_input, output) => {
    for (const m of output?.messages ?? []) {
      if (Array.isArray(m.parts)) m.parts = m.parts.filter((p) => p?.type !== 'reasoning')
    }
  },
})
