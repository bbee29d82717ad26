//! `rdmasim serve`: the results service (`tools/serve`) with this program's loader and its own
//! executable as the runner of simulations.

use rdmasim_serve::{ServeConfig, ServeError};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The flags of `rdmasim serve` (tools/serve/README.md).
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on; port 0 picks a free one (printed at start).
    #[arg(long, default_value = ServeConfig::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// The data directory: database, signing key, runs and results; created if missing.
    #[arg(long, default_value = "rdmasim-data")]
    data: PathBuf,
    /// A file holding the API token (else the environment variable RDMASIM_API_TOKEN).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Serves without a token: a demo on a loopback address only.
    #[arg(long)]
    insecure_no_auth: bool,
    /// Simulations run at once, each in its own process [default: the number of cores].
    #[arg(long)]
    workers: Option<usize>,
    /// The largest request body accepted, in bytes.
    #[arg(long, default_value_t = ServeConfig::DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// How long a download link stays valid, in seconds.
    #[arg(long, default_value_t = ServeConfig::DEFAULT_URL_TTL_SECS)]
    url_ttl: u64,
    /// The base URL download links start with (e.g. behind a proxy) [default: http://LISTEN].
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
}

/// Runs the server until SIGINT or SIGTERM: exit 0; 2 for a refused setting (no token), 1 for
/// a failure (the port taken, the data directory unwritable).
pub fn serve(args: ServeArgs) -> ExitCode {
    match start(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ (ServeError::NoToken | ServeError::InsecureNotLoopback(_) | ServeError::Setting(_))) => {
            eprintln!("rdmasim serve: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("rdmasim serve: {e}");
            ExitCode::from(1)
        }
    }
}

fn start(args: ServeArgs) -> Result<(), ServeError> {
    let auth = rdmasim_serve::resolve_auth(
        std::env::var("RDMASIM_API_TOKEN").ok(),
        args.token_file.as_deref(),
        args.insecure_no_auth,
        args.listen,
    )?;
    let runner = std::env::current_exe().map_err(|e| ServeError::Io("finding the rdmasim executable".into(), e))?;
    let mut config = ServeConfig::new(args.data, runner);
    config.listen = args.listen;
    config.auth = auth;
    config.workers = args.workers.unwrap_or_else(rdmasim_serve::default_workers);
    config.max_body_bytes = args.max_body_bytes;
    config.url_ttl_secs = args.url_ttl;
    config.public_url = args.public_url;
    let (workers, data) = (config.workers, config.data.clone());
    rdmasim_serve::serve_blocking(config, Arc::new(rdmasim::service::Loader), |url| {
        // The first line of standard output, for scripts (and the tests) to read the port from.
        println!(
            "rdmasim serve: listening on {url} (data {}, {workers} workers)",
            data.display()
        );
        std::io::Write::flush(&mut std::io::stdout()).ok();
    })
}
