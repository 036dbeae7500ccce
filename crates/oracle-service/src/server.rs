//! The HTTP server: axum on tokio, the job store, and worker tasks that run
//! jobs through the [`Runner`] on blocking threads.
//!
//! **Requests.** Every `/v1/` request needs `Authorization: Bearer TOKEN`
//! with a token of the tokens file ([`Tokens`]); a job is visible only to
//! the client that sent it. A body over `max_request_bytes` is refused
//! (`413`), as are malformed JSON (`400`), an invalid fixture (`400`) and a
//! client's job past its limit of unfinished jobs (`429`), each with an
//! [`ApiError`] naming the problem.
//!
//! **Jobs.** A worker claims the oldest queued job, writes its files into a
//! fresh folder under the state folder, and runs it with a deadline; past
//! it, the job is reported as a hang (the runner's own thread is left to
//! its own deadlines). One `tracing` span per job.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::sync::Notify;
use tracing::Instrument as _;

use crate::api::{ApiError, Health, JobRequest, JobStatus, JobView};
use crate::metrics::Metrics;
use crate::store::{Claimed, Store, StoreError};
use crate::{RunOutcome, Runner};

/// Bearer tokens and the clients they name.
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    by_token: BTreeMap<String, String>,
}

/// Why a tokens file's text is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokensError {
    /// A line without the `:` between client and token.
    #[error("line {0}: expected `client:token`")]
    NoSeparator(usize),
    /// A line with an empty client name or a token under 16 characters.
    #[error("line {0}: a client name and a token of at least 16 characters")]
    TooShort(usize),
    /// No token at all.
    #[error("no tokens: every request would be refused")]
    Empty,
}

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The tokens file cannot be read.
    #[error("tokens file {path}: {source}")]
    TokensRead {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The tokens file is malformed.
    #[error("tokens file {path}: {source}")]
    Tokens {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: TokensError,
    },
    /// The state folder or the listening socket failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The job store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Tokens {
    /// Tokens from text: one `client:token` per line; blank lines and
    /// `#` comments are ignored. A token is at least 16 characters.
    ///
    /// # Errors
    /// The first malformed line, by number ([`TokensError`]).
    pub fn parse(text: &str) -> Result<Tokens, TokensError> {
        let mut by_token = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((client, token)) = line.split_once(':') else {
                return Err(TokensError::NoSeparator(i + 1));
            };
            let (client, token) = (client.trim(), token.trim());
            if client.is_empty() || token.len() < 16 {
                return Err(TokensError::TooShort(i + 1));
            }
            by_token.insert(token.to_owned(), client.to_owned());
        }
        if by_token.is_empty() {
            return Err(TokensError::Empty);
        }
        Ok(Tokens { by_token })
    }

    /// Tokens from the file at `path`.
    ///
    /// # Errors
    /// [`ServeError::TokensRead`] or [`ServeError::Tokens`].
    pub fn load(path: &Path) -> Result<Tokens, ServeError> {
        let text = std::fs::read_to_string(path).map_err(|source| ServeError::TokensRead {
            path: path.to_path_buf(),
            source,
        })?;
        Tokens::parse(&text).map_err(|source| ServeError::Tokens {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The client that `headers` authenticate, if any.
    fn client(&self, headers: &HeaderMap) -> Option<String> {
        let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
        let token = value.strip_prefix("Bearer ")?.trim();
        self.by_token.get(token).cloned()
    }
}

/// How the service runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where the job store and the jobs' folders live.
    pub state_dir: PathBuf,
    /// Who may call.
    pub tokens: Tokens,
    /// Jobs run at once.
    pub workers: usize,
    /// The largest request body.
    pub max_request_bytes: usize,
    /// Unfinished jobs one client may have.
    pub per_client_jobs: u64,
    /// How long one job may run.
    pub job_deadline: Duration,
}

impl Config {
    /// A configuration with the defaults: one worker, 4 MiB requests, 256
    /// unfinished jobs per client, an hour per job.
    pub fn new(state_dir: PathBuf, tokens: Tokens) -> Config {
        Config {
            state_dir,
            tokens,
            workers: 1,
            max_request_bytes: 4 << 20,
            per_client_jobs: 256,
            job_deadline: Duration::from_secs(3600),
        }
    }
}

struct App {
    store: Store,
    metrics: Metrics,
    config: Config,
    wake: Notify,
    runner: Arc<dyn Runner>,
}

/// A running service.
pub struct Service {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Service {
    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its base URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Serves until the process ends.
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Stops accepting requests and waits for the server to end (a job
    /// that is running stays `running` in the store and runs again at the
    /// next start).
    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeError {
    let what = what.into();
    move |source| ServeError::Io { what, source }
}

/// Starts the service on `listen` (port 0 picks a free one): opens the
/// store, requeues the jobs a previous service left running, and serves on
/// a thread of its own.
///
/// # Errors
/// [`ServeError`] when the state folder, the store or the socket fails.
pub fn start(
    listen: SocketAddr,
    config: Config,
    runner: Arc<dyn Runner>,
) -> Result<Service, ServeError> {
    std::fs::create_dir_all(config.state_dir.join("work"))
        .map_err(io(format!("state folder {}", config.state_dir.display())))?;
    let store = Store::open(&config.state_dir.join("jobs.sqlite"))?;
    let recovered = store.recover()?;
    if recovered > 0 {
        tracing::info!(
            recovered,
            "jobs left running by a previous service are queued again"
        );
    }
    let listener =
        std::net::TcpListener::bind(listen).map_err(io(format!("listen on {listen}")))?;
    listener
        .set_nonblocking(true)
        .map_err(io("non-blocking socket"))?;
    let addr = listener.local_addr().map_err(io("local address"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("tokio runtime"))?;
    let app = Arc::new(App {
        store,
        metrics: Metrics::default(),
        config,
        wake: Notify::new(),
        runner,
    });
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("oracle-service".into())
        .spawn(move || {
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => l,
                    Err(e) => {
                        tracing::error!("cannot serve: {e}");
                        return;
                    }
                };
                for _ in 0..app.config.workers.max(1) {
                    tokio::spawn(worker(app.clone()));
                }
                let router = router(app.clone());
                let served = axum::serve(listener, router)
                    .with_graceful_shutdown(async move {
                        let _ = rx.await;
                    })
                    .await;
                if let Err(e) = served {
                    tracing::error!("the server stopped: {e}");
                }
            });
            // Dropping the runtime ends the workers; blocking jobs still
            // running are abandoned, and stay `running` in the store.
            runtime.shutdown_background();
        })
        .map_err(io("server thread"))?;
    Ok(Service {
        addr,
        shutdown: Some(tx),
        thread: Some(thread),
    })
}

fn router(app: Arc<App>) -> Router {
    let limit = app.config.max_request_bytes;
    Router::new()
        .route("/v1/jobs", post(submit))
        .route("/v1/jobs/{id}", get(job))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(app)
}

fn refuse(app: &App, status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    app.metrics.refused(code);
    let body = ApiError {
        error: code.to_owned(),
        message: message.into(),
    };
    (status, Json(body)).into_response()
}

fn unavailable(app: &App, e: &StoreError) -> Response {
    tracing::error!("{e}");
    refuse(
        app,
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        "the job store failed; try again",
    )
}

fn unauthorized(app: &App) -> Response {
    refuse(
        app,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "send `Authorization: Bearer TOKEN` with a token of the service's tokens file",
    )
}

async fn submit(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Some(client) = app.config.tokens.client(&headers) else {
        return unauthorized(&app);
    };
    let body = match body {
        Ok(b) => b,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return refuse(
                &app,
                StatusCode::PAYLOAD_TOO_LARGE,
                "too-large",
                format!(
                    "the request is larger than {} bytes",
                    app.config.max_request_bytes
                ),
            );
        }
        Err(e) => {
            return refuse(&app, StatusCode::BAD_REQUEST, "malformed", e.body_text());
        }
    };
    let request: JobRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return refuse(
                &app,
                StatusCode::BAD_REQUEST,
                "malformed",
                format!("the body is not a job request: {e}"),
            );
        }
    };
    if let Err(e) = request.validate() {
        return refuse(&app, StatusCode::BAD_REQUEST, "invalid", e.to_string());
    }
    let limit = app.config.per_client_jobs;
    let id = match app.store.insert_limited(&client, &request, limit) {
        Ok(Some(id)) => id,
        Ok(None) => {
            return refuse(
                &app,
                StatusCode::TOO_MANY_REQUESTS,
                "too-many-jobs",
                format!("client `{client}` already has {limit} unfinished jobs"),
            );
        }
        Err(e) => return unavailable(&app, &e),
    };
    app.wake.notify_one();
    tracing::info!(id, client, name = request.name, "job accepted");
    let view = JobView {
        id,
        name: request.name,
        status: JobStatus::Queued,
        progress: Vec::new(),
        verdict: None,
        cached: None,
        report: None,
    };
    (StatusCode::ACCEPTED, Json(view)).into_response()
}

