//! The HTTP side: the routes (one table, which the OpenAPI description is tested against), the
//! bearer-token check, JSON errors, and starting the server with its workers.

mod configs;
mod error;
mod results;
mod sims;

pub use error::ApiError;

use crate::ScenarioCheck;
use crate::config::{Auth, ServeConfig, ServeError};
use crate::db::{self, Db};
use crate::files::Layout;
use crate::runner::{self, Runs};
use crate::signing::Signer;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::handler::Handler;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, on};
use std::path::PathBuf;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub db: Db,
    pub runs: Arc<Runs>,
    pub check: Arc<dyn ScenarioCheck>,
    pub token: Option<String>,
    pub signer: Signer,
    pub layout: Layout,
    pub runner: PathBuf,
    pub base_url: String,
    pub url_ttl_secs: u64,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

/// One route of the API: its method, its path (OpenAPI's `{param}` syntax, as axum's), and
/// whether it needs the bearer token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// `GET`, `POST` or `PATCH`.
    pub method: &'static str,
    /// The path, e.g. `/api/v1/simulations/{sim_id}`.
    pub path: &'static str,
    /// Whether it needs `Authorization: Bearer TOKEN`: all but the health check and the signed
    /// download, whose signature is its credential.
    pub auth: bool,
}

struct Table {
    open: Router<AppState>,
    guarded: Router<AppState>,
    routes: Vec<Route>,
}

impl Table {
    fn add<H: Handler<T, AppState>, T: 'static>(
        mut self,
        method: &'static str,
        path: &'static str,
        auth: bool,
        handler: H,
    ) -> Self {
        let filter = match method {
            "GET" => MethodFilter::GET,
            "POST" => MethodFilter::POST,
            "PATCH" => MethodFilter::PATCH,
            _ => MethodFilter::DELETE,
        };
        if auth {
            self.guarded = self.guarded.route(path, on(filter, handler));
        } else {
            self.open = self.open.route(path, on(filter, handler));
        }
        self.routes.push(Route { method, path, auth });
        self
    }
}

/// Every route, as the router serves it.
fn table() -> Table {
    let t = Table {
        open: Router::new(),
        guarded: Router::new(),
        routes: Vec::new(),
    };
    t.add("GET", "/api/v1/health", false, health)
        .add("POST", "/api/v1/configurations", true, configs::create)
        .add("GET", "/api/v1/configurations/{config_id}", true, configs::get)
        .add(
            "PATCH",
            "/api/v1/configurations/{config_id}/parameters",
            true,
            configs::patch,
        )
        .add("POST", "/api/v1/simulations", true, sims::create)
        .add("GET", "/api/v1/simulations/{sim_id}", true, sims::get)
        .add("POST", "/api/v1/simulations/{sim_id}/cancel", true, sims::cancel)
        .add("GET", "/api/v1/simulations/{sim_id}/results", true, results::list)
        .add(
            "GET",
            "/api/v1/simulations/{sim_id}/results/download-url",
            true,
            results::download_url,
        )
        .add(
            "GET",
            "/api/v1/simulations/{sim_id}/results/files/{file_name}",
            false,
            results::download,
        )
}

/// The routes the server serves (for checking the OpenAPI description against them).
pub fn route_table() -> Vec<Route> {
    table().routes
}

fn router(state: AppState, max_body_bytes: usize) -> Router {
    let t = table();
    let guarded = t
        .guarded
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), require_token));
    t.open
        .merge(guarded)
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such endpoint") })
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(state)
}

async fn health() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({"status": "ok"}))
}

/// 401 with no detail for a missing or wrong token; the comparison takes the same time
/// whatever the token.
async fn require_token(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let Some(expected) = &s.token else {
        return next.run(req).await;
    };
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes())
        // The scheme's name is case-insensitive (RFC 7235); the token is not.
        .and_then(|v| (v.len() > 7 && v[..7].eq_ignore_ascii_case(b"bearer ")).then(|| &v[7..]))
        .unwrap_or_default();
    // Hashing both first makes the comparison length-independent too.
    use sha2::Digest;
    let (a, b) = (sha2::Sha256::digest(given), sha2::Sha256::digest(expected.as_bytes()));
    if bool::from(a.as_slice().ct_eq(b.as_slice())) {
        next.run(req).await
    } else {
        (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")]).into_response()
    }
}

/// Starts everything and serves until SIGINT or SIGTERM.
pub async fn serve(
    config: ServeConfig,
    check: Arc<dyn ScenarioCheck>,
    ready: impl FnOnce(&str),
) -> Result<(), ServeError> {
    if config.workers == 0 {
        return Err(ServeError::Setting("--workers: at least 1".into()));
    }
    if let Auth::Insecure = config.auth
        && !config.listen.ip().is_loopback()
    {
        return Err(ServeError::InsecureNotLoopback(config.listen));
    }
    let io = |what: &std::path::Path| {
        let what = what.display().to_string();
        move |e| ServeError::Io(what, e)
    };
    if let Some(u) = &config.public_url
        && !(u.starts_with("http://") || u.starts_with("https://"))
    {
        return Err(ServeError::Setting(format!(
            "--public-url {u}: an http:// or https:// URL"
        )));
    }
    let layout = Layout::create(&config.data).map_err(io(&config.data))?;
    // Two servers on one data directory would fail each other's runs at start: one at a time.
    let lock_path = layout.root.join("serve.lock");
    let lock = std::fs::File::create(&lock_path).map_err(io(&lock_path))?;
    if lock.try_lock().is_err() {
        return Err(ServeError::Setting(format!(
            "--data {}: another server is using it",
            layout.root.display()
        )));
    }
    let db = Db::open(&layout.database())?;
    let completed = db.call_blocking(db::recover)?;
    layout.clean(&completed).map_err(io(&layout.root))?;
    let signer = Signer::load_or_create(&layout.signing_key()).map_err(io(&layout.signing_key()))?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| ServeError::Io(format!("listening on {}", config.listen), e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| ServeError::Io("the listening socket".into(), e))?;
    let base_url = config
        .public_url
        .clone()
        .map(|u| u.trim_end_matches('/').to_string())
        .unwrap_or_else(|| format!("http://{bound}"));
    let state = AppState(Arc::new(Inner {
        db: db.clone(),
        runs: Arc::new(Runs::default()),
        check,
        token: match config.auth {
            Auth::Token(t) => Some(t),
            Auth::Insecure => None,
        },
        signer,
        layout,
        runner: config.runner,
        base_url: base_url.clone(),
        url_ttl_secs: config.url_ttl_secs,
    }));
    let workers: Vec<_> = (0..config.workers)
        .map(|_| tokio::spawn(runner::worker(state.clone())))
        .collect();
    ready(&base_url);
    let served = axum::serve(listener, router(state, config.max_body_bytes))
        .with_graceful_shutdown(shutdown_signal())
        .await;
    // Children die with their workers (kill on drop); their runs are failed, as on a restart.
    for w in workers {
        w.abort();
    }
    db.call_blocking(db::recover)?;
    drop(lock);
    served.map_err(|e| ServeError::Io("serving".into(), e))
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                ctrl_c.await.ok();
            }
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await.ok();
}
