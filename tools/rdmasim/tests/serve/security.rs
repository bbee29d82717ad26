//! The security cases: the token, file names that are paths, a symlink planted in the data
//! directory, expired and tampered links, an oversized body. Each is refused with its status,
//! and no answer holds anything from outside the data directory.

use crate::common::TempDir;
use crate::server::{Reply, Server, TOKEN, scenario};

/// What a file outside the data directory holds: no answer may contain it.
const SECRET: &str = "outside-the-data-directory-7f3a";

/// A server with one completed simulation of the star: (server, sim id).
fn with_results(data: &TempDir, extra: &[&str]) -> (Server, i64) {
    let server = Server::start(&data.0.join("data"), extra);
    let config = server.configure(&scenario("star"), r#"{"RunTime": 0.0005}"#);
    let sim = server.start_sim(config);
    assert_eq!(server.wait(sim)["status"], "completed");
    (server, sim)
}

fn assert_clean(r: &Reply) {
    assert!(
        !r.text().contains(SECRET) && !r.text().contains("root:"),
        "leaked: {}",
        r.text()
    );
}

#[test]
fn no_token_or_a_wrong_one_is_401_without_detail() {
    let data = TempDir::new("serve-auth");
    let (server, sim) = with_results(&data, &[]);
    let paths = [
        "/api/v1/configurations/1".to_string(),
        format!("/api/v1/simulations/{sim}"),
        format!("/api/v1/simulations/{sim}/results?type=csv"),
        format!("/api/v1/simulations/{sim}/results/download-url?fileName=star-beacon-0.csv"),
    ];
    for p in &paths {
        for token in [None, Some("wrong"), Some(""), Some(&TOKEN[..TOKEN.len() - 1])] {
            let r = server.call("GET", p, None, token);
            assert_eq!(r.status, 401, "{p} with {token:?}");
            assert!(r.body.is_empty(), "{p}: a 401 says nothing: {}", r.text());
        }
    }
    let r = server.call(
        "POST",
        "/api/v1/configurations",
        Some(("text/plain", b"()")),
        Some("wrong"),
    );
    assert_eq!(r.status, 401);
    let r = server.call(
        "POST",
        "/api/v1/simulations",
        Some(("application/json", b"{\"config_id\": 1}")),
        None,
    );
    assert_eq!(r.status, 401);
    // The health check needs none.
    assert_eq!(server.call("GET", "/api/v1/health", None, None).status, 200);
}

#[test]
fn file_names_that_are_paths_are_refused() {
    let data = TempDir::new("serve-names");
    let (server, sim) = with_results(&data, &[]);
    let url = |q: &str| format!("/api/v1/simulations/{sim}/results/download-url?fileName={q}");
    for (name, status) in [
        ("../../etc/passwd", 400),
        ("/etc/passwd", 400),
        ("..%2F..%2Fetc%2Fpasswd", 400),
        ("%2e%2e%2f%2e%2e%2fetc%2fpasswd", 400),
        ("%252e%252e%252fetc%252fpasswd", 400),
        ("star-beacon-0.csv%00", 400),
        ("..", 400),
        ("", 400),
        ("passwd", 404),
        ("rdmasim.sqlite", 404),
        ("url-signing.key", 404),
    ] {
        let r = server.get(&url(name));
        assert_eq!(r.status, status, "{name}: {}", r.text());
        assert_clean(&r);
    }
    assert_eq!(
        server
            .get(&format!("/api/v1/simulations/{sim}/results/download-url"))
            .status,
        400
    );
    // The download route itself: a path in place of the name is not signed, so 403.
    let good = server.download_url(sim, "star-beacon-0.csv");
    let query = &good[good.find('?').unwrap()..];
    for name in ["..%2F..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "..%2Frdmasim.sqlite"] {
        let r = server.download(&format!(
            "{}/api/v1/simulations/{sim}/results/files/{name}{query}",
            server.url
        ));
        assert!(matches!(r.status, 403 | 404), "{name}: {}", r.status);
        assert_clean(&r);
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_planted_in_the_data_directory_is_not_followed() {
    let data = TempDir::new("serve-symlink");
    let (server, sim) = with_results(&data, &[]);
    let secret = data.0.join("secret.csv");
    std::fs::write(&secret, SECRET).unwrap();
    // A listed file replaced by a link out of the data directory.
    let planted = server.data.join(format!("results/{sim}/star-beacon-0.csv"));
    std::fs::remove_file(&planted).unwrap();
    std::os::unix::fs::symlink(&secret, &planted).unwrap();
    let url = server.download_url(sim, "star-beacon-0.csv");
    let r = server.download(&url);
    assert_eq!(r.status, 403, "{}", r.text());
    assert_clean(&r);
    // The results folder itself replaced by a link: its files are refused too.
    let dir = server.data.join(format!("results/{sim}"));
    let moved = data.0.join("moved");
    std::fs::rename(&dir, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &dir).unwrap();
    let url = server.download_url(sim, "star-rdma-perf-0.csv");
    assert_eq!(server.download(&url).status, 403);
}

#[test]
fn expired_and_tampered_links_are_refused() {
    let data = TempDir::new("serve-links");
    let (mut server, sim) = with_results(&data, &[]);
    let url = server.download_url(sim, "star-beacon-0.csv");
    assert_eq!(server.download(&url).status, 200);
    let (base, query) = url.split_once('?').unwrap();
    // Another file with this file's signature.
    let other = format!("{}?{query}", base.replace("star-beacon-0.csv", "star-rdma-perf-0.csv"));
    // Another simulation.
    let sim2 = format!(
        "{}?{query}",
        base.replace(&format!("/simulations/{sim}/"), &format!("/simulations/{}/", sim + 1))
    );
    // A later expiry.
    let expires: u64 = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("expires="))
        .unwrap()
        .parse()
        .unwrap();
    let later = url.replace(&format!("expires={expires}"), &format!("expires={}", expires + 3600));
    // A flipped signature digit, a missing signature, no query at all.
    let last = url.chars().last().unwrap();
    let flipped = format!("{}{}", &url[..url.len() - 1], if last == '0' { '1' } else { '0' });
    let unsigned = url.split("&signature=").next().unwrap().to_string();
    for bad in [&other, &sim2, &later, &flipped, &unsigned, &base.to_string()] {
        let r = server.download(bad);
        assert_eq!(r.status, 403, "{bad}: {}", r.text());
    }
    // The bearer token does not replace a signature.
    let r = server.call("GET", base, None, Some(TOKEN));
    assert_eq!(r.status, 403);

    // A server whose links last 0 s: every link it gives is already expired. The signing key
    // is kept in the data directory, so the first server's link still works on it.
    server.kill();
    let old_base = server.url.clone();
    let server = Server::start(&server.data.clone(), &["--url-ttl", "0"]);
    let moved = url.replace(&old_base, &server.url);
    assert_eq!(server.download(&moved).status, 200, "a link outlives a restart");
    let expired = server.download_url(sim, "star-beacon-0.csv");
    let r = server.download(&expired);
    assert_eq!(r.status, 403, "{}", r.text());
}

#[test]
fn an_oversized_body_is_413() {
    let data = TempDir::new("serve-body");
    let server = Server::start(&data.0.join("data"), &["--max-body-bytes", "65536"]);
    let mut big = scenario("star");
    big.push_str(&format!("// {}\n", "x".repeat(70_000)));
    let r = server.call(
        "POST",
        "/api/v1/configurations",
        Some(("text/plain", big.as_bytes())),
        Some(TOKEN),
    );
    assert_eq!(r.status, 413, "{}", r.text());
    let config = server.configure(&scenario("star"), "{}");
    let huge = format!("{{\"RunTime\": 0.001, \"pad\": \"{}\"}}", "y".repeat(70_000));
    let r = server.patch_json(&format!("/api/v1/configurations/{config}/parameters"), &huge);
    assert_eq!(r.status, 413, "{}", r.text());
    // Under the limit, the same scenario is fine.
    let ok = scenario("star") + &format!("// {}\n", "x".repeat(1000));
    let r = server.call(
        "POST",
        "/api/v1/configurations",
        Some(("text/plain", ok.as_bytes())),
        Some(TOKEN),
    );
    assert_eq!(r.status, 201, "{}", r.text());
}

#[test]
fn the_server_refuses_to_start_without_a_token() {
    let data = TempDir::new("serve-notoken");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_rdmasim"))
            .args(["serve", "--listen", "127.0.0.1:0", "--data", data.path()])
            .args(args)
            .env_remove("RDMASIM_API_TOKEN")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run rdmasim serve")
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("RDMASIM_API_TOKEN"));
    // `--insecure-no-auth` off loopback is refused by `resolve_auth`'s unit test: no test here
    // ever asks a server to listen anywhere but 127.0.0.1.
    let empty = data.0.join("empty-token");
    std::fs::write(&empty, "\n").unwrap();
    let o = run(&["--token-file", empty.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(0));
}