async fn job(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Response {
    let Some(client) = app.config.tokens.client(&headers) else {
        return unauthorized(&app);
    };
    let missing = |app: &App| {
        refuse(
            app,
            StatusCode::NOT_FOUND,
            "not-found",
            format!("no job {id} of yours"),
        )
    };
    let Ok(n) = id.parse::<u64>() else {
        return missing(&app);
    };
    match app.store.get(n) {
        // Another client's job is as absent as a job that never was.
        Ok(Some((owner, view))) if owner == client => Json(view).into_response(),
        Ok(_) => missing(&app),
        Err(e) => unavailable(&app, &e),
    }
}

async fn health(State(app): State<Arc<App>>) -> Response {
    let counts = app
        .store
        .count(JobStatus::Queued)
        .and_then(|q| Ok((q, app.store.count(JobStatus::Running)?)));
    match counts {
        Ok((queued, running)) => Json(Health {
            status: "ok".into(),
            queued,
            running,
        })
        .into_response(),
        Err(e) => unavailable(&app, &e),
    }
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    let queued = app.store.count(JobStatus::Queued).unwrap_or(0);
    let running = app.store.count(JobStatus::Running).unwrap_or(0);
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.render(queued, running),
    )
        .into_response()
}

async fn not_found(State(app): State<Arc<App>>) -> Response {
    refuse(
        &app,
        StatusCode::NOT_FOUND,
        "not-found",
        "no such endpoint: POST /v1/jobs, GET /v1/jobs/{id}, GET /health, GET /metrics",
    )
}

