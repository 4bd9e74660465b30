// What the TypeScript peers do to a request body on every request, as one process: parse it,
// drop empty text blocks, move thinking blocks to the front of each assistant message, write it
// back. The baseline row `node pass` of benches/process.rs (issue 24).
//
//   node node_pass.mjs IN OUT
import { readFileSync, writeFileSync } from "node:fs";

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error("usage: node node_pass.mjs IN OUT");
  process.exit(2);
}
const body = JSON.parse(readFileSync(input, "utf8"));
const isThinking = (b) => b && (b.type === "thinking" || b.type === "redacted_thinking");
for (const m of body.messages ?? []) {
  if (!Array.isArray(m.content)) continue;
  let blocks = m.content.filter((b) => !(b && b.type === "text" && typeof b.text === "string" && b.text.trim() === ""));
  if (m.role === "assistant") {
    blocks = [...blocks.filter(isThinking), ...blocks.filter((b) => !isThinking(b))];
  }
  m.content = blocks;
}
writeFileSync(output, JSON.stringify(body));
