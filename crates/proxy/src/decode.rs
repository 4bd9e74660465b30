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

    #[test]
    fn encodings_are_read_in_order() {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_ENCODING, "gzip, identity, br".parse().expect("v"));
        assert_eq!(encodings(&h), ["gzip", "br"]);
    }
}
