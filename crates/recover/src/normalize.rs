//! Text normalisation: one linear pass that sees through the ways real error texts are wrapped.
//!
//! Real errors arrive JSON-escaped one to three levels deep (`\"`, `\\\"`, `\\n`), as Python
//! reprs, hard-wrapped by terminals (a newline plus indentation inserted anywhere, even inside a
//! word or a JSON key), inside TUI boxes (`│`, `╭`, `⎿`, `■`, emoji), with backticks stripped
//! or kept. See `shared/research/errors-traps.md`, trap 7.
//!
//! The pass produces two views of the same text:
//! - `lower`: unescaped, with every whitespace character, quote, backtick and non-alphanumeric
//!   non-ASCII symbol removed, ASCII-lowercased. A hard-wrap can never split a phrase in this
//!   view, because the view has no spaces at all. Patterns are matched against it.
//! - `spaced`: unescaped, with whitespace runs and symbols collapsed to one space and quotes kept.
//!   Used to cut out the human-readable innermost message.
//!
//! Every step is a single forward scan; nothing backtracks.

/// The normalised views of one error text.
#[derive(Debug, Clone)]
pub(crate) struct Normalized {
    /// Unescaped text without whitespace, quotes, backticks or symbols, ASCII-lowercased.
    pub lower: String,
    /// Unescaped text with whitespace collapsed and quotes kept (original case).
    pub spaced: String,
}

/// The bytes [`Builder::emit`] writes unchanged into both views: printable ASCII other than
/// quotes, backticks and the backslash. Runs of them are copied at once.
const PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x21;
    while b < 0x7f {
        t[b] = !matches!(b as u8, b'"' | b'\'' | b'`' | b'\\');
        b += 1;
    }
    t
};

impl Normalized {
    /// Normalise `input` in one pass.
    pub(crate) fn new(input: &str) -> Self {
        let mut n = Builder {
            compact: String::with_capacity(input.len()),
            spaced: String::with_capacity(input.len()),
            last_space: true,
        };
        let bytes = input.as_bytes();
        let next_char = |i: usize| input.get(i..).and_then(|rest| rest.chars().next());
        let mut i = 0;
        while i < bytes.len() {
            let run = bytes[i..]
                .iter()
                .position(|&b| !PLAIN[usize::from(b)])
                .unwrap_or(bytes.len() - i);
            if run > 0 {
                n.plain(&input[i..i + run]);
                i += run;
                continue;
            }
            let Some(c) = next_char(i) else { break };
            i += c.len_utf8();
            if c != '\\' {
                n.emit(c);
                continue;
            }
            // A run of backslashes is one escape, whatever the nesting depth that produced it. A
            // terminal may hard-wrap between the backslash and the escaped letter (`\` at the
            // end of a line, `n` on the next): the wrap is skipped and the escape kept whole.
            // When the text was escaped again after the wrap, the wrap's line break is itself an
            // escape: an odd run of three or more backslashes before `n` or `r` is a backslash
            // followed by a line break one level down, and is skipped the same way.
            let mut slashes = 1;
            loop {
                match next_char(i) {
                    Some('\\') => {
                        slashes += 1;
                        i += 1;
                    }
                    Some(d) if d.is_whitespace() => i += d.len_utf8(),
                    Some('n' | 'r') if escaped_wrap(slashes) => {
                        slashes = 0;
                        i += 1;
                    }
                    _ => break,
                }
            }
            match bytes.get(i) {
                Some(b'n' | b't' | b'r') => {
                    i += 1;
                    n.emit(' ');
                }
                Some(b'u') => {
                    i += 1;
                    let mut code = 0u32;
                    let mut digits = 0;
                    while digits < 4 {
                        match bytes.get(i).and_then(|d| char::from(*d).to_digit(16)) {
                            Some(v) => {
                                code = code * 16 + v;
                                digits += 1;
                                i += 1;
                            }
                            None => break,
                        }
                    }
                    if digits == 4 {
                        if let Some(decoded) = char::from_u32(code) {
                            n.emit(decoded);
                        }
                    } else {
                        // The letter and the digits read stand for themselves.
                        n.plain(&input[i - digits - 1..i]);
                    }
                }
                // `\"`, `\'`, `\/`, `` \` `` and anything else: the escaped character stands for
                // itself and is handled by the next iteration.
                _ => {}
            }
        }
        let mut lower = n.compact;
        lower.make_ascii_lowercase();
        Normalized {
            lower,
            spaced: n.spaced.trim().to_owned(),
        }
    }
}

