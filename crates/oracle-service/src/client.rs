//! The blocking client: a fixture folder in, its job's report out. Plain
//! HTTP (ureq without TLS): across machines, put a TLS-terminating proxy in
//! front of the service.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use crate::api::{ApiError, Health, JobRequest, JobStatus, JobView};

/// The largest file the client sends (the server has its own limit).
const MAX_FILE_BYTES: u64 = 4 << 20;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The service answered with a refusal.
    #[error("the service refused ({status}, {}): {}", .error.error, .error.message)]
    Refused {
        /// The HTTP status.
        status: u16,
        /// Its body.
        error: ApiError,
    },
    /// The service could not be reached, or answered with something that
    /// is not the API's.
    #[error("the service at {url}: {why}")]
    Transport {
        /// The URL called.
        url: String,
        /// What went wrong.
        why: String,
    },
    /// A fixture folder could not be read as a job.
    #[error("fixture {dir}: {why}")]
    Fixture {
        /// The folder.
        dir: String,
        /// What is wrong.
        why: String,
    },
    /// A job did not finish in time.
    #[error("job {id} did not finish within {waited:?}")]
    Timeout {
        /// The job.
        id: u64,
        /// How long the client waited.
        waited: Duration,
    },
}

/// A client of one service, with one token.
pub struct Client {
    base: String,
    auth: String,
    agent: ureq::Agent,
}

impl Client {
    /// A client of the service at `base` (`http://host:port`).
    pub fn new(base: &str, token: &str) -> Client {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        Client {
            base: base.trim_end_matches('/').to_owned(),
            auth: format!("Bearer {token}"),
            agent,
        }
    }

    fn answer<T: DeserializeOwned>(
        url: &str,
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<T, ClientError> {
        let transport = |why: String| ClientError::Transport {
            url: url.to_owned(),
            why,
        };
        let mut response = result.map_err(|e| transport(e.to_string()))?;
        let status = response.status();
        let body = response
            .body_mut()
            .with_config()
            .limit(256 << 20)
            .read_to_string()
            .map_err(|e| transport(e.to_string()))?;
        if status.is_success() {
            serde_json::from_str(&body).map_err(|e| transport(format!("{status}: {e}")))
        } else {
            match serde_json::from_str::<ApiError>(&body) {
                Ok(error) => Err(ClientError::Refused {
                    status: status.as_u16(),
                    error,
                }),
                Err(_) => Err(transport(format!("{status}: {body}"))),
            }
        }
    }

    /// Submits a job.
    ///
    /// # Errors
    /// [`ClientError::Refused`] or [`ClientError::Transport`].
    pub fn submit(&self, request: &JobRequest) -> Result<JobView, ClientError> {
        let url = format!("{}/v1/jobs", self.base);
        let r = self
            .agent
            .post(&url)
            .header("Authorization", &self.auth)
            .send_json(request);
        Self::answer(&url, r)
    }

    /// A job's view.
    ///
    /// # Errors
    /// [`ClientError::Refused`] or [`ClientError::Transport`].
    pub fn job(&self, id: u64) -> Result<JobView, ClientError> {
        let url = format!("{}/v1/jobs/{id}", self.base);
        let r = self
            .agent
            .get(&url)
            .header("Authorization", &self.auth)
            .call();
        Self::answer(&url, r)
    }

    /// The service's health.
    ///
    /// # Errors
    /// [`ClientError::Refused`] or [`ClientError::Transport`].
    pub fn health(&self) -> Result<Health, ClientError> {
        let url = format!("{}/health", self.base);
        Self::answer(&url, self.agent.get(&url).call())
    }

    /// Polls job `id` every `poll` until it is done, for at most `deadline`.
    ///
    /// # Errors
    /// [`ClientError::Timeout`], or a failed poll.
    pub fn wait(
        &self,
        id: u64,
        poll: Duration,
        deadline: Duration,
    ) -> Result<JobView, ClientError> {
        let start = Instant::now();
        loop {
            let view = self.job(id)?;
            if view.status == JobStatus::Done {
                return Ok(view);
            }
            if start.elapsed() >= deadline {
                return Err(ClientError::Timeout {
                    id,
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(poll);
        }
    }
}

/// The job for the fixture folder `dir`: its name and every plain file in
/// it (text, each at most 4 MiB).
///
/// # Errors
/// [`ClientError::Fixture`] naming the folder and the reason.
pub fn request_from_dir(dir: &Path) -> Result<JobRequest, ClientError> {
    let err = |why: String| ClientError::Fixture {
        dir: dir.display().to_string(),
        why,
    };
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| err("the folder has no UTF-8 name".into()))?
        .to_owned();
    let mut files = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(|e| err(e.to_string()))? {
        let entry = entry.map_err(|e| err(e.to_string()))?;
        let meta = entry.metadata().map_err(|e| err(e.to_string()))?;
        if !meta.is_file() {
            continue;
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(err(format!(
                "{} is larger than {MAX_FILE_BYTES} bytes",
                entry.path().display()
            )));
        }
        let file = entry
            .file_name()
            .into_string()
            .map_err(|n| err(format!("file name {n:?} is not UTF-8")))?;
        let text =
            std::fs::read_to_string(entry.path()).map_err(|e| err(format!("{file}: {e}")))?;
        files.insert(file, text);
    }
    let request = JobRequest { name, files };
    request.validate().map_err(|e| err(e.to_string()))?;
    Ok(request)
}
