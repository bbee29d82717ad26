//! The server's settings (the `rdmasim serve` flags) and the checks made before it listens: a
//! token or an explicit insecure demo on loopback, never a silently open server.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// How requests are authenticated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Auth {
    /// Every endpoint but the health check and signed downloads needs `Authorization: Bearer TOKEN`.
    Token(String),
    /// No token (`--insecure-no-auth`): allowed on a loopback address only.
    Insecure,
}

/// Everything `rdmasim serve` is told.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The address to listen on; port 0 picks a free one.
    pub listen: SocketAddr,
    /// The data directory: the database, the signing key, the runs and their results.
    pub data: PathBuf,
    /// The token, or none for a loopback demo.
    pub auth: Auth,
    /// Simulations run at once, each in its own process.
    pub workers: usize,
    /// The largest request body accepted, in bytes (larger: 413).
    pub max_body_bytes: usize,
    /// How long a download link stays valid, in seconds.
    pub url_ttl_secs: u64,
    /// The base of the download links (`http://host:port`); default: the address listened on.
    pub public_url: Option<String>,
    /// The `rdmasim` executable that runs simulations (`rdmasim run ... --supervised`).
    pub runner: PathBuf,
}

impl ServeConfig {
    /// The default address: loopback, port 8080.
    pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
    /// The default largest request body: 1 MiB (a scenario is a few KiB).
    pub const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;
    /// The default lifetime of a download link: 900 s (15 minutes).
    pub const DEFAULT_URL_TTL_SECS: u64 = 900;

    /// The defaults, with a data directory and the runner; auth starts as `Insecure` and must
    /// be set (see [`resolve_auth`]).
    pub fn new(data: PathBuf, runner: PathBuf) -> Self {
        ServeConfig {
            listen: Self::DEFAULT_LISTEN
                .parse()
                .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8080))),
            data,
            auth: Auth::Insecure,
            workers: default_workers(),
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            url_ttl_secs: Self::DEFAULT_URL_TTL_SECS,
            public_url: None,
            runner,
        }
    }
}

/// The default number of workers: one per core the process may use (each run is one
/// single-threaded process), at least 1.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Why the server does not start or stops.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Neither a token nor `--insecure-no-auth`.
    #[error(
        "no API token: set RDMASIM_API_TOKEN or pass --token-file FILE (or --insecure-no-auth for a loopback-only demo)"
    )]
    NoToken,
    /// The token file is unreadable or empty.
    #[error("--token-file {0}: {1}")]
    TokenFile(PathBuf, String),
    /// `--insecure-no-auth` on an address other machines can reach.
    #[error("--insecure-no-auth listens on loopback only, not {0}")]
    InsecureNotLoopback(SocketAddr),
    /// A setting out of range.
    #[error("{0}")]
    Setting(String),
    /// A file or folder of the data directory, or the listening socket.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// The database.
    #[error("the database: {0}")]
    Db(#[from] rusqlite::Error),
}

/// The authentication the flags ask for: `--token-file` wins over `RDMASIM_API_TOKEN` (`env`);
/// with neither, `--insecure-no-auth` on a loopback `listen`, else an error. Surrounding
/// whitespace (a file's final newline) is not part of the token.
pub fn resolve_auth(
    env: Option<String>,
    token_file: Option<&Path>,
    insecure: bool,
    listen: SocketAddr,
) -> Result<Auth, ServeError> {
    let token = match token_file {
        Some(f) => {
            let text = std::fs::read_to_string(f).map_err(|e| ServeError::TokenFile(f.into(), e.to_string()))?;
            let t = text.trim().to_string();
            if t.is_empty() {
                return Err(ServeError::TokenFile(f.into(), "empty".into()));
            }
            Some(t)
        }
        None => env.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()),
    };
    match token {
        Some(t) => Ok(Auth::Token(t)),
        None if !insecure => Err(ServeError::NoToken),
        None if !listen.ip().is_loopback() => Err(ServeError::InsecureNotLoopback(listen)),
        None => Ok(Auth::Insecure),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_required_unless_insecure_on_loopback() {
        let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(matches!(resolve_auth(None, None, false, lo), Err(ServeError::NoToken)));
        assert!(matches!(
            resolve_auth(Some("  ".into()), None, false, lo),
            Err(ServeError::NoToken)
        ));
        assert_eq!(resolve_auth(None, None, true, lo).unwrap(), Auth::Insecure);
        assert!(matches!(
            resolve_auth(None, None, true, any),
            Err(ServeError::InsecureNotLoopback(_))
        ));
        assert_eq!(
            resolve_auth(Some("t\n".into()), None, false, any).unwrap(),
            Auth::Token("t".into())
        );
    }

    #[test]
    fn the_token_file_wins_and_must_hold_a_token() {
        let dir = std::env::temp_dir().join(format!("rdmasim-serve-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("token");
        std::fs::write(&f, "from-file\n").unwrap();
        let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
        assert_eq!(
            resolve_auth(Some("from-env".into()), Some(&f), false, lo).unwrap(),
            Auth::Token("from-file".into())
        );
        std::fs::write(&f, "\n").unwrap();
        assert!(matches!(
            resolve_auth(None, Some(&f), true, lo),
            Err(ServeError::TokenFile(..))
        ));
        assert!(matches!(
            resolve_auth(None, Some(&dir.join("missing")), false, lo),
            Err(ServeError::TokenFile(..))
        ));
        std::fs::remove_dir_all(&dir).ok();
    }
}