/// Whether a run of `slashes` backslashes before `n` or `r` is a line break that a terminal's
/// hard wrap put between a backslash and its letter, escaped by a later level of JSON: at one
/// level down, `\\\n` reads as a backslash and a line break.
fn escaped_wrap(slashes: usize) -> bool {
    slashes >= 3 && slashes % 2 == 1
}

struct Builder {
    compact: String,
    spaced: String,
    last_space: bool,
}

impl Builder {
    /// Characters that go into both views as they are (see [`PLAIN`]).
    fn plain(&mut self, run: &str) {
        self.compact.push_str(run);
        self.spaced.push_str(run);
        self.last_space = false;
    }

    fn space(&mut self) {
        if !self.last_space {
            self.spaced.push(' ');
            self.last_space = true;
        }
    }

    fn emit(&mut self, c: char) {
        if c.is_whitespace() || c.is_control() {
            self.space();
        } else if c == '`' {
            // Backticks are dropped in both views: markdown often strips them anyway.
        } else if c == '"' || c == '\'' {
            self.spaced.push(c);
            self.last_space = false;
        } else if c.is_ascii() || c.is_alphanumeric() {
            self.compact.push(c);
            self.spaced.push(c);
            self.last_space = false;
        } else {
            // Box drawing, TUI glyphs (⎿ ✕ ■ ⏺), emoji, ellipses, middle dots.
            self.space();
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Normalized;

    /// The character-by-character normaliser the run-copying one replaced: both must give the
    /// same views of every text.
    fn reference(input: &str) -> (String, String) {
        let mut n = super::Builder {
            compact: String::with_capacity(input.len()),
            spaced: String::with_capacity(input.len()),
            last_space: true,
        };
        let mut chars = input.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                n.emit(c);
                continue;
            }
            // A run of backslashes is one escape, whatever the nesting depth that produced it. A
            // terminal may hard-wrap between the backslash and the escaped letter (`\` at the
            // end of a line, `n` on the next): the wrap is skipped and the escape kept whole.
            let mut slashes = 1;
            while let Some(&d) = chars.peek() {
                if d == '\\' {
                    slashes += 1;
                } else if d.is_whitespace() {
                } else if matches!(d, 'n' | 'r') && super::escaped_wrap(slashes) {
                    slashes = 0;
                } else {
                    break;
                }
                chars.next();
            }
            match chars.peek().copied() {
                Some('n' | 't' | 'r') => {
                    chars.next();
                    n.emit(' ');
                }
                Some('u') => {
                    chars.next();
                    let mut code = 0u32;
                    let mut taken = [' '; 4];
                    let mut digits = 0;
                    while digits < 4 {
                        match chars.peek().copied() {
                            Some(d) if d.is_ascii_hexdigit() => {
                                code = code * 16 + d.to_digit(16).unwrap_or(0);
                                taken[digits] = d;
                                digits += 1;
                                chars.next();
                            }
                            _ => break,
                        }
                    }
                    if digits == 4 {
                        if let Some(decoded) = char::from_u32(code) {
                            n.emit(decoded);
                        }
                    } else {
                        n.emit('u');
                        for d in &taken[..digits] {
                            n.emit(*d);
                        }
                    }
                }
                // `\"`, `\'`, `\/`, `` \` `` and anything else: the escaped character stands for
                // itself and is handled by the next iteration.
                _ => {}
            }
        }
        let mut lower = n.compact;
        lower.make_ascii_lowercase();
        (lower, n.spaced.trim().to_owned())
    }

