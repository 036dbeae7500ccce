//! The durable job queue: one SQLite table. A job is written before the
//! client hears its id, and a worker claims it in one statement, so that a
//! service killed at any point loses no accepted job: at start, every job
//! left `running` goes back to `queued` ([`Store::recover`]) and runs again.
//!
//! Several machines pulling from one queue would move this table to a
//! database server (the README says how); the statements stay the same.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use crate::api::{JobRequest, JobStatus, JobView, StageProgress};

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("job store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored row does not read back (a request or report that is not
    /// JSON, an unknown status).
    #[error("job store: job {id} is corrupt: {why}")]
    Corrupt {
        /// The job.
        id: u64,
        /// What is wrong.
        why: String,
    },
}

/// A claimed job: what a worker runs.
#[derive(Clone, Debug)]
pub struct Claimed {
    /// Its id.
    pub id: u64,
    /// The fixture.
    pub request: JobRequest,
}

/// The job table.
pub struct Store {
    conn: Mutex<Connection>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    client   TEXT NOT NULL,
    name     TEXT NOT NULL,
    request  TEXT NOT NULL,
    status   TEXT NOT NULL,
    verdict  TEXT,
    cached   INTEGER,
    report   TEXT,
    progress TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status, id);
";

impl Store {
    /// Opens (or creates) the store at `path`.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        // WAL: readers (status polls) never wait for the worker's writes;
        // FULL sync: an acknowledged job is on disk.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves SQLite consistent (each
        // statement is atomic), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts every job a dead service left `running` back in the queue;
    /// returns how many.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn recover(&self) -> Result<u64, StoreError> {
        let n = self.conn().execute(
            "UPDATE jobs SET status = 'queued' WHERE status = 'running'",
            [],
        )?;
        Ok(n as u64)
    }

    /// Queues `request` for `client` unless the client already has `limit`
    /// unfinished jobs (the count and the insert in one transaction, so
    /// concurrent requests cannot overshoot); returns its id, or `None`.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn insert_limited(
        &self,
        client: &str,
        request: &JobRequest,
        limit: u64,
    ) -> Result<Option<u64>, StoreError> {
        let text = serde_json::to_string(request).map_err(|e| StoreError::Corrupt {
            id: 0,
            why: e.to_string(),
        })?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let active: i64 = tx.query_row(
            "SELECT COUNT(*) FROM jobs WHERE client = ?1 AND status != 'done'",
            params![client],
            |r| r.get(0),
        )?;
        if active as u64 >= limit {
            return Ok(None);
        }
        tx.execute(
            "INSERT INTO jobs (client, name, request, status) VALUES (?1, ?2, ?3, 'queued')",
            params![client, request.name, text],
        )?;
        let id = tx.last_insert_rowid() as u64;
        tx.commit()?;
        Ok(Some(id))
    }

    /// Takes the oldest queued job and marks it running, in one statement.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn claim(&self) -> Result<Option<Claimed>, StoreError> {
        let row: Option<(i64, String)> = self
            .conn()
            .query_row(
                "UPDATE jobs SET status = 'running'
                 WHERE id = (SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1)
                 RETURNING id, request",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((id, text)) = row else {
            return Ok(None);
        };
        let id = id as u64;
        let request = serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
            id,
            why: e.to_string(),
        })?;
        Ok(Some(Claimed { id, request }))
    }

    /// Adds a finished stage to a running job's progress.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn progress(&self, id: u64, stage: &StageProgress) -> Result<(), StoreError> {
        let text = serde_json::to_string(stage).map_err(|e| StoreError::Corrupt {
            id,
            why: e.to_string(),
        })?;
        self.conn().execute(
            "UPDATE jobs SET progress = json_insert(progress, '$[#]', json(?2)) WHERE id = ?1",
            params![id as i64, text],
        )?;
        Ok(())
    }

    /// Records a job's report.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn finish(
        &self,
        id: u64,
        verdict: &str,
        cached: bool,
        report: &serde_json::Value,
    ) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE jobs SET status = 'done', verdict = ?2, cached = ?3, report = ?4 WHERE id = ?1",
            params![id as i64, verdict, cached, report.to_string()],
        )?;
        Ok(())
    }

    /// The job `id` and the client that owns it.
    ///
    /// # Errors
    /// [`StoreError`].
    pub fn get(&self, id: u64) -> Result<Option<(String, JobView)>, StoreError> {
        type Row = (
            String,
            String,
            String,
            Option<String>,
            Option<bool>,
            Option<String>,
            String,
        );
        let row: Option<Row> = self
            .conn()
            .query_row(
                "SELECT client, name, status, verdict, cached, report, progress FROM jobs WHERE id = ?1",
                params![id as i64],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                    ))
                },
            )
            .optional()?;
        let Some((client, name, status, verdict, cached, report, progress)) = row else {
            return Ok(None);
        };
        let corrupt = |why: String| StoreError::Corrupt { id, why };
        let status =
            JobStatus::parse(&status).ok_or_else(|| corrupt(format!("status {status:?}")))?;
        let report = report
            .map(|t| serde_json::from_str(&t))
            .transpose()
            .map_err(|e| corrupt(e.to_string()))?;
        let progress = serde_json::from_str(&progress).map_err(|e| corrupt(e.to_string()))?;
        Ok(Some((
            client,
            JobView {
                id,
                name,
                status,
                progress,
                verdict,
                cached,
                report,
            },
        )))
    }

    /// How many jobs have `status`.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn count(&self, status: JobStatus) -> Result<u64, StoreError> {
        let n: i64 = self.conn().query_row(
            "SELECT COUNT(*) FROM jobs WHERE status = ?1",
            params![status.as_str()],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(name: &str) -> JobRequest {
        JobRequest {
            name: name.into(),
            files: [("kernel.rs".to_owned(), "k".to_owned())].into(),
        }
    }

    #[test]
    fn a_claimed_job_left_running_is_queued_again_after_a_restart() {
        let dir = std::env::temp_dir().join(format!("oracle-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let path = dir.join("jobs.sqlite");
        let (a, b, other) = {
            let s = Store::open(&path).unwrap_or_else(|e| panic!("{e}"));
            let insert = |name: &str| {
                s.insert_limited("ci", &req(name), 2)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .unwrap_or_else(|| panic!("{name} refused"))
            };
            let (a, b) = (insert("a"), insert("b"));
            let c = s.claim().unwrap_or_else(|e| panic!("{e}")).map(|c| c.id);
            assert_eq!(c, Some(a), "the oldest first");
            // One running and one queued: the limit of 2 unfinished jobs.
            let third = s
                .insert_limited("ci", &req("c"), 2)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(third, None);
            let other = s
                .insert_limited("other", &req("c"), 2)
                .unwrap_or_else(|e| panic!("{e}"))
                .unwrap_or_else(|| panic!("another client has its own limit"));
            (a, b, other)
            // The store is dropped with `a` running: a killed service.
        };
        let s = Store::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.recover().ok(), Some(1));
        let order: Vec<u64> =
            std::iter::from_fn(|| s.claim().ok().flatten().map(|c| c.id)).collect();
        assert_eq!(order, [a, b, other]);
        let stage = StageProgress {
            name: "import".into(),
            status: "ok".into(),
            millis: 1.5,
        };
        s.progress(a, &stage).unwrap_or_else(|e| panic!("{e}"));
        s.progress(a, &stage).unwrap_or_else(|e| panic!("{e}"));
        s.finish(a, "pass", false, &serde_json::json!({"name": "a"}))
            .unwrap_or_else(|e| panic!("{e}"));
        let (client, view) = s.get(a).ok().flatten().unwrap_or_else(|| panic!("no job"));
        assert_eq!(client, "ci");
        assert_eq!(view.status, JobStatus::Done);
        assert_eq!(view.verdict.as_deref(), Some("pass"));
        assert_eq!(view.report, Some(serde_json::json!({"name": "a"})));
        assert_eq!(view.progress, [stage.clone(), stage]);
        // `b` and `other` were claimed and still run.
        assert_eq!(s.count(JobStatus::Running).ok(), Some(2));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
