//! The wire-family workloads, shared by the `wire` bench and the `wire_ops` example: a Kimi
//! thinking session on Chat Completions and a Codex-style session on Responses, of a given size
//! (see `wire.rs` for their shape).

use std::fmt::Write as _;

/// A JSON string literal of `s`.
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// About `len` bytes of tool output: compiler diagnostics with quotes, backslashes, tabs and
/// some non-ASCII, so the string scan meets escapes all along.
fn tool_output(step: usize, len: usize) -> String {
    let mut s = String::with_capacity(len + 256);
    let mut i = 0;
    while s.len() < len {
        i += 1;
        let _ = write!(
            s,
            "error[E0308]: mismatched types\n --> src\\parser\\mod.rs:{step}:{i}\n   |\n{i:>4} |     let n: u32 = \"valeur — é\";\n   |\texpected `u32`, found `&str`\n"
        );
    }
    s
}

/// Reasoning text of about `len` bytes.
fn reasoning(step: usize, len: usize) -> String {
    let mut s = String::with_capacity(len + 128);
    while s.len() < len {
        let _ = write!(
            s,
            "Step {step}: the test fails because the parser returns a \"str\" where a u32 is expected; read the file, then patch it. "
        );
    }
    s
}

/// An opaque blob of about `len` base64 characters (encrypted reasoning).
fn blob(step: usize, len: usize) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = step as u64 * 2_654_435_761 + 1;
    let mut s = String::from("gAAAAA");
    while s.len() < len {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        s.push(B64[(x >> 58) as usize] as char);
    }
    s
}

/// A Kimi thinking session on Chat Completions of about `target` bytes.
pub fn chat_body(target: usize) -> String {
    chat_body_with(target, 30_000)
}

/// [`chat_body`] with tool outputs of about `out_len` bytes (small ones make many messages).
pub fn chat_body_with(target: usize, out_len: usize) -> String {
    let mut m = Vec::new();
    m.push(r#"{"role":"system","content":"You are a careful coding agent."}"#.to_owned());
    let mut size = 0;
    let mut step = 0;
    while size < target {
        step += 1;
        let mut turn = format!(
            r#"{{"role":"user","content":{}}}"#,
            lit(&format!("Fix the failing test number {step}."))
        );
        for k in 0..2 {
            let calls = if (step + k) % 3 == 0 { 2 } else { 1 };
            let mut tc = Vec::new();
            let mut answers = Vec::new();
            for c in 0..calls {
                let id = format!("functions.read_file:{}", step * 10 + k * 2 + c);
                tc.push(format!(
                    r#"{{"id":{},"type":"function","function":{{"name":"read_file","arguments":{}}}}}"#,
                    lit(&id),
                    lit(r#"{"path":"src/parser/mod.rs"}"#)
                ));
                answers.push(format!(
                    r#"{{"role":"tool","tool_call_id":{},"content":{}}}"#,
                    lit(&id),
                    lit(&tool_output(step, out_len))
                ));
            }
            let _ = write!(
                turn,
                r#",{{"role":"assistant","content":"","reasoning_content":{},"tool_calls":[{}]}},{}"#,
                lit(&reasoning(step, 1_500)),
                tc.join(","),
                answers.join(",")
            );
        }
        let _ = write!(
            turn,
            r#",{{"role":"assistant","content":{},"reasoning_content":{}}}"#,
            lit("Fixed: the parser now returns a u32."),
            lit(&reasoning(step, 600))
        );
        size += turn.len();
        m.push(turn);
    }
    format!(
        r#"{{"model":"kimi-k2-thinking","messages":[{}],"tools":[{{"type":"function","function":{{"name":"read_file","parameters":{{"type":"object"}}}}}}],"stream":true}}"#,
        m.join(",")
    )
}

/// A Codex-style session on Responses of about `target` bytes.
pub fn responses_body(target: usize) -> String {
    responses_body_with(target, 30_000)
}

/// [`responses_body`] with tool outputs of about `out_len` bytes (small ones make many items).
pub fn responses_body_with(target: usize, out_len: usize) -> String {
    let mut items = Vec::new();
    items.push(r#"{"role":"developer","content":"You are a careful coding agent."}"#.to_owned());
    let mut size = 0;
    let mut step = 0;
    while size < target {
        step += 1;
        let mut turn = format!(
            r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":{}}}]}}"#,
            lit(&format!("Fix the failing test number {step}."))
        );
        for k in 0..2 {
            let call = format!("call_{step:06}{k}");
            let _ = write!(
                turn,
                r#",{{"type":"reasoning","id":"rs_{step:06}{k}","summary":[{{"type":"summary_text","text":{}}}],"encrypted_content":{}}},{{"type":"function_call","id":"fc_{step:06}{k}","call_id":{},"name":"read_file","arguments":{}}},{{"type":"function_call_output","call_id":{},"output":{}}}"#,
                lit(&reasoning(step, 300)),
                lit(&blob(step * 2 + k, 3_000)),
                lit(&call),
                lit(r#"{"path":"src/parser/mod.rs"}"#),
                lit(&call),
                lit(&tool_output(step, out_len))
            );
        }
        let _ = write!(
            turn,
            r#",{{"type":"reasoning","id":"rs_{step:06}f","summary":[],"encrypted_content":{}}},{{"type":"message","id":"msg_{step:06}","role":"assistant","content":[{{"type":"output_text","text":{},"annotations":[]}}]}}"#,
            lit(&blob(step * 2 + 7, 3_000)),
            lit("Fixed: the parser now returns a u32.")
        );
        size += turn.len();
        items.push(turn);
    }
    format!(
        r#"{{"model":"gpt-5.1-codex","input":[{}],"store":false,"include":["reasoning.encrypted_content"],"reasoning":{{"effort":"medium","summary":"auto"}},"tools":[{{"type":"function","name":"read_file","parameters":{{"type":"object"}}}}]}}"#,
        items.join(",")
    )
}