    proptest! {
        #[test]
        fn copying_plain_runs_changes_nothing(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("\\".to_owned()),
                    Just("\\\\\\\"".to_owned()),
                    Just("\\\n   n".to_owned()),
                    Just("\\u00e9".to_owned()),
                    Just("\\ud83d".to_owned()),
                    Just("\\u12".to_owned()),
                    Just("\\u".to_owned()),
                    Just("\\t".to_owned()),
                    Just("`code`".to_owned()),
                    Just(" \n\t\r ".to_owned()),
                    Just("│ ⎿ ■ — é ß 日本".to_owned()),
                    "[ -~]{0,12}",
                    any::<String>(),
                ],
                0..12,
            )
        ) {
            let text: String = parts.concat();
            let n = Normalized::new(&text);
            let (lower, spaced) = reference(&text);
            prop_assert_eq!(&n.lower, &lower, "lower view of {:?}", text);
            prop_assert_eq!(&n.spaced, &spaced, "spaced view of {:?}", text);
        }
    }

    #[test]
    fn unescapes_nested_levels_and_removes_wraps() {
        let n = Normalized::new(r#"{\"t\n    ype\\\":\\\"a b\"}"#);
        assert_eq!(n.lower, "{type:ab}");
        let n = Normalized::new("│ Internal server \n     error │");
        assert_eq!(n.lower, "internalservererror");
        assert_eq!(n.spaced, "Internal server error");
    }

    #[test]
    fn an_escape_split_by_a_hard_wrap_stays_one_escape() {
        // Found by the `classify` fuzz target: a hard wrap between `\` and `n`.
        let n = Normalized::new("thinking mode mu\\\n       n   st be passed back");
        assert_eq!(n.lower, "thinkingmodemustbepassedback");
    }

    /// Normalises `input` and compares both forms.
    fn check(input: &str, lower: &str, spaced: &str) {
        let n = Normalized::new(input);
        assert_eq!(
            (n.lower.as_str(), n.spaced.as_str()),
            (lower, spaced),
            "{input:?}"
        );
    }

    #[test]
    fn controls_quotes_backticks_and_glyphs() {
        check("a\u{7}b\u{0}c", "abc", "a b c");
        check(r#"it's "A"   `B`"#, "itsab", r#"it's "A" B"#);
        check("x ─ y → é", "xyé", "x y é");
        check("  \t a \n\n b  ", "ab", "a b");
        check(r"tab\tand\rnew\nline", "tabandnewline", "tab and new line");
        check(r"\\\u0041", "a", "A");
        check(r"\ud83d", "", "");
        check(r"\u12", "u12", "u12");
    }

    #[test]
    fn a_hard_wrap_inside_an_escape_escaped_again_stays_one_escape() {
        // Found by the `classify` fuzz target (corpus/regressions/classify-9caa1b0757c57950): a
        // JSON-string text hard-wrapped between `\` and `n` (`must\` + line break + `n  be`),
        // then escaped as a JSON string again, reads `must\\\n   n  be`; the `n` left over
        // used to join the next word (`mustnbepassed`) and the phrase was missed.
        let n = Normalized::new("thinking mode must\\\\\\n   n  be passed back");
        assert_eq!(n.lower, "thinkingmodemustbepassedback");
        // The same wrap before an escaped quote, and five backslashes (one level deeper).
        let n = Normalized::new("say \\\\\\n  \\\"hi\\\" and \\\\\\\\\\n  nmore");
        assert_eq!(n.lower, "sayhiandmore");
        // An even run before `n` is an escaped line break, kept as one.
        let n = Normalized::new("line\\\\nnext");
        assert_eq!(n.spaced, "line next");
    }

    #[test]
    fn decodes_unicode_escapes() {
        let n = Normalized::new(r"\u0060thinking\u0060 \u00e9");
        assert_eq!(n.lower, "thinkingé");
        let n = Normalized::new(r"\u00zz");
        assert_eq!(n.lower, "u00zz");
    }
}
