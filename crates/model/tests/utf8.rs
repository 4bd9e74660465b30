//! `utf8`: the SIMD check says what the standard library's says, and an invalid input names the
//! offset of its first invalid byte.

use turnkeeper_model::{ModelError, utf8};

fn check(input: &[u8], expect: Result<&str, usize>) {
    let got = utf8(input).map_err(|e| match e {
        ModelError::InvalidUtf8 { offset } => offset,
        other => panic!("{other}"),
    });
    assert_eq!(got, expect, "{input:?}");
    assert_eq!(
        got.is_ok(),
        std::str::from_utf8(input).is_ok(),
        "agrees with std: {input:?}"
    );
}

#[test]
fn valid_and_invalid_inputs() {
    check(b"", Ok(""));
    check(br#"{"a":"b"}"#, Ok(r#"{"a":"b"}"#));
    check("{\"t\":\"→ é 🦀\"}".as_bytes(), Ok("{\"t\":\"→ é 🦀\"}"));
    // A lone continuation byte, an overlong encoding, a surrogate, a cut sequence at the end.
    check(b"{\"t\":\"\x80\"}", Err(6));
    check(b"ab\xc0\xafcd", Err(2));
    check(b"ab\xed\xa0\x80", Err(2));
    check(b"abc\xe2\x86", Err(3));
    // Past the first 64 bytes (the SIMD blocks), the offset is still exact.
    let mut long = "x".repeat(1000).into_bytes();
    long[777] = 0xff;
    check(&long, Err(777));
}
