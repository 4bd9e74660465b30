//! Request bodies sent with `Content-Encoding` (gzip, deflate, br, zstd): decoded within the
//! body limit so they can be judged and repaired like any other.

use std::io::Read as _;

use bytes::Bytes;
use http::HeaderMap;
use http::header::CONTENT_ENCODING;

/// Why a body was not decoded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NotDecoded {
    /// An encoding the proxy does not know (it goes as it came).
    Unknown,
    /// Decoded, it is larger than the limit.
    TooLarge,
    /// Its bytes are not what the header says.
    Broken,
}

/// The encodings of `headers`, in the order they were applied (`identity` left out); empty when
/// the body is not encoded.
pub(crate) fn encodings(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(CONTENT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty() && s != "identity")
        .collect()
}

/// `body` decoded from `encodings` (applied in that order, so undone in reverse), at most
/// `limit` bytes.
pub(crate) fn decode(
    body: &Bytes,
    encodings: &[String],
    limit: usize,
) -> Result<Bytes, NotDecoded> {
    let mut current = body.clone();
    for e in encodings.iter().rev() {
        current = decode_one(&current, e, limit)?;
    }
    Ok(current)
}

fn decode_one(body: &[u8], encoding: &str, limit: usize) -> Result<Bytes, NotDecoded> {
    let reader: Box<dyn std::io::Read + '_> = match encoding {
        "gzip" | "x-gzip" => Box::new(flate2::read::MultiGzDecoder::new(body)),
        // RFC 9110 says zlib-wrapped; some clients send raw deflate: tell them by the header.
        "deflate" if looks_like_zlib(body) => Box::new(flate2::read::ZlibDecoder::new(body)),
        "deflate" => Box::new(flate2::read::DeflateDecoder::new(body)),
        "br" => Box::new(brotli_decompressor::Decompressor::new(body, 4096)),
        "zstd" => {
            Box::new(ruzstd::decoding::StreamingDecoder::new(body).map_err(|_| NotDecoded::Broken)?)
        }
        _ => return Err(NotDecoded::Unknown),
    };
    // One byte past the limit tells "too large" from "exactly at the limit".
    let mut out = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    reader
        .take(cap)
        .read_to_end(&mut out)
        .map_err(|_| NotDecoded::Broken)?;
    if out.len() > limit {
        return Err(NotDecoded::TooLarge);
    }
    Ok(Bytes::from(out))
}

fn looks_like_zlib(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] & 0x0f == 8 && (u16::from(b[0]) << 8 | u16::from(b[1])) % 31 == 0
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn gzip(b: &[u8]) -> Bytes {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b).expect("write");
        Bytes::from(e.finish().expect("finish"))
    }

    #[test]
    fn gzip_and_deflate_decode_within_the_limit() {
        let body = br#"{"model":"x","messages":[]}"#;
        let z = gzip(body);
        assert_eq!(decode(&z, &["gzip".into()], 1024).expect("gzip"), &body[..]);
        assert_eq!(decode(&z, &["gzip".into()], 10), Err(NotDecoded::TooLarge));
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(body).expect("write");
        let d = Bytes::from(e.finish().expect("finish"));
        assert_eq!(
            decode(&d, &["deflate".into()], 1024).expect("zlib"),
            &body[..]
        );
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(body).expect("write");
        let d = Bytes::from(e.finish().expect("finish"));
        assert_eq!(
            decode(&d, &["deflate".into()], 1024).expect("raw"),
            &body[..]
        );
        assert_eq!(
            decode(&Bytes::from_static(b"not gzip"), &["gzip".into()], 1024),
            Err(NotDecoded::Broken)
        );
        assert_eq!(
            decode(&z, &["compress".into()], 1024),
            Err(NotDecoded::Unknown)
        );
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_limit() {
        let z = gzip(&vec![b'a'; 8 * 1024 * 1024]);
        assert!(z.len() < 64 * 1024);
        assert_eq!(
            decode(&z, &["gzip".into()], 1024 * 1024),
            Err(NotDecoded::TooLarge)
        );
    }

    const BODY: &[u8] = br#"{"model":"x","messages":[{"role":"user","content":"hi"}]}"#;

    fn brotli(b: &[u8]) -> Bytes {
        let mut out = Vec::new();
        {
            let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            w.write_all(b).expect("write");
        }
        Bytes::from(out)
    }

    fn zstd(b: &[u8]) -> Bytes {
        Bytes::from(ruzstd::encoding::compress_to_vec(
            b,
            ruzstd::encoding::CompressionLevel::Fastest,
        ))
    }

    /// One check for every encoding the proxy decodes: the body, decoded from `encodings` (in
    /// the order applied) with the limit given, is `expect`.
    fn check(encoded: &Bytes, encodings: &[&str], limit: usize, expect: Result<&[u8], NotDecoded>) {
        let names: Vec<String> = encodings.iter().map(|e| (*e).to_owned()).collect();
        let got = decode(encoded, &names, limit);
        assert_eq!(
            got.as_deref(),
            expect.as_ref().map(|b| &b[..]),
            "{encodings:?}"
        );
    }

    #[test]
    fn br_and_zstd_decode_within_the_limit() {
        for (encoding, encoded) in [("br", brotli(BODY)), ("zstd", zstd(BODY))] {
            assert_ne!(&encoded[..], BODY, "{encoding} encodes");
            check(&encoded, &[encoding], 1024, Ok(BODY));
            // Exactly at the limit is within it; a byte less is not.
            check(&encoded, &[encoding], BODY.len(), Ok(BODY));
            check(
                &encoded,
                &[encoding],
                BODY.len() - 1,
                Err(NotDecoded::TooLarge),
            );
            check(
                &Bytes::from_static(b"\x00\x01 not encoded at all"),
                &[encoding],
                1024,
                Err(NotDecoded::Broken),
            );
        }
        // Applied in order, undone in reverse: zstd over br.
        check(&zstd(&brotli(BODY)), &["br", "zstd"], 1024, Ok(BODY));
    }

    #[test]
    fn raw_deflate_whose_first_byte_looks_like_a_zlib_method_is_still_raw() {
        // A raw deflate stream of two stored blocks: the first not final, its header byte 0x08
        // (BFINAL 0, BTYPE 00, then padding bits, which a stored block's header ignores), so the
        // byte's low nibble is zlib's method 8; with the next byte (the length, 27) it fails
        // zlib's header check ((0x08 << 8 | 27) % 31 != 0), so it is not a zlib stream.
        let data = &BODY[..27];
        let mut raw = vec![0x08, 27, 0, !27u8, 0xff];
        raw.extend_from_slice(data);
        raw.extend_from_slice(&[0x01, 0, 0, 0xff, 0xff]);
        assert!(!looks_like_zlib(&raw));
        check(&Bytes::from(raw), &["deflate"], 1024, Ok(data));
        // Too short to be either: not zlib, and not a deflate stream.
        assert!(!looks_like_zlib(&[0x78]));
        check(
            &Bytes::from_static(&[0x78]),
            &["deflate"],
            1024,
            Err(NotDecoded::Broken),
        );
    }

    #[test]
    fn encodings_are_read_in_order() {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_ENCODING, "gzip, identity, br".parse().expect("v"));
        assert_eq!(encodings(&h), ["gzip", "br"]);
    }
}
