//! `turnkeeper proxy` as a user starts it: the line it prints, the refusal of a remote address,
//! and a request through it to a loopback upstream.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_turnkeeper"))
}

#[test]
fn a_remote_listen_address_is_refused_with_one_line() {
    let out = bin()
        .args(["proxy", "--listen", "0.0.0.0:0"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not a loopback address") && err.contains("--allow-remote"),
        "{err}"
    );
}

#[test]
fn it_says_where_it_listens_and_forwards_to_the_upstream() {
    // A one-shot upstream on loopback that answers any request with a fixed body.
    let upstream = TcpListener::bind("127.0.0.1:0").expect("bind");
    let up = upstream.local_addr().expect("addr");
    let server = std::thread::spawn(move || {
        let (mut s, _) = upstream.accept().expect("accept");
        let mut buf = [0u8; 4096];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = s.read(&mut buf).expect("read");
            got.extend_from_slice(&buf[..n]);
        }
        let body = br#"{"data":[]}"#;
        write!(s, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len()).expect("write");
        s.write_all(body).expect("write");
        String::from_utf8_lossy(&got).into_owned()
    });
    let mut child = bin()
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &format!("http://{up}"),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut line)
        .expect("line");
    let addr = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .expect("an address")
        .to_owned();
    assert!(
        line.starts_with("turnkeeper proxy listening on http://127.0.0.1:"),
        "{line}"
    );
    let mut c = TcpStream::connect(&addr).expect("connect");
    write!(
        c,
        "GET /v1/models HTTP/1.1\r\nhost: {addr}\r\nx-api-key: k\r\nconnection: close\r\n\r\n"
    )
    .expect("write");
    let mut resp = String::new();
    c.read_to_string(&mut resp).expect("read");
    let _ = child.kill();
    let _ = child.wait();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains(r#"{"data":[]}"#), "{resp}");
    let seen = server.join().expect("server");
    assert!(seen.starts_with("GET /v1/models HTTP/1.1"), "{seen}");
    assert!(seen.to_ascii_lowercase().contains("x-api-key: k"), "{seen}");
}