async fn worker(app: Arc<App>) {
    loop {
        match app.store.claim() {
            Ok(Some(job)) => {
                let span = tracing::info_span!("job", id = job.id, name = %job.request.name);
                run_job(&app, job).instrument(span).await;
            }
            Ok(None) => {
                // A new job wakes a worker; the timeout only guards against
                // a missed wake-up.
                let _ = tokio::time::timeout(Duration::from_secs(1), app.wake.notified()).await;
            }
            Err(e) => {
                tracing::error!("cannot claim a job: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// The report of a job the service itself ended (a runner that panicked,
/// a deadline), in the oracle's report shape.
fn service_failure(name: &str, kind: &str, detail: String) -> RunOutcome {
    let report = serde_json::json!({
        "name": name,
        "verdict": "crash",
        "stages": [{
            "name": "service",
            "status": "failed",
            "kind": kind,
            "millis": 0.0,
            "detail": detail,
        }],
        "values": [],
    });
    RunOutcome {
        report,
        verdict: "crash".into(),
        cached: false,
        stages: Vec::new(),
    }
}

/// Writes the job's files into `dir` (created fresh).
fn materialize(dir: &Path, request: &JobRequest) -> std::io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    for (name, text) in &request.files {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}

async fn run_job(app: &Arc<App>, job: Claimed) {
    let start = Instant::now();
    let root = app.config.state_dir.join("work").join(job.id.to_string());
    let dir = root.join(&job.request.name);
    let name = job.request.name.clone();
    let outcome = match materialize(&dir, &job.request) {
        Err(e) => service_failure(&name, "panic", format!("cannot write the job's files: {e}")),
        Ok(()) => {
            let runner = app.runner.clone();
            let d = dir.clone();
            let (progress_app, id) = (app.clone(), job.id);
            let run = tokio::task::spawn_blocking(move || {
                let progress = |stage: crate::api::StageProgress| {
                    if let Err(e) = progress_app.store.progress(id, &stage) {
                        tracing::warn!("cannot record progress: {e}");
                    }
                };
                runner.run(&d, &progress)
            });
            match tokio::time::timeout(app.config.job_deadline, run).await {
                Ok(Ok(o)) => o,
                Ok(Err(e)) => service_failure(&name, "panic", format!("the runner failed: {e}")),
                Err(_) => service_failure(
                    &name,
                    "hang",
                    format!(
                        "the job did not finish within the service's deadline of {:?}",
                        app.config.job_deadline
                    ),
                ),
            }
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    match app
        .store
        .finish(job.id, &outcome.verdict, outcome.cached, &outcome.report)
    {
        Ok(()) => {
            app.metrics
                .job_done(&outcome.verdict, outcome.cached, seconds, &outcome.stages);
            tracing::info!(
                verdict = outcome.verdict,
                cached = outcome.cached,
                seconds,
                "job done"
            );
        }
        // The job stays `running` and runs again at the next start.
        Err(e) => tracing::error!("cannot record the report: {e}"),
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tokens_file_names_its_first_bad_line() {
        let ok = "# ci\nci:0123456789abcdef\n";
        assert!(Tokens::parse(ok).is_ok());
        assert_eq!(
            Tokens::parse("ci:0123456789abcdef\nno separator").err(),
            Some(TokensError::NoSeparator(2))
        );
        assert_eq!(
            Tokens::parse("ci:short").err(),
            Some(TokensError::TooShort(1))
        );
        assert_eq!(Tokens::parse("# nothing\n").err(), Some(TokensError::Empty));
    }
}
